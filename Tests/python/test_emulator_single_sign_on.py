"""The emulator's platform-identity and service-token single sign-on (Sources/PassEmulator/README.md): a login
made with a token gives every other client and device that sends the same token a `platformSSO` or
`serviceTokenSSO` profile, usable for decisions, until a logout sent with the token ends it. Every answer is
checked against Adobe's OpenAPI document."""
import base64
import json

from emulator_fixtures import REDIRECT, Browser, _fresh_emulator, emulator, token  # noqa: F401 (fixtures)


def jwt(**claims) -> str:
    part = lambda value: base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


def login_with(emulator, token, headers):
    """A session created with `headers`, then the browser login (demo/demo at MockMVPD)."""
    session = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT},
                          headers=headers).json()
    browser = Browser(emulator.base)
    page, url = browser.go(session["url"])
    final, where = browser.submit(page, url, username="demo", password="demo")
    assert final is None and where == REDIRECT


def test_a_platform_identity_gives_other_apps_a_platform_sso_profile_until_single_logout(emulator, token):
    subject = {"Adobe-Subject-Token": jwt(iss="roku", sub="user-1")}
    login_with(emulator, token, subject)
    other = emulator.token()  # another app: another DCR client, on another device
    profiles = emulator.v2("GET", "/REF/profiles", other, device="device-0002", headers=subject).json()["profiles"]
    assert list(profiles) == ["MockMVPD"]
    profile = profiles["MockMVPD"]
    assert (profile["type"], profile["issuer"]) == ("platformSSO", "MockMVPD")
    assert profile["attributes"]["mvpd"] == {"value": "MockMVPD", "state": "plain"}
    assert profile["attributes"]["upstreamUserID"] == profile["attributes"]["userID"]
    one = emulator.v2("GET", "/REF/profiles/MockMVPD", other, device="device-0002", headers=subject).json()["profiles"]
    assert one["MockMVPD"]["type"] == "platformSSO"
    decision = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", other, device="device-0002", headers=subject,
                           json_body={"resources": ["ch1"]}).json()["decisions"][0]
    assert decision["authorized"] is True and decision["source"] == "mvpd"
    # Without the token, or with a token that is not a JWT (ignored, as Adobe does), there is no profile.
    assert emulator.v2("GET", "/REF/profiles", other, device="device-0002").json() == {"profiles": {}}
    assert emulator.v2("GET", "/REF/profiles", other, device="device-0002",
                       headers={"Adobe-Subject-Token": "not-a-jwt"}).json() == {"profiles": {}}
    # The service-token header with the same claims is another identity.
    assert emulator.v2("GET", "/REF/profiles", other, device="device-0002",
                       headers={"AD-Service-Token": subject["Adobe-Subject-Token"]}).json() == {"profiles": {}}
    # Single logout with the token ends it for every app.
    logout = emulator.v2("GET", "/REF/logout/MockMVPD?redirectUrl=x%3A%2F%2Fy", other, device="device-0002", headers=subject).json()
    assert logout["logouts"]["MockMVPD"]["actionName"] == "logout"
    assert emulator.v2("GET", "/REF/profiles", other, device="device-0002", headers=subject).json() == {"profiles": {}}


def test_a_service_token_gives_a_service_token_sso_profile_and_skips_the_login(emulator, token):
    service = {"AD-Service-Token": jwt(iss="idp", sub="account-42")}
    login_with(emulator, token, service)
    other = emulator.token()
    profile = emulator.v2("GET", "/REF/profiles", other, device="tv-2", headers=service).json()["profiles"]["MockMVPD"]
    assert profile["type"] == "serviceTokenSSO"
    session = emulator.v2("POST", "/REF/sessions", other, device="tv-2", headers=service,
                          form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    assert (session["actionName"], session["reasonType"]) == ("authorize", "authenticatedSSO")
