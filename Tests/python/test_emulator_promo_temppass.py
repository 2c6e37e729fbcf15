"""Promotional TempPass on REF2's `PromoTempPass` (600 s, 2 resources), keyed by AP-TempPass-Identity (base64 of a JSON
object): Adobe's TempPass feature and temporary access flows, over real HTTP, every JSON answer schema-checked."""
import json

import pytest

from emulator_fixtures import REDIRECT, _fresh_emulator, b64, emulator, error_of, token  # noqa: F401 (fixtures)

ALICE = {"AP-TempPass-Identity": b64(json.dumps({"email": "alice@example.com"}))}
BOB = {"AP-TempPass-Identity": b64(json.dumps({"email": "bob@example.com"}))}
FORM = {"mvpd": "PromoTempPass", "domainName": "adobe.com", "redirectUrl": REDIRECT}


def authorize(emulator, token, resources, identity=ALICE, device="device-0001"):
    response = emulator.v2("POST", "/REF2/decisions/authorize/PromoTempPass", token, json_body={"resources": resources}, headers=identity,
                           device=device)
    assert response.status == 200, response
    return response.json()["decisions"]


def profile(emulator, token, identity=ALICE, device="device-0001"):
    return emulator.v2("GET", "/REF2/profiles/PromoTempPass", token, headers=identity, device=device)


def test_configuration_marks_it_temppass(emulator, token):
    mvpds = {m["id"]: m for m in emulator.v2("GET", "/REF2/configuration", token).json()["requestor"]["mvpds"]}
    assert mvpds["PromoTempPass"]["isTempPass"] is True and mvpds["PromoTempPass"]["displayName"] == "Promo Preview"


def test_session_starts_the_trial_and_the_profile_counts_resources(emulator, token):
    assert profile(emulator, token).json() == {"profiles": {}}  # nothing before the first session or authorization
    session = emulator.v2("POST", "/REF2/sessions", token, form=FORM, headers=ALICE).json()
    assert (session["actionName"], session["actionType"], session["reasonType"]) == ("authorize", "direct", "temporary")
    assert session["url"] == "/api/v2/REF2/decisions/authorize/PromoTempPass"
    started = emulator.now_ms()
    found = profile(emulator, token).json()["profiles"]["PromoTempPass"]
    assert (found["type"], found["issuer"]) == ("temporary", "Adobe")
    assert found["notAfter"] - found["notBefore"] == 600_000 and abs(found["notBefore"] - started) < 2000
    attributes = found["attributes"]
    assert attributes["remaining_resources"] == {"value": 2, "state": "plain"}
    assert attributes["used_assets"] == {"value": [], "state": "plain"}
    assert attributes["expiration_date"]["value"] == found["notAfter"]
    assert attributes["userID"]["value"].startswith("temppass_") and len(attributes["userID"]["value"]) == len("temppass_") + 40


def test_authorize_grants_up_to_max_resources_then_the_limit(emulator, token):
    first = authorize(emulator, token, ["ch1"])[0]
    assert (first["authorized"], first["source"], first["mvpd"]) == (True, "temppass", "PromoTempPass") and "serializedToken" in first["token"]
    # ch1 again costs nothing; ch2 is the second and last resource; ch3 is over the limit.
    decisions = authorize(emulator, token, ["ch1", "ch2", "ch3"])
    assert [d["authorized"] for d in decisions] == [True, True, False]
    error = decisions[2]["error"]
    assert (error["status"], error["code"], error["action"]) == (403, "temporary_access_resources_limit_exceeded", "authentication")
    assert error["message"] == "The temporary access resources limit has been exceeded."
    error_of(profile(emulator, token), 403, "temporary_access_resources_limit_exceeded", "authentication")
    # Preauthorize says the same without recording anything.
    pre = emulator.v2("POST", "/REF2/decisions/preauthorize/PromoTempPass", token, json_body={"resources": ["ch2", "ch4"]}, headers=ALICE).json()
    assert [d["authorized"] for d in pre["decisions"]] == [True, False] and "token" not in pre["decisions"][0]
    # A new session for that identity is refused.
    error_of(emulator.v2("POST", "/REF2/sessions", token, form=FORM, headers=ALICE), 403, "temporary_access_resources_limit_exceeded")


