"""Fleet mode across PostgreSQL restarts and outages (README.md "Fleet", Sources/AccessEnabler/README.md "Broken
connections"): a restart of the server (`pg_ctl restart -m fast`, what a failover or a minor upgrade does) costs the
next call a reconnect, not an error; while the server is down a call that needs the store fails at once with STORE500
(a logged-in authorization, answered from memory, does not), and the first call once it is back succeeds. Each test has a cluster of its own: its restarts would cut every other daemon's
connections."""
import glob
import os
import re
import signal
import subprocess
import time

from postgres_fixtures import cluster_server, own_postgres, postgres_cluster, postgres_url  # noqa: F401 (fixtures)
from rpc_helper import StdioDaemon, daemon_args
from test_bridge_flows import REDIRECT_URL, login, ready

#: A line of the daemon's log: time, program[pid], level, label, text.
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z passbridge\[\d+\] (trace|debug|info|notice|warning|error|critical) ")



def authorize(daemon):
    """getAuthorization ch1: (its result, the methods of the notifications it sent, the seconds it took)."""
    start = daemon.mark()
    began = time.monotonic()
    result = daemon.call("getAuthorization", {"resource": "ch1"})
    elapsed = time.monotonic() - began
    return result, [m["method"] for m in daemon.received[start:] if "method" in m], elapsed


def server_processes(url) -> list[int]:
    """The pids of the server processes serving other sessions of `url`'s database (the daemon's), at least one."""
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    pids = [int(pid) for pid in subprocess.run(
        [psql, "-X", "-Atc", "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
         url], capture_output=True, text=True, timeout=30, check=True).stdout.split()]
    assert pids
    return pids


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
    # One reconnect per restart, made by whichever store call met the cut first: an authorization's cached expiry
    # write, or the store thread's look for other daemons' login changes (Protocol/README.md, "Live logins").
    assert log.count("reconnected") == 3, log
    assert "store failure" not in log, log
    # What the server says as it cuts the connection is a log line like any other, not libpq's bare text.
    assert all(LOG_LINE.match(line) for line in log.splitlines()), log


def test_a_call_that_needs_the_store_fails_at_once_while_postgresql_is_down_and_works_once_it_is_back(
        bin_dir, emulator, tmp_path, own_postgres):
    directory, url = own_postgres
    daemon = logged_in_daemon(bin_dir, emulator, tmp_path, url)
    cluster_server("halt", directory)
    down = time.monotonic()
    # checkAuthentication reads the store: the first call finds the connection cut, the others a connection
    # already known lost; none waits, and each says why.
    for _ in range(20):
        start = daemon.mark()
        began = time.monotonic()
        result = daemon.call("checkAuthentication")
        assert time.monotonic() - began < 1
        assert result["errorCode"] == "Generic Authentication Error" and [s["id"] for s in result["statuses"]] == ["STORE500"]
        assert [m["method"] for m in daemon.received[start:] if "method" in m][-1] == "status"
    # A logged-in authorization reads the daemon's memory of its login (Protocol/README.md, "Live logins"): it needs
    # no store, and is granted; only its cached expiry could not be written (logged).
    result, notes, elapsed = authorize(daemon)
    assert "token" in result and "tokenRequestFailed" not in notes, result
    assert elapsed < 1, elapsed
    cluster_server("resume", directory)
    down = time.monotonic() - down
    assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    result, notes, _ = authorize(daemon)
    assert "token" in result and "tokenRequestFailed" not in notes, result
    assert daemon.stop() == 0
    # The log counts the failures by runs (Protocol/README.md, "The store"): a line when the run starts, at most one
    # more per 10 s, and one when the store works again; not a line per call.
    lines = daemon.log().splitlines()
    failures = [line for line in lines if "store failure" in line]
    assert 1 <= len(failures) <= 1 + down // 10, failures
    assert "PostgreSQL connect failed" in failures[0], failures
    working = [line for line in lines if "store working again" in line]
    assert len(working) == 1 and " info store: " in working[0], lines
    assert all(" warning store: " in line for line in failures), failures
    assert int(re.search(r"\((\d+) failed operations in all\)", working[0]).group(1)) >= 20, working


