"""The passbridge command line and the protocol document (Protocol/README.md): rpc.discover serves Protocol/openrpc.json,
the daemon serves exactly the host→daemon methods it lists, the backend and state flags, and the second screen."""
import json
import os
import shutil
import signal
import pathlib
import re
import stat
import subprocess
import time
import urllib.request

import pytest

from rpc_helper import (NOT_SELECTED, SOFTWARE_STATEMENT, SocketDaemon, StdioDaemon, check_against_openrpc, daemon_args,
                        follow_to_redirect_url)

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT / "Protocol" / "openrpc.json").read_text())


def run_passbridge(bin_dir, *args, env=None, stdin=""):
    return subprocess.run([str(bin_dir / "passbridge"), *args], input=stdin, capture_output=True, text=True, timeout=60,
                          env=env)


def test_rpc_discover_returns_the_protocol_document(bin_dir, tmp_path):
    daemon = StdioDaemon(bin_dir, "--state-dir", str(tmp_path / "state"))
    assert daemon.call("rpc.discover") == DOCUMENT
    assert daemon.stop() == 0


def minified(document) -> bytes:
    """The document minified, by definition: no whitespace between tokens, members in the file's order, non-ASCII
    and `/` unescaped, UTF-8 encoded."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def test_rpc_discover_serves_the_protocol_file_minified_byte_for_byte(bin_dir, tmp_path):
    request = b'{"jsonrpc":"2.0","method":"rpc.discover","id":1}\n'
    run = subprocess.run([str(bin_dir / "passbridge"), "--stdio", "--state-dir", str(tmp_path / "state")], input=request,
                         capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == b'{"jsonrpc":"2.0","id":1,"result":' + minified(DOCUMENT) + b"}\n"


def test_no_copy_of_the_protocol_document_under_sources():
    """The document lives in Protocol/openrpc.json only; the build compiles it in (Plugins/EmbedOpenRPC)."""
    marks = [DOCUMENT["info"]["description"], DOCUMENT["methods"][0]["description"], minified(DOCUMENT).decode()[:60]]
    sources = [path for path in (ROOT / "Sources").rglob("*") if path.is_file()]
    assert len(sources) > 100
    for path in sources:
        text = path.read_bytes().decode("utf-8", "replace")
        assert '"openrpc"' not in text, path
        for mark in marks:
            assert mark not in text, path


def test_the_daemon_serves_exactly_the_listed_host_methods(bin_dir, tmp_path):
    host = [m["name"] for m in DOCUMENT["methods"] if m.get("x-direction") != "daemon-to-host"]
    daemon_to_host = [m["name"] for m in DOCUMENT["methods"] if m.get("x-direction") == "daemon-to-host"]
    assert "partnerSSO/checkAccessStatus" in daemon_to_host and "partnerSSO/requestAccountMetadata" in daemon_to_host
    assert {"setToken", "navigateToUrl", "status", "displayProviderDialog"} <= set(daemon_to_host)
    daemon = StdioDaemon(bin_dir, "--state-dir", str(tmp_path / "state"))
    for name in host:
        _, response = daemon.exchange(name, {})
        assert response.get("error", {}).get("code") != -32601, name
    for name in daemon_to_host + ["getToken", "rpc.other"]:
        _, response = daemon.exchange(name, {})
        assert response["error"]["code"] == -32601, name
    assert daemon.stop() == 0


def test_an_unknown_method_is_answered_with_the_served_method_near_it(bin_dir, tmp_path):
    daemon = StdioDaemon(bin_dir, "--state-dir", str(tmp_path / "state"))
    _, near = daemon.exchange("getAuthorisation", {"resource": "ch1"})
    assert near["error"] == {"code": -32601, "message": "Method not found: 'getAuthorisation'; did you mean 'getAuthorization'?",
                             "data": {"method": "getAuthorisation", "closest": "getAuthorization"}}
    _, far = daemon.exchange("frobnicate", {})
    assert far["error"] == {"code": -32601, "message": "Method not found", "data": {"method": "frobnicate"}}
    # A callback's name is the daemon's to send: no "did you mean 'getAuthenticationToken'?" for it.
    for name in ("setAuthenticationStatus", "partnerSSO/checkAccessStatus", "status"):
        _, sent_by_daemon = daemon.exchange(name, {"status": 1})
        assert sent_by_daemon["error"]["message"] == f"Method not found: '{name}' is sent by the daemon to the host", name
        assert sent_by_daemon["error"]["data"]["method"] == name and "closest" not in sent_by_daemon["error"]["data"]
    _, other_case = daemon.exchange("SetAuthenticationStatus", {})
    assert other_case["error"]["message"] == (
        "Method not found: 'SetAuthenticationStatus' ('setAuthenticationStatus') is sent by the daemon to the host")
    assert daemon.stop() == 0


def test_backend_emulator_works_without_a_software_statement(bin_dir, tmp_path):
    daemon = StdioDaemon(bin_dir, "--backend", "emulator", "--state-dir", str(tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication") == {"status": 0, "errorCode": "User Not Authenticated Error"}
    assert daemon.stop() == 0
    log = daemon.log()
    # An app that spawns the daemon shares its stderr: at the default level nothing about the child shows there.
    assert log == "", log
    assert "/api/v2/REF/configuration" not in log, "the emulator's request log shows only at --log-level debug"


def test_backend_emulator_says_where_its_emulator_runs_at_debug_level(bin_dir, tmp_path):
    daemon = StdioDaemon(bin_dir, "--backend", "emulator", "--state-dir", str(tmp_path / "state"), "--log-level", "debug")
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.stop() == 0
    started = [line for line in daemon.log().splitlines() if "pass-emulator started at http://127.0.0.1:" in line]
    assert len(started) == 1 and " debug emulator: " in started[0], daemon.log()
    # One line per backend exchange, made only at this level (the default level above writes none).
    exchanges = [line for line in daemon.log().splitlines() if " debug engine: GET /api/v2/REF/configuration → 200" in line]
    assert len(exchanges) == 1, daemon.log()


def test_the_start_up_line_names_the_transport_the_backend_and_the_store(bin_dir, tmp_path, short_tmp):
    """Once it serves, the daemon says what: the transport, the backend's base URL and the store's file; its last
    line says it stopped, with its exit status. On a socket at the default level (an operator could not tell from
    the log which backend and store a daemon used, nor that it had finished stopping); over stdio at debug only, as
    a host that spawns the daemon shares its stderr (quiet at the default level)."""
    state = tmp_path / "state"
    serving = f"backend http://127.0.0.1:9, store {state / 'passbridge.sqlite'}"
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", "--backend", "http://127.0.0.1:9", "--state-dir", str(state))
    try:
        line = [line for line in daemon.wait_for_log("listening on").splitlines() if "listening on" in line][0]
        assert line.endswith(f" info main: listening on {short_tmp / 'pb.sock'}; {serving}"), line
    finally:
        assert daemon.stop() == 0
    assert daemon.log().splitlines()[-1].endswith(" info main: stopped, exit status 0"), daemon.log()
    debug = run_passbridge(bin_dir, "--backend", "http://127.0.0.1:9", "--state-dir", str(state), "--log-level", "debug")
    assert debug.returncode == 0 and f" debug main: serving stdin and stdout; {serving}\n" in debug.stderr, debug.stderr
    assert debug.stderr.splitlines()[-1].endswith(" debug main: stopped, exit status 0"), debug.stderr
    quiet = run_passbridge(bin_dir, "--backend", "http://127.0.0.1:9", "--state-dir", str(state))
    assert (quiet.returncode, quiet.stderr) == (0, "")


def test_on_a_socket_backend_emulator_names_its_emulator_beside_the_socket(bin_dir, tmp_path, short_tmp):
    """A socket's clients never see the child start: at the default level, the line that names the socket names
    the emulator too, and its second-screen page answers there."""
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", "--backend", "emulator", "--state-dir", str(tmp_path / "state"))
    try:
        line = [line for line in daemon.wait_for_log("listening on").splitlines() if "listening on" in line][0]
        match = re.search(r" info main: listening on (\S+); backend pass-emulator at (http://127\.0\.0\.1:\d+), store \S+$", line)
        assert match and match[1] == str(short_tmp / "pb.sock"), line
        with urllib.request.urlopen(match[2] + "/activate", timeout=10) as page:
            assert page.status == 200
    finally:
        assert daemon.stop() == 0


@pytest.mark.parametrize("script, why", [
    ("echo boom >&2; exit 3", "exited (status 3) before printing its base URL"),
    ("echo 'not a URL'; exec sleep 30", "printed 'not a URL' where its base URL was expected"),
])
def test_an_emulator_child_that_fails_is_reported_as_it_failed(bin_dir, tmp_path, script, why):
    """passbridge beside a pass-emulator that fails: start-up ends with status 1 and one line saying how the child
    failed (it only said it 'did not print its base URL'); --log-level debug shows the child's own log."""
    folder = tmp_path / "bin"
    folder.mkdir()
    shutil.copy(bin_dir / "passbridge", folder / "passbridge")
    fake = folder / "pass-emulator"
    fake.write_text("#!/bin/sh\n" + script + "\n")
    fake.chmod(0o755)
    result = subprocess.run([str(folder / "passbridge"), "--backend", "emulator", "--state-dir", str(tmp_path / "state")],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"passbridge: --backend emulator: pass-emulator {why}; --log-level debug shows its log\n"
    if "boom" in script:
        debug = subprocess.run([str(folder / "passbridge"), "--backend", "emulator", "--state-dir", str(tmp_path / "state"),
                                "--log-level", "debug"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        assert debug.returncode == 1 and "boom" in debug.stderr, debug.stderr


def test_backend_emulator_starts_and_stops_its_own_emulator(bin_dir, tmp_path):
    daemon = StdioDaemon(bin_dir, "--backend", "emulator", "--state-dir", str(tmp_path / "state"),
                         "--software-statement", SOFTWARE_STATEMENT, "--log-level", "debug")
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = daemon.mark()
    daemon.send("getAuthentication")
    _, dialog = daemon.notification("displayProviderDialog", start)
    assert dialog["params"]["mvpds"][0]["ID"] == "MockMVPD"
    assert daemon.stop() == 0
    log = daemon.log()
    child = int(re.search(r"pass-emulator started at http://127\.0\.0\.1:\d+ \(pid (\d+)\)", log).group(1))
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}"), "the emulator child outlived passbridge"


def held_by_the_emulator_child(bin_dir, tmp_path, *flags: str):
    """`passbridge --stdio --backend emulator --log-level debug FLAGS…` with a setRequestor whose configuration
    request its emulator child holds (a 10 s latency fault, the request logged there): (the process, the child's
    pid)."""
    daemon = subprocess.Popen([str(bin_dir / "passbridge"), "--stdio", "--backend", "emulator", "--state-dir", str(tmp_path / "state"),
                               "--log-level", "debug", *flags],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = next(m for line in daemon.stderr if (m := re.search(r"pass-emulator started at (http://\S+) \(pid (\d+)\)", line)))
    base, child = started.group(1).rstrip("/"), int(started.group(2))

    def admin(method, path, body=None):
        request = urllib.request.Request(base + "/__admin/" + path, method=method, headers={"Content-Type": "application/json"},
                                         data=json.dumps(body).encode() if body is not None else None)
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")

    fault = {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 10_000, "count": 1}
    assert admin("POST", "faults", fault)[0] == 201
    daemon.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "setRequestor", "params": {"requestorID": "REF"}}) + "\n")
    daemon.stdin.flush()
    deadline = time.monotonic() + 10
    while not any(r["path"] == "/api/v2/REF/configuration" for r in admin("GET", "requests")[1]["requests"]):
        assert time.monotonic() < deadline, "the configuration request never reached the emulator"
        time.sleep(0.02)
    return daemon, child


