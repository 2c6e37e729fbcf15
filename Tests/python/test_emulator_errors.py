"""Documented status and enhanced error codes of the emulator (Adobe Pass, "Enhanced error codes"), checked over HTTP."""
import json
import urllib.parse

from emulator_fixtures import REDIRECT, _fresh_emulator, b64, emulator, error_of, token  # noqa: F401 (fixtures)

SESSION_FORM = {"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT}


def test_missing_authorization_is_401(emulator):
    error = error_of(emulator.v2("GET", "/REF/configuration", None), 401, "invalid_access_token_client_application", "application-registration")
    assert error["helpUrl"].startswith("https://") and error["trace"]


def test_unknown_bearer_is_401(emulator):
    error_of(emulator.v2("GET", "/REF/profiles", "not-a-token"), 401, "invalid_access_token_client_application")


def test_expired_access_token_is_401(emulator, token):
    assert emulator.v2("GET", "/REF/configuration", token).status == 200
    emulator.advance(21600 + 1)
    error_of(emulator.v2("GET", "/REF/configuration", token), 401, "invalid_access_token_client_application", "application-registration")
    assert emulator.v2("GET", "/REF/configuration", emulator.token()).status == 200


def test_missing_device_identifier_is_400(emulator, token):
    headers = {"Authorization": "Bearer " + token, "X-Device-Info": b64(json.dumps({"model": "m", "version": "1", "osName": "Linux",
                                                                                    "osVersion": "6", "connectionType": "LAN"})),
               "Content-Type": "application/x-www-form-urlencoded"}
    response = emulator.call("POST", "/api/v2/REF/sessions", urllib.parse.urlencode(SESSION_FORM).encode(), headers)
    error_of(response, 400, "invalid_header_device_identifier", "none")
    emulator.rest.validate("POST", "/api/v2/REF/sessions", 400, response.json())
    bad = emulator.v2("GET", "/REF/profiles", token, headers={"AP-Device-Identifier": "serial abc"})
    error_of(bad, 400, "invalid_header_device_identifier")


def test_missing_device_info_is_400(emulator, token):
    headers = {"Authorization": "Bearer " + token, "AP-Device-Identifier": "fingerprint " + b64("device-0001")}
    response = emulator.call("GET", "/api/v2/REF/profiles", None, headers)
    error_of(response, 400, "invalid_header_device_info", "none")
    emulator.rest.validate("GET", "/api/v2/REF/profiles", 400, response.json())


def test_malformed_device_info_is_400(emulator, token):
    for value in ["%%%not-base64%%%", b64("{not json"), b64('["an", "array"]')]:
        response = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch1"]},
                               headers={"X-Device-Info": value})
        error_of(response, 400, "invalid_header_device_info")


def test_unknown_service_provider_is_400(emulator, token):
    unknown = error_of(emulator.v2("GET", "/NOPE/configuration", token), 400, "invalid_parameter_service_provider", "none")
    assert unknown["details"] == "Known service providers: REF, REF2"
    error_of(emulator.v2("POST", "/NOPE/sessions", token, form=SESSION_FORM), 400, "invalid_parameter_service_provider")


def test_unknown_mvpd_is_400(emulator, token):
    error_of(emulator.v2("POST", "/REF/sessions", token, form={**SESSION_FORM, "mvpd": "Nobody"}), 400, "invalid_parameter_mvpd", "none")
    error_of(emulator.v2("GET", "/REF/profiles/Nobody", token), 400, "invalid_parameter_mvpd")
    for kind in ["authorize", "preauthorize"]:
        error_of(emulator.v2("POST", f"/REF/decisions/{kind}/Nobody", token, json_body={"resources": ["ch1"]}), 400, "invalid_parameter_mvpd")
    error_of(emulator.v2("GET", "/REF/logout/Nobody?redirectUrl=x%3A%2F%2Fy", token), 400, "invalid_parameter_mvpd")


def test_unknown_code_is_400(emulator, token):
    error_of(emulator.v2("GET", "/REF/sessions/ZZZZZZZ", token, device=None), 400, "invalid_parameter_code", "none")
    error_of(emulator.v2("POST", "/REF/sessions/ZZZZZZZ", token, device=None, form={"mvpd": "MockMVPD"}), 400, "invalid_parameter_code")
    error_of(emulator.v2("GET", "/REF/profiles/code/ZZZZZZZ", token, device=None), 400, "invalid_parameter_code")
    page = emulator.call("GET", "/api/v2/authenticate/REF/ZZZZZZZ")
    assert page.status == 400 and page.headers["content-type"].startswith("text/html")


def test_expired_code_is_400_invalid_authentication_session(emulator, token):
    code = emulator.v2("POST", "/REF/sessions", token, form=SESSION_FORM).json()["code"]
    emulator.advance(30 * 60 + 1)
    error_of(emulator.v2("GET", f"/REF/sessions/{code}", token, device=None), 400, "invalid_authentication_session", "none")
    error_of(emulator.v2("GET", f"/REF/profiles/code/{code}", token, device=None), 400, "invalid_authentication_session")
    assert emulator.call("GET", f"/api/v2/authenticate/REF/{code}").status == 400


