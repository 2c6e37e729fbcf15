"""The Pythonic helpers' flows over an ``AsyncAccessEnabler``: a call that waits on the user (getAuthentication,
logout) driven to its end, the helper answering the provider dialog, the login or logout page and the second
screen's code itself.

Each flow watches the notifications of its call (Protocol/README.md "Ordering rules": they come before the
response that ends it) and ends with that response. A timeout, an exception of a host callback, or the
cancellation of the awaiting task cancels the call with ``$/cancelRequest`` (the daemon ends the flow as a cancel
at the dialog does and answers -32800) and waits for that answer, so no task is left behind.
"""
import asyncio
import inspect
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Optional, Set, Union

from .delegate import Event, handles
from .errors import ConnectionClosed, Error, Timeout
from .outcomes import RegistrationCode
from .results import MVPD
from .rpc import wait_through_cancellation

if TYPE_CHECKING:
    from .client import AsyncAccessEnabler

#: ``open_url(url)``: opens a login or logout page; returns (or resolves to) the redirect URL the page reached,
#: which the helper hands to ``handleExternalURL``, or ``None`` when the app hands it over itself.
OpenURL = Callable[[str], Union[Optional[str], Awaitable[Optional[str]]]]
#: ``show_code(code)``: shows the second screen's code; called again for each countdown update.
ShowCode = Callable[[RegistrationCode], Union[None, Awaitable[None]]]
#: The MVPD to pick at the provider dialog: its ID, or a function of the offered MVPDs returning one (``None``
#: cancels the login).
ChooseMVPD = Union[str, Callable[[List[MVPD]], Union[Optional[str], Awaitable[Optional[str]]]], None]


async def _settle(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _page(ae: "AsyncAccessEnabler", open_url: OpenURL, url: str) -> None:
    reached = await _settle(open_url(url))
    if reached is not None:
        await ae.handleExternalURL(str(reached))


async def _end(*tasks: "Optional[asyncio.Future[Any]]") -> None:
    """Cancels each of ``tasks`` still running, in order, and waits until each has ended, even when the flow itself
    is cancelled meanwhile (the blocking client's Ctrl-C cancels twice): a cancelled call waits for the daemon's
    answer to its ``$/cancelRequest`` (``CANCEL_GRACE`` seconds at most), and that wait is not cut short. A
    cancellation that came meanwhile is raised once all have ended."""
    cancelled = False
    for task in tasks:
        if task is None:
            continue
        if not task.done():
            task.cancel()
        cancelled = await wait_through_cancellation(task) or cancelled
        if not task.cancelled():
            task.exception()  # retrieved: the flow reports its own outcome
    if cancelled:
        raise asyncio.CancelledError


async def run_flow(ae: "AsyncAccessEnabler", method: str, params: Dict[str, Any], *,
                   open_url: Optional[OpenURL] = None, show_code: Optional[ShowCode] = None,
                   mvpd: ChooseMVPD = None, timeout: Optional[float] = None,
                   seen: Optional[List[Event]] = None) -> Any:
    """Sends ``method`` (getAuthentication or logout) and drives it to its response, which it returns.

    The provider dialog is answered with ``mvpd`` (left to the delegate when ``None`` and the delegate has a
    ``displayProviderDialog``, else cancelled); a page (``navigateToUrl``) goes to ``open_url`` as a task (without
    ``open_url``, a logout page or one the delegate's ``navigateToUrl`` handles is left alone); REGCODE
    and REG100 statuses go to ``show_code``. ``seen`` collects the ``status`` notifications of the flow. Raises
    ``Timeout`` after ``timeout`` seconds, whatever ``open_url``/``show_code`` raised, or ``Error`` when the
    daemon opens a page with no ``open_url`` to show it, or shows a registration code to a flow that has only
    ``open_url``; in each case, and on cancellation, the call is cancelled first (``$/cancelRequest``)."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    picker_to_delegate = mvpd is None and handles(ae.delegate, "displayProviderDialog")
    page_elsewhere = open_url is None and (method == "logout" or handles(ae.delegate, "navigateToUrl"))
    taken: Set[str] = ((set() if picker_to_delegate else {"displayProviderDialog"})
                       | (set() if page_elsewhere else {"navigateToUrl"}))
    stream = ae.events("displayProviderDialog", "navigateToUrl", "status")
    ae._helper_steps.append(taken)
    request = asyncio.ensure_future(ae.call(method, params, timeout=None))
    getter: "Optional[asyncio.Future[Event]]" = None
    page: "Optional[asyncio.Future[None]]" = None
    code: Optional[RegistrationCode] = None

    async def within(step: Awaitable[Any]) -> Any:
        """``step`` (answering the dialog, showing the code), still bounded by the flow's deadline."""
        left = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            return await asyncio.wait_for(step, left)
        except asyncio.TimeoutError:
            raise Timeout(f"{method}: the user did not finish within {timeout} s") from None

    try:
        while True:
            if getter is None:
                getter = asyncio.ensure_future(stream.next())
            waiting: "Set[asyncio.Future[Any]]" = {request, getter} | ({page} if page is not None else set())
            left = None if deadline is None else max(0.0, deadline - loop.time())
            done, _ = await asyncio.wait(waiting, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                raise Timeout(f"{method}: the user did not finish within {timeout} s")
            if page is not None and page in done:
                finished, page = page, None
                finished.result()  # raises what open_url raised
            if getter in done:
                if isinstance(getter.exception(), ConnectionClosed):
                    # The events ended with the connection: the call's own failure says why (DaemonExited when a
                    # spawned daemon died), once the client knows it.
                    getter = None
                    await asyncio.wait([request])
                    return request.result()
                event, getter = getter.result(), None
                if event.name == "displayProviderDialog" and not picker_to_delegate:
                    mvpds: List[MVPD] = list(event["mvpds"] or [])
                    choice = mvpd if isinstance(mvpd, str) or mvpd is None else await within(_settle(mvpd(mvpds)))
                    await within(ae.setSelectedProvider(choice))
                elif event.name == "navigateToUrl" and not page_elsewhere:
                    if open_url is None:
                        raise Error(f"{method}: the daemon opened a page ({str(event['url']).split('?')[0]}) and "
                                    "nothing shows it (a second-screen host sends init(webView=False))")
                    await _end(page)
                    page = asyncio.ensure_future(_page(ae, open_url, str(event["url"])))
                elif event.name == "status":
                    if seen is not None:
                        seen.append(event)
                    if event["id"] == "REGCODE" and show_code is None and open_url is not None:
                        raise Error(f"{method}: the daemon shows a registration code for another device and nothing "
                                    "shows it (a web-view host leaves init's webView at true; a second-screen host "
                                    "logs in with login_second_screen)")
                    if show_code is not None and event["id"] in ("REGCODE", "REG100"):
                        now = time.time() * 1000
                        if event["id"] == "REGCODE" or code is None:
                            code = RegistrationCode.from_status(event.params, now)
                            if event["id"] == "REG100":
                                code = code.updated(event.params)
                        else:
                            code = code.updated(event.params)
                        await within(_settle(show_code(code)))
                continue  # notifications first: the response that ends the flow comes after them
            if request in done:
                if page is not None and not page.done():
                    await asyncio.wait([page], timeout=5)  # handleExternalURL may answer just after the flow
                return request.result()
    finally:
        try:
            await _end(getter, page, request)  # the request: $/cancelRequest if unanswered, and its answer awaited
        finally:
            # Only now: a dialog or page the daemon sent before it read the $/cancelRequest is still the flow's,
            # not the delegate's.
            ae._helper_steps.remove(taken)
            stream.close()
