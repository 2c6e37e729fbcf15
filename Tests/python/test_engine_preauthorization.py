"""checkPreauthorizedResources over the real daemon and emulator (Protocol/README.md, "Preauthorization"): a
list longer than the backend takes in one call is asked in chunks and answered as one list in the caller's
order; items whose decision says `action: retry` are asked again, alone, at most twice; permits under a
degradation rule add status Z010. The emulator's `/__admin/limits`, `/__admin/item-errors`,
`/__admin/degradation` and `/__admin/requests` set the backend's behaviour and show the calls it received."""
import json
import urllib.request

import pytest

from rpc_helper import REDIRECT_URL, web_login

PREAUTHORIZE = "/api/v2/REF/decisions/preauthorize/MockMVPD"


def resources(count: int) -> list[str]:
    """`count` distinct resources: every third an MRSS item of channel ch1 (the demo user may watch it), the
    others plain ids the demo user is not entitled to."""
    return [f'<rss><channel><title>ch1</title><item><guid>{i}</guid></item></channel></rss>' if i % 3 == 0 else f"show-{i}"
            for i in range(count)]


def requests_at(emulator, path: str) -> list[dict]:
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return [r for r in json.loads(response.read())["requests"] if r["path"] == path]


def admin(emulator, path: str, payload: dict) -> None:
    assert emulator.admin(path, payload) in (200, 201)


@pytest.fixture
def client(daemon):
    """A logged-in instance (REF, MockMVPD) on the socket daemon."""
    connection = daemon.client()
    assert connection.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(connection)
    yield connection
    connection.close()


def preauthorize(client, asked: list[str]) -> tuple[list[dict], dict]:
    """checkPreauthorizedResources without the cache: (the notifications before the answer, the result). The
    result's `statuses` are the warning and error statuses sent after preauthorizedResources, absent when none were
    (Protocol/README.md, "Failure reasons")."""
    notes, response = client.exchange("checkPreauthorizedResources", {"resources": asked, "cache": False})
    result = response["result"]
    sent = [n["params"] for n in notes if n["method"] == "status" and n["params"]["level"] in ("warning", "error")]
    assert result.get("statuses", []) == sent and ("statuses" in result) == bool(sent), (result, notes)
    return notes, result


def test_a_long_list_is_asked_in_chunks_and_answered_as_one_list(client, emulator):
    asked = resources(40)
    expected = [r for i, r in enumerate(asked) if i % 3 == 0]
    # No limit at the backend: one call, and its answer.
    notes, whole = preauthorize(client, asked)
    assert whole == {"resources": expected}
    assert [n["method"] for n in notes] == ["preauthorizedResources"]
    assert [len(r["resources"]) for r in requests_at(emulator, PREAUTHORIZE)] == [40]

    # Five per call: the list of 40 is refused once (too_many_resources), then asked five at a time, in order.
    admin(emulator, "limits", {"maxPreauthorizeResources": 5})
    notes, chunked = preauthorize(client, asked)
    assert chunked == whole
    assert [n["method"] for n in notes] == ["preauthorizedResources"]
    calls = requests_at(emulator, PREAUTHORIZE)[1:]
    assert [len(r["resources"]) for r in calls] == [40] + [5] * 8
    assert [r for call in calls[1:] for r in call["resources"]] == asked

    # The size is kept: the next call goes straight to the eight chunks.
    before = len(requests_at(emulator, PREAUTHORIZE))
    _, again = preauthorize(client, list(reversed(asked)))
    assert again == {"resources": list(reversed(expected))}
    assert [len(r["resources"]) for r in requests_at(emulator, PREAUTHORIZE)[before:]] == [5] * 8


def test_a_chunk_that_fails_leaves_the_permits_of_the_others_and_says_p100(client, emulator):
    asked = resources(12)
    admin(emulator, "limits", {"maxPreauthorizeResources": 5})
    preauthorize(client, asked)  # learns the size: 12 refused, then 5 + 5 + 2
    # The next call of the first chunk fails (HTTP 500, not retried).
    admin(emulator, "faults", {"method": "POST", "path": PREAUTHORIZE, "kind": "status", "value": 500, "count": 1})
    notes, result = preauthorize(client, asked)
    # The permits of the chunks answered (asked[6], asked[9]) are kept; the first chunk's (asked[0], asked[3]) are not known.
    assert result["resources"] == [asked[6], asked[9]]
    statuses = [n["params"] for n in notes if n["method"] == "status"]
    assert [s["id"] for s in statuses] == ["P100"]
    # With why: the error object the backend refused the chunk with (Protocol/README.md, "Preauthorization").
    assert statuses[0]["level"] == "error" and statuses[0]["details"] == (
        "No decision for 5 of 12 resources: internal_server_error (Injected fault: HTTP 500.)")


