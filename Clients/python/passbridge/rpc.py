"""Low-level JSON-RPC 2.0 connection to the PassBridge daemon (standard library only).

Two flavours with the same shape:

* ``Connection`` — blocking, thread-based: ``Connection.spawn()`` runs ``passbridge --stdio`` as a child,
  ``Connection.connect(path)`` opens its Unix socket.
* ``AsyncConnection`` — asyncio: ``await AsyncConnection.spawn()`` / ``await AsyncConnection.connect(path)``.

Both frame messages as NDJSON (default) or LSP ``Content-Length`` (``framing="content-length"``), number
their requests 1, 2, 3…, match responses through a pending map, hand daemon notifications to callbacks
registered with ``on_notification``, and answer daemon→host requests (e.g. ``partnerSSO/checkAccessStatus``)
with handlers registered with ``on_request``: a handler returns the result, or raises ``RPCError`` to
send an error object; a request without a handler is answered -32601.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import itertools
import json
import socket
import subprocess
import threading
from typing import Any, Callable, Optional

__all__ = ["RPCError", "Framer", "Connection", "AsyncConnection", "NDJSON", "CONTENT_LENGTH"]

NDJSON = "ndjson"
CONTENT_LENGTH = "content-length"
DEFAULT_COMMAND = ("passbridge", "--stdio")


class RPCError(Exception):
    """A JSON-RPC error object: ``code`` (int), ``message`` (str), ``data`` (any JSON or None)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"{code}: {message}" + (f" {json.dumps(data)}" if data is not None else ""))
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Framer:
    """Splits a byte stream into JSON messages and frames outgoing ones (NDJSON or Content-Length)."""

    def __init__(self, framing: str = NDJSON):
        if framing not in (NDJSON, CONTENT_LENGTH):
            raise ValueError(f"framing must be {NDJSON!r} or {CONTENT_LENGTH!r}")
        self.framing = framing
        self._buffer = b""

    def encode(self, message: dict) -> bytes:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        if self.framing == NDJSON:
            return body + b"\n"
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def feed(self, data: bytes) -> list:
        """Returns every whole message (parsed) now available."""
        self._buffer += data
        messages = []
        while True:
            if self.framing == NDJSON:
                line, found, rest = self._buffer.partition(b"\n")
                if not found:
                    return messages
                self._buffer = rest
                if line.strip():
                    messages.append(json.loads(line))
            else:
                header, found, rest = self._buffer.partition(b"\r\n\r\n")
                if not found:
                    return messages
                length = None
                for field in header.split(b"\r\n"):
                    name, _, value = field.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    raise ValueError("Content-Length header missing")
                if len(rest) < length:
                    return messages
                messages.append(json.loads(rest[:length]))
                self._buffer = rest[length:]


class _Dispatch:
    """What both flavours share: ids, handlers and message classification."""

    def __init__(self):
        self._ids = itertools.count(1)
        self._notification_handlers: dict = {}
        self._request_handlers: dict = {}

    def on_notification(self, method: Optional[str], callback: Callable) -> None:
        """Calls ``callback(params)`` for each notification ``method``; with ``method=None``,
        ``callback(method, params)`` for every notification without a specific callback."""
        self._notification_handlers[method] = callback

    def on_request(self, method: str, handler: Callable) -> None:
        """Answers daemon→host requests ``method`` with ``handler(params)`` (return the result or raise
        ``RPCError``; in ``AsyncConnection`` it may be a coroutine function)."""
        self._request_handlers[method] = handler

    @staticmethod
    def _request(method: str, params: Any, id: Any = None) -> dict:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if id is not None:
            message["id"] = id
        return message

    @staticmethod
    def _error_from(error: Any) -> RPCError:
        if isinstance(error, dict):
            return RPCError(error.get("code", -32603), error.get("message", ""), error.get("data"))
        return RPCError(-32603, "malformed error object", error)

    def _notification_target(self, method: str):
        if method in self._notification_handlers:
            return lambda params: self._notification_handlers[method](params)
        if None in self._notification_handlers:
            return lambda params: self._notification_handlers[None](method, params)
        return None


