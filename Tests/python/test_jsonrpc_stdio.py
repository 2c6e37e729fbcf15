"""JSON-RPC 2.0 conformance of `passbridge --stdio` (spec §7 examples through passbridge-test-daemon), exact ids,
lifecycle and command line, over real pipes."""
import json
import os
import pathlib
import subprocess
import tempfile
import time

import pytest

from rpc_helper import StdioDaemon, request


@pytest.fixture()
def daemon(test_daemon):
    d = StdioDaemon(test_daemon, raw=True)
    yield d
    if d.process.poll() is None:
        d.process.kill()
        d.finish()


def code_and_id(line):
    message = json.loads(line)
    assert message["jsonrpc"] == "2.0"
    return message["error"]["code"], message["id"]


def test_spec_section_7_examples(daemon):
    assert json.loads(daemon.roundtrip('{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}')) == \
        {"jsonrpc": "2.0", "result": 19, "id": 1}
    assert json.loads(daemon.roundtrip('{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}')) == \
        {"jsonrpc": "2.0", "result": -19, "id": 2}
    assert json.loads(daemon.roundtrip('{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}')) == \
        {"jsonrpc": "2.0", "result": 19, "id": 3}
    assert json.loads(daemon.roundtrip('{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}')) == \
        {"jsonrpc": "2.0", "result": 19, "id": 4}
    # Notifications: nothing comes back, so the next line answers the following request.
    daemon.write('{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}\n{"jsonrpc": "2.0", "method": "foobar"}\n')
    assert code_and_id(daemon.roundtrip('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}')) == (-32601, "1")
    assert code_and_id(daemon.roundtrip('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]')) == (-32700, None)
    assert code_and_id(daemon.roundtrip('{"jsonrpc": "2.0", "method": 1, "params": "bar"}')) == (-32600, None)
    assert code_and_id(daemon.roundtrip('[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]')) == (-32700, None)
    assert code_and_id(daemon.roundtrip("[]")) == (-32600, None)
    invalid_one = json.loads(daemon.roundtrip("[1]"))
    assert [(m["error"]["code"], m["id"]) for m in invalid_one] == [(-32600, None)]
    invalid_three = json.loads(daemon.roundtrip("[1,2,3]"))
    assert [(m["error"]["code"], m["id"]) for m in invalid_three] == [(-32600, None)] * 3
    mixed = json.loads(daemon.roundtrip(
        '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
        '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
        '{"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},'
        '{"foo": "boo"},'
        '{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
        '{"jsonrpc": "2.0", "method": "get_data", "id": "9"}]'))
    by_id = {}
    for m in mixed:
        by_id.setdefault(m["id"], []).append(m)
    assert by_id["1"][0]["result"] == 7
    assert by_id["2"][0]["result"] == 19
    assert by_id[None][0]["error"]["code"] == -32600
    assert by_id["5"][0]["error"]["code"] == -32601
    assert by_id["9"][0]["result"] == ["hello", 5]
    assert len(mixed) == 5
    daemon.write('[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]\n')
    # All-notification batch: nothing at all, not "[]".
    assert json.loads(daemon.roundtrip(request("echo", id="next")))["id"] == "next"
    code, rest, _ = daemon.finish()
    assert code == 0 and rest == b""


def test_a_batch_of_more_than_1000_elements_is_refused_whole_with_one_error_object(daemon):
    """Protocol/README.md, "Limits": one -32600 with `id: null` and no array, as for an empty batch; a batch of
    1,000 is taken (notifications here: no answer at all), and the connection goes on."""
    notification = '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}'
    refused = json.loads(daemon.roundtrip("[" + ",".join([notification] * 1001) + "]"))
    assert isinstance(refused, dict), refused
    assert code_and_id(json.dumps(refused)) == (-32600, None)
    assert refused["error"]["data"]["reason"] == "batch over 1000 elements"
    daemon.write("[" + ",".join([notification] * 1000) + "]\n")
    assert json.loads(daemon.roundtrip(request("echo", id="next")))["id"] == "next"
    code, rest, _ = daemon.finish()
    assert code == 0 and rest == b""


