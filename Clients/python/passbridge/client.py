"""``AsyncAccessEnabler``: the asyncio client of the PassBridge daemon.

Methods carry the SDK's (and the wire's) exact names — ``setRequestor``, ``getAuthentication``,
``handleExternalURL`` … — and keyword params named as in Protocol/openrpc.json. Each returns the response's
``result``, which the daemon sends when the operation ends, after its notifications: e.g.
``await getAuthorization("ch1")`` returns ``{"token", "resource"}`` or ``{"resource", "errorCode",
"errorDescription", "statuses"}``. A failed outcome says why in ``statuses`` (Protocol/README.md "Failure
reasons"). Protocol faults raise ``RPCError``; a closed connection raises ``ConnectionClosed`` (``DaemonExited``
when the spawned daemon failed); no answer in time raises ``Timeout``.

Timeouts: calls that do not wait on the user get the client's ``timeout`` (default 30 s; ``None`` waits for
ever). ``getAuthentication``, ``getAuthorization`` and ``logout`` may wait on the user (provider dialog, login
page, second screen, logout page) and have no timeout unless you pass ``timeout=`` to ``call``; when one of them
times out or its task is cancelled, the client first cancels it in the daemon (``$/cancelRequest``) and waits
for the answer.

The Pythonic methods at the end (``set_requestor``, ``authorize``, ``login_web``, ``login_second_screen``,
``log_out`` …) return the typed outcomes of ``passbridge.outcomes`` and raise ``EntitlementError``s.
"""
import asyncio
import inspect
import logging
import os
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Set, Union, cast

from .delegate import USER_STEPS, EntitlementDelegate, Event, PartnerSSOHost, handles, invoke
from .constants import GENERIC_AUTHENTICATION_ERROR, INSTANCE_CLOSED, PROVIDER_NOT_SELECTED_ERROR
from .errors import ConnectionClosed, EntitlementError, Timeout
from .locate import find_daemon
from .flows import ChooseMVPD, OpenURL, ShowCode, run_flow
from .outcomes import (Authentication, Authorization, Logout, MediaToken, Metadata, Preauthorization,
                       authorization_from_result, requestor_outcome)
from .results import (AuthenticationStatus, AuthorizationResult, Empty, MetadataResult, PreauthorizedResult,
                      SelectedProviderResult, SelectionResult, SetRequestorResult)
from .rpc import AsyncConnection, AsyncWriter, StderrTail, _ProcessWriter, connect_unix

log = logging.getLogger("passbridge")

RequestHandlerFn = Callable[[Any], Union[Any, Awaitable[Any]]]

#: Seconds a call that does not wait on the user may take, unless the client is given another ``timeout``.
DEFAULT_TIMEOUT = 30.0
#: Methods that may wait on the user: no default timeout.
WAITS_ON_USER = frozenset({"getAuthentication", "getAuthorization", "logout"})
_DEFAULT: Any = object()


class _Done:
    """Marks the end of an event stream."""


_DONE = _Done()


class EventStream:
    """An async iterator over the daemon's notifications, from the moment it was opened.

    ``async for event in stream`` yields ``Event`` values until the connection closes; ``await
    stream.next("navigateToUrl", timeout=30)`` returns the next event of one of the given names (skipping
    others). Use as a context manager, or call ``close()``, to stop receiving.
    """

    def __init__(self, owner: "AsyncAccessEnabler", names: Sequence[str]) -> None:
        self._owner = owner
        self._names = set(names)
        self._queue: "asyncio.Queue[Union[Event, _Done]]" = asyncio.Queue()

    def _offer(self, item: Union[Event, _Done]) -> None:
        if isinstance(item, _Done) or not self._names or item.name in self._names:
            self._queue.put_nowait(item)

    async def next(self, *names: str, timeout: Optional[float] = None) -> Event:
        """The next event (of one of ``names`` when given); raises ``Timeout`` or, once the connection has
        closed and every event was read, ``ConnectionClosed``."""

        async def pick() -> Event:
            while True:
                item = await self._queue.get()
                if isinstance(item, _Done):
                    self._queue.put_nowait(item)
                    raise ConnectionClosed("connection closed")
                if not names or item.name in names:
                    return item

        try:
            return await asyncio.wait_for(pick(), timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"no {' or '.join(names) or 'notification'} within {timeout} s") from None

    def __aiter__(self) -> "EventStream":
        return self

    async def __anext__(self) -> Event:
        try:
            return await self.next()
        except ConnectionClosed:
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


