"""Callbacks the SDK never sent, each once seen from outside (Protocol/README.md, "Live logins" and "Ordering rules";
Sources/AccessEnabler/README.md): a TempPass picked outside any flow reports its login once; a second requestor of
the device asks Adobe for its own profiles while the first one's request is still out. The real daemon over pipes
and over a socket, against the emulator."""
import json
import time
import urllib.request

import pytest

from rpc_helper import NOT_AUTHENTICATED, NOT_SELECTED, SocketDaemon, StdioDaemon, daemon_args, follow_to_redirect_url, \
    notifications_named
from test_store_live_logins import LOGGED_IN, LOGGED_OUT, admin
from workers import run_in_workers

TEMP_PASS_RUNS = 200


def start_login(client):
    """getAuthentication up to its displayProviderDialog; returns the request id and the position before it."""
    start = client.mark()
    request = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    return request, start


def cancelled(client, request, start):
    """The login of `request` ended with the user's cancel."""
    _, response = client.response(request, start)
    assert response["result"] == {"status": 0, "errorCode": NOT_SELECTED}


def temp_pass_runs(worker, emulator, runs):
    """The sequence that once told a TempPass login twice: a cancelled picker, a login page abandoned, an unknown
    MVPD, then MockMVPD and TempPass picked outside any flow."""
    client = worker.client
    assert client.call("init", {}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    for _ in range(runs):
        begin = client.mark()
        request, start = start_login(client)
        client.call("setSelectedProvider", {"mvpdId": None})
        cancelled(client, request, start)

        request, start = start_login(client)
        client.call("setSelectedProvider", {"mvpdId": "MockMVPD"})
        client.notification("navigateToUrl", start)
        client.call("setSelectedProvider", {"mvpdId": None})
        cancelled(client, request, start)

        request, start = start_login(client)
        client.call("setSelectedProvider", {"mvpdId": "NoSuchMVPD"})
        _, response = client.response(request, start)
        assert response["result"]["status"] == 0

        assert client.call("setSelectedProvider", {"mvpdId": "MockMVPD"}) == {}
        notes, response = client.exchange("setSelectedProvider", {"mvpdId": "TempPass"})
        statuses = [m["params"] for m in notes if m["method"] == "setAuthenticationStatus"]
        assert statuses == [LOGGED_IN], notes
        assert [m["params"]["id"] for m in notes if m["method"] == "status"] == ["N011"]
        # And nothing after the response: the login's own write is not news to the instance that made it.
        assert client.call("checkAuthentication") == LOGGED_IN
        told = [m["params"]["status"] for m in client.received[begin:] if m.get("method") == "setAuthenticationStatus"]
        assert told == [0, 0, 0, 1, 1], told  # three logins ended, the TempPass login, checkAuthentication
        assert client.call("logout")["status"] == 0


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_temp_pass_picked_outside_any_flow_reports_its_login_once(transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(temp_pass_runs, TEMP_PASS_RUNS, transport, bin_dir, emulator, tmp_path, short_tmp)


def emulator_requests(emulator, path: str) -> int:
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return sum(1 for r in json.loads(response.read())["requests"] if r["path"] == path)


def wait_for_request(emulator, path: str, count: int):
    """Until the emulator has received `count` requests for `path` (it logs them as they arrive)."""
    deadline = time.monotonic() + 10
    while emulator_requests(emulator, path) < count:
        assert time.monotonic() < deadline, f"no request {count} for {path}"
        time.sleep(0.01)


def slow_profiles_of_ref(emulator):
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/profiles", "kind": "latency", "value": 2000,
                                       "count": 1})


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_second_requestor_of_the_device_asks_for_its_own_profiles(transport, bin_dir, emulator, tmp_path, short_tmp):
    """REF's `GET profiles` is slow; REF2's setRequestor meanwhile sends its own, and finds REF2's login made
    elsewhere. Over a socket two connections of one daemon, over pipes two setRequestor in flight on one."""
    args = daemon_args(emulator.base, tmp_path / "state")
    socket_daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *args) if transport == "socket" else None
    first = socket_daemon.client() if socket_daemon else StdioDaemon(bin_dir, *args)
    second = socket_daemon.client() if socket_daemon else first
    try:
        for client, requestor in ((first, "REF"), (second, "REF2")):
            assert client.call("setRequestor", {"requestorID": requestor}) == {"status": 1}
            assert client.call("checkAuthentication") == LOGGED_OUT
        device = first.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
        assert admin(emulator, "POST", {"serviceProvider": "REF2", "mvpd": "MockMVPD", "device": device})["profiles"] >= 1
        asked = emulator_requests(emulator, "/api/v2/REF2/profiles")
        slow_profiles_of_ref(emulator)
        sent = emulator_requests(emulator, "/api/v2/REF/profiles")
        slow = first.send("setRequestor", {"requestorID": "REF"})
        wait_for_request(emulator, "/api/v2/REF/profiles", sent + 1)
        assert second.call("setRequestor", {"requestorID": "REF2"}) == {"status": 1}
        assert emulator_requests(emulator, "/api/v2/REF2/profiles") == asked + 1
        first.response(slow)
        assert second.call("checkAuthentication") == LOGGED_IN
    finally:
        if socket_daemon:
            first.close()
            second.close()
            assert socket_daemon.stop() == 0
        else:
            assert first.stop() == 0
