"""Low-level JSON-RPC 2.0 connection to the PassBridge daemon (standard library only).

Two flavours with the same shape:

* ``Connection`` — blocking, thread-based: ``Connection.spawn()`` runs ``passbridge --stdio`` as a child,
  ``Connection.connect(path)`` opens its Unix socket.
* ``AsyncConnection`` — asyncio: ``await AsyncConnection.spawn()`` / ``await AsyncConnection.connect(path)``.

Both frame messages as NDJSON (default) or LSP ``Content-Length`` (``framing="content-length"``), number
their requests 1, 2, 3…, match responses through a pending map, hand daemon notifications to callbacks
registered with ``on_notification``, and answer daemon→host requests (e.g. ``partnerSSO/checkAccessStatus``)
with handlers registered with ``on_request``: a handler returns the result, or raises ``RPCError`` to
send an error object; a request without a handler is answered -32601. Every message sent and received is
logged at DEBUG on the ``passbridge.wire`` logger.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import inspect
import itertools
import json
import logging
import socket
import os
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any, Awaitable, Callable, Deque, Dict, List, Optional, Protocol, Sequence, Union

from .errors import ConnectionClosed, DaemonExited, RPCError, Timeout

__all__ = ["RPCError", "Framer", "Connection", "AsyncConnection", "NDJSON", "CONTENT_LENGTH", "StderrTail"]

NDJSON = "ndjson"
CONTENT_LENGTH = "content-length"
DEFAULT_COMMAND = ("passbridge", "--stdio")
#: Seconds a cancelled call waits for the daemon's answer to its ``$/cancelRequest``.
CANCEL_GRACE = 10.0

wire_log = logging.getLogger("passbridge.wire")


async def wait_through_cancellation(future: "asyncio.Future[Any]", timeout: Optional[float] = None) -> bool:
    """Waits until ``future`` is done (or ``timeout`` seconds passed), even when the awaiting task is cancelled
    meanwhile, once or more; returns whether it was, so that the caller raises that cancellation once it is done
    with ``future`` (a cancelled call's answer to its ``$/cancelRequest`` is not given up on half-way)."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    cancelled = False
    while not future.done():
        left = None if deadline is None else deadline - loop.time()
        if left is not None and left <= 0:
            break
        try:
            await asyncio.wait([future], timeout=left)
        except asyncio.CancelledError:
            cancelled = True
    return cancelled

Message = Dict[str, Any]
NotificationCallback = Callable[..., Any]
#: A blocking byte stream: a pipe's file object or a socket's ``makefile``.
SyncStream = Union[IO[bytes], socket.SocketIO]
RequestHandler = Callable[[Any], Any]


def connect_unix(path: str) -> socket.socket:
    """A connected Unix socket to ``path``; a failure names the path (``FileNotFoundError`` etc.)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as error:
        sock.close()
        raise type(error)(error.errno, f"cannot connect to the daemon socket: {error.strerror}", path) from None
    return sock


class Framer:
    """Splits a byte stream into JSON messages and frames outgoing ones (NDJSON or Content-Length)."""

    def __init__(self, framing: str = NDJSON) -> None:
        if framing not in (NDJSON, CONTENT_LENGTH):
            raise ValueError(f"framing must be {NDJSON!r} or {CONTENT_LENGTH!r}")
        self.framing = framing
        self._buffer = b""

    def encode(self, message: Message) -> bytes:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        wire_log.debug("--> %s", body.decode())
        if self.framing == NDJSON:
            return body + b"\n"
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def feed(self, data: bytes) -> List[Any]:
        """Returns every whole message (parsed) now available."""
        self._buffer += data
        messages: List[Any] = []
        while True:
            if self.framing == NDJSON:
                line, found, rest = self._buffer.partition(b"\n")
                if not found:
                    return messages
                self._buffer = rest
                if line.strip():
                    wire_log.debug("<-- %s", line.decode(errors="replace").rstrip("\r"))
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
                wire_log.debug("<-- %s", rest[:length].decode(errors="replace"))
                messages.append(json.loads(rest[:length]))
                self._buffer = rest[length:]


class StderrTail:
    """A spawned daemon's stderr: the daemon writes into an unlinked temporary file (so it never meets a closed
    pipe, even after this process is gone); ``pump`` copies each new line to our stderr and keeps the last
    ``size`` lines."""

    def __init__(self, size: int = 20) -> None:
        self.lines: Deque[str] = collections.deque(maxlen=size)
        self.file = tempfile.TemporaryFile()
        self._offset = 0
        self._partial = b""

    def poll(self) -> None:
        """Takes in what the daemon wrote since the last poll."""
        while True:
            data = os.pread(self.file.fileno(), 65536, self._offset)
            if not data:
                return
            self._offset += len(data)
            *lines, self._partial = (self._partial + data).split(b"\n")
            for raw in lines:
                text = raw.decode(errors="replace")
                self.lines.append(text)
                try:
                    sys.stderr.write(text + "\n")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass

    async def pump(self, process: asyncio.subprocess.Process) -> None:
        """Polls every 0.1 s until ``process`` has exited, then takes in the rest. One task waits for the exit
        for the whole life of the process (a new one per poll would pile up, ten a second)."""
        exited = asyncio.ensure_future(process.wait())
        try:
            while not exited.done():
                self.poll()
                await asyncio.wait({exited}, timeout=0.1)
        finally:
            if not exited.done():
                exited.cancel()
        self.poll()
        if self._partial:
            self._partial, last = b"", self._partial
            self.lines.append(last.decode(errors="replace"))
        self.file.close()


class _Dispatch:
    """What both flavours share: ids, handlers and message classification."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._notification_handlers: Dict[Optional[str], NotificationCallback] = {}
        self._request_handlers: Dict[str, RequestHandler] = {}

    def on_notification(self, method: Optional[str], callback: NotificationCallback) -> None:
        """Calls ``callback(params)`` for each notification ``method``; with ``method=None``,
        ``callback(method, params)`` for every notification without a specific callback."""
        self._notification_handlers[method] = callback

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answers daemon→host requests ``method`` with ``handler(params)`` (return the result or raise
        ``RPCError``; in ``AsyncConnection`` it may be a coroutine function)."""
        self._request_handlers[method] = handler

    @staticmethod
    def _request(method: str, params: Any, id: Optional[int] = None) -> Message:
        message: Message = {"jsonrpc": "2.0", "method": method}
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

    def _notification_target(self, method: str) -> Optional[Callable[[Any], Any]]:
        if method in self._notification_handlers:
            return lambda params: self._notification_handlers[method](params)
        if None in self._notification_handlers:
            return lambda params: self._notification_handlers[None](method, params)
        return None

    @staticmethod
    def _error_reply(message: Message, error: BaseException) -> Message:
        reply: Message = {"jsonrpc": "2.0", "id": message["id"]}
        if isinstance(error, RPCError):
            reply["error"] = error.to_json()
        else:
            # A bug of the handler, not a refusal: said where the app's logs are, with its traceback.
            logging.getLogger("passbridge").error("the host request handler for %s failed", message.get("method"),
                                                  exc_info=error)
            reply["error"] = {"code": -32603, "message": "Internal error", "data": {"reason": str(error)}}
        return _Dispatch._writable(reply)

    @staticmethod
    def _writable(reply: Message) -> Message:
        """`reply`, or, when it is no JSON (a handler's set or NaN, a HostError's odd data), an error saying so, with
        reason ``other``: the daemon always gets one valid answer, never a 10 s wait."""
        try:
            json.dumps(reply, allow_nan=False)
            return reply
        except (TypeError, ValueError) as failure:
            return {"jsonrpc": "2.0", "id": reply["id"], "error": {
                "code": -32603, "message": f"the host's answer could not be written as JSON: {failure}",
                "data": {"reason": "other"}}}


class Connection(_Dispatch):
    """A blocking JSON-RPC connection over any pair of binary streams.

    A reader thread receives; ``call`` blocks the calling thread only. Notification callbacks run on the
    reader thread (keep them short; never ``call`` from one); request handlers run on their own thread.
    """

    def __init__(self, reader: SyncStream, writer: SyncStream, *, framing: str = NDJSON,
                 process: Optional[subprocess.Popen[bytes]] = None, sock: Optional[socket.socket] = None) -> None:
        super().__init__()
        self._reader = reader
        self._writer = writer
        self._framer = Framer(framing)
        self._process = process
        self._socket = sock
        self._write_lock = threading.Lock()
        self._pending: Dict[int, concurrent.futures.Future[Any]] = {}
        self._pending_lock = threading.Lock()
        self._closed = threading.Event()
        self._exit_code: Optional[int] = None
        self._close_lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(target=self._read_loop, name="passbridge-rpc-reader", daemon=True)
        self._thread.start()

    @classmethod
    def spawn(cls, command: Sequence[str] = DEFAULT_COMMAND, *, framing: str = NDJSON, stderr: Any = None,
              env: Optional[Dict[str, str]] = None) -> "Connection":
        """Starts the daemon (``command``, default ``passbridge --stdio``) with pipes on stdin/stdout;
        its stderr goes to ``stderr`` (default: inherited, so logs are never stuck in an unread pipe)."""
        process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        assert process.stdout is not None and process.stdin is not None
        return cls(process.stdout, process.stdin, framing=framing, process=process)

    @classmethod
    def connect(cls, path: str, *, framing: str = NDJSON) -> "Connection":
        """Connects to the daemon's Unix socket at ``path``."""
        sock = connect_unix(path)
        return cls(sock.makefile("rb", buffering=0), sock.makefile("wb", buffering=0), framing=framing, sock=sock)

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set() or self._closing

    def call_future(self, method: str, params: Any = None) -> concurrent.futures.Future[Any]:
        """Sends a request; the future resolves to the result or raises ``RPCError`` / ``ConnectionClosed``."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        id = next(self._ids)
        with self._pending_lock:
            if self.closed:
                future.set_exception(ConnectionClosed("connection closed"))
                return future
            self._pending[id] = future
        self._send(self._request(method, params, id))
        return future

    def call(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Sends a request and waits for its result (``Timeout`` after ``timeout`` seconds)."""
        try:
            return self.call_future(method, params).result(timeout)
        except concurrent.futures.TimeoutError:
            raise Timeout(f"{method}: no answer within {timeout} s") from None

    def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no answer)."""
        self._send(self._request(method, params))

    def close(self, timeout: Optional[float] = 10) -> Optional[int]:
        """Closes the output (the daemon finishes its work and exits, or drops this peer), waits for the
        reader to end, and returns the child's exit code when spawned. A second call returns the same."""
        with self._close_lock:
            if self._closing:
                return self._exit_code
            self._closing = True
        try:
            if self._socket is not None:
                self._socket.shutdown(socket.SHUT_WR)
            else:
                self._writer.close()
        except OSError:
            pass
        self._thread.join(timeout)
        if self._process is not None:
            self._exit_code = self._process.wait(timeout)
            if self._process.stdout is not None:
                self._process.stdout.close()
        if self._socket is not None:
            self._socket.close()
        return self._exit_code

    def _send(self, message: Message) -> None:
        data = self._framer.encode(message)
        with self._write_lock:
            try:
                self._writer.write(data)
                self._writer.flush()
            except (OSError, ValueError) as error:
                raise ConnectionClosed(f"cannot write to the daemon: {error}") from error

    def _read_loop(self) -> None:
        try:
            while True:
                read1 = getattr(self._reader, "read1", None)
                data = (read1(65536) if read1 is not None else self._reader.read(65536)) or b""
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
                    future.set_exception(ConnectionClosed("the daemon closed the connection"))

    def _handle(self, message: Message) -> None:
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

    def _answer(self, message: Message) -> None:
        handler = self._request_handlers.get(message["method"])
        try:
            if handler is None:
                raise RPCError(-32601, "Method not found", {"method": message["method"]})
            reply: Message = self._writable({"jsonrpc": "2.0", "id": message["id"], "result": handler(message.get("params"))})
        except Exception as error:  # noqa: BLE001 - reported to the daemon as an error object
            reply = self._error_reply(message, error)
        try:
            self._send(reply)
        except ConnectionClosed:
            pass


