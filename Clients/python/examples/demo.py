#!/usr/bin/env python3
"""PassBridge end to end: the AccessEnabler flow of an app, against the Adobe Pass emulator.

Starts ``pass-emulator``, spawns ``passbridge --backend URL`` over stdio with a fresh state directory and a
dummy software statement, then plays an app: setRequestor REF, checkAuthentication, getAuthentication (picks
MockMVPD in displayProviderDialog, follows navigateToUrl through the mock MVPD's login form as demo/demo up
to the redirect URL, hands it to handleExternalURL), getAuthorization ch1 (short media token checked with
``pass-emulator verify-token``), getAuthorization ch2 (denied), getMetadata, logout (follows the logout page
back to the redirect URL). ``--second-screen`` plays a set-top box instead: ``init {webView: false}``, the
registration code is printed and a separate HTTP client, standing in for the phone, completes ``/activate``.
``--partner-sso`` plays a platform that holds the user's TV-provider account (partner single sign-on): the
host answers the daemon's partnerSSO/* requests from a small account file (passbridge.partner_sso), so
setRequestor logs in with no login page at all, and logout ends with VSA203 (sign out on the platform too).

Each step prints what happened; the exit status is 0 only if every step did what it should.
Usage: demo.py [--second-screen | --partner-sso] [--bin-dir DIR] [--verbose]
"""
import argparse
import asyncio
import base64
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, List, Optional

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import passbridge  # noqa: E402
from passbridge.partner_sso import TVProviderAccount  # noqa: E402
from browser import Browser  # noqa: E402

REQUESTOR, MVPD, USER, PASSWORD = "REF", "MockMVPD", "demo", "demo"
REDIRECT_URL = passbridge.ADOBEPASS_REDIRECT_URL
TIMEOUT = 90  # seconds any one step may take (second screen polls every 3-5 s)


class StepFailed(Exception):
    """A step did not do what it should."""


def say(line: str) -> None:
    print(line, flush=True)


def ok(step: str, detail: str) -> None:
    say(f"[ok] {step}: {detail}")


def expect(cond: bool, step: str, detail: str) -> None:
    if not cond:
        raise StepFailed(f"{step}: {detail}")


def find_bin_dir(arg: Optional[str]) -> pathlib.Path:
    """--bin-dir, else $PASSBRIDGE_BIN_DIR, else `swift build --show-bin-path` in the repository."""
    if arg or os.environ.get("PASSBRIDGE_BIN_DIR"):
        return pathlib.Path(arg or os.environ["PASSBRIDGE_BIN_DIR"])
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return pathlib.Path(out.stdout.strip())


def dummy_software_statement() -> str:
    """A well-formed three-part JWT (the emulator accepts any; Adobe needs the one it issued you)."""
    def part(obj: Any) -> str:
        raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")
    claims = {"iss": "passbridge-demo", "software_id": "passbridge-demo", "iat": int(time.time())}
    return ".".join([part({"alg": "RS256", "typ": "JWT"}), part(claims), part(b"not-a-real-signature")])


