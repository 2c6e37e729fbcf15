"""The built-in throttle (Adobe's "Throttling mechanism"): a one-time burst, then a steady rate per caller on DCR and
REST API V2; over it, 429 with Adobe's HTML page and a Retry-After that tells the truth."""
import json
import time

import pytest

from emulator_fixtures import EmulatorProcess, _fresh_emulator, emulator, token  # noqa: F401 (fixtures)

PAGE_TITLE = "<head><title>429 Too Many Requests</title></head>"


def throttle(emulator, **settings):
    response = emulator.admin("POST", "throttle", settings)
    assert response.status == 200, response
    return response.json()


def configuration(emulator, token, **headers):
    return emulator.v2("GET", "/REF/configuration", token, headers=headers, validate=False)


def assert_throttled(response, retry_after: str | None = "1"):
    assert response.status == 429, response
    assert response.headers["content-type"] == "text/html" and PAGE_TITLE in response.text
    assert response.headers.get("retry-after") == retry_after


def test_burst_then_429_with_retry_after_then_admitted_after_a_second(emulator, token):
    assert throttle(emulator, requestsPerSecond=1, burst=3) == {"requestsPerSecond": 1.0, "burst": 3, "per": "address", "retryAfter": True}
    assert [configuration(emulator, token).status for _ in range(3)] == [200, 200, 200]
    assert_throttled(configuration(emulator, token))
    assert_throttled(emulator.call("POST", "/o/client/token", b"client_id=x", {"Content-Type": "application/x-www-form-urlencoded"}))
    # Admin calls, the mock MVPD and the activation page are never throttled.
    assert emulator.admin("GET", "clock").status == 200 and emulator.call("GET", "/activate").status == 200
    time.sleep(1.05)  # Retry-After: 1 is honest in real time (the emulator's clock follows the system clock)
    assert configuration(emulator, token).status == 200
    assert_throttled(configuration(emulator, token))
    emulator.advance(1)  # moving the emulator's clock refills too
    response = configuration(emulator, token)
    assert response.status == 200 and response.json()["requestor"]["id"] == "REF"


def test_the_burst_is_a_one_time_allowance(emulator, token):
    throttle(emulator, requestsPerSecond=1, burst=2)
    assert [configuration(emulator, token).status for _ in range(3)] == [200, 200, 429]
    emulator.advance(60)  # a long pause earns one second's worth, not a new burst
    assert [configuration(emulator, token).status for _ in range(2)] == [200, 429]


def test_retry_after_counts_the_seconds_to_the_next_token(emulator, token):
    throttle(emulator, requestsPerSecond=0.25, burst=1)
    assert configuration(emulator, token).status == 200
    assert_throttled(configuration(emulator, token), retry_after="4")
    emulator.advance(3)
    assert_throttled(configuration(emulator, token), retry_after="1")
    emulator.advance(1)
    assert configuration(emulator, token).status == 200


def test_retry_after_false_is_adobes_documented_429(emulator, token):
    throttle(emulator, requestsPerSecond=1, burst=0, retryAfter=False)
    assert_throttled(configuration(emulator, token), retry_after=None)


def test_callers_are_told_apart_by_forwarded_address_device_or_client(emulator, token):
    other = emulator.token()
    throttle(emulator, burst=1)
    assert configuration(emulator, token, **{"X-Forwarded-For": "203.0.113.7, 10.0.0.1"}).status == 200
    assert configuration(emulator, token, **{"X-Forwarded-For": "203.0.113.7"}).status == 429
    assert configuration(emulator, token, **{"X-Forwarded-For": "203.0.113.8"}).status == 200
    assert configuration(emulator, token).status == 200  # 127.0.0.1, the peer address
    assert configuration(emulator, token).status == 429

    throttle(emulator, burst=1, per="device")
    first = emulator.v2("GET", "/REF/profiles", token, device="device-A")
    assert first.status == 200 and first.json() == {"profiles": {}}
    assert emulator.v2("GET", "/REF/profiles", token, device="device-A", validate=False).status == 429
    assert emulator.v2("GET", "/REF/profiles", token, device="device-B").status == 200

    throttle(emulator, burst=1, per="client")
    assert configuration(emulator, token).status == 200
    assert configuration(emulator, token).status == 429
    assert configuration(emulator, other).status == 200


def test_a_throttled_request_leaves_faults_and_state_alone(emulator, token):
    throttle(emulator, burst=0)
    assert emulator.admin("POST", "faults", {"path": "/api/v2/REF/configuration", "kind": "status", "value": 503, "count": 1}).status == 201
    assert configuration(emulator, token).status == 429
    assert emulator.admin("DELETE", "throttle").status == 200
    assert emulator.admin("GET", "throttle").json() == {}
    assert configuration(emulator, token).status == 503  # the fault was still there
    assert configuration(emulator, token).status == 200


@pytest.mark.parametrize("settings, message", [
    ({"requestsPerSecond": 0}, "requestsPerSecond: expected a number above 0"),
    ({"requestsPerSecond": "fast"}, "requestsPerSecond: expected a number"),
    ({"burst": -1}, "burst: expected a non-negative integer"),
    ({"per": "planet"}, "per: expected address, device, client"),
    ({"retryAfter": "yes"}, "retryAfter: expected a boolean"),
])
def test_bad_settings_are_400(emulator, settings, message):
    response = emulator.admin("POST", "throttle", settings)
    assert response.status == 400 and response.json() == {"error": message}


def test_the_configuration_can_switch_it_on_from_the_start(bin_dir, tmp_path):
    document = {"serviceProviders": [{"id": "REF", "mvpds": [{"id": "MockMVPD"}]}], "throttle": {"requestsPerSecond": 2, "burst": 1}}
    path = tmp_path / "throttled.json"
    path.write_text(json.dumps(document))
    process = EmulatorProcess(bin_dir, "--config", str(path))
    try:
        assert process.admin("GET", "throttle").json() == {"requestsPerSecond": 2.0, "burst": 1, "per": "address", "retryAfter": True}
        client = process.call("POST", "/o/client/register", json.dumps({"software_statement": "eyJhIjoxfQ.eyJiIjoyfQ.c2ln"}).encode(),
                              {"Content-Type": "application/json"})
        assert client.status == 201
        assert_throttled(process.call("POST", "/o/client/register", b"{}", {"Content-Type": "application/json"}))
        assert process.admin("DELETE", "throttle").status == 200
        assert process.admin("POST", "reset").status == 200  # reset restores the configuration's throttle, buckets empty
        assert process.admin("GET", "throttle").json()["burst"] == 1
        assert process.call("POST", "/o/client/register", b"{}", {"Content-Type": "application/json"}).status == 400
        assert_throttled(process.call("POST", "/o/client/register", b"{}", {"Content-Type": "application/json"}))
    finally:
        assert process.stop() == 0
