"""Fleet mode (Protocol/README.md "Fleet mode"): two daemons, each with its own state directory, share one PostgreSQL
database. A device that logged in through one is logged in on the other, a logout through one is seen by the other,
another device stays logged out, the fleet registers once and refreshes its access token once, and one daemon
killed mid-flow leaves the other going."""
import base64
import glob
import json
import subprocess
import threading
import time

import pytest

from postgres_fixtures import postgres_cluster, postgres_url  # noqa: F401 (fixtures)
from rpc_helper import NOT_AUTHENTICATED, REDIRECT_URL, SocketDaemon, daemon_args, follow_to_redirect_url

DEVICE_INFO = base64.b64encode(json.dumps({"model": "Fleet-TV", "version": "2", "osName": "Linux", "osVersion": "6.1",
                                           "connectionType": "LAN"}).encode()).decode()


class LoggedEmulator:
    """pass-emulator whose request log (one line per request, on stderr) is kept, to count DCR calls."""

    def __init__(self, bin_dir, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.process = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                                        stderr=self.log, text=True)
        self.base = self.process.stdout.readline().strip()

    def count(self, request: str) -> int:
        self.log.flush()
        return sum(1 for line in open(self.log_path) if request + " ->" in line)

    def advance_clock(self, seconds: int):
        import urllib.request
        request = urllib.request.Request(self.base + "/__admin/clock", data=json.dumps({"advanceSeconds": seconds}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def fault(self, rule: dict):
        """Adds a fault rule (`POST /__admin/faults`, Sources/PassEmulator/README.md)."""
        import urllib.request
        request = urllib.request.Request(self.base + "/__admin/faults", data=json.dumps(rule).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.log.close()


@pytest.fixture()
def emulator(bin_dir, tmp_path):
    emulator = LoggedEmulator(bin_dir, tmp_path / "emulator.log")
    yield emulator
    emulator.stop()


def device(daemon, identifier, address="203.0.113.7"):
    """A connection acting for `identifier` with its requestor set."""
    client = daemon.client()
    assert client.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": identifier, "deviceInfo": DEVICE_INFO,
                                "forwardedFor": address}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    return client


def login(client):
    start = client.mark()
    get_id = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, _ = client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    url = [m for m in notes if m.get("method") == "navigateToUrl"][0]["params"]["url"]
    assert client.call("handleExternalURL", {"url": follow_to_redirect_url(url)}) == {"status": 1, "errorCode": ""}
    client.response(get_id, start)


def logout(client):
    start = client.mark()
    logout_id = client.send("logout")
    _, navigate = client.notification("navigateToUrl", start)
    client.call("handleExternalURL", {"url": follow_to_redirect_url(navigate["params"]["url"])})
    client.response(logout_id, start)


def test_two_daemons_on_one_postgresql_are_one_fleet(bin_dir, emulator, tmp_path, short_tmp, postgres_url):
    a = SocketDaemon(bin_dir, short_tmp / "a.sock", *daemon_args(emulator.base, tmp_path / "machine-a", "--store", postgres_url))
    b = SocketDaemon(bin_dir, short_tmp / "b.sock", *daemon_args(emulator.base, tmp_path / "machine-b", "--store", postgres_url))
    try:
        d_on_a = device(a, "device-D")
        login(d_on_a)
        d_on_b = device(b, "device-D", address="2001:db8::42")
        assert d_on_b.call("checkAuthentication") == {"status": 1, "errorCode": ""}, "logged in on B without a login there"
        assert d_on_b.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"] == "device-D"
        assert "token" in d_on_b.call("getAuthorization", {"resource": "ch1"})
        assert d_on_b.call("getMetadata", {"opCode": "METADATA_USER_META", "userMetaKey": "userID"})["metadata"] == "demo-user-0001"

        for daemon in (a, b):
            e = device(daemon, "device-E", address="198.51.100.9")
            assert e.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
            e.close()

        logout(d_on_b)
        assert d_on_a.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}, "B's logout seen by A"
        assert emulator.count("POST /o/client/register") == 1, "one DCR registration for the fleet"
        assert emulator.count("POST /o/client/token") == 1, "one access token for the fleet"

        # The access token expires (6 h): both daemons need it at once; one of them refreshes it for both.
        login(d_on_a)
        emulator.advance_clock(6 * 3600 + 120)
        results = {}

        def authorize(name, client):
            results[name] = client.call("getAuthorization", {"resource": "ch1"})

        workers = [threading.Thread(target=authorize, args=(name, client)) for name, client in (("a", d_on_a), ("b", d_on_b))]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        assert "token" in results["a"] and "token" in results["b"], results
        assert emulator.count("POST /o/client/token") == 2, "refreshed once for the fleet\n" + open(emulator.log_path).read()[-2000:]
        assert emulator.count("POST /o/client/register") == 1

        # A is killed in the middle of a login; B goes on, and so does the device's login.
        f_on_a = device(a, "device-F")
        start = f_on_a.mark()
        f_on_a.send("getAuthentication")
        f_on_a.notification("displayProviderDialog", start)
        a.process.kill()
        a.process.wait(timeout=10)
        assert d_on_b.call("checkAuthentication") == {"status": 1, "errorCode": ""}
        assert "token" in d_on_b.call("getAuthorization", {"resource": "ch1"})
        f_on_b = device(b, "device-F")
        assert f_on_b.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
        login(f_on_b)
        assert f_on_b.call("checkAuthentication") == {"status": 1, "errorCode": ""}
        for client in (d_on_b, f_on_b):
            client.close()
    finally:
        if a.process.poll() is None:
            a.stop()
        assert b.stop() == 0

    listed = subprocess.run([str(bin_dir / "passbridge"), "state", "list", "--store", postgres_url], capture_output=True, text=True,
                            timeout=30)
    rows = [line.split() for line in listed.stdout.strip().splitlines()[1:]]
    assert sorted((row[0], row[1], row[4]) for row in rows) == [("REF", "MockMVPD", "device-D"), ("REF", "MockMVPD", "device-F")]
    reset = subprocess.run([str(bin_dir / "passbridge"), "state", "reset", "--store", postgres_url], capture_output=True,
                           text=True, timeout=30)
    assert reset.stdout.startswith("deleted 2 logins")
    assert "password" not in listed.stdout + reset.stdout


def test_a_daemon_stopped_during_a_refresh_does_not_hold_the_fleet_back(bin_dir, emulator, tmp_path, short_tmp,
                                                                         postgres_url):
    """Daemon A takes the fleet's token-refresh lease and registers; the registration hangs and A is stopped
    (SIGTERM). A gives the lease back as it closes the store, so daemon B, on the same database, registers at once
    instead of waiting out A's lease (10 s) as it used to."""
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]

    def lease() -> str:
        return subprocess.run([psql, "-Atc", "SELECT refreshing_until_ms FROM access_tokens", postgres_url],
                              capture_output=True, text=True, timeout=30, check=True).stdout.strip()

    # 3 s: A is gone 0.5 s after the signal; a longer hang would only hold the emulator's stop.
    emulator.fault({"method": "POST", "path": "/o/client/register", "kind": "latency", "value": 3000, "count": 1})
    a = SocketDaemon(bin_dir, short_tmp / "a.sock", *daemon_args(emulator.base, tmp_path / "machine-a", "--store",
                                                                 postgres_url, "--shutdown-timeout", "0.5"))
    try:
        client = a.client()
        assert client.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "device-A"}) == {}
        client.send("setRequestor", {"requestorID": "REF"})
        deadline = time.monotonic() + 30
        while lease() in ("", "0"):
            assert time.monotonic() < deadline, "A never took the refresh lease"
            time.sleep(0.01)
        assert a.stop() == 0
    finally:
        if a.process.poll() is None:
            a.process.kill()
    assert lease() == "0"

    b = SocketDaemon(bin_dir, short_tmp / "b.sock", *daemon_args(emulator.base, tmp_path / "machine-b", "--store", postgres_url))
    try:
        begun = time.monotonic()
        device(b, "device-B").close()
        assert time.monotonic() - begun < 5, "B waited for the lease of the daemon that was stopped"
    finally:
        assert b.stop() == 0

