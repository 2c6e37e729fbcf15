"""End-to-end flows against the real pass-emulator, over plain HTTP; every JSON answer is checked against
Adobe's OpenAPI schemas by the helpers in emulator_fixtures."""
import base64
import email.utils
import urllib.parse

from emulator_fixtures import REDIRECT, Browser, _fresh_emulator, emulator, parse_form, token  # noqa: F401 (fixtures)

CH2_DENIAL = 'Your subscription does not include "Channel 2".'


def test_full_flow_from_registration_to_logout(emulator, token):
    config = emulator.v2("GET", "/REF/configuration", token).json()
    requestor = config["requestor"]
    assert requestor["id"] == "REF" and requestor["name"] == "Reference Programmer"
    assert [m["id"] for m in requestor["mvpds"]] == ["MockMVPD", "TempPass", "MockSSO", "MockPicker"]
    by_id = {m["id"]: m for m in requestor["mvpds"]}
    assert by_id["MockMVPD"]["displayName"] == "Mock Cable" and "isTempPass" not in by_id["MockMVPD"]
    assert by_id["TempPass"]["isTempPass"] is True and by_id["TempPass"]["displayName"] == "Free Preview"
    assert by_id["MockSSO"]["platformMappingId"] == "MockSSO" and by_id["MockSSO"]["boardingStatus"] == "SUPPORTED"
    assert by_id["MockSSO"]["enablePlatformServices"] is True and by_id["MockSSO"]["displayInPlatformPicker"] is True
    assert by_id["MockPicker"]["boardingStatus"] == "PICKER" and by_id["MockPicker"]["platformMappingId"] == "MockPicker"

    assert emulator.v2("GET", "/REF/profiles", token).json() == {"profiles": {}}
    session = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    assert (session["actionName"], session["actionType"], session["reasonType"]) == ("authenticate", "interactive", "none")
    code = session["code"]
    assert session["url"] == f"/api/v2/authenticate/REF/{code}"
    assert isinstance(session["notBefore"], str) and int(session["notAfter"]) - int(session["notBefore"]) == 30 * 60 * 1000
    assert emulator.v2("GET", f"/REF/profiles/code/{code}", token, device=None).json() == {"profiles": {}}

    browser = Browser(emulator.base)
    page, url = browser.go(session["url"])
    assert page.status == 200 and "/mock-mvpd/MockMVPD/login" in url
    form = parse_form(page.text)
    assert form["method"] == "POST" and {"username", "password", "code"} <= set(form["fields"])
    final, where = browser.submit(page, url, username="demo", password="demo")
    assert final is None and where == REDIRECT

    profile = emulator.v2("GET", f"/REF/profiles/code/{code}", token, device=None).json()["profiles"]["MockMVPD"]
    assert profile["type"] == "regular" and profile["issuer"] == "MockMVPD"
    assert profile["notAfter"] - profile["notBefore"] == 24 * 3600 * 1000
    attributes = profile["attributes"]
    assert attributes["userID"]["state"] == "plain" and attributes["householdID"]["state"] == "plain"
    assert attributes["zip"]["state"] == "enc"
    assert emulator.v2("GET", "/REF/profiles", token).json()["profiles"]["MockMVPD"] == profile
    assert emulator.v2("GET", "/REF/profiles/MockMVPD", token).json()["profiles"]["MockMVPD"] == profile
    again = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    assert (again["actionName"], again["reasonType"], again["url"]) == ("authorize", "authenticated", "/api/v2/REF/decisions/authorize/MockMVPD")

    decisions = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": ["ch1", "ch2"]}).json()["decisions"]
    permit, deny = decisions
    assert permit["resource"] == "ch1" and permit["authorized"] is True and permit["source"] == "mvpd"
    assert permit["token"]["notAfter"] - permit["token"]["notBefore"] == 7 * 60 * 1000
    xml = base64.b64decode(permit["token"]["serializedToken"]).decode()
    assert xml.startswith("<signatureInfo>") and "<resourceID>ch1</resourceID>" in xml and "<requestorID>REF</requestorID>" in xml
    assert deny["resource"] == "ch2" and deny["authorized"] is False and "token" not in deny
    assert deny["error"]["code"] == "authorization_denied_by_mvpd" and deny["error"]["status"] == 403
    assert deny["error"]["action"] == "none" and deny["error"]["details"] == CH2_DENIAL

    pre = emulator.v2("POST", "/REF/decisions/preauthorize/MockMVPD", token, json_body={"resources": ["ch1", "ch2"]}).json()["decisions"]
    assert [d["authorized"] for d in pre] == [True, False] and all("token" not in d for d in pre)
    assert pre[1]["error"]["code"] == "preauthorization_denied_by_mvpd"

    logout = emulator.v2("GET", "/REF/logout/MockMVPD?redirectUrl=" + urllib.parse.quote(REDIRECT, safe=""), token).json()
    entry = logout["logouts"]["MockMVPD"]
    assert (entry["actionName"], entry["actionType"]) == ("logout", "interactive")
    final, where = Browser(emulator.base).go(entry["url"])
    assert final is None and where == REDIRECT
    assert emulator.v2("GET", "/REF/profiles", token).json() == {"profiles": {}}
    again = emulator.v2("GET", "/REF/logout/MockMVPD?redirectUrl=" + urllib.parse.quote(REDIRECT, safe=""), token).json()
    assert again["logouts"]["MockMVPD"]["actionName"] == "invalid"