def test_decision_without_profile_is_403_profile_missing(emulator, token):
    error_of(emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch1"]}), 403,
             "authenticated_profile_missing", "authentication")


def test_expired_profile_is_403_profile_expired(emulator):
    client = emulator.register()
    emulator.login(emulator.token(client))
    emulator.advance(24 * 3600 + 1)
    token = emulator.token(client)  # the access token (6 h) expired too; the same credentials get a new one
    assert emulator.v2("GET", "/REF/profiles", token).json() == {"profiles": {}}
    error_of(emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch1"]}), 403,
             "authenticated_profile_expired", "authentication")
    error_of(emulator.v2("POST", "/REF/decisions/preauthorize/MockMVPD", token, json_body={"resources": ["ch1"]}), 403,
             "authenticated_profile_expired")


def test_denial_is_item_level_with_the_mvpd_details(emulator, token):
    emulator.login(token)
    response = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch2"]})
    assert response.status == 200
    item = response.json()["decisions"][0]
    assert item["authorized"] is False
    assert item["error"] == {**item["error"], "status": 403, "code": "authorization_denied_by_mvpd", "action": "none",
                             "details": 'Your subscription does not include "Channel 2".'}


def test_bad_resources_body_is_400(emulator, token):
    emulator.login(token)
    for body in [{}, {"resources": []}, {"resources": [1]}, {"resources": "ch1"}]:
        error_of(emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body=body), 400, "invalid_parameter_resources")


def test_bad_redirect_url_is_400(emulator, token):
    error_of(emulator.v2("POST", "/REF/sessions", token, form={**SESSION_FORM, "redirectUrl": "not a url"}), 400, "invalid_parameter_redirect_url")


def test_dcr_errors(emulator):
    def register(body):
        return emulator.call("POST", "/o/client/register", json.dumps(body).encode(), {"Content-Type": "application/json"})
    assert register({"software_statement": "only.two"}).json() == {"error": "invalid_software_statement"}
    assert register({}).json() == {"error": "invalid_request"}
    assert register({}).status == 400
    form = "client_id=nobody&client_secret=x&grant_type=client_credentials"
    response = emulator.call("POST", "/o/client/token", form.encode(), {"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status == 400 and response.json() == {"error": "invalid_client"}
    client = emulator.register()
    wrong = f"client_id={client['client_id']}&client_secret={client['client_secret']}&grant_type=password"
    assert emulator.call("POST", "/o/client/token", wrong.encode(), {"Content-Type": "application/x-www-form-urlencoded"}).json() == {
        "error": "unsupported_grant_type"}


MALFORMED_MRSS = '<rss version="2.0"><channel><title>Law & Order: "SVU" <Pilot></title></channel></rss>'
ESCAPED_MRSS = '<rss version="2.0"><channel><title>Law &amp; Order: "SVU" &lt;Pilot&gt;</title></channel></rss>'


def test_malformed_mrss_is_400_invalid_parameter_resources_on_both_decisions(emulator, token):
    emulator.login(token)
    for kind in ("authorize", "preauthorize"):
        response = emulator.v2("POST", f"/REF/decisions/{kind}/MockMVPD", token, json_body={"resources": ["ch1", MALFORMED_MRSS]})
        error = error_of(response, 400, "invalid_parameter_resources", "none")
        assert error["message"] == "The resources parameter value is missing or invalid."
        assert error["details"] == "Resource 2 starts with < but is not well-formed XML (MRSS): escape & < > in text as &amp; &lt; &gt;."


def test_malformed_mrss_is_refused_before_the_profile_is_looked_at(emulator, token):
    # No login: the parameter error comes first, as Adobe validates parameters before the profile.
    response = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": ["  " + MALFORMED_MRSS]})
    error_of(response, 400, "invalid_parameter_resources")
    error_of(emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": [ESCAPED_MRSS]}), 403,
             "authenticated_profile_missing")


def test_escaped_mrss_and_plain_ids_with_xml_characters_are_accepted(emulator, token):
    emulator.login(token)
    decisions = emulator.v2("POST", "/REF/decisions/preauthorize/MockMVPD", token,
                            json_body={"resources": [ESCAPED_MRSS, 'Law & Order: "SVU" <Pilot>']}).json()["decisions"]
    assert [d["resource"] for d in decisions] == [ESCAPED_MRSS, 'Law & Order: "SVU" <Pilot>']
    assert [d["error"]["code"] for d in decisions] == ["preauthorization_denied_by_mvpd"] * 2
    for broken in ("<rss><channel><title>ch1</title></channel>", "<rss><channel><title>ch1</title></channel></rss><rss/>"):
        error_of(emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": [broken]}), 400,
                 "invalid_parameter_resources")
