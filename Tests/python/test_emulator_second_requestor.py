"""REF2, the second requestor of the same application in the default configuration: REF's four MVPDs in the same order,
then PromoTempPass, DegradedAuthN (AuthNAll) and DegradedAuthZ (AuthZAll). Degraded access as Adobe's degraded access
flows describe it, over real HTTP, every JSON answer schema-checked."""
import base64

from emulator_fixtures import REDIRECT, Browser, _fresh_emulator, emulator, error_of, token  # noqa: F401 (fixtures)

REF_MVPDS = ["MockMVPD", "TempPass", "MockSSO", "MockPicker"]
FORM = {"domainName": "adobe.com", "redirectUrl": REDIRECT}


def session(emulator, token, sp, mvpd):
    return emulator.v2("POST", f"/{sp}/sessions", token, form={**FORM, "mvpd": mvpd})


def test_ref_is_unchanged_and_ref2_adds_its_mvpds_after_refs(emulator, token):
    ref = emulator.v2("GET", "/REF/configuration", token).json()["requestor"]
    assert [m["id"] for m in ref["mvpds"]] == REF_MVPDS
    ref2 = emulator.v2("GET", "/REF2/configuration", token).json()["requestor"]
    assert (ref2["id"], ref2["name"]) == ("REF2", "Reference Programmer 2")
    assert [m["id"] for m in ref2["mvpds"]] == REF_MVPDS + ["PromoTempPass", "DegradedAuthN", "DegradedAuthZ"]
    assert [m["displayName"] for m in ref2["mvpds"][4:]] == ["Promo Preview", "Degraded Cable (authenticate all)", "Degraded Cable (authorize all)"]
    assert ref2["mvpds"][:4] == ref["mvpds"]


def test_one_client_works_for_both_requestors_and_profiles_are_per_requestor(emulator, token):
    emulator.login(token)  # REF, MockMVPD
    assert list(emulator.v2("GET", "/REF/profiles", token).json()["profiles"]) == ["MockMVPD"]
    assert emulator.v2("GET", "/REF2/profiles", token).json() == {"profiles": {}}
    error_of(emulator.v2("POST", "/REF2/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch1"]}), 403,
             "authenticated_profile_missing")
    # A login under REF2 with the same client credentials and device.
    started = session(emulator, token, "REF2", "MockMVPD").json()
    assert started["actionName"] == "authenticate" and started["url"].startswith("/api/v2/authenticate/REF2/")
    browser = Browser(emulator.base)
    page, url = browser.go(started["url"])
    final, where = browser.submit(page, url, username="demo", password="demo")
    assert final is None and where == REDIRECT
    granted = emulator.v2("POST", "/REF2/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch1"]}).json()["decisions"][0]
    assert granted["authorized"] is True and granted["serviceProvider"] == "REF2"
    assert "<requestorID>REF2</requestorID>" in base64.b64decode(granted["token"]["serializedToken"]).decode()
    # Logout under REF removes REF's profile only: each requestor's profile goes with its own logout call.
    logout = emulator.v2("GET", "/REF/logout/MockMVPD?redirectUrl=x%3A%2F%2Fy", token).json()["logouts"]["MockMVPD"]
    assert logout["actionName"] == "logout"
    assert emulator.v2("GET", "/REF/profiles", token).json() == {"profiles": {}}
    assert list(emulator.v2("GET", "/REF2/profiles", token).json()["profiles"]) == ["MockMVPD"]


def test_authenticate_all_skips_the_login_with_a_degraded_profile(emulator, token):
    answer = session(emulator, token, "REF2", "DegradedAuthN").json()
    assert (answer["actionName"], answer["actionType"], answer["reasonType"]) == ("authorize", "direct", "degraded")
    assert answer["url"] == "/api/v2/REF2/decisions/authorize/DegradedAuthN" and answer["mvpd"] == "DegradedAuthN"
    profile = emulator.v2("GET", "/REF2/profiles/DegradedAuthN", token).json()["profiles"]["DegradedAuthN"]
    assert (profile["type"], profile["issuer"]) == ("degraded", "Adobe")
    assert profile["attributes"]["userID"]["value"].startswith("95cf93bcd183214a")
    # The all-profiles call lists no degraded profile (Adobe's page names regular and SSO types only).
    assert emulator.v2("GET", "/REF2/profiles", token).json() == {"profiles": {}}
    decisions = emulator.v2("POST", "/REF2/decisions/authorize/DegradedAuthN", token, json_body={"resources": ["ch1", "ch2"]}).json()["decisions"]
    for decision in decisions:
        assert (decision["authorized"], decision["source"]) == (True, "degradation")
        assert "serializedToken" in decision["token"] and decision["notAfter"] > decision["notBefore"]
    pre = emulator.v2("POST", "/REF2/decisions/preauthorize/DegradedAuthN", token, json_body={"resources": ["ch2"]}).json()["decisions"][0]
    assert (pre["authorized"], pre["source"]) == (True, "degradation") and "token" not in pre
    logout = emulator.v2("GET", "/REF2/logout/DegradedAuthN?redirectUrl=x%3A%2F%2Fy", token).json()["logouts"]["DegradedAuthN"]
    assert (logout["actionName"], logout["actionType"]) == ("complete", "none")


def test_authorize_all_logs_in_normally_and_permits_every_resource(emulator, token):
    assert session(emulator, token, "REF2", "DegradedAuthZ").json()["actionName"] == "authenticate"
    # Without any profile the rule still permits (Adobe: "does not have a valid profile"), with no decision-level times.
    decisions = emulator.v2("POST", "/REF2/decisions/authorize/DegradedAuthZ", token, json_body={"resources": ["ch1", "ch2"]}).json()["decisions"]
    for decision in decisions:
        assert (decision["authorized"], decision["source"]) == (True, "degradation") and "serializedToken" in decision["token"]
        assert "notBefore" not in decision and "notAfter" not in decision
    # The user can sign in at the MVPD as usual (authentication is not degraded).
    started = session(emulator, token, "REF2", "DegradedAuthZ").json()
    browser = Browser(emulator.base)
    page, url = browser.go(started["url"])
    final, where = browser.submit(page, url, username="demo", password="demo")
    assert final is None and where == REDIRECT
    profile = emulator.v2("GET", "/REF2/profiles/DegradedAuthZ", token).json()["profiles"]["DegradedAuthZ"]
    assert (profile["type"], profile["issuer"]) == ("regular", "DegradedAuthZ")
    assert emulator.v2("POST", "/REF2/decisions/authorize/DegradedAuthZ", token, json_body={"resources": ["ch2"]}).json()["decisions"][0]["source"] \
        == "degradation"
