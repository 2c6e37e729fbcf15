"""passbridge-call from the first command (Clients/shell/passbridge-call): `dev` starts an emulator and a daemon on a
socket and prints the export line for later calls; failed outcomes exit 1 with the reason on stderr; parse-error
offsets count into the caller's params; `--socket` needs no daemon binary; and the `--socket` second-screen example
passes 50 of 50 runs with a CPU hog beside it. The user is browser.py (the login page, the phone).
"""
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import time
import sys
import urllib.parse
from typing import Dict, List

import pytest

from clients_support import ROOT, emulator_url, path_without_passbridge, statement  # noqa: F401  (fixtures)
from rpc_helper import SocketDaemon, StdioDaemon

from browser import Browser  # noqa: E402

CALL = str(ROOT / "Clients" / "shell" / "passbridge-call")
EXAMPLES = ROOT / "Clients" / "shell" / "examples"


def socket_env(bin_dir: pathlib.Path, socket_path: str, path: str) -> Dict[str, str]:
    """A caller that knows the socket and the relay, but neither PASSBRIDGE nor a PATH holding the daemon (`path`, the
    path_without_passbridge fixture)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PASSBRIDGE", "PASSBRIDGE_ARGS")}
    env["PATH"] = path
    env.update(PASSBRIDGE_SOCKET=socket_path, PASSBRIDGE_RELAY=str(bin_dir / "passbridge-relay"))
    return env


def call(env: Dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([CALL, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


def login_on_the_web(env: Dict[str, str]) -> subprocess.CompletedProcess:
    """`passbridge-call --requestor REF --mvpd MockMVPD getAuthentication`, the page opened by browser.py."""
    proc = subprocess.Popen([CALL, "--requestor", "REF", "--mvpd", "MockMVPD", "getAuthentication"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "open this page in a browser and log in, then press Enter (or give the address the page ended on): " in line:
                url = line.strip().split("page ended on): ", 1)[1]
                break
        else:
            raise AssertionError("no login page")
        reached = Browser().run(url, {"username": "demo", "password": "demo"}.get, "adobepass://ios.app")
        assert reached is not None
        out, err = proc.communicate(reached + "\n", timeout=60)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_dev_then_login_and_authorize_in_separate_commands(bin_dir, short_tmp, path_without_passbridge):
    directory = short_tmp / "dev"
    starter = dict(os.environ, PASSBRIDGE=str(bin_dir / "passbridge"))
    try:
        started = subprocess.run(["bash", "-c", f'eval "$("{CALL}" dev --state-dir {directory})" && echo "$PASSBRIDGE_SOCKET"'],
                                 env=starter, capture_output=True, text=True, timeout=60)
        assert started.returncode == 0, started.stderr
        socket_path = started.stdout.strip()
        assert socket_path == str(directory / "passbridge.sock")
        assert "passbridge-call: dev: pass-emulator at http://127.0.0.1:" in started.stderr
        # The store is named where `passbridge state` finds it: DIR/state, not DIR.
        assert f"the store in {directory}/state (passbridge state list --state-dir {directory}/state)" in started.stderr
        printed = subprocess.run([CALL, "dev", "--state-dir", str(directory)], env=starter, capture_output=True, text=True, timeout=60)
        assert (printed.returncode, printed.stdout) == (0, f"export PASSBRIDGE_SOCKET={socket_path}\n")
        assert "already running" in printed.stderr

        env = socket_env(bin_dir, socket_path, path_without_passbridge)
        assert call(env, "--requestor", "REF", "checkAuthentication").returncode == 1
        login = login_on_the_web(env)
        assert (login.returncode, login.stdout) == (0, '{"status":1,"errorCode":""}\n'), login.stderr
        permitted = call(env, "--requestor", "REF", "getAuthorization", '{"resource":"ch1"}')
        assert permitted.returncode == 0 and json.loads(permitted.stdout)["resource"] == "ch1", permitted.stderr
        assert json.loads(permitted.stdout)["token"]
        denied = call(env, "--requestor", "REF", "getAuthorization", '{"resource":"ch2"}')
        assert denied.returncode == 1 and json.loads(denied.stdout)["errorCode"] == "User not Authorized Error"
        assert denied.stderr.splitlines()[-1] == ('passbridge-call: getAuthorization failed: User not Authorized Error: '
                                                 'Your subscription does not include "Channel 2".')
        # A logout from a script does not wait for the logout page (it only ends the MVPD's own session): the
        # daemon's 10 s wait for it would be the script's.
        began = time.monotonic()
        out = call(env, "--requestor", "REF", "logout")
        assert (out.returncode, out.stdout) == (0, '{"status":0,"errorCode":"User Not Authenticated Error"}\n'), out.stderr
        assert time.monotonic() - began < 5
        assert "passbridge-call: logged out; the TV provider's logout page, to open if you like: http" in out.stderr
        pids = [int((directory / f"{name}.pid").read_text()) for name in ("passbridge", "pass-emulator")]
    finally:
        stopped = subprocess.run([CALL, "dev", "stop", "--state-dir", str(directory)], env=starter, capture_output=True,
                                 text=True, timeout=60)
    assert stopped.returncode == 0 and stopped.stderr == "passbridge-call: dev: stopped\n"
    for pid in pids:
        assert not pathlib.Path(f"/proc/{pid}").exists() or "zombie" in pathlib.Path(f"/proc/{pid}/status").read_text()
    gone = call(socket_env(bin_dir, socket_path, path_without_passbridge), "rpc.stats")
    assert (gone.returncode, gone.stderr) == (2, f"passbridge-call: cannot connect to {socket_path}: no such socket\n")


def test_dev_starts_again_over_a_daemon_that_was_killed_and_not_reaped(bin_dir, short_tmp, tmp_path, path_without_passbridge):
    """From a new-user pass: a dev daemon killed with SIGKILL under an init that reaps nothing (a container) stays a
    zombie, still named passbridge, and its socket file stays: `dev` said "already running" and every call failed
    until `dev stop`. The zombie here is the test's own child, so that nothing reaps it whatever the init."""
    directory = short_tmp / "dev"
    starter = dict(os.environ, PASSBRIDGE=str(bin_dir / "passbridge"))
    fake = tmp_path / "passbridge"
    shutil.copy("/bin/sleep", fake)
    zombie = subprocess.Popen([str(fake), "60"])
    try:
        assert subprocess.run([CALL, "dev", "--state-dir", str(directory)], env=starter, capture_output=True,
                              timeout=60).returncode == 0
        real = int((directory / "passbridge.pid").read_text())
        os.kill(real, 9)
        zombie.kill()
        while pathlib.Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z":
            time.sleep(0.01)
        (directory / "passbridge.pid").write_text(f"{zombie.pid}\n")
        again = subprocess.run([CALL, "dev", "--state-dir", str(directory)], env=starter, capture_output=True,
                               text=True, timeout=60)
        assert again.returncode == 0 and "already running" not in again.stderr, again.stderr
        env = socket_env(bin_dir, str(directory / "passbridge.sock"), path_without_passbridge)
        assert call(env, "rpc.stats").returncode == 0
    finally:
        subprocess.run([CALL, "dev", "stop", "--state-dir", str(directory)], env=starter, capture_output=True, timeout=60)
        zombie.wait()


