"""The canonical AccessEnabler flows through the real passbridge against the real pass-emulator, over stdio and
over the Unix socket: each response comes after the notifications of its operation, in the SDK's order
(Protocol/README.md; Adobe's "iOS/tvOS API Reference")."""
import json
import pathlib
import time
import urllib.request

import pytest

from rpc_helper import (NOT_AUTHENTICATED, NOT_AUTHORIZED, NOT_SELECTED, REDIRECT_URL, RpcError, SocketDaemon,
                        StdioDaemon, check_against_openrpc, daemon_args, follow_to_redirect_url, notifications_named)

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "openrpc.json").read_text())

MVPD_KEYS = ["ID", "displayName", "logoURL", "enablePlatformServices", "boardingStatus", "displayInPlatformPicker",
             "platformMappingId", "isTempPass", "requiresSVC"]


@pytest.fixture(params=["stdio", "socket"])
def client(request, bin_dir, emulator, tmp_path, short_tmp):
    """A connection to a fresh daemon (fresh state directory) on the emulator, over stdio or the socket.
    Afterwards, every notification and result it received must match Protocol/openrpc.json."""
    args = daemon_args(emulator.base, tmp_path / "state")
    if request.param == "stdio":
        daemon = StdioDaemon(bin_dir, *args)
        yield daemon
        assert daemon.stop() == 0
        assert check_against_openrpc(daemon.transcript, DOCUMENT) > 0
    else:
        daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *args)
        connection = daemon.client()
        yield connection
        connection.close()
        assert daemon.stop() == 0
        assert check_against_openrpc(connection.transcript, DOCUMENT) > 0


def ready(client):
    """init + setRequestor REF: setRequestorComplete(1) comes before the `{status: 1}` answer."""
    assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    notes, response = client.exchange("setRequestor", {"requestorID": "REF"})
    assert notes == [{"jsonrpc": "2.0", "method": "setRequestorComplete", "params": {"status": 1}}]
    assert response["result"] == {"status": 1}


def login(client, mvpd="MockMVPD"):
    """The login flow (sequence 2): getAuthentication → displayProviderDialog → setSelectedProvider →
    sendTrackingData(2) + navigateToUrl → the MVPD form → handleExternalURL → setAuthenticationStatus(1) + tracking."""
    start = client.mark()
    get_id = client.send("getAuthentication")
    _, dialog = client.notification("displayProviderDialog", start)
    assert [m["ID"] for m in dialog["params"]["mvpds"]] == ["MockMVPD", "TempPass", "MockSSO", "MockPicker"]
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": mvpd})
    assert notifications_named(notes) == ["sendTrackingData", "navigateToUrl"]
    assert notes[0]["params"] == {"data": [mvpd, "unknown", "restApiV2", "Linux"], "eventType": 2}
    assert response["result"] == {}
    redirect = follow_to_redirect_url(notes[1]["params"]["url"])
    assert redirect.startswith(REDIRECT_URL)
    done_at = client.mark()
    notes, response = client.exchange("handleExternalURL", {"url": redirect})
    assert notifications_named(notes) == ["setAuthenticationStatus", "sendTrackingData"]
    assert notes[0]["params"] == {"status": 1, "errorCode": ""}
    assert notes[1]["params"]["eventType"] == 0 and notes[1]["params"]["data"][:2] == ["true", mvpd]
    assert response["result"] == {"status": 1, "errorCode": ""}
    # getAuthentication is ended by the same callback: answered after it, with the same status.
    status_index, _ = client.notification("setAuthenticationStatus", done_at)
    get_index, get_response = client.response(get_id, start)
    assert get_index > status_index
    assert get_response["result"] == {"status": 1, "errorCode": ""}
    return redirect


