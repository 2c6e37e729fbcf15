"""Live logins (Protocol/README.md, "Live logins"): an instance is told, with one unsolicited
setAuthenticationStatus, when its login appears or goes away elsewhere — another connection of its daemon, another
daemon on the same SQLite state directory, another daemon of the fleet on one PostgreSQL database (also across a
PostgreSQL restart) — its logged-in authorizations read the daemon's memory, and setRequestor asks the backend for
the device's profiles. Real daemons on real sockets, the emulator, and PostgreSQL from Tests/postgres-cluster.sh."""
import json
import sqlite3
import subprocess
import time
import urllib.request

import pytest

from postgres_fixtures import cluster_server, own_postgres, postgres_cluster, postgres_url  # noqa: F401 (fixtures)
from rpc_helper import NOT_AUTHENTICATED, SocketDaemon, daemon_args
from test_store_fleet import DEVICE_INFO, login

LOGGED_IN = {"status": 1, "errorCode": ""}
LOGGED_OUT = {"status": 0, "errorCode": NOT_AUTHENTICATED}


def instance(daemon, device=None, web_view=True):
    """A connection with REF set whose host has been told its state (checkAuthentication)."""
    client = daemon.client()
    params = {"webView": web_view}
    if device:
        params.update({"deviceIdentifier": device, "deviceInfo": DEVICE_INFO})
    assert client.call("init", params) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    client.call("checkAuthentication")
    return client


def unsolicited(client, since: int, status: dict, timeout: float) -> float:
    """Waits for the setAuthenticationStatus `status` that answers no request (after `since`); returns when it came."""
    index, message = client.wait_for(
        lambda m: m.get("method") == "setAuthenticationStatus" and m["params"] == status, since, timeout=timeout)
    arrived = time.monotonic()
    following = client.received[index + 1:index + 2]
    assert not following or "result" not in following[0], "it answered a request"
    return arrived


def quiet_logout(client):
    """logout on a host without a web view: the profiles are deleted, no logout page."""
    assert client.call("logout") == LOGGED_OUT


def stats(client) -> dict:
    return client.call("rpc.stats")["profileReads"]


def test_a_logout_on_one_connection_reaches_the_other_at_once(bin_dir, emulator, tmp_path, short_tmp):
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    try:
        first = instance(daemon)
        login(first)
        second = instance(daemon, web_view=False)
        assert second.call("checkAuthentication") == LOGGED_IN
        mark = second.mark()
        first.call("init", {"webView": False})
        first.call("setRequestor", {"requestorID": "REF"})
        quiet_logout(first)
        answered = time.monotonic()
        arrived = unsolicited(second, mark, LOGGED_OUT, timeout=5)
        assert arrived - answered < 0.1, f"told {arrived - answered:.3f} s after the logout was answered"
        assert second.call("checkAuthentication") == LOGGED_OUT
        # The writer itself is not told again: its own outcome said it.
        assert [m for m in first.received if m.get("method") == "setAuthenticationStatus"][-1]["params"] == LOGGED_OUT
    finally:
        assert daemon.stop() == 0


def test_a_login_ended_elsewhere_takes_its_selected_mvpd_with_it(bin_dir, emulator, tmp_path, short_tmp):
    """A login ended out of band (`passbridge state logout`) ends the instance's selected MVPD as its own logout
    would; logging in again stores the selection again. Before, getSelectedProvider still named MockMVPD after the
    unsolicited logged-out status, and the second login's selection was never stored (its MVPD had not changed in
    the daemon's memory)."""
    directory = tmp_path / "state"
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, directory))
    try:
        client = instance(daemon)
        login(client)
        assert client.call("getSelectedProvider")["mvpd"]["ID"] == "MockMVPD"
        mark = client.mark()
        ended = subprocess.run([str(bin_dir / "passbridge"), "state", "logout", "--state-dir", str(directory),
                                "--backend", emulator.base], capture_output=True, text=True, timeout=30)
        assert ended.returncode == 0, ended.stderr
        unsolicited(client, mark, LOGGED_OUT, timeout=5)
        assert client.call("getSelectedProvider")["mvpd"] is None
        login(client)
        deadline = time.monotonic() + 10
        while selected_in_store(directory) != ["MockMVPD"]:
            assert time.monotonic() < deadline, f"stored selection: {selected_in_store(directory)}"
            time.sleep(0.05)
    finally:
        assert daemon.stop() == 0