def test_p100_says_why_when_the_backend_refused_the_call(client, emulator):
    """A malformed MRSS resource: the backend refuses the whole call (400, `invalid_parameter_resources`). P100 said
    only "No decision for 2 of 2 resources" (a breaking pass); it now gives the backend's code and message too."""
    notes, result = preauthorize(client, ["ch1", "<rss><channel><title>ch1"])
    assert result["resources"] == []
    (status,) = [n["params"] for n in notes if n["method"] == "status"]
    assert status["id"] == "P100"
    assert status["details"].startswith("No decision for 2 of 2 resources: invalid_parameter_resources ("), status


def test_items_whose_decision_says_retry_are_asked_again_alone(client, emulator):
    asked = resources(6)
    # asked[3] (permitted) fails twice with a retry error, then is answered; asked[1] keeps failing.
    admin(emulator, "item-errors", {"resource": asked[3], "code": "network_received_error", "count": 2})
    admin(emulator, "item-errors", {"resource": asked[1], "code": "network_connection_timeout", "count": 10})
    notes, result = preauthorize(client, asked)
    assert result["resources"] == [asked[0], asked[3]]
    calls = requests_at(emulator, PREAUTHORIZE)
    assert [c["resources"] for c in calls] == [asked, [asked[1], asked[3]], [asked[1], asked[3]]]
    # asked[1] never got a decision: P100 names how many, and the backend's error of its last answer.
    (status,) = [n["params"] for n in notes if n["method"] == "status"]
    assert status["id"] == "P100"
    assert status["details"].startswith("No decision for 1 of 6 resources: network_connection_timeout ("), status
    # preauthorize hands that resource the same error, not a made-up network_error.
    admin(emulator, "item-errors", {"resource": asked[1], "code": "network_connection_timeout", "count": 10})
    result = client.call("preauthorize", {"resources": [asked[0], asked[1]], "disableFeatures": ["LOCAL_CACHE"]})
    assert result["decisions"][0] == {"id": asked[0], "authorized": True}
    error = result["decisions"][1]["error"]
    assert result["decisions"][1]["authorized"] is False
    assert (error["code"], error["action"]) == ("network_connection_timeout", "retry"), error


def test_a_retry_error_answered_on_the_first_retry_costs_one_more_call(client, emulator):
    asked = resources(3)
    admin(emulator, "item-errors", {"resource": asked[0], "code": "maximum_execution_time_exceeded", "count": 1})
    notes, result = preauthorize(client, asked)
    assert result == {"resources": [asked[0]]}
    assert [c["resources"] for c in requests_at(emulator, PREAUTHORIZE)] == [asked, [asked[0]]]
    assert [n["method"] for n in notes] == ["preauthorizedResources"]


def test_permits_under_a_degradation_rule_say_z010(client, emulator):
    asked = resources(4)
    admin(emulator, "degradation", {"mvpd": "MockMVPD", "rule": "AuthZAll"})
    notes, result = preauthorize(client, asked)
    # AuthZAll permits everything, and the host is told why.
    assert result["resources"] == asked
    assert [n["method"] for n in notes] == ["preauthorizedResources", "status"]
    assert notes[1]["params"] == {"id": "Z010", "errorId": "Z010", "level": "warning", "message": "Preauthorized under a degradation rule"}
    # The rule lifted: the MVPD's own decisions again, no Z010.
    admin(emulator, "degradation", {"mvpd": "MockMVPD", "rule": None})
    notes, result = preauthorize(client, asked)
    assert result == {"resources": [asked[0], asked[3]]}
    assert [n["method"] for n in notes] == ["preauthorizedResources"]