class Connection(_Dispatch):
    """A blocking JSON-RPC connection over any pair of binary streams.

    A reader thread receives; ``call`` blocks the calling thread only. Notification callbacks run on the
    reader thread (keep them short; never ``call`` from one); request handlers run on their own thread.
    """

    def __init__(self, reader, writer, *, framing: str = NDJSON, process: Optional[subprocess.Popen] = None,
                 sock: Optional[socket.socket] = None):
        super().__init__()
        self._reader = reader
        self._writer = writer
        self._framer = Framer(framing)
        self._process = process
        self._socket = sock
        self._write_lock = threading.Lock()
        self._pending: dict = {}
        self._pending_lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read_loop, name="passbridge-rpc-reader", daemon=True)
        self._thread.start()

    @classmethod
    def spawn(cls, command=DEFAULT_COMMAND, *, framing: str = NDJSON, stderr=None, env=None) -> "Connection":
        """Starts the daemon (``command``, default ``passbridge --stdio``) with pipes on stdin/stdout;
        its stderr goes to ``stderr`` (default: inherited, so logs are never stuck in an unread pipe)."""
        process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        return cls(process.stdout, process.stdin, framing=framing, process=process)

    @classmethod
    def connect(cls, path: str, *, framing: str = NDJSON) -> "Connection":
        """Connects to the daemon's Unix socket at ``path``."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        return cls(sock.makefile("rb", buffering=0), sock.makefile("wb", buffering=0), framing=framing, sock=sock)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def call_future(self, method: str, params: Any = None) -> concurrent.futures.Future:
        """Sends a request; the future resolves to the result or raises ``RPCError`` / ``ConnectionError``."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        id = next(self._ids)
        with self._pending_lock:
            if self._closed.is_set():
                future.set_exception(ConnectionError("connection closed"))
                return future
            self._pending[id] = future
        self._send(self._request(method, params, id))
        return future

    def call(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Sends a request and waits for its result (``TimeoutError`` after ``timeout`` seconds)."""
        return self.call_future(method, params).result(timeout)

    def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no answer)."""
        self._send(self._request(method, params))

    def close(self, timeout: Optional[float] = 10) -> Optional[int]:
        """Closes the output (the daemon finishes its work and exits, or drops this peer), waits for the
        reader to end, and returns the child's exit code when spawned."""
        try:
            if self._socket is not None:
                self._socket.shutdown(socket.SHUT_WR)
            else:
                self._writer.close()
        except OSError:
            pass
        self._thread.join(timeout)
        code = None
        if self._process is not None:
            code = self._process.wait(timeout)
            self._process.stdout.close()
        if self._socket is not None:
            self._socket.close()
        return code

    def _send(self, message: dict) -> None:
        data = self._framer.encode(message)
        with self._write_lock:
            try:
                self._writer.write(data)
                self._writer.flush()
            except (OSError, ValueError) as error:
                raise ConnectionError(f"cannot write to the daemon: {error}") from error

    def _read_loop(self) -> None:
        try:
            while True:
                data = self._reader.read1(65536) if hasattr(self._reader, "read1") else self._reader.read(65536)
                if not data:
                    break
                for message in self._framer.feed(data):
                    for item in message if isinstance(message, list) else [message]:
                        self._handle(item)
        except (OSError, ValueError):
            pass
        finally:
            with self._pending_lock:
                self._closed.set()
                pending, self._pending = self._pending, {}
            for future in pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the daemon closed the connection"))

    def _handle(self, message: dict) -> None:
        if "method" in message and "id" in message:
            threading.Thread(target=self._answer, args=(message,), daemon=True).start()
        elif "method" in message:
            target = self._notification_target(message["method"])
            if target is not None:
                target(message.get("params"))
        elif "id" in message:
            with self._pending_lock:
                future = self._pending.pop(message["id"], None)
            if future is None:
                return
            if "error" in message:
                future.set_exception(self._error_from(message["error"]))
            else:
                future.set_result(message.get("result"))

    def _answer(self, message: dict) -> None:
        handler = self._request_handlers.get(message["method"])
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            if handler is None:
                raise RPCError(-32601, "Method not found", {"method": message["method"]})
            reply["result"] = handler(message.get("params"))
        except RPCError as error:
            reply["error"] = error.to_json()
        except Exception as error:  # noqa: BLE001 - reported to the daemon as an internal error
            reply["error"] = {"code": -32603, "message": "Internal error", "data": {"reason": str(error)}}
        try:
            self._send(reply)
        except ConnectionError:
            pass


class AsyncConnection(_Dispatch):
    """An asyncio JSON-RPC connection over a StreamReader/StreamWriter pair.

    Notification callbacks run in the reader task (plain functions or coroutine functions, the latter
    scheduled as tasks); request handlers run as their own tasks.
    """

    def __init__(self, reader: asyncio.StreamReader, writer, *, framing: str = NDJSON, process=None):
        super().__init__()
        self._reader = reader
        self._writer = writer
        self._framer = Framer(framing)
        self._process = process
        self._pending: dict = {}
        self._closed = False
        self._tasks: set = set()
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def spawn(cls, command=DEFAULT_COMMAND, *, framing: str = NDJSON, stderr=None, env=None) -> "AsyncConnection":
        """Starts the daemon with pipes on stdin/stdout (stderr inherited unless given)."""
        process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                       stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env)
        return cls(process.stdout, _ProcessWriter(process.stdin), framing=framing, process=process)

    @classmethod
    async def connect(cls, path: str, *, framing: str = NDJSON) -> "AsyncConnection":
        """Connects to the daemon's Unix socket at ``path``."""
        reader, writer = await asyncio.open_unix_connection(path)
        return cls(reader, writer, framing=framing)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    async def call(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Sends a request and awaits its result (raises ``RPCError``, ``ConnectionError``, ``TimeoutError``)."""
        if self._closed:
            raise ConnectionError("connection closed")
        id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[id] = future
        await self._send(self._request(method, params, id))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(id, None)

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no answer)."""
        await self._send(self._request(method, params))

    async def close(self, timeout: Optional[float] = 10) -> Optional[int]:
        """Closes the output, waits for the reader to end, returns the child's exit code when spawned."""
        try:
            if self._writer.can_write_eof():
                self._writer.write_eof()
            else:
                self._writer.close()
        except (OSError, RuntimeError):
            pass
        try:
            await asyncio.wait_for(asyncio.shield(self._read_task), timeout)
        except asyncio.TimeoutError:
            self._read_task.cancel()
        self._writer.close()
        if self._process is not None:
            return await asyncio.wait_for(self._process.wait(), timeout)
        return None

    async def _send(self, message: dict) -> None:
        try:
            self._writer.write(self._framer.encode(message))
            await self._writer.drain()
        except (OSError, RuntimeError) as error:
            raise ConnectionError(f"cannot write to the daemon: {error}") from error

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self._reader.read(65536)
                if not data:
                    break
                for message in self._framer.feed(data):
                    for item in message if isinstance(message, list) else [message]:
                        self._handle(item)
        except (OSError, ValueError):
            pass
        finally:
            self._closed = True
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the daemon closed the connection"))

    def _spawn_task(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _handle(self, message: dict) -> None:
        if "method" in message and "id" in message:
            self._spawn_task(self._answer(message))
        elif "method" in message:
            target = self._notification_target(message["method"])
            if target is not None:
                result = target(message.get("params"))
                if inspect.isawaitable(result):
                    self._spawn_task(result)
        elif "id" in message:
            future = self._pending.get(message["id"])
            if future is None or future.done():
                return
            if "error" in message:
                future.set_exception(self._error_from(message["error"]))
            else:
                future.set_result(message.get("result"))

    async def _answer(self, message: dict) -> None:
        handler = self._request_handlers.get(message["method"])
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            if handler is None:
                raise RPCError(-32601, "Method not found", {"method": message["method"]})
            result = handler(message.get("params"))
            reply["result"] = await result if inspect.isawaitable(result) else result
        except RPCError as error:
            reply["error"] = error.to_json()
        except Exception as error:  # noqa: BLE001 - reported to the daemon as an internal error
            reply["error"] = {"code": -32603, "message": "Internal error", "data": {"reason": str(error)}}
        try:
            await self._send(reply)
        except ConnectionError:
            pass


class _ProcessWriter:
    """Gives a subprocess's stdin StreamWriter the socket writer's half-close API."""

    def __init__(self, writer):
        self._writer = writer

    def write(self, data):
        self._writer.write(data)

    async def drain(self):
        await self._writer.drain()

    def can_write_eof(self):
        return False

    def write_eof(self):
        self._writer.close()

    def close(self):
        if not self._writer.is_closing():
            self._writer.close()