def test_dev_for_a_phone_shows_the_activation_page_at_the_network_address(bin_dir, short_tmp, path_without_passbridge):
    from test_emulator_network import RecordingBrowser, interface_addresses
    if not interface_addresses():
        pytest.skip("this machine has no IPv4 address but loopback: nothing else to reach the emulator at")
    directory = short_tmp / "dev"
    starter = dict(os.environ, PASSBRIDGE=str(bin_dir / "passbridge"))
    try:
        started = subprocess.run([CALL, "dev", "--state-dir", str(directory), "--host", "0.0.0.0"], env=starter,
                                 capture_output=True, text=True, timeout=60)
        assert started.returncode == 0, started.stderr
        public = (directory / "emulator.url").read_text().strip()
        assert urllib.parse.urlsplit(public).hostname in interface_addresses(), public
        assert f"(other devices: {public})" in started.stderr
        env = socket_env(bin_dir, str(directory / "passbridge.sock"), path_without_passbridge)
        proc = subprocess.Popen([CALL, "--requestor", "REF", "--no-web-view", "--mvpd", "MockMVPD", "getAuthentication"],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            line = next(line for line in proc.stderr if "on another device, open " in line)
            url, code = line.split("open ", 1)[1].split(" and enter the code ")
            assert url == f"{public}/activate?code={code.split(';')[0]}", url
            phone = RecordingBrowser()
            phone.run(url, {"code": code.split(";")[0], "username": "demo", "password": "demo"}.get)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert (proc.returncode, out) == (0, '{"status":1,"errorCode":""}\n'), err
        assert phone.loaded and all(loaded.startswith(public + "/") for loaded in phone.loaded), phone.loaded
    finally:
        subprocess.run([CALL, "dev", "stop", "--state-dir", str(directory)], env=starter, capture_output=True, timeout=60)


@pytest.fixture
def stdio_env(bin_dir, emulator_url, tmp_path) -> Dict[str, str]:
    env = dict(os.environ, PASSBRIDGE=str(bin_dir / "passbridge"))
    env["PASSBRIDGE_ARGS"] = f"--backend {emulator_url} --state-dir {tmp_path / 'state'} --software-statement {statement()}"
    return env


def test_failed_outcomes_exit_1_with_the_reason_on_stderr(stdio_env):
    not_logged_in = call(stdio_env, "--requestor", "REF", "checkAuthentication")
    assert (not_logged_in.returncode, not_logged_in.stdout) == (1, '{"status":0,"errorCode":"User Not Authenticated Error"}\n')
    assert not_logged_in.stderr == "passbridge-call: checkAuthentication failed: User Not Authenticated Error\n"
    cancelled = call(stdio_env, "--requestor", "REF", "getAuthentication")  # empty stdin: no provider chosen
    assert cancelled.returncode == 1 and json.loads(cancelled.stdout)["errorCode"] == "Provider not Selected Error"
    assert cancelled.stderr.splitlines()[-1] == "passbridge-call: getAuthentication failed: Provider not Selected Error"
    logout = call(stdio_env, "--requestor", "REF", "--no-web-view", "logout")  # status 0 is logout's success
    assert (logout.returncode, logout.stdout) == (0, '{"status":0,"errorCode":"User Not Authenticated Error"}\n'), logout.stderr
    misspelled = call(stdio_env, "getAuthorisation", '{"resource":"ch1"}')
    assert misspelled.returncode == 1 and misspelled.stdout == ""
    assert json.loads(misspelled.stderr)["data"] == {"method": "getAuthorisation", "closest": "getAuthorization"}
    assert call(stdio_env, "--requestor", "REF", "getSelectedProvider").returncode == 0


@pytest.mark.parametrize("params", ['{"webView":,}', '{"redirectUrl":"é",,}', '{"webView":false'])
def test_parse_error_offsets_count_bytes_into_the_callers_params(bin_dir, stdio_env, params):
    daemon = StdioDaemon(bin_dir, "--state-dir", stdio_env["PASSBRIDGE_ARGS"].split()[3], raw=True)
    alone = json.loads(daemon.roundtrip(params))["error"]["data"]
    assert daemon.stop() == 0
    # The daemon's own offset for the text alone, unless the text ended early: then the end of the params.
    expected = min(alone["offset"], len(params.encode()))
    one_shot = call(stdio_env, "init", params)
    assert one_shot.returncode == 1
    assert json.loads(one_shot.stderr)["data"] == {"reason": json.loads(one_shot.stderr)["data"]["reason"], "offset": expected}
    session = call(stdio_env, "--session", stdin=f"init {params}\n")
    assert json.loads(session.stdout)["error"]["data"]["offset"] == expected, session.stdout


def second_screen_runs(bin_dir: pathlib.Path, socket_path: str, runs: int, path: str) -> List[str]:
    """`second-screen.sh --socket` `runs` times on one daemon, the phone logging in, then a logout; the failures."""
    env = socket_env(bin_dir, socket_path, path)
    failures = []
    for run in range(runs):
        proc = subprocess.Popen(["bash", str(EXAMPLES / "second-screen.sh"), "--socket", socket_path], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline().strip()
            hint = proc.stdout.readline()
            if not first.startswith("REGCODE ") or " open " not in hint:
                out, err = proc.communicate(timeout=60)
                failures.append(f"run {run}: no code: {first} {hint} {out} {err}")
                continue
            code = first.split()[1]
            url = hint.split(" open ")[1].split(" and enter")[0]
            Browser().run(url, {"code": code, "mvpd": "MockMVPD", "username": "demo", "password": "demo"}.get)
            out, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
        if proc.returncode != 0 or not out.strip().endswith("logged in at MockMVPD"):
            failures.append(f"run {run}: exit {proc.returncode}: {out!r} {err!r}")
        logout = call(env, "--requestor", "REF", "--no-web-view", "logout")
        if logout.returncode != 0:
            failures.append(f"run {run}: logout: {logout.stdout} {logout.stderr}")
    return failures


def test_the_socket_second_screen_example_passes_50_of_50_runs_beside_a_cpu_hog(bin_dir, emulator_url, short_tmp,
                                                                               path_without_passbridge):
    """Five daemons (five devices) take ten runs each, side by side, while one busy loop per core competes for the
    CPU; before the session pipes were the script's own, 3 of 19 runs under load ended "PB_SESSION[0]: unbound"."""
    lanes, runs = 5, 10
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    daemons = []
    try:
        for lane in range(lanes):
            daemons.append(SocketDaemon(bin_dir, short_tmp / f"lane{lane}.sock", "--backend", emulator_url, "--state-dir",
                                        str(short_tmp / f"state{lane}"), "--software-statement", statement(),
                                        "--activation-url", f"{emulator_url}/activate"))
        with concurrent.futures.ThreadPoolExecutor(lanes) as pool:
            results = list(pool.map(lambda daemon: second_screen_runs(bin_dir, daemon.path, runs, path_without_passbridge),
                                    daemons))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for daemon in daemons:
            daemon.stop()
    failures = [failure for lane in results for failure in lane]
    assert failures == [], f"{len(failures)} of {lanes * runs} runs failed:\n" + "\n".join(failures)


def test_over_a_socket_only_the_relay_is_looked_for_never_the_daemon(bin_dir, daemon, tmp_path, path_without_passbridge):
    """`--socket` needs passbridge-relay and nothing else: with no daemon binary anywhere it answers; without a relay
    it says that the relay is missing, and where it looked, not that PASSBRIDGE (the daemon) should be set."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(CALL, alone / "passbridge-call")
    relays = tmp_path / "relays"
    relays.mkdir()
    (relays / "passbridge-relay").symlink_to(bin_dir / "passbridge-relay")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSBRIDGE")}
    env["PATH"] = f"{relays}{os.pathsep}{path_without_passbridge}"
    script = str(alone / "passbridge-call")
    stats = subprocess.run([script, "--socket", str(daemon.path), "rpc.stats"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert stats.returncode == 0 and json.loads(stats.stdout)["connections"] == 1, stats.stderr
    env["PATH"] = path_without_passbridge
    missing = subprocess.run([script, "--socket", str(daemon.path), "rpc.stats"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == (f"passbridge-call: --socket needs passbridge-relay, not the daemon: none beside this script "
                              f"({alone}), beside $PASSBRIDGE or in PATH (set PASSBRIDGE_RELAY to its path)\n")