def test_preauthorize_gives_each_resource_its_decision_and_error(client, emulator):
    """The iOS SDK's preauthorize (Protocol/README.md, "Preauthorization"): ch1 permitted, ch2 denied with the MVPD's
    error; no notification; a second call answers ch1 from memory, unless LOCAL_CACHE is disabled; REMOTE_CACHE is
    refused."""
    notes, response = client.exchange("preauthorize", {"resources": ["ch1", "ch2", "ch1"]})
    assert notes == []
    result = response["result"]
    assert "status" not in result
    assert [(d["id"], d["authorized"]) for d in result["decisions"]] == [("ch1", True), ("ch2", False)]
    assert "error" not in result["decisions"][0]
    denial = result["decisions"][1]["error"]
    assert denial["code"] == "preauthorization_denied_by_mvpd"
    assert denial["status"] == 403 and denial["action"] == "none"
    assert denial["details"] == 'Your subscription does not include "Channel 2".'

    asked = len(requests_at(emulator, PREAUTHORIZE))
    assert client.call("preauthorize", {"resources": ["ch1"]})["decisions"] == [{"id": "ch1", "authorized": True}]
    assert len(requests_at(emulator, PREAUTHORIZE)) == asked, "a known permit was asked of the backend"
    again = client.call("preauthorize", {"resources": ["ch1"], "disableFeatures": ["LOCAL_CACHE"]})
    assert again["decisions"] == [{"id": "ch1", "authorized": True}]
    assert len(requests_at(emulator, PREAUTHORIZE)) == asked + 1, "LOCAL_CACHE disabled did not reach the backend"

    _, refused = client.exchange("preauthorize", {"resources": ["ch1"], "disableFeatures": ["REMOTE_CACHE"]})
    assert refused["error"]["code"] == -32602 and "REMOTE_CACHE" in refused["error"]["message"]


def test_two_unicode_normalizations_of_one_id_are_two_resources(client, daemon, emulator):
    """The backend tells resources apart byte for byte; Swift's string equality took "café" composed and decomposed for
    one resource: the second was neither asked nor answered, and a permit of one answered the other from the cache."""
    composed = "<rss><channel><title>ch1</title><item><guid>caf\u00e9</guid></item></channel></rss>"
    decomposed = composed.replace("\u00e9", "e\u0301")
    assert composed != decomposed
    _, result = preauthorize(client, [composed, decomposed, composed])
    assert result == {"resources": [composed, decomposed]}
    assert requests_at(emulator, PREAUTHORIZE)[-1]["resources"] == [composed, decomposed]

    decisions = client.call("preauthorize", {"resources": [decomposed, composed], "disableFeatures": ["LOCAL_CACHE"]})
    assert [(d["id"], d["authorized"]) for d in decisions["decisions"]] == [(decomposed, True), (composed, True)]

    # A new instance (its own cache) that knows only the composed one's permit asks the backend for the other.
    fresh = daemon.client()
    assert fresh.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert fresh.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert preauthorize(fresh, [composed])[1] == {"resources": [composed]}
    asked = len(requests_at(emulator, PREAUTHORIZE))
    _, response = fresh.exchange("checkPreauthorizedResources", {"resources": [decomposed], "cache": True})
    assert response["result"] == {"resources": [decomposed]}
    calls = requests_at(emulator, PREAUTHORIZE)[asked:]
    assert [call["resources"] for call in calls] == [[decomposed]], "a permit of another normalization answered from the cache"
    fresh.close()


def login_again_elsewhere(daemon):
    """Another instance of the device logs out (no web view: no page) and logs in again: a login change for every
    instance that watches it."""
    other = daemon.client()
    assert other.call("init", {"redirectUrl": REDIRECT_URL, "webView": False}) == {}
    assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert other.call("logout")["status"] == 0
    assert other.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(other)
    other.close()


def test_permits_asked_while_the_login_changed_are_not_cached(client, daemon, emulator):
    """A preauthorization that was waiting for the backend while the login changed elsewhere put the permits it
    started from back in the cache, so that `cache: true` answered from the login before (a breaking pass: another
    user's login at the same MVPD got them)."""
    assert preauthorize(client, ["ch1"])[1] == {"resources": ["ch1"]}
    admin(emulator, "faults", {"path": PREAUTHORIZE, "kind": "latency", "value": 5000, "count": 1})
    start = client.mark()
    slow = client.send("checkPreauthorizedResources", {"resources": ["ch9"], "cache": False})
    login_again_elsewhere(daemon)
    client.response(slow, start)
    asked = len(requests_at(emulator, PREAUTHORIZE))
    assert preauthorize_cached(client, ["ch1"]) == {"resources": ["ch1"]}
    assert len(requests_at(emulator, PREAUTHORIZE)) == asked + 1, "a permit of the login before was answered from the cache"


