"""The daemon's HTTP to the backend (libcurl): redirects are never followed, a connection the server dropped
costs no deadline, and memory stays flat under steady load. Real passbridge, real pipes, real pass-emulator."""
import socket
import threading
import time

import pytest

from rpc_helper import REDIRECT_URL, SocketDaemon, StdioDaemon, daemon_args
from test_bridge_flows import login, ready

AUTHORIZE = "/api/v2/REF/decisions/authorize/*"


@pytest.fixture()
def daemon(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    yield daemon
    assert daemon.stop() == 0


@pytest.fixture()
def listener():
    """A loopback port that accepts connections (a redirect target); the test checks nobody came."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    yield server
    server.close()


def nobody_connected(server) -> bool:
    try:
        server.accept()[0].close()
        return False
    except BlockingIOError:
        return True


def fault(emulator, **spec):
    assert emulator.admin("faults", spec) == 201


def test_redirected_authorization_fails_with_z500_and_the_target_sees_no_connection(daemon, emulator, listener):
    ready(daemon)
    login(daemon)
    target = f"http://127.0.0.1:{listener.getsockname()[1]}/stolen"
    fault(emulator, method="POST", path=AUTHORIZE, kind="redirect", value=target, count=1)
    started = time.monotonic()
    result = daemon.call("getAuthorization", {"resource": "ch1"})
    assert time.monotonic() - started < 5
    assert result["resource"] == "ch1" and "token" not in result
    assert [status["id"] for status in result["statuses"]] == ["Z500"]
    time.sleep(0.2)
    assert nobody_connected(listener)
    # The fault was for one request: the next authorization gets its token.
    assert daemon.call("getAuthorization", {"resource": "ch1"})["resource"] == "ch1"


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_redirected_configuration_fails_setrequestor_with_cfg404_and_the_target_sees_no_connection(daemon, emulator, listener, status):
    target = f"http://127.0.0.1:{listener.getsockname()[1]}/stolen"
    fault(emulator, method="GET", path="/api/v2/REF/configuration", kind="redirect", value=target, status=status)
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    result = daemon.call("setRequestor", {"requestorID": "REF"})
    assert result["status"] == 0
    assert [status["id"] for status in result["statuses"]] == ["CFG404"]
    time.sleep(0.2)
    assert nobody_connected(listener)


def test_a_kept_alive_connection_dropped_by_the_server_is_retried_at_once(daemon, emulator):
    ready(daemon)
    login(daemon)
    assert "token" in daemon.call("getAuthorization", {"resource": "ch1"})  # the connection is now kept alive
    fault(emulator, method="POST", path=AUTHORIZE, kind="drop", count=1)
    started = time.monotonic()
    result = daemon.call("getAuthorization", {"resource": "ch1"})
    elapsed = time.monotonic() - started
    assert "token" in result, result
    assert elapsed < 1, f"{elapsed:.2f} s"


def test_a_backend_that_drops_every_attempt_fails_at_once_not_after_the_deadline(daemon, emulator):
    ready(daemon)
    login(daemon)
    assert "token" in daemon.call("getAuthorization", {"resource": "ch1"})
    fault(emulator, method="POST", path=AUTHORIZE, kind="drop")
    started = time.monotonic()
    result = daemon.call("getAuthorization", {"resource": "ch1"})
    elapsed = time.monotonic() - started
    assert "token" not in result and [status["id"] for status in result["statuses"]] == ["Z500"]
    assert elapsed < 1, f"{elapsed:.2f} s"


def test_request_timeout_from_the_command_line_bounds_a_slow_backend(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--request-timeout", "0.5"))
    try:
        ready(daemon)
        login(daemon)
        fault(emulator, method="POST", path=AUTHORIZE, kind="latency", value=3000, count=1)
        started = time.monotonic()
        result = daemon.call("getAuthorization", {"resource": "ch1"})
        elapsed = time.monotonic() - started
        assert "token" not in result and [status["id"] for status in result["statuses"]] == ["Z500"]
        assert 0.4 < elapsed < 2, f"{elapsed:.2f} s"
    finally:
        assert daemon.stop() == 0


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def flows_until(daemon, stop: threading.Event, errors: list, flows: list):
    """One client on its own connection: setRequestor, checkAuthentication, getAuthorization (a token),
    checkPreauthorizedResources, checkAuthorization of a denied resource — again and again until `stop`.
    (Every client shares the daemon's device, so the one login is done before; a logout would end all of them.)"""
    try:
        client = daemon.client()
        assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        while not stop.is_set():
            assert client.call("setRequestor", {"requestorID": "REF"}, timeout=60)["status"] == 1
            assert client.call("checkAuthentication", timeout=60)["status"] == 1
            assert "token" in client.call("getAuthorization", {"resource": "ch1"}, timeout=60)
            assert "ch1" in client.call("checkPreauthorizedResources", {"resources": ["ch1", "ch2"]}, timeout=60)["resources"]
            assert "token" not in client.call("checkAuthorization", {"resource": "ch2"}, timeout=60)
            flows.append(1)
        client.close()
    except Exception as error:  # noqa: BLE001 — reported by the test
        errors.append(repr(error))


def test_rss_stays_flat_with_200_clients_running_full_flows(bin_dir, emulator, tmp_path, short_tmp):
    """200 clients for two minutes on one daemon: RSS after the second minute is at most 2 MB above the first."""
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    first_client = daemon.client()
    ready(first_client)
    login(first_client)
    first_client.close()
    stop = threading.Event()
    errors: list = []
    flows: list = []
    threads = [threading.Thread(target=flows_until, args=(daemon, stop, errors, flows), daemon=True) for _ in range(200)]
    try:
        for thread in threads:
            thread.start()
        time.sleep(60)
        first = rss_kib(daemon.process.pid)
        flows_first = len(flows)
        time.sleep(60)
        second = rss_kib(daemon.process.pid)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        print(f"RSS after 1 min {first} KiB, after 2 min {second} KiB; flows {flows_first} then {len(flows) - flows_first}")
        assert not errors, errors[:3]
        assert flows_first > 200 and len(flows) - flows_first > 200
        assert second - first <= 2048, f"RSS grew {second - first} KiB in the second minute ({first} → {second})"
    finally:
        stop.set()
        assert daemon.stop() == 0
