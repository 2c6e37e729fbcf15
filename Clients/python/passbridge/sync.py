"""``AccessEnabler``: the blocking client, for scripts and threads without asyncio.

The I/O runs on a private event loop in a background thread. Callbacks (delegate methods, host request
handlers) run on *your* thread, while it waits inside a client call, in the order the daemon sent them and
before the response that ends their operation — the way the SDK calls its delegate on the main thread. A
callback may call the client again (``setSelectedProvider`` from ``displayProviderDialog``): the nested call
keeps delivering callbacks while it waits. Use one ``AccessEnabler`` from one thread: a call from another thread
while one waits raises ``Error`` at once (two threads reading one inbox took each other's answers and hung).

Results, exceptions and timeouts are those of ``AsyncAccessEnabler``: calls that do not wait on the user time
out after the client's ``timeout`` (default 30 s) with ``Timeout``; ``getAuthentication``, ``getAuthorization``
and ``logout`` wait as long as the user takes. After ``close()`` every call raises ``ConnectionClosed`` at once.
A client still open when the interpreter exits is closed then (a spawned daemon finishes and exits with it).
"""
import asyncio
import atexit
import inspect
import itertools
import logging
import queue
import threading
import weakref
from concurrent.futures import Future, InvalidStateError
from typing import Any, Callable, Coroutine, Dict, List, Optional, Set, Tuple, Union, cast

from .client import _DEFAULT, DEFAULT_TIMEOUT, AsyncAccessEnabler
from .delegate import USER_STEPS, EntitlementDelegate, Event, PartnerSSOHost, handles, invoke
from .errors import ConnectionClosed, Error
from .flows import ChooseMVPD, OpenURL, ShowCode
from .outcomes import Authentication, Authorization, Logout, Metadata, Preauthorization
from .results import (AuthenticationStatus, AuthorizationResult, Empty, MetadataResult, PreauthorizedResult,
                      SelectedProviderResult, SelectionResult, SetRequestorResult)

log = logging.getLogger("passbridge")

#: What the I/O thread hands to the caller's thread: ("event", Event), ("request", fn, params, future) or
#: ("done", token, result, error).
_Item = Tuple[Any, ...]

#: Clients not closed yet, closed at interpreter exit.
_open: "weakref.WeakSet[AccessEnabler]" = weakref.WeakSet()


@atexit.register
def _close_open_clients() -> None:
    for client in list(_open):
        try:
            client.close()
        except Exception:  # noqa: BLE001 - the interpreter is exiting; nothing left to report to
            pass