def test_params_that_are_not_structured_get_minus_32600_naming_named_params(passbridge):
    d = StdioDaemon(passbridge, raw=True)
    try:
        answer = json.loads(d.roundtrip('{"jsonrpc": "2.0", "method": "checkAuthentication", "params": "REF", "id": 5}'))
        assert answer["id"] == 5 and answer["error"]["code"] == -32600
        assert answer["error"]["data"]["reason"] == "params must be an object of named params, or omitted"
        # An array is structured, so it passes this check and is refused by name at -32602.
        answer = json.loads(d.roundtrip('{"jsonrpc": "2.0", "method": "setRequestor", "params": ["REF"], "id": 6}'))
        assert answer["error"]["code"] == -32602
    finally:
        d.finish()


def test_a_content_length_that_declares_too_much_costs_one_message_not_the_session(passbridge):
    d = StdioDaemon(passbridge, "--max-message-bytes", "1000", raw=True)
    try:
        framed = b""
        for n in range(5):
            body = request("rpc.stats", id=n).encode()
            framed += b"Content-Length: %d\r\n\r\n" % len(body) + body
        d.write(b"Content-Length: 9000000000000000000\r\n\r\n{}" + framed)
        refused = json.loads(d.reader.frame())
        assert refused["id"] is None and refused["error"]["code"] == -32004
        assert [json.loads(d.reader.frame())["id"] for _ in range(5)] == [0, 1, 2, 3, 4]
    finally:
        d.finish()


