"""The shell examples (Clients/shell/examples/*.sh) drive whole flows through passbridge-call against the
emulator: check, web login (browser.py as the web view), authorize granted and denied, logout, second screen.

Each script spawns its own `passbridge --stdio` (PASSBRIDGE, PASSBRIDGE_ARGS); they share the state directory,
so a login made by one script is seen by the next, as on a real box.
"""
import base64
import json
import os
import pathlib
import subprocess
import time
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "Clients" / "shell" / "examples"
sys.path.insert(0, str(ROOT / "Clients" / "python" / "examples"))

from browser import Browser  # noqa: E402


def statement() -> str:
    part = lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("=")  # noqa: E731
    return ".".join([part(b'{"alg":"RS256"}'), part(json.dumps({"iss": "shell-test"}).encode()), part(b"sig")])


@pytest.fixture
def emulator(bin_dir: pathlib.Path):
    proc = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    url = proc.stdout.readline().strip()
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def env(bin_dir: pathlib.Path, emulator: str, tmp_path: pathlib.Path) -> dict:
    e = dict(os.environ)
    e["PASSBRIDGE"] = str(bin_dir / "passbridge")
    e["PASSBRIDGE_ARGS"] = (f"--backend {emulator} --state-dir {tmp_path / 'state'} --software-statement {statement()}"
                            f" --activation-url {emulator}/activate")
    e["WEB_VIEW"] = f"{sys.executable} {ROOT / 'Clients/python/examples/browser.py'} --field username=demo --field password=demo"
    e["EMULATOR"] = emulator
    return e


def run(script: str, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(EXAMPLES / script), *args], env=env, capture_output=True, text=True, timeout=120)