def test_cold_start_is_not_authenticated(client):
    ready(client)
    notes, response = client.exchange("checkAuthentication")
    assert notifications_named(notes) == ["setAuthenticationStatus", "sendTrackingData", "status"]
    assert notes[0]["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert notes[1]["params"]["data"][0] == "false" and notes[1]["params"]["eventType"] == 0
    assert notes[2]["params"]["id"] == "N000" and notes[2]["params"]["level"] == "info"
    assert response["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_login_then_check_and_a_second_handle_external_url(client):
    ready(client)
    start = client.mark()
    get_id = client.send("getAuthentication")
    _, dialog = client.notification("displayProviderDialog", start)
    for mvpd in dialog["params"]["mvpds"]:
        assert list(mvpd) == MVPD_KEYS
    temp_pass = next(m for m in dialog["params"]["mvpds"] if m["ID"] == "TempPass")
    assert temp_pass["isTempPass"] is True and temp_pass["displayName"] == "Free Preview"
    client.call("setSelectedProvider", {"mvpdId": None})  # cancel this one; login() starts afresh
    client.response(get_id, start)
    redirect = login(client)
    notes, response = client.exchange("handleExternalURL", {"url": redirect})
    assert notes == [] and response["result"] == {"status": 1, "errorCode": ""}
    notes, response = client.exchange("checkAuthentication")
    assert notes[0]["params"] == {"status": 1, "errorCode": ""}
    assert response["result"] == {"status": 1, "errorCode": ""}
    notes, response = client.exchange("getSelectedProvider")
    assert notes[0]["method"] == "selectedProvider" and notes[0]["params"]["mvpd"]["ID"] == "MockMVPD"
    assert response["result"]["mvpd"]["displayName"] == "Mock Cable"


def test_authorization_issues_a_media_token_that_verifies(client, emulator):
    ready(client)
    login(client)
    notes, response = client.exchange("checkAuthorization", {"resource": "ch1"})
    assert notifications_named(notes) == ["setToken", "sendTrackingData"]
    assert notes[0]["params"]["resource"] == "ch1"
    assert notes[1]["params"]["eventType"] == 1 and notes[1]["params"]["data"][0] == "true"
    assert response["result"] == notes[0]["params"]
    check = emulator.verify_token(response["result"]["token"], "ch1")
    assert check.returncode == 0, check.stdout + check.stderr
    notes, response = client.exchange("checkPreauthorizedResources", {"resources": ["ch1", "ch2"]})
    assert notes[-1]["method"] == "preauthorizedResources" and response["result"] == notes[-1]["params"]
    assert "ch1" in response["result"]["resources"]


def test_denial_carries_the_mvpd_message(client):
    ready(client)
    login(client)
    notes, response = client.exchange("checkAuthorization", {"resource": "ch2"})
    assert notifications_named(notes) == ["tokenRequestFailed", "sendTrackingData", "status"]
    failure = {"resource": "ch2", "errorCode": NOT_AUTHORIZED, "errorDescription": 'Your subscription does not include "Channel 2".'}
    assert notes[0]["params"] == failure
    assert notes[2]["params"]["id"] == "Z100" and notes[2]["params"]["resource"] == "ch2"
    assert response["result"] == {**failure, "statuses": [notes[2]["params"]]}


def test_get_authorization_logs_in_first_then_continues(client):
    ready(client)
    start = client.mark()
    authz_id = client.send("getAuthorization", {"resource": "ch1"})
    _, dialog = client.notification("displayProviderDialog", start)
    notes, _ = client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    redirect = follow_to_redirect_url(notes[-1]["params"]["url"])
    client.call("handleExternalURL", {"url": redirect})
    authn_index, _ = client.notification("setAuthenticationStatus", start)
    token_index, token = client.notification("setToken", start)
    answer_index, answer = client.response(authz_id, start)
    assert authn_index < token_index < answer_index
    assert answer["result"] == token["params"] and token["params"]["resource"] == "ch1"


def test_cancel_at_the_picker(client):
    ready(client)
    start = client.mark()
    get_id = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": None})
    names = notifications_named(notes)
    assert names[0] == "setAuthenticationStatus" and "status" in names
    assert notes[0]["params"] == {"status": 0, "errorCode": NOT_SELECTED}
    cancelled = next(n for n in notes if n["method"] == "status")["params"]
    assert cancelled["id"] == "N005" and "details" not in cancelled, cancelled
    assert response["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    status_index, _ = client.notification("setAuthenticationStatus", start)
    get_index, get_response = client.response(get_id, start)
    assert get_index > status_index and get_response["result"] == {"status": 0, "errorCode": NOT_SELECTED}
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_temp_pass_needs_no_login_page(client):
    ready(client)
    start = client.mark()
    get_id = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, response = client.exchange("setSelectedProvider", {"mvpdId": "TempPass"})
    names = notifications_named(notes)
    assert "navigateToUrl" not in names
    assert "setAuthenticationStatus" in names and response["result"] == {"status": 1, "errorCode": ""}
    assert any(n["method"] == "status" and n["params"]["id"] == "N011" for n in notes)
    assert client.response(get_id, start)[1]["result"] == {"status": 1, "errorCode": ""}
    token = client.call("checkAuthorization", {"resource": "ch1"})
    assert token["resource"] == "ch1" and token["token"]


def test_a_redirect_whose_query_a_page_left_unescaped_completes_the_login(client):
    """The redirect URL rule ignores the query and fragment, whatever they hold (Protocol/README.md, -32602)."""
    ready(client)
    start = client.mark()
    client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, _ = client.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    redirect = follow_to_redirect_url(notes[1]["params"]["url"])
    unescaped = redirect + ("&" if "?" in redirect else "?") + "note=hello world|é%#top#2"
    notes, response = client.exchange("handleExternalURL", {"url": unescaped})
    assert response["result"] == {"status": 1, "errorCode": ""}, response
    assert client.call("checkAuthentication") == {"status": 1, "errorCode": ""}


def logout_through_page(client):
    """logout on a web-view host: navigateToUrl with the logout page, the page walked, handleExternalURL; the
    logout's own answer is that of a logout that went through."""
    start = client.mark()
    logout_id = client.send("logout")
    _, navigate = client.notification("navigateToUrl", start)
    client.call("handleExternalURL", {"url": follow_to_redirect_url(navigate["params"]["url"])})
    assert client.response(logout_id, start)[1]["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_logout_through_the_logout_page(client):
    ready(client)
    login(client)
    start = client.mark()
    logout_id = client.send("logout")
    _, navigate = client.notification("navigateToUrl", start)
    redirect = follow_to_redirect_url(navigate["params"]["url"])
    notes, response = client.exchange("handleExternalURL", {"url": redirect})
    assert notes[0]["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    status_index, _ = client.notification("setAuthenticationStatus", start)
    logout_index, logout = client.response(logout_id, start)
    assert logout_index > status_index
    assert logout["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_a_logout_the_backend_does_not_take_keeps_the_login(client, emulator):
    """Protocol/README.md, Lifecycle 4: a logout the backend does not take (unreachable, a 5xx) keeps the login,
    opens no page and fails with the reason. Before, the profile was deleted here while the backend kept it: the
    host was told the user had logged out, and the next setRequestor brought the login back."""
    ready(client)
    login(client)
    faults = [({"kind": "drop"}, "CFG404"), ({"kind": "error", "value": "internal_server_error"}, "CFG500"),
              # A 4xx the backend may take if asked again (action retry), and a refused access token: before, both
              # deleted the login, which the next setRequestor brought back.
              ({"kind": "error", "value": "network_connection_timeout"}, "CFG400"), ({"kind": "status", "value": 401}, "R401")]
    for fault, code in faults:
        assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/*", **fault}) == 201
        try:
            start = client.mark()
            result = client.call("logout")
        finally:
            urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/faults", method="DELETE"),
                                   timeout=10).close()
        reasons = result.pop("statuses")
        assert result == {"status": 0, "errorCode": "Generic Authentication Error"}, result
        assert [r["id"] for r in reasons] == [code], reasons
        assert "its login is kept" in reasons[0]["message"], reasons
        assert "navigateToUrl" not in notifications_named(client.received[start:])
        assert client.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    # A 2xx whose body is not JSON was taken: the login is deleted (no page: none was named).
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/*", "kind": "malformed", "count": 1}) == 201
    assert client.call("logout") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    # Once the backend takes it, a logout goes through its page.
    login(client)
    logout_through_page(client)
    assert client.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_metadata_after_login(client):
    ready(client)
    login(client)
    notes, response = client.exchange("getMetadata", {"opCode": "METADATA_AUTHENTICATION"})
    assert notes[0]["method"] == "setMetadataStatus" and response["result"] == notes[0]["params"]
    # The SDK's date string, and the same instant in epoch ms as `expires` (Protocol/README.md "Values").
    result = response["result"]
    assert isinstance(result["expires"], int) and result["key"] == 0
    expected = time.strftime("%Y/%m/%d %H:%M:%S GMT +0000", time.gmtime(result["expires"] // 1000))
    assert result["metadata"] == expected
    assert response["result"]["arguments"] == {"opCode": "METADATA_AUTHENTICATION"}
    source = client.call("getMetadata", {"opCode": 3, "userMetaKey": "tokenSource"})
    assert source["metadata"] == "MockMVPD" and source["key"] == 3
    zip_code = client.call("getMetadata", {"opCode": "METADATA_USER_META", "userMetaKey": "zip"})
    assert zip_code["encrypted"] is True


def test_metadata_after_a_failed_set_requestor_says_why_it_is_null(client):
    """From a new-user pass: after setRequestor of an unknown requestor, getMetadata answered `metadata: null` and
    nothing else, where checkAuthentication and getAuthorization say CFG400 (Protocol/README.md, "Failure reasons")."""
    assert client.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert client.call("setRequestor", {"requestorID": "REFF"})["status"] == 0
    notes, response = client.exchange("getMetadata", {"opCode": "METADATA_AUTHENTICATION"})
    result = response["result"]
    assert result["metadata"] is None and [s["id"] for s in result["statuses"]] == ["CFG400"], result
    assert "statuses" not in notes[0]["params"], "the notification stays the SDK's"
    # The device id needs no requestor: nothing failed.
    assert "statuses" not in client.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})


def error_of(client, method, params) -> dict:
    """The error object `method` is refused with."""
    with pytest.raises(RpcError) as error:
        client.call(method, params)
    return error.value.error


def test_errors(client):
    with pytest.raises(RpcError) as error:
        client.call("checkAuthentication")
    assert error.value.code == -32002
    with pytest.raises(RpcError) as error:
        client.call("setRequestor", {"requestorID": 7})
    assert error.value.code == -32602 and "requestorID" in error.value.error["message"]
    with pytest.raises(RpcError) as error:
        client.call("getAuthentication", {"filter": "MockMVPD"})
    # Malformed with or without a requestor: -32602 first (it was -32002 until two new users found it misleading).
    assert error.value.code == -32602 and "filter" in error.value.error["message"]
    # Wrong values too, whatever the value is checked against (a breaking pass found these two -32002 until
    # setRequestor: the redirect URL of init, an empty resource).
    for method, params in [("getMetadata", {"opCode": "METADATA_AUTH"}), ("checkPreauthorizedResources", {"resources": "ch1"}),
                           ("handleExternalURL", {"url": ""}), ("handleExternalURL", {"url": "https://example.com/elsewhere"}),
                           ("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": ""})]:
        with pytest.raises(RpcError) as error:
            client.call(method, params)
        assert error.value.code == -32602, (method, params)
    with pytest.raises(RpcError) as error:
        client.call("getMetadata", {"opCode": "METADATA_AUTHENTICATION"})
    assert error.value.code == -32002
    ready(client)
    with pytest.raises(RpcError) as error:
        client.call("getAuthentication", {"filter": "MockMVPD"})
    assert error.value.code == -32602 and "filter" in error.value.error["message"]
    for method, params, name in [("handleExternalURL", {"url": "https://example.com/elsewhere"}, "url"),
                                 ("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": ""}, "resource")]:
        with pytest.raises(RpcError) as error:
            client.call(method, params)
        assert error.value.code == -32602 and name in error.value.error["message"], (method, params)
    # The refusal names the URL it wanted (a new user could not tell what "the registered redirect URL" was).
    assert error_of(client, "handleExternalURL", {"url": "https://example.com/elsewhere"})["data"]["reason"] == (
        f"is not the redirect URL, {REDIRECT_URL} (init's redirectUrl, else --redirect-url; scheme, host and path must match)")
    with pytest.raises(RpcError) as error:
        client.call("setToken", {"token": "x", "resource": "ch1"})
    assert error.value.code == -32601
    start = client.mark()
    client.send_raw('{"jsonrpc": "2.0", "method": "checkAuthentication", "id": 99')
    _, parse_error = client.wait_for(lambda m: "error" in m, start)
    assert parse_error["error"]["code"] == -32700 and parse_error["id"] is None
