"""Fleet mode across PostgreSQL restarts and outages (README.md "Fleet", Sources/AccessEnabler/README.md "Broken
connections"): a restart of the server (`pg_ctl restart -m fast`, what a failover or a minor upgrade does) costs the
next call a reconnect, not an error; while the server is down a call fails at once with STORE500, and the first call
once it is back succeeds. Each test has a cluster of its own: its restarts would cut every other daemon's
connections."""
import time

from postgres_fixtures import cluster_server, own_postgres  # noqa: F401 (fixtures)
from rpc_helper import StdioDaemon, daemon_args
from test_bridge_flows import login, ready

GENERIC_AUTHORIZATION = "Generic Authorization Error"


def authorize(daemon):
    """getAuthorization ch1: (its result, the methods of the notifications it sent, the seconds it took)."""
    start = daemon.mark()
    began = time.monotonic()
    result = daemon.call("getAuthorization", {"resource": "ch1"})
    elapsed = time.monotonic() - began
    return result, [m["method"] for m in daemon.received[start:] if "method" in m], elapsed


def logged_in_daemon(bin_dir, emulator, tmp_path, url):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", url))
    ready(daemon)
    login(daemon)
    result, _, _ = authorize(daemon)
    assert "token" in result, result
    return daemon


def test_authorization_after_each_postgresql_restart_succeeds_on_the_same_connection(bin_dir, emulator, tmp_path,
                                                                                     own_postgres):
    directory, url = own_postgres
    daemon = logged_in_daemon(bin_dir, emulator, tmp_path, url)
    timings = []
    for restart in range(3):
        cluster_server("restart", directory)
        result, notes, elapsed = authorize(daemon)
        assert "token" in result, f"after restart {restart + 1}: {result}"
        assert "tokenRequestFailed" not in notes and "status" not in notes, notes
        timings.append(elapsed)
    assert max(timings) < 2, timings
    assert daemon.stop() == 0
    log = daemon.log()
    assert log.count("reconnected, running it again") == 3, log
    assert "store failure" not in log, log


def test_authorization_while_postgresql_is_down_fails_at_once_and_works_once_it_is_back(bin_dir, emulator, tmp_path,
                                                                                       own_postgres):
    directory, url = own_postgres
    daemon = logged_in_daemon(bin_dir, emulator, tmp_path, url)
    cluster_server("halt", directory)
    # The first call finds the connection cut, the second one a connection already known lost: neither waits.
    for _ in range(2):
        result, notes, elapsed = authorize(daemon)
        assert result["errorCode"] == GENERIC_AUTHORIZATION and [s["id"] for s in result["statuses"]] == ["STORE500"], result
        assert notes == ["tokenRequestFailed", "sendTrackingData", "status"], notes
        assert elapsed < 1, elapsed
    cluster_server("resume", directory)
    result, notes, _ = authorize(daemon)
    assert "token" in result and "tokenRequestFailed" not in notes, result
    assert daemon.stop() == 0
    assert "store failure" in daemon.log()
