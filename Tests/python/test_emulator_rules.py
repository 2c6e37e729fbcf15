"""The emulator's rules (Sources/PassEmulator/README.md, "Rules"): per-call resource limits, degradation rules and
item-level errors set at run time, the log of calls received, bad admin bodies refused, and all of it undone by
/__admin/reset. Every REST V2 answer is checked against Adobe's OpenAPI document."""
from emulator_fixtures import _fresh_emulator, emulator, error_of, token  # noqa: F401 (fixtures)

PREAUTHORIZE = "/REF/decisions/preauthorize/MockMVPD"


def decisions(emulator, token, resources, path=PREAUTHORIZE):
    return emulator.v2("POST", path, token, json_body={"resources": resources})


def test_a_limit_refuses_a_longer_list_whole(emulator, token):
    emulator.login(token)
    assert emulator.admin("POST", "limits", {"maxPreauthorizeResources": 2}).json() == {
        "maxAuthorizeResources": None, "maxPreauthorizeResources": 2}
    error_of(decisions(emulator, token, ["a", "b", "c"]), 403, "too_many_resources", "configuration")
    assert decisions(emulator, token, ["a", "b"]).status == 200
    # null goes back to the configuration's (no limit).
    emulator.admin("POST", "limits", {"maxPreauthorizeResources": None})
    assert decisions(emulator, token, ["a", "b", "c"]).status == 200


def test_a_degradation_rule_applies_to_a_configured_mvpd_until_lifted(emulator, token):
    # AuthZAll permits without a profile, with source degradation.
    assert emulator.admin("POST", "degradation", {"mvpd": "MockMVPD", "rule": "AuthZAll"}).status == 200
    body = decisions(emulator, token, ["ch2"], "/REF/decisions/authorize/MockMVPD").json()
    assert [(d["authorized"], d["source"]) for d in body["decisions"]] == [(True, "degradation")]
    assert "serializedToken" in body["decisions"][0]["token"]
    emulator.admin("POST", "degradation", {"mvpd": "MockMVPD", "rule": None})
    error_of(decisions(emulator, token, ["ch2"]), 403, "authenticated_profile_missing", "authentication")


def test_item_errors_replace_that_resources_next_decisions(emulator, token):
    emulator.login(token)
    assert emulator.admin("POST", "item-errors", {"resource": "ch1", "code": "network_received_error", "count": 2}).status == 201
    for _ in range(2):
        item = decisions(emulator, token, ["ch1", "ch2"]).json()["decisions"][0]
        assert item["authorized"] is False
        assert (item["error"]["code"], item["error"]["action"], item["error"]["status"]) == ("network_received_error", "retry", 403)
    assert decisions(emulator, token, ["ch1"]).json()["decisions"][0]["authorized"] is True


def test_an_item_error_holds_for_its_resource_byte_for_byte(emulator, token):
    """"café" composed and decomposed are two resources, as for Adobe's backend: an item error set for one left the
    other alone only once the rules were keyed by bytes rather than by Swift strings."""
    emulator.login(token)
    assert emulator.admin("POST", "item-errors", {"resource": "caf\u00e9", "code": "network_received_error"}).status == 201
    items = decisions(emulator, token, ["cafe\u0301", "caf\u00e9"]).json()["decisions"]
    assert [item["error"]["code"] for item in items] == ["preauthorization_denied_by_mvpd", "network_received_error"]


def test_requests_lists_the_calls_received_and_reset_forgets_every_rule(emulator, token):
    emulator.login(token)
    decisions(emulator, token, ["ch1", "<rss/>"])
    logged = emulator.admin("GET", "requests").json()["requests"]
    assert logged[0] == {"method": "POST", "path": "/o/client/register", "query": {}}
    assert logged[-1] == {"method": "POST", "path": "/api/v2" + PREAUTHORIZE, "query": {}, "resources": ["ch1", "<rss/>"]}
    assert not any(r["path"].startswith("/__admin") or r["path"].startswith("/mock-mvpd") for r in logged)
    emulator.admin("POST", "limits", {"maxPreauthorizeResources": 1})
    emulator.admin("POST", "degradation", {"mvpd": "MockMVPD", "rule": "AuthZNone"})
    emulator.admin("POST", "item-errors", {"resource": "x", "code": "network_connection_timeout"})
    assert emulator.admin("POST", "reset").status == 200
    assert emulator.admin("GET", "requests").json() == {"requests": []}
    fresh = emulator.token()
    emulator.login(fresh)
    answer = decisions(emulator, fresh, ["x", "ch1"]).json()["decisions"]
    assert [(d["authorized"], d["source"]) for d in answer] == [(False, "mvpd"), (True, "mvpd")]
    assert answer[0]["error"]["code"] == "preauthorization_denied_by_mvpd"


def test_bad_rule_bodies_are_refused_with_the_reason(emulator):
    for path, body, reason in [
        ("limits", {"maxPreauthorizeResources": -1}, "maxPreauthorizeResources must be a non-negative integer or null"),
        ("limits", {"maxAuthorizeResources": "5"}, "maxAuthorizeResources must be a non-negative integer or null"),
        ("degradation", {"mvpd": "NoSuchMVPD", "rule": "AuthZAll"}, "mvpd must name a configured MVPD"),
        ("degradation", {"mvpd": "MockMVPD", "rule": "AuthZSome"}, "rule must be AuthNAll, AuthZAll, AuthZNone or null"),
        ("degradation", {"mvpd": "MockMVPD"}, "rule must be AuthNAll, AuthZAll, AuthZNone or null"),
        ("item-errors", {"resource": "ch1", "code": "network_received_error", "count": 0},
         "count must be a positive integer (or absent: 1)"),
        # Not an integer: refused, not read as 1.
        *[("item-errors", {"resource": "ch1", "code": "network_received_error", "count": count},
           "count must be a positive integer (or absent: 1)") for count in (1.5, "3", 1e300, -2, True)],
    ]:
        response = emulator.admin("POST", path, body)
        assert (response.status, response.json()) == (400, {"error": reason}), (path, body)
    assert emulator.call("POST", "/__admin/limits", b"[]").status == 400
    # An unknown code: the answer lists the known ones, as a fault's does (a QA pass had to try every code to learn them).
    unknown = emulator.admin("POST", "item-errors", {"resource": "ch1", "code": "no_such_code"})
    assert unknown.status == 400 and unknown.json()["error"] == "expected {resource, code, count?} with a known enhanced error code"
    assert "network_received_error" in unknown.json()["known"] and unknown.json()["known"] == sorted(unknown.json()["known"])
    # null is an absent count, and 3.0 is the integer 3.
    for count, kept in ((None, 1), (3.0, 3)):
        answer = emulator.admin("POST", "item-errors", {"resource": "ch1", "code": "network_received_error", "count": count})
        assert (answer.status, answer.json()["count"]) == (201, kept)


def test_a_clock_move_out_of_range_is_refused_and_the_emulator_goes_on(emulator, token):
    for body in [{"advanceSeconds": 1e300}, {"advanceSeconds": -1e17}, {"setMillis": -9223372036854775808},
                 {"setMillis": 253402300800000}]:
        assert emulator.admin("POST", "clock", body).status == 400, body
    assert emulator.admin("POST", "clock", {"advanceSeconds": 60}).status == 200
    assert emulator.v2("GET", "/REF/configuration", token).status == 200