def gone(pid: int) -> bool:
    """No such process, or a zombie that init has yet to reap."""
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


def test_a_signal_ends_the_emulator_child_within_the_shutdown_timeout_even_when_it_holds_a_request(bin_dir, tmp_path):
    """Protocol/README.md "Lifecycle" 6: the daemon exits 0 within --shutdown-timeout. Its emulator child, stopped
    with SIGTERM, would finish the request a latency fault holds first (9 s after the signal, with 5 s to shut
    down, in a new user's run); it gets what is left of the timeout, then SIGKILL."""
    daemon, child = held_by_the_emulator_child(bin_dir, tmp_path, "--shutdown-timeout", "1")
    signalled = time.monotonic()
    daemon.send_signal(signal.SIGTERM)
    out, _ = daemon.communicate(timeout=30)
    took = time.monotonic() - signalled
    assert daemon.returncode == 0
    assert took < 4, f"exit {took:.1f} s after the signal, with --shutdown-timeout 1 (the fault holds the request 10 s)"
    assert json.loads(out.splitlines()[0])["error"]["code"] == -32003
    assert gone(child), "the emulator child outlived the daemon"


@pytest.mark.parametrize("backend", ["http://example.com", "http://10.0.0.1:8080"])
def test_plain_http_backend_is_refused_unless_loopback(bin_dir, tmp_path, backend):
    result = run_passbridge(bin_dir, "--backend", backend, "--state-dir", str(tmp_path / "state"))
    assert result.returncode == 2  # a bad flag value: a usage error, as for every other flag
    assert result.stderr.strip().count("\n") == 0 and "http" in result.stderr
    assert result.stdout == ""


