"""``AsyncAccessEnabler``: the asyncio client of the PassBridge daemon.

Methods carry the SDK's (and the wire's) exact names — ``setRequestor``, ``getAuthentication``,
``handleExternalURL`` … — and keyword params named as in Protocol/openrpc.json. Each returns the response's
``result`` dict, which the daemon sends when the operation ends, after its notifications (DESIGN §3): e.g.
``await getAuthorization("ch1")`` returns ``{"token", "resource"}`` or ``{"resource", "errorCode",
"errorDescription"}``. Protocol faults raise ``RPCError``; a vanished daemon raises ``ConnectionClosed``.
"""
import asyncio
import inspect
import logging
import os
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Union

from .delegate import EntitlementDelegate, Event, PartnerSSOHost, invoke
from .rpc import AsyncConnection

log = logging.getLogger("passbridge")

RequestHandlerFn = Callable[[Any], Union[Any, Awaitable[Any]]]
_DONE = object()


class EventStream:
    """An async iterator over the daemon's notifications, from the moment it was opened.

    ``async for event in stream`` yields ``Event`` values until the connection closes; ``await
    stream.next("navigateToUrl", timeout=30)`` returns the next event of one of the given names (skipping
    others). Use as a context manager, or call ``close()``, to stop receiving.
    """

    def __init__(self, owner: "AsyncAccessEnabler", names: Sequence[str]) -> None:
        self._owner = owner
        self._names = set(names)
        self._queue: asyncio.Queue = asyncio.Queue()

    def _offer(self, item: Any) -> None:
        if item is _DONE or not self._names or item.name in self._names:
            self._queue.put_nowait(item)

    async def next(self, *names: str, timeout: Optional[float] = None) -> Event:
        """The next event (of one of ``names`` when given); raises ``asyncio.TimeoutError`` or ``EOFError``."""

        async def pick() -> Event:
            while True:
                item = await self._queue.get()
                if item is _DONE:
                    self._queue.put_nowait(_DONE)
                    raise EOFError("connection closed")
                if not names or item.name in names:
                    return item

        return await asyncio.wait_for(pick(), timeout)

    def __aiter__(self) -> "EventStream":
        return self

    async def __anext__(self) -> Event:
        try:
            return await self.next()
        except EOFError:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Stops delivering events to this stream."""
        self._owner._streams.discard(self)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _EOFWatch:
    """A stream reader that reports the end of the daemon's output (for the event streams)."""

    def __init__(self, reader: asyncio.StreamReader, on_eof: Callable[[], None]) -> None:
        self._reader, self._on_eof = reader, on_eof

    async def read(self, n: int = -1) -> bytes:
        try:
            data = await self._reader.read(n)
        except Exception:
            self._on_eof()
            raise
        if not data:
            self._on_eof()
        return data


class _PipeWriter:
    """The child's stdin with the half-close API ``AsyncConnection`` expects (closing stdin = EOF)."""

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