@pytest.mark.parametrize("headers, reason", [
    (b"Content-Length: +2\r\n", "invalid Content-Length"),
    (b"Content-Length: 2\r\nContent-Length: 3\r\n", "two Content-Length headers that differ"),
])
def test_a_signed_or_conflicting_content_length_is_an_unreadable_header_block(passbridge, headers, reason):
    """Protocol/README.md, broken framing: digits only, and a second Content-Length must agree (`+2` was taken as 2,
    and of two the last counted); -32700 once, then the next message is read."""
    d = StdioDaemon(passbridge, raw=True)
    body = request("rpc.stats", id=1).encode()
    d.write(headers + b"\r\n{}" + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert json.loads(d.reader.frame()) == {"jsonrpc": "2.0", "id": None,
                                            "error": {"code": -32700, "message": "Parse error", "data": {"reason": reason}}}
    assert json.loads(d.reader.frame())["id"] == 1
    assert d.finish()[:2] == (0, b"")


@pytest.mark.parametrize("tail, reason", [
    (b'Content-Length: 40\r\n\r\n{"jsonrpc"', "input ended after 10 of the body's 40 bytes"),
    (b"Content-Length: 40\r\n", "input ended inside a header block"),
])
def test_a_content_length_message_cut_short_by_end_of_input_is_answered(passbridge, tail, reason):
    """Protocol/README.md, broken framing: the message before is answered, then the one cut short with -32700 and
    where input ended (it used to get no answer at all), and the daemon exits 0."""
    d = StdioDaemon(passbridge, raw=True)
    body = request("rpc.stats", id=1).encode()
    d.write(b"Content-Length: %d\r\n\r\n" % len(body) + body + tail)
    d.close_input()
    assert json.loads(d.reader.frame())["id"] == 1
    assert json.loads(d.reader.frame()) == {"jsonrpc": "2.0", "id": None,
                                            "error": {"code": -32700, "message": "Parse error", "data": {"reason": reason}}}
    assert d.finish()[:2] == (0, b"")


@pytest.mark.parametrize("raw_id", [
    b"9007199254740993", b"18446744073709551617", b"-18446744073709551617", b"0", b"null", b'"1"',
    b'"\\u00e9\\ud83d\\ude00"', b"-7", b"1.5"])
def test_ids_echoed_byte_for_byte(daemon, raw_id):
    line = daemon.roundtrip('{"jsonrpc":"2.0","method":"echo","params":[1],"id":' + raw_id.decode() + '}')
    expected_id = raw_id if not raw_id.startswith(b'"\\u') else '"é😀"'.encode()
    assert line == b'{"jsonrpc":"2.0","id":' + expected_id + b',"result":[1]}'


def test_big_ids_in_errors_and_batches(daemon):
    line = daemon.roundtrip('{"jsonrpc":"2.0","method":"nope","id":18446744073709551617}')
    assert line.startswith(b'{"jsonrpc":"2.0","id":18446744073709551617,"error":{"code":-32601')
    line = daemon.roundtrip('[{"jsonrpc":"2.0","method":"echo","id":9007199254740993}]')
    assert line == b'[{"jsonrpc":"2.0","id":9007199254740993,"result":null}]'


def test_other_invalid_requests(daemon):
    assert code_and_id(daemon.roundtrip('{"id":[],"method":"x"}')) == (-32600, None)
    assert code_and_id(daemon.roundtrip('{"jsonrpc":"2.0","id":1}')) == (-32600, 1)
    assert code_and_id(daemon.roundtrip('{"jsonrpc":"2.1","id":1,"method":"echo","params":[]}')) == (-32600, 1)
    assert code_and_id(daemon.roundtrip("1")) == (-32600, None)
    assert code_and_id(daemon.roundtrip("null")) == (-32600, None)
    assert code_and_id(daemon.roundtrip('{"jsonrpc":"2.0","method":"rpc.anything","id":7}')) == (-32601, 7)
    assert code_and_id(daemon.roundtrip('{"jsonrpc":"2.0","method":"subtract","params":["a"],"id":8}')) == (-32602, 8)
    # A repeated member name is valid JSON the daemon refuses (Protocol/README.md "What counts as JSON").
    refused = json.loads(daemon.roundtrip('{"jsonrpc":"2.0","method":"x","id":1,"id":2}'))
    assert (refused["error"]["code"], refused["id"]) == (-32600, None)
    assert refused["error"]["data"]["reason"] == 'duplicate member name "id" (valid JSON that this parser refuses)'
    assert code_and_id(daemon.roundtrip("[" * 100000)) == (-32700, None)
    assert json.loads(daemon.roundtrip('{"jsonrpc":"2.0","method":"echo","params":null,"id":3}'))["result"] is None


def test_rpc_discover_and_unknown_methods_without_test_flag(passbridge):
    d = StdioDaemon(passbridge, raw=True)
    doc = json.loads(d.roundtrip(request("rpc.discover")))["result"]
    assert doc["openrpc"].startswith("1.")
    assert {"ShuttingDown", "Overloaded", "RequestorNotSet"} <= set(doc["components"]["errors"])
    assert code_and_id(d.roundtrip(request("subtract", [1, 2], id=2))) == (-32601, 2)
    assert d.finish()[0] == 0


def test_a_refused_notification_is_logged_on_stderr_and_never_answered(passbridge):
    """A notification the daemon cannot run (a method it does not know, a param no method takes, a bad value, no
    setRequestor yet) gets no answer, as JSON-RPC 2.0 says, but a warning on stderr with the error an id would have
    got; before, a misspelt notification left no trace. The connection keeps working, and a good notification
    (`$/cancelRequest` of nothing) or one of the Language Server Protocol's `$/` logs nothing."""
    d = StdioDaemon(passbridge, raw=True)
    for line in ['{"jsonrpc":"2.0","method":"getAuthorisation"}',
                 '{"jsonrpc":"2.0","method":"getMetadata","params":{"opCode":"EXPIRY"}}',
                 '{"jsonrpc":"2.0","method":"getAuthorization","params":{"resource":"ch1"}}',
                 '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}',
                 '{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}',   # LSP's: may be ignored, unlogged
                 *['{"jsonrpc":"2.0","method":"bogus"}'] * 9]:
        d.write(line + "\n")
    assert code_and_id(d.roundtrip(request("nothing/here", id=2))) == (-32601, 2)
    code, rest, err = d.finish()
    assert code == 0 and rest == b""
    warnings = [line.split(" warning jsonrpc: ", 1)[1] for line in err.decode().splitlines() if " warning jsonrpc: " in line]
    # The first 10 of a connection only: a peer sending them in a loop fills no log (a breaking pass sent 20,000).
    assert len(warnings) == 10 and warnings[3:9] == [
        "connection 1: notification bogus not run (a notification is never answered): Method not found"] * 6, warnings
    assert warnings[9] == ("connection 1: notification bogus not run (a notification is never answered): Method not "
                           "found (later ones of this connection are not logged)")
    assert warnings[:3] == [
        "connection 1: notification getAuthorisation not run (a notification is never answered): Method not found: "
        "'getAuthorisation'; did you mean 'getAuthorization'?",
        "connection 1: notification getMetadata not run (a notification is never answered): Invalid params: 'opCode' "
        "is not a known op code: EXPIRY (it takes METADATA_AUTHENTICATION, METADATA_AUTHORIZATION, METADATA_DEVICE_ID, "
        "METADATA_USER_META, or 0–3)",
        "connection 1: notification getAuthorization not run (a notification is never answered): Requestor not set",
    ], err.decode()


def test_stray_print_goes_to_stderr(daemon):
    assert json.loads(daemon.roundtrip(request("test/print")))["result"] is True
    code, rest, err = daemon.finish()
    assert code == 0 and rest == b""
    assert b"a stray print from a test method" in err


def test_last_request_without_newline_is_answered_at_end_of_input(daemon):
    daemon.write(request("subtract", [42, 23], id=9))
    daemon.close_input()
    code, rest, _ = daemon.finish()
    assert code == 0
    assert json.loads(rest) == {"jsonrpc": "2.0", "id": 9, "result": 19}


def test_end_of_input_finishes_pending_work_then_exits_0(daemon):
    daemon.write(request("test/sleep", {"ms": 300, "result": "late"}, id=1) + "\n")
    daemon.close_input()
    code, rest, _ = daemon.finish()
    assert code == 0
    assert json.loads(rest) == {"jsonrpc": "2.0", "id": 1, "result": "late"}


def test_shutdown_timeout_answers_leftovers_with_32003(test_daemon):
    d = StdioDaemon(test_daemon, "--shutdown-timeout", "0.3", raw=True)
    d.write(request("test/sleep", {"ms": 5000}, id="slow") + "\n")
    started = time.monotonic()
    code, rest, _ = d.finish()
    assert code == 0
    assert time.monotonic() - started < 3
    answer = json.loads(rest)
    assert answer["id"] == "slow" and answer["error"]["code"] == -32003


def test_sigterm_drains_and_exits_0(daemon):
    daemon.roundtrip(request("echo", [], id=0), timeout=20)  # its signal thread runs once it answers
    # The echo behind it is answered at once: then the sleep was read and is under way when the signal comes.
    daemon.write(request("test/sleep", {"ms": 200, "result": 1}, id=1) + "\n" + request("echo", ["read"], id=2) + "\n")
    assert daemon.reader.json() == {"jsonrpc": "2.0", "id": 2, "result": ["read"]}
    daemon.process.terminate()
    assert daemon.reader.json()["result"] == 1
    assert daemon.process.wait(5) == 0


def test_content_length_peer_over_stdio(daemon):
    body = '{"jsonrpc":"2.0","method":"echo","params":["é✓"],"id":1}'.encode()
    daemon.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert daemon.reader.frame() == '{"jsonrpc":"2.0","id":1,"result":["é✓"]}'.encode()


def test_message_split_at_every_byte_over_a_pipe(daemon):
    message = ('{"jsonrpc":"2.0","method":"echo","params":["é😀✓"],"id":"ü"}\n').encode()
    for split in range(1, len(message)):
        daemon.write(message[:split])
        time.sleep(0.002)
        daemon.write(message[split:])
        assert daemon.reader.line() == '{"jsonrpc":"2.0","id":"ü","result":["é😀✓"]}'.encode()


def test_over_limit_line_is_refused_and_connection_kept(test_daemon):
    d = StdioDaemon(test_daemon, "--max-message-bytes", "1024", raw=True)
    error = json.loads(d.roundtrip(request("echo", ["x" * 5000])))
    assert error["id"] is None and error["error"]["code"] == -32004
    assert error["error"]["data"]["limit"] == 1024
    assert json.loads(d.roundtrip(request("echo", ["small"], id=2)))["result"] == ["small"]
    assert d.finish()[0] == 0


def test_daemon_to_host_request_over_stdio(daemon):
    daemon.write(request("test/callHost", {"method": "partnerSSO/checkAccessStatus", "params": {"prompt": False}}, id=1) + "\n")
    host_request = daemon.reader.json()
    assert host_request["method"] == "partnerSSO/checkAccessStatus"
    assert host_request["params"] == {"prompt": False}
    daemon.write(json.dumps({"jsonrpc": "2.0", "id": host_request["id"], "result": {"accessStatus": "granted"}}) + "\n")
    assert daemon.reader.json() == {"jsonrpc": "2.0", "id": 1, "result": {"result": {"accessStatus": "granted"}}}
    daemon.write(request("test/callHost", {"method": "ask", "timeoutMs": 100}, id=2) + "\n")
    assert daemon.reader.json()["method"] == "ask"
    timed_out = daemon.reader.json()
    assert timed_out["id"] == 2 and timed_out["result"]["error"]["code"] == -32001


def test_spawn_from_dev_null_exits_0(passbridge):
    result = subprocess.run([passbridge], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert result.returncode == 0 and result.stdout == b""


def test_command_line_model(passbridge, test_daemon):
    ok = subprocess.run([passbridge, "--help"], capture_output=True, text=True, timeout=10)
    assert ok.returncode == 0 and "--socket PATH" in ok.stdout and "test" not in ok.stdout
    # The top-level usage shows every subcommand form with the options its own --help gives it.
    top = ok.stdout.split("\n\n")[0]
    for sub in ("state", "stats"):
        helped = subprocess.run([passbridge, sub, "--help"], capture_output=True, text=True, timeout=10).stdout
        for line in helped.split("\n\n")[0].replace("USAGE:", "").splitlines():
            form = line.strip().replace("postgresql://…", "URL")
            for word in form.split(" "):
                assert word in top, f"{word!r} of {form!r} is missing from passbridge --help:\n{top}"
    test_help = subprocess.run([test_daemon, "--stdio", "--help"], capture_output=True, text=True, timeout=10)
    assert test_help.returncode == 0 and "subtract, sum, get_data" in test_help.stdout
    version = subprocess.run([passbridge, "--version"], capture_output=True, text=True, timeout=10)
    assert version.returncode == 0 and version.stdout.startswith("passbridge ")
    bad = subprocess.run([passbridge, "--no-such-flag"], capture_output=True, text=True, timeout=10)
    assert bad.returncode == 2 and bad.stderr == "passbridge: unknown option --no-such-flag (see passbridge --help)\n"
    assert bad.stdout == ""
    both = subprocess.run([passbridge, "--stdio", "--socket", "/tmp/x"], capture_output=True, text=True, timeout=10)
    assert both.returncode == 2
    missing = subprocess.run([passbridge, "--socket"], capture_output=True, text=True, timeout=10)
    assert missing.returncode == 2
    local = subprocess.run([passbridge, "--backend", "http://127.0.0.1:8080"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert local.returncode == 0
    # Every bad flag value is a usage error, checked before anything starts: one line, exit 2.
    for argv, message in [
        (["--backend", "ftp://example.com"], "--backend needs an https URL (or http to a loopback host, or \"emulator\"), got ftp://example.com"),
        (["--backend", "http://example.com"], "refusing plain http backend http://example.com: only loopback hosts may use http"),
        (["--socket", "--stdio"], "--socket needs a value, got the option --stdio (write --socket=--stdio if it is the value)"),
        (["--state-dir", "--backend", "emulator"], "--state-dir needs a value, got the option --backend (write "
                                                   "--state-dir=--backend if it is the value)"),
        (["--redirect-url", "ios.app"], "--redirect-url needs an absolute URL such as adobepass://ios.app, got ios.app"),
        (["--redirect-url", "adobepass://ios app"], "--redirect-url needs an absolute URL such as adobepass://ios.app, got "
                                                    "adobepass://ios app"),
        # Init's rule exactly: a host, no control character; the message stays on one line.
        (["--svc-redirect-url", "myapp:/only-path"], "--svc-redirect-url needs an absolute URL such as myapp://svc, got "
                                                     "myapp:/only-path"),
        (["--svc-redirect-url", "myapp://svc\nINJECTED"], "--svc-redirect-url needs an absolute URL such as myapp://svc, got "
                                                          "myapp://svc\\u{a}INJECTED"),
        # Unicode's line separator and C1's NEL end a line for some readers too.
        (["--svc-redirect-url", "myapp://svc\u2028INJECTED\u0085"], "--svc-redirect-url needs an absolute URL such as "
                                                                    "myapp://svc, got myapp://svc\\u{2028}INJECTED\\u{85}"),
        (["--svc-mvpds", ","], "--svc-mvpds needs MVPD ids, comma-separated, got ,"),
        (["--backend", "http://127.0.0.1:8080?x=1"], "--backend needs a base URL, without a user, query or fragment, got "
                                                     "http://127.0.0.1:8080?x=1"),
        (["--backend", "http://127.0.0.1:99999"], "--backend needs a port from 1 to 65535, got http://127.0.0.1:99999"),
        (["--backend", "https://sp.auth.adobe.com:0"], "--backend needs a port from 1 to 65535, got https://sp.auth.adobe.com:0"),
    ]:
        refused = subprocess.run([passbridge, *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
        assert (refused.returncode, refused.stdout, refused.stderr) == (2, "", f"passbridge: {message} (see passbridge --help)\n")
    # A statement file that is a device or a FIFO without a writer fails the start at once: not read without end,
    # not waited on.
    fifo = pathlib.Path(tempfile.mkdtemp()) / "statement"
    os.mkfifo(fifo)
    for path in ["/dev/zero", str(fifo)]:
        refused = subprocess.run([passbridge, "--stdio", "--software-statement", "@" + path], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=10)
        assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr
        assert f"cannot read the software statement file {path}: not a regular file" in refused.stderr
    fifo.unlink()
    group = subprocess.run([passbridge, "--socket", "/tmp/x.sock", "--socket-group", "no-such-group-xyz"],
                           capture_output=True, text=True, timeout=10)
    assert group.returncode == 1 and len(group.stderr.strip().splitlines()) == 1


def test_backpressure_never_drops_a_message(daemon):
    # 100,000 notifications (~5 MB) while the host reads nothing for a while, then more requests.
    daemon.write(request("test/notify", {"count": 100000}, id="burst") + "\n")
    time.sleep(0.5)
    for i in range(100):
        daemon.write(request("sum", [i, 1], id=i) + "\n")
    daemon.close_input()
    rest = daemon.reader.buffer + daemon.process.stdout.read()  # read everything, then the exit code
    assert daemon.process.wait(10) == 0
    lines = rest.splitlines()
    events = [line for line in lines if line.startswith(b'{"jsonrpc":"2.0","method":"test/event"')]
    assert len(events) == 100000
    assert json.loads(events[-1])["params"] == {"n": 99999}
    answers = [json.loads(line) for line in lines if not line.startswith(b'{"jsonrpc":"2.0","method"')]
    assert [a["id"] for a in answers] == ["burst"] + list(range(100))
    assert all(a["result"] == a["id"] + 1 for a in answers[1:])


def test_backend_emulator_without_pass_emulator_beside_says_what_to_do(passbridge, tmp_path):
    """A passbridge copied alone: `--backend emulator` exits 1 at once naming the missing binary and the way out,
    with nothing on stdout (the protocol's)."""
    import shutil
    alone = tmp_path / "bin" / "passbridge"
    alone.parent.mkdir()
    shutil.copy(passbridge, alone)
    run = subprocess.run([str(alone), "--backend", "emulator", "--state-dir", str(tmp_path)], input="", capture_output=True,
                         text=True, timeout=30)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr.startswith(f"passbridge: --backend emulator: {alone.parent}/pass-emulator not found or not executable")
    assert "--backend URL" in run.stderr and run.stderr.count("\n") == 1, run.stderr


@pytest.mark.parametrize("first,second", [("\\u00e9", "e\\u0301"), ("K", "\\u212a"), ("\\u00c5", "\\u212b")])
@pytest.mark.parametrize("others", [0, 20])
def test_names_that_unicode_calls_equivalent_are_two_members(daemon, first, second, others):
    # Protocol/README.md "What counts as JSON": names are compared character by character, so canonically
    # equivalent names are two members, both echoed; 20 other members put the object past the parser's index
    # threshold (16). The same name written twice is still refused.
    filler = "".join(f'"m{n}":{n},' for n in range(others))
    sent = '{' + filler + f'"{first}":1,"{second}":2' + '}'
    echoed = json.loads(daemon.roundtrip('{"jsonrpc":"2.0","method":"echo","id":1,"params":' + sent + '}'))
    assert echoed["result"] == json.loads(sent) and len(echoed["result"]) == others + 2
    refused = json.loads(daemon.roundtrip('{"jsonrpc":"2.0","method":"echo","id":2,"params":{' + filler + f'"{first}":1,"{first}":2' + '}}'))
    assert refused["error"]["code"] == -32600 and refused["id"] is None
