"""Every code of REST API V2's error enumeration (`ErrorInformation.code` in Adobe's OpenAPI document), produced by
the emulator as an item-level error of a decision and as a whole-call error, through checkAuthorization,
getAuthorization and checkPreauthorizedResources: the callbacks and the status id follow the error's `action`, as
Protocol/README.md "Authorization failures" tables them. The real daemon over pipes and over a socket."""
import json
import urllib.request

import pytest

from emulator_fixtures import _openapi_dir
from rpc_helper import NOT_AUTHENTICATED, NOT_AUTHORIZED, notifications_named, pipes_or_socket
from test_store_live_logins import admin

GENERIC = "Generic Authorization Error"
INTERNAL = "Internal Authorization Error"


def error_codes() -> list[str]:
    spec = json.loads((_openapi_dir() / "restApiV2.json").read_text())
    return spec["components"]["schemas"]["UserMetadataResponse"]["properties"]["error"]["enum"]


def expected(error: dict) -> tuple[str, str | None, str]:
    """(tokenRequestFailed's errorCode, the status id, what kind of outcome) for a refused decision carrying `error`,
    by Protocol/README.md "Authorization failures"."""
    action, code = error["action"], error["code"]
    if action == "authentication":
        return NOT_AUTHENTICATED, "N111" if code.startswith("temporary_access") else "N130", "logged out"
    if action == "retry":
        return INTERNAL, "Z120", "technical"
    if action == "application-registration":
        return GENERIC, "R401", "technical"
    if action == "authorization" or (action == "none" and error["status"] == 403) or code in RESOURCE_CODES:
        return NOT_AUTHORIZED, DENIAL_IDS.get(code, "Z100"), "denied"
    return INTERNAL, "Z500", "technical"


RESOURCE_CODES = {"invalid_parameter_resources", "missing_resource", "malformed_authz_request"}
DENIAL_IDS = {"authorization_denied_by_degradation_rule": "Z169", "maximum_attempts_exceeded": "Z110",
              **{code: "Z130" for code in RESOURCE_CODES}}


def item_error(emulator, resource: str, code: str) -> dict:
    """The next decision for `resource` carries `code` (the next three for a `retry`, asked twice more)."""
    def post(count):
        request = urllib.request.Request(emulator.base + "/__admin/item-errors",
                                         data=json.dumps({"resource": resource, "code": code, "count": count}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["error"]
    error = post(1)
    return post(3) if error["action"] == "retry" else error


def logged_in_again(client, emulator, device):
    """After an error that logged the user out here: the backend still has the login, and setRequestor's re-sync
    brings it back."""
    assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device})["profiles"] >= 1
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert client.call("checkAuthentication")["status"] == 1