def test_a_call_held_by_another_sessions_lock_fails_after_5_s_and_the_next_one_works(bin_dir, emulator, tmp_path,
                                                                                      postgres_url):
    """Another session keeps an exclusive lock on the logins' table (a long migration, an operator's transaction left
    open). A call that reads the logins gives up after 5 s with STORE500, as one held by SQLite's write lock does
    (Protocol/README.md, "The store"); it used to wait for as long as the lock was kept, and the daemon then did not
    stop on SIGTERM either (a breaking pass)."""
    daemon = logged_in_daemon(bin_dir, emulator, tmp_path, postgres_url)
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    holder = subprocess.Popen([psql, "-X", "-q", postgres_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        holder.stdin.write("BEGIN;\nLOCK TABLE profiles IN ACCESS EXCLUSIVE MODE;\n\\echo locked\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "locked"
        start = daemon.mark()
        began = time.monotonic()
        result = daemon.call("checkAuthentication", timeout=60)
        elapsed = time.monotonic() - began
        assert result["errorCode"] == "Generic Authentication Error" and [s["id"] for s in result["statuses"]] == ["STORE500"]
        assert [m["method"] for m in daemon.received[start:] if "method" in m][-1] == "status"
        assert 4 < elapsed < 15, elapsed
        assert "statement timeout" in result["statuses"][0]["message"], result
    finally:
        holder.communicate("ROLLBACK;\n", timeout=30)
    assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    assert daemon.stop() == 0


def test_a_server_that_stops_answering_does_not_keep_the_daemon_from_exiting(bin_dir, emulator, tmp_path, postgres_url):
    """The server process serving the daemon is frozen (SIGSTOP: a hung host, a network that drops everything), so a
    store call never returns. SIGTERM: the call is answered -32003 at the shutdown timeout, and the store, still
    busy, is left behind one second later with a warning; the daemon used to wait for it forever (a breaking pass)."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", postgres_url,
                                               "--shutdown-timeout", "1"))
    ready(daemon)
    login(daemon)
    backends = server_processes(postgres_url)
    try:
        for pid in backends:
            os.kill(pid, signal.SIGSTOP)
        request = daemon.send("checkAuthentication")
        began = time.monotonic()
        daemon.process.send_signal(signal.SIGTERM)
        assert daemon.process.wait(timeout=30) == 0
        assert time.monotonic() - began < 10
        assert daemon.response(request)[1]["error"]["code"] == -32003
    finally:
        for pid in backends:
            os.kill(pid, signal.SIGCONT)
    daemon.stop()
    assert "the store was still busy at the shutdown deadline; exiting without closing it" in daemon.log()


def test_a_server_that_stops_answering_fails_the_call_after_10_s_and_the_next_call_connects_anew(
        bin_dir, emulator, tmp_path, own_postgres):
    """From a new-user pass (an operator): the server process serving the daemon is frozen (SIGSTOP), so a statement
    gets no answer. A call that needed the store waited for as long as the freeze lasted, with nothing in the log.
    Now the statement fails once its answer is 10 s late (Protocol/README.md, "The store"), logged as every store
    failure is, and the call is answered (STORE500 if the statement was its own); the next call connects anew (to a
    new server process) and succeeds, the old one still frozen. A cluster of its own: a server process frozen this long held
    up other tests that share a cluster (their databases' CREATE and DROP waited for it)."""
    _, postgres_url = own_postgres
    daemon = logged_in_daemon(bin_dir, emulator, tmp_path, postgres_url)
    backends = server_processes(postgres_url)
    try:
        for pid in backends:
            os.kill(pid, signal.SIGSTOP)
        # Another device on the instance: its setRequestor reads the store (a logged-in checkAuthentication would
        # be answered from the daemon's memory of its login). The store thread meets the freeze with its first
        # statement, the call's own or its look for other daemons' login changes; either way the call is answered
        # once that statement is 10 s late, and fails only if the statement was its own.
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "tv-frozen"}) == {}
        began = time.monotonic()
        result = daemon.call("setRequestor", {"requestorID": "REF"}, timeout=60)
        elapsed = time.monotonic() - began
        assert 9 < elapsed < 20, elapsed
        if result["status"] == 0:
            assert [s["id"] for s in result["statuses"]] == ["STORE500"], result
            assert "no answer from the server within 10 s" in result["statuses"][0]["message"], result
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "tv-after"}) == {}
        began = time.monotonic()
        assert daemon.call("setRequestor", {"requestorID": "REF"}, timeout=60) == {"status": 1}
        assert time.monotonic() - began < 5
    finally:
        for pid in backends:
            os.kill(pid, signal.SIGCONT)
    assert daemon.stop() == 0
    log = daemon.log()
    failures = [line for line in log.splitlines() if "store failure" in line]
    assert len(failures) == 1 and "no answer from the server within 10 s" in failures[0], failures
    # Said where it happened too, whoever met it (a cache write would not report it; a breaking pass), and the
    # reconnect after it does not call the connection lost.
    assert "PostgreSQL: no answer from the server within 10 s; the connection is dropped" in log, log
    assert "PostgreSQL connection lost earlier" not in log, log


def test_a_storage_check_while_postgresql_is_down_ends_nothing_and_runs_again_once_it_is_back(bin_dir, emulator, tmp_path,
                                                                                               own_postgres):
    """init's storageCheck (Protocol/README.md, Lifecycle 2) meets a server that is down: the store is away, not
    corrupt. setRequestor fails with STORE500 before any login is ended at Adobe (`all` used to take the failed read
    for an unreadable store and log the user out there), and the next setRequestor, with the server back, checks
    again. A fleet host names the device (`deviceIdentifier`), so the check is the first store read of the call."""
    from test_store_storage_check import logouts
    directory, url = own_postgres
    device = {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "tv-0042"}
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", url))
    assert daemon.call("init", device) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login(daemon)
    before = logouts(emulator)
    cluster_server("halt", directory)
    for check in ("all", "clear"):
        # A new instance: the login is no longer in the daemon's memory, so the check reads the store.
        assert daemon.call("init", device | {"storageCheck": check}) == {}
        result = daemon.call("setRequestor", {"requestorID": "REF"})
        assert result["status"] == 0 and [s["id"] for s in result["statuses"]] == ["STORE500"], (check, result)
    assert logouts(emulator) == before, "a login was ended at Adobe while the store was away"
    cluster_server("resume", directory)
    # `clear` again, with the store back: this time it runs, ends the login at Adobe, and removes it here.
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert logouts(emulator) == before + 1
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0
