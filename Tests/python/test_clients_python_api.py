"""The Python client's Pythonic API end to end: the real daemon over stdio against the emulator's default
configuration (Sources/PassEmulator/DefaultConfig.swift: ch1 permitted, ch2 denied with the MVPD's message).

Typed outcomes, `authorize` and its exceptions, `login_web` (the scripted browser of Clients/python/examples as
the web view), `login_second_screen` (a phone completing the activation page), `log_out`, `set_requestor`, the
delegate's `client`, and the cancellation of a login by its task or its timeout (`$/cancelRequest`).
"""
import asyncio
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any, List, Optional

import pytest

from clients_support import emulator_url, statement  # noqa: F401  (fixture)

import passbridge  # noqa: E402
from browser import Browser  # noqa: E402

MVPD, USER, PASSWORD = "MockMVPD", "demo", "demo"
DENIED = 'Your subscription does not include "Channel 2".'


def flags(emulator_url: str, tmp_path: pathlib.Path, *extra: str) -> List[str]:
    return ["--backend", emulator_url, "--state-dir", str(tmp_path / "state"), "--software-statement", statement(),
            "--activation-url", emulator_url + "/activate", *extra]


async def spawn(bin_dir: pathlib.Path, emulator_url: str, tmp_path: pathlib.Path,
                delegate: Optional[passbridge.EntitlementDelegate] = None) -> passbridge.AsyncAccessEnabler:
    return await passbridge.AsyncAccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                                     stderr=subprocess.DEVNULL, delegate=delegate)


def web_view(url: str) -> Optional[str]:
    """The login or logout page, filled as demo/demo; the redirect URL it reached."""
    return Browser(log=lambda line: None).run(url, {"username": USER, "password": PASSWORD}.get,
                                               passbridge.ADOBEPASS_REDIRECT_URL)


def phone(code: passbridge.RegistrationCode) -> None:
    """The other device: opens the code's page and completes it."""
    def fill(name: str) -> Optional[str]:
        n = name.lower()
        if "code" in n:
            return code.code
        if "mvpd" in n or "provider" in n or n == "idp":
            return MVPD
        return USER if "user" in n else PASSWORD if "pass" in n else None

    Browser(log=lambda line: None).run(code.url, fill)


class Watcher(passbridge.EntitlementDelegate):
    """A delegate that only records; its picker and page methods must not run while a helper answers them."""

    def __init__(self) -> None:
        self.steps: List[str] = []
        self.metadata: List[str] = []

    def displayProviderDialog(self, mvpds: Any) -> None:
        self.steps.append("displayProviderDialog")

    def navigateToUrl(self, url: str, useSVC: Any) -> None:
        self.steps.append("navigateToUrl")

    def setMetadataStatus(self, metadata: Any, encrypted: bool, key: int, arguments: Any, expires: Optional[int] = None) -> None:
        self.metadata.append(f"{key} {metadata} {expires}")


class SDKOnlyWatcher(passbridge.EntitlementDelegate):
    """A delegate written with the SDK's params alone: the daemon's extra `expires` must not break it."""

    def __init__(self) -> None:
        self.metadata: List[Any] = []

    def setMetadataStatus(self, metadata: Any, encrypted: bool, key: int, arguments: Any) -> None:
        self.metadata.append((key, metadata))


