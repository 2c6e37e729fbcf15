"""The store under the real daemon (Protocol/README.md "The store"): an older store upgraded in place keeps its
login, another process holding the SQLite write lock never logs anyone out and never stalls other connections,
failures are reported, keys are exact, and the state directory rules hold."""
import json
import os
import pathlib
import pwd
import shutil
import signal
import sqlite3
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from rpc_helper import (NOT_AUTHENTICATED, REDIRECT_URL, SOFTWARE_STATEMENT, SocketDaemon, StdioDaemon, daemon_args,
                        follow_to_redirect_url)
from test_bridge_flows import login, ready

GENERIC_AUTHENTICATION = "Generic Authentication Error"
# SQLite's SQLITE_BUSY as the daemon words it (TokenStoreError.description).
LOCKED = ("database is locked (another process holds its lock: a second daemon's write, a backup, an sqlite3 shell; "
          "it works again once that lets go)")


def store_file(state: pathlib.Path) -> pathlib.Path:
    return state / "passbridge.sqlite"


def count_profiles(state: pathlib.Path) -> int:
    with sqlite3.connect(store_file(state)) as db:
        return db.execute("SELECT count(*) FROM profiles").fetchone()[0]


class WriteLock:
    """Another process holding the store's SQLite write lock (`BEGIN IMMEDIATE`) until released."""

    def __init__(self, state: pathlib.Path):
        script = ("import sqlite3, sys\n"
                  "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                  "db.execute('BEGIN IMMEDIATE')\n"
                  "print('locked', flush=True)\n"
                  "sys.stdin.read()\n"
                  "db.execute('ROLLBACK')\n")
        self.process = subprocess.Popen(["python3", "-c", script, str(store_file(state))], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "locked"

    def release(self):
        self.process.stdin.close()
        assert self.process.wait(timeout=10) == 0


def logged_in_on_a_socket(bin_dir, emulator, state, short_tmp):
    """A daemon on a socket with the state directory `state`, and a connection logged in (MockMVPD)."""
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, state))
    writer = daemon.client()
    ready(writer)
    login(writer)
    return daemon, writer


# ------------------------------------------------------------------------------------------ upgrade

def downgrade_to_key_value_layout(state: pathlib.Path):
    """Rewrites the store into the layout of the first schema (one `kv(ns, key, value)` table, user_version 1),
    exactly as PassBridge wrote it before one table per entity: keys `backend|sha256(statement)` for client
    credentials (`…|token` for the access token), `…|requestor` for the selection, `…|requestor|mvpd` for a
    profile; values JSON text."""
    with sqlite3.connect(store_file(state)) as db:
        rows = [("device", "id", db.execute("SELECT device_id FROM device_identity").fetchone()[0])]
        for backend, sha, client_id, secret in db.execute("SELECT backend, statement_sha256, client_id, client_secret FROM client_credentials"):
            rows.append(("credentials", f"{backend}|{sha}", json.dumps({"client_id": client_id, "client_secret": secret})))
        for backend, sha, token, expires in db.execute("SELECT backend, statement_sha256, token, expires_ms FROM access_tokens"):
            rows.append(("credentials", f"{backend}|{sha}|token", json.dumps({"access_token": token, "expires": expires})))
        for backend, sha, requestor, mvpd, profile in db.execute("SELECT backend, statement_sha256, requestor, mvpd, profile FROM profiles"):
            rows.append(("profile", f"{backend}|{sha}|{requestor}|{mvpd}", profile))
        for backend, sha, requestor, mvpd in db.execute("SELECT backend, statement_sha256, requestor, mvpd FROM selected_providers"):
            rows.append(("selected", f"{backend}|{sha}|{requestor}", mvpd))
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            db.execute(f"DROP TABLE {table}")
        db.execute("CREATE TABLE kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ns, key))")
        db.executemany("INSERT INTO kv VALUES (?, ?, ?)", rows)
        db.execute("PRAGMA user_version=1")
    return rows


