"""setOptions and the requestor's configuration as the SDK reference describes them, through the real daemon on the
real emulator: `applicationProfile` goes out as the configuration request's `profile` (checked in the emulator's
request log, `GET /__admin/requests`), `handleSVC` gives `useSVC: true` only to the pages of an MVPD whose
configuration has `requiresSVC`, a requestor without MVPDs ends the login with "Provider not Available Error", and
setOptions refuses a key it does not know as every other method does (Protocol/README.md "Values", "Errors")."""
import json
import urllib.request

import pytest

from emulator_fixtures import EmulatorProcess
from rpc_helper import (NOT_AUTHENTICATED, REDIRECT_URL, RpcError, SocketDaemon, daemon_args, follow_to_redirect_url,
                        notifications_named)

# REF: one MVPD whose pages need the Safari View Controller and one whose pages do not; EMPTY: no MVPD at all.
CONFIG = {
    "serviceProviders": [
        {"id": "REF", "name": "Reference Programmer",
         "mvpds": [{"id": "SVCCable", "displayName": "Cable that needs SVC", "requiresSVC": True},
                   {"id": "PlainCable", "displayName": "Cable in any web view"}]},
        {"id": "EMPTY", "name": "No MVPDs", "mvpds": []},
    ],
    "users": [{"username": "demo", "password": "demo", "mvpds": ["SVCCable", "PlainCable"], "permitUnlisted": True}],
}


@pytest.fixture()
def configured(bin_dir, tmp_path, short_tmp):
    """A daemon on a Unix socket, backed by an emulator running CONFIG; yields a connected client."""
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    emulator = EmulatorProcess(bin_dir, "--config", str(tmp_path / "config.json"))
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    client = daemon.client()
    yield client
    client.close()
    assert daemon.stop() == 0
    assert emulator.stop() == 0


@pytest.fixture()
def app(daemon):
    app = daemon.client()
    yield app
    app.close()


def received_by(emulator) -> list[dict]:
    """What the emulator received outside /__admin/, oldest first: [{method, path, query}]."""
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return json.loads(response.read())["requests"]


def configuration_requests(emulator) -> list[dict]:
    return [r for r in received_by(emulator) if r["method"] == "GET" and r["path"] == "/api/v2/REF/configuration"]


# ------------------------------------------------------------------------------------------- applicationProfile

def test_application_profile_is_sent_as_the_configuration_requests_profile(app, emulator):
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert app.call("setOptions", {"applicationProfile": "living room/TV & co"}) == {}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    # The emulator decodes the query: the value arrives whole, whatever it had to be percent-encoded for.
    assert [r["query"] for r in configuration_requests(emulator)] == [{"profile": "living room/TV & co"}]


def test_without_application_profile_the_configuration_request_has_no_query(app, emulator):
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert app.call("setOptions", {"visitorID": "ECID-1"}) == {}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert app.call("setOptions", {"applicationProfile": ""}) == {}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert [r["query"] for r in configuration_requests(emulator)] == [{}, {}]


# ------------------------------------------------------------------------------------------------ handleSVC

def login_and_logout_pages(client, mvpd: str) -> list[dict]:
    """Logs in with `mvpd` and logs out again, following both pages; returns the two navigateToUrl params."""
    start = client.mark()
    get_id = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": mvpd})
    assert response["result"] == {}
    login = notes[-1]
    assert login["method"] == "navigateToUrl"
    assert client.call("handleExternalURL", {"url": follow_to_redirect_url(login["params"]["url"])}) == {"status": 1, "errorCode": ""}
    assert client.response(get_id, start)[1]["result"] == {"status": 1, "errorCode": ""}
    start = client.mark()
    logout_id = client.send("logout")
    _, logout = client.notification("navigateToUrl", start)
    client.call("handleExternalURL", {"url": follow_to_redirect_url(logout["params"]["url"])})
    assert client.response(logout_id, start)[1]["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    return [login["params"], logout["params"]]


def test_handle_svc_gives_use_svc_only_to_the_mvpd_that_requires_it(configured):
    assert configured.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert configured.call("setOptions", {"handleSVC": True}) == {}
    assert configured.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert [page.get("useSVC") for page in login_and_logout_pages(configured, "SVCCable")] == [True, True]
    # The other MVPD's pages are plain navigateToUrl: no useSVC member (false).
    assert [page.get("useSVC", False) for page in login_and_logout_pages(configured, "PlainCable")] == [False, False]


def test_the_mvpd_objects_say_which_mvpd_requires_svc(configured):
    assert configured.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert configured.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = configured.mark()
    get_id = configured.send("getAuthentication")
    _, dialog = configured.notification("displayProviderDialog", start)
    assert {m["ID"]: m["requiresSVC"] for m in dialog["params"]["mvpds"]} == {"SVCCable": True, "PlainCable": False}
    configured.call("setSelectedProvider", {"mvpdId": None})
    configured.response(get_id, start)


def test_without_handle_svc_no_page_has_use_svc(configured):
    assert configured.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert configured.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert [page.get("useSVC", False) for page in login_and_logout_pages(configured, "SVCCable")] == [False, False]


# --------------------------------------------------------------------------------------------- no providers

def test_a_requestor_without_mvpds_ends_the_login_with_provider_not_available(configured):
    assert configured.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert configured.call("setRequestor", {"requestorID": "EMPTY"}) == {"status": 1}
    notes, response = configured.exchange("getAuthentication")
    assert response["result"] == {"status": 0, "errorCode": "Provider not Available Error"}
    assert "displayProviderDialog" not in notifications_named(notes)
    ended = [n for n in notes if n["method"] == "setAuthenticationStatus"]
    assert [n["params"] for n in ended] == [{"status": 0, "errorCode": "Provider not Available Error"}]


# ------------------------------------------------------------------------------------------ setOptions keys

@pytest.mark.parametrize("key, closest", [("handleSvc", "handleSVC"), ("applicationprofile", "applicationProfile"),
                                          ("visitorId", "visitorID"), ("deviceInfo", "device_info")])
def test_set_options_refuses_an_unknown_key_naming_the_closest(app, emulator, key, closest):
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    with pytest.raises(RpcError) as refused:
        app.call("setOptions", {key: "x", "visitorID": "ECID-2"})
    error = refused.value.error
    assert error["code"] == -32602
    assert error["message"] == f"Invalid params: '{key}' is not a param of setOptions; did you mean '{closest}'?"
    assert error["data"] == {"param": key, "reason": f"is not a param of setOptions; did you mean '{closest}'?",
                             "closest": closest}
    # The connection goes on: the next setOptions applies.
    assert app.call("setOptions", {"applicationProfile": "kept"}) == {}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert [r["query"] for r in configuration_requests(emulator)] == [{"profile": "kept"}]


def test_an_unknown_param_name_of_a_megabyte_is_refused_without_a_closest_name(app):
    """A name no typo makes (over 256 bytes, the rule for method names too) gets no closest name, and the message
    quotes its first 64 characters: looking for the closest name to a megabyte held the loop, and every connection
    on it, for seconds (the bad-input pass: 21 s for a 3 MB name). The connection goes on."""
    name = "q" * 1_000_000
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {name: "REF"})
    error = refused.value.error
    takes = "is not a param of setRequestor (it takes publicKey, requestorID, secret, serviceProviders, signedRequestorID)"
    assert error["code"] == -32602
    assert error["message"] == "Invalid params: '" + "q" * 64 + "…' " + takes
    assert error["data"] == {"param": name, "reason": takes}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}


