"""`$/cancelRequest {id}` (Protocol/README.md, "Cancelling a request"): one pending call of a connection is given
up, its response is -32800 after its notifications, a flow waiting on the user ends as the user's cancel ends it,
and nothing else of the connection changes. Also two SDK callbacks of the authorization family: a getAuthorization
whose login is cancelled ends with tokenRequestFailed, and a checkAuthorization that finds the profile gone at
the backend sends setAuthenticationStatus(0) before tokenRequestFailed. Each case over real pipes and a real
socket, against the emulator."""
import pytest

from rpc_helper import NOT_AUTHENTICATED, NOT_SELECTED, notifications_named, pipes_or_socket
from test_bridge_flows import login

CANCELLED = -32800


@pytest.fixture(params=["pipes", "socket"])
def client(request, bin_dir, emulator, tmp_path):
    """A web-view instance with REF set, over stdio or a Unix socket."""
    connection, finish = pipes_or_socket(request, bin_dir, emulator, tmp_path)
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    yield connection
    assert finish()


def cancel(client, request_id):
    client.send("$/cancelRequest", {"id": request_id}, notification=True)


def params_of(messages, method):
    return [m["params"] for m in messages if m.get("method") == method]


def test_a_get_authorization_at_the_dialog_is_cancelled_and_a_pending_set_requestor_is_not(client, emulator):
    start = client.mark()
    play = client.send("getAuthorization", {"resource": "ch1"})
    client.notification("displayProviderDialog", start)
    # A second pending call: a repeated setRequestor whose configuration the backend answers slowly.
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency",
                                     "value": 1500, "count": 1}) == 201
    again = client.send("setRequestor", {"requestorID": "REF"})
    cancel(client, play)
    index, answer = client.response(play, start)
    assert answer["error"]["code"] == CANCELLED
    assert answer["error"]["data"]["method"] == "getAuthorization"
    before = client.received[start:index]
    names = notifications_named(before)
    # The dialog's login ends as the user's cancel ends it, then the authorization fails: all before the response.
    assert params_of(before, "setAuthenticationStatus") == [{"status": 0, "errorCode": NOT_SELECTED}]
    assert [s["id"] for s in params_of(before, "status")] == ["N005"]
    assert params_of(before, "tokenRequestFailed") == [{"resource": "ch1", "errorCode": NOT_SELECTED, "errorDescription": ""}]
    assert names.index("setAuthenticationStatus") < names.index("status") < names.index("tokenRequestFailed")
    # The other pending call goes on and is answered as if nothing happened.
    _, configured = client.response(again, start)
    assert configured == {"jsonrpc": "2.0", "id": again, "result": {"status": 1}}
    # The cancelled login is over: the next one shows a dialog of its own.
    mark = client.mark()
    login_id = client.send("getAuthentication")
    client.notification("displayProviderDialog", mark)
    assert client.call("setSelectedProvider", {"mvpdId": None}) == {"status": 0, "errorCode": NOT_SELECTED}
    _, ended = client.response(login_id, mark)
    assert ended["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    assert client.call("rpc.stats")["callsInFlight"] == 0


def test_a_second_screen_login_is_cancelled_and_stops_waiting(client):
    assert client.call("init", {"webView": False}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = client.mark()
    waiting = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert response["result"] == {}
    assert "REGCODE" in [s["id"] for s in params_of(notes, "status")]
    cancel(client, waiting)
    index, answer = client.response(waiting, start)
    assert answer["error"]["code"] == CANCELLED and answer["error"]["data"]["method"] == "getAuthentication"
    assert params_of(client.received[start:index], "setAuthenticationStatus") == [{"status": 0, "errorCode": NOT_SELECTED}]
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert client.call("rpc.stats")["callsInFlight"] == 0


def test_two_calls_joined_to_one_login_both_end_and_only_the_cancelled_one_gets_the_error(client):
    start = client.mark()
    first = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    second = client.send("getAuthorization", {"resource": "ch1"})
    # The getAuthorization joined the login (no second dialog); cancelling it ends that login for both.
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    cancel(client, second)
    _, cancelled = client.response(second, start)
    _, ended = client.response(first, start)
    assert cancelled["error"]["code"] == CANCELLED
    assert ended["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    assert notifications_named(client.received[start:]).count("displayProviderDialog") == 1


def test_a_logout_waiting_for_its_page_is_cancelled_without_its_timeout(client):
    login(client)
    start = client.mark()
    out = client.send("logout")
    client.notification("navigateToUrl", start)
    cancel(client, out)
    index, answer = client.response(out, start, timeout=5)  # well before the page's 10 s timeout
    assert answer["error"]["code"] == CANCELLED and answer["error"]["data"]["method"] == "logout"
    assert params_of(client.received[start:index], "setAuthenticationStatus") == [
        {"status": 0, "errorCode": NOT_AUTHENTICATED}]
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_ids_that_name_no_pending_call_are_ignored_and_bad_params_are_refused(client):
    answered = client.send("checkAuthentication")
    _, response = client.response(answered)
    cancel(client, answered)  # already answered
    cancel(client, "never-sent")
    client.send("$/cancelRequest", {"id": [1]}, notification=True)  # a notification is never answered
    # Sent as a request, it is answered {} ...
    assert client.call("$/cancelRequest", {"id": 12345}) == {}
    # ... and its params are checked like any method's.
    mark = client.mark()
    bad = client.send("$/cancelRequest", {"id": {"x": 1}})
    _, refused = client.response(bad, mark)
    assert refused["error"]["code"] == -32602 and refused["error"]["data"]["param"] == "id"
    mark = client.mark()
    missing = client.send("$/cancelRequest", {})
    _, refused = client.response(missing, mark)
    assert refused["error"]["code"] == -32602
    # The connection goes on, and nothing else was answered.
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    answered_ids = [m["id"] for m in client.received if "id" in m and "method" not in m]
    assert len(answered_ids) == len(set(answered_ids))


def test_check_authorization_after_the_backend_dropped_the_profile_reports_the_logout_first(client, emulator):
    login(client)
    # A day and a minute later at the backend, the profile is over there (not yet by the device's clock).
    assert emulator.admin("clock", {"advanceSeconds": 86400 + 60}) == 200
    start = client.mark()
    check = client.send("checkAuthorization", {"resource": "ch1"})
    index, answer = client.response(check, start)
    assert answer["result"]["errorCode"] == NOT_AUTHENTICATED
    before = client.received[start:index]
    names = notifications_named(before)
    assert params_of(before, "setAuthenticationStatus") == [{"status": 0, "errorCode": NOT_AUTHENTICATED}]
    assert names.index("setAuthenticationStatus") < names.index("tokenRequestFailed")
    assert "N130" in [s["id"] for s in params_of(before, "status")]
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_a_get_authentication_cancelled_while_it_waits_for_set_requestor_shows_no_dialog(client, emulator):
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency",
                                     "value": 1000, "count": 1}) == 201
    start = client.mark()
    configuring = client.send("setRequestor", {"requestorID": "REF"})
    held = client.send("getAuthentication")
    cancel(client, held)
    index, answer = client.response(held, start)
    assert answer["error"]["code"] == CANCELLED
    before = client.received[start:index]
    assert "displayProviderDialog" not in notifications_named(before)
    assert params_of(before, "setAuthenticationStatus") == [{"status": 0, "errorCode": NOT_SELECTED}]
    # It waited its turn: after setRequestor's response, as every held call does.
    configured_at, configured = client.response(configuring, start)
    assert configured["result"] == {"status": 1} and configured_at < index


def responses_to(messages, request_id):
    return [m for m in messages if "method" not in m and m.get("id") == request_id]


def test_an_id_sent_for_two_calls_cancels_both_and_init_answers_both(client):
    """A host that reuses an id while its first call still runs gets both calls answered with it, `$/cancelRequest`
    with that id cancels both, and a later init answers both -32003 before its own response."""
    start = client.mark()
    client.send_raw('{"jsonrpc": "2.0", "id": "twice", "method": "getAuthentication"}')
    client.notification("displayProviderDialog", start)
    client.send_raw('{"jsonrpc": "2.0", "id": "twice", "method": "getAuthentication"}')
    cancel(client, "twice")
    client.wait_for(lambda m: len(responses_to(client.received[start:], "twice")) == 2, start)
    answers = responses_to(client.received[start:], "twice")
    assert [a["error"]["code"] for a in answers] == [CANCELLED, CANCELLED]
    assert client.call("rpc.stats")["callsInFlight"] == 0

    start = client.mark()
    client.send_raw('{"jsonrpc": "2.0", "id": 9, "method": "getAuthentication"}')
    client.notification("displayProviderDialog", start)
    client.send_raw('{"jsonrpc": "2.0", "id": 9, "method": "getAuthentication"}')
    assert client.call("init", {}) == {}
    answered = responses_to(client.received[start:], 9)
    assert [a["error"]["code"] for a in answered] == [-32003, -32003], "a call of the replaced instance was not answered before init's"
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert responses_to(client.received[start:], 9) == answered, "the replaced instance answered again"
    assert client.call("rpc.stats")["callsInFlight"] == 0