class AsyncWriter(Protocol):
    """The writing half ``AsyncConnection`` needs (``asyncio.StreamWriter`` has it)."""

    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def can_write_eof(self) -> bool: ...
    def write_eof(self) -> None: ...
    def close(self) -> None: ...


class AsyncReader(Protocol):
    """The reading half ``AsyncConnection`` needs (``asyncio.StreamReader`` has it)."""

    async def read(self, n: int = -1) -> bytes: ...


class AsyncConnection(_Dispatch):
    """An asyncio JSON-RPC connection over a reader/writer pair.

    Notification callbacks run in the reader task (plain functions or coroutine functions, the latter
    scheduled as tasks); request handlers run as their own tasks. When a spawned daemon exits with a non-zero
    status, waiting calls fail with ``DaemonExited`` (its status and, with a ``StderrTail``, its last lines).
    """

    def __init__(self, reader: AsyncReader, writer: AsyncWriter, *, framing: str = NDJSON,
                 process: Optional[asyncio.subprocess.Process] = None, stderr_tail: Optional[StderrTail] = None,
                 stderr_task: "Optional[asyncio.Task[None]]" = None) -> None:
        super().__init__()
        self._reader = reader
        self._writer = writer
        self._framer = Framer(framing)
        self._process = process
        self._stderr_tail = stderr_tail
        self._stderr_task = stderr_task
        self._pending: Dict[int, asyncio.Future[Any]] = {}
        self._closed = False
        self._closing = False
        self._close_result: Optional[int] = None
        self._ended: Optional[ConnectionClosed] = None
        self._end_known = asyncio.Event()  # set once the reader has found out why the connection ended
        self._tasks: "set[asyncio.Task[Any]]" = set()
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def spawn(cls, command: Sequence[str] = DEFAULT_COMMAND, *, framing: str = NDJSON, stderr: Any = None,
                    env: Optional[Dict[str, str]] = None) -> "AsyncConnection":
        """Starts the daemon with pipes on stdin/stdout. Its stderr is copied to ours line by line (and its last
        lines kept for ``DaemonExited``) unless ``stderr`` says where else it goes."""
        tail = StderrTail() if stderr is None else None
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=tail.file if tail is not None else stderr, env=env)
        assert process.stdout is not None and process.stdin is not None
        task = asyncio.get_running_loop().create_task(tail.pump(process)) if tail is not None else None
        return cls(process.stdout, _ProcessWriter(process.stdin), framing=framing, process=process,
                   stderr_tail=tail, stderr_task=task)

    @classmethod
    async def connect(cls, path: str, *, framing: str = NDJSON) -> "AsyncConnection":
        """Connects to the daemon's Unix socket at ``path``."""
        reader, writer = await asyncio.open_unix_connection(sock=connect_unix(path))
        return cls(reader, writer, framing=framing)

    async def __aenter__(self) -> "AsyncConnection":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._closed or self._closing

    async def call(self, method: str, params: Any = None, *, timeout: Optional[float] = None,
                   cancellable: bool = False) -> Any:
        """Sends a request and awaits its result (raises ``RPCError``, ``ConnectionClosed``, ``Timeout``).

        With ``cancellable``, a timeout or the cancellation of the awaiting task sends the notification
        ``$/cancelRequest {id}`` and waits (at most ``CANCEL_GRACE`` seconds) for the request's answer, -32800 when
        the daemon cancelled it, so nothing is left waiting; then ``Timeout`` is raised (or the result returned, if
        the request ended first) or the ``CancelledError`` goes on."""
        if self.closed:
            raise await self._closed_reason()
        id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[id] = future
        try:
            try:
                await self._send(self._request(method, params, id))
            except ConnectionClosed:
                if self._closing:
                    raise
                raise await self._closed_reason() from None
            if not cancellable:
                return await asyncio.wait_for(future, timeout)
            try:
                return await asyncio.wait_for(asyncio.shield(future), timeout)
            except asyncio.TimeoutError:
                if await self._cancel(id, future):
                    return future.result()
                raise
            except asyncio.CancelledError:
                await self._cancel(id, future)
                raise
        except asyncio.TimeoutError:
            raise Timeout(f"{method}: no answer within {timeout} s") from None
        finally:
            self._pending.pop(id, None)

    async def _cancel(self, id: int, future: "asyncio.Future[Any]") -> bool:
        """Sends ``$/cancelRequest {id}`` unless ``future`` is done, and waits for it; True when the request was
        answered with a result (not cancelled). The wait is not cut short when the awaiting task is cancelled
        (again) meanwhile: that cancellation is raised once the answer came, or ``CANCEL_GRACE`` passed."""
        cancelled = False
        if not future.done() and not self.closed:
            try:
                await self.notify("$/cancelRequest", {"id": id})
            except asyncio.CancelledError:
                cancelled = True
            except Exception:  # noqa: BLE001 - a closed connection: the request is over
                pass
            cancelled = await wait_through_cancellation(future, CANCEL_GRACE) or cancelled
            if not future.done():
                wire_log.warning("request %s: no answer within %s s after $/cancelRequest", id, CANCEL_GRACE)
        if cancelled:
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()  # retrieved: the caller is cancelled, whatever the answer
            raise asyncio.CancelledError
        if future.done() and not future.cancelled():
            return future.exception() is None
        future.cancel()
        return False

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no answer)."""
        await self._send(self._request(method, params))

    async def close(self, timeout: Optional[float] = 10) -> Optional[int]:
        """Closes the output, waits for the reader to end, returns the child's exit code when spawned.
        A second call returns the same."""
        if self._closing:
            return self._close_result
        self._closing = True
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
            self._close_result = await asyncio.wait_for(self._process.wait(), timeout)
        if self._stderr_task is not None:
            try:
                await asyncio.wait_for(self._stderr_task, 2)
            except asyncio.TimeoutError:
                pass
        return self._close_result

    async def _send(self, message: Message) -> None:
        try:
            self._writer.write(self._framer.encode(message))
            await self._writer.drain()
        except (OSError, RuntimeError) as error:
            raise ConnectionClosed(f"cannot write to the daemon: {error}") from error

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
            ended = await self._end_reason()
            self._ended = ended
            self._end_known.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ended)

    async def _closed_reason(self) -> ConnectionClosed:
        """Why a call cannot be made: the daemon's exit (``DaemonExited``) once the reader has found it out, which
        takes at most its waits in ``_end_reason``; at once ``ConnectionClosed`` when this side closed."""
        if not self._closing and self._ended is None:
            await self._end_known.wait()
        return self._ended or ConnectionClosed("connection closed")

    async def _end_reason(self) -> ConnectionClosed:
        """``DaemonExited`` when the spawned daemon ended with a non-zero status, else ``ConnectionClosed``."""
        if self._process is not None and not self._closing:
            try:
                code = await asyncio.wait_for(self._process.wait(), 2)
            except asyncio.TimeoutError:
                code = 0
            if code != 0:
                if self._stderr_task is not None:
                    try:
                        await asyncio.wait_for(asyncio.shield(self._stderr_task), 1)
                    except asyncio.TimeoutError:
                        pass
                return DaemonExited(code, list(self._stderr_tail.lines) if self._stderr_tail else [])
        if self._closing:
            return ConnectionClosed("connection closed")
        return ConnectionClosed("the daemon closed the connection")

    def _spawn_task(self, coroutine: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _handle(self, message: Message) -> None:
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

    async def _answer(self, message: Message) -> None:
        handler = self._request_handlers.get(message["method"])
        try:
            if handler is None:
                raise RPCError(-32601, "Method not found", {"method": message["method"]})
            result = handler(message.get("params"))
            if inspect.isawaitable(result):
                result = await result
            reply: Message = self._writable({"jsonrpc": "2.0", "id": message["id"], "result": result})
        except Exception as error:  # noqa: BLE001 - reported to the daemon as an error object
            reply = self._error_reply(message, error)
        try:
            await self._send(reply)
        except ConnectionClosed:
            pass


class _ProcessWriter:
    """Gives a subprocess's stdin StreamWriter the socket writer's half-close API (closing stdin = EOF)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        self._writer.write(data)

    async def drain(self) -> None:
        await self._writer.drain()

    def can_write_eof(self) -> bool:
        return False

    def write_eof(self) -> None:
        self.close()

    def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()