def test_an_unknown_param_name_of_100_bytes_is_quoted_by_its_first_64_characters(app):
    """The message quotes a name of 65-256 bytes as every other -32602 does (its first 64 characters and "…"), while
    data.param keeps the name whole; one near a param (a typo: at most a third of its characters off) gets it as
    `closest`. Until a new-user pass, every name got the closest param however far ('foo' → 'secret')."""
    name = "q" * 100
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {name: "REF"})
    error = refused.value.error
    assert error["message"].startswith(f"Invalid params: '{'q' * 64}…' is not a param of setRequestor (it takes ")
    assert error["data"]["param"] == name and "closest" not in error["data"]
    typo = "requestorIdentifierX" * 4 + "requestorID"  # 91 bytes, 80 characters off: no typo
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {"requestoorID": "REF"})
    assert refused.value.error["data"]["closest"] == "requestorID"
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {typo: "REF"})
    assert "closest" not in refused.value.error["data"]
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}


def test_an_unknown_param_name_of_one_huge_character_is_quoted_by_at_most_256_bytes(app):
    """`a` and 5,000 combining accents is one character: the message quoted it whole (10 KB); it now quotes at most
    256 bytes of it and "…", while data.param keeps the name whole."""
    name = "a" + "\u0301" * 5000
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {name: "REF"})
    error = refused.value.error
    quoted = error["message"].split("'")[1]
    assert quoted == "a" + "\u0301" * 127 + "…", len(quoted.encode())
    assert error["data"]["param"] == name
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}


def test_a_param_name_canonically_equivalent_to_a_known_one_is_not_that_name(app):
    """Param names are compared by their characters (Protocol/README.md "What counts as JSON"): with a Kelvin sign
    (U+212A) in place of its K, "publicKey" is another name, refused with -32602, where it used to be taken for
    publicKey and then ignored."""
    name = "public\u212aey"
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {"requestorID": "REF", name: "x"})
    error = refused.value.error
    assert error["code"] == -32602
    assert error["data"] == {"param": name, "reason": "is not a param of setRequestor; did you mean 'publicKey'?",
                             "closest": "publicKey"}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}


@pytest.mark.parametrize("method, params, name", [
    ("init", {"subjectToken": "abc\r\nX-Injected: yes"}, "subjectToken"),
    ("init", {"serviceToken": "s\u0000tail"}, "serviceToken"),
    ("setOptions", {"visitorID": "v\nX-Injected: yes"}, "visitorID"),
    ("setOptions", {"device_info": "d\rX"}, "device_info"),
])
def test_a_value_sent_as_a_header_refuses_control_characters(app, method, params, name):
    """A token or option the daemon sends to Adobe as a header value cannot add header lines of its own: -32602
    naming it, and the connection goes on."""
    mark = app.mark()
    request = app.send(method, params)
    _, answer = app.response(request, mark)
    assert answer["error"]["code"] == -32602 and answer["error"]["data"]["param"] == name, answer
    assert "control characters" in answer["error"]["message"]
    assert app.call("setOptions", {"visitorID": "visitor-1"}) == {}