class Emulator:
    """pass-emulator as a child process; ``url`` is the base URL it printed."""

    def __init__(self, exe: pathlib.Path, log_path: pathlib.Path) -> None:
        self.exe = exe
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([str(exe), "--port", "0"], stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # keep its stdout drained
        if not self.url.startswith("http"):
            raise StepFailed(f"pass-emulator printed {self.url!r} instead of its base URL")

    def verify(self, token: str, resource: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([str(self.exe), "verify-token", token, "--resource", resource, "--url", self.url],
                              capture_output=True, text=True, timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class DemoApp(passbridge.EntitlementDelegate):
    """The app's delegate: prints every callback, picks MockMVPD, and plays the web view."""

    def __init__(self, second_screen: bool) -> None:
        self.client: Optional[passbridge.AsyncAccessEnabler] = None
        self.second_screen = second_screen
        self.log: List[passbridge.Event] = []
        self.regcode: "asyncio.Future[passbridge.Status]" = asyncio.get_running_loop().create_future()
        self.web_results: List[passbridge.AuthenticationStatus] = []
        self.web_done = asyncio.Event()  # set when the web view has handed its URL over (or given up)
        self.failures: List[str] = []

    def onEvent(self, ev: passbridge.Event) -> None:
        """Listener for every notification: a trace line and the record. The trace shortens what is long: a token
        to its first 12 characters, each MVPD of displayProviderDialog to its ID, a URL to the part before its query."""
        self.log.append(ev)
        shown = {k: (v[:12] + "…" if k == "token" and isinstance(v, str) else v) for k, v in ev.params.items()}
        if ev.name == "displayProviderDialog":
            shown = {"mvpds": [m.get("ID") for m in ev.params.get("mvpds", [])]}
        if ev.name == "navigateToUrl":
            shown = {"url": str(ev.params.get("url", "")).split("?")[0] + "?…"}
        say(f"    <- {ev.name} {json.dumps(shown, ensure_ascii=False)}")

    async def displayProviderDialog(self, mvpds: List[passbridge.MVPD]) -> None:
        ids = [m.get("ID") for m in mvpds]
        choice = MVPD if MVPD in ids else None
        say(f"    (picker shows {', '.join(str(m.get('displayName')) for m in mvpds)}; user picks {choice})")
        assert self.client is not None
        await self.client.setSelectedProvider(choice)

    async def navigateToUrl(self, url: str, useSVC: Optional[bool]) -> None:
        """The web view: load the page, log in if asked, stop at the redirect URL, hand it back."""
        try:
            await self._web_view(url)
        finally:
            self.web_done.set()

    async def _web_view(self, url: str) -> None:
        assert self.client is not None
        browser = Browser(log=lambda line: say(f"    web view: {line}"))
        fill = {"username": USER, "password": PASSWORD}
        try:
            reached = await asyncio.to_thread(browser.run, url, fill.get, REDIRECT_URL)
        except Exception as e:
            self.failures.append(f"web view: {e}")
            await self.client.setSelectedProvider(None)
            return
        if reached is None:
            self.failures.append("web view: the page never redirected to the redirect URL")
            await self.client.setSelectedProvider(None)
            return
        result = await self.client.handleExternalURL(reached)
        say(f"    handleExternalURL -> {json.dumps(result)}")
        self.web_results.append(result)

    def status(self, status: passbridge.Status) -> None:
        if status.get("id") == "REGCODE" and not self.regcode.done():
            self.regcode.set_result(status)

    def index(self, name: str, start: int = 0) -> int:
        """Position of the first ``name`` notification at or after ``start`` (-1 if none)."""
        return next((i for i in range(start, len(self.log)) if self.log[i].name == name), -1)


def phone_activation(regcode: passbridge.Status) -> None:
    """The second screen: a separate HTTP client opens the activation page and completes it."""
    phone = Browser(log=lambda line: say(f"    phone: {line}"))

    def fill(name: str) -> Optional[str]:
        n = name.lower()
        if "code" in n:
            return regcode["code"]
        if "mvpd" in n or "provider" in n or n == "idp":
            return MVPD
        if "user" in n:
            return USER
        if "pass" in n:
            return PASSWORD
        return None

    phone.run(regcode["url"], fill)


async def run(args: argparse.Namespace, bins: pathlib.Path, work: pathlib.Path) -> None:
    step = "pass-emulator"
    emulator = Emulator(bins / "pass-emulator", work / "pass-emulator.log")
    try:
        ok(step, f"listening on {emulator.url}")
        await flow(args, bins, work, emulator)
    finally:
        emulator.stop()


async def flow(args: argparse.Namespace, bins: pathlib.Path, work: pathlib.Path, emulator: Emulator) -> None:
    app = DemoApp(args.second_screen)
    state_dir = work / "state"
    flags = ["--backend", emulator.url, "--state-dir", str(state_dir),
             "--software-statement", dummy_software_statement()]
    if args.second_screen:
        flags += ["--activation-url", emulator.url + "/activate"]
    daemon_log = open(work / "passbridge.log", "w")
    ae = await passbridge.AsyncAccessEnabler.spawn(*flags, executable=str(bins / "passbridge"), delegate=app,
                                                   stderr=daemon_log)  # sets app.client
    ae.add_listener(app.onEvent)
    if args.partner_sso:  # the platform's TV-provider account: signed in with MockSSO as demo/demo
        account = TVProviderAccount.write(work / "tv-provider-account.json", accessStatus="granted", providerId="MockSSO",
                                          expiresInSeconds=86400, username=USER, password=PASSWORD)
        ae.register_partner_sso(TVProviderAccount(account, emulator_url=emulator.url))

    async def call(name: str, coro: Any) -> Any:
        say(f"--> {name}")
        try:
            return await asyncio.wait_for(coro, TIMEOUT)
        except asyncio.TimeoutError:
            raise StepFailed(f"{name}: no answer within {TIMEOUT} s") from None

    try:
        assert ae.process is not None
        ok("passbridge", f"spawned over stdio (pid {ae.process.pid}), state in a fresh {state_dir}")

        r = await call("init", ae.init(webView=False if args.second_screen else None,
                                       partnerSSO="Apple" if args.partner_sso else None))
        expect(r == {}, "init", f"answered {r}")
        ok("init", "second-screen host (webView: false)" if args.second_screen else "web-view host, redirect URL " + REDIRECT_URL
           + (", partner SSO (Apple) answered from the TV provider account file" if args.partner_sso else ""))

        mark = len(app.log)
        r = await call("setRequestor REF", ae.setRequestor(REQUESTOR))
        expect(r.get("status") == 1, "setRequestor", f"answered {r}")
        expect(app.index("setRequestorComplete", mark) >= 0 and app.log[app.index("setRequestorComplete", mark)]["status"] == 1,
               "setRequestor", "no setRequestorComplete(1) before the response")
        ok("setRequestor", "configuration of REF loaded, setRequestorComplete(1)")

        r = await call("checkAuthentication", ae.checkAuthentication())
        if args.partner_sso:
            expect(r == {"status": 1, "errorCode": ""}, "checkAuthentication", f"setRequestor should have logged in, got {r}")
            ok("checkAuthentication", "logged in by setRequestor through the platform's TV provider account")
            r = await call("getMetadata tokenSource", ae.getMetadata(passbridge.METADATA_USER_META, userMetaKey="tokenSource"))
            expect(r.get("metadata") == "Apple", "getMetadata tokenSource", f"answered {r}")
            ok("getMetadata tokenSource", "Apple: a partner single sign-on login")
        else:
            expect(r.get("status") == 0 and r.get("errorCode") == passbridge.USER_NOT_AUTHENTICATED_ERROR,
                   "checkAuthentication", f"a fresh device should not be logged in, got {r}")
            ok("checkAuthentication", f"not logged in yet ({r['errorCode']})")

        mark = len(app.log)
        login = asyncio.ensure_future(ae.getAuthentication())
        if args.partner_sso:
            say("--> getAuthentication (already logged in: no picker, no login page)")
        elif args.second_screen:
            say("--> getAuthentication (set-top: registration code for a second screen)")
            regcode = await asyncio.wait_for(app.regcode, TIMEOUT)
            expect(bool(regcode.get("code")) and str(regcode.get("url", "")).startswith("http"), "REGCODE",
                   f"status without code/url: {regcode}")
            say(f"    REGCODE {regcode['code']}: on your phone open {regcode['url']} (valid until "
                f"{time.strftime('%H:%M:%S', time.localtime(regcode.get('notAfter', 0) / 1000))})")
            await asyncio.to_thread(phone_activation, regcode)
            ok("second screen", f"the phone completed {regcode['url']} with code {regcode['code']} as {USER}/{PASSWORD}")
        else:
            say("--> getAuthentication")
        try:
            r = await asyncio.wait_for(login, TIMEOUT)
        except asyncio.TimeoutError:
            raise StepFailed(f"getAuthentication: the login did not end within {TIMEOUT} s") from None
        expect(not app.failures, "getAuthentication", "; ".join(app.failures))
        picker = app.index("displayProviderDialog", mark)
        if args.partner_sso:
            expect(picker < 0 and app.index("navigateToUrl", mark) < 0, "getAuthentication", "showed a picker or a login page")
        else:
            expect(picker >= 0, "getAuthentication", "no displayProviderDialog")
            ids = [m.get("ID") for m in app.log[picker]["mvpds"]]
            expect(ids[:4] == ["MockMVPD", "TempPass", "MockSSO", "MockPicker"], "displayProviderDialog", f"listed {ids}")
        if not args.second_screen and not args.partner_sso:
            expect(app.index("navigateToUrl", mark) >= 0, "getAuthentication", "no navigateToUrl for the login page")
            await asyncio.wait_for(app.web_done.wait(), TIMEOUT)  # handleExternalURL may answer after getAuthentication
            expect(app.web_results[-1:] == [{"status": 1, "errorCode": ""}], "handleExternalURL", f"answered {app.web_results}")
        expect(r == {"status": 1, "errorCode": ""}, "getAuthentication", f"answered {r}")
        auth = app.index("setAuthenticationStatus", mark)
        expect(auth >= 0 and app.log[auth]["status"] == 1, "getAuthentication", "no setAuthenticationStatus(1) before the response")
        ok("getAuthentication", f"logged in at {'MockSSO' if args.partner_sso else MVPD} as {USER} (setAuthenticationStatus(1))")

        mark = len(app.log)
        r = await call("getAuthorization ch1", ae.getAuthorization("ch1"))
        token = r.get("token")
        expect(bool(token) and r.get("resource") == "ch1", "getAuthorization ch1", f"answered {r}")
        expect(any(e.name == "setToken" and e["token"] == token for e in app.log[mark:]), "getAuthorization ch1",
               "no setToken with the same token before the response")
        say(f"    short media token for ch1: {token[:48]}… ({len(token)} characters of base64)")
        check = await asyncio.to_thread(emulator.verify, token, "ch1")
        say(f"    pass-emulator verify-token --resource ch1 -> exit {check.returncode} {(check.stdout + check.stderr).strip()}")
        expect(check.returncode == 0, "verify-token", "the emulator rejected the media token")
        ok("getAuthorization ch1", "permitted; the media token's signature, expiry and resource verify")

        r = await call("getAuthorization ch2", ae.getAuthorization("ch2"))
        expect(r.get("resource") == "ch2" and r.get("errorCode") == passbridge.USER_NOT_AUTHORIZED_ERROR and "token" not in r,
               "getAuthorization ch2", f"should be denied, answered {r}")
        expect('Channel 2' in str(r.get("errorDescription")), "getAuthorization ch2", f"description {r.get('errorDescription')!r}")
        ok("getAuthorization ch2", f"denied: {r['errorCode']}: {r['errorDescription']}")

        now_ms = time.time() * 1000
        r = await call("getMetadata METADATA_AUTHENTICATION", ae.getMetadata(passbridge.METADATA_AUTHENTICATION))
        expiry = r.get("expires")  # epoch ms; `metadata` is the SDK's date string of the same instant
        expect(isinstance(expiry, (int, float)) and now_ms < expiry <= now_ms + 25 * 3600 * 1000 and r.get("key") == 0
               and isinstance(r.get("metadata"), str), "getMetadata", f"authentication expiry should be within 24 h, got {r}")
        say(f"    login valid until {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(expiry / 1000))}")
        r = await call("getMetadata METADATA_USER_META userID", ae.getMetadata(passbridge.METADATA_USER_META, userMetaKey="userID"))
        expect(r.get("metadata") not in (None, "") and r.get("encrypted") is False and r.get("key") == 3,
               "getMetadata", f"userID should be a plain attribute, got {r}")
        r2 = await call("getMetadata METADATA_USER_META zip", ae.getMetadata(passbridge.METADATA_USER_META, userMetaKey="zip"))
        expect(r2.get("encrypted") is True, "getMetadata", f"zip should be encrypted, got {r2}")
        ok("getMetadata", f"expiry {int(expiry)} ms, userID {r['metadata']!r}, zip encrypted")

        mark = len(app.log)
        app.web_done.clear()
        r = await call("logout", ae.logout())
        expect(r == {"status": 0, "errorCode": passbridge.USER_NOT_AUTHENTICATED_ERROR}, "logout", f"answered {r}")
        if args.partner_sso:
            expect(any(e.name == "status" and e["id"] == "VSA203" for e in app.log[mark:]), "logout", "no VSA203 status")
            say("    VSA203: the user must also sign out of the TV provider in the platform's settings")
        elif not args.second_screen:
            expect(app.index("navigateToUrl", mark) >= 0, "logout", "no navigateToUrl for the logout page")
            await asyncio.wait_for(app.web_done.wait(), TIMEOUT)
            expect(app.web_results[-1:] == [r], "logout", f"handleExternalURL answered {app.web_results[-1:]}")
        ok("logout", "logged out" + ("" if args.second_screen or args.partner_sso else " (logout page followed back to the redirect URL)"))

        r = await call("checkAuthentication", ae.checkAuthentication())
        expect(r.get("status") == 0, "checkAuthentication", f"should be logged out, got {r}")
        ok("checkAuthentication", f"logged out ({r['errorCode']})")
    finally:
        code = await ae.close()
        daemon_log.close()
    expect(code == 0, "passbridge", f"exited with status {code} after stdin closed")
    ok("passbridge", "exited 0 when its stdin closed")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--second-screen", action="store_true", help="set-top variant: registration code + phone")
    parser.add_argument("--partner-sso", action="store_true",
                        help="the platform holds the TV provider account (partner SSO): login with no login page")
    parser.add_argument("--bin-dir", help="folder with passbridge and pass-emulator (default: swift's bin path)")
    parser.add_argument("--verbose", action="store_true", help="print the daemon's and emulator's logs at the end")
    args = parser.parse_args(argv)
    bins = find_bin_dir(args.bin_dir)
    for exe in ("passbridge", "pass-emulator"):
        if not (bins / exe).exists():
            say(f"[FAIL] {bins / exe} not found: build with `swift build` or pass --bin-dir")
            return 1
    with tempfile.TemporaryDirectory(prefix="passbridge-demo-") as tmp:
        work = pathlib.Path(tmp)
        failed = None
        try:
            asyncio.run(run(args, bins, work))
        except StepFailed as e:
            failed = str(e)
        except Exception as e:
            failed = f"{type(e).__name__}: {e}"
        if failed or args.verbose:
            for name in ("passbridge.log", "pass-emulator.log"):
                path = work / name
                if path.exists():
                    lines = path.read_text(errors="replace").splitlines()[-40:]
                    say(f"---- last lines of {name} ----")
                    say("\n".join(lines))
    if failed:
        say(f"[FAIL] {failed}")
        return 1
    say("DEMO OK: every step did what it should")
    return 0


if __name__ == "__main__":
    sys.exit(main())