def test_a_key_value_store_is_upgraded_in_place_and_keeps_its_login(bin_dir, emulator, tmp_path):
    state = tmp_path / "state"
    first = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    ready(first)
    login(first)
    device = first.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    assert first.stop() == 0
    rows = downgrade_to_key_value_layout(state)
    assert sorted(ns for ns, _, _ in rows) == ["credentials", "credentials", "device", "profile", "selected"]

    upgraded = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    ready(upgraded)
    assert upgraded.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    assert upgraded.call("getSelectedProvider")["mvpd"]["ID"] == "MockMVPD"
    assert upgraded.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"] == device
    # The emulator knows the profile under the same client credentials and device id: authorization works.
    assert "token" in upgraded.call("getAuthorization", {"resource": "ch1"})
    assert upgraded.stop() == 0
    with sqlite3.connect(store_file(state)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3
        assert db.execute("SELECT count(*) FROM client_credentials").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'kv'").fetchone()[0] == 0


# ------------------------------------------------------------------------- another writer's lock

def test_another_process_holding_the_write_lock_logs_nobody_out_and_the_failure_is_reported(bin_dir, emulator, tmp_path,
                                                                                             short_tmp):
    """The box-wide logout transcript: an instance started while another process holds the write lock gets the
    stored device id (never an invented one), its setRequestor deletes no login, and a write it cannot make is
    reported (status STORE500) instead of answered as a success."""
    state = tmp_path / "state"
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, state))
    logged_in = daemon.client()
    ready(logged_in)
    login(logged_in)
    stored_device = logged_in.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    assert count_profiles(state) == 1

    lock = WriteLock(state)
    try:
        # A second daemon on the same state directory, and a new instance on the first, start under the lock:
        # both use the stored device id and find the login; nothing is deleted.
        second = SocketDaemon(bin_dir, short_tmp / "pb2.sock", *daemon_args(emulator.base, state))
        instances = [daemon.client(), second.client()]
        for instance in instances:
            ready(instance)
            assert instance.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"] == stored_device
            assert instance.call("checkAuthentication") == {"status": 1, "errorCode": ""}
        # A login that cannot be stored is a failure, reported as such, never a success.
        instance = instances[1]
        start = instance.mark()
        get_id = instance.send("getAuthentication", {"forceAuthn": True})
        instance.notification("displayProviderDialog", start)
        selected = instance.call("setSelectedProvider", {"mvpdId": "TempPass"})
        login_result = instance.response(get_id, start)[1]["result"]
        notes = [m for m in instance.received[start:] if "method" in m and m["method"] != "sendTrackingData"]
        assert [m["method"] for m in notes] == ["displayProviderDialog", "setAuthenticationStatus", "status"]
        # The result that ended the login says why (Protocol/README.md "Failure reasons").
        assert selected == {"status": 0, "errorCode": GENERIC_AUTHENTICATION, "statuses": [notes[-1]["params"]]}
        assert notes[-1]["params"]["id"] == "STORE500"
        # The getAuthentication the login answers carries the same reason (Protocol/README.md "Failure reasons").
        assert login_result == selected
        assert notes[1]["params"] == {"status": 0, "errorCode": GENERIC_AUTHENTICATION}
        assert notes[2]["params"]["id"] == "STORE500" and notes[2]["params"]["level"] == "error"
        assert "database is locked" in notes[2]["params"]["message"]
        for instance in instances:
            instance.close()
    finally:
        lock.release()
    assert count_profiles(state) == 1
    assert logged_in.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    logged_in.close()
    assert daemon.stop() == 0
    assert second.stop() == 0
    log = second.log()
    assert "store failure" in log and "database is locked" in log


def test_rpc_discover_answers_in_milliseconds_while_another_process_holds_the_write_lock(bin_dir, emulator, tmp_path,
                                                                                         short_tmp):
    state = tmp_path / "state"
    daemon, writer = logged_in_on_a_socket(bin_dir, emulator, state, short_tmp)
    lock = WriteLock(state)
    try:
        # The instance's logout waits for the lock (5 s) on the store's thread ...
        logout_id = writer.send("logout")
        time.sleep(0.3)
        # ... while a new connection creates its instance and another one is served at once.
        fresh = daemon.client()
        fresh.send("init", {"redirectUrl": REDIRECT_URL})
        other = daemon.client()
        timings = []
        for _ in range(5):
            began = time.monotonic()
            assert other.call("rpc.discover")["openrpc"].startswith("1.")
            timings.append(time.monotonic() - began)
        assert max(timings) < 0.5, timings
        _, answer = writer.response(logout_id, timeout=30)
        reasons = answer["result"].pop("statuses")
        assert answer["result"] == {"status": 0, "errorCode": GENERIC_AUTHENTICATION}
        assert [r["id"] for r in reasons] == ["STORE500"]
        other.close()
        fresh.close()
    finally:
        lock.release()
    writer.close()
    assert daemon.stop() == 0


