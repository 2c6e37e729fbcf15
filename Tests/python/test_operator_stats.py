"""`passbridge stats [--socket PATH]` (Protocol/README.md, "Diagnostics"): a running daemon's rpc.stats as
OpenMetrics text that Prometheus' own client library parses, with the counts rpc.stats gives; exit 1 when no daemon
answers, 2 on bad usage."""
import json
import os
import re
import socket
import subprocess
import threading
import time

import pytest

from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_text_families

from postgres_fixtures import cluster_server, own_postgres  # noqa: F401 (fixture)
from rpc_helper import REDIRECT_URL, SocketDaemon, StdioDaemon, daemon_args
from test_bridge_flows import login, ready


def stats_text(bin_dir, *args, socket_variable=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PASSBRIDGE_SOCKET"}
    if socket_variable is not None:
        env["PASSBRIDGE_SOCKET"] = socket_variable
    return subprocess.run([str(bin_dir / "passbridge"), "stats", *args], capture_output=True, text=True, timeout=30, env=env)


def test_stats_takes_the_socket_passbridge_call_dev_exports(bin_dir, daemon):
    # From a new-user pass: after `eval "$(passbridge-call dev)"`, a plain `passbridge stats` asked /run/passbridge.
    found = stats_text(bin_dir, socket_variable=str(daemon.path))
    assert found.returncode == 0 and "passbridge_connections" in found.stdout, found.stderr
    # --socket still wins.
    assert stats_text(bin_dir, "--socket", str(daemon.path), socket_variable="/nowhere.sock").returncode == 0


def rpc_stats(path: str) -> dict:
    """rpc.stats asked as `passbridge stats` asks it: one request on a connection of its own."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
        peer.settimeout(10)
        peer.connect(path)
        peer.sendall(b'{"jsonrpc":"2.0","id":1,"method":"rpc.stats"}\n')
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = peer.recv(4096)
            assert chunk, answer
            answer += chunk
    return json.loads(answer)["result"]


def test_stats_of_a_daemon_that_served_a_login_and_an_authorization_parse_as_openmetrics(bin_dir, daemon):
    app = daemon.client()
    ready(app)
    login(app)
    assert app.call("getAuthorization", {"resource": "ch1"})["resource"] == "ch1"
    # A store read: the authorization's expiry, queued for the store, is written before it (Diagnostics).
    assert "expires" in app.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1"})

    asked = rpc_stats(str(daemon.path))
    printed = stats_text(bin_dir, "--socket", str(daemon.path))
    assert printed.returncode == 0 and printed.stderr == "", printed.stderr
    assert printed.stdout.endswith("# EOF\n")
    families = {family.name: family for family in text_string_to_metric_families(printed.stdout)}
    assert set(families) == {"passbridge_instances", "passbridge_connections", "passbridge_calls_in_flight",
                             "passbridge_profile_reads", "passbridge_authorization_expiries", "passbridge_store_failures",
                             "passbridge_store_failing", "passbridge_heap_bytes", "passbridge_uptime_seconds"}
    for family in families.values():
        assert family.documentation, family.name  # a HELP line each
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    counters = ("passbridge_profile_reads", "passbridge_authorization_expiries", "passbridge_store_failures")
    gauges = ("passbridge_instances", "passbridge_connections", "passbridge_calls_in_flight", "passbridge_store_failing",
              "passbridge_heap_bytes", "passbridge_uptime_seconds")
    assert {name: families[name].type for name in counters + gauges} == \
        dict.fromkeys(counters, "counter") | dict.fromkeys(gauges, "gauge")
    assert families["passbridge_uptime_seconds"].unit == "seconds"
    assert families["passbridge_heap_bytes"].unit == "bytes"
    # The counts are rpc.stats' (asked the same way), but for the connection that asks: rpc.stats counts it, the
    # metric does not, so that a scrape does not show up as a connection.
    assert samples == {
        ("passbridge_instances", ()): asked["instances"],
        ("passbridge_connections", ()): asked["connections"] - 1,
        ("passbridge_calls_in_flight", ()): asked["callsInFlight"],
        ("passbridge_profile_reads_total", (("source", "memory"),)): asked["profileReads"]["memory"],
        ("passbridge_profile_reads_total", (("source", "store"),)): asked["profileReads"]["store"],
        ("passbridge_authorization_expiries_total", (("outcome", "written"),)): asked["authorizationExpiries"]["written"],
        ("passbridge_authorization_expiries_total", (("outcome", "unchanged"),)):
            asked["authorizationExpiries"]["unchanged"],
        ("passbridge_store_failures_total", ()): asked["storeFailures"]["operations"],
        ("passbridge_store_failing", ()): asked["storeFailures"]["failing"],
        ("passbridge_heap_bytes", ()): samples[("passbridge_heap_bytes", ())],
        ("passbridge_uptime_seconds", ()): samples[("passbridge_uptime_seconds", ())],
    }
    assert (asked["instances"], asked["connections"], asked["callsInFlight"]) == (1, 2, 0)
    assert asked["authorizationExpiries"]["written"] == 1  # the authorization's expiry
    assert asked["storeFailures"] == {"operations": 0, "failing": 0}
    assert asked["profileReads"]["memory"] + asked["profileReads"]["store"] >= 1  # the authorization read the login
    assert 0 < asked["uptimeSeconds"] <= samples[("passbridge_uptime_seconds", ())] < 600
    # The heap moves between two asks (each reads and writes a connection's buffers): in the same range, not equal.
    assert 100_000 < asked["heapBytes"] < 100_000_000 and 100_000 < samples[("passbridge_heap_bytes", ())] < 100_000_000

    # The older text format, for node_exporter's textfile collector: the same families and types, parsed by the
    # client library's own parser of that format.
    older = stats_text(bin_dir, "--socket", str(daemon.path), "--format", "prometheus")
    assert older.returncode == 0 and "# EOF" not in older.stdout and "# UNIT" not in older.stdout, older.stdout
    assert "# TYPE passbridge_profile_reads_total counter\n" in older.stdout
    parsed = {family.name: family.type for family in prometheus_text_families(older.stdout)}
    assert parsed == dict.fromkeys(counters, "counter") | dict.fromkeys(gauges, "gauge")
    app.close()


def test_stats_without_a_daemon_fails_and_bad_usage_exits_2(bin_dir, tmp_path):
    missing = stats_text(bin_dir, "--socket", str(tmp_path / "none.sock"))
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.startswith(f"passbridge stats: cannot connect to {tmp_path / 'none.sock'}: "), missing.stderr
    # How to name another (a new user's fleet trial ran it with no flag, on the packaged default).
    assert missing.stderr.endswith(" (--socket PATH or $PASSBRIDGE_SOCKET names a daemon's socket)\n"), missing.stderr
    # What a refusal means (a fleet operator's pass: a directory, a log file and a dead daemon's socket all read
    # "Connection refused").
    (tmp_path / "daemon.log").write_text("")
    for where in (tmp_path, tmp_path / "daemon.log"):
        refused = stats_text(bin_dir, "--socket", str(where))
        assert (refused.returncode, refused.stderr) == (1, f"passbridge stats: {where} is not a socket\n")
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(tmp_path / "left.sock"))
    left.close()  # bound, never listening: what a killed daemon leaves
    dead = stats_text(bin_dir, "--socket", str(tmp_path / "left.sock"))
    assert dead.stderr == (f"passbridge stats: cannot connect to {tmp_path / 'left.sock'}: Connection refused (no daemon listens "
                           "there: a daemon that was killed leaves its socket behind)\n"), dead.stderr
    assert stats_text(bin_dir, "--socket").returncode == 2
    assert stats_text(bin_dir, "--socket", "--help").returncode == 0  # --help wins, wherever it is
    assert stats_text(bin_dir, "extra").returncode == 2
    assert stats_text(bin_dir, "--format", "json").returncode == 2
    helped = stats_text(bin_dir, "--help")
    assert helped.returncode == 0 and "(default: /run/passbridge/passbridge.sock)" in " ".join(helped.stdout.split())


def peer_that(behave, path):
    """A socket at `path` whose one peer, once it sent its request, gets `behave(peer)`."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def serve():
        peer, _ = server.accept()
        with peer:
            peer.recv(4096)
            try:
                behave(peer)
            except OSError:
                pass  # the command gave up and closed
        server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


COMPLETE = {"instances": 0, "connections": 1, "callsInFlight": 0, "profileReads": {"memory": 0, "store": 0},
            "authorizationExpiries": {"written": 0, "unchanged": 0}, "storeFailures": {"operations": 0, "failing": 0},
            "heapBytes": 1, "uptimeSeconds": 1.0}


@pytest.mark.parametrize("answer", [
    b'{"jsonrpc":"2.0","id":1,"result":{"instances":1}}\n',
    b'{"jsonrpc":"2.0","id":1,"result":5}\n',
    # A counter below 0 (Prometheus' parser refuses it), and the answer to another request: found by a bad-input pass.
    json.dumps({"jsonrpc": "2.0", "id": 1, "result": COMPLETE | {"profileReads": {"memory": -5, "store": 0}}}).encode() + b"\n",
    json.dumps({"jsonrpc": "2.0", "id": 99, "result": COMPLETE}).encode() + b"\n",
    # A count that is no integer, a flag that is no 0 or 1, no "jsonrpc", another request's error: a final breaking
    # pass had the first three printed as metrics, and the last said as the daemon's own error.
    json.dumps({"jsonrpc": "2.0", "id": 1, "result": COMPLETE | {"instances": 1.5}}).encode() + b"\n",
    json.dumps({"jsonrpc": "2.0", "id": 1, "result": COMPLETE | {"storeFailures": {"operations": 0, "failing": 7}}}).encode() + b"\n",
    json.dumps({"id": 1, "result": COMPLETE}).encode() + b"\n",
    json.dumps({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}).encode() + b"\n",
], ids=["fields-missing", "not-an-object", "negative-counter", "another-id", "fraction", "flag-7", "no-jsonrpc",
        "another-ids-error"])
def test_stats_of_something_that_is_not_a_passbridge_daemon_fail(bin_dir, short_tmp, answer):
    """A socket that answers, but not with rpc.stats' fields: exit 1 with a line saying so, nothing on stdout (a
    scrape of NaN or zeros would look like a healthy, idle daemon)."""
    path = short_tmp / "other.sock"
    thread = peer_that(lambda peer: peer.sendall(answer), path)
    printed = stats_text(bin_dir, "--socket", str(path))
    thread.join(10)
    assert printed.returncode == 1 and printed.stdout == "", printed.stdout
    assert printed.stderr.startswith(f"passbridge stats: {path} answered rpc.stats "), printed.stderr
    if b"instances\":1" in answer:
        assert "without a number of 0 or more for connections, callsInFlight, profileReads.memory" in printed.stderr
    if b"-5" in answer:
        assert "without a number of 0 or more for profileReads.memory (" in printed.stderr


def test_stats_refused_by_the_daemon_says_why(bin_dir, short_tmp):
    """From a breaking pass: a daemon that does not serve the caller answers -32005 with why, at once, and closes;
    `passbridge stats` said only "cannot write to PATH: Broken pipe". It now reads that answer and gives its words."""
    path = short_tmp / "refusing.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    refusal = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32005, "message": "Access denied",
                                                                  "data": {"reason": "this daemon serves only root"}}}).encode() + b"\n"

    def refuse():
        peer, _ = server.accept()
        with peer:  # as the daemon does: the answer, then the close, before the request is read
            peer.sendall(refusal)
            peer.shutdown(socket.SHUT_RDWR)
        server.close()

    thread = threading.Thread(target=refuse, daemon=True)
    thread.start()
    printed = stats_text(bin_dir, "--socket", str(path))
    thread.join(10)
    assert printed.returncode == 1 and printed.stdout == "", printed.stdout
    assert printed.stderr == f"passbridge stats: {path} answered Access denied: this daemon serves only root\n", printed.stderr