def test_software_statement_from_a_file_and_state_dir_created_private(bin_dir, emulator, tmp_path):
    statement = tmp_path / "statement.jwt"
    statement.write_text(SOFTWARE_STATEMENT + "\n")
    state = tmp_path / "deep" / "state"
    daemon = StdioDaemon(bin_dir, "--backend", emulator.base, "--state-dir", str(state), "--software-statement", f"@{statement}")
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.stop() == 0
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    missing = run_passbridge(bin_dir, "--software-statement", f"@{tmp_path / 'nope'}", "--state-dir", str(state))
    assert missing.returncode == 1 and "nope" in missing.stderr
    # A statement that is no JWT is refused at start (a new-user pass got a bare R400 at the first setRequestor).
    junk = tmp_path / "junk.jwt"
    junk.write_text("notajwt\n")
    refused = run_passbridge(bin_dir, "--software-statement", f"@{junk}", "--state-dir", str(state))
    assert (refused.returncode, refused.stderr) == (
        1, f"passbridge: cannot read the software statement file {junk}: it holds no JWT (three base64url parts joined by dots)\n")
    # A byte-order mark before the statement (a file a Windows editor saved) is no part of it (a breaking pass).
    marked = tmp_path / "marked.jwt"
    marked.write_bytes(b"\xef\xbb\xbf" + SOFTWARE_STATEMENT.encode() + b"\r\n")
    daemon = StdioDaemon(bin_dir, "--backend", emulator.base, "--state-dir", str(state), "--software-statement", f"@{marked}")
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.stop() == 0
    inline = run_passbridge(bin_dir, "--software-statement", "notajwt", "--state-dir", str(state))
    assert (inline.returncode, inline.stderr) == (
        2, "passbridge: --software-statement needs a JWT (three base64url parts joined by dots) or @FILE, got 'notajwt' "
           "(see passbridge --help)\n")