def test_a_cache_write_that_meets_another_process_lock_holds_up_no_call_and_is_made_once_it_is_let_go(
        bin_dir, emulator, tmp_path, short_tmp):
    """An authorization's expiry is a cache write: under another process's write lock it waits 100 ms, not the 5 s
    a login's write waits, and is tried again later, each time twice as late, not before every job. Before, the jobs
    behind it waited for each of its 8 tries: a new connection's first calls took 20 s; and then, with 100 ms, each
    store call waited 100 ms and used up a try."""
    state = tmp_path / "state"
    daemon, writer = logged_in_on_a_socket(bin_dir, emulator, state, short_tmp)
    assert "token" in writer.call("getAuthorization", {"resource": "ch1"})
    deadline = time.monotonic() + 10
    while writer.call("rpc.stats")["authorizationExpiries"]["written"] == 0:
        assert time.monotonic() < deadline, "the first expiry was never written"
        time.sleep(0.05)
    lock = WriteLock(state)
    try:
        # A new decision, a new expiry: queued for the store's worker, which meets the lock.
        assert "token" in writer.call("getAuthorization", {"resource": "ch1"})
        with sqlite3.connect(store_file(state)) as db:
            stored_before = db.execute("SELECT not_after_ms FROM authorization_expiries").fetchall()
        # A new device's instance reads the store (its device's logins) in three calls; the worker tries the write
        # before each job.
        fresh = daemon.client()
        began = time.monotonic()
        fresh.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "second-device"})
        fresh.call("setRequestor", {"requestorID": "REF"})
        assert fresh.call("checkAuthentication")["status"] == 0
        took = time.monotonic() - began
        assert took < 2, f"the calls waited {took:.1f} s behind the cache write"
        fresh.close()
        # A write that failed waits for its next try, not for the next job: ten authorizations, each with a new
        # expiry, and ten store reads between them, neither wait on the lock nor use up the write's 8 tries.
        began = time.monotonic()
        for _ in range(10):
            assert "token" in writer.call("getAuthorization", {"resource": "ch1"})
            assert "expires" in writer.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1"})
        took = time.monotonic() - began
        assert took < 0.8, f"the calls waited {took:.1f} s on the lock"
    finally:
        lock.release()
    # Once the lock is let go, the write's next try stores the newest expiry.
    deadline = time.monotonic() + 40
    while writer.call("rpc.stats")["authorizationExpiries"]["written"] < 2:
        assert time.monotonic() < deadline, "the expiry was not written once the lock was let go"
        time.sleep(0.1)
    with sqlite3.connect(store_file(state)) as db:
        stored_after = db.execute("SELECT not_after_ms FROM authorization_expiries").fetchall()
    assert len(stored_after) == 1 and stored_after != stored_before
    writer.close()
    assert daemon.stop() == 0
    assert "store failure" not in daemon.log()


def test_a_cache_write_still_failing_when_the_daemon_stops_is_logged(bin_dir, emulator, tmp_path, short_tmp):
    """SIGTERM while an expiry waits for its next try under another process's lock: the last try before the worker
    ends fails too, and the write is logged as given up. Before, it was lost without a line."""
    state = tmp_path / "state"
    daemon, writer = logged_in_on_a_socket(bin_dir, emulator, state, short_tmp)
    lock = WriteLock(state)
    try:
        assert "token" in writer.call("getAuthorization", {"resource": "ch1"})
        writer.close()
        assert daemon.stop() == 0
    finally:
        lock.release()
    failures = [line for line in daemon.log().splitlines() if "store failure" in line]
    assert len(failures) == 1, daemon.log()
    assert " warning store: store failure writing the cache (authorization expiries, selected MVPDs) before stopping: " \
        in failures[0] and failures[0].endswith(LOCKED), failures