def trickle(peer):
    """One byte of a valid answer's leading blanks every 0.3 s, for up to 30 s: each read comes in time."""
    for _ in range(100):
        peer.sendall(b" ")
        time.sleep(0.3)


@pytest.mark.parametrize("behave, why", [
    (trickle, "within 5 s"),
    (lambda peer: peer.sendall(b" " * (1 << 20) + b"{}\n"), "answered more than 65536 bytes without a line end"),
    (lambda peer: time.sleep(8), "within 5 s"),
], ids=["trickle", "a-mebibyte-line", "silent"])
def test_stats_gives_up_after_5_s_or_64_kib_of_answer(bin_dir, short_tmp, behave, why):
    """A peer that answers a byte at a time, one whose line is a mebibyte long, one that never answers: exit 1 with
    a line saying why, within the 5 s the whole exchange may take (Protocol/README.md, "Diagnostics"). Before, each
    read had its own 5 s, so a trickle never ended, and the line was searched again after each read (4 MiB: 70 s)."""
    path = short_tmp / "slow.sock"
    thread = peer_that(behave, path)
    started = time.monotonic()
    printed = stats_text(bin_dir, "--socket", str(path))
    elapsed = time.monotonic() - started
    thread.join(30)
    assert printed.returncode == 1 and printed.stdout == "", printed.stdout
    assert elapsed < 7, f"{elapsed:.1f} s"
    assert printed.stderr.startswith("passbridge stats: ") and printed.stderr.count("\n") == 1, printed.stderr
    assert why in printed.stderr, printed.stderr


