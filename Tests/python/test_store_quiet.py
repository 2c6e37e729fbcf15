"""What the store does not do (Protocol/README.md, "Diagnostics" and "Live logins"): an authorization whose expiry
the store already holds writes nothing (`rpc.stats` `authorizationExpiries`), the PostgreSQL feed brings
another daemon's change on its connection's socket, with no look: the test daemons here look only once an hour
(`passbridge-test-daemon --test-store-look-seconds 3600`), and a store call's answer comes back to the engine's
thread without a detour through Swift's global pool. Real daemons on real sockets, the emulator, and PostgreSQL
from Tests/postgres-cluster.sh."""
import json
import subprocess
import urllib.request

import pytest

from postgres_fixtures import postgres_cluster, postgres_url  # noqa: F401 (fixtures)
from rpc_helper import SocketDaemon, daemon_args, thread_names
from test_store_fleet import login
from test_store_live_logins import LOGGED_IN, LOGGED_OUT, instance, quiet_logout, unsolicited

AN_HOUR = ["--test-store-look-seconds", "3600"]


def clock(emulator, body: dict) -> int:
    """POST /__admin/clock; the emulator's time after it."""
    request = urllib.request.Request(emulator.base + "/__admin/clock", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["nowMillis"]


def expiries(client) -> dict:
    return client.call("rpc.stats")["authorizationExpiries"]


def stored_expiry(client) -> int | None:
    """The authorization expiry of ch1 as the store holds it, epoch milliseconds (getMetadata's `expires`; a store
    call: it comes after every write queued); None when none is stored."""
    return client.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1"}).get("expires")


def test_no_call_wakes_swifts_global_pool(daemon, emulator):
    """The daemon runs on threads of its own, all named passbridge…: the loop, the signal thread, the store's worker
    (libcurl's resolver threads take their creator's name). A store call made from a task with no executor of its
    own (the access token's fetch at setRequestor) came back on Swift's global pool, whose libdispatch workers
    (named after their queues: `r-initiated-qos`) then stayed, a hop per call and a wake-up a second while idle."""
    client = instance(daemon)
    login(client)
    assert "token" in client.call("getAuthorization", {"resource": "ch1"})
    client.exchange("checkPreauthorizedResources", {"resources": ["ch1", "ch2"], "cache": False})
    client.call("getMetadata", {"opCode": "METADATA_AUTHENTICATION"})
    names = thread_names(daemon.process.pid)
    assert all(name.startswith("passbridge") for name in names), names
    client.close()


def test_an_authorization_whose_expiry_is_unchanged_makes_no_store_write(daemon, emulator):
    client = instance(daemon)
    login(client)
    # The emulator's clock stands still: every decision has the same notAfter until the clock is moved.
    clock(emulator, {"stopped": True})
    before = expiries(client)
    assert "token" in client.call("getAuthorization", {"resource": "ch1"})
    first = stored_expiry(client)
    after_first = expiries(client)
    assert after_first == {"written": before["written"] + 1, "unchanged": before["unchanged"]}

    for _ in range(5):
        assert "token" in client.call("getAuthorization", {"resource": "ch1"})
    assert stored_expiry(client) == first
    assert expiries(client) == {"written": after_first["written"], "unchanged": after_first["unchanged"] + 5}

    # A decision with another expiry is written, once.
    clock(emulator, {"advanceSeconds": 60})
    assert "token" in client.call("getAuthorization", {"resource": "ch1"})
    assert stored_expiry(client) == first + 60_000
    assert expiries(client) == {"written": after_first["written"] + 1, "unchanged": after_first["unchanged"] + 5}


def test_after_a_logout_and_a_new_login_the_same_expiry_is_written_again(daemon, emulator):
    client = instance(daemon)
    login(client)
    clock(emulator, {"stopped": True})
    assert "token" in client.call("getAuthorization", {"resource": "ch1"})
    first = stored_expiry(client)
    # The logout deletes the login's expiries: the next one is written although it equals the last.
    client.call("init", {"webView": False})
    client.call("setRequestor", {"requestorID": "REF"})
    quiet_logout(client)
    assert stored_expiry(client) is None
    client.call("init", {"webView": True})
    client.call("setRequestor", {"requestorID": "REF"})
    login(client)
    written = expiries(client)["written"]
    assert "token" in client.call("getAuthorization", {"resource": "ch1"})
    assert stored_expiry(client) == first
    assert expiries(client)["written"] == written + 1


def another_daemons_changes_arrive_without_the_look(test_daemon, emulator, short_tmp, state_a, state_b, *store):
    """Daemons A and B (looking once an hour) on one store: B's instance of device D hears A's login and logout."""
    a = SocketDaemon(test_daemon, short_tmp / "a.sock", *AN_HOUR, *daemon_args(emulator.base, state_a, *store))
    b = SocketDaemon(test_daemon, short_tmp / "b.sock", *AN_HOUR, *daemon_args(emulator.base, state_b, *store))
    try:
        on_a = instance(a, device="device-D")
        on_b = instance(b, device="device-D", web_view=False)
        assert on_b.call("checkAuthentication") == LOGGED_OUT
        mark = on_b.mark()
        login(on_a)
        unsolicited(on_b, mark, LOGGED_IN, timeout=10)
        assert on_b.call("checkAuthentication") == LOGGED_IN

        mark = on_b.mark()
        quiet_logout(instance(a, device="device-D", web_view=False))
        unsolicited(on_b, mark, LOGGED_OUT, timeout=10)
        assert on_b.call("checkAuthentication") == LOGGED_OUT
    finally:
        assert a.stop() == 0
        assert b.stop() == 0


def test_sqlite_announcements_deliver_another_daemons_change_without_the_look(test_daemon, emulator, tmp_path, short_tmp):
    """Two daemons on one SQLite file: each login change is announced after its commit (the database file's times
    set to now), and the other daemon's store wakes on its inotify watch of the file. Before, SQLite's changes were
    seen only at the look (every 200 ms; here, an hour)."""
    another_daemons_changes_arrive_without_the_look(test_daemon, emulator, short_tmp, tmp_path / "shared", tmp_path / "shared")


def test_a_writer_without_inotify_still_announces_its_login_changes(test_daemon, bin_dir, emulator, tmp_path, short_tmp):
    """From a breaking pass: announcing went with the watch, so a process that could have no inotify instance (its
    user's max_user_instances used up) changed logins unannounced, and a daemon watching them (here looking once an
    hour) never heard. `passbridge state reset` runs in a user namespace whose inotify limit is 0."""
    if subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces here")
    state = tmp_path / "shared"
    a = SocketDaemon(test_daemon, short_tmp / "a.sock", *AN_HOUR, *daemon_args(emulator.base, state))
    try:
        on_a = instance(a, device="device-N")
        login(on_a)
        mark = on_a.mark()
        no_inotify = 'echo 0 > /proc/sys/user/max_inotify_instances && exec "$@"'
        reset = subprocess.run(["unshare", "-U", "-r", "sh", "-c", no_inotify, "sh", str(bin_dir / "passbridge"), "state", "reset",
                                "--state-dir", str(state)], capture_output=True, text=True, timeout=60)
        assert reset.returncode == 0, reset.stdout + reset.stderr
        unsolicited(on_a, mark, LOGGED_OUT, timeout=10)
    finally:
        assert a.stop() == 0


def test_the_postgresql_feed_delivers_another_daemons_change_without_the_look(test_daemon, emulator, tmp_path, short_tmp,
                                                                             postgres_url):
    another_daemons_changes_arrive_without_the_look(test_daemon, emulator, short_tmp, tmp_path / "a", tmp_path / "b",
                                                    "--store", postgres_url)
