"""A failed outcome carries its reasons wherever in the flow they were raised (Protocol/README.md "Failure
reasons"): a second-screen login's polls run long after the setSelectedProvider that started them was
answered, and what they find belongs to the getAuthentication the login answers.

Before the engine carried reasons in its outcomes, they were collected per task: the CFG100 and the code's
expiry found by a poll were filed under setSelectedProvider, and getAuthentication's response had no
`statuses` (and said "Generic Authentication Error"). Each case runs over real pipes and over a real socket,
against the emulator, whose clock is moved past the code's `notAfter`."""
import time

import pytest

from rpc_helper import pipes_or_socket

NOT_AUTHENTICATED = "User Not Authenticated Error"


@pytest.fixture(params=["pipes", "socket"])
def client(request, bin_dir, emulator, tmp_path):
    """A second-screen instance (`init {webView: false}`) with REF set, over stdio or a Unix socket, polling for its
    code every quarter second (passbridge polls every 4 s: the poll tests waited 16 s each)."""
    connection, finish = pipes_or_socket(request, bin_dir, emulator, tmp_path, "--test-poll-seconds", "0.25")
    assert connection.call("init", {"webView": False}) == {}
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    yield connection
    assert finish()


def start_second_screen_login(client) -> tuple[int, int, dict]:
    """getAuthentication, then MockMVPD at the dialog: (mark, getAuthentication's id, the REGCODE status)."""
    start = client.mark()
    login = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert response["result"] == {}
    regcode = next(n["params"] for n in notes if n["method"] == "status")
    assert regcode["id"] == "REGCODE"
    return start, login, regcode


def move_past(emulator, regcode: dict):
    """Moves the emulator's clock (a fresh emulator's, on time) a minute past the code's `notAfter`."""
    seconds = (regcode["notAfter"] - time.time() * 1000) / 1000 + 60
    assert emulator.admin("clock", {"advanceSeconds": seconds}) == 200


def statuses_sent(client, since: int) -> list[dict]:
    return [m["params"] for m in client.received[since:] if m.get("method") == "status"]


def test_a_code_expired_at_the_backend_answers_not_authenticated_with_n130(client, emulator):
    start, login, regcode = start_second_screen_login(client)
    move_past(emulator, regcode)
    _, answer = client.response(login, start, timeout=30)
    result = answer["result"]
    assert result["status"] == 0 and result["errorCode"] == NOT_AUTHENTICATED
    reasons = [s for s in statuses_sent(client, start) if s["level"] in ("warning", "error")]
    # The backend's clock, now half an hour ahead, is off the device's (CFG100), and the code is over (N130).
    assert [s["id"] for s in reasons] == ["CFG100", "N130"]
    assert result["statuses"] == reasons
    _, ended = client.notification("setAuthenticationStatus", start)
    assert ended["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_a_poll_that_fails_on_the_network_is_a_reason_of_the_login(client, emulator):
    start, login, regcode = start_second_screen_login(client)
    # The next polls' connections are dropped (four: enough for at least one poll to fail, whatever the HTTP
    # layer retries on its own); the first failure is reported once, and polling goes on.
    drop = {"method": "GET", "path": "/api/v2/REF/profiles/code/*", "kind": "drop", "count": 4}
    assert emulator.admin("faults", drop) == 201
    _, unreachable = client.wait_for(lambda m: m.get("method") == "status" and m["params"]["id"] == "REG503", start)
    assert unreachable["params"]["level"] == "warning"
    move_past(emulator, regcode)
    _, answer = client.response(login, start, timeout=30)
    result = answer["result"]
    assert result["errorCode"] == NOT_AUTHENTICATED
    assert [s["id"] for s in result["statuses"]] == ["REG503", "CFG100", "N130"]
    assert result["statuses"][0] == unreachable["params"]


@pytest.fixture(params=["pipes", "socket"])
def web_client(request, bin_dir, emulator, tmp_path):
    """A web-view instance with REF set, over stdio or a Unix socket."""
    connection, finish = pipes_or_socket(request, bin_dir, emulator, tmp_path)
    assert connection.call("init", {"redirectUrl": "adobepass://ios.app"}) == {}
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    yield connection
    assert finish()


def test_a_login_the_backend_did_not_answer_says_cfg404(web_client, emulator):
    """From a breaking pass: the session call's connection dropped, the login ended "Provider not Available Error"
    with no status and no `statuses`, where setRequestor and logout say CFG404 for the same failure."""
    drop = {"method": "POST", "path": "/api/v2/REF/sessions", "kind": "drop", "count": 4}
    assert emulator.admin("faults", drop) == 201
    start = web_client.mark()
    login = web_client.send("getAuthentication")
    web_client.notification("displayProviderDialog", start)
    notes, response = web_client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    result = response["result"]
    assert (result["status"], result["errorCode"]) == (0, "Provider not Available Error")
    (status,) = [n["params"] for n in notes if n["method"] == "status"]
    assert (status["id"], status["level"], status["details"]) == ("CFG404", "error", f"{emulator.base} could not be reached")
    assert result["statuses"] == [status]
    _, answer = web_client.response(login, start)
    assert answer["result"] == result
