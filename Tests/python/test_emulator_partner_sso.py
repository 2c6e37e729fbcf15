"""Partner SSO for Apple (Adobe Pass REST API V2, "Partner Single Sign-On APIs"): sessions/sso, /__admin/partner-saml,
profiles/sso, the AP-Partner-Framework-Status rules and their fallbacks."""
import base64

from emulator_fixtures import REDIRECT, _fresh_emulator, emulator, error_of, pfs_header, token  # noqa: F401 (fixtures)

FORM = {"domainName": "adobe.com", "redirectUrl": REDIRECT}


def partner_login(emulator, token, device="device-0001"):
    granted = {"AP-Partner-Framework-Status": pfs_header("granted")}
    session = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM, headers=granted, device=device).json()
    assert (session["actionName"], session["actionType"], session["reasonType"]) == ("partner_profile", "direct", "none")
    assert session["mvpd"] == "MockSSO" and session["url"] == "/api/v2/REF/profiles/sso/Apple"
    request = session["authenticationRequest"]
    assert request["type"] == "saml" and request["attributesNames"]
    saml = emulator.admin("POST", "partner-saml", {"providerId": "MockSSO", "username": "demo", "password": "demo",
                                                   "request": request["request"]})
    assert saml.status == 200, saml
    encoded = base64.b64encode(" ".join(saml.json()["samlResponse"].split()).encode()).decode()
    response = emulator.v2("POST", "/REF/profiles/sso/Apple", token, form={"SAMLResponse": encoded}, headers=granted, device=device,
                           validate=False)
    assert response.status == 201, response
    emulator.rest.validate("POST", "/api/v2/REF/profiles/sso/Apple", 200, response.json())
    return response.json()["profiles"]["MockSSO"]


def test_partner_login_creates_an_apple_sso_profile(emulator, token):
    profile = partner_login(emulator, token)
    assert profile["type"] == "appleSSO" and profile["issuer"] == "Apple"
    assert profile["attributes"]["userID"]["value"]
    granted = {"AP-Partner-Framework-Status": pfs_header("granted")}
    assert emulator.v2("GET", "/REF/profiles", token, headers=granted).json()["profiles"]["MockSSO"]["type"] == "appleSSO"
    # without a valid partner status the appleSSO profile is not visible
    assert emulator.v2("GET", "/REF/profiles", token).json() == {"profiles": {}}
    assert emulator.v2("GET", "/REF/profiles/MockSSO", token, headers={"AP-Partner-Framework-Status": pfs_header("denied")}).json() == {
        "profiles": {}}
    decision = emulator.v2("POST", "/REF/decisions/authorize/MockSSO", token, json_body={"resources": ["ch1"]}, headers=granted).json()
    assert decision["decisions"][0]["authorized"] is True
    again = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM, headers=granted).json()
    assert (again["actionName"], again["reasonType"]) == ("authorize", "authenticatedSSO")
    logout = emulator.v2("GET", "/REF/logout/MockSSO?redirectUrl=x%3A%2F%2Fy", token).json()["logouts"]["MockSSO"]
    assert (logout["actionName"], logout["actionType"]) == ("partner_logout", "partner_interactive") and "url" not in logout


def test_partner_status_denied_not_determined_expired_on_profile_exchange(emulator, token):
    past = emulator.now_ms() - 1000
    cases = [(pfs_header("denied"), "invalid_header_pfs_permission_access_not_granted"),
             (pfs_header("restricted"), "invalid_header_pfs_permission_access_not_granted"),
             (pfs_header("notDetermined"), "invalid_header_pfs_permission_access_not_determined"),
             (pfs_header("granted", expires_ms=past), "invalid_header_pfs_provider_info_expired"),
             (pfs_header("granted", provider="NoSuchTV"), "invalid_header_pfs_provider_id_not_determined"),
             ("not base64 json", "invalid_header_pfs_permission_access_not_present")]
    for header, code in cases:
        response = emulator.v2("POST", "/REF/profiles/sso/Apple", token, form={"SAMLResponse": "eA=="},
                               headers={"AP-Partner-Framework-Status": header})
        error_of(response, 400, code, "none")
    missing = emulator.v2("POST", "/REF/profiles/sso/Apple", token, form={"SAMLResponse": "eA=="})
    error_of(missing, 400, "invalid_header_pfs_permission_access_not_present")
    bad_saml = emulator.v2("POST", "/REF/profiles/sso/Apple", token, form={"SAMLResponse": "eA=="},
                           headers={"AP-Partner-Framework-Status": pfs_header("granted")})
    error_of(bad_saml, 400, "invalid_parameter_saml_response")


