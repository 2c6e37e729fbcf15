"""Fault injection through /__admin/faults (Sources/PassEmulator/README.md): every kind, and the emulator keeps serving afterwards."""
import http.client
import json
import threading
import time

import pytest

from emulator_fixtures import _fresh_emulator, emulator, token  # noqa: F401 (fixtures)

PATH = "/api/v2/REF/configuration"


def add_fault(emulator, **fault):
    response = emulator.admin("POST", "faults", {"method": "GET", "path": PATH, **fault})
    assert response.status == 201, response


def still_serving(emulator, token):
    response = emulator.v2("GET", "/REF/configuration", token)
    assert response.status == 200 and response.json()["requestor"]["id"] == "REF"


def test_latency_delays_the_answer(emulator, token):
    add_fault(emulator, kind="latency", value=300, count=1)
    started = time.monotonic()
    assert emulator.v2("GET", "/REF/configuration", token).status == 200
    assert time.monotonic() - started >= 0.3
    still_serving(emulator, token)


def test_status_answers_with_that_status(emulator, token):
    add_fault(emulator, kind="status", value=503, count=1)
    response = emulator.v2("GET", "/REF/configuration", token, validate=False)
    assert response.status == 503 and response.json()["status"] == 503
    still_serving(emulator, token)


def test_malformed_body_is_not_json(emulator, token):
    add_fault(emulator, kind="malformed", count=1)
    response = emulator.v2("GET", "/REF/configuration", token, validate=False)
    assert response.status == 200 and response.headers["content-type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.body)
    still_serving(emulator, token)


def test_truncated_body_stops_short_of_content_length(emulator, token):
    add_fault(emulator, kind="truncated", count=1)
    with pytest.raises(http.client.IncompleteRead):
        emulator.v2("GET", "/REF/configuration", token, validate=False)
    still_serving(emulator, token)


def test_content_type_is_replaced(emulator, token):
    add_fault(emulator, kind="contentType", value="text/plain", count=1)
    response = emulator.v2("GET", "/REF/configuration", token, validate=False)
    assert response.status == 200 and response.headers["content-type"] == "text/plain"
    assert json.loads(response.body)["requestor"]["id"] == "REF"
    still_serving(emulator, token)


def test_drop_closes_the_connection_without_an_answer(emulator, token):
    add_fault(emulator, kind="drop", count=1)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError, http.client.BadStatusLine)):
        emulator.v2("GET", "/REF/configuration", token, validate=False)
    still_serving(emulator, token)


def test_throttle_is_429_html_without_retry_after(emulator, token):
    add_fault(emulator, kind="throttle", count=2)
    for _ in range(2):
        response = emulator.v2("GET", "/REF/configuration", token, validate=False)
        assert response.status == 429
        assert response.headers["content-type"].startswith("text/html")
        assert "retry-after" not in response.headers
        assert "429 Too Many Requests" in response.text
    still_serving(emulator, token)


def test_redirect_answers_302_with_that_location_without_running_the_handler(emulator, token):
    target = emulator.base + "/__admin/clock?from=redirect"
    assert emulator.admin("POST", "faults", {"method": "POST", "path": "/api/v2/REF/sessions", "kind": "redirect", "value": target,
                                             "count": 1}).status == 201
    response = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": "adobepass://ios.app"},
                           validate=False)
    assert response.status == 302 and response.headers["location"] == target and response.body == b""
    assert emulator.v2("GET", "/REF/configuration", token).status == 200  # the count was 1
    session = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": "adobepass://ios.app"})
    assert session.json()["actionName"] == "authenticate"


@pytest.mark.parametrize("status", [301, 303, 307, 308])
def test_redirect_can_use_another_3xx(emulator, token, status):
    add_fault(emulator, kind="redirect", value="http://127.0.0.1:9/elsewhere", status=status, count=1)
    response = emulator.v2("GET", "/REF/configuration", token, validate=False)
    assert response.status == status and response.headers["location"] == "http://127.0.0.1:9/elsewhere"