def test_permits_of_a_requestor_left_are_dropped(client, daemon, emulator):
    """An instance watches the logins of its requestor only: those of a requestor it left may change unseen, so
    their permits go when it leaves (before, a permit cached before a switch to REF2 and back survived a new login
    made meanwhile)."""
    assert preauthorize(client, ["ch1"])[1] == {"resources": ["ch1"]}
    assert client.call("setRequestor", {"requestorID": "REF2"}) == {"status": 1}
    login_again_elsewhere(daemon)
    assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    asked = len(requests_at(emulator, PREAUTHORIZE))
    assert preauthorize_cached(client, ["ch1"]) == {"resources": ["ch1"]}
    assert len(requests_at(emulator, PREAUTHORIZE)) == asked + 1, "a permit cached before the switch was answered from the cache"


def preauthorize_cached(client, asked: list[str]) -> dict:
    """checkPreauthorizedResources with the cache allowed: its result."""
    return client.exchange("checkPreauthorizedResources", {"resources": asked, "cache": True})[1]["result"]


def test_preauthorize_when_nobody_is_logged_in_says_so_for_every_resource(daemon):
    connection = daemon.client()
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    result = connection.call("preauthorize", {"resources": ["ch1", "ch2"]})
    missing = {"status": 0, "code": "authentication_session_missing", "message": "The user is not authenticated",
               "action": "authentication"}
    assert result == {"status": missing, "decisions": [{"id": "ch1", "authorized": False, "error": missing},
                                                       {"id": "ch2", "authorized": False, "error": missing}]}
    connection.close()


def test_a_backend_that_refuses_even_one_resource_is_not_asked_for_the_others(client, emulator):
    """A `too_many_resources` refusal of a single resource holds for every other: the daemon stops shrinking
    there instead of asking each remaining resource alone, and says P100 for all of them."""
    asked = resources(6)
    emulator.admin("faults", {"method": "POST", "path": PREAUTHORIZE, "kind": "error", "value": "too_many_resources",
                              "count": 100})
    notes, result = preauthorize(client, asked)
    assert result["resources"] == []
    assert [len(c["resources"]) for c in requests_at(emulator, PREAUTHORIZE)] == [6, 5, 4, 3, 2, 1]
    statuses = [n["params"] for n in notes if n["method"] == "status"]
    assert [(s["id"], s.get("details")) for s in statuses] == [("P100", (
        "No decision for 6 of 6 resources: too_many_resources (The authorization or preauthorization request failed "
        "because too many resources were queried.)"))]


def test_preauthorize_hands_each_resource_the_refusal_of_its_chunk(client, emulator):
    """A resource whose chunk the backend refused carries that error object, HTTP status included, not a made-up
    network_error; one whose chunk got no error object (a body that is not JSON) still says network_error."""
    emulator.admin("faults", {"method": "POST", "path": PREAUTHORIZE, "kind": "error", "value": "internal_server_error",
                              "count": 1})
    result = client.call("preauthorize", {"resources": ["ch1", "ch2"], "disableFeatures": ["LOCAL_CACHE"]})
    assert "status" not in result
    for decision in result["decisions"]:
        assert decision["authorized"] is False
        assert {k: decision["error"][k] for k in ("status", "code", "action")} == {
            "status": 500, "code": "internal_server_error", "action": "none"}

    emulator.admin("faults", {"method": "POST", "path": PREAUTHORIZE, "kind": "malformed", "count": 1})
    result = client.call("preauthorize", {"resources": ["ch1"], "disableFeatures": ["LOCAL_CACHE"]})
    assert result["decisions"] == [{"id": "ch1", "authorized": False, "error": {
        "status": 0, "code": "network_error", "message": "No decision could be had for this resource", "action": "retry"}}]

    # The connection goes on: the next call is answered by the backend again.
    assert client.call("preauthorize", {"resources": ["ch1"], "disableFeatures": ["LOCAL_CACHE"]})["decisions"] == [
        {"id": "ch1", "authorized": True}]


