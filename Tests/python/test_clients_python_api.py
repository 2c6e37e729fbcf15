"""The Python client's Pythonic API end to end: the real daemon over stdio against the emulator's default
configuration (Sources/PassEmulator/DefaultConfig.swift: ch1 permitted, ch2 denied with the MVPD's message).

Typed outcomes, `authorize` and its exceptions, `login_web` (the scripted browser of Clients/python/examples as
the web view), `login_second_screen` (a phone completing the activation page), `log_out`, `set_requestor`, the
delegate's `client`, and the cancellation of a login by its task or its timeout (`$/cancelRequest`).
"""
import asyncio
import logging
import pathlib
import subprocess
import sys
import threading
import time
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

    def displayProviderDialog(self, mvpds: Any) -> None:
        self.steps.append("displayProviderDialog")

    def navigateToUrl(self, url: str, useSVC: Any) -> None:
        self.steps.append("navigateToUrl")


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
    assert (pre.authorized, pre.denied) == (("ch1",), ("ch2",))
    assert expiry.key == 0 and expiry.value > time.time() * 1000
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

    with passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL) as ae, \
            passbridge.AccessEnabler.spawn(*flags(emulator_url, tmp_path / "other"),
                                           executable=str(bin_dir / "passbridge"), stderr=subprocess.DEVNULL,
                                           delegate=OldStyle()) as other:
        assert other.delegate is not None and other.delegate.client == "kept"
        ae.init(webView=False)
        ae.set_requestor("REF")
        now = time.time() * 1000
        login = ae.login_second_screen(show_code, mvpd=MVPD, timeout=90)
        with pytest.raises(passbridge.NotAuthorized) as denied:
            ae.authorize("ch2")
        token = ae.authorize("ch1")
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