def check_token_failure(notes, result, error, resource):
    error_code, status_id, kind = expected(error)
    names = notifications_named(notes)
    if kind == "logged out":
        assert names[0] == "setAuthenticationStatus", (error, names)
        assert notes[0]["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
        names = names[1:]
    assert names == ["tokenRequestFailed", "sendTrackingData", "status"], (error, notes)
    failed = next(n["params"] for n in notes if n["method"] == "tokenRequestFailed")
    assert (failed["resource"], failed["errorCode"]) == (resource, error_code), (error, failed)
    status = next(n["params"] for n in notes if n["method"] == "status")
    assert status["id"] == status_id, (error, status)
    assert result["errorCode"] == error_code and [s["id"] for s in result["statuses"]] == [status_id], (error, result)
    return kind


@pytest.fixture(params=["pipes", "socket"])
def logged_in(request, bin_dir, emulator, tmp_path):
    """A connection logged in (a login the backend has for the device), and the device id."""
    client, finish = pipes_or_socket(request, bin_dir, emulator, tmp_path)
    assert client.call("init", {"webView": False}) == {}
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    device = client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    logged_in_again(client, emulator, device)
    yield client, device
    assert finish()


@pytest.mark.parametrize("method", ["checkAuthorization", "getAuthorization"])
def test_a_refused_decision_follows_its_action(method, logged_in, emulator):
    client, device = logged_in
    kinds = set()
    for code in error_codes():
        error = item_error(emulator, "ch1", code)
        assert error["code"] == code
        notes, response = client.exchange(method, {"resource": "ch1"})
        kinds.add(check_token_failure(notes, response["result"], error, "ch1"))
        if expected(error)[2] == "logged out":
            assert client.call("checkAuthentication")["status"] == 0
            logged_in_again(client, emulator, device)
        else:
            # Nothing else changed: the next decision is the MVPD's own again.
            assert "token" in client.call(method, {"resource": "ch1"})
    assert kinds == {"logged out", "denied", "technical"}


def test_a_refused_call_follows_the_action_of_its_top_level_error(logged_in, emulator):
    client, device = logged_in
    path = "/api/v2/REF/decisions/authorize/MockMVPD"
    for code in error_codes():
        error = item_error(emulator, "probe", code)  # the object the `error` fault answers with, as an item's
        # A retry is asked twice more; a 401 once more, after the daemon refreshed its access token.
        count = 3 if error["action"] == "retry" else 2 if error["status"] == 401 else 1
        emulator.admin("faults", {"method": "POST", "path": path, "kind": "error", "value": code, "count": count})
        notes, response = client.exchange("checkAuthorization", {"resource": "ch1"})
        check_token_failure(notes, response["result"], error, "ch1")
        urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/faults", method="DELETE"), timeout=10)
        if expected(error)[2] == "logged out":
            logged_in_again(client, emulator, device)


def test_a_refused_preauthorization_item_follows_its_action(logged_in, emulator):
    """ch1 is permitted; ch2's decision carries the error."""
    client, device = logged_in
    for code in error_codes():
        error = item_error(emulator, "ch2", code)
        notes, response = client.exchange("checkPreauthorizedResources", {"resources": ["ch1", "ch2"], "cache": False})
        names = notifications_named(notes)
        if expected(error)[2] == "logged out":
            assert names == ["setAuthenticationStatus", "preauthorizedResources", "status"], (error, notes)
            assert notes[0]["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
            assert notes[1]["params"]["resources"] == []
            assert response["result"] == {"resources": [], "statuses": [notes[2]["params"]]}
            assert notes[2]["params"]["id"] == expected(error)[1]
            logged_in_again(client, emulator, device)
        elif error["action"] == "retry":
            # Asked again twice, then left without a decision: P100.
            assert names == ["preauthorizedResources", "status"], (error, notes)
            assert notes[0]["params"]["resources"] == ["ch1"] and notes[1]["params"]["id"] == "P100"
        else:
            assert names == ["preauthorizedResources"], (error, notes)
            assert notes[0]["params"]["resources"] == ["ch1"] and response["result"] == {"resources": ["ch1"]}


def test_a_decision_with_no_usable_answer_says_why_in_z500(logged_in, emulator):
    """Z500 of a decision the backend did not answer usably names the cause in `details`: a QA team could not tell a
    timeout from a body that is not JSON, each was "Internal authorization error" alone. Each fault hits the one
    decision request; the next is answered again."""
    client, _ = logged_in
    path = "/api/v2/REF/decisions/authorize/MockMVPD"
    for fault, why in [
        ({"kind": "drop"}, "no whole answer: the backend could not be reached, closed the connection, or redirected"),
        ({"kind": "redirect", "value": "http://example.com/"}, "no whole answer: the backend could not be reached"),
        ({"kind": "truncated"}, "no whole answer: "),
        ({"kind": "malformed"}, "the answer is not JSON (its content type, or a malformed or cut body)"),
        ({"kind": "contentType"}, "the answer is not JSON"),
    ]:
        # libcurl sends a request again, once, on a fresh connection when a reused one closed with no byte back.
        emulator.admin("faults", {"method": "POST", "path": path, "count": 2 if fault["kind"] == "drop" else 1, **fault})
        notes, response = client.exchange("checkAuthorization", {"resource": "ch1"})
        status = next(n["params"] for n in notes if n.get("method") == "status")
        assert (status["id"], status["message"]) == ("Z500", "Internal authorization error"), (fault, status)
        assert status["details"].startswith(why), (fault, status)
        assert response["result"]["statuses"] == [status]
        assert "token" in client.call("checkAuthorization", {"resource": "ch1"})