def selected_in_store(directory) -> list:
    with sqlite3.connect(directory / "passbridge.sqlite") as db:
        return [mvpd for (mvpd,) in db.execute("SELECT mvpd FROM selected_providers")]


def test_an_instance_keeps_its_mvpd_when_another_logs_in_with_another(bin_dir, emulator, tmp_path, short_tmp):
    """Protocol/README.md, "The store": a second instance logs in with TempPass while the first is logged in with
    MockMVPD (forceAuthn, no logout). Both logins are valid; the second instance and one made after it use
    TempPass (ch2 permitted), the first keeps MockMVPD (ch2 denied), also after its own checkAuthentication."""
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    try:
        first = instance(daemon)
        login(first)
        second = instance(daemon)
        start = second.mark()
        get_id = second.send("getAuthentication", {"forceAuthn": True})
        second.notification("displayProviderDialog", start)
        second.call("setSelectedProvider", {"mvpdId": "TempPass"})
        assert second.response(get_id, start)[1]["result"]["status"] == 1
        third = instance(daemon)
        assert first.call("checkAuthentication") == LOGGED_IN
        for client, mvpd, permitted in ((first, "MockMVPD", False), (second, "TempPass", True), (third, "TempPass", True)):
            assert client.call("getSelectedProvider")["mvpd"]["ID"] == mvpd
            assert ("token" in client.call("getAuthorization", {"resource": "ch2"})) == permitted, mvpd
    finally:
        assert daemon.stop() == 0


def test_two_daemons_on_one_sqlite_state_directory_tell_each_other(bin_dir, emulator, tmp_path, short_tmp):
    shared = tmp_path / "state"
    a = SocketDaemon(bin_dir, short_tmp / "a.sock", *daemon_args(emulator.base, shared))
    b = SocketDaemon(bin_dir, short_tmp / "b.sock", *daemon_args(emulator.base, shared))
    try:
        on_a = instance(a)
        on_b = instance(b, web_view=False)
        assert on_b.call("checkAuthentication") == LOGGED_OUT
        mark = on_b.mark()
        login(on_a)
        logged_in = time.monotonic()
        assert unsolicited(on_b, mark, LOGGED_IN, timeout=5) - logged_in < 1.0
        assert on_b.call("checkAuthentication") == LOGGED_IN

        # B's logged-in authorizations read its memory; a change made by A is read again once.
        for _ in range(3):
            assert "token" in on_b.call("getAuthorization", {"resource": "ch1"})
        before = stats(on_b)
        for _ in range(3):
            assert "token" in on_b.call("getAuthorization", {"resource": "ch1"})
        assert stats(on_b)["store"] == before["store"], "a logged-in getAuthorization made a store call"
        assert stats(on_b)["memory"] >= before["memory"] + 3
        # A finds a fresher login of the device at Adobe (its setRequestor's re-sync) and stores it: a change of
        # B's login that leaves it logged in.
        device = on_a.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
        assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device})["profiles"] >= 1
        assert on_a.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        deadline = time.monotonic() + 5
        while stats(on_b)["store"] == before["store"] and time.monotonic() < deadline:
            time.sleep(0.02)
        changed = stats(on_b)["store"]
        assert changed == before["store"] + 1, "exactly one re-read after the change"
        for _ in range(3):
            assert "token" in on_b.call("getAuthorization", {"resource": "ch1"})
        assert stats(on_b)["store"] == changed, "and none after it"

        mark = on_b.mark()
        on_a.call("init", {"webView": False})
        on_a.call("setRequestor", {"requestorID": "REF"})
        quiet_logout(on_a)
        logged_out = time.monotonic()
        assert unsolicited(on_b, mark, LOGGED_OUT, timeout=5) - logged_out < 1.0
        assert on_b.call("checkAuthorization", {"resource": "ch1"})["errorCode"] == NOT_AUTHENTICATED
    finally:
        assert a.stop() == 0
        assert b.stop() == 0