def test_partner_status_problems_fall_back_on_sessions(emulator, token):
    for header in [pfs_header("denied"), pfs_header("notDetermined"), pfs_header("granted", expires_ms=emulator.now_ms() - 1)]:
        session = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM, headers={"AP-Partner-Framework-Status": header}).json()
        assert (session["actionName"], session["actionType"], session["reasonType"]) == ("authenticate", "interactive", "pfs_fallback")
        assert session["code"] and session["url"] == f"/api/v2/authenticate/REF/{session['code']}"
    no_header = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM).json()
    assert no_header["reasonType"] == "pfs_fallback"
    picker = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM,
                         headers={"AP-Partner-Framework-Status": pfs_header("granted", provider="MockPicker")}).json()
    assert (picker["actionName"], picker["reasonType"], picker["mvpd"]) == ("authenticate", "configuration_fallback", "MockPicker")
    missing = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form={"domainName": "adobe.com"},
                          headers={"AP-Partner-Framework-Status": pfs_header("granted")}).json()
    assert (missing["actionName"], missing["reasonType"], missing["missingParameters"]) == ("resume", "missing_parameters_fallback", ["redirectUrl"])
    error_of(emulator.v2("POST", "/REF/sessions/sso/Google", token, form=FORM), 400, "invalid_parameter_partner")


def test_partner_decisions_need_a_valid_status(emulator, token):
    partner_login(emulator, token)
    denied = emulator.v2("POST", "/REF/decisions/authorize/MockSSO", token, json_body={"resources": ["ch1"]},
                         headers={"AP-Partner-Framework-Status": pfs_header("denied")})
    error_of(denied, 400, "invalid_header_pfs_permission_access_not_granted")
    error_of(emulator.v2("POST", "/REF/decisions/authorize/MockSSO", token, json_body={"resources": ["ch1"]}), 403, "authenticated_profile_missing")


def test_partner_saml_checks_credentials_and_token(emulator, token):
    session = emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM,
                          headers={"AP-Partner-Framework-Status": pfs_header("granted")}).json()
    request = session["authenticationRequest"]["request"]
    assert emulator.admin("POST", "partner-saml", {"providerId": "MockSSO", "username": "demo", "password": "bad", "request": request}).status == 401
    assert emulator.admin("POST", "partner-saml", {"providerId": "Unknown", "username": "demo", "password": "demo", "request": request}).status == 400
    assert emulator.admin("POST", "partner-saml", {"providerId": "MockSSO", "username": "demo", "password": "demo", "request": "eA=="}).status == 400


def test_regular_login_works_for_the_sso_and_picker_mvpds(emulator, token):
    for mvpd in ["MockSSO", "MockPicker"]:
        emulator.login(token, mvpd=mvpd)
        decisions = emulator.v2("POST", f"/REF/decisions/authorize/{mvpd}", token, json_body={"resources": ["ch1", "ch2"]}).json()["decisions"]
        assert [d["authorized"] for d in decisions] == [True, False]


def test_platform_services_switched_off_leave_the_configuration_and_fall_back(emulator, token):
    """`POST /__admin/platform-services`: SSO disabled for MockSSO, as in Adobe's dashboard. The configuration no
    longer says `enablePlatformServices` for it, and sessions/sso falls back to its login page; switched back on,
    both are as configured again. An MVPD the service provider does not have is a 404."""
    def flags():
        mvpds = emulator.v2("GET", "/REF/configuration", token).json()["requestor"]["mvpds"]
        return {m["id"]: m.get("enablePlatformServices", False) for m in mvpds}

    def sso_session():
        granted = {"AP-Partner-Framework-Status": pfs_header("granted")}
        return emulator.v2("POST", "/REF/sessions/sso/Apple", token, form=FORM, headers=granted).json()

    assert flags()["MockSSO"] is True
    off = emulator.admin("POST", "platform-services", {"serviceProvider": "REF", "mvpd": "MockSSO", "enablePlatformServices": False})
    assert off.status == 200 and off.json() == {"enablePlatformServices": False}
    assert flags() == {"MockMVPD": False, "TempPass": False, "MockSSO": False, "MockPicker": True}
    fallback = sso_session()
    assert (fallback["actionName"], fallback["reasonType"], fallback["mvpd"]) == ("authenticate", "configuration_fallback", "MockSSO")
    assert emulator.admin("POST", "platform-services", {"serviceProvider": "REF", "mvpd": "MockSSO", "enablePlatformServices": True}).status == 200
    assert flags()["MockSSO"] is True
    assert sso_session()["actionName"] == "partner_profile"
    assert emulator.admin("POST", "platform-services", {"serviceProvider": "REF", "mvpd": "Nobody", "enablePlatformServices": False}).status == 404
    assert emulator.admin("POST", "platform-services", {"serviceProvider": "REF", "mvpd": "MockSSO"}).status == 400
