"""passbridge-call shows the human steps and the reasons (Clients/shell/passbridge-call): the real daemon against
the emulator; the user is played by browser.py (the login page, the activation page on the "phone").
"""
import contextlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from typing import List

import pytest

from clients_support import ROOT, emulator_url, path_without, statement  # noqa: F401  (fixture)
from rpc_helper import SocketDaemon, daemon_args

from browser import Browser  # noqa: E402

CALL = str(ROOT / "Clients" / "shell" / "passbridge-call")


@pytest.fixture
def env(bin_dir: pathlib.Path, emulator_url: str, tmp_path: pathlib.Path) -> dict:
    e = dict(os.environ)
    e["PASSBRIDGE"] = str(bin_dir / "passbridge")
    e["PASSBRIDGE_ARGS"] = (f"--backend {emulator_url} --state-dir {tmp_path / 'state'} --software-statement {statement()}"
                            f" --activation-url {emulator_url}/activate")
    return e


def start(env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([CALL, *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def read_until(proc: subprocess.Popen, marker: str) -> List[str]:
    """stderr lines up to the one containing ``marker`` (the call still waiting when it appears), read from the pipe a
    byte at a time: iterating over ``proc.stderr`` reads ahead into its buffer, and a line written just after the
    marker (the QR code) stayed there, unseen by ``proc.communicate()``, which reads the pipe itself."""
    assert proc.stderr is not None
    lines: List[str] = []
    line = bytearray()
    while byte := os.read(proc.stderr.fileno(), 1):
        if byte != b"\n":
            line += byte
            continue
        lines.append(line.decode())
        line.clear()
        if marker in lines[-1]:
            return lines
    raise AssertionError(f"no {marker!r} in {lines + [line.decode()]}")


def test_get_authentication_on_a_web_host_shows_the_login_page_and_ends_when_it_is_done(env, emulator_url):
    proc = start(env, "--requestor", "REF", "--mvpd", "MockMVPD", "getAuthentication")
    try:
        lines = read_until(proc, "open this page in a browser and log in, then press Enter (or give the address the page ended on): ")
        assert lines[0] == ("passbridge-call: choose a TV provider: MockMVPD (Mock Cable), TempPass (Free Preview), "
                            "MockSSO (Mock SSO TV), MockPicker (Mock Picker TV)")
        assert lines[1] == "passbridge-call: selecting MockMVPD"
        url = lines[-1].split("page ended on): ", 1)[1]
        assert url.startswith(emulator_url)
        time.sleep(0.3)
        assert proc.poll() is None  # waits for the user
        reached = Browser().run(url, {"username": "demo", "password": "demo"}.get, "adobepass://ios.app")
        assert reached is not None and reached.startswith("adobepass://ios.app")
        out, err = proc.communicate(reached + "\n", timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (0, '{"status":1,"errorCode":""}\n'), err


def test_a_logout_that_fails_exits_1_with_its_reason(env, emulator_url):
    """A logout the backend does not take keeps the login (Protocol/README.md, Lifecycle 4): its result is status
    0 as a logout's always is, but "Generic Authentication Error" with a reason, and the call exits 1 saying so.
    Before, it exited 0."""
    proc = start(env, "--requestor", "REF", "--mvpd", "MockMVPD", "getAuthentication")
    try:
        url = read_until(proc, "page ended on): ")[-1].split("page ended on): ", 1)[1]
        reached = Browser().run(url, {"username": "demo", "password": "demo"}.get, "adobepass://ios.app")
        out, err = proc.communicate(reached + "\n", timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (0, '{"status":1,"errorCode":""}\n'), err
    fault = json.dumps({"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "drop"}).encode()
    urllib.request.urlopen(urllib.request.Request(emulator_url + "/__admin/faults", data=fault, method="POST",
                                                  headers={"Content-Type": "application/json"}), timeout=10).close()
    try:
        logout = subprocess.run([CALL, "--requestor", "REF", "logout"], env=env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=60)
    finally:
        urllib.request.urlopen(urllib.request.Request(emulator_url + "/__admin/faults", method="DELETE"), timeout=10).close()
    assert logout.returncode == 1, logout.stdout + logout.stderr
    assert json.loads(logout.stdout)["errorCode"] == "Generic Authentication Error"
    # The reason is on the failure line, as the help's "METHOD failed: ERROR-CODE: description" says (from a new-user
    # pass: it was only on a line of its own before, the failure line ending at the error code).
    assert logout.stderr.splitlines()[-1].startswith("passbridge-call: logout failed: Generic Authentication Error: CFG404 "), logout.stderr
    check = subprocess.run([CALL, "--requestor", "REF", "checkAuthentication"], env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
    assert (check.returncode, check.stdout) == (0, '{"status":1,"errorCode":""}\n'), check.stderr


def test_get_authentication_without_web_view_shows_the_code_and_ends_when_the_phone_is_done(env, emulator_url):
    proc = start(env, "--requestor", "REF", "--no-web-view", "--mvpd", "MockMVPD", "getAuthentication")
    try:
        line = read_until(proc, "on another device, open ")[-1]
        url, code = line.split("open ", 1)[1].split(" and enter the code ")
        code = code.split(";")[0]
        assert url == f"{emulator_url}/activate?code={code}" and code.isalnum()
        time.sleep(0.3)
        assert proc.poll() is None
        fill = {"code": code, "mvpd": "MockMVPD", "username": "demo", "password": "demo"}.get
        Browser().run(url, fill)  # the phone
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (0, '{"status":1,"errorCode":""}\n'), err


def test_an_mvpd_id_the_dialog_did_not_offer_is_explained(env):
    run = subprocess.run([CALL, "--requestor", "REF", "--mvpd", "MockMvpd", "getAuthentication"], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    pb404 = {"id": "PB404", "errorId": "PB404", "level": "error",
             "message": "No MVPD 'MockMvpd' in the provider dialog; did you mean 'MockMVPD'?",
             "details": "The dialog offered: MockMVPD, TempPass, MockSSO, MockPicker"}
    assert json.loads(run.stdout) == {"status": 0, "errorCode": "Provider not Selected Error", "statuses": [pb404]}
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (
        "passbridge-call: getAuthentication failed: Provider not Selected Error: PB404 No MVPD 'MockMvpd' in the provider "
        "dialog; did you mean 'MockMVPD'? (The dialog offered: MockMVPD, TempPass, MockSSO, MockPicker)")
    explained = [line for line in run.stderr.splitlines() if line.startswith("passbridge-call: error PB404")]
    assert explained == ["passbridge-call: error PB404: No MVPD 'MockMvpd' in the provider dialog; did you mean "
                         "'MockMVPD'? (The dialog offered: MockMVPD, TempPass, MockSSO, MockPicker)"]


def test_an_unrelated_mvpd_id_gets_no_suggestion(env):
    run = subprocess.run([CALL, "--requestor", "REF", "--mvpd", "Comcast", "getAuthentication"], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    pb404 = {"id": "PB404", "errorId": "PB404", "level": "error", "message": "No MVPD 'Comcast' in the provider dialog",
             "details": "The dialog offered: MockMVPD, TempPass, MockSSO, MockPicker"}
    assert json.loads(run.stdout) == {"status": 0, "errorCode": "Provider not Selected Error", "statuses": [pb404]}
    assert run.returncode == 1 and "did you mean" not in run.stderr, run.stderr


def test_reasons_are_shown_as_written_not_as_json_escapes(env):
    """From a breaking pass: a reason holding a backslash or a line break showed JSON's escapes (a doubled backslash,
    a literal \\n); the text itself is shown now, a line break as a space to keep the line one."""
    run = subprocess.run([CALL, "--requestor", "REF", "--mvpd", 'X"y\\z\nw', "getAuthentication"], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "No MVPD 'X\"y\\z w' in the provider dialog" in run.stderr.splitlines()[-1], run.stderr


def test_a_call_that_needs_a_requestor_says_each_command_is_a_new_instance(env):
    run = subprocess.run([CALL, "getAuthorization", '{"resource":"ch1"}'], env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60)
    assert json.loads(run.stderr.splitlines()[0])["code"] == -32002
    assert run.returncode == 1
    assert "each passbridge-call is a new instance: pass --requestor ID" in run.stderr, run.stderr


def test_a_preauthorize_that_failed_before_any_decision_exits_1_with_its_reason(env):
    """preauthorize answers a failure with a top-level `status` (nobody logged in here); the result still goes to
    stdout, the reason to stderr, and the exit status says it failed. Decisions alone (even all refused) are not a
    failed call."""
    run = subprocess.run([CALL, "--requestor", "REF", "preauthorize", '{"resources":["ch1"]}'], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    assert json.loads(run.stdout)["status"]["code"] == "authentication_session_missing"
    assert run.stderr.splitlines()[-1] == ("passbridge-call: preauthorize failed: authentication_session_missing: "
                                           "The user is not authenticated")


def test_setup_failures_say_why(bin_dir, emulator_url, tmp_path):
    env = dict(os.environ, PASSBRIDGE=str(bin_dir / "passbridge"))
    env["PASSBRIDGE_ARGS"] = f"--backend {emulator_url} --state-dir {tmp_path / 'state'}"
    run = subprocess.run([CALL, "--requestor", "REF", "checkAuthentication"], env=env, capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == ("passbridge-call: setRequestor REF failed: R400 No software statement (passbridge was started "
                          "without --software-statement: pass --software-statement JWT|@FILE (the statement Adobe issued "
                          "for the application), or softwareStatement in init)\n")
    env["PASSBRIDGE_ARGS"] += f" --software-statement {statement()}"
    run = subprocess.run([CALL, "--requestor", "NOPE", "checkAuthentication"], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and run.stderr.startswith("passbridge-call: setRequestor NOPE failed: CFG400 ")


def test_device_acts_for_that_device_and_a_refused_init_stops_the_call(env):
    """`--device ID` sends `init {"deviceIdentifier": ID}` before setRequestor: the call acts for that device (a
    fleet's). An init the daemon refuses ends the call (exit 1, its error on stderr); a refused init used to be
    passed over, and the call went on as the store's own device."""
    def device_id(*args):
        return subprocess.run([CALL, "--requestor", "REF", *args, "getMetadata", '{"opCode":"METADATA_DEVICE_ID"}'], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)

    named = device_id("--device", "box-7 \"é\"")
    assert (named.returncode, json.loads(named.stdout)["metadata"]) == (0, 'box-7 "é"'), named.stderr
    own = device_id()
    assert own.returncode == 0 and json.loads(own.stdout)["metadata"] not in ("", 'box-7 "é"')
    # Control characters are escaped (a breaking pass: they went out raw, and the daemon's parse error read as
    # "init failed").
    control = device_id("--device", "box\x01\x1f")
    assert (control.returncode, json.loads(control.stdout)["metadata"]) == (0, "box\x01\x1f"), control.stderr
    refused = device_id("--device", "d" * 257)
    assert (refused.returncode, refused.stdout) == (1, "")
    error = json.loads(refused.stderr.removeprefix("passbridge-call: init failed: "))
    assert error["data"] == {"param": "deviceIdentifier", "reason": "must be at most 256 characters"}


@pytest.mark.parametrize("args, message", [
    (["--timeout", "abc", "rpc.discover"], "--timeout needs a number of seconds, got 'abc'"),
    # A breaking pass: 0 was taken, and the call then hung with no output.
    (["--timeout", "0", "rpc.discover"], "--timeout needs a number of seconds above 0, got '0'"),
    (["--timeout", "0.00", "rpc.discover"], "--timeout needs a number of seconds above 0, got '0.00'"),
    # A second breaking pass: bytes that are not UTF-8 went out raw, and the daemon's parse error read "init failed".
    (["--requestor", "REF", "--device", b"dev\xff".decode("utf-8", "surrogateescape"), "checkAuthentication"],
     "--device needs UTF-8 text"),
    (["--bogus", "rpc.discover"], "unknown option --bogus"),
    (["--requestor"], "--requestor needs a value"),
    ([], "METHOD is missing"),
    (["--no-web-view", "getAuthentication"], "--no-web-view needs --requestor"),
    (["--device", "box-7", "checkAuthentication"], "--device needs --requestor"),
    (["dev", "--bogus"], "dev: unexpected argument --bogus"),
    (["dev", "--host"], "--host needs a value"),
    (["dev", "stop", "--host", "0.0.0.0"], "dev stop takes only --state-dir"),
    (["--mvpd", "MockMVPD", "--session"],
     "--mvpd answers the dialog of one call; a session answers it with a setSelectedProvider line"),
])
def test_argument_errors_are_one_line_and_exit_2(env, args, message):
    run = subprocess.run([CALL, *args], env=env, capture_output=True, text=True, timeout=30)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"passbridge-call: {message} (passbridge-call --help shows the usage)\n"


def test_version_is_the_protocols(env):
    """From a new-user pass: `--version` was an unknown option. It prints info.version of Protocol/openrpc.json, as
    `passbridge --version` does."""
    version = json.loads((ROOT / "Protocol" / "openrpc.json").read_text())["info"]["version"]
    run = subprocess.run([CALL, "--version"], env=env, capture_output=True, text=True, timeout=30)
    assert (run.returncode, run.stdout, run.stderr) == (0, f"passbridge-call {version}\n", "")


def test_a_missing_socket_fails_at_once_naming_the_path(env, tmp_path):
    path = str(tmp_path / "gone.sock")
    started = time.monotonic()
    run = subprocess.run([CALL, "--socket", path, "rpc.discover"], env=env, capture_output=True, text=True, timeout=30)
    assert time.monotonic() - started < 2
    assert (run.returncode, run.stderr) == (2, f"passbridge-call: cannot connect to {path}: no such socket\n")
    # A file that is there but no socket (a fleet operator's pass: "no such socket").
    (tmp_path / "daemon.log").write_text("")
    run = subprocess.run([CALL, "--socket", str(tmp_path / "daemon.log"), "rpc.discover"], env=env, capture_output=True,
                         text=True, timeout=30)
    assert (run.returncode, run.stderr) == (2, f"passbridge-call: cannot connect to {tmp_path / 'daemon.log'}: it is not a socket\n")


def socket_session(env, path: pathlib.Path, timeout: str, lines: str) -> subprocess.Popen:
    """`passbridge-call --session` over the socket at `path`, `lines` written to it (its input left open)."""
    proc = subprocess.Popen([CALL, "--timeout", timeout, "--socket", str(path), "--session"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(lines)
    proc.stdin.flush()
    return proc


def test_a_daemon_that_ends_a_socket_session_is_named_as_the_one_that_closed_it(env, bin_dir, emulator_url, tmp_path):
    """Over --socket the coprocess is passbridge-relay, whose exit status 1 means "the daemon closed first": the
    message used to say "the daemon exited with status 1" whatever the daemon's own status (0 here, a SIGTERM)."""
    path = tmp_path / "pb.sock"
    daemon = SocketDaemon(bin_dir, path, *daemon_args(emulator_url, tmp_path / "state"))
    try:
        proc = socket_session(env, path, "60", "init\nwait setToken\n")
        assert json.loads(proc.stdout.readline())["result"] == {}  # init answered: the session now waits
        assert daemon.stop() == 0
        _, stderr = proc.communicate(timeout=30)
        assert (proc.returncode, stderr.splitlines()[-1]) == (2, f"passbridge-call: the daemon at {path} closed the connection")
    finally:
        if daemon.process.poll() is None:
            daemon.process.kill()

def test_a_call_waiting_for_the_user_ends_when_the_daemon_does(env, bin_dir, emulator_url, tmp_path):
    """From a new-user pass: the daemon stopped (SIGTERM) while a one-shot login waited for the user's Enter after
    the login page; the call went on waiting for that line, with the daemon gone. Now it ends at once, naming the
    daemon that closed the connection; and (from a later new-user pass) after printing the answer the daemon sent
    before it stopped, which the call used to drop."""
    path = tmp_path / "pb.sock"
    daemon = SocketDaemon(bin_dir, path, *daemon_args(emulator_url, tmp_path / "state"))
    try:
        proc = start(env, "--socket", str(path), "--requestor", "REF", "--mvpd", "MockMVPD", "getAuthentication")
        read_until(proc, "page ended on): ")
        assert daemon.stop() == 0
        proc.wait(timeout=30)  # stdin stays open: nobody presses Enter
        assert proc.stderr is not None and proc.stdout is not None
        stderr = proc.stderr.read()
        assert (proc.returncode, stderr.splitlines()[-1]) == (2, f"passbridge-call: the daemon at {path} closed the connection")
        # The login the daemon cancelled as it stopped (Protocol/README.md, Lifecycle 6).
        (answer,) = proc.stdout.read().splitlines()
        assert json.loads(answer) == {"status": 0, "errorCode": "Provider not Selected Error"}, answer
    finally:
        proc.kill()
        if daemon.process.poll() is None:
            daemon.process.kill()


def spawned_daemon(shell: subprocess.Popen) -> int:
    """The pid of the passbridge process a `passbridge-call` spawned (below the script, at any depth)."""
    todo = [str(shell.pid)]
    while todo:
        parent = todo.pop()
        for child in pathlib.Path(f"/proc/{parent}/task/{parent}/children").read_text().split():
            if pathlib.Path(f"/proc/{child}/comm").read_text().strip() == "passbridge":
                return int(child)
            todo.append(child)
    raise AssertionError(f"no passbridge process below {shell.pid}")


def session_past_init(env) -> subprocess.Popen:
    """A `passbridge-call --session` (its own daemon) whose `init` line has been answered."""
    proc = subprocess.Popen([CALL, "--timeout", "60", "--session"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("init\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"] == {}
    return proc


def coprocess_ended(shell: subprocess.Popen) -> bool:
    """Whether the script's one child (the subshell that runs the daemon or passbridge-relay, and ends with it) has
    ended: gone, or a zombie not reaped yet."""
    children = pathlib.Path(f"/proc/{shell.pid}/task/{shell.pid}/children").read_text().split()
    for child in children:
        try:
            if pathlib.Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                return False
        except FileNotFoundError:
            pass
    return True


@contextlib.contextmanager
def session_whose_daemon_ended(env, bin_dir, emulator_url, tmp_path, transport):
    """A `--session` over `transport` (stdio: the daemon its child; socket: through passbridge-relay) that has had
    `init` answered, and whose daemon then ended with SIGTERM; yields (the session, the line that names the close)."""
    path = tmp_path / "pb.sock"
    daemon = None
    if transport == "socket":
        daemon = SocketDaemon(bin_dir, path, *daemon_args(emulator_url, tmp_path / "state"))
        command = [CALL, "--timeout", "60", "--socket", str(path), "--session"]
    else:
        command = [CALL, "--timeout", "60", "--session"]
    proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write("init\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"] == {}
        if daemon is not None:
            assert daemon.stop() == 0
        else:
            os.kill(spawned_daemon(proc), 15)
        closed = f"passbridge-call: the daemon at {path} closed the connection" if daemon else "passbridge-call: the daemon closed the connection"
        yield proc, closed
    finally:
        if proc.poll() is None:
            proc.kill()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(BrokenPipeError):
                stream.close()
        if daemon is not None and daemon.process.poll() is None:
            daemon.process.kill()


@pytest.mark.parametrize("transport", ["stdio", "socket"])
def test_a_daemon_that_ends_between_two_session_lines_is_named_at_the_next_line(env, bin_dir, emulator_url, tmp_path, transport):
    """The daemon ends (SIGTERM) while the session waits for its next input line. At that line the script used to
    write into the closed pipe, and stderr got bash's own "printf: write error: Broken pipe" and "cannot write to
    the daemon"; now the line is not sent, and the one message says who closed the connection (exit 2)."""
    with session_whose_daemon_ended(env, bin_dir, emulator_url, tmp_path, transport) as (proc, closed):
        deadline = time.monotonic() + 30
        while not coprocess_ended(proc):
            assert time.monotonic() < deadline, "the daemon did not end"
            time.sleep(0.01)
        stdout, stderr = proc.communicate("rpc.discover\n", timeout=30)
        if transport == "stdio":
            expected = [closed]
        else:
            # passbridge-relay's own line said "before all input was sent" though everything read had been sent.
            expected = ["passbridge-relay: the daemon closed the connection before the end of input", closed]
        assert (proc.returncode, stdout, stderr.splitlines()) == (2, "", expected)


@pytest.mark.parametrize("transport", ["stdio", "socket"])
def test_a_session_waiting_for_input_ends_by_itself_when_the_daemon_ends(env, bin_dir, emulator_url, tmp_path, transport):
    """The daemon ends while the session waits for its next input line, stdin still open: the session ends at once,
    exit 2, saying so. It used to wait for another line first, for as long as the host kept stdin open (a breaking
    pass); the script now handles what the daemon sends while it waits for input."""
    with session_whose_daemon_ended(env, bin_dir, emulator_url, tmp_path, transport) as (proc, closed):
        assert proc.wait(timeout=30) == 2
        assert proc.stderr.read().splitlines()[-1] == closed
        assert proc.stdout.read() == ""


def test_a_session_whose_daemon_is_killed_amid_background_requests_says_so_in_one_line(env):
    """SIGKILL while thousands of "&" requests are being written: the script meets the end either reading or
    writing. A failed write said "cannot write to the daemon", and bash added its own "Killed" report of the
    coprocess (a breaking pass); both ways now say how the daemon ended, in one line, and stdout holds answers only.
    Three runs."""
    for _ in range(3):
        proc = session_past_init(env)
        assert proc.stdin is not None and proc.stdout is not None
        daemon = spawned_daemon(proc)

        def flood():
            with contextlib.suppress(BrokenPipeError, ValueError):
                for _ in range(20000):
                    proc.stdin.write("& rpc.stats\n")
                proc.stdin.close()

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        assert json.loads(proc.stdout.readline())["result"]["connections"] == 1  # the flood has reached the daemon
        os.kill(daemon, 9)
        stdout, stderr = proc.communicate(timeout=60)
        writer.join(timeout=30)
        assert proc.returncode == 2
        assert stderr.splitlines() == ["passbridge-call: the daemon exited with status 137"], stderr
        assert all(json.loads(line)["jsonrpc"] == "2.0" for line in stdout.splitlines())


@pytest.mark.parametrize("input_ends", [False, True])
def test_a_session_whose_daemon_is_killed_while_it_waits_for_input_says_so_in_one_line(env, input_ends):
    """SIGKILL (or a crash) while the session waits for its next line. With the input kept open the script finds
    the end itself and says so. With the input ending at once the session ended 0, as if all were well, and the
    only word of the end was bash's own report of the coprocess ("line N: PID Killed  coproc DAEMON …"), printed
    once a command substitution ran. Both now end 2 with the one line that says how the daemon ended."""
    proc = session_past_init(env)
    assert proc.stdin is not None
    os.kill(spawned_daemon(proc), 9)
    if input_ends:
        proc.stdin.close()
    assert proc.wait(timeout=60) == 2
    assert proc.stderr is not None
    assert proc.stderr.read().splitlines() == ["passbridge-call: the daemon exited with status 137"]


def test_a_session_wait_for_a_notification_that_never_comes_names_it(env):
    run = subprocess.run([CALL, "--timeout", "1", "--session"], env=env, input="init\nwait setTokn\n",
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == "passbridge-call: no setTokn notification from the daemon within 1s"


def test_a_session_wait_counts_a_notification_that_came_before_the_previous_lines_response(env):
    """From a new-user pass: a login's navigateToUrl comes before setSelectedProvider's response, which the session
    reads before the next line; "wait navigateToUrl" then read on for one more and timed out. A wait now counts
    what arrived since the previous wait, once: the second "wait navigateToUrl" has none left and times out."""
    lines = ("& getAuthentication\nwait displayProviderDialog\nsetSelectedProvider {\"mvpdId\":\"MockMVPD\"}\n"
             "wait navigateToUrl\nhandleExternalURL {\"url\":\"adobepass://ios.app\"}\n")
    run = subprocess.run([CALL, "--timeout", "5", "--requestor", "REF", "--session"], env=env, input=lines,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [4, 5, 3]
    assert answers[2]["result"]["status"] == 0  # the login: the page came back without one (N130)
    again = subprocess.run([CALL, "--timeout", "1", "--requestor", "REF", "--session"], env=env,
                           input=lines.replace("wait navigateToUrl\n", "wait navigateToUrl\nwait navigateToUrl\n"),
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2
    assert again.stderr.splitlines()[-1] == "passbridge-call: no navigateToUrl notification from the daemon within 1s"


def test_session_waits_take_any_notification_no_wait_took_and_refuse_a_name_that_is_none(env):
    """From a breaking pass: a wait took its notification and threw away the ones before it, so "wait status" then
    "wait setAuthenticationStatus" timed out though both had come (setAuthenticationStatus first); and "wait" with
    no name or a name with spaces was sent to the daemon, or matched by squeezing the spaces out."""
    lines = ("& getAuthentication\nwait displayProviderDialog\nsetSelectedProvider {\"mvpdId\":null}\nwait status\n"
             "wait setAuthenticationStatus\nwait\nwait set Authentication Status\n")
    run = subprocess.run([CALL, "--timeout", "5", "--requestor", "REF", "--session"], env=env, input=lines,
                         capture_output=True, text=True, timeout=60)
    refusals = [line for line in run.stderr.splitlines() if line.startswith("passbridge-call:")]
    assert refusals == ["passbridge-call: wait needs one notification name, got ''",
                        "passbridge-call: wait needs one notification name, got 'set Authentication Status'"], run.stderr
    assert run.returncode == 1  # the refused lines; every response was a result
    assert [json.loads(line)["id"] for line in run.stdout.splitlines()] == [4, 3]


def test_a_background_result_holding_error_members_is_no_error(env):
    """From a breaking pass: an "&" line's response was taken for an error response when its result held an "error"
    member anywhere (rpc.discover's document does; so does a preauthorize's refused item), and the session exited 1."""
    run = subprocess.run([CALL, "--timeout", "10", "--session"], env=env, input="& rpc.discover\n", capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert '"error":' in run.stdout and json.loads(run.stdout)["result"]


def test_a_failure_line_gives_the_calls_own_reasons_not_the_setups(env, emulator_url):
    """From a breaking pass: a warning of the --requestor setup (CFG100, the device clock off) ended up on the call's
    failure line as if it were the call's reason."""
    clock = urllib.request.Request(emulator_url + "/__admin/clock", data=json.dumps({"advanceSeconds": 600}).encode(),
                                   method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(clock, timeout=10).close()
    run = subprocess.run([CALL, "--requestor", "REF", "checkAuthentication"], env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert any(line.startswith("passbridge-call: setRequestor REF: CFG100 ") for line in run.stderr.splitlines()), run.stderr
    assert run.stderr.splitlines()[-1] == "passbridge-call: checkAuthentication failed: User Not Authenticated Error"


def test_a_session_call_held_by_the_provider_dialog_has_it_cancelled_and_says_why(env):
    """From two new-user passes: a getAuthentication line in a session waits for its answer, which could come only
    after a later line answered the dialog; it waited the whole --timeout (the first time saying only "no answer from
    the daemon"). The dialog is now cancelled at once and the session goes on with the next line."""
    run = subprocess.run([CALL, "--timeout", "20", "--requestor", "REF", "--session"], env=env,
                         input="getAuthentication\ngetSelectedProvider\n", capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert answers[0] == {"jsonrpc": "2.0", "id": 3, "result": {"status": 0, "errorCode": "Provider not Selected Error"}}
    assert answers[1]["id"] == 4 and answers[1]["result"] == {"mvpd": None}
    assert ("passbridge-call: request 3 waits for its response, so no later line can choose a provider: the dialog is "
            "cancelled (send the call as \"& METHOD\", then setSelectedProvider)") in run.stderr.splitlines()


def test_a_web_login_with_stdin_closed_says_what_to_do(env):
    """Before, the redirect URL went back unasked and the login ended with a bare "Generic Authentication Error"."""
    run = subprocess.run([CALL, "--requestor", "REF", "--mvpd", "MockMVPD", "getAuthentication"], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["errorCode"] == "Provider not Selected Error"
    assert "Generic Authentication Error" not in run.stderr
    told = [line for line in run.stderr.splitlines() if "stdin is closed" in line]
    assert len(told) == 1 and "cancelling the login" in told[0] and "--no-web-view" in told[0], run.stderr


def test_a_provider_dialog_with_stdin_closed_asks_for_mvpd(env):
    run = subprocess.run([CALL, "--requestor", "REF", "getAuthentication"], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "passbridge-call: stdin is closed, so nobody can choose: pass --mvpd ID" in run.stderr.splitlines(), run.stderr


@pytest.mark.parametrize("installed", [True, False], ids=["with-qrencode", "without-qrencode"])
def test_the_page_to_open_is_also_a_qr_code_when_qrencode_is_installed(env, tmp_path, installed):
    path = path_without({"qrencode"}, tmp_path / "path")
    if installed:
        fake = tmp_path / "fake-bin"
        fake.mkdir()
        (fake / "qrencode").write_text('#!/bin/sh\necho "QR $*"\n')
        (fake / "qrencode").chmod(0o755)
        path = f"{fake}{os.pathsep}{path}"
    proc = start(dict(env, PATH=path), "--requestor", "REF", "--no-web-view", "--mvpd", "MockMVPD", "getAuthentication")
    try:
        line = read_until(proc, "on another device, open ")[-1]
        url, code = line.split("open ", 1)[1].split(" and enter the code ")
        Browser().run(url, {"code": code.split(";")[0], "username": "demo", "password": "demo"}.get)  # the phone
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (0, '{"status":1,"errorCode":""}\n'), err
    shown = [line for line in err.splitlines() if line.startswith("QR ")]
    # stderr is a pipe here, not a terminal: the plain UTF-8 blocks, without colour codes.
    assert shown == ([f"QR -t UTF8 {url}"] if installed else []), err


def test_a_session_leaves_the_dialog_of_an_ampersand_login_to_its_later_line(env):
    """From a breaking pass: the dialog of an "&" login came while a later line (checkAuthentication) waited for its
    response, and was cancelled as if it were that line's; the user's setSelectedProvider line then found no login.
    The dialog is cancelled only for a waiting login line with no "&" login pending."""
    lines = '& getAuthentication\ncheckAuthentication\nsetSelectedProvider {"mvpdId":"TempPass"}\n'
    run = subprocess.run([CALL, "--timeout", "20", "--requestor", "REF", "--session"], env=env, input=lines,
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    answers = {message["id"]: message for message in map(json.loads, run.stdout.splitlines())}
    assert answers[3]["result"]["status"] == 1, answers  # the TempPass login the last line chose
    assert answers[4]["result"]["status"] == 0 and answers[5]["result"]["status"] == 1, answers
    assert "the dialog is cancelled" not in run.stderr


def test_a_socket_the_caller_may_not_use_is_not_called_a_killed_daemons(env, bin_dir, emulator_url, short_tmp, tmp_path):
    """From a new-user pass (an operator): a caller without permission on the running daemon's socket was told that
    no daemon answers and to start it again, the advice for a socket a killed daemon left behind. The relay now
    tells the two apart (exit 3 for a refused connection), and this one is just "cannot connect"."""
    if os.geteuid() != 0:
        pytest.skip("calls as another user: needs root")
    # The script and the relay where that user can run them (a clone may sit in a folder only root can enter).
    short_tmp.chmod(0o755)
    call, relay = short_tmp / "passbridge-call", short_tmp / "passbridge-relay"
    shutil.copy(CALL, call)
    shutil.copy(bin_dir / "passbridge-relay", relay)
    path = short_tmp / "pb.sock"
    daemon = SocketDaemon(bin_dir, path, *daemon_args(emulator_url, tmp_path / "state"))
    try:
        assert path.stat().st_mode & 0o777 == 0o600
        run = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(call), "--socket", str(path),
                              "checkAuthentication"], env=env | {"PASSBRIDGE_RELAY": str(relay)}, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=30)
        assert run.returncode == 2
        assert run.stderr.splitlines() == [f"passbridge-relay: cannot connect to {path}: Permission denied",
                                           f"passbridge-call: cannot connect to the daemon at {path}"], run.stderr
    finally:
        daemon.stop()


def test_a_socket_left_by_a_killed_daemon_is_not_called_a_closed_connection(env, tmp_path):
    """From a new-user pass: after a daemon was killed its socket file stays and refuses connections; the relay said
    so, and then passbridge-call said "the daemon ... closed the connection", of a connection that never was."""
    import socket as sockets
    path = tmp_path / "stale.sock"
    listener = sockets.socket(sockets.AF_UNIX)
    listener.bind(str(path))
    listener.close()  # the file stays, nobody listens
    run = subprocess.run([CALL, "--socket", str(path), "checkAuthentication"], env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert lines[0].startswith(f"passbridge-relay: cannot connect to {path}: Connection refused"), lines
    assert lines[-1].startswith(f"passbridge-call: no daemon answers at {path} "), lines
    assert not any("closed the connection" in line for line in lines), lines


def relays_serving(path: pathlib.Path) -> List[int]:
    """The passbridge-relay processes connected to the socket at `path` (by their command line, from /proc)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"passbridge-relay") and str(path).encode() in argv:
            found.append(int(entry.name))
    return found


def test_a_call_that_times_out_leaves_no_relay_behind(env, short_tmp):
    """From a new-user pass: after "no answer within 1s" the relay went on waiting for the daemon's answer, under an
    orphaned bash, and said "1 of 1 requests unanswered" on the caller's stderr once the daemon answered. Here the
    socket's server takes the connection and never answers: the relay outlived the call for good."""
    import socket as sockets
    path = short_tmp / "silent.sock"
    server = sockets.socket(sockets.AF_UNIX)
    server.bind(str(path))
    server.listen()
    try:
        run = subprocess.run([CALL, "--timeout", "1", "--socket", str(path), "rpc.discover"], env=env, capture_output=True,
                             text=True, timeout=30)
        assert run.returncode == 2
        assert run.stderr.splitlines()[-1] == "passbridge-call: no answer from the daemon within 1s", run.stderr
        deadline = time.monotonic() + 10
        while relays_serving(path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert relays_serving(path) == [], "a relay outlived the call"
    finally:
        server.close()


def test_a_daemon_that_never_closes_after_the_last_answer_does_not_hold_the_call(env, bin_dir, emulator_url, tmp_path):
    """From a breaking pass: a socket daemon stopped (SIGSTOP) after answering held passbridge-call for ever, its
    --timeout ignored, waiting for the daemon's close. The call now gives up that wait after --timeout: its answer
    printed, exit 2, and no relay left behind."""
    path = tmp_path / "pb.sock"
    daemon = SocketDaemon(bin_dir, path, *daemon_args(emulator_url, tmp_path / "state"))
    try:
        proc = socket_session(env, path, "1", "rpc.stats\n")
        assert "instances" in json.loads(proc.stdout.readline())["result"]
        daemon.process.send_signal(signal.SIGSTOP)
        stdout, stderr = proc.communicate(timeout=30)  # its input ends: the session ends, and awaits the close
        assert (proc.returncode, stdout) == (2, ""), stderr
        assert stderr.splitlines()[-1] == "passbridge-call: the daemon did not close the connection within 1s of the last answer"
        assert relays_serving(path) == []
    finally:
        daemon.process.send_signal(signal.SIGCONT)
        assert daemon.stop() == 0