def test_shell_flow_login_authorize_logout(env: dict, bin_dir: pathlib.Path) -> None:
    r = run("check-auth.sh", env)
    assert (r.returncode, r.stdout.strip()) == (1, "not authenticated: User Not Authenticated Error"), r.stderr

    r = run("login.sh", env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "login page: http://127.0.0.1:" in r.stdout
    assert r.stdout.strip().endswith("logged in at MockMVPD")

    r = run("check-auth.sh", env)
    assert (r.returncode, r.stdout.strip()) == (0, "authenticated"), r.stderr

    r = run("authorize.sh", env, "ch1")
    assert r.returncode == 0, r.stdout + r.stderr
    token = r.stdout.split("media token: ")[1].strip()
    check = subprocess.run([str(bin_dir / "pass-emulator"), "verify-token", token, "--resource", "ch1", "--url", env["EMULATOR"]],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr

    r = run("authorize.sh", env, "ch2")
    assert r.returncode == 1
    assert r.stdout.strip() == 'denied: ch2: User not Authorized Error: Your subscription does not include "Channel 2".'

    r = run("logout.sh", env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "logout page: http://127.0.0.1:" in r.stdout and r.stdout.strip().endswith("logged out")

    r = run("check-auth.sh", env)
    assert r.returncode == 1 and r.stdout.startswith("not authenticated"), r.stdout


def test_shell_second_screen_login(env: dict) -> None:
    proc = subprocess.Popen(["bash", str(EXAMPLES / "second-screen.sh")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline().strip()
        assert first.startswith("REGCODE "), first + proc.stderr.read()
        code = first.split()[1]
        hint = proc.stdout.readline()
        url = hint.split(" open ")[1].split(" and enter")[0]
        assert url.startswith(env["EMULATOR"] + "/activate")

        def fill(name: str):
            return {"code": code, "mvpd": "MockMVPD", "username": "demo", "password": "demo"}.get(name)

        Browser().run(url, fill)  # the phone
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, out + err
    assert out.strip().endswith("logged in at MockMVPD")
    r = run("check-auth.sh", env)
    assert (r.returncode, r.stdout.strip()) == (0, "authenticated")
    # A box has no web view to open a logout page in: the example said so to the daemon only by not opening it, and
    # waited the daemon's 10 s for it (a new-user pass). It now logs out as a host without a web view.
    began = time.monotonic()
    r = run("logout.sh", {k: v for k, v in env.items() if k != "WEB_VIEW"})
    assert r.returncode == 0 and r.stdout.strip().endswith("logged out"), r.stdout + r.stderr
    assert time.monotonic() - began < 5


def test_login_without_a_web_view_or_a_terminal_says_so_and_cancels(env: dict) -> None:
    # From a new-user pass: with no $WEB_VIEW and no terminal it printed "/dev/tty: No such device or address" and
    # "reached: unbound variable". It says what to set, cancels the login, and fails.
    without = {k: v for k, v in env.items() if k != "WEB_VIEW"}
    r = subprocess.run(["bash", str(EXAMPLES / "login.sh")], env=without, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=120, start_new_session=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no terminal to paste the address into: set WEB_VIEW" in r.stderr, r.stderr
    assert "unbound variable" not in r.stderr and "/dev/tty" not in r.stderr, r.stderr
    assert r.stdout.splitlines()[-1].startswith("login failed:"), r.stdout


def test_shell_login_for_a_fleets_device(env: dict, bin_dir: pathlib.Path) -> None:
    """DEVICE=ID logs that device in (a fleet operator's pass found no scripted way to complete a login for a device
    of the fleet: passbridge-call prints the page and reads the redirect URL on its stdin)."""
    r = run("login.sh", dict(env, DEVICE="tv-0042"))
    assert r.returncode == 0 and r.stdout.strip().endswith("logged in at MockMVPD"), r.stdout + r.stderr

    def check(device: str) -> str:
        return subprocess.run([str(ROOT / "Clients/shell/passbridge-call"), "--requestor", "REF", "--device", device,
                               "checkAuthentication"], env=env, capture_output=True, text=True, timeout=60).stdout.strip()

    assert check("tv-0042") == '{"status":1,"errorCode":""}'
    assert check("tv-0043") == '{"status":0,"errorCode":"User Not Authenticated Error"}'


def test_every_example_acts_for_the_device_named_by_device(env: dict) -> None:
    """DEVICE=ID is honoured by each example, or refused. A breaking pass found logout.sh and check-auth.sh ignoring
    it: `DEVICE=tv-0042 logout.sh` ended the store's own device's login, left tv-0042's, and said "logged out"."""
    assert run("login.sh", env).returncode == 0                               # the store's own device
    assert run("login.sh", dict(env, DEVICE="tv-0042")).returncode == 0
    r = run("check-auth.sh", dict(env, DEVICE="tv-0043"))
    assert (r.returncode, r.stdout.strip()) == (1, "not authenticated: User Not Authenticated Error"), r.stdout + r.stderr
    r = run("authorize.sh", dict(env, DEVICE="tv-0043"), "ch1")
    assert r.returncode == 1 and r.stdout.startswith("denied: ch1: User Not Authenticated Error"), r.stdout + r.stderr
    assert run("authorize.sh", dict(env, DEVICE="tv-0042"), "ch1").returncode == 0
    r = run("logout.sh", dict(env, DEVICE="tv-0042"))
    assert (r.returncode, r.stdout.strip().splitlines()[-1]) == (0, "logged out"), r.stdout + r.stderr
    assert run("check-auth.sh", dict(env, DEVICE="tv-0042")).returncode == 1
    r = run("check-auth.sh", env)
    assert (r.returncode, r.stdout.strip()) == (0, "authenticated"), r.stdout + r.stderr   # untouched
    # A DEVICE the daemon refuses (over 256 characters): the script stops there. It went on as the store's own device,
    # and logged that one out (the next breaking pass).
    for script in ("logout.sh", "login.sh"):
        r = run(script, dict(env, DEVICE="d" * 300))
        assert r.returncode == 2 and r.stderr.startswith("init failed: ") and "must be at most 256 characters" in r.stderr, \
            (script, r.stdout + r.stderr)
    assert run("check-auth.sh", env).returncode == 0
    # A control character in DEVICE, or --device given to a script that sends init itself: refused, nothing sent.
    for extra, args, said in [({"DEVICE": "tv\t9"}, (), "DEVICE holds a control character"),
                              ({}, ("--device", "tv-0042"), "these examples take the device as DEVICE=ID, not --device"),
                              ({}, ("--device=tv-0042",), "these examples take the device as DEVICE=ID, not --device")]:
        for script in ("login.sh", "logout.sh"):
            r = run(script, dict(env, **extra), *args)
            assert (r.returncode, r.stderr.strip()) == (2, said), (script, r.stdout + r.stderr)


def test_login_with_temp_pass_ends_at_the_pick(env: dict) -> None:
    """TempPass logs in at setSelectedProvider, with no page: login.sh waited 60 s for one and said "no login page"
    though the device was logged in (a new-user pass)."""
    started = time.monotonic()
    r = run("login.sh", env, "TempPass")
    assert (r.returncode, r.stdout.strip().splitlines()[-1]) == (0, "logged in at TempPass"), r.stdout + r.stderr
    assert time.monotonic() - started < 30
    assert run("check-auth.sh", env).returncode == 0


def test_login_says_why_it_failed_in_words(env: dict) -> None:
    """A mistyped MVPD ends at once with the daemon's PB404 (it waited 60 s for a page and said "no login page");
    a wrong password ends with the status's message, not the raw JSON of the answers."""
    started = time.monotonic()
    r = run("login.sh", env, "mockmvpd")
    assert r.returncode == 1 and time.monotonic() - started < 30, r.stdout + r.stderr
    assert "login failed: Provider not Selected Error: No MVPD 'mockmvpd' in the provider dialog; did you mean 'MockMVPD'?" \
        in r.stderr, r.stderr
    wrong = dict(env, WEB_VIEW=env["WEB_VIEW"].replace("password=demo", "password=wrong"))
    r = run("login.sh", wrong)
    assert r.returncode == 1, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("login failed: ") and "{" not in last, r.stdout + r.stderr