def test_wrong_password_shows_the_form_again(emulator, token):
    session = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    browser = Browser(emulator.base)
    page, url = browser.go(session["url"])
    again, _ = browser.submit(page, url, username="demo", password="wrong")
    assert again.status == 200 and "Wrong username or password" in again.text
    assert "password" in parse_form(again.text)["fields"]
    assert emulator.v2("GET", f"/REF/profiles/code/{session['code']}", token, device=None).json() == {"profiles": {}}


def test_profiles_are_keyed_by_device_and_client_credentials(emulator, token):
    emulator.login(token)
    assert "MockMVPD" in emulator.v2("GET", "/REF/profiles", token).json()["profiles"]
    assert emulator.v2("GET", "/REF/profiles", token, device="another-device").json() == {"profiles": {}}
    other = emulator.token()  # re-registering gives new client credentials, which lose the profile
    assert emulator.v2("GET", "/REF/profiles", other).json() == {"profiles": {}}


def test_date_header_and_timestamps_follow_the_admin_clock(emulator):
    target = 1_900_000_000_000
    assert emulator.admin("POST", "clock", {"setMillis": target}).status == 200
    token = emulator.token()
    response = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com", "redirectUrl": REDIRECT})
    date = email.utils.parsedate_to_datetime(response.headers["date"]).timestamp()
    assert abs(date * 1000 - target) < 5000
    assert abs(int(response.json()["notBefore"]) - target) < 5000
    emulator.advance(3600)
    assert abs(emulator.now_ms() - (target + 3_600_000)) < 5000


def test_mrss_resource_matches_by_channel_title_and_is_echoed_exactly(emulator, token):
    emulator.login(token)
    permitted = '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>ch1</title><media:rating scheme="urn:mpaa">pg</media:rating></channel></rss>'
    entity = "<rss version=\"2.0\"><channel><title>&#99;h&#x32;</title><item><title>Episode &amp; more</title></item></channel></rss>"
    decisions = emulator.v2("POST", "/REF/decisions/authorize/MockMVPD", token, json_body={"resources": [permitted, entity]}).json()["decisions"]
    assert decisions[0]["resource"] == permitted and decisions[0]["authorized"] is True
    assert decisions[1]["resource"] == entity and decisions[1]["authorized"] is False
    assert decisions[1]["error"]["details"] == CH2_DENIAL
    token_xml = base64.b64decode(decisions[0]["token"]["serializedToken"]).decode()
    assert "<resourceID>&lt;rss version=&quot;2.0&quot;" in token_xml


def test_temppass_starts_on_session_and_expires_after_180_seconds(emulator, token):
    session = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "TempPass", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    assert (session["actionName"], session["actionType"], session["reasonType"]) == ("authorize", "direct", "temporary")
    assert "code" not in session
    profile = emulator.v2("GET", "/REF/profiles/TempPass", token).json()["profiles"]["TempPass"]
    assert profile["type"] == "temporary" and profile["issuer"] == "Adobe"
    assert profile["notAfter"] - profile["notBefore"] == 180_000
    assert "TempPass" in emulator.v2("GET", "/REF/profiles", token).json()["profiles"]
    decision = emulator.v2("POST", "/REF/decisions/authorize/TempPass", token, json_body={"resources": ["ch2"]}).json()["decisions"][0]
    assert decision["authorized"] is True and decision["source"] == "temppass" and "token" in decision
    logout = emulator.v2("GET", "/REF/logout/TempPass?redirectUrl=x%3A%2F%2Fy", token).json()["logouts"]["TempPass"]
    assert (logout["actionName"], logout["actionType"]) == ("complete", "none")

    emulator.advance(181)
    expired = emulator.v2("POST", "/REF/decisions/authorize/TempPass", token, json_body={"resources": ["ch1"]})
    item = expired.json()["decisions"][0]
    assert expired.status == 200 and item["authorized"] is False
    assert item["error"]["code"] == "temporary_access_duration_limit_exceeded" and item["error"]["action"] == "authentication"
    p2 = emulator.v2("GET", "/REF/profiles/TempPass", token)
    assert p2.status == 403 and p2.json()["code"] == "temporary_access_duration_limit_exceeded"
    assert "TempPass" not in emulator.v2("GET", "/REF/profiles", token).json()["profiles"]
    # another device still has its own 180 s
    fresh = emulator.v2("POST", "/REF/sessions", token, device="device-0002", form={"mvpd": "TempPass", "domainName": "adobe.com", "redirectUrl": REDIRECT})
    assert fresh.json()["reasonType"] == "temporary"