@pytest.mark.parametrize("method", ["checkPreauthorizedResources", "preauthorize"])
def test_an_empty_resource_is_refused_and_the_connection_goes_on(client, emulator, method):
    before = len(requests_at(emulator, PREAUTHORIZE))
    notes, response = client.exchange(method, {"resources": ["ch1", ""]})
    assert notes == []
    assert response["error"]["code"] == -32602
    assert response["error"]["data"] == {"param": "resources", "reason": "item 1 must not be empty"}
    assert len(requests_at(emulator, PREAUTHORIZE)) == before, "an invalid list reached the backend"
    assert client.call("checkPreauthorizedResources", {"resources": ["ch1"], "cache": False}) == {"resources": ["ch1"]}


def test_permits_are_dropped_when_someone_else_rewrites_the_login(client, daemon, emulator):
    """Another instance's re-sync stores a new login at the same MVPD (a login made out of band: possibly another
    user): the status is unchanged, so nothing is announced, but the permits this instance cached were the old
    login's and a cached answer must not come from them."""
    assert client.call("checkPreauthorizedResources", {"resources": ["ch1"], "cache": False}) == {"resources": ["ch1"]}
    asked = len(requests_at(emulator, PREAUTHORIZE))
    assert client.call("checkPreauthorizedResources", {"resources": ["ch1"]}) == {"resources": ["ch1"]}
    assert len(requests_at(emulator, PREAUTHORIZE)) == asked, "a known permit was asked of the backend"

    device = client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    admin(emulator, "profiles", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device})
    other = daemon.client()
    assert other.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert other.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}  # its re-sync stores the new login
    other.close()

    notes, response = client.exchange("checkPreauthorizedResources", {"resources": ["ch1"]})
    assert response["result"] == {"resources": ["ch1"]}
    assert len(requests_at(emulator, PREAUTHORIZE)) == asked + 1, "the old login's permit answered for the new one"
    assert [n["method"] for n in notes] == ["preauthorizedResources"], "a status was announced for an unchanged login"


def test_an_empty_list_says_why_when_no_requestor_is_configured(daemon):
    """From the last stop's leftovers: after setRequestor of an unknown requestor, checkPreauthorizedResources
    answered `{"resources": []}` and nothing else, where getMetadata and getAuthorization say CFG400. Its result
    now carries that setRequestor's reasons; preauthorizedResources stays the SDK's (Protocol/README.md, "Failure
    reasons"). A result with nothing to say has no `statuses`: nobody logged in."""
    connection = daemon.client()
    try:
        assert connection.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        assert connection.call("setRequestor", {"requestorID": "REFF"})["status"] == 0
        notes, response = connection.exchange("checkPreauthorizedResources", {"resources": ["ch1"]})
        assert response["result"]["resources"] == [] and [s["id"] for s in response["result"]["statuses"]] == ["CFG400"]
        assert [(n["method"], n["params"]) for n in notes] == [("preauthorizedResources", {"resources": []})]
        assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        assert connection.call("checkPreauthorizedResources", {"resources": ["ch1"]}) == {"resources": []}
    finally:
        connection.close()


def test_a_resource_keeps_what_its_last_call_said(client, emulator):
    """A resource that said retry twice, then whose last retry was refused (503): the refusal is its last answer, and
    what preauthorize and P100 report, not the retry of the call before. A chunk that
    got no error object after a retry (a body that is not JSON) leaves network_error."""
    admin(emulator, "item-errors", {"resource": "Xres", "code": "network_connection_timeout", "count": 10})
    admin(emulator, "faults", {"method": "POST", "path": PREAUTHORIZE, "kind": "status", "value": 503, "skip": 2, "count": 1})
    before = len(requests_at(emulator, PREAUTHORIZE))
    result = client.call("preauthorize", {"resources": ["ch1", "Xres"], "disableFeatures": ["LOCAL_CACHE"]})
    assert result["decisions"][0] == {"id": "ch1", "authorized": True}
    assert result["decisions"][1]["error"]["status"] == 503, result
    assert [c["resources"] for c in requests_at(emulator, PREAUTHORIZE)[before:]] == [["ch1", "Xres"], ["Xres"], ["Xres"]]

    emulator.admin("faults", {"method": "POST", "path": PREAUTHORIZE, "kind": "malformed", "skip": 2, "count": 1})
    result = client.call("preauthorize", {"resources": ["ch1", "Xres"], "disableFeatures": ["LOCAL_CACHE"]})
    assert result["decisions"][1]["error"]["code"] == "network_error", result