def test_two_daemons_of_a_fleet_tell_each_other_also_across_a_postgresql_restart(bin_dir, emulator, tmp_path, short_tmp,
                                                                                   own_postgres):
    directory, url = own_postgres
    a = SocketDaemon(bin_dir, short_tmp / "a.sock", *daemon_args(emulator.base, tmp_path / "a", "--store", url))
    b = SocketDaemon(bin_dir, short_tmp / "b.sock", *daemon_args(emulator.base, tmp_path / "b", "--store", url))
    try:
        on_a = instance(a, device="device-D")
        on_b = instance(b, device="device-D", web_view=False)
        assert on_b.call("checkAuthentication") == LOGGED_OUT
        mark = on_b.mark()
        login(on_a)
        logged_in = time.monotonic()
        assert unsolicited(on_b, mark, LOGGED_IN, timeout=5) - logged_in < 1.0

        # The server restarts (every session cut); the logout through B reaches A all the same.
        cluster_server("restart", directory)
        mark = on_a.mark()
        quiet_logout(on_b)
        logged_out = time.monotonic()
        assert unsolicited(on_a, mark, LOGGED_OUT, timeout=5) - logged_out < 1.0
        assert on_a.call("checkAuthentication") == LOGGED_OUT
    finally:
        assert a.stop() == 0
        assert b.stop() == 0


def admin(emulator, method: str, body: dict) -> dict:
    request = urllib.request.Request(emulator.base + "/__admin/profiles", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_a_logout_of_two_mvpds_ends_the_one_the_backend_takes_and_keeps_the_other(daemon, emulator, tmp_path):
    """Protocol/README.md, Lifecycle 4: two logins under one requestor (MockMVPD, and MockSSO made at the backend),
    the backend refusing MockMVPD's logout with a 500. MockSSO's logout is still made and its profile deleted;
    MockMVPD's is kept, and the logout fails with CFG500. Before, the logout stopped at the first refusal, and
    MockSSO's was never asked."""
    client = instance(daemon)
    login(client)
    device = client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockSSO", "device": device})["profiles"] >= 1
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}  # the re-sync stores MockSSO's
    assert stored_mvpds(tmp_path / "state") == ["MockMVPD", "MockSSO"]
    fault = json.dumps({"method": "GET", "path": "/api/v2/REF/logout/MockMVPD", "kind": "status", "value": 500}).encode()
    urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/faults", data=fault, method="POST",
                                                  headers={"Content-Type": "application/json"}), timeout=10).close()
    try:
        result = client.call("logout")
    finally:
        urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/faults", method="DELETE"), timeout=10).close()
    assert result["errorCode"] == "Generic Authentication Error" and [r["id"] for r in result["statuses"]] == ["CFG500"]
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        asked = [r["path"] for r in json.loads(response.read())["requests"] if "/logout/" in r["path"]]
    assert asked[-2:] == ["/api/v2/REF/logout/MockMVPD", "/api/v2/REF/logout/MockSSO"], asked
    assert stored_mvpds(tmp_path / "state") == ["MockMVPD"]
    assert client.call("checkAuthentication") == LOGGED_IN


def stored_mvpds(state) -> list:
    with sqlite3.connect(state / "passbridge.sqlite") as db:
        return [mvpd for (mvpd,) in db.execute("SELECT mvpd FROM profiles ORDER BY mvpd")]


def test_set_requestor_finds_a_login_made_out_of_band_and_drops_one_gone(daemon, emulator):
    client = instance(daemon, web_view=False)
    assert client.call("checkAuthentication") == LOGGED_OUT
    device = client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device})["profiles"] >= 1
    mark = client.mark()
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert client.call("checkAuthentication") == LOGGED_IN
    assert "displayProviderDialog" not in [m.get("method") for m in client.received[mark:]]
    assert "token" in client.call("getAuthorization", {"resource": "ch1"})

    assert admin(emulator, "DELETE", {"serviceProvider": "REF", "device": device})["profiles"] >= 1
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert client.call("checkAuthentication") == LOGGED_OUT


def test_set_requestor_asks_for_the_profiles_once(daemon, emulator):
    client = instance(daemon, web_view=False)
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        before = [r for r in json.loads(response.read())["requests"] if r["path"] == "/api/v2/REF/profiles"]
    for _ in range(3):
        assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        after = [r for r in json.loads(response.read())["requests"] if r["path"] == "/api/v2/REF/profiles"]
    assert len(after) - len(before) == 3, "one GET profiles per setRequestor"