def test_second_screen_activation_page(emulator, token):
    session = emulator.v2("POST", "/REF/sessions", token, form={}).json()
    assert (session["actionName"], session["actionType"]) == ("resume", "direct")
    assert session["missingParameters"] == ["mvpd", "domainName", "redirectUrl"]
    code = session["code"]
    status = emulator.v2("GET", f"/REF/sessions/{code}", token, device=None).json()
    assert status["missingParameters"] == ["mvpd", "domainName", "redirectUrl"]
    assert status["existingParameters"] == {"serviceProvider": "REF"}
    assert status["device"]["model"] == "PB-1" and status["device"]["type"] == "SetTopBox"

    browser = Browser(emulator.base)
    page, url = browser.go("/activate")
    form = parse_form(page.text)
    assert {"code", "mvpd"} <= set(form["fields"]) and "MockMVPD" in form["options"]["mvpd"]
    assert "TempPass" not in form["options"]["mvpd"]
    bad, _ = browser.submit(page, url, code="NOPE123", mvpd="MockMVPD")
    assert bad.status == 400 and "unknown or has expired" in bad.text
    login, login_url = browser.submit(page, url, code=code.lower(), mvpd="MockMVPD")
    assert login.status == 200 and "/mock-mvpd/MockMVPD/login" in login_url
    done, done_url = browser.submit(login, login_url, username="demo", password="demo")
    assert done.status == 200 and done_url.endswith("/activate/done")

    profiles = emulator.v2("GET", f"/REF/profiles/code/{code}", token, device=None).json()["profiles"]
    assert profiles["MockMVPD"]["type"] == "regular"
    assert "MockMVPD" in emulator.v2("GET", "/REF/profiles", token).json()["profiles"]


def test_resume_session_supplies_missing_parameters(emulator, token):
    session = emulator.v2("POST", "/REF/sessions", token, form={"domainName": "adobe.com"}).json()
    code = session["code"]
    retry = emulator.v2("POST", f"/REF/sessions/{code}", token, device=None, form={"mvpd": "MockMVPD"}).json()
    assert (retry["actionName"], retry["missingParameters"], retry["code"]) == ("retry", ["redirectUrl"], code)
    ready = emulator.v2("POST", f"/REF/sessions/{code}", token, device=None, form={"redirectUrl": REDIRECT}).json()
    assert (ready["actionName"], ready["actionType"], ready["url"]) == ("authenticate", "interactive", f"/api/v2/authenticate/REF/{code}")


def test_the_request_log_keeps_method_path_and_decoded_query_but_no_admin_call(emulator, token):
    """`GET /__admin/requests`: what clients sent outside /__admin/, oldest first, the query decoded; a reset empties it."""
    emulator.v2("GET", "/REF/configuration?profile=" + urllib.parse.quote("a b/c", safe=""), token)
    emulator.admin("GET", "clock")
    log = emulator.admin("GET", "requests").json()["requests"]
    assert log[-1] == {"method": "GET", "path": "/api/v2/REF/configuration", "query": {"profile": "a b/c"}}
    assert [r["path"] for r in log][:2] == ["/o/client/register", "/o/client/token"]
    assert not any(r["path"].startswith("/__admin/") for r in log)
    assert emulator.admin("POST", "reset").status == 200
    assert emulator.admin("GET", "requests").json() == {"requests": []}


def test_a_session_without_redirect_url_ends_the_browser_on_the_done_page(emulator, token):
    """What a second-screen TV creates (its own scheme is no page for a phone): `resume`, lacking only redirectUrl;
    the authenticate URL opened as is leads to the login, and after it to the emulator's done page."""
    session = emulator.v2("POST", "/REF/sessions", token, form={"mvpd": "MockMVPD", "domainName": "adobe.com"}).json()
    code = session["code"]
    assert (session["actionName"], session["missingParameters"]) == ("resume", ["redirectUrl"])
    browser = Browser(emulator.base)
    page, url = browser.go(f"/api/v2/authenticate/REF/{code}")
    assert page is not None and page.status == 200 and "/mock-mvpd/MockMVPD/login" in url
    done, done_url = browser.submit(page, url, username="demo", password="demo")
    assert done is not None and done.status == 200 and done_url == f"{emulator.base}/activate/done"
    profiles = emulator.v2("GET", f"/REF/profiles/code/{code}", token, device=None).json()["profiles"]
    assert profiles["MockMVPD"]["type"] == "regular"


def test_a_session_without_mvpd_is_still_refused_by_the_authenticate_page(emulator, token):
    code = emulator.v2("POST", "/REF/sessions", token, form={"domainName": "adobe.com"}).json()["code"]
    page = emulator.call("GET", f"/api/v2/authenticate/REF/{code}")
    assert page.status == 400 and page.headers["content-type"].startswith("text/html")