def test_a_new_store_held_by_another_writer_is_opened_once_the_lock_is_let_go(bin_dir, emulator, tmp_path):
    """Two processes that open a new store file together: turning it to WAL is the one step SQLite's busy handler
    does not wait for (it would be a deadlock), so the daemon waits itself, up to its busy timeout (5 s). Here
    another process holds the write lock of the new, empty file; the lock is let go once the daemon has opened
    the file (seen in /proc), and setRequestor then succeeds. Without the wait it fails at once with STORE500."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    lock = WriteLock(state)
    store_file(state).chmod(0o600)
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    try:
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        start = daemon.mark()
        request = daemon.send("setRequestor", {"requestorID": "REF"})
        descriptors = pathlib.Path(f"/proc/{daemon.process.pid}/fd")
        deadline = time.monotonic() + 10
        while not any(os.path.realpath(fd) == str(store_file(state)) for fd in descriptors.iterdir()):
            answered = [m for m in daemon.received[start:] if m.get("id") == request]
            assert not answered, f"answered while the lock was held: {answered}"
            assert time.monotonic() < deadline, "the daemon never opened the store"
            time.sleep(0.001)
    finally:
        lock.release()
    assert daemon.response(request, start)[1]["result"] == {"status": 1}
    with sqlite3.connect(store_file(state)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert daemon.stop() == 0
    assert "store failure" not in daemon.log()


# ------------------------------------------------------------------------------ token refresh lease

def refresh_leases(state: pathlib.Path) -> list[int]:
    with sqlite3.connect(store_file(state)) as db:
        return [until for (until,) in db.execute("SELECT refreshing_until_ms FROM access_tokens")]


def test_a_failed_registration_gives_its_refresh_lease_back(bin_dir, emulator, tmp_path):
    """The process that refreshes the access token holds a lease in the store (10 s) so that the fleet's others
    wait for its token instead of registering too. When registration fails, the lease is given back: the next
    setRequestor, in the same daemon or a new one on the same store, registers at once. It used to wait out the
    lease, 10 s, first."""
    state = tmp_path / "state"
    assert emulator.admin("faults", {"method": "POST", "path": "/o/client/register", "kind": "status", "value": 503,
                                     "count": 2}) == 201
    first = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    assert first.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert first.call("setRequestor", {"requestorID": "REF"})["status"] == 0
    assert refresh_leases(state) == [0]
    # The second 503: the lease is given back each time, and the same daemon's next call is not held by its own.
    begun = time.monotonic()
    assert first.call("setRequestor", {"requestorID": "REF"})["status"] == 0
    assert time.monotonic() - begun < 5, "the second setRequestor waited for the first one's lease"
    assert refresh_leases(state) == [0]
    assert first.stop() == 0

    second = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    begun = time.monotonic()
    ready(second)
    assert time.monotonic() - begun < 5, "a new daemon waited for the lease of the failed registration"
    assert len(refresh_leases(state)) == 1
    assert second.stop() == 0



def test_a_daemon_stopped_during_a_refresh_gives_its_lease_back(bin_dir, emulator, tmp_path):
    """A daemon told to stop (SIGTERM) while its registration hangs gives its refresh lease back as it closes the
    store: the next daemon on the same store registers at once. It used to leave the lease behind, and every other
    process of the fleet waited it out (up to 10 s) before refreshing."""
    state = tmp_path / "state"
    # 3 s: the daemon is gone 0.5 s after the signal; a longer hang would hold the emulator's stop at the file's end.
    assert emulator.admin("faults", {"method": "POST", "path": "/o/client/register", "kind": "latency", "value": 3000,
                                     "count": 1}) == 201
    first = StdioDaemon(bin_dir, *daemon_args(emulator.base, state, "--shutdown-timeout", "0.5"))
    assert first.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    first.send("setRequestor", {"requestorID": "REF"})
    deadline = time.monotonic() + 30
    while True:
        try:  # not before the daemon made the file: sqlite3.connect would make it
            if store_file(state).exists() and any(refresh_leases(state)):
                break
        except sqlite3.OperationalError:  # its tables not made yet
            pass
        assert time.monotonic() < deadline, "the daemon never took the refresh lease"
        time.sleep(0.01)
    first.process.send_signal(signal.SIGTERM)
    assert first.process.wait(timeout=20) == 0
    first.stop()
    assert refresh_leases(state) == [0]

    second = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    begun = time.monotonic()
    ready(second)
    assert time.monotonic() - begun < 5, "a new daemon waited for the lease of the daemon that was stopped"
    assert second.stop() == 0

# ------------------------------------------------------------------------------------- exact keys

def test_a_resource_with_u0000_and_a_non_ascii_mvpd_are_read_and_deleted_exactly(bin_dir, tmp_path):
    config = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Sources" / "PassEmulator" / "default-config.json").read_text())
    provider = config["serviceProviders"][0]
    provider["mvpds"].insert(0, dict(provider["mvpds"][0], id="Câble", displayName="Câble Télé"))
    provider["mvpds"].insert(1, dict(provider["mvpds"][0], id="Câble2", displayName="Câble Deux"))
    for user in config["users"]:
        user["mvpds"] += ["Câble", "Câble2"]
        user["permitUnlisted"] = True
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))
    emulator = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0", "--config", str(config_file)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = emulator.stdout.readline().strip()
        state = tmp_path / "state"
        daemon = StdioDaemon(bin_dir, *daemon_args(base, state))
        ready_any(daemon)
        login_to(daemon, "Câble")
        plain = daemon.call("getAuthorization", {"resource": "ch1"})
        with_nul = daemon.call("getAuthorization", {"resource": "ch1\u0000zz"})
        assert with_nul["resource"] == "ch1\u0000zz"
        expiry = daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1"})["expires"]
        assert isinstance(expiry, int)
        assert daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1\u0000"})["metadata"] is None
        assert daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1\u0000zz"})["expires"] >= expiry
        assert plain["resource"] == "ch1"
        with sqlite3.connect(store_file(state)) as db:
            rows = db.execute("SELECT CAST(mvpd AS BLOB), CAST(resource AS BLOB) FROM authorization_expiries ORDER BY resource").fetchall()
        assert rows == [("Câble".encode(), b"ch1"), ("Câble".encode(), b"ch1\x00zz")]
        # Also log in with the look-alike MVPD, then log out of both: only exact rows existed, and all go.
        login_to(daemon, "Câble2", already=True)
        with sqlite3.connect(store_file(state)) as db:
            assert sorted(m for (m,) in db.execute("SELECT mvpd FROM profiles")) == ["Câble", "Câble2"]
        start = daemon.mark()
        logout_id = daemon.send("logout")
        _, navigate = daemon.notification("navigateToUrl", start)
        daemon.call("handleExternalURL", {"url": follow_to_redirect_url(navigate["params"]["url"])})
        daemon.response(logout_id, start)
        with sqlite3.connect(store_file(state)) as db:
            assert db.execute("SELECT count(*) FROM profiles").fetchone()[0] == 0
            assert db.execute("SELECT count(*) FROM authorization_expiries").fetchone()[0] == 0
        assert daemon.stop() == 0
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)


def ready_any(client):
    assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}


def login_to(client, mvpd, already=False):
    start = client.mark()
    get_id = client.send("getAuthentication", {"forceAuthn": True} if already else None)
    client.notification("displayProviderDialog", start)
    notes, _ = client.exchange("setSelectedProvider", {"mvpdId": mvpd})
    url = [m for m in notes if m.get("method") == "navigateToUrl"][0]["params"]["url"]
    assert client.call("handleExternalURL", {"url": follow_to_redirect_url(url)}) == {"status": 1, "errorCode": ""}
    client.response(get_id, start)


# ------------------------------------------------------------------------------- state directory

def run_daemon(bin_dir, *args, stdin=""):
    return subprocess.run([str(bin_dir / "passbridge"), "--stdio", *args], input=stdin, capture_output=True, text=True, timeout=30)


# init and setRequestor over stdio: the first call that needs the store (it reads the device identifier).
SET_REQUESTOR = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "init", "params": {"redirectUrl": REDIRECT_URL}}) + "\n"
                 + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "setRequestor", "params": {"requestorID": "REF"}}) + "\n")


def responses(result) -> dict:
    return {m["id"]: m for m in map(json.loads, result.stdout.splitlines()) if "id" in m}


def test_a_created_state_directory_is_0700_and_the_store_0600(bin_dir, emulator, tmp_path):
    state = tmp_path / "new" / "state"
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state), stdin=SET_REQUESTOR)
    assert result.returncode == 0, result.stderr
    assert responses(result)[2]["result"]["status"] == 1
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE(store_file(state).stat().st_mode) == 0o600


def test_the_store_is_opened_by_the_first_call_that_needs_it(bin_dir, emulator, tmp_path):
    """Start-up checks the state directory but opens no database (Protocol/README.md "The store"): a daemon that
    only answers rpc.discover leaves the directory empty; setRequestor creates the store."""
    state = tmp_path / "state"
    discover = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"}) + "\n"
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state), stdin=discover)
    assert result.returncode == 0, result.stderr
    assert "result" in responses(result)[1]
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert list(state.iterdir()) == []
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state), stdin=SET_REQUESTOR)
    assert responses(result)[2]["result"]["status"] == 1
    assert store_file(state).exists()


def test_an_existing_private_directory_is_used_as_it_is(bin_dir, emulator, tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(state.stat().st_mode) == 0o755


def test_an_empty_state_dir_is_a_usage_error_not_the_default_directory(bin_dir, emulator, tmp_path):
    result = run_daemon(bin_dir, "--state-dir", "", "--backend", emulator.base)
    assert result.returncode == 2
    assert "--state-dir needs a path" in result.stderr


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o770])
def test_a_directory_others_may_write_is_refused_with_one_line_and_left_alone(bin_dir, emulator, tmp_path, mode):
    state = tmp_path / "shared"
    state.mkdir()
    state.chmod(mode)
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"refusing state directory {state}" in lines[0], result.stderr
    # A sticky directory is shared by design (/tmp): chmod would break its other users, so the advice is another one.
    advice = (f"a directory shared by all, such as /tmp: name one of its own with --state-dir, such as {state}/passbridge"
              if mode & 0o1000 else f"chmod go-w {state}, or name another with --state-dir")
    assert lines[0].endswith(f"; {advice})"), lines[0]
    assert stat.S_IMODE(state.stat().st_mode) == mode
    assert list(state.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the directory to another user")
def test_a_directory_of_another_user_is_refused(bin_dir, emulator, tmp_path):
    state = tmp_path / "theirs"
    state.mkdir(mode=0o700)
    os.chown(state, 65534, 65534)
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state))
    assert result.returncode == 1
    owner = pwd.getpwuid(65534).pw_name
    assert f"owned by uid 65534 ({owner}), not by this user (uid 0); run this as its owner, e.g. sudo -u {owner} …" \
        in result.stderr, result.stderr
    # passbridge state as root on the daemon's directory: the same words (it said only whose uid it was).
    (state / "passbridge.sqlite").touch(mode=0o600)
    os.chown(state / "passbridge.sqlite", 65534, 65534)
    listed = subprocess.run([str(bin_dir / "passbridge"), "state", "list", "--state-dir", str(state)], capture_output=True,
                            text=True, timeout=30)
    assert listed.returncode == 1 and f"e.g. sudo -u {owner} …" in listed.stderr, listed.stderr
    # Root's directory, for another user: not "run this as root", but a directory of its own. The binary is copied
    # where that user can run it (a clone may sit in a folder only root can enter, as CI's does).
    rooted = pathlib.Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        rooted.chmod(0o755)
        binary = rooted / "passbridge"
        shutil.copy(bin_dir / "passbridge", binary)
        result = subprocess.run(["runuser", "-u", owner, "--", str(binary), "--state-dir", str(rooted), "--backend",
                                 emulator.base], input="", capture_output=True, text=True, timeout=30, cwd="/")
        assert result.returncode == 1 and "owned by uid 0 (root), not by this user (uid 65534); name a directory of this " \
            "user's own with --state-dir" in result.stderr, result.stderr
    finally:
        shutil.rmtree(rooted)


def test_a_store_from_a_newer_passbridge_fails_the_first_call_that_needs_it(bin_dir, emulator, tmp_path):
    """The database is opened by the first call that needs it, so a store this PassBridge cannot read fails that
    call (setRequestorComplete(0) and STORE500 naming the schema version, logged), never silently; the daemon
    goes on serving, and nothing in the store is changed."""
    state = tmp_path / "state"
    assert responses(run_daemon(bin_dir, *daemon_args(emulator.base, state), stdin=SET_REQUESTOR))[2]["result"]["status"] == 1
    with sqlite3.connect(store_file(state)) as db:
        db.execute("PRAGMA user_version=99")
        db.execute("PRAGMA journal_mode=DELETE")
    before = store_file(state).read_bytes()
    client = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    start = client.mark()
    assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    result = client.call("setRequestor", {"requestorID": "REF"})
    assert result["status"] == 0
    assert [s["id"] for s in result["statuses"]] == ["STORE500"]
    assert "schema version 99" in result["statuses"][0]["message"]
    assert client.notification("setRequestorComplete", start)[1]["params"] == {"status": 0}
    assert "result" in client.exchange("rpc.discover")[1]
    assert client.stop() == 0
    assert "schema version 99" in client.log()
    # Not a byte of it changed, not even its journal mode.
    assert store_file(state).read_bytes() == before
    with sqlite3.connect(store_file(state)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 99
