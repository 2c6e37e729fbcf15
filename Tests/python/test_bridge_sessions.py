"""Several application instances on one daemon (ARCHITECTURE.md "The store"; Protocol/README.md): socket clients
of the same requestor share the login through the store, a logout is seen by the others at their next check, and a client that vanishes in the
middle of a login leaves nothing stuck."""
import time

from rpc_helper import NOT_AUTHENTICATED, REDIRECT_URL, daemon_args, follow_to_redirect_url
from test_bridge_flows import login, ready

# The details of the N005 a login ends with when its instance closes (Protocol/README.md, Lifecycle 5).
CLOSED = "the instance closed: its connection ended, or the daemon is stopping"


def test_second_client_sees_the_first_clients_login_and_logout(daemon):
    first, second = daemon.client(), daemon.client()
    ready(first)
    ready(second)
    assert second.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    login(first)
    # The second instance never logged in: its next check finds the profile the first one stored.
    start = second.mark()
    assert second.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    assert [m for m in second.received[start:] if m.get("method") == "displayProviderDialog"] == []
    assert second.call("checkAuthorization", {"resource": "ch1"})["resource"] == "ch1"
    # A logout on the first is seen by the second at its next check.
    logout_start = first.mark()
    logout_id = first.send("logout")
    _, navigate = first.notification("navigateToUrl", logout_start)
    first.call("handleExternalURL", {"url": follow_to_redirect_url(navigate["params"]["url"])})
    first.response(logout_id, logout_start)
    assert second.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    first.close()
    second.close()


def test_a_client_that_disconnects_mid_login_leaves_nothing_stuck(daemon):
    quitter = daemon.client()
    ready(quitter)
    start = quitter.mark()
    quitter.send("getAuthentication")
    quitter.notification("displayProviderDialog", start)
    notes, _ = quitter.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert notes[-1]["method"] == "navigateToUrl"
    quitter.close()  # gone while the login page is open
    newcomer = daemon.client()
    deadline = time.monotonic() + 30
    while newcomer.call("rpc.stats")["connections"] != 1:  # until the daemon has ended the quitter's connection
        assert time.monotonic() < deadline, "the quitter's connection was never ended"
        time.sleep(0.01)
    ready(newcomer)
    assert newcomer.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    login(newcomer)
    assert newcomer.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    newcomer.close()


def test_a_closed_client_does_not_disturb_another_clients_flow(daemon):
    steady, quitter = daemon.client(), daemon.client()
    ready(steady)
    ready(quitter)
    steady_start = steady.mark()
    get_id = steady.send("getAuthentication")
    steady.notification("displayProviderDialog", steady_start)
    quitter_start = quitter.mark()
    quitter.send("getAuthentication")
    quitter.notification("displayProviderDialog", quitter_start)
    quitter.close()
    notes, response = steady.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert response["result"] == {} and notes[-1]["method"] == "navigateToUrl"
    redirect = follow_to_redirect_url(notes[-1]["params"]["url"])
    assert steady.call("handleExternalURL", {"url": redirect}) == {"status": 1, "errorCode": ""}
    assert steady.response(get_id, steady_start)[1]["result"] == {"status": 1, "errorCode": ""}
    steady.close()


def test_requests_are_answered_in_the_connections_order_of_outcomes(daemon):
    client = daemon.client()
    # Pipelined before setRequestor completes: held back, run in order once setRequestor is answered.
    init_id = client.send("init", {"redirectUrl": REDIRECT_URL})
    requestor_id = client.send("setRequestor", {"requestorID": "REF"})
    check_id = client.send("checkAuthentication")
    preauth_id = client.send("checkPreauthorizedResources", {"resources": ["ch1"]})
    _, check = client.response(check_id)
    complete_index, _ = client.notification("setRequestorComplete")
    requestor_index, requestor = client.response(requestor_id)
    status_index, _ = client.notification("setAuthenticationStatus")
    check_index, _ = client.response(check_id)
    preauth_index, preauth = client.response(preauth_id)
    # The two held-back calls run concurrently: each comes after setRequestor's answer, in either order.
    assert complete_index < requestor_index < status_index < check_index
    assert requestor_index < preauth_index
    assert requestor["result"] == {"status": 1}
    assert check["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert preauth["result"] == {"resources": []}
    assert client.response(init_id)[1]["result"] == {}
    client.close()


def test_end_of_input_cancels_the_waiting_login_and_answers_it(bin_dir, emulator, tmp_path):
    from rpc_helper import NOT_SELECTED, StdioDaemon
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    ready(daemon)
    start = daemon.mark()
    get_id = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    daemon.process.stdin.close()
    status_index, status = daemon.notification("setAuthenticationStatus", start)
    answer_index, answer = daemon.response(get_id, start)
    assert status["params"] == {"status": 0, "errorCode": NOT_SELECTED} and answer_index > status_index
    assert answer["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    assert [m["params"].get("details") for m in daemon.received[start:answer_index] if m.get("method") == "status"] == [CLOSED]
    assert daemon.process.wait(timeout=20) == 0


def test_sigterm_cancels_waiting_flows_answers_them_and_exits_zero(daemon):
    from rpc_helper import NOT_SELECTED
    client = daemon.client()
    ready(client)
    start = client.mark()
    get_id = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    daemon.process.send_signal(15)
    answer_index, answer = client.response(get_id, start)
    assert answer["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    # Its N005 says why, so that a host can tell a stopping daemon from the user's cancel (Protocol/README.md,
    # Lifecycle 5 and 6; a new user's app showed "login cancelled" at every restart of the daemon).
    reasons = [m["params"] for m in client.received[start:answer_index] if m.get("method") == "status"]
    assert [(r["id"], r.get("details")) for r in reasons] == [("N005", CLOSED)], reasons
    assert daemon.process.wait(timeout=20) == 0
    client.close()


def test_a_batch_runs_in_order_and_is_answered_after_its_notifications(bin_dir, emulator, tmp_path):
    from rpc_helper import StdioDaemon
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    batch = [{"jsonrpc": "2.0", "id": "a", "method": "init", "params": {}},
             {"jsonrpc": "2.0", "id": "b", "method": "setRequestor", "params": {"requestorID": "REF"}},
             {"jsonrpc": "2.0", "id": "c", "method": "checkAuthentication"},
             {"jsonrpc": "2.0", "method": "setOptions", "params": {"visitorID": "v"}}]
    import json
    daemon.send_raw(json.dumps(batch))
    index, answer = daemon.wait_for(lambda m: isinstance(m, list))
    by_id = {entry["id"]: entry for entry in answer}
    assert sorted(by_id) == ["a", "b", "c"]
    assert by_id["a"]["result"] == {} and by_id["b"]["result"] == {"status": 1}
    assert by_id["c"]["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    methods = [m.get("method") for m in daemon.received[:index]]
    assert methods.index("setRequestorComplete") < methods.index("setAuthenticationStatus")
    assert daemon.stop() == 0