class AsyncAccessEnabler:
    """One AccessEnabler instance in the daemon (one connection = one application instance).

    Create with ``await AsyncAccessEnabler.spawn(...)`` (stdio child) or ``await
    AsyncAccessEnabler.connect(path)`` (Unix socket); use ``async with`` or ``await close()``.
    """

    def __init__(self, delegate: Optional[EntitlementDelegate] = None) -> None:
        self.delegate = delegate
        self.process: Optional[asyncio.subprocess.Process] = None
        self._conn: Optional[AsyncConnection] = None
        self._closed: "Optional[asyncio.Future]" = None
        self._streams: set = set()
        self._listeners: List[Callable[[Event], None]] = []
        self._tasks: set = set()

    # ---- lifecycle ------------------------------------------------------------------------------------------
    @classmethod
    async def spawn(
        cls,
        *args: str,
        executable: str = "passbridge",
        delegate: Optional[EntitlementDelegate] = None,
        stderr: Any = None,
        env: Optional[Dict[str, str]] = None,
    ) -> "AsyncAccessEnabler":
        """Starts ``executable --stdio ARGS…`` as a child and talks to it over its stdin/stdout.

        ``args`` are further daemon flags (``"--backend", url, "--state-dir", dir`` …); ``stderr`` is where
        the daemon's logs go (inherited by default; a file object or ``asyncio.subprocess.DEVNULL``).
        """
        self = cls(delegate)
        process = await asyncio.create_subprocess_exec(
            executable, "--stdio", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
            env=env if env is not None else os.environ.copy(),
        )
        assert process.stdout is not None and process.stdin is not None
        self.process = process
        self._attach(process.stdout, _PipeWriter(process.stdin), process)
        return self

    @classmethod
    async def connect(cls, path: str, delegate: Optional[EntitlementDelegate] = None) -> "AsyncAccessEnabler":
        """Connects to a daemon listening on the Unix socket ``path`` (e.g. /run/passbridge/passbridge.sock)."""
        self = cls(delegate)
        reader, writer = await asyncio.open_unix_connection(path)
        self._attach(reader, writer, None)
        return self

    def _attach(self, reader: asyncio.StreamReader, writer: Any, process: Any) -> None:
        self._closed = asyncio.get_running_loop().create_future()
        self._conn = AsyncConnection(_EOFWatch(reader, self._on_eof), writer, process=process)
        self._conn.on_notification(None, self._notified)

    def _on_eof(self) -> None:
        if not self._closed.done():
            self._closed.set_result(None)
        for s in list(self._streams):
            s._offer(_DONE)

    async def close(self) -> int:
        """Closes the connection; for a spawned daemon waits for it to exit and returns its exit status."""
        code: Optional[int] = None
        if self._conn is not None:
            try:
                code = await self._conn.close(timeout=15)
            except asyncio.TimeoutError:
                if self.process is not None:
                    self.process.kill()
                    code = await self.process.wait()
        for t in list(self._tasks):
            t.cancel()
        self._on_eof()
        return code or 0

    async def __aenter__(self) -> "AsyncAccessEnabler":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def closed(self) -> "asyncio.Future":
        """A future that completes when the daemon's side of the connection is closed."""
        return self._closed

    # ---- callbacks ------------------------------------------------------------------------------------------
    def events(self, *names: str) -> EventStream:
        """Opens an event stream (all notifications, or only those named)."""
        stream = EventStream(self, names)
        self._streams.add(stream)
        return stream

    def add_listener(self, fn: Callable[[Event], None]) -> None:
        """Calls ``fn(event)`` synchronously for every notification, before the delegate."""
        self._listeners.append(fn)

    def register_request_handler(self, method: str, fn: RequestHandlerFn) -> None:
        """Answers daemon→host requests named ``method`` with ``fn(params)`` (plain or coroutine).

        The return value is the result; raise ``HostError(reason)`` to answer with an error. Requests with no
        handler are answered with -32601.
        """
        assert self._conn is not None, "not connected"
        self._conn.on_request(method, fn)

    def register_partner_sso(self, host: PartnerSSOHost) -> None:
        """Registers the two ``partnerSSO/*`` requests on ``host`` (see ``PartnerSSOHost``)."""
        self.register_request_handler(
            "partnerSSO/checkAccessStatus", lambda p: host.checkAccessStatus(bool((p or {}).get("prompt")))
        )
        self.register_request_handler("partnerSSO/requestAccountMetadata", lambda p: host.requestAccountMetadata(p or {}))

    def _notified(self, method: str, params: Any) -> None:
        event = Event(method, params if isinstance(params, dict) else {})
        for fn in self._listeners:
            fn(event)
        for s in list(self._streams):
            s._offer(event)
        if self.delegate is not None:
            self._run_callback(self.delegate, event)

    def _run_callback(self, delegate: Any, event: Event) -> None:
        try:
            out = invoke(delegate, event)
        except Exception:
            log.exception("passbridge: delegate %s failed", event.name)
            return
        if inspect.isawaitable(out):
            task = asyncio.ensure_future(out)
            self._tasks.add(task)
            task.add_done_callback(self._callback_done)

    def _callback_done(self, task: "asyncio.Future") -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("passbridge: delegate callback failed", exc_info=task.exception())

    # ---- methods (host → daemon), DESIGN §3 -----------------------------------------------------------------
    async def call(self, method: str, params: Optional[dict] = None) -> Any:
        """Sends any request (``rpc.discover``, or a method newer than this client) and returns its result."""
        assert self._conn is not None, "not connected"
        return await self._conn.call(method, params)

    async def _call(self, method: str, **params: Any) -> Any:
        return await self.call(method, {k: v for k, v in params.items() if v is not None})

    async def init(
        self,
        softwareStatement: Optional[str] = None,
        redirectUrl: Optional[str] = None,
        webView: Optional[bool] = None,
        partnerSSO: Optional[str] = None,
    ) -> dict:
        """Configures this instance: software statement (else the daemon's flag), redirect URL (default
        ``adobepass://ios.app``), ``webView=False`` for a second-screen host, ``partnerSSO`` (e.g. "Apple")."""
        return await self._call("init", softwareStatement=softwareStatement, redirectUrl=redirectUrl,
                                webView=webView, partnerSSO=partnerSSO)

    async def setOptions(self, **options: Any) -> dict:
        """Sets ``applicationProfile``, ``visitorID``, ``device_info``, ``handleSVC`` (never queued)."""
        return await self._call("setOptions", **options)

    async def setRequestor(self, requestorID: str, serviceProviders: Optional[List[str]] = None) -> dict:
        """Loads the requestor's configuration; returns ``{status}`` (1 success, 0 failure)."""
        return await self._call("setRequestor", requestorID=requestorID, serviceProviders=serviceProviders)

    async def checkAuthentication(self) -> dict:
        """Returns ``{status, errorCode}`` from the stored profile, without a login."""
        return await self._call("checkAuthentication")

    async def getAuthentication(
        self, forceAuthn: Optional[bool] = None, data: Optional[dict] = None, filter: Optional[List[str]] = None
    ) -> dict:
        """Runs the login flow (picker, login page or second screen); returns ``{status, errorCode}`` at its end."""
        return await self._call("getAuthentication", forceAuthn=forceAuthn, data=data, filter=filter)

    async def setSelectedProvider(self, mvpdId: Optional[str]) -> dict:
        """Answers the picker: an MVPD ``ID``, or ``None`` to cancel ("Provider not Selected Error")."""
        return await self.call("setSelectedProvider", {"mvpdId": mvpdId})

    async def handleExternalURL(self, url: str) -> dict:
        """Hands over the redirect URL the login/logout page reached; returns the flow's ``{status, errorCode}``."""
        return await self._call("handleExternalURL", url=url)

    async def getAuthenticationToken(self) -> dict:
        """Deprecated alias of completing the login flow (see ``handleExternalURL``)."""
        return await self._call("getAuthenticationToken")

    async def checkPreauthorizedResources(self, resources: List[str], cache: Optional[bool] = None) -> dict:
        """Returns ``{resources}``: those of ``resources`` the user may watch (UI decoration only)."""
        return await self._call("checkPreauthorizedResources", resources=resources, cache=cache)

    async def checkAuthorization(self, resource: str, data: Optional[dict] = None) -> dict:
        """Authorizes ``resource`` without starting a login; see ``getAuthorization`` for the result."""
        return await self._call("checkAuthorization", resource=resource, data=data)

    async def getAuthorization(self, resource: str, data: Optional[dict] = None) -> dict:
        """Authorizes ``resource`` (plain id or MRSS), logging in first if needed.

        Returns ``{token, resource}`` (short media token) or ``{resource, errorCode, errorDescription}``.
        """
        return await self._call("getAuthorization", resource=resource, data=data)

    async def logout(self) -> dict:
        """Logs out; returns ``{status: 0, errorCode: "User Not Authenticated Error"}`` when the flow ends."""
        return await self._call("logout")

    async def getSelectedProvider(self) -> dict:
        """Returns ``{mvpd}``: the current MVPD object or ``None``."""
        return await self._call("getSelectedProvider")

    async def getMetadata(
        self, opCode: Union[str, int], resource: Optional[str] = None, userMetaKey: Optional[str] = None
    ) -> dict:
        """Returns ``{metadata, encrypted, key, arguments}``; ``opCode`` is a ``METADATA_*`` name or 0–3."""
        return await self._call("getMetadata", opCode=opCode, resource=resource, userMetaKey=userMetaKey)

    async def discover(self) -> dict:
        """Returns the daemon's OpenRPC document (``rpc.discover``)."""
        return await self.call("rpc.discover")
