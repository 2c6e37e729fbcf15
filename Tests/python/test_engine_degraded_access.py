"""Degraded access reaches the host (Protocol/README.md, Values and "Preauthorization"; Adobe's "Degraded Access
Flows"): while the programmer bypasses a troubled MVPD with a degradation rule — set here on MockMVPD through the
emulator's /__admin/degradation — access is granted and a status says why, which an app can show ("your provider
is having trouble; access granted meanwhile"): Z010 after setToken, Z010 after preauthorizedResources, N010 after
a login under an authenticate-all rule; an authorize-none rule denies with Z169."""
import json
import pathlib

import pytest

from rpc_helper import NOT_AUTHORIZED, REDIRECT_URL, check_against_openrpc, web_login

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "openrpc.json").read_text())


def degrade(emulator, rule):
    assert emulator.admin("degradation", {"mvpd": "MockMVPD", "rule": rule}) == 200


@pytest.fixture
def client(daemon):
    connection = daemon.client()
    assert connection.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    yield connection
    connection.close()
    assert check_against_openrpc(connection.transcript, DOCUMENT) > 0


def login(client):
    web_login(client)


def test_an_authorization_under_an_authorize_all_rule_is_granted_and_says_z010(client, emulator):
    login(client)
    degrade(emulator, "AuthZAll")
    # ch2 is not in the demo user's package: the rule grants it anyway, and the host is told.
    notes, response = client.exchange("getAuthorization", {"resource": "ch2"})
    token = response["result"]["token"]
    assert [n["method"] for n in notes] == ["setToken", "sendTrackingData", "status"]
    assert notes[2]["params"] == {"id": "Z010", "errorId": "Z010", "level": "warning", "message": "Authorized under a degradation rule", "resource": "ch2"}
    # The result carries it too (a Node new-user pass found the clients' advisory statuses always empty); setToken
    # stays the SDK's.
    assert response["result"] == {"token": token, "resource": "ch2", "statuses": [notes[2]["params"]]}
    assert notes[0]["params"] == {"token": token, "resource": "ch2"}
    assert emulator.verify_token(token, "ch2").returncode == 0
    # The rule lifted: the MVPD decides again.
    degrade(emulator, None)
    notes, response = client.exchange("checkAuthorization", {"resource": "ch2"})
    assert response["result"]["errorCode"] == NOT_AUTHORIZED
    assert [n["params"]["id"] for n in notes if n["method"] == "status"] == ["Z100"]


def test_a_login_under_an_authenticate_all_rule_needs_no_page_and_says_n010(client, emulator):
    degrade(emulator, "AuthNAll")
    start = client.mark()
    get = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert "navigateToUrl" not in [n["method"] for n in notes]
    _, answer = client.response(get, start)
    assert answer["result"] == {"status": 1, "errorCode": ""}
    statuses = [m["params"] for m in client.received[start:] if m.get("method") == "status"]
    assert [(s["id"], s["level"]) for s in statuses] == [("N010", "warning")]
    notes, response = client.exchange("checkAuthorization", {"resource": "ch1"})
    assert "token" in response["result"]
    assert [n["params"]["id"] for n in notes if n["method"] == "status"] == ["Z010"]
    notes, response = client.exchange("checkPreauthorizedResources", {"resources": ["ch1", "ch2"], "cache": False})
    (z010,) = [n["params"] for n in notes if n["method"] == "status"]
    assert response["result"] == {"resources": ["ch1", "ch2"], "statuses": [z010]}
    assert [n["params"]["id"] for n in notes if n["method"] == "status"] == ["Z010"]


def test_an_authorize_none_rule_denies_with_z169_and_the_rules_text(client, emulator):
    login(client)
    degrade(emulator, "AuthZNone")
    notes, response = client.exchange("checkAuthorization", {"resource": "ch1"})
    assert response["result"]["errorCode"] == NOT_AUTHORIZED
    statuses = [n["params"] for n in notes if n["method"] == "status"]
    assert [(s["id"], s["level"], s["resource"]) for s in statuses] == [("Z169", "error", "ch1")]