class AsyncAccessEnabler:
    """One AccessEnabler instance in the daemon (one connection = one application instance).

    Create with ``await AsyncAccessEnabler.spawn(...)`` (stdio child) or ``await
    AsyncAccessEnabler.connect(path)`` (Unix socket); use ``async with`` or ``await close()``. ``timeout`` is
    the default timeout in seconds of calls that do not wait on the user (``None``: no timeout).
    """

    def __init__(self, delegate: Optional[EntitlementDelegate] = None, timeout: Optional[float] = DEFAULT_TIMEOUT) -> None:
        self.delegate = delegate
        self.timeout = timeout
        self.process: Optional[asyncio.subprocess.Process] = None
        self._conn: Optional[AsyncConnection] = None
        self._closed: "Optional[asyncio.Future[None]]" = None
        self._close_code: Optional[int] = None
        self._streams: "Set[EventStream]" = set()
        self._listeners: List[Callable[[Event], None]] = []
        # The N005 of this connection's instance closing (details INSTANCE_CLOSED), once it came.
        self._closed_by: Optional[Dict[str, Any]] = None
        # getAuthentication/getAuthorization calls not yet answered: a login page nobody can show is then theirs.
        self._logins_in_flight = 0
        self._tasks: "Set[asyncio.Future[Any]]" = set()
        # The user steps the running Pythonic helpers answer themselves (not the delegate's, see flows.run_flow).
        self._helper_steps: List[Set[str]] = []
        if delegate is not None and getattr(delegate, "client", None) is None:
            try:
                delegate.client = self
            except AttributeError:  # a delegate with __slots__ or a read-only ``client``: left as it is
                pass

    # ---- lifecycle ------------------------------------------------------------------------------------------
    @classmethod
    async def spawn(
        cls,
        *args: str,
        executable: Optional[str] = None,
        delegate: Optional[EntitlementDelegate] = None,
        stderr: Any = None,
        env: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
    ) -> "AsyncAccessEnabler":
        """Starts ``executable --stdio ARGS…`` as a child and talks to it over its stdin/stdout.

        The daemon is ``executable`` when given (a path, or a name looked up in ``PATH``), else ``$PASSBRIDGE``,
        else the one the platform wheel bundles, else ``passbridge`` in ``PATH`` (``passbridge.find_daemon``);
        none raises ``DaemonNotFound`` (also a ``FileNotFoundError``) saying where it looked and what to install.

        ``args`` are further daemon flags (``"--backend", url, "--state-dir", dir`` …). The daemon's logs
        (stderr) are copied to this process's stderr, and its last lines kept for ``DaemonExited``, unless
        ``stderr`` says where else they go (a file object or ``asyncio.subprocess.DEVNULL``). They go through a
        temporary file, so a daemon that outlives this process can still log and clean up.
        """
        daemon = find_daemon(executable, env)
        self = cls(delegate, timeout)
        tail = StderrTail() if stderr is None else None
        process = await asyncio.create_subprocess_exec(
            daemon, "--stdio", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=tail.file if tail is not None else stderr,
            env=env if env is not None else os.environ.copy(),
        )
        assert process.stdout is not None and process.stdin is not None
        task = asyncio.get_running_loop().create_task(tail.pump(process)) if tail is not None else None
        self.process = process
        self._attach(process.stdout, _ProcessWriter(process.stdin), process, tail, task)
        return self

    @classmethod
    async def connect(cls, path: str, delegate: Optional[EntitlementDelegate] = None,
                      timeout: Optional[float] = DEFAULT_TIMEOUT) -> "AsyncAccessEnabler":
        """Connects to a daemon listening on the Unix socket ``path`` (e.g. /run/passbridge/passbridge.sock).

        Raises ``FileNotFoundError``, ``PermissionError`` or ``ConnectionRefusedError`` naming ``path``."""
        self = cls(delegate, timeout)
        reader, writer = await asyncio.open_unix_connection(sock=connect_unix(path))
        self._attach(reader, writer, None, None, None)
        return self

    def _attach(self, reader: asyncio.StreamReader, writer: AsyncWriter, process: Optional[asyncio.subprocess.Process],
                tail: Optional[StderrTail], task: "Optional[asyncio.Task[None]]") -> None:
        self._closed = asyncio.get_running_loop().create_future()
        self._conn = AsyncConnection(_EOFWatch(reader, self._on_eof), writer, process=process,
                                     stderr_tail=tail, stderr_task=task)
        self._conn.on_notification(None, self._notified)

    def _on_eof(self) -> None:
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)
        for s in list(self._streams):
            s._offer(_DONE)

    async def close(self) -> int:
        """Closes the connection; for a spawned daemon waits for it to exit and returns its exit status
        (0 for a socket). Calling it again returns the same; calls after it raise ``ConnectionClosed``."""
        if self._close_code is not None:
            return self._close_code
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
        self._close_code = code or 0
        return self._close_code

    async def __aenter__(self) -> "AsyncAccessEnabler":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def closed(self) -> "asyncio.Future[None]":
        """A future that completes when the daemon's side of the connection is closed."""
        assert self._closed is not None, "not connected"
        return self._closed

    # ---- callbacks ------------------------------------------------------------------------------------------
    def events(self, *names: str) -> EventStream:
        """Opens an event stream (all notifications, or only those named)."""
        stream = EventStream(self, names)
        self._streams.add(stream)
        return stream

    def add_listener(self, fn: Callable[[Event], None]) -> None:
        """Calls ``fn(event)`` synchronously for every notification, before the delegate; an exception it raises is
        logged, and the connection goes on."""
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
        if method == "status" and event["id"] == "N005" and event["details"] == INSTANCE_CLOSED:
            self._closed_by = dict(event.params)
        for fn in self._listeners:
            try:
                fn(event)
            except Exception:  # one listener's bug is logged; the connection and the other listeners go on
                log.exception("passbridge: listener %r failed on %s", fn, method)
                self.abandon_login(method)  # at a user step, as a delegate method that raises
        for s in list(self._streams):
            s._offer(event)
        if method in USER_STEPS and not self._streams and not self._listeners and not handles(self.delegate, method):
            log.warning("%s arrived but nothing handles it (give the client a delegate with a %s method, or read "
                        "ae.events())", method, method)
            self.abandon_login(method)
        if self.delegate is not None and not self.helper_answers(method):
            self._run_callback(self.delegate, event)

    def helper_answers(self, step: str) -> bool:
        """Whether a running Pythonic helper (``login_web``…) answers the user step ``step`` itself, so that the
        delegate's method for it is not called."""
        return any(step in steps for steps in self._helper_steps)

    def abandon_login(self, step: str) -> None:
        """Cancels the login waiting at ``step`` (``displayProviderDialog`` or a login's ``navigateToUrl``) that
        nothing could show, with ``setSelectedProvider(None)``: the call that started it then ends with "Provider
        not Selected Error" instead of waiting for the user forever. A logout page is left to its timeout."""
        if step not in USER_STEPS or (step == "navigateToUrl" and self._logins_in_flight == 0) or self._conn is None:
            return
        log.warning("passbridge: nobody can show %s; cancelling the login so that the call that started it ends",
                    step)
        task = asyncio.ensure_future(self.call("setSelectedProvider", {"mvpdId": None}))
        self._tasks.add(task)
        task.add_done_callback(self._cancel_sent)

    def _cancel_sent(self, task: "asyncio.Future[Any]") -> None:
        """``abandon_login``'s ``setSelectedProvider(None)`` ended; its failure (the connection closing meanwhile)
        changes nothing: the login ends either way."""
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("passbridge: cancelling the login failed: %s", task.exception())

    def _run_callback(self, delegate: Any, event: Event) -> None:
        try:
            out = invoke(delegate, event)
        except Exception:
            log.exception("passbridge: delegate %s failed", event.name)
            self.abandon_login(event.name)
            return
        if inspect.isawaitable(out):
            task = asyncio.ensure_future(out)
            self._tasks.add(task)
            task.add_done_callback(lambda done: self._callback_done(done, event.name))

    def _callback_done(self, task: "asyncio.Future[Any]", step: str) -> None:
        """An ``async`` delegate method ended: one that raised cancels the login waiting at its step, as a plain
        method that raises does (else that login waited for ever)."""
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("passbridge: delegate %s failed", step, exc_info=task.exception())
            self.abandon_login(step)

    # ---- methods (host → daemon), Protocol/openrpc.json ------------------------------------------------------
    async def call(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = _DEFAULT) -> Any:
        """Sends any request (``rpc.discover``, or a method newer than this client) and returns its result.

        ``timeout`` (seconds, ``None`` for none) defaults to the client's for methods that do not wait on the
        user and to none for those that may. Raises ``RPCError``, ``ConnectionClosed`` or ``Timeout``. A call of
        ``WAITS_ON_USER`` that times out, or whose task is cancelled, is cancelled in the daemon too
        (``$/cancelRequest``; its flow ends as a cancel at the dialog does) before ``Timeout`` or the
        ``CancelledError`` is raised."""
        if self._conn is None:
            raise ConnectionClosed("not connected")
        if timeout is _DEFAULT:
            timeout = None if method in WAITS_ON_USER else self.timeout
        login = method in ("getAuthentication", "getAuthorization")
        self._logins_in_flight += login
        try:
            return await self._conn.call(method, params, timeout=timeout, cancellable=method in WAITS_ON_USER)
        finally:
            self._logins_in_flight -= login

    async def _call(self, method: str, **params: Any) -> Any:
        return await self.call(method, {k: v for k, v in params.items() if v is not None})

    async def init(
        self,
        softwareStatement: Optional[str] = None,
        redirectUrl: Optional[str] = None,
        webView: Optional[bool] = None,
        partnerSSO: Optional[str] = None,
        deviceIdentifier: Optional[str] = None,
        deviceInfo: Optional[str] = None,
        forwardedFor: Optional[str] = None,
        subjectToken: Optional[str] = None,
        serviceToken: Optional[str] = None,
        svcMVPDs: Optional[List[str]] = None,
        svcRedirectUrl: Optional[str] = None,
        storageCheck: Optional[str] = None,
    ) -> Empty:
        """Configures this instance: software statement (else the daemon's flag), redirect URL (default
        ``adobepass://ios.app``), ``webView=False`` for a second-screen host, ``partnerSSO`` (e.g. "Apple"), the
        device a server acts for (``deviceIdentifier``, at most 256 characters; ``deviceInfo`` as base64 JSON; ``forwardedFor``), the
        single sign-on tokens (``subjectToken``, ``serviceToken``), the MVPDs whose pages open in the Safari View
        Controller and their redirect URL (``svcMVPDs``, ``svcRedirectUrl``), and ``storageCheck`` ("none", "all",
        "clear": the SDK's initWithStorageCheck). Protocol/openrpc.json describes each."""
        return cast(Empty, await self._call(
            "init", softwareStatement=softwareStatement, redirectUrl=redirectUrl, webView=webView, partnerSSO=partnerSSO,
            deviceIdentifier=deviceIdentifier, deviceInfo=deviceInfo, forwardedFor=forwardedFor,
            subjectToken=subjectToken, serviceToken=serviceToken, svcMVPDs=svcMVPDs, svcRedirectUrl=svcRedirectUrl,
            storageCheck=storageCheck))

    async def setOptions(self, **options: Any) -> Empty:
        """Sets ``applicationProfile``, ``visitorID``, ``device_info``, ``handleSVC`` (never queued)."""
        return cast(Empty, await self._call("setOptions", **options))

    async def setRequestor(self, requestorID: str, serviceProviders: Optional[List[str]] = None,
                           signedRequestorID: Optional[str] = None, secret: Optional[str] = None,
                           publicKey: Optional[str] = None) -> SetRequestorResult:
        """Loads the requestor's configuration; returns ``{status}`` (1 success, 0 failure, with ``statuses``
        saying why: R400 no software statement, CFG400 unknown requestor, CFG404 backend not reachable…).
        ``serviceProviders``: at most 16 backend URLs to ask instead of the daemon's."""
        return cast(SetRequestorResult, await self._call(
            "setRequestor", requestorID=requestorID, serviceProviders=serviceProviders,
            signedRequestorID=signedRequestorID, secret=secret, publicKey=publicKey))

    async def checkAuthentication(self) -> AuthenticationStatus:
        """Returns ``{status, errorCode}`` from the stored profile, without a login."""
        return cast(AuthenticationStatus, await self._call("checkAuthentication"))

    async def getAuthentication(
        self, forceAuthn: Optional[bool] = None, data: Optional[Dict[str, Any]] = None,
        filter: Union[List[str], Dict[str, List[str]], None] = None,
    ) -> AuthenticationStatus:
        """Runs the login flow (picker, login page or second screen); returns ``{status, errorCode}`` at its end.

        ``filter`` narrows the platform's picker (partner SSO): MVPD ids, or ``{"TV_PROVIDERS": [...],
        "FEATURED_TV_PROVIDERS": [...]}``. Waits on the user: no timeout. The delegate's ``displayProviderDialog`` and ``navigateToUrl`` (or the
        REGCODE ``status``) must be answered for it to end."""
        return cast(AuthenticationStatus, await self._call("getAuthentication", forceAuthn=forceAuthn, data=data,
                                                           filter=filter))

    async def setSelectedProvider(self, mvpdId: Optional[str]) -> SelectionResult:
        """Answers the picker: an MVPD ``ID``, or ``None`` to cancel ("Provider not Selected Error")."""
        return cast(SelectionResult, await self.call("setSelectedProvider", {"mvpdId": mvpdId}))

    async def handleExternalURL(self, url: str) -> AuthenticationStatus:
        """Hands over the redirect URL the login/logout page reached; returns the flow's ``{status, errorCode}``."""
        return cast(AuthenticationStatus, await self._call("handleExternalURL", url=url))

    async def getAuthenticationToken(self) -> AuthenticationStatus:
        """Deprecated alias of completing the login flow (see ``handleExternalURL``)."""
        return cast(AuthenticationStatus, await self._call("getAuthenticationToken"))

    async def checkPreauthorizedResources(self, resources: List[str], cache: Optional[bool] = None) -> PreauthorizedResult:
        """Returns ``{resources}``: those of ``resources`` the user may watch (UI decoration only)."""
        return cast(PreauthorizedResult, await self._call("checkPreauthorizedResources", resources=resources, cache=cache))

    async def checkAuthorization(self, resource: str, data: Optional[Dict[str, Any]] = None) -> AuthorizationResult:
        """Authorizes ``resource`` without starting a login; see ``getAuthorization`` for the result."""
        return cast(AuthorizationResult, await self._call("checkAuthorization", resource=resource, data=data))

    async def getAuthorization(self, resource: str, data: Optional[Dict[str, Any]] = None) -> AuthorizationResult:
        """Authorizes ``resource`` (plain id or MRSS), logging in first if needed (then it waits on the user:
        no timeout).

        Returns ``{token, resource}`` (short media token) or ``{resource, errorCode, errorDescription,
        statuses?}``.
        """
        return cast(AuthorizationResult, await self._call("getAuthorization", resource=resource, data=data))

    async def logout(self) -> AuthenticationStatus:
        """Logs out; returns ``{status: 0, errorCode: "User Not Authenticated Error"}`` when the flow ends
        (after the logout page reached the redirect URL, or 10 s without it). A logout the backend did not take, or
        the store could not make, keeps the login: ``{status: 0, errorCode: "Generic Authentication Error",
        statuses: [...]}`` with the reason (Protocol/README.md, Lifecycle 4)."""
        return cast(AuthenticationStatus, await self._call("logout"))

    async def getSelectedProvider(self) -> SelectedProviderResult:
        """Returns ``{mvpd}``: the current MVPD object or ``None``."""
        return cast(SelectedProviderResult, await self._call("getSelectedProvider"))

    async def getMetadata(
        self, opCode: Union[str, int], resource: Optional[str] = None, userMetaKey: Optional[str] = None
    ) -> MetadataResult:
        """Returns ``{metadata, encrypted, key, arguments}``; ``opCode`` is a ``METADATA_*`` name or 0–3."""
        return cast(MetadataResult, await self._call("getMetadata", opCode=opCode, resource=resource,
                                                     userMetaKey=userMetaKey))

    async def discover(self) -> Dict[str, Any]:
        """Returns the daemon's OpenRPC document (``rpc.discover``)."""
        return cast(Dict[str, Any], await self.call("rpc.discover"))

    # ---- the Pythonic API: typed outcomes, exceptions, whole flows (passbridge.outcomes, passbridge.flows) -----
    async def set_requestor(self, requestor_id: str, service_providers: Optional[List[str]] = None) -> None:
        """``setRequestor``; raises ``RequestorFailed`` (``statuses``: R400, CFG400, CFG404…) when it failed."""
        requestor_outcome(await self.setRequestor(requestor_id, service_providers))

    async def check_authentication(self) -> Authentication:
        """The login state from the stored profile (``checkAuthentication``), never a login."""
        return Authentication.from_result(await self.checkAuthentication())

    async def check_authorization(self, resource: str, data: Optional[Dict[str, Any]] = None) -> Authorization:
        """``checkAuthorization`` as a ``MediaToken`` or an ``AuthorizationFailure`` (never raises for a denial)."""
        return authorization_from_result(resource, await self.checkAuthorization(resource, data))

    async def authorize(self, resource: str, *, login: bool = False, data: Optional[Dict[str, Any]] = None,
                        timeout: Optional[float] = _DEFAULT) -> str:
        """The short media token (base64 text) for ``resource``, or an exception saying why not.

        ``login=False`` (default) sends ``checkAuthorization``: no login is started, and the client's timeout
        applies. ``login=True`` sends ``getAuthorization``, which logs in first when needed (the delegate answers
        the dialog and page) and has no timeout unless given; cancelling the task cancels it (``$/cancelRequest``).
        Raises ``NotAuthorized`` (the MVPD's deny: ``mvpd_message``, Z100), ``NotAuthenticated`` (no valid login:
        ``error_code`` "User Not Authenticated Error", N130 profile gone; ``LoginCancelled`` for a cancelled
        login), ``AuthorizationFailed`` (Generic/Internal Authorization Error, Z500…), and as every call
        ``Timeout``, ``RPCError``, ``ConnectionClosed``."""
        method = "getAuthorization" if login else "checkAuthorization"
        params = {k: v for k, v in {"resource": resource, "data": data}.items() if v is not None}
        outcome = authorization_from_result(resource, await self.call(method, params, timeout=timeout))
        if isinstance(outcome, MediaToken):
            return outcome.token
        raise self._closed_error(outcome.error_code) or outcome.error()

    async def preauthorize(self, resources: List[str], cache: Optional[bool] = None) -> Preauthorization:
        """``preauthorize`` (the wire method of that name): which of ``resources`` the user may watch (UI decoration
        only), and why each other one was refused. ``cache=False`` asks the backend even for permits this instance
        already knows (``disableFeatures: ["LOCAL_CACHE"]``). Sends no notification; raises only as every call does
        (``Timeout``, ``RPCError``, ``ConnectionClosed``)."""
        params: Dict[str, Any] = {"resources": resources}
        if cache is False:
            params["disableFeatures"] = ["LOCAL_CACHE"]
        return Preauthorization.from_result(resources, await self.call("preauthorize", params))

    async def metadata(self, op_code: Union[str, int], resource: Optional[str] = None,
                       key: Optional[str] = None) -> Metadata:
        """``getMetadata``: ``op_code`` a ``METADATA_*`` name or 0–3; ``key`` the user attribute for op code 3."""
        return Metadata.from_result(await self.getMetadata(op_code, resource, key))

    async def log_out(self, open_url: Optional[OpenURL] = None, timeout: Optional[float] = None) -> Logout:
        """``logout`` to its end. On a web-view host the daemon opens the logout page: ``open_url(url)`` gets it
        (as in ``login_web``); without ``open_url`` the page is left to the delegate's ``navigateToUrl``, and if nothing
        opens it the daemon answers 10 s later. Raises ``EntitlementError`` ("Generic Authentication Error", with
        the reasons) when the login was kept: the backend did not take the logout, or the store could not make it
        (Protocol/README.md, Lifecycle 4); ``Timeout`` (the logout is then cancelled, its profiles already
        deleted)."""
        seen: List[Event] = []
        result = await run_flow(self, "logout", {}, open_url=open_url, timeout=timeout, seen=seen)
        if result.get("errorCode") == GENERIC_AUTHENTICATION_ERROR:
            raise EntitlementError(GENERIC_AUTHENTICATION_ERROR, result.get("statuses") or (), "logout failed; the login is kept")
        return Logout(tuple(result.get("statuses") or ()), any(e["id"] == "VSA203" for e in seen))

    async def login_web(self, open_url: OpenURL, *, mvpd: ChooseMVPD = None, force: bool = False,
                        timeout: Optional[float] = None) -> Authentication:
        """Logs in on a web-view host (``getAuthentication``) and returns the ``Authentication`` once it ended.

        ``mvpd`` answers the provider dialog (an ``ID``, or a function of the offered ``MVPD`` list, plain or
        async, returning an ``ID`` or ``None`` to cancel); ``None`` leaves it to the delegate's
        ``displayProviderDialog`` (cancelled when there is none). ``open_url(url)`` gets the login page's URL and
        returns (or resolves to) the redirect URL the page reached, which the helper hands to
        ``handleExternalURL``; or ``None`` when the app calls ``handleExternalURL`` itself. ``force`` sends
        ``forceAuthn``. Raises ``NotAuthenticated`` (``LoginCancelled`` for a cancel) with Adobe's reason and
        ``statuses``; ``Timeout`` after ``timeout`` seconds; what ``open_url`` raised; ``Error`` at once when the
        daemon shows a registration code instead (a second-screen host: ``login_second_screen``). On a timeout, an
        exception or the task's cancellation the login is first cancelled in the daemon (``$/cancelRequest``,
        answered before this returns)."""
        return await self._login(open_url=open_url, show_code=None, mvpd=mvpd, force=force, timeout=timeout)

    async def login_second_screen(self, show_code: ShowCode, *, mvpd: ChooseMVPD = None, force: bool = False,
                                  timeout: Optional[float] = None) -> Authentication:
        """Logs in on a second-screen host (``init(webView=False)``): ``show_code(code)`` gets a
        ``RegistrationCode`` (``code``, ``url`` to open on the other device, ``not_after`` epoch ms,
        ``seconds_left``) when the REGCODE status arrives, and again (``update=True``) for each REG100 countdown
        update; plain or async. Ends when the other device completed the activation page (polled by the
        daemon). ``mvpd``, ``force``, ``timeout``, errors and cancellation as in ``login_web``; the code
        running out ends it with ``NotAuthenticated`` (N130)."""
        return await self._login(open_url=None, show_code=show_code, mvpd=mvpd, force=force, timeout=timeout)

    async def _login(self, *, open_url: Optional[OpenURL], show_code: Optional[ShowCode], mvpd: ChooseMVPD,
                     force: bool, timeout: Optional[float]) -> Authentication:
        params: Dict[str, Any] = {"forceAuthn": True} if force else {}
        result = await run_flow(self, "getAuthentication", params, open_url=open_url, show_code=show_code, mvpd=mvpd,
                                timeout=timeout)
        outcome = Authentication.from_result(result)
        if not outcome.authenticated:
            raise self._closed_error(outcome.error_code) or outcome.error()
        return outcome

    def _closed_error(self, error_code: str) -> Optional[ConnectionClosed]:
        """A helper's cancel outcome once the instance closed (its N005 with details INSTANCE_CLOSED, an info status
        and so not among the result's ``statuses``): ``ConnectionClosed`` with that N005 in ``statuses``, not
        ``LoginCancelled``, since the user cancelled nothing. None otherwise."""
        if error_code != PROVIDER_NOT_SELECTED_ERROR or self._closed_by is None:
            return None
        error = ConnectionClosed(f"the login was cancelled because {INSTANCE_CLOSED}")
        error.statuses = (self._closed_by,)
        return error