def test_a_resource_counts_once_whatever_its_spelling(emulator, token):
    authorize(emulator, token, ["ch2"])
    assert authorize(emulator, token, ['<rss><channel><title>ch2</title></channel></rss>'])[0]["authorized"] is True
    attributes = profile(emulator, token).json()["profiles"]["PromoTempPass"]["attributes"]
    assert attributes["used_assets"]["value"] == ["ch2"] and attributes["remaining_resources"]["value"] == 1


def test_the_identity_decides_whether_the_promo_was_used(emulator, token):
    authorize(emulator, token, ["ch1", "ch2"], identity=ALICE, device="device-A")
    # Alice on another device: the same, spent trial.
    assert authorize(emulator, token, ["ch3"], identity=ALICE, device="device-B")[0]["error"]["code"] == "temporary_access_resources_limit_exceeded"
    # Bob on a fresh device: a fresh trial.
    assert authorize(emulator, token, ["ch3"], identity=BOB, device="device-C")[0]["authorized"] is True
    # Carol, new, on Alice's first device: that device already had a trial (Adobe: identity or device).
    carol = {"AP-TempPass-Identity": b64(json.dumps({"email": "carol@example.com"}))}
    assert authorize(emulator, token, ["ch4"], identity=carol, device="device-A")[0]["authorized"] is False
    # Bob's own trial goes on wherever he is.
    assert authorize(emulator, token, ["ch4"], identity=BOB, device="device-A")[0]["authorized"] is True


def test_the_trial_expires_after_its_own_duration(emulator, token):
    authorize(emulator, token, ["ch1"])
    emulator.advance(599)
    assert authorize(emulator, token, ["ch1"])[0]["authorized"] is True
    emulator.advance(1)
    denied = authorize(emulator, token, ["ch1"])[0]
    assert denied["authorized"] is False and denied["error"]["code"] == "temporary_access_duration_limit_exceeded"
    error_of(profile(emulator, token), 403, "temporary_access_duration_limit_exceeded", "authentication")
    error_of(emulator.v2("POST", "/REF2/sessions", token, form=FORM, headers=ALICE), 403, "temporary_access_duration_limit_exceeded")
    # Basic TempPass of the same requestor is a separate pass for the same device.
    basic = emulator.v2("POST", "/REF2/sessions", token, form={**FORM, "mvpd": "TempPass"}).json()
    assert (basic["actionName"], basic["reasonType"]) == ("authorize", "temporary")


@pytest.mark.parametrize("headers", [{}, {"AP-TempPass-Identity": "not base64 json"}, {"AP-TempPass-Identity": b64("[1, 2]")},
                                     {"AP-TempPass-Identity": b64("{}")}])
def test_missing_or_unreadable_identity_is_400(emulator, token, headers):
    for response in (emulator.v2("POST", "/REF2/sessions", token, form=FORM, headers=headers),
                     emulator.v2("POST", "/REF2/decisions/authorize/PromoTempPass", token, json_body={"resources": ["ch1"]}, headers=headers),
                     emulator.v2("GET", "/REF2/profiles/PromoTempPass", token, headers=headers)):
        error = error_of(response, 400, "invalid_header_identity_for_temporary_access", "none")
        assert error["message"] == "The identity for temporary access header value is missing or invalid."


def test_all_profiles_find_the_trial_by_device_and_logout_is_complete(emulator, token):
    authorize(emulator, token, ["ch1"], device="device-9")
    listed = emulator.v2("GET", "/REF2/profiles", token, device="device-9").json()["profiles"]
    assert listed["PromoTempPass"]["attributes"]["used_assets"]["value"] == ["ch1"]
    assert emulator.v2("GET", "/REF2/profiles", token, device="device-10").json() == {"profiles": {}}
    logout = emulator.v2("GET", "/REF2/logout/PromoTempPass?redirectUrl=x%3A%2F%2Fy", token, device="device-9").json()
    assert logout["logouts"]["PromoTempPass"] == {"actionName": "complete", "actionType": "none", "mvpd": "PromoTempPass"}
