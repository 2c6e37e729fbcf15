"""An instance's own writes are not news to it (Protocol/README.md, "Live logins", "Only what others changed"):
a repeated setRequestor whose re-sync finds a login made elsewhere for the device (or drops one Adobe no longer
has), or whose partner SSO silent exchange logs in again after a logout, sends setRequestorComplete and nothing
else, neither before its response nor after it; the host's next checkAuthentication answers the new state. The real
daemon over pipes and over a socket, against the emulator; each case 200 times, in parallel workers of one daemon
each (one device each), so that the quiet windows overlap."""
import concurrent.futures

import pytest

from rpc_helper import REDIRECT_URL, SocketDaemon, StdioDaemon, daemon_args, notifications_named
from test_partner_sso import Platform, ScriptedHost, ScriptedSocketHost
from test_store_live_logins import LOGGED_IN, LOGGED_OUT, admin

RUNS = 200
WORKERS = 25
# How long after setRequestor's response nothing may arrive: far beyond the store's round trip, which is when an
# echo of the instance's own write came on a daemon that sent one.
QUIET_SECONDS = 1.5


class Worker:
    """One daemon (over `transport`) with one connection, and the client of that connection."""

    def __init__(self, transport, bin_dir, emulator, state_dir, socket_dir, platform=None):
        args = daemon_args(emulator.base, state_dir)
        self.daemon = None
        if transport == "pipes":
            self.client = ScriptedHost(bin_dir, platform, *args) if platform else StdioDaemon(bin_dir, *args)
            self.daemon = self.client
        else:
            self.socket = SocketDaemon(bin_dir, socket_dir / "pb.sock", *args)
            self.client = ScriptedSocketHost(self.socket.path, platform) if platform else self.socket.client()

    def stop(self) -> int:
        if self.daemon is not None:
            return self.daemon.stop()
        self.client.close()
        return self.socket.stop()


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


def run_in_workers(case, transport, bin_dir, emulator, tmp_path, short_tmp, partner=False):
    per_worker = RUNS // WORKERS
    workers = []

    def one(index):
        socket_dir = short_tmp / f"w{index}"
        socket_dir.mkdir()
        worker = Worker(transport, bin_dir, emulator, tmp_path / f"state{index}", socket_dir,
                        Platform(emulator) if partner else None)
        workers.append(worker)
        case(worker, emulator, per_worker)
        return per_worker

    try:
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            done = sum(pool.map(one, range(WORKERS)))
        assert done == RUNS
    finally:
        assert [worker.stop() for worker in workers] == [0] * len(workers)


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_login_found_or_dropped_by_set_requestor_is_for_the_next_check_authentication(
        transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(out_of_band_runs, transport, bin_dir, emulator, tmp_path, short_tmp)


@pytest.mark.parametrize("transport", ["pipes", "socket"])
def test_a_partner_exchange_after_logout_is_for_the_next_check_authentication(
        transport, bin_dir, emulator, tmp_path, short_tmp):
    run_in_workers(partner_runs, transport, bin_dir, emulator, tmp_path, short_tmp, partner=True)