def test_a_statement_the_backend_refuses_says_what_to_give(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, "--backend", emulator.base, "--state-dir", str(tmp_path / "state"), "--software-statement", "a.b.c")
    notes, response = daemon.exchange("setRequestor", {"requestorID": "REF"})
    assert response["result"]["status"] == 0
    (r400,) = response["result"]["statuses"]
    assert (r400["id"], r400["message"]) == ("R400", "The software statement was refused")
    assert r400["details"].startswith("the backend's client registration (DCR) answered invalid_software_statement")
    assert daemon.stop() == 0


def test_default_state_dir_follows_state_directory_then_xdg(bin_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "XDG_STATE_HOME")}
    env["XDG_STATE_HOME"] = str(tmp_path / "xdg")
    assert run_passbridge(bin_dir, env=env).returncode == 0
    assert stat.S_IMODE((tmp_path / "xdg" / "passbridge").stat().st_mode) == 0o700
    env["STATE_DIRECTORY"] = str(tmp_path / "systemd")
    assert run_passbridge(bin_dir, env=env).returncode == 0
    # The directory is made at start; the database only by the first call that needs it.
    assert stat.S_IMODE((tmp_path / "systemd").stat().st_mode) == 0o700


def test_without_a_software_statement_set_requestor_fails_with_r400(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, "--backend", emulator.base, "--state-dir", str(tmp_path / "state"))
    notes, response = daemon.exchange("setRequestor", {"requestorID": "REF"})
    assert {"jsonrpc": "2.0", "method": "setRequestorComplete", "params": {"status": 0}} in notes
    r400 = [n["params"] for n in notes if n["method"] == "status" and n["params"]["id"] == "R400"]
    assert r400 and response["result"] == {"status": 0, "statuses": r400}
    assert daemon.stop() == 0


