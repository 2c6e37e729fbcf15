"""``AccessEnabler``: the blocking client, for scripts and threads without asyncio.

The I/O runs on a private event loop in a background thread. Callbacks (delegate methods, host request
handlers) run on *your* thread, while it waits inside a client call, in the order the daemon sent them and
before the response that ends their operation — the way the SDK calls its delegate on the main thread. A
callback may call the client again (``setSelectedProvider`` from ``displayProviderDialog``): the nested call
keeps delivering callbacks while it waits. Use one ``AccessEnabler`` from one thread.
"""
import asyncio
import inspect
import itertools
import logging
import queue
import threading
from concurrent.futures import Future
from typing import Any, Dict, List, Optional, Union

from .client import AsyncAccessEnabler
from .delegate import EntitlementDelegate, PartnerSSOHost, invoke

log = logging.getLogger("passbridge")


class AccessEnabler:
    """Blocking twin of ``AsyncAccessEnabler``: same methods, same names, same results."""

    def __init__(self, delegate: Optional[EntitlementDelegate] = None) -> None:
        self.delegate = delegate
        self._inbox: "queue.Queue[tuple]" = queue.Queue()
        self._done: Dict[int, tuple] = {}
        self._ids = itertools.count(1)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="passbridge-io", daemon=True)
        self._thread.start()
        self._aae: Optional[AsyncAccessEnabler] = None
        self._handlers: Dict[str, Any] = {}

    @classmethod
    def spawn(cls, *args: str, executable: str = "passbridge", delegate: Optional[EntitlementDelegate] = None,
              stderr: Any = None, env: Optional[Dict[str, str]] = None) -> "AccessEnabler":
        """Starts ``executable --stdio ARGS…`` (see ``AsyncAccessEnabler.spawn``)."""
        self = cls(delegate)
        self._start(AsyncAccessEnabler.spawn(*args, executable=executable, stderr=stderr, env=env))
        return self

    @classmethod
    def connect(cls, path: str, delegate: Optional[EntitlementDelegate] = None) -> "AccessEnabler":
        """Connects to a daemon's Unix socket."""
        self = cls(delegate)
        self._start(AsyncAccessEnabler.connect(path))
        return self

    def _start(self, coro: Any) -> None:
        try:
            self._aae = asyncio.run_coroutine_threadsafe(coro, self._loop).result()
        except BaseException:
            self._stop_loop()
            raise
        self._aae.add_listener(lambda ev: self._inbox.put(("event", ev)))

    @property
    def process(self) -> Optional[asyncio.subprocess.Process]:
        """The spawned daemon process (``None`` for a socket connection)."""
        return self._aae.process if self._aae else None

    def close(self) -> int:
        """Closes the connection; returns the spawned daemon's exit status (0 for a socket)."""
        try:
            assert self._aae is not None
            return asyncio.run_coroutine_threadsafe(self._aae.close(), self._loop).result()
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> "AccessEnabler":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- callbacks ------------------------------------------------------------------------------------------
    def register_request_handler(self, method: str, fn: Any) -> None:
        """Answers daemon→host requests ``method`` with ``fn(params)``, run on your thread (raise ``HostError``
        to refuse)."""
        assert self._aae is not None

        async def relay(params: Any) -> Any:
            fut: Future = Future()
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
        """Delivers callbacks that arrived while no call was waiting, for up to ``timeout`` seconds."""
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

    def _deliver(self, item: tuple) -> None:
        kind = item[0]
        if kind == "event":
            if self.delegate is not None:
                try:
                    out = invoke(self.delegate, item[1])
                except Exception:
                    log.exception("passbridge: delegate %s failed", item[1].name)
                    return
                if inspect.iscoroutine(out):  # the blocking client has no loop of yours to run it on
                    out.close()
                    log.warning("passbridge: delegate %s is a coroutine; AccessEnabler needs plain methods", item[1].name)
        elif kind == "request":
            _, fn, params, fut = item
            try:
                fut.set_result(fn(params))
            except BaseException as e:  # handed to the loop, which answers with the error
                fut.set_exception(e)
        elif kind == "done":
            self._done[item[1]] = item[2:]

    # ---- methods --------------------------------------------------------------------------------------------
    def call(self, method: str, params: Optional[dict] = None, timeout: Optional[float] = None) -> Any:
        """Sends any request and blocks until its response, delivering callbacks meanwhile."""
        assert self._aae is not None, "not connected"
        token = next(self._ids)
        aae = self._aae

        async def run() -> None:
            try:
                result = await aae.call(method, params)
                self._inbox.put(("done", token, result, None))
            except BaseException as e:
                self._inbox.put(("done", token, None, e))

        asyncio.run_coroutine_threadsafe(run(), self._loop)
        while token not in self._done:
            try:
                self._deliver(self._inbox.get(timeout=timeout))
            except queue.Empty:
                raise TimeoutError(f"{method}: no answer within {timeout} s") from None
        result, error = self._done.pop(token)
        if error is not None:
            raise error
        return result

    def _call(self, method: str, **params: Any) -> Any:
        return self.call(method, {k: v for k, v in params.items() if v is not None})

    def init(self, softwareStatement: Optional[str] = None, redirectUrl: Optional[str] = None,
             webView: Optional[bool] = None, partnerSSO: Optional[str] = None) -> dict:
        """See ``AsyncAccessEnabler.init``."""
        return self._call("init", softwareStatement=softwareStatement, redirectUrl=redirectUrl,
                          webView=webView, partnerSSO=partnerSSO)

    def setOptions(self, **options: Any) -> dict:
        """See ``AsyncAccessEnabler.setOptions``."""
        return self._call("setOptions", **options)

    def setRequestor(self, requestorID: str, serviceProviders: Optional[List[str]] = None) -> dict:
        """Returns ``{status}``."""
        return self._call("setRequestor", requestorID=requestorID, serviceProviders=serviceProviders)

    def checkAuthentication(self) -> dict:
        """Returns ``{status, errorCode}``."""
        return self._call("checkAuthentication")

    def getAuthentication(self, forceAuthn: Optional[bool] = None, data: Optional[dict] = None,
                          filter: Optional[List[str]] = None) -> dict:
        """Runs the login flow; returns ``{status, errorCode}`` at its end."""
        return self._call("getAuthentication", forceAuthn=forceAuthn, data=data, filter=filter)

    def setSelectedProvider(self, mvpdId: Optional[str]) -> dict:
        """An MVPD ``ID``, or ``None`` to cancel."""
        return self.call("setSelectedProvider", {"mvpdId": mvpdId})

    def handleExternalURL(self, url: str) -> dict:
        """Completes the flow that reached the redirect URL; returns its ``{status, errorCode}``."""
        return self._call("handleExternalURL", url=url)

    def getAuthenticationToken(self) -> dict:
        """Deprecated alias of completing the login flow."""
        return self._call("getAuthenticationToken")

    def checkPreauthorizedResources(self, resources: List[str], cache: Optional[bool] = None) -> dict:
        """Returns ``{resources}``."""
        return self._call("checkPreauthorizedResources", resources=resources, cache=cache)

    def checkAuthorization(self, resource: str, data: Optional[dict] = None) -> dict:
        """Returns ``{token, resource}`` or ``{resource, errorCode, errorDescription}``."""
        return self._call("checkAuthorization", resource=resource, data=data)

    def getAuthorization(self, resource: str, data: Optional[dict] = None) -> dict:
        """Returns ``{token, resource}`` or ``{resource, errorCode, errorDescription}``."""
        return self._call("getAuthorization", resource=resource, data=data)

    def logout(self) -> dict:
        """Returns ``{status: 0, errorCode: "User Not Authenticated Error"}``."""
        return self._call("logout")

    def getSelectedProvider(self) -> dict:
        """Returns ``{mvpd}``."""
        return self._call("getSelectedProvider")

    def getMetadata(self, opCode: Union[str, int], resource: Optional[str] = None,
                    userMetaKey: Optional[str] = None) -> dict:
        """Returns ``{metadata, encrypted, key, arguments}``."""
        return self._call("getMetadata", opCode=opCode, resource=resource, userMetaKey=userMetaKey)

    def discover(self) -> dict:
        """Returns the OpenRPC document."""
        return self.call("rpc.discover")