class AccessEnabler:
    """Blocking twin of ``AsyncAccessEnabler``: same methods, same names, same results."""

    def __init__(self, delegate: Optional[EntitlementDelegate] = None, timeout: Optional[float] = DEFAULT_TIMEOUT) -> None:
        self.delegate = delegate
        self.timeout = timeout
        self._inbox: "queue.Queue[_Item]" = queue.Queue()
        self._done: Dict[int, Tuple[Any, Optional[BaseException]]] = {}
        # Calls given up on by a second exception while their cancellation was awaited: their end is dropped.
        self._abandoned: Set[int] = set()
        self._ids = itertools.count(1)
        # The thread inside a call (and how deep: a callback may call again), or None: the inbox has one reader.
        self._caller: Optional[threading.Thread] = None
        self._depth = 0
        self._caller_lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="passbridge-io", daemon=True)
        self._thread.start()
        self._aae: Optional[AsyncAccessEnabler] = None
        self._close_code: Optional[int] = None
        if delegate is not None and getattr(delegate, "client", None) is None:
            try:
                delegate.client = self
            except AttributeError:  # a delegate with __slots__ or a read-only ``client``: left as it is
                pass

    @classmethod
    def spawn(cls, *args: str, executable: Optional[str] = None, delegate: Optional[EntitlementDelegate] = None,
              stderr: Any = None, env: Optional[Dict[str, str]] = None,
              timeout: Optional[float] = DEFAULT_TIMEOUT) -> "AccessEnabler":
        """Starts ``executable --stdio ARGS…`` (see ``AsyncAccessEnabler.spawn``: without ``executable``,
        ``$PASSBRIDGE``, the bundled daemon or ``passbridge`` in ``PATH``; none raises ``DaemonNotFound``)."""
        self = cls(delegate, timeout)
        self._start(AsyncAccessEnabler.spawn(*args, executable=executable, stderr=stderr, env=env, timeout=timeout))
        return self

    @classmethod
    def connect(cls, path: str, delegate: Optional[EntitlementDelegate] = None,
                timeout: Optional[float] = DEFAULT_TIMEOUT) -> "AccessEnabler":
        """Connects to a daemon's Unix socket; a missing or refused socket raises an ``OSError`` naming ``path``."""
        self = cls(delegate, timeout)
        self._start(AsyncAccessEnabler.connect(path, timeout=timeout))
        return self

    def _start(self, coro: Coroutine[Any, Any, AsyncAccessEnabler]) -> None:
        try:
            self._aae = asyncio.run_coroutine_threadsafe(coro, self._loop).result()
        except BaseException:
            self._close_code = -1
            self._stop_loop()
            raise
        self._aae.add_listener(lambda ev: self._inbox.put(("event", ev)))
        _open.add(self)

    @property
    def process(self) -> Optional[asyncio.subprocess.Process]:
        """The spawned daemon process (``None`` for a socket connection)."""
        return self._aae.process if self._aae else None

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._close_code is not None

    def close(self) -> int:
        """Closes the connection; returns the spawned daemon's exit status (0 for a socket). Calling it again
        returns the same."""
        if self._close_code is not None:
            return self._close_code
        assert self._aae is not None
        _open.discard(self)
        try:
            self._close_code = asyncio.run_coroutine_threadsafe(self._aae.close(), self._loop).result()
        finally:
            if self._close_code is None:
                self._close_code = -1
            self._stop_loop()
        return self._close_code

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> "AccessEnabler":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- callbacks ------------------------------------------------------------------------------------------
    def register_request_handler(self, method: str, fn: Callable[[Any], Any]) -> None:
        """Answers daemon→host requests ``method`` with ``fn(params)``, run on your thread (raise ``HostError``
        to refuse)."""
        assert self._aae is not None

        async def relay(params: Any) -> Any:
            fut: "Future[Any]" = Future()
            self._inbox.put(("request", fn, params, fut))
            return await asyncio.wrap_future(fut)

        self._aae.register_request_handler(method, relay)

    def register_partner_sso(self, host: PartnerSSOHost) -> None:
        """Registers both ``partnerSSO/*`` requests on ``host``."""
        self.register_request_handler(
            "partnerSSO/checkAccessStatus", lambda p: host.checkAccessStatus(bool((p or {}).get("prompt")))
        )
        self.register_request_handler("partnerSSO/requestAccountMetadata", lambda p: host.requestAccountMetadata(p or {}))

    def process_events(self, timeout: float = 0.0) -> None:
        """Delivers callbacks that arrived while no call was waiting, for up to ``timeout`` seconds. Raises
        ``Error`` from a thread other than the one waiting in a call, whose answer it could take."""
        with self._caller_lock:
            self._refuse_other_thread()
        try:
            item = self._inbox.get(timeout=timeout) if timeout > 0 else self._inbox.get_nowait()
        except queue.Empty:
            return
        self._deliver(item)
        while True:
            try:
                self._deliver(self._inbox.get_nowait())
            except queue.Empty:
                return

    def _deliver(self, item: _Item) -> None:
        kind = item[0]
        if kind == "event":
            event: Event = item[1]
            if self._aae is not None and self._aae.helper_answers(event.name):
                return  # a Pythonic helper answers this step itself
            if event.name in USER_STEPS and not handles(self.delegate, event.name):
                log.warning("%s arrived but the delegate has no %s method", event.name, event.name)
                self._abandon_login(event.name)
            if self.delegate is not None:
                try:
                    out = invoke(self.delegate, event)
                except Exception:
                    log.exception("passbridge: delegate %s failed", event.name)
                    self._abandon_login(event.name)
                    return
                if inspect.iscoroutine(out):  # the blocking client has no loop of yours to run it on
                    out.close()
                    log.warning("passbridge: delegate %s is a coroutine; AccessEnabler needs plain methods", event.name)
        elif kind == "request":
            _, fn, params, fut = item
            try:
                outcome = fn(params)
                settle: Callable[[], None] = lambda: fut.set_result(outcome)  # noqa: E731
            except Exception as e:  # handed to the loop, which answers with the error
                failure = e  # kept: Python unbinds `e` at the end of this block, before the loop runs `settle`
                settle = lambda: fut.set_exception(failure)  # noqa: E731
            except BaseException:  # Ctrl-C or exit on your thread: the call being waited on is cancelled (_wait)
                fut.cancel()
                raise
            try:
                settle()
            except InvalidStateError:
                pass  # cancelled meanwhile (the call's timeout): nobody waits for this answer any more
        elif kind == "done":
            if item[1] in self._abandoned:
                self._abandoned.discard(item[1])
            else:
                self._done[item[1]] = (item[2], item[3])

    def _abandon_login(self, step: str) -> None:
        """``AsyncAccessEnabler.abandon_login`` on the I/O thread (not waited for: the call being waited on ends)."""
        aae = self._aae
        if aae is not None:
            self._loop.call_soon_threadsafe(aae.abandon_login, step)

    # ---- methods --------------------------------------------------------------------------------------------
    def call(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = _DEFAULT) -> Any:
        """Sends any request and blocks until its response, delivering callbacks meanwhile.

        ``timeout`` as in ``AsyncAccessEnabler.call``. Raises ``RPCError``, ``ConnectionClosed`` or ``Timeout``."""
        aae = self._client()
        return self._wait(aae.call(method, params, timeout=timeout))

    def _client(self) -> AsyncAccessEnabler:
        if self._close_code is not None or self._aae is None:
            raise ConnectionClosed("connection closed")
        return self._aae

    def _wait(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Runs ``coro`` on the I/O loop and blocks until it ends, delivering callbacks meanwhile. An exception
        raised here meanwhile (``KeyboardInterrupt`` from Ctrl-C, or one a callback let through) cancels it — a
        call waiting on the user with ``$/cancelRequest`` — and is raised once it has ended."""
        with self._caller_lock:
            try:
                self._refuse_other_thread()
            except Error:
                coro.close()
                raise
            self._caller, self._depth = threading.current_thread(), self._depth + 1
        try:
            return self._wait_alone(coro)
        finally:
            with self._caller_lock:
                self._depth -= 1
                if self._depth == 0:
                    self._caller = None

    def _refuse_other_thread(self) -> None:
        """Raises ``Error`` when another thread waits in a call: the inbox has one reader, and a second one takes its
        answers (both hung). Called under ``_caller_lock``."""
        if self._caller is not None and self._caller is not threading.current_thread():
            raise Error(f"this AccessEnabler is waiting on a call of thread {self._caller.name!r}: one AccessEnabler "
                        "serves one thread (give each thread its own, or use AsyncAccessEnabler)")

    def _wait_alone(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """`_wait` on the one thread allowed."""
        token = next(self._ids)

        async def run() -> None:
            try:
                result = await coro
                self._inbox.put(("done", token, result, None))
            except BaseException as e:
                self._inbox.put(("done", token, None, e))

        running = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            while token not in self._done:
                self._deliver(self._inbox.get())
        except BaseException:
            running.cancel()
            try:
                while token not in self._done:
                    self._deliver(self._inbox.get())
            except BaseException:  # a second Ctrl-C (or callback) while waiting: raised at once, the call's end dropped
                self._abandoned.add(token)
                raise
            self._done.pop(token)
            raise
        result, error = self._done.pop(token)
        if error is not None:
            raise error
        return result

    def _on_my_thread(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` as an async function of the I/O loop that runs it on the thread waiting in a call."""

        async def relayed(*args: Any) -> Any:
            fut: "Future[Any]" = Future()
            self._inbox.put(("request", lambda _: fn(*args), None, fut))
            return await asyncio.wrap_future(fut)

        return relayed

    def _call(self, method: str, **params: Any) -> Any:
        return self.call(method, {k: v for k, v in params.items() if v is not None})

    def init(self, softwareStatement: Optional[str] = None, redirectUrl: Optional[str] = None,
             webView: Optional[bool] = None, partnerSSO: Optional[str] = None, deviceIdentifier: Optional[str] = None,
             deviceInfo: Optional[str] = None, forwardedFor: Optional[str] = None, subjectToken: Optional[str] = None,
             serviceToken: Optional[str] = None, svcMVPDs: Optional[List[str]] = None,
             svcRedirectUrl: Optional[str] = None, storageCheck: Optional[str] = None) -> Empty:
        """Configures this instance (see ``AsyncAccessEnabler.init``); returns ``{}``."""
        return cast(Empty, self._call(
            "init", softwareStatement=softwareStatement, redirectUrl=redirectUrl, webView=webView, partnerSSO=partnerSSO,
            deviceIdentifier=deviceIdentifier, deviceInfo=deviceInfo, forwardedFor=forwardedFor,
            subjectToken=subjectToken, serviceToken=serviceToken, svcMVPDs=svcMVPDs, svcRedirectUrl=svcRedirectUrl,
            storageCheck=storageCheck))

    def setOptions(self, **options: Any) -> Empty:
        """Sets ``applicationProfile``, ``visitorID``, ``device_info``, ``handleSVC``; returns ``{}``."""
        return cast(Empty, self._call("setOptions", **options))

    def setRequestor(self, requestorID: str, serviceProviders: Optional[List[str]] = None,
                     signedRequestorID: Optional[str] = None, secret: Optional[str] = None,
                     publicKey: Optional[str] = None) -> SetRequestorResult:
        """Returns ``{status}``: 1 success, 0 failure with ``statuses`` saying why (R400, CFG400, CFG404…); see
        ``AsyncAccessEnabler.setRequestor``."""
        return cast(SetRequestorResult, self._call(
            "setRequestor", requestorID=requestorID, serviceProviders=serviceProviders,
            signedRequestorID=signedRequestorID, secret=secret, publicKey=publicKey))

    def checkAuthentication(self) -> AuthenticationStatus:
        """Returns ``{status, errorCode}`` from the stored profile."""
        return cast(AuthenticationStatus, self._call("checkAuthentication"))

    def getAuthentication(self, forceAuthn: Optional[bool] = None, data: Optional[Dict[str, Any]] = None,
                          filter: Union[List[str], Dict[str, List[str]], None] = None) -> AuthenticationStatus:
        """Runs the login flow; returns ``{status, errorCode}`` at its end. Waits on the user: no timeout."""
        return cast(AuthenticationStatus, self._call("getAuthentication", forceAuthn=forceAuthn, data=data,
                                                     filter=filter))

    def setSelectedProvider(self, mvpdId: Optional[str]) -> SelectionResult:
        """An MVPD ``ID``, or ``None`` to cancel; ``{}`` once the login started, else the flow's status."""
        return cast(SelectionResult, self.call("setSelectedProvider", {"mvpdId": mvpdId}))

    def handleExternalURL(self, url: str) -> AuthenticationStatus:
        """Completes the flow that reached the redirect URL; returns its ``{status, errorCode}``."""
        return cast(AuthenticationStatus, self._call("handleExternalURL", url=url))

    def getAuthenticationToken(self) -> AuthenticationStatus:
        """Deprecated alias of completing the login flow."""
        return cast(AuthenticationStatus, self._call("getAuthenticationToken"))

    def checkPreauthorizedResources(self, resources: List[str], cache: Optional[bool] = None) -> PreauthorizedResult:
        """Returns ``{resources}``: those the user may watch."""
        return cast(PreauthorizedResult, self._call("checkPreauthorizedResources", resources=resources, cache=cache))

    def checkAuthorization(self, resource: str, data: Optional[Dict[str, Any]] = None) -> AuthorizationResult:
        """Returns ``{token, resource}`` or ``{resource, errorCode, errorDescription, statuses?}``."""
        return cast(AuthorizationResult, self._call("checkAuthorization", resource=resource, data=data))

    def getAuthorization(self, resource: str, data: Optional[Dict[str, Any]] = None) -> AuthorizationResult:
        """As ``checkAuthorization``, logging in first when needed (then it waits on the user: no timeout)."""
        return cast(AuthorizationResult, self._call("getAuthorization", resource=resource, data=data))

    def logout(self) -> AuthenticationStatus:
        """Returns ``{status: 0, errorCode: "User Not Authenticated Error"}`` when the logout flow ends; ``errorCode``
        "Generic Authentication Error" with ``statuses`` when the login was kept (Protocol/README.md, Lifecycle 4)."""
        return cast(AuthenticationStatus, self._call("logout"))

    def getSelectedProvider(self) -> SelectedProviderResult:
        """Returns ``{mvpd}``: the current MVPD object or ``None``."""
        return cast(SelectedProviderResult, self._call("getSelectedProvider"))

    def getMetadata(self, opCode: Union[str, int], resource: Optional[str] = None,
                    userMetaKey: Optional[str] = None) -> MetadataResult:
        """Returns ``{metadata, encrypted, key, arguments}``; ``opCode`` is a ``METADATA_*`` name or 0–3."""
        return cast(MetadataResult, self._call("getMetadata", opCode=opCode, resource=resource, userMetaKey=userMetaKey))

    def discover(self) -> Dict[str, Any]:
        """Returns the daemon's OpenRPC document (``rpc.discover``)."""
        return cast(Dict[str, Any], self.call("rpc.discover"))

    # ---- the Pythonic API (see AsyncAccessEnabler): callbacks you pass run on your thread ----------------------
    def set_requestor(self, requestor_id: str, service_providers: Optional[List[str]] = None) -> None:
        """``setRequestor``; raises ``RequestorFailed`` (``statuses`` say why) when it failed."""
        self._wait(self._client().set_requestor(requestor_id, service_providers))

    def check_authentication(self) -> Authentication:
        """The login state from the stored profile, never a login."""
        return cast(Authentication, self._wait(self._client().check_authentication()))

    def check_authorization(self, resource: str, data: Optional[Dict[str, Any]] = None) -> Authorization:
        """A ``MediaToken`` or an ``AuthorizationFailure`` (``checkAuthorization``)."""
        return cast(Authorization, self._wait(self._client().check_authorization(resource, data)))

    def authorize(self, resource: str, *, login: bool = False, data: Optional[Dict[str, Any]] = None,
                  timeout: Optional[float] = _DEFAULT) -> str:
        """The media token for ``resource``; raises ``NotAuthorized``, ``NotAuthenticated``,
        ``AuthorizationFailed`` (see ``AsyncAccessEnabler.authorize``)."""
        return cast(str, self._wait(self._client().authorize(resource, login=login, data=data, timeout=timeout)))

    def preauthorize(self, resources: List[str], cache: Optional[bool] = None) -> Preauthorization:
        """Which of ``resources`` the user may watch, and why not the others (see ``AsyncAccessEnabler.preauthorize``)."""
        return cast(Preauthorization, self._wait(self._client().preauthorize(resources, cache)))

    def metadata(self, op_code: Union[str, int], resource: Optional[str] = None, key: Optional[str] = None) -> Metadata:
        """``getMetadata`` as a ``Metadata``."""
        return cast(Metadata, self._wait(self._client().metadata(op_code, resource, key)))

    def log_out(self, open_url: Optional[OpenURL] = None, timeout: Optional[float] = None) -> Logout:
        """``logout`` to its end (``open_url`` gets the logout page, on your thread)."""
        relayed = self._on_my_thread(open_url) if open_url is not None else None
        return cast(Logout, self._wait(self._client().log_out(relayed, timeout)))

    def login_web(self, open_url: OpenURL, *, mvpd: ChooseMVPD = None, force: bool = False,
                  timeout: Optional[float] = None) -> Authentication:
        """``AsyncAccessEnabler.login_web``, ``open_url`` (and a function ``mvpd``) running on your thread."""
        choose = self._on_my_thread(mvpd) if callable(mvpd) else mvpd
        return cast(Authentication, self._wait(self._client().login_web(
            self._on_my_thread(open_url), mvpd=choose, force=force, timeout=timeout)))

    def login_second_screen(self, show_code: ShowCode, *, mvpd: ChooseMVPD = None, force: bool = False,
                            timeout: Optional[float] = None) -> Authentication:
        """``AsyncAccessEnabler.login_second_screen``, ``show_code`` running on your thread."""
        choose = self._on_my_thread(mvpd) if callable(mvpd) else mvpd
        return cast(Authentication, self._wait(self._client().login_second_screen(
            self._on_my_thread(show_code), mvpd=choose, force=force, timeout=timeout)))