def test_the_fleet_store_keeps_strings_byte_for_byte(bin_dir, emulator, tmp_path, postgres_url):
    from rpc_helper import StdioDaemon
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", postgres_url))
    identifier = "dévice-\u0000-𝄞"
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": identifier}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login(daemon)
    mrss = "<rss><channel><title>ch1</title><item><title>" + "é𝄞" * 2600 + "</title></item></channel></rss>"
    for resource in ["ch1", mrss]:
        answer = daemon.call("getAuthorization", {"resource": resource})
        assert answer["resource"] == resource and "token" in answer
        assert isinstance(daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": resource})["expires"], int)
    # ch1 followed by U+0000 is another resource (denied): it never reads ch1's expiry.
    assert "token" not in daemon.call("getAuthorization", {"resource": "ch1\u0000zz"})
    for resource in ["ch1\u0000zz", "ch1\u0000"]:
        assert daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": resource})["metadata"] is None
    assert daemon.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"] == identifier
    assert daemon.stop() == 0


def test_the_start_up_line_names_the_fleet_store_without_its_password(bin_dir, postgres_url):
    """The start-up line names the PostgreSQL store as its URL with the password left out (`***`), never its value."""
    started = subprocess.run([str(bin_dir / "passbridge"), "--backend", "http://127.0.0.1:9", "--store",
                              postgres_url + "&password=hunter2", "--log-level", "debug"], input="", capture_output=True,
                             text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    assert (f" debug main: serving stdin and stdout; backend http://127.0.0.1:9, store {postgres_url}&password=***\n"
            in started.stderr), started.stderr
    assert "hunter2" not in started.stderr


def test_a_resource_too_long_for_the_fleet_index_is_not_cached_and_takes_no_other_row_with_it(bin_dir, emulator, tmp_path,
                                                                                               postgres_url):
    """An authorization expiry is cached under its resource, and a PostgreSQL index row holds at most 2704 bytes: an
    MRSS resource of 4 KB that does not compress failed the whole cache write, and the expiries waiting with it,
    each time they were tried (a store-failure warning each, and none of them cached). Now it alone is left out: its
    authorization works as before, from the backend, and the others are cached."""
    import secrets
    from rpc_helper import StdioDaemon
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", postgres_url))
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "device-L"}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login(daemon)
    mrss = "<rss><channel><title>ch1</title><item><title>" + secrets.token_hex(2000) + "</title></item></channel></rss>"
    for resource in [mrss, "ch1"]:  # the long one first: before, ch1's expiry was put back with it and lost too
        assert "token" in daemon.call("getAuthorization", {"resource": resource})
    deadline = time.monotonic() + 30
    while daemon.call("rpc.stats")["authorizationExpiries"]["written"] < 1:
        assert time.monotonic() < deadline, "ch1's expiry was never cached: " + daemon.log()
        time.sleep(0.05)
    assert isinstance(daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1"})["expires"], int)
    assert daemon.call("rpc.stats")["authorizationExpiries"]["written"] == 1
    assert "token" in daemon.call("getAuthorization", {"resource": mrss})
    assert daemon.stop() == 0
    assert "store failure" not in daemon.log(), daemon.log()


def test_a_device_identifier_is_at_most_256_characters_and_such_a_device_logs_in_on_the_fleet(bin_dir, emulator, tmp_path,
                                                                                                postgres_url):
    """A device identifier is part of every key of the device's rows. One of 3 KB was taken, and its login failed with
    STORE500 only once the user had logged in at the MVPD (the profile's index row over PostgreSQL's 2704 bytes). It is
    now refused at init (-32602, the connection still working), and the longest taken, 256 characters of 4 bytes in
    UTF-8, logs in and is authorized."""
    from rpc_helper import StdioDaemon
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", postgres_url))
    _, refused = daemon.exchange("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "d" * 257})
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"] == {"param": "deviceIdentifier", "reason": "must be at most 256 characters"}
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "𝄞" * 256}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login(daemon)
    assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    assert "token" in daemon.call("getAuthorization", {"resource": "ch1"})
    assert daemon.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"] == "𝄞" * 256
    assert daemon.stop() == 0
    assert "store failure" not in daemon.log(), daemon.log()
    # `passbridge state --device` takes that device alone on the fleet's store too.
    passbridge = str(bin_dir / "passbridge")
    for args, said in [(["--device", "other"], "deleted 0 logins"), (["--requestor", "REF", "--device", "𝄞" * 256], "deleted 1 login")]:
        reset = subprocess.run([passbridge, "state", "reset", "--store", postgres_url, *args], capture_output=True, text=True, timeout=30)
        assert reset.returncode == 0 and reset.stdout.startswith(said + " from"), reset.stdout + reset.stderr


def test_a_logout_the_watching_daemon_could_not_read_at_first_is_told_once_the_lock_is_gone(bin_dir, emulator, tmp_path,
                                                                                             short_tmp, postgres_url):
    """Daemon B's instance for device D was told it is logged in. The logout reaches B while a lock on the logins'
    table (a VACUUM FULL, an ALTER TABLE) holds B's read of it past the statement timeout (5 s). Once the lock is gone,
    B reads the login again and tells its host (Protocol/README.md, "Live logins"). A breaking pass found B's host
    told "logged in" for good: the notification was spent on the read that failed."""
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    a = SocketDaemon(bin_dir, short_tmp / "a.sock", *daemon_args(emulator.base, tmp_path / "machine-a", "--store", postgres_url))
    b = SocketDaemon(bin_dir, short_tmp / "b.sock", *daemon_args(emulator.base, tmp_path / "machine-b", "--store", postgres_url))
    holder = None
    try:
        d_on_a = device(a, "device-D")
        d_on_b = device(b, "device-D")
        assert d_on_b.call("checkAuthentication")["status"] == 0
        start = d_on_b.mark()
        login(d_on_a)
        d_on_b.notification("setAuthenticationStatus", start)
        # The logout's row goes first (psql, without a notification), then the lock, then the notification alone.
        subprocess.run([psql, "-X", "-q", postgres_url, "-c", "DELETE FROM profiles WHERE device_id = 'device-D'"],
                       check=True, timeout=30)
        holder = subprocess.Popen([psql, "-X", "-q", postgres_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        holder.stdin.write("BEGIN;\nLOCK TABLE profiles IN ACCESS EXCLUSIVE MODE;\n\\echo locked\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "locked"
        start = d_on_b.mark()
        # A payload that names no login reads as "every login changed" (Sources/AccessEnabler/Store/PostgreSQLStore.swift).
        subprocess.run([psql, "-X", "-q", postgres_url, "-c", "SELECT pg_notify('passbridge_logins', 'x')"],
                       check=True, timeout=30)
        b.wait_for_log("store failure", timeout=15)  # B's read gave up (statement timeout)
        assert [m for m in d_on_b.received[start:] if m.get("method") == "setAuthenticationStatus"] == []
        holder.stdin.write("ROLLBACK;\n")
        holder.stdin.close()
        holder.wait(timeout=30)
        _, told = d_on_b.notification("setAuthenticationStatus", start, timeout=10)
        assert told["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
        b.wait_for_log("store working again", timeout=10)
    finally:
        if holder and holder.poll() is None:
            holder.kill()
        assert a.stop() == 0 and b.stop() == 0


def test_once_the_tables_exist_a_role_without_create_serves_and_one_that_may_only_read_lists(bin_dir, emulator, tmp_path,
                                                                                              postgres_url):
    """The daemons' first role made the tables. A role with no CREATE on the schema (PostgreSQL 15 grants none on
    `public`) then runs a daemon that logs a device in and authorizes it, and a role that may only SELECT runs
    `passbridge state list`; its `reset` fails, naming the store, and the login stays. Until 2026-12-05 every start
    ran CREATE TABLE IF NOT EXISTS under an advisory lock, which PostgreSQL refuses both roles."""
    from rpc_helper import StdioDaemon
    passbridge = str(bin_dir / "passbridge")
    made = subprocess.run([passbridge, "--backend", emulator.base, "--store", postgres_url, "--state-dir", str(tmp_path / "s0")],
                          input="", capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    database = postgres_url.split("?")[0].rsplit("/", 1)[1]
    host = postgres_url.split("host=")[1].split("&")[0]
    worker, reader = database + "_worker", database + "_reader"
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    granted = subprocess.run([psql, "-v", "ON_ERROR_STOP=1", "-h", host, "-U", "passbridge", "-d", database, "-c",
                              f"CREATE ROLE {worker} LOGIN; CREATE ROLE {reader} LOGIN; "
                              f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {worker}; "
                              f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}"],
                             capture_output=True, text=True, timeout=30)
    assert granted.returncode == 0, granted.stderr
    as_worker, as_reader = (postgres_url.replace("user=passbridge", "user=" + role) for role in (worker, reader))

    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--store", as_worker))
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "deviceIdentifier": "tv-least-privilege"}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login(daemon)
    assert "token" in daemon.call("getAuthorization", {"resource": "ch1"})
    assert daemon.stop() == 0
    assert "store failure" not in daemon.log(), daemon.log()

    listed = subprocess.run([passbridge, "state", "list", "--store", as_reader], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[4] for line in listed.stdout.strip().splitlines()[1:]] == ["tv-least-privilege"], listed.stdout
    reset = subprocess.run([passbridge, "state", "reset", "--store", as_reader], capture_output=True, text=True, timeout=30)
    assert reset.returncode == 1 and "the PostgreSQL store:" in reset.stderr and "permission denied" in reset.stderr, reset.stderr
    kept = subprocess.run([passbridge, "state", "list", "--store", postgres_url], capture_output=True, text=True, timeout=30)
    assert "tv-least-privilege" in kept.stdout, kept.stdout + kept.stderr