def test_second_screen_login_with_the_activation_page(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("init", {"webView": False}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = daemon.mark()
    get_id = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    notes, response = daemon.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert response["result"] == {}
    assert "navigateToUrl" not in [n["method"] for n in notes]
    regcode = next(n["params"] for n in notes if n["method"] == "status")
    assert regcode["id"] == "REGCODE" and regcode["code"] and regcode["url"].startswith(emulator.base)
    assert isinstance(regcode["notAfter"], int) and regcode["notAfter"] > time.time() * 1000
    # The "phone": the activation page, then the MVPD login form.
    follow_to_redirect_url(regcode["url"], extra_fields={"code": regcode["code"], "mvpd": "MockMVPD"},
                           stop_at_page_without_form=True)
    status_index, status = daemon.notification("setAuthenticationStatus", start, timeout=30)
    get_index, answer = daemon.response(get_id, start, timeout=30)
    assert status["params"] == {"status": 1, "errorCode": ""} and get_index > status_index
    assert answer["result"] == {"status": 1, "errorCode": ""}
    assert daemon.stop() == 0
    assert check_against_openrpc(daemon.transcript, DOCUMENT) > 0


def test_second_screen_cancel_stops_the_wait(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    daemon.call("init", {"webView": False})
    daemon.call("setRequestor", {"requestorID": "REF"})
    start = daemon.mark()
    get_id = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    daemon.call("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert daemon.call("setSelectedProvider", {"mvpdId": None}) == {"status": 0, "errorCode": NOT_SELECTED}
    assert daemon.response(get_id, start)[1]["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    assert daemon.stop() == 0


def test_the_emulator_child_stops_when_passbridge_is_killed(bin_dir, tmp_path):
    daemon = subprocess.Popen([str(bin_dir / "passbridge"), "--backend", "emulator", "--state-dir", str(tmp_path / "s"),
                               "--log-level", "debug"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = daemon.stderr.readline().decode()
    while "pass-emulator started at" not in line:
        line = daemon.stderr.readline().decode()
        assert line, "passbridge ended before starting its emulator"
    child = int(re.search(r"\(pid (\d+)\)", line).group(1))
    daemon.kill()
    daemon.wait(timeout=10)
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}"), "the emulator child outlived a SIGKILLed passbridge"


def test_a_requestor_id_with_line_breaks_stays_on_its_log_line(bin_dir, emulator, tmp_path):
    """A value a host sent cannot end a log line or forge the next one: CR, LF, C1's NEL and Unicode's line and
    paragraph separators are written as \\u{…} (oneLine, Sources/ArgumentParsing)."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    requestor = "R\r\nEF\u2028X\u2029Y\u0085Z\u202eW\\u{a}V"
    assert daemon.call("setRequestor", {"requestorID": requestor})["status"] == 0
    assert daemon.stop() == 0
    lines = [line for line in daemon.log().split("\n") if "setRequestor" in line]
    # A right-to-left override is escaped too, and a backslash doubled: the text \u{a} cannot pass for a newline.
    escaped = "R\\u{d}\\u{a}EF\\u{2028}X\\u{2029}Y\\u{85}Z\\u{202e}W\\\\u{a}V"
    assert lines and all(escaped in line for line in lines), lines
    assert not any(separator in daemon.log() for separator in ["\r", "\u2028", "\u2029", "\u0085", "\u202e"])


def test_the_emulator_childs_log_lines_escape_a_requestor_id_too(bin_dir, tmp_path):
    """The emulator's request log, which `--backend emulator --log-level debug` passes on to the daemon's stderr,
    escapes what the host sent as the daemon's own lines do (its lines carried U+2028, NEL and ESC raw)."""
    daemon = StdioDaemon(bin_dir, "--backend", "emulator", "--state-dir", str(tmp_path / "state"), "--log-level", "debug")
    assert daemon.call("setRequestor", {"requestorID": "A\u2028B\u0085C\u001bD"})["status"] == 0
    assert daemon.stop() == 0
    log = daemon.log()
    emulator_lines = [line for line in log.split("\n") if "pass-emulator: " in line and "/configuration" in line]
    assert emulator_lines and all("A\\u{2028}B\\u{85}C\\u{1b}D" in line for line in emulator_lines), emulator_lines
    assert not any(raw in log for raw in ["\u2028", "\u0085", "\u001b"])


def test_a_store_url_that_is_not_postgresql_fails_start_up_with_status_1_and_no_secret(bin_dir, tmp_path):
    """README's exit statuses: a --store of another scheme is a start-up failure (status 1, one line), not a usage
    error, and its password is not printed."""
    result = run_passbridge(bin_dir, "--store", "mysql://pb:s3cret@db.example/passbridge", "--state-dir", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr == "passbridge: --store needs a postgresql:// URL, got mysql://pb:***@db.example/passbridge\n"
    # What is not a postgresql:// URL is named for what it is, never echoed (a breaking pass found both echoed as
    # "postgresql://…", the second one's scheme in lower case).
    for value, got in [("host=db.example password=s3cret", "libpq key=value settings, which are not taken here: "
                                                             "write them as a URL's query (postgresql:///DATABASE?host=…&user=…)"),
                       ("", "an empty value"),
                       ("db.example/s3cret", "something that is not a URL"),
                       ("POSTGRESQL://pb:s3cret@db.example/passbridge",
                        "a scheme not in lower case (libpq takes postgresql:// and postgres:// only)")]:
        result = run_passbridge(bin_dir, "--store", value, "--state-dir", str(tmp_path))
        assert (result.returncode, result.stderr) == (1, f"passbridge: --store needs a postgresql:// URL, got {got}\n")


def test_a_state_path_that_is_a_file_is_refused_and_left_alone(bin_dir, tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("keep me")
    path.chmod(0o644)
    result = run_passbridge(bin_dir, "--state-dir", str(path))
    assert result.returncode == 1
    assert result.stderr.strip() == f"passbridge: cannot open the state directory {path}: {path} is not a directory"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 and path.read_text() == "keep me"


def test_an_empty_statement_file_serves_and_r400_says_where_the_statement_goes(bin_dir, emulator, tmp_path, monkeypatch):
    """The packaged unit before a statement is installed: its credential is SetCredential='s default, a comment, in
    the directory systemd names in $CREDENTIALS_DIRECTORY."""
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    empty = tmp_path / "software-statement"
    service = (pathlib.Path(__file__).resolve().parents[2] / "Clients/systemd/passbridge.service").read_text()
    default = next(line for line in service.splitlines() if line.startswith("SetCredential=software-statement:"))
    empty.write_text(default.split(":", 1)[1])
    daemon = StdioDaemon(bin_dir, "--backend", emulator.base, "--state-dir", str(tmp_path / "state"),
                         "--software-statement", f"@{empty}")
    notes, response = daemon.exchange("setRequestor", {"requestorID": "REF"})
    r400 = [n["params"] for n in notes if n["method"] == "status"]
    assert response["result"] == {"status": 0, "statuses": r400}
    assert [(s["id"], s["message"]) for s in r400] == [("R400", "No software statement")]
    assert r400[0]["details"].startswith(f"{empty} holds no software statement: ")
    assert "/etc/passbridge/software-statement" in r400[0]["details"]
    assert daemon.stop() == 0
    warned = [line for line in daemon.log().splitlines() if " warning passbridge: no software statement: " in line]
    assert len(warned) == 1 and "/etc/passbridge/software-statement" in warned[0], daemon.log()


def test_an_unknown_requestor_lists_the_known_ones_and_names_the_near_one(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    notes, response = daemon.exchange("setRequestor", {"requestorID": "ref"})
    cfg400 = [n["params"] for n in notes if n["method"] == "status"]
    assert response["result"] == {"status": 0, "statuses": cfg400}
    assert cfg400 == [{"id": "CFG400", "errorId": "CFG400", "level": "error",
                       "message": "The backend does not know the requestor id 'ref' (ids are case-sensitive); did you mean 'REF'?",
                       "details": "The service provider parameter value is missing or invalid. Known service providers: REF, REF2"}]
    assert daemon.stop() == 0


@pytest.mark.parametrize("flag", ["--test-store-look-seconds", "--test-poll-seconds", "--test-logout-page-seconds"])
@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "0", "-1", "1e-320", "", "soon", "0x10", "1e1", "+5", " 5", "1..5"])
def test_the_test_daemons_seconds_flags_refuse_what_is_no_duration(test_daemon, flag, value):
    """A usage error (status 2, one line naming the flag), where inf and 1e308 crashed converting to a Duration, and
    0x10 and 1e1 were read as 16 and 10 seconds."""
    result = subprocess.run([test_daemon, "--stdio", flag, value], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr[-500:]
    assert result.stderr.count("\n") == 1 and flag in result.stderr and result.stdout == ""


@pytest.mark.parametrize("flag", ["--test-store-look-seconds", "--test-poll-seconds", "--test-logout-page-seconds"])
def test_the_test_daemons_seconds_flags_take_the_equals_form_too(test_daemon, flag):
    """`--flag=S` as passbridge's own flags take it, where it used to be an unknown option."""
    result = subprocess.run([test_daemon, "--stdio", f"{flag}=0.25"], input=b'{"jsonrpc":"2.0","id":1,"method":"rpc.stats"}\n',
                            capture_output=True, timeout=30)
    assert result.returncode == 0 and b'"id":1,"result"' in result.stdout, result.stderr[-500:]
    refused = subprocess.run([test_daemon, "--stdio", f"{flag}=0x10"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=30)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert f"{flag} needs a number of seconds from 0.001 to 86400, got '0x10'" in refused.stderr


@pytest.mark.parametrize("flag", ["--request-timeout", "--shutdown-timeout", "--stall-timeout"])
def test_seconds_flags_take_decimal_numbers_only(passbridge, flag):
    """Seconds are digits with at most one point; hex, exponents, signs and blanks, which a double's parser takes, are
    a usage error naming the flag and the value (0x10 was 16 seconds)."""
    least = "0" if flag == "--shutdown-timeout" else "0.001"
    for value in ["0x10", "1e1", "+5", " 5", "5 ", "1..5", "1,5", "٣", "0.0005", "3600.0000000000000001", "3601"]:
        result = subprocess.run([passbridge, "--stdio", flag, value], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        assert (result.returncode, result.stdout) == (2, ""), (value, result.stderr[-500:])
        assert result.stderr == (f"passbridge: {flag} needs seconds from {least} to 3600, a decimal number to the "
                                 f"millisecond, got '{value}' (see passbridge --help)\n")
    for value in ["5", "0.25", ".5", "5.", "3600"]:
        result = subprocess.run([passbridge, "--stdio", flag, value], input=b'{"jsonrpc":"2.0","id":1,"method":"rpc.stats"}\n',
                                capture_output=True, timeout=30)
        assert result.returncode == 0 and b'"id":1,"result"' in result.stdout, (value, result.stderr[-500:])


@pytest.mark.parametrize("flag, value", [("--socket-group", "root"), ("--allow-uid", "0")])
def test_socket_access_flags_without_a_socket_are_a_usage_error(passbridge, flag, value):
    """From a breaking pass: --socket-group and --allow-uid were taken on stdio, where they do nothing."""
    result = subprocess.run([passbridge, "--stdio", flag, value], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"passbridge: {flag} is for --socket (stdio has no socket to share) (see passbridge --help)\n"