def test_uptime_is_written_in_whole_milliseconds(bin_dir):
    """uptimeSeconds has millisecond resolution and is written so: at most three decimals, never the float noise of
    adding the milliseconds to the seconds (1.3940000000000001: 162 of the thousand values of the second second
    would show it). Asked over real pipes, 150 times a few ms apart once the daemon has served a second."""
    daemon = StdioDaemon(bin_dir, raw=True)

    def uptime(number: int) -> bytes:
        text = daemon.roundtrip(json.dumps({"jsonrpc": "2.0", "id": number, "method": "rpc.stats"}), timeout=10)
        return re.search(rb'"uptimeSeconds":([^,}]+)', text).group(1)

    while float(uptime(0)) < 1:
        time.sleep(0.02)
    uptimes = []
    for number in range(1, 151):
        uptimes.append(uptime(number))
        time.sleep(0.002)
    assert daemon.stop() == 0
    assert all(re.fullmatch(rb"\d+(\.\d{1,3})?", value) for value in uptimes), [v for v in uptimes if len(v) > 5]
    assert len(set(uptimes)) > 50, uptimes


def test_stats_count_the_store_failures_of_a_database_outage(bin_dir, emulator, tmp_path, own_postgres, short_tmp):
    """From an operator's new-user pass: while PostgreSQL was down only the log said so. rpc.stats (and so the
    metrics) count the store operations that failed, and say whether the store is failing now (Protocol/README.md,
    "Diagnostics"): 1 from the first failure until an operation succeeds."""
    directory, url = own_postgres
    path = short_tmp / "pb.sock"
    daemon = SocketDaemon(bin_dir, path, *daemon_args(emulator.base, tmp_path / "state", "--store", url))
    try:
        app = daemon.client()
        ready(app)
        assert rpc_stats(str(path))["storeFailures"] == {"operations": 0, "failing": 0}
        cluster_server("halt", directory)
        # A device the daemon has not seen: its setRequestor reads the store, and fails.
        assert app.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "tv-down"}) == {}
        assert app.call("setRequestor", {"requestorID": "REF"})["status"] == 0
        during = rpc_stats(str(path))["storeFailures"]
        assert during["operations"] >= 1 and during["failing"] == 1, during
        samples = {s.name: s.value for f in text_string_to_metric_families(stats_text(bin_dir, "--socket", str(path)).stdout)
                   for s in f.samples}
        assert samples["passbridge_store_failing"] == 1 and samples["passbridge_store_failures_total"] >= 1
        cluster_server("resume", directory)
        assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        after = rpc_stats(str(path))["storeFailures"]
        assert after["operations"] >= during["operations"] and after["failing"] == 0, after
        app.close()
    finally:
        assert daemon.stop() == 0