def test_web_session_with_typed_outcomes_and_exceptions(bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> Any:
        watcher = Watcher()
        async with await spawn(bin_dir, emulator_url, tmp_path, watcher) as ae:
            assert watcher.client is ae
            await ae.set_requestor("REF")
            before = await ae.check_authentication()
            login = await ae.login_web(lambda url: asyncio.to_thread(web_view, url), mvpd=MVPD, timeout=60)
            token = await ae.authorize("ch1")
            with pytest.raises(passbridge.NotAuthorized) as denied:
                await ae.authorize("ch2")
            failure = await ae.check_authorization("ch2")
            granted = await ae.check_authorization("ch1")
            pre = await ae.preauthorize(["ch1", "ch2"])
            expiry = await ae.metadata(passbridge.METADATA_AUTHENTICATION)
            zip_code = await ae.metadata(passbridge.METADATA_USER_META, key="zip")
            pages: List[str] = []

            async def logout_page(url: str) -> Optional[str]:
                pages.append(url)
                return await asyncio.to_thread(web_view, url)

            logout = await ae.log_out(logout_page, timeout=60)
            with pytest.raises(passbridge.NotAuthenticated) as unauthenticated:
                await ae.authorize("ch1")
            after = await ae.check_authentication()
            return (watcher, before, login, token, denied.value, failure, granted, pre, expiry, zip_code, pages, logout,
                    unauthenticated.value, after)

    (watcher, before, login, token, denied, failure, granted, pre, expiry, zip_code, pages, logout, unauthenticated,
     after) = asyncio.run(main())
    assert before == passbridge.Authentication(False, passbridge.USER_NOT_AUTHENTICATED_ERROR)
    assert login == passbridge.Authentication(True, "")
    assert watcher.steps == []  # the helper answered the picker and the pages
    assert isinstance(token, str) and len(token) > 100
    assert isinstance(denied, passbridge.EntitlementError) and not isinstance(denied, passbridge.NotAuthenticated)
    assert (denied.resource, denied.error_code, denied.mvpd_message) == ("ch2", passbridge.USER_NOT_AUTHORIZED_ERROR, DENIED)
    assert [s["id"] for s in denied.statuses] == ["Z100"] and denied.statuses[0]["details"] == DENIED
    assert denied.reasons[0].startswith("Z100 The MVPD has returned a \"Deny\" decision")
    assert failure == passbridge.AuthorizationFailure("ch2", passbridge.USER_NOT_AUTHORIZED_ERROR, DENIED,
                                                      tuple(denied.statuses))
    assert isinstance(granted, passbridge.MediaToken) and granted.resource == "ch1"
    assert (pre.authorized, pre.denied, pre.failure) == (("ch1",), ("ch2",), None)
    # The wire's preauthorize (not checkPreauthorizedResources): each refusal says why.
    assert list(pre.errors) == ["ch2"] and pre.errors["ch2"]["code"] == "preauthorization_denied_by_mvpd"
    assert pre.errors["ch2"]["details"] == DENIED
    assert expiry.key == 0 and expiry.value > time.time() * 1000
    # The delegate that declares `expires` gets it beside the SDK's date string.
    told = [line for line in watcher.metadata if line.startswith("0 ")]
    assert told and told[0].endswith(f" GMT +0000 {expiry.value}"), watcher.metadata
    assert (zip_code.key, zip_code.encrypted, zip_code.arguments["userMetaKey"]) == (3, True, "zip")
    assert len(pages) == 1 and pages[0].startswith(emulator_url)
    assert logout == passbridge.Logout()
    assert type(unauthenticated) is passbridge.NotAuthenticated
    assert (unauthenticated.error_code, unauthenticated.resource) == (passbridge.USER_NOT_AUTHENTICATED_ERROR, "ch1")
    assert after.authenticated is False


def test_blocking_second_screen_login_shows_the_code_on_the_calling_thread(bin_dir, emulator_url, tmp_path) -> None:
    shown: List[Any] = []
    phones: List[threading.Thread] = []

    def show_code(code: passbridge.RegistrationCode) -> None:
        shown.append((threading.current_thread(), code))
        if not code.update:
            phones.append(threading.Thread(target=phone, args=(code,)))
            phones[-1].start()

    class OldStyle(passbridge.EntitlementDelegate):
        def __init__(self) -> None:
            self.client = "kept"  # a delegate that set its client itself keeps it

    watcher = Watcher()
    with passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL, delegate=watcher) as ae, \
            passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path / "other"),
                                           executable=str(bin_dir / "passbridge"), stderr=subprocess.DEVNULL,
                                           delegate=OldStyle()) as other:
        assert other.delegate is not None and other.delegate.client == "kept"
        assert watcher.client is ae
        ae.init(webView=False)
        ae.set_requestor("REF")
        now = time.time() * 1000
        login = ae.login_second_screen(show_code, mvpd=MVPD, timeout=90)
        with pytest.raises(passbridge.NotAuthorized) as denied:
            ae.authorize("ch2")
        token = ae.authorize("ch1")
        # A logout the backend does not take keeps the login: log_out raises (it used to return as if logged out).
        fault = json.dumps({"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "drop"}).encode()
        urllib.request.urlopen(urllib.request.Request(emulator_url + "/__admin/faults", data=fault, method="POST",
                                                      headers={"Content-Type": "application/json"}), timeout=10).close()
        try:
            with pytest.raises(passbridge.EntitlementError) as kept:
                ae.log_out()
        finally:
            urllib.request.urlopen(urllib.request.Request(emulator_url + "/__admin/faults", method="DELETE"), timeout=10).close()
        assert kept.value.error_code == passbridge.GENERIC_AUTHENTICATION_ERROR
        assert [s["id"] for s in kept.value.statuses] == ["CFG404"]
        assert ae.check_authentication().authenticated
        logout = ae.log_out()
    for t in phones:
        t.join(30)
    assert login.authenticated
    thread, first = shown[0]
    assert thread is threading.current_thread() and first.update is False
    assert first.url.startswith(emulator_url + "/activate") and len(first.code) >= 6
    assert first.not_after is not None and first.not_after > now
    assert first.seconds_left is not None and 0 < first.seconds_left <= (first.not_after - now) / 1000 + 1
    assert all(t is threading.current_thread() and c.code == first.code and c.update for t, c in shown[1:])
    assert denied.value.mvpd_message == DENIED and token
    assert watcher.steps == []  # the helper answered the provider dialog, not the delegate
    assert logout.statuses == ()


def test_login_cancelled_at_the_picker_or_with_an_unknown_mvpd(bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
            await ae.set_requestor("REF")
            offered: List[List[str]] = []

            async def nobody(mvpds: List[passbridge.MVPD]) -> Optional[str]:
                offered.append([m["ID"] for m in mvpds])
                return None

            with pytest.raises(passbridge.LoginCancelled) as cancelled:
                await ae.login_web(web_view, mvpd=nobody, timeout=30)
            with pytest.raises(passbridge.LoginCancelled) as unknown:
                await ae.login_web(web_view, mvpd="MockMvpd", timeout=30)
            return offered, cancelled.value, unknown.value

    offered, cancelled, unknown = asyncio.run(main())
    assert offered and offered[0][0] == MVPD
    assert cancelled.error_code == passbridge.PROVIDER_NOT_SELECTED_ERROR and cancelled.statuses == []
    assert isinstance(unknown, passbridge.NotAuthenticated)
    assert [s["id"] for s in unknown.statuses] == ["PB404"] and "did you mean 'MockMVPD'" in unknown.reasons[0]


def test_set_requestor_failure_raises_requestor_failed_with_its_reason(bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> Any:
        async with await passbridge.AsyncAccessEnabler.spawn(
                "--backend", emulator_url, "--state-dir", str(tmp_path / "state"), executable=str(bin_dir / "passbridge"),
                stderr=subprocess.DEVNULL) as ae:
            with pytest.raises(passbridge.RequestorFailed) as failed:
                await ae.set_requestor("REF")
            with pytest.raises(passbridge.AuthorizationFailed) as later:
                await ae.authorize("ch1")
            return failed.value, later.value

    failed, later = asyncio.run(main())
    assert failed.reasons == ["R400 No software statement"]
    assert (later.error_code, later.reasons) == (passbridge.GENERIC_AUTHORIZATION_ERROR, ["R400 No software statement"])


def test_the_tv_app_example_logs_in_on_a_second_screen_plays_ch1_and_is_refused_ch2(bin_dir, tmp_path) -> None:
    example = pathlib.Path(__file__).resolve().parents[2] / "Clients" / "python" / "examples" / "tv_app.py"
    assert len(example.read_text().splitlines()) < 60
    env = {"PATH": "/usr/bin:/bin", "PASSBRIDGE": str(bin_dir / "passbridge"),
           "PYTHONPATH": str(example.parents[1]), "XDG_STATE_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, str(example), "--state-dir", str(tmp_path / "state")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        words = first.split()
        assert words[:4] == ["On", "your", "phone,", "open"] and words[5:7] == ["and", "enter"], first
        phone(passbridge.RegistrationCode(words[7], words[4], words[4], None, None))
        out = first + proc.stdout.read()
        assert proc.wait(60) == 0, out
    finally:
        proc.kill()
        proc.wait()
    lines = out.splitlines()
    assert lines[1].startswith("  (code valid for ")
    assert any(line.startswith("ch1: playing (media token ") for line in lines), out
    assert f"ch2: not in your package: {DENIED}" in lines, out
    assert lines[-1] == "Logged out"


class Wire(logging.Handler):
    """The messages the client sent (``-->``) and received (``<--``), parsed, from the ``passbridge.wire`` log."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: List[Any] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text[:4] in ("--> ", "<-- "):
            self.messages.append((text[:3], json.loads(text[4:])))

    def __enter__(self) -> "Wire":
        logger = logging.getLogger("passbridge.wire")
        self.level_before = logger.level
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        logger = logging.getLogger("passbridge.wire")
        logger.removeHandler(self)
        logger.setLevel(self.level_before)

    def sent(self, method: str) -> List[Any]:
        return [m for d, m in self.messages if d == "-->" and m.get("method") == method]

    def answer(self, id: Any) -> Any:
        return next(m for d, m in self.messages if d == "<--" and "method" not in m and m.get("id") == id)


def pending_tasks() -> List[str]:
    """The tasks of the running loop still waiting, but the current one and the client's own reader and pumps."""
    own = ("StderrTail.pump", "AsyncConnection._read_loop", "Process.wait")
    return [t.get_coro().__qualname__ for t in asyncio.all_tasks()
            if t is not asyncio.current_task() and not t.done() and t.get_coro().__qualname__ not in own]


class CancelAgain(logging.Handler):
    """While in use (`with`), cancels `task()` again right after a $/cancelRequest is written, before any answer
    can be read (the loop runs the callback before it next polls the pipe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: Any) -> None:
        super().__init__(logging.DEBUG)
        self.loop, self.task = loop, task

    def emit(self, record: logging.LogRecord) -> None:
        if '"method":"$/cancelRequest"' in record.getMessage():
            self.loop.call_soon(lambda: self.task().cancel())

    def __enter__(self) -> "CancelAgain":
        logging.getLogger("passbridge.wire").addHandler(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        logging.getLogger("passbridge.wire").removeHandler(self)


def test_a_login_task_cancelled_again_while_its_cancel_waits_still_ends_after_the_daemons_answer(
        bin_dir, emulator_url, tmp_path) -> None:
    """A second cancellation of the login's task while its $/cancelRequest waits for the answer (the blocking
    client's Ctrl-C in show_code cancels twice: the callback, then the call it waited in) does not cut that wait
    short: the task ends once the daemon answered the login -32800. It did not, and CI caught the blocking
    client raising KeyboardInterrupt before the answer under load."""
    async def main() -> Any:
        with Wire() as wire, CancelAgain(asyncio.get_running_loop(), lambda: login):
            async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
                await ae.init(webView=False)
                await ae.set_requestor("REF")
                shown = asyncio.Event()
                login = asyncio.ensure_future(ae.login_second_screen(lambda code: shown.set(), mvpd=MVPD))
                await asyncio.wait_for(shown.wait(), 30)
                login.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await login
                login_id = wire.sent("getAuthentication")[0]["id"]
                answered = [m for d, m in wire.messages if d == "<--" and "method" not in m and m.get("id") == login_id]
                left = pending_tasks()
        return answered, left

    answered, left = asyncio.run(main())
    assert [answer["error"]["code"] for answer in answered] == [passbridge.REQUEST_CANCELLED]
    assert left == []


@pytest.mark.parametrize("call", ["getAuthentication", "authorize"])
def test_an_sdk_named_call_cancelled_again_while_its_cancel_waits_still_ends_after_the_daemons_answer(
        bin_dir, emulator_url, tmp_path, call) -> None:
    """The same for the SDK-named getAuthentication and the Pythonic authorize(login=True), which cancel through the
    connection's call itself (Clients/python/README.md: the client waits for the answer before letting the
    CancelledError go on). A bad-input pass found the second cancellation ending them before the -32800."""
    async def main() -> Any:
        with Wire() as wire, CancelAgain(asyncio.get_running_loop(), lambda: task):
            async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
                await ae.init(webView=False)
                await ae.set_requestor("REF")
                events = ae.events("displayProviderDialog", "status")
                started = ae.getAuthentication() if call == "getAuthentication" else ae.authorize("ch1", login=True)
                task = asyncio.ensure_future(started)
                await events.next("displayProviderDialog", timeout=30)
                await ae.setSelectedProvider(MVPD)
                while (await events.next("status", timeout=30))["id"] != "REGCODE":
                    pass
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                # authorize(login=True) is one getAuthorization, which logs in first (the SDK's behaviour).
                sent = wire.sent("getAuthentication" if call == "getAuthentication" else "getAuthorization")
                answered = [m for d, m in wire.messages if d == "<--" and "method" not in m and m.get("id") == sent[0]["id"]]
                left = pending_tasks()
        return answered, left

    answered, left = asyncio.run(main())
    assert [answer["error"]["code"] for answer in answered] == [passbridge.REQUEST_CANCELLED]
    assert left == []


def test_a_provider_dialog_that_comes_while_a_cancelled_login_ends_is_not_the_delegates(
        bin_dir, emulator_url, tmp_path) -> None:
    """A login_web cancelled while the daemon's provider dialog is still unread: the dialog belongs to the helper
    until the login has ended (Clients/python/README.md: while a helper runs, the delegate's methods for what it
    answers itself are not called), so the delegate shows no picker and the client sends no setSelectedProvider of
    its own. The loop is held for 0.2 s right after getAuthentication is written, so the dialog is in the pipe
    when the cancellation runs. A bad-input pass found the delegate's picker shown 3 times in 3."""
    class App(passbridge.EntitlementDelegate):
        pickers = 0

        def displayProviderDialog(self, mvpds: Any) -> None:
            App.pickers += 1

        def navigateToUrl(self, url: str, useSVC: Any = None) -> None:
            pass

    async def main() -> Any:
        loop = asyncio.get_running_loop()

        def hold_then_cancel() -> None:
            time.sleep(0.2)  # the daemon answers the dialog step meanwhile
            login.cancel()

        class CancelAfterSend(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if '"method":"getAuthentication"' in record.getMessage():
                    loop.call_soon(hold_then_cancel)

        hook = CancelAfterSend(logging.DEBUG)
        with Wire() as wire:
            logging.getLogger("passbridge.wire").addHandler(hook)
            try:
                async with await spawn(bin_dir, emulator_url, tmp_path, delegate=App()) as ae:
                    await ae.set_requestor("REF")
                    login = asyncio.ensure_future(ae.login_web(lambda url: None, mvpd=MVPD))
                    with pytest.raises(asyncio.CancelledError):
                        await login
                    await ae.check_authentication()  # what the daemon sent meanwhile has been read
            finally:
                logging.getLogger("passbridge.wire").removeHandler(hook)
        return wire

    wire = asyncio.run(main())
    assert wire.sent("setSelectedProvider") == []
    assert App.pickers == 0


@pytest.mark.parametrize("ending", [signal.SIGKILL, signal.SIGTERM])
def test_a_login_helper_whose_daemon_ends_says_how(bin_dir, emulator_url, tmp_path, ending) -> None:
    """The spawned daemon ends while a login helper waits on the user.

    - Killed: the helper fails with DaemonExited and the exit status, as the SDK-named calls do
      (Clients/python/README.md), not with a bare ConnectionClosed (a bad-input pass found it saying only
      "connection closed").
    - Stopped (SIGTERM: a systemd restart): the daemon ends the login as a cancel (Protocol/README.md, Lifecycle 6),
      but its N005 says the instance closed, and the helper raises ConnectionClosed with that N005, not
      LoginCancelled (a Node new-user pass: an app told its user they had cancelled at every restart). The user's
      own cancel is LoginCancelled (test_login_cancelled_at_the_picker_or_with_an_unknown_mvpd)."""
    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
            await ae.init(webView=False)
            await ae.set_requestor("REF")
            assert ae.process is not None
            process = ae.process
            with pytest.raises(passbridge.ConnectionClosed) as raised:
                await ae.login_second_screen(lambda code: os.kill(process.pid, ending), mvpd=MVPD)
            with pytest.raises(passbridge.ConnectionClosed):
                await ae.check_authentication()
            return raised.value, await asyncio.wait_for(process.wait(), 20)

    error, status = asyncio.run(main())
    assert not isinstance(error, passbridge.LoginCancelled)
    if ending == signal.SIGKILL:
        assert isinstance(error, passbridge.DaemonExited) and error.returncode == status == -signal.SIGKILL, error
    else:
        assert status == 0 and not isinstance(error, passbridge.DaemonExited)
        assert [(s["id"], s.get("details")) for s in error.statuses] == [("N005", passbridge.INSTANCE_CLOSED)], error.statuses


def test_cancelling_a_second_screen_login_task_sends_cancel_request_and_leaves_nothing_waiting(
        bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> Any:
        with Wire() as wire:
            async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
                await ae.init(webView=False)
                await ae.set_requestor("REF")
                threads = set(threading.enumerate())
                shown = asyncio.Event()
                events = ae.events("setAuthenticationStatus", "status")
                login = asyncio.ensure_future(ae.login_second_screen(lambda code: shown.set(), mvpd=MVPD))
                await asyncio.wait_for(shown.wait(), 30)
                login.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await login
                left = (set(threading.enumerate()) - threads, pending_tasks())
                ended = [await events.next(timeout=5) for _ in range(3)]
                state = await ae.check_authentication()
                # A new login after the cancel shows a code again; this one ends by its timeout.
                codes: List[passbridge.RegistrationCode] = []
                shown_again = asyncio.Event()

                def show_again(code: passbridge.RegistrationCode) -> None:
                    codes.append(code)
                    shown_again.set()

                again = asyncio.ensure_future(ae.login_second_screen(show_again, mvpd=MVPD, timeout=30))
                await asyncio.wait_for(shown_again.wait(), 30)
                with pytest.raises(passbridge.Timeout):
                    await ae.login_second_screen(lambda code: None, mvpd=MVPD, timeout=0.5)  # joins the login
                with pytest.raises(passbridge.LoginCancelled):
                    await again  # that login was cancelled with the one that joined it
                after_timeout = pending_tasks()
            return wire, left, ended, state, codes, after_timeout

    wire, (threads, tasks), ended, state, codes, after_timeout = asyncio.run(main())
    login_id = wire.sent("getAuthentication")[0]["id"]
    first_cancel = wire.sent("$/cancelRequest")[0]
    assert first_cancel == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": login_id}}
    answer = wire.answer(login_id)
    assert answer["error"]["code"] == passbridge.REQUEST_CANCELLED and "result" not in answer
    assert threads == set() and tasks == []
    assert [e.name for e in ended] == ["status", "setAuthenticationStatus", "status"]
    assert ended[0]["id"] == "REGCODE"
    assert (ended[1]["status"], ended[1]["errorCode"]) == (0, passbridge.PROVIDER_NOT_SELECTED_ERROR)
    assert ended[2]["id"] == "N005"
    assert state.authenticated is False
    assert len(codes) == 1 and codes[0].code
    second_id, joined_id = (m["id"] for m in wire.sent("getAuthentication")[1:])
    assert [m["params"]["id"] for m in wire.sent("$/cancelRequest")] == [login_id, joined_id]
    assert wire.answer(joined_id)["error"]["code"] == passbridge.REQUEST_CANCELLED
    assert wire.answer(second_id)["result"]["errorCode"] == passbridge.PROVIDER_NOT_SELECTED_ERROR
    assert after_timeout == []


def test_authorize_with_login_cancelled_at_the_picker_and_a_page_that_fails(bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> Any:
        with Wire() as wire:
            async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
                await ae.set_requestor("REF")
                picker = ae.events("displayProviderDialog")
                failed = ae.events("tokenRequestFailed")
                authorizing = asyncio.ensure_future(ae.authorize("ch1", login=True))
                await picker.next(timeout=30)
                authorizing.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await authorizing
                refused = await failed.next(timeout=5)

                def broken_web_view(url: str) -> Optional[str]:
                    raise OSError("the web view crashed")

                with pytest.raises(OSError, match="the web view crashed"):
                    await ae.login_web(broken_web_view, mvpd=MVPD, timeout=30)
                tasks = pending_tasks()
                state = await ae.check_authentication()
            return wire, refused, tasks, state

    wire, refused, tasks, state = asyncio.run(main())
    authorization_id = wire.sent("getAuthorization")[0]["id"]
    login_id = wire.sent("getAuthentication")[0]["id"]
    assert [m["params"]["id"] for m in wire.sent("$/cancelRequest")] == [authorization_id, login_id]
    assert wire.answer(authorization_id)["error"]["code"] == passbridge.REQUEST_CANCELLED
    assert wire.answer(login_id)["error"]["code"] == passbridge.REQUEST_CANCELLED
    assert (refused["resource"], refused["errorCode"]) == ("ch1", passbridge.PROVIDER_NOT_SELECTED_ERROR)
    assert tasks == [] and state.authenticated is False


def test_blocking_login_timeout_cancels_it_and_leaves_no_thread(bin_dir, emulator_url, tmp_path) -> None:
    with Wire() as wire, passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                                        stderr=subprocess.DEVNULL) as ae:
        ae.init(webView=False)
        ae.set_requestor("REF")
        threads = set(threading.enumerate())
        with pytest.raises(passbridge.Timeout):
            ae.login_second_screen(lambda code: None, mvpd=MVPD, timeout=3)
        left = set(threading.enumerate()) - threads
        assert ae.check_authentication().authenticated is False
    login_id = wire.sent("getAuthentication")[0]["id"]
    assert [m["params"]["id"] for m in wire.sent("$/cancelRequest")] == [login_id]
    assert wire.answer(login_id)["error"]["code"] == passbridge.REQUEST_CANCELLED
    assert left == set()


def test_blocking_ctrl_c_in_show_code_cancels_the_login_before_it_is_raised(bin_dir, emulator_url, tmp_path) -> None:
    def interrupted(code: passbridge.RegistrationCode) -> None:
        raise KeyboardInterrupt

    with Wire() as wire, passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                                        stderr=subprocess.DEVNULL) as ae:
        ae.init(webView=False)
        ae.set_requestor("REF")
        threads = set(threading.enumerate())
        with pytest.raises(KeyboardInterrupt):
            ae.login_second_screen(interrupted, mvpd=MVPD)
        login_id = wire.sent("getAuthentication")[0]["id"]
        # Raised only once the daemon had answered the cancelled login.
        assert wire.answer(login_id)["error"]["code"] == passbridge.REQUEST_CANCELLED
        assert set(threading.enumerate()) - threads == set()
        assert ae.check_authentication().authenticated is False  # the client goes on
    assert [m["params"]["id"] for m in wire.sent("$/cancelRequest")] == [login_id]


def test_blocking_second_ctrl_c_while_the_cancel_waits_is_raised_at_once_and_leaves_nothing_behind(
        bin_dir, emulator_url, tmp_path) -> None:
    """Ctrl-C in show_code, then again while the cancelled login waits for the daemon's answer (here raised by the
    delegate's setAuthenticationStatus, which the cancel brings before the -32800): the second is raised at once,
    as a second Ctrl-C is; the login's end, when it comes, is dropped, not kept for the client's life (a bad-input
    pass found it left in the client), and the next calls work."""
    class App(passbridge.EntitlementDelegate):
        interrupt = False

        def setAuthenticationStatus(self, status: int, errorCode: str) -> None:
            if App.interrupt:
                App.interrupt = False
                raise KeyboardInterrupt

    def interrupted(code: passbridge.RegistrationCode) -> None:
        App.interrupt = True
        raise KeyboardInterrupt

    with passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL, delegate=App()) as ae:
        ae.init(webView=False)
        ae.set_requestor("REF")
        with pytest.raises(KeyboardInterrupt):
            ae.login_second_screen(interrupted, mvpd=MVPD)
        assert App.interrupt is False  # the second one was raised
        assert ae.check_authentication().authenticated is False
        assert ae.check_authentication().authenticated is False  # the abandoned login's end has been delivered
        assert ae._done == {} and ae._abandoned == set()


def test_login_web_waits_for_the_app_to_hand_the_redirect_over_itself(bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
            await ae.set_requestor("REF")
            handed: List[Any] = []

            async def app_scheme_handler(url: str) -> None:
                """Where an app's custom URL scheme lands: it hands the redirect over itself."""
                reached = await asyncio.to_thread(web_view, url)
                assert reached is not None
                handed.append(await ae.handleExternalURL(reached))

            def open_browser(url: str) -> None:
                asyncio.ensure_future(app_scheme_handler(url))  # opens the page and returns at once

            login = await ae.login_web(open_browser, mvpd=MVPD, timeout=60)
            return login, handed

    login, handed = asyncio.run(main())
    assert login.authenticated
    assert handed == [{"status": 1, "errorCode": ""}]


def test_login_web_on_a_second_screen_host_fails_at_once_saying_why(bin_dir, emulator_url, tmp_path) -> None:
    """From a new-user pass: login_web on a host that sent init(webView=False) waited silently for its timeout while
    the daemon showed a registration code nobody saw (with no timeout, until the code ran out, 30 minutes); the
    opposite mistake (a page with no open_url) failed at once. Both now fail at once, saying why."""
    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
            await ae.init(webView=False)
            await ae.set_requestor("REF")
            began = time.monotonic()
            with pytest.raises(passbridge.Error) as failed:
                await ae.login_web(lambda url: None, mvpd=MVPD, timeout=20)
            assert not isinstance(failed.value, passbridge.Timeout), failed.value
            return str(failed.value), time.monotonic() - began, await ae.checkAuthentication()

    message, seconds, after = asyncio.run(main())
    assert "registration code" in message and "login_second_screen" in message, message
    assert seconds < 10, seconds
    assert after["status"] == 0  # the login was cancelled in the daemon, and the client goes on


def test_log_out_of_a_partner_sso_login_says_to_sign_out_of_the_platform(bin_dir, emulator_url, tmp_path) -> None:
    from passbridge.partner_sso import TVProviderAccount

    async def main() -> Any:
        account = TVProviderAccount.write(tmp_path / "account.json", accessStatus="granted", providerId="MockSSO",
                                          expiresInSeconds=86400, username=USER, password=PASSWORD)
        async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
            ae.register_partner_sso(TVProviderAccount(account, emulator_url=emulator_url))
            await ae.init(partnerSSO="Apple")
            await ae.set_requestor("REF")
            logged_in = await ae.check_authentication()
            return logged_in, await ae.log_out(timeout=30)

    logged_in, logout = asyncio.run(main())
    assert logged_in.authenticated
    assert logout.sign_out_of_platform is True


def test_authorize_with_login_raises_login_cancelled_when_the_delegate_cancels_the_picker(bin_dir, emulator_url,
                                                                                            tmp_path) -> None:
    class Cancels(passbridge.EntitlementDelegate):
        async def displayProviderDialog(self, mvpds: Any) -> None:
            await self.client.setSelectedProvider(None)  # the client set by spawn(), no global

    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path, Cancels()) as ae:
            await ae.set_requestor("REF")
            with pytest.raises(passbridge.LoginCancelled) as cancelled:
                await ae.authorize("ch1", login=True)
            return cancelled.value

    cancelled = asyncio.run(main())
    assert (cancelled.error_code, cancelled.resource) == (passbridge.PROVIDER_NOT_SELECTED_ERROR, "ch1")
    assert isinstance(cancelled, passbridge.NotAuthenticated)


def test_an_idle_client_keeps_a_fixed_number_of_tasks(bin_dir, emulator_url, tmp_path) -> None:
    """The stderr pump waits for the daemon's exit with one task for the process's whole life: an idle client's
    tasks do not grow (a task per 0.1 s poll piled up, 36,000 an hour)."""
    async def main() -> List[int]:
        # The daemon's stderr is the client's to copy (the default), so the pump runs.
        async with await passbridge.AsyncAccessEnabler.spawn(*flags(emulator_url, tmp_path),
                                                             executable=str(bin_dir / "passbridge")) as ae:
            await ae.init(webView=False)
            counts = []
            for _ in range(3):
                counts.append(len([t for t in asyncio.all_tasks() if not t.done()]))
                await asyncio.sleep(0.35)
            return counts

    counts = asyncio.run(main())
    assert counts[0] == counts[1] == counts[2], counts


def test_a_delegate_with_the_sdk_params_only_still_gets_set_metadata_status(bin_dir, emulator_url, tmp_path) -> None:
    async def main() -> List[Any]:
        delegate = SDKOnlyWatcher()
        async with await spawn(bin_dir, emulator_url, tmp_path, delegate) as ae:
            await ae.set_requestor("REF")
            await ae.login_web(lambda url: asyncio.to_thread(web_view, url), mvpd=MVPD, timeout=60)
            await ae.metadata(passbridge.METADATA_AUTHENTICATION)
        return delegate.metadata

    told = asyncio.run(main())
    assert len(told) == 1 and told[0][0] == 0 and told[0][1].endswith(" GMT +0000"), told


def test_host_handlers_always_answer_one_valid_response(bin_dir, emulator_url, tmp_path, caplog) -> None:
    """As the Node client's (a final breaking pass): a handler whose result is no JSON (a set), or a HostError whose
    data is none, raised while the answer was written; the handler's thread died, and the daemon waited 10 s. It now
    gets an error with reason `other` at once (APPL_ERROR). A handler that fails with a bug of its own (not a
    HostError) is answered alike, and now logged with its traceback (a new-user pass found it silent)."""
    answers = [lambda: {"accessStatus": "granted", "odd": {1, 2}},
               lambda: (_ for _ in ()).throw(passbridge.HostError("accessNotGranted", "no", odd={3})),
               lambda: {"accessStatus": float("nan")},
               lambda: (_ for _ in ()).throw(ValueError("boom"))]
    turn = {"n": 0}

    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path) as ae:
            ae.register_request_handler("partnerSSO/checkAccessStatus", lambda params: answers[turn["n"]]())
            ae.register_request_handler("partnerSSO/requestAccountMetadata",
                                        lambda params: {"providerId": None, "authenticationExpirationDate": None})
            seen: list = []
            ae.add_listener(lambda event: seen.append(event["id"]) if event.name == "status" else None)
            await ae.init(partnerSSO="Apple")
            out = []
            for turn["n"] in range(len(answers)):
                seen.clear()
                began = time.monotonic()
                await ae.call("setRequestor", {"requestorID": "REF"})
                await ae.call("rpc.stats")
                out.append((time.monotonic() - began, list(seen)))
            return out

    with caplog.at_level(logging.ERROR, logger="passbridge"):
        out = asyncio.run(main())
    assert [statuses for _, statuses in out] == [["APPL_ERROR"]] * 4, out
    assert all(seconds < 5 for seconds, _ in out), out
    failed = "the host request handler for partnerSSO/checkAccessStatus failed"
    failures = [record for record in caplog.records if record.getMessage() == failed]
    assert any(isinstance(record.exc_info[1], ValueError) for record in failures if record.exc_info), failures


def test_blocking_login_web_whose_page_outlasts_its_timeout_raises_timeout(bin_dir, emulator_url, tmp_path) -> None:
    """From a new-user pass: the blocking client's login_web with an open_url slower than its timeout raised
    concurrent.futures.InvalidStateError (the step's answer set on a future the timeout had cancelled), which an
    `except passbridge.Error` misses. It raises Timeout, and the connection goes on."""
    with passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL) as ae:
        ae.init()
        ae.set_requestor("REF")
        with pytest.raises(passbridge.Timeout):
            ae.login_web(lambda url: time.sleep(3) or None, mvpd=MVPD, timeout=1)
        assert ae.checkAuthentication()["status"] == 0


def test_browser_says_when_the_login_page_refused_what_was_typed(bin_dir, emulator_url, tmp_path) -> None:
    """From a Node new-user pass: browser.py with a wrong password said the pages ended without reaching the redirect
    URL, "a second screen's done page? use --phone"; the page had only refused the credentials."""
    from rpc_helper import REDIRECT_URL, StdioDaemon, daemon_args

    daemon = StdioDaemon(bin_dir, *daemon_args(emulator_url, tmp_path / "state"))
    try:
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        start = daemon.mark()
        daemon.send("getAuthentication")
        daemon.notification("displayProviderDialog", start)
        notes, _ = daemon.exchange("setSelectedProvider", {"mvpdId": MVPD})
        url = next(n["params"]["url"] for n in notes if n["method"] == "navigateToUrl")
        browser = [sys.executable, str(pathlib.Path(__file__).resolve().parents[2] / "Clients/python/examples/browser.py"), url]
        for fields in (["--field", "username=demo", "--field", "password=wrong"], []):
            run = subprocess.run(browser + fields, capture_output=True, text=True, timeout=60)
            assert run.returncode == 1 and run.stdout == "", run
            last = run.stderr.strip().splitlines()[-1]
            assert "showed its form again after it was sent: the page refused what was typed" in last, last
            assert "--phone" not in last
    finally:
        assert daemon.stop() == 0


def test_a_blocking_partner_sso_host_refusing_with_host_error_is_answered(bin_dir, emulator_url, tmp_path) -> None:
    """From a breaking pass: the README's way to refuse a partner SSO request, `raise HostError(reason)`, made the
    blocking client's setRequestor raise NameError (the handler's exception, unbound by the time it was handed on)
    and left the daemon's request unanswered."""
    class Platform(passbridge.PartnerSSOHost):
        def checkAccessStatus(self, prompt: bool) -> Any:
            return {"accessStatus": "granted"}

        def requestAccountMetadata(self, params: Any) -> Any:
            raise passbridge.HostError("userCancelled")

    with passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL) as ae:
        ae.register_partner_sso(Platform())
        ae.init(partnerSSO="Apple")
        assert ae.setRequestor("REF")["status"] == 1
        check = ae.checkAuthentication()
        assert (check["status"], check["errorCode"]) == (0, passbridge.USER_NOT_AUTHENTICATED_ERROR)
        # The refusal reached the daemon: the cookbook's APPL_ERROR, with the host's reason.
        assert [(r["id"], r["details"]) for r in check["statuses"]] == [("APPL_ERROR", "userCancelled")]


@pytest.mark.parametrize("failing", ["async delegate", "listener"])
def test_a_callback_that_raises_at_the_dialog_cancels_its_login_and_harms_nothing_else(
        bin_dir, emulator_url, tmp_path, caplog, failing) -> None:
    """From breaking passes: an `async def displayProviderDialog` that raised was only logged, and getAuthentication
    waited for ever (a plain method that raises cancels the login, as the README says of both); a listener that
    raised closed the connection, every call then failing with "the daemon closed the connection", and once it was
    logged instead, its login waited for ever. The cancel itself logged a TypeError from asyncio and kept its task."""
    class App(passbridge.EntitlementDelegate):
        async def displayProviderDialog(self, mvpds: Any) -> None:
            raise RuntimeError("boom")

    async def main() -> Any:
        async with await spawn(bin_dir, emulator_url, tmp_path, App() if failing == "async delegate" else None) as ae:
            if failing == "listener":
                ae.add_listener(lambda event: 1 / 0)
            await ae.set_requestor("REF")
            login = await asyncio.wait_for(ae.getAuthentication(), 30)
            after = await ae.check_authentication()
            await asyncio.sleep(0)  # the cancel's own task ends
            return login, after, len(ae._tasks)

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        login, after, tasks = asyncio.run(main())
    assert login == {"status": 0, "errorCode": passbridge.PROVIDER_NOT_SELECTED_ERROR}
    assert after.authenticated is False
    assert tasks == 0
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


def test_a_blocking_client_refuses_a_second_thread_while_a_call_waits(bin_dir, emulator_url, tmp_path) -> None:
    """From a breaking pass: two threads calling one blocking AccessEnabler took each other's answers from its one
    inbox, and one of them hung for ever, its timeout ignored. A call from a second thread while one waits is now
    an Error at once; the first call, and a callback's nested call on its thread, go on."""
    at_dialog, release = threading.Event(), threading.Event()

    class App(passbridge.EntitlementDelegate):
        def displayProviderDialog(self, mvpds: Any) -> None:
            at_dialog.set()
            release.wait(30)
            self.client.setSelectedProvider(None)

    with passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL, delegate=App()) as ae:
        ae.setRequestor("REF")
        login: List[Any] = []
        first = threading.Thread(target=lambda: login.append(ae.getAuthentication()))
        first.start()
        assert at_dialog.wait(30)
        with pytest.raises(passbridge.Error) as refused:
            ae.call("rpc.stats", timeout=5)
        # process_events reads the same inbox (a second breaking pass: the waiting call hung).
        with pytest.raises(passbridge.Error, match="one AccessEnabler serves one thread"):
            ae.process_events(0.05)
        release.set()
        first.join(30)
        assert login == [{"status": 0, "errorCode": passbridge.PROVIDER_NOT_SELECTED_ERROR}]
        assert ae.call("rpc.stats", timeout=5)["instances"] == 1  # this thread may call once the other is done
    assert "one AccessEnabler serves one thread" in str(refused.value)
