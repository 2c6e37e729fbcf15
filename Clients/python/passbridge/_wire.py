"""A minimal JSON-RPC 2.0 peer over NDJSON on asyncio streams (the client's private transport).

One line per message. Requests flow both ways: ``request`` sends ours and waits for the matching response;
incoming requests go to ``on_request`` and are answered with its result (or with the error it raises);
incoming notifications go to ``on_notification`` synchronously, in arrival order, before any later
response is handed to its waiter — so a callback is always seen before the response that ends it.
"""
import asyncio
import json
import logging
from typing import Any, Awaitable, Callable, Dict, Optional

from .errors import ConnectionClosed, HostError, RPCError

log = logging.getLogger("passbridge")

NotificationHandler = Callable[[str, Any], None]
RequestHandler = Callable[[str, Any], Awaitable[Any]]


class Connection:
    """One JSON-RPC connection; all methods run on the event loop that created it."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: Any,
        on_notification: NotificationHandler,
        on_request: RequestHandler,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_notification = on_notification
        self._on_request = on_request
        self._pending: Dict[int, asyncio.Future] = {}
        self._next_id = 1
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._tasks: set = set()
        self.closed = asyncio.get_running_loop().create_future()
        self._reader_task = asyncio.ensure_future(self._read_loop())

    async def request(self, method: str, params: Optional[dict] = None) -> Any:
        """Sends a request and returns its ``result``; raises RPCError or ConnectionClosed."""
        if self._closed:
            raise ConnectionClosed("connection closed")
        rid = self._next_id
        self._next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            await self._send(msg)
            return await fut
        finally:
            self._pending.pop(rid, None)

    async def notify(self, method: str, params: Optional[dict] = None) -> None:
        """Sends a notification (no answer expected)."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self._send(msg)

    async def close(self) -> None:
        """Closes our sending side and waits until the peer's side is closed too."""
        if not self._writer.is_closing():
            self._writer.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._reader_task), timeout=10)
        except (asyncio.TimeoutError, Exception):
            self._reader_task.cancel()
        self._fail_pending()

    async def _send(self, msg: dict) -> None:
        data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        async with self._write_lock:
            if self._writer.is_closing():
                raise ConnectionClosed("connection closed")
            self._writer.write(data)
            try:
                await self._writer.drain()
            except (ConnectionError, BrokenPipeError) as e:
                raise ConnectionClosed(str(e)) from e

    async def _read_loop(self) -> None:
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    log.warning("passbridge: unparsable line from daemon ignored")
                    continue
                for m in msg if isinstance(msg, list) else [msg]:
                    if isinstance(m, dict):
                        self._handle(m)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError) as e:
            log.debug("passbridge: read ended: %s", e)
        finally:
            self._closed = True
            self._fail_pending()
            if not self.closed.done():
                self.closed.set_result(None)

    def _handle(self, m: dict) -> None:
        method = m.get("method")
        if isinstance(method, str):
            if "id" in m:
                task = asyncio.ensure_future(self._answer(m["id"], method, m.get("params")))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            else:
                self._on_notification(method, m.get("params"))
            return
        fut = self._pending.get(m.get("id"))  # type: ignore[arg-type]
        if fut is None or fut.done():
            return
        if "error" in m and isinstance(m["error"], dict):
            e = m["error"]
            fut.set_exception(RPCError(e.get("code", 0), e.get("message", ""), e.get("data")))
        else:
            fut.set_result(m.get("result"))

    async def _answer(self, rid: Any, method: str, params: Any) -> None:
        reply: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        try:
            reply["result"] = await self._on_request(method, params)
        except HostError as e:
            reply["error"] = {"code": e.code, "message": e.message, "data": e.data}
        except RPCError as e:
            reply["error"] = {"code": e.code, "message": e.message, "data": e.data}
        except Exception as e:  # a bug in a host handler: report it as the contract's "other"
            log.exception("passbridge: host handler for %s failed", method)
            reply["error"] = {"code": -32603, "message": str(e) or "internal error", "data": {"reason": "other"}}
        try:
            await self._send(reply)
        except ConnectionClosed:
            pass

    def _fail_pending(self) -> None:
        for fut in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(ConnectionClosed("the daemon closed the connection"))
        self._pending.clear()