def test_faults_match_by_method_and_path_prefix_until_deleted(emulator, token):
    assert emulator.admin("POST", "faults", {"path": "/api/v2/REF/*", "kind": "status", "value": 500}).status == 201
    for _ in range(3):
        assert emulator.v2("GET", "/REF/profiles", token, validate=False).status == 500
    assert emulator.admin("GET", "clock").status == 200  # admin calls are never faulted
    assert emulator.admin("DELETE", "faults").status == 200
    assert emulator.v2("GET", "/REF/profiles", token).status == 200


def test_bad_fault_requests_are_rejected(emulator):
    assert emulator.admin("POST", "faults", {"path": PATH, "kind": "explode"}).status == 400
    assert emulator.admin("POST", "faults", {"kind": "drop"}).status == 400
    assert emulator.admin("POST", "faults", {"path": PATH, "kind": "latency"}).status == 400
    assert emulator.admin("POST", "faults", {"path": PATH, "kind": "redirect"}).status == 400
    assert emulator.admin("POST", "faults", {"path": PATH, "kind": "redirect", "value": "http://x/", "status": 200}).status == 400
    # A value that would split the response into two (header injection) is refused, with the reason.
    split = emulator.admin("POST", "faults", {"path": PATH, "kind": "redirect", "value": "http://x/\r\nSet-Cookie: a=b"})
    assert (split.status, split.json()) == (400, {"error": "redirect needs the Location as value (no control character)"})
    typed = emulator.admin("POST", "faults", {"path": PATH, "kind": "contentType", "value": "text/html\nX: y"})
    assert typed.status == 400 and "no control character" in typed.json()["error"]
    for kind, value, reason in [
        ("status", 99, "status needs an HTTP status (an integer, 100-599) as value"),
        ("status", "500", "status needs an HTTP status (an integer, 100-599) as value"),
        ("latency", -1, "latency needs the delay in milliseconds (an integer, 0 or more) as value"),
    ]:
        refused = emulator.admin("POST", "faults", {"path": PATH, "kind": kind, "value": value})
        assert (refused.status, refused.json()) == (400, {"error": reason}), (kind, value)
    for count in (1.5, "3", 1e300, 0):
        assert emulator.admin("POST", "faults", {"path": PATH, "kind": "drop", "count": count}).status == 400, count
    # An unknown enhanced error code: the answer lists the known ones (a new-user pass had to read the source).
    unknown = emulator.admin("POST", "faults", {"path": PATH, "kind": "error", "value": "invalid_access_token"})
    assert unknown.status == 400 and unknown.json()["error"] == "error needs a known enhanced error code as value"
    assert "invalid_integration" in unknown.json()["known"] and unknown.json()["known"] == sorted(unknown.json()["known"])


def test_a_slow_request_does_not_block_another(emulator, token):
    add_fault(emulator, kind="latency", value=1500, count=1)
    results = {}

    def slow():
        results["slow"] = emulator.v2("GET", "/REF/configuration", token).status

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.2)
    assert emulator.v2("GET", "/REF/profiles", token).status == 200
    assert "slow" not in results  # the fast request finished while the slow one was still waiting
    thread.join(10)
    assert results["slow"] == 200


def test_more_slow_requests_than_server_threads_block_no_other(emulator, token):
    """The server's threads are a pool (one per processor): a delayed answer suspends its connection instead of
    holding a thread, so eight slow requests at once still leave every thread free for a fast one."""
    add_fault(emulator, kind="latency", value=2000, count=8)
    results = []

    def slow():
        results.append(emulator.v2("GET", "/REF/configuration", token).status)

    threads = [threading.Thread(target=slow) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    began = time.monotonic()
    assert emulator.v2("GET", "/REF/profiles", token).status == 200
    assert time.monotonic() - began < 1.0 and results == []  # answered while all eight still waited
    for thread in threads:
        thread.join(10)
    assert results == [200] * 8
