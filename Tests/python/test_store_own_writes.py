"""An instance's own writes are not news to it (Protocol/README.md, "Live logins", "Only what others changed"):
a repeated setRequestor whose re-sync finds a login made elsewhere for the device (or drops one Adobe no longer
has), or whose partner SSO silent exchange logs in again after a logout, sends setRequestorComplete and nothing
else, neither before its response nor after it; the host's next checkAuthentication answers the new state. The real
daemon over pipes and over a socket, against the emulator; each case 200 times, in parallel workers of one daemon
each (one device each: workers.py), so that the quiet windows overlap."""
import pytest

from rpc_helper import REDIRECT_URL, notifications_named
from test_store_live_logins import LOGGED_IN, LOGGED_OUT, admin
from workers import run_in_workers

RUNS = 200
# How long after setRequestor's response nothing may arrive: far beyond the store's round trip, which is when an
# echo of the instance's own write came on a daemon that sent one.
QUIET_SECONDS = 1.5


def set_requestor_alone(client):
    """A repeated setRequestor: setRequestorComplete(1) and its response, then nothing within QUIET_SECONDS."""
    notes, response = client.exchange("setRequestor", {"requestorID": "REF"})
    assert response["result"] == {"status": 1}
    assert notifications_named(notes) == ["setRequestorComplete"], notes
    after = client.mark()
    try:
        client.wait_for(lambda m: True, after, timeout=QUIET_SECONDS)
    except AssertionError:
        return  # nothing came
    raise AssertionError(f"unsolicited after setRequestor's response: {client.received[after:]}")


def check_authentication(client) -> dict:
    """checkAuthentication's result; exactly one setAuthenticationStatus came with it."""
    notes, response = client.exchange("checkAuthentication")
    assert notifications_named(notes).count("setAuthenticationStatus") == 1, notes
    return response["result"]


def out_of_band_runs(worker, emulator, runs):
    client = worker.client
    assert client.call("init", {"webView": False}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert check_authentication(client) == LOGGED_OUT
    device = client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    for _ in range(runs):
        # A login made for this device elsewhere: setRequestor's re-sync finds it and stores it.
        assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device})["profiles"] >= 1
        set_requestor_alone(client)
        assert check_authentication(client) == LOGGED_IN
        # And gone there: the re-sync drops it.
        assert admin(emulator, "DELETE", {"serviceProvider": "REF", "device": device})["profiles"] >= 1
        set_requestor_alone(client)
        assert check_authentication(client) == LOGGED_OUT


def partner_runs(worker, emulator, runs):
    client = worker.client
    assert client.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert check_authentication(client) == LOGGED_IN
    for _ in range(runs):
        notes, response = client.exchange("logout")
        assert notifications_named(notes) == ["setAuthenticationStatus", "status"]
        assert response["result"] == LOGGED_OUT
        # Still signed in on the platform: the silent exchange logs in again, and says nothing of it.
        set_requestor_alone(client)
        assert check_authentication(client) == LOGGED_IN


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_login_found_or_dropped_by_set_requestor_is_for_the_next_check_authentication(
        transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(out_of_band_runs, RUNS, transport, bin_dir, emulator, tmp_path, short_tmp)


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_partner_exchange_after_logout_is_for_the_next_check_authentication(
        transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(partner_runs, RUNS, transport, bin_dir, emulator, tmp_path, short_tmp, partner=True)
