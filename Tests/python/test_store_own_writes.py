"""An instance's own writes are not news to it (Protocol/README.md, "Live logins", "Only what others changed"):
a repeated setRequestor whose re-sync finds a login made elsewhere for the device (or drops one Adobe no longer
has), or whose partner SSO silent exchange logs in again after a logout, sends setRequestorComplete and nothing
else, neither before its response nor after it; the host's next checkAuthentication answers the new state. The real
daemon over pipes and over a socket, against the emulator; each case 200 times, in parallel workers of one device
each (workers.py).

No fixed wait proves the silence: after each such setRequestor and checkAuthentication, another writer of the device
(over pipes a second daemon on the same state directory, over a socket a second connection of the same daemon)
changes the login through the same store, which this instance is told with one setAuthenticationStatus. Every
setAuthenticationStatus since setRequestor's response, up to that one, is checked. An echo of the instance's own
write would be among them: the store tells a write's watchers as the write is made, and the instance's write was
made before the other writer's. (Against 148ca63, whose instances heard their own writes, every case fails.)"""
import pytest

from rpc_helper import REDIRECT_URL, notifications_named
from test_store_live_logins import LOGGED_IN, LOGGED_OUT, admin
from workers import run_in_workers

RUNS = 200


def set_requestor_alone(client) -> int:
    """A repeated setRequestor: setRequestorComplete(1) and its response, nothing between; returns the position
    after its response, from which `told` checks that nothing else came either."""
    notes, response = client.exchange("setRequestor", {"requestorID": "REF"})
    assert response["result"] == {"status": 1}
    assert notifications_named(notes) == ["setRequestorComplete"], notes
    return client.mark()


def check_authentication(client) -> dict:
    """checkAuthentication's result; exactly one setAuthenticationStatus came with it."""
    notes, response = client.exchange("checkAuthentication")
    assert notifications_named(notes).count("setAuthenticationStatus") == 1, notes
    return response["result"]


def told(client, since: int, change, now: dict) -> list:
    """Runs `change` (another writer's change of the device's login, which moves it to `now`) and waits for the
    setAuthenticationStatus that tells `client`'s instance; returns the statuses of every setAuthenticationStatus
    that came since the position `since`, that one included."""
    change()
    index, _ = client.wait_for(lambda m: m.get("method") == "setAuthenticationStatus" and m["params"] == now, since, timeout=10)
    return [m["params"]["status"] for m in client.received[since:index + 1] if m.get("method") == "setAuthenticationStatus"]


def out_of_band_runs(worker, emulator, runs):
    client = worker.client
    assert client.call("init", {"webView": False}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert check_authentication(client) == LOGGED_OUT
    device = client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    other = worker.other()
    assert other.call("init", {"webView": False}) == {}
    assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}

    def at_adobe(method):
        body = {"serviceProvider": "REF", "device": device} | ({"mvpd": "MockMVPD"} if method == "POST" else {})
        assert admin(emulator, method, body)["profiles"] >= 1

    def other_resyncs(method):
        """The login made (POST) or ended (DELETE) at Adobe; the other writer's setRequestor stores that."""
        def change():
            at_adobe(method)
            assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        return change

    for _ in range(runs):
        # A login made for this device elsewhere: setRequestor's re-sync finds it and stores it.
        at_adobe("POST")
        since = set_requestor_alone(client)
        assert check_authentication(client) == LOGGED_IN
        # Gone at Adobe, and the other writer drops it: told, and nothing before but checkAuthentication's own.
        assert told(client, since, other_resyncs("DELETE"), LOGGED_OUT) == [1, 0]
        # Back, through the other writer; then gone at Adobe: this instance's re-sync drops it.
        since = client.mark()
        assert told(client, since, other_resyncs("POST"), LOGGED_IN) == [1]
        at_adobe("DELETE")
        since = set_requestor_alone(client)
        assert check_authentication(client) == LOGGED_OUT
        assert told(client, since, other_resyncs("POST"), LOGGED_IN) == [0, 1]
        # Logged out everywhere again for the next run.
        since = client.mark()
        assert told(client, since, other_resyncs("DELETE"), LOGGED_OUT) == [0]


def partner_runs(worker, emulator, runs):
    client = worker.client
    assert client.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert check_authentication(client) == LOGGED_IN
    other = worker.other()
    assert other.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}

    def other_logs_out():
        assert other.call("logout") == LOGGED_OUT

    def other_exchanges():
        assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}

    for _ in range(runs):
        notes, response = client.exchange("logout")
        assert notifications_named(notes) == ["setAuthenticationStatus", "status"]
        assert response["result"] == LOGGED_OUT
        # Still signed in on the platform: the silent exchange logs in again, and says nothing of it.
        since = set_requestor_alone(client)
        assert check_authentication(client) == LOGGED_IN
        # The other writer logs out: told, and nothing before but checkAuthentication's own.
        assert told(client, since, other_logs_out, LOGGED_OUT) == [1, 0]
        # Its own silent exchange logs the device in again: told, for the next run's logout.
        since = client.mark()
        assert told(client, since, other_exchanges, LOGGED_IN) == [1]


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_login_found_or_dropped_by_set_requestor_is_for_the_next_check_authentication(
        transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(out_of_band_runs, RUNS, transport, bin_dir, emulator, tmp_path, short_tmp)


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_partner_exchange_after_logout_is_for_the_next_check_authentication(
        transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(partner_runs, RUNS, transport, bin_dir, emulator, tmp_path, short_tmp, partner=True)
