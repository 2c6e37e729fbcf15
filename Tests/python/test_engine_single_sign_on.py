"""Single sign-on by platform identity and by service token over real daemons and the emulator (Protocol/README.md,
"Single sign-on by platform identity and by service token"). Each app is its own daemon with its own state
directory — its own DCR client and device, so nothing is shared through the store: app 1 logs in on the MVPD's
page with `init {subjectToken}` (or `serviceToken`); app 2, given the same token, is logged in at once
(checkAuthentication or getAuthentication with no login page), its getMetadata tokenSource says which kind, and
its decisions go through on that login. A different token gives nothing."""
import base64
import hashlib
import json
import pathlib

import pytest

from rpc_helper import NOT_AUTHENTICATED, REDIRECT_URL, SocketDaemon, check_against_openrpc, daemon_args, web_login

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "openrpc.json").read_text())


def jwt(**claims) -> str:
    """An unsigned-looking three-part JWS with these claims (the emulator reads `iss` and `sub`, as the platform's
    or the programmer's identity service would have signed them)."""
    part = lambda value: base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2lnbmF0dXJl"


@pytest.fixture
def app(bin_dir, emulator, tmp_path, short_tmp):
    """Starts app number n: a daemon of its own on the emulator, a connection, `init` with `params`, setRequestor REF."""
    started = []

    def start(n: int, **params):
        daemon = SocketDaemon(bin_dir, short_tmp / f"app{n}.sock", *daemon_args(emulator.base, tmp_path / f"state{n}"))
        client = daemon.client()
        started.append((daemon, client))
        assert client.call("init", {"redirectUrl": REDIRECT_URL, **params}) == {}
        assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        return client

    yield start
    for daemon, client in started:
        client.close()
        assert check_against_openrpc(client.transcript, DOCUMENT) > 0
        assert daemon.stop() == 0


def login_on_the_page(client):
    web_login(client)


def token_source(client) -> str:
    return client.call("getMetadata", {"opCode": "METADATA_USER_META", "userMetaKey": "tokenSource"})["metadata"]


def test_a_platform_identity_logs_in_another_app_at_check_authentication(app):
    subject = jwt(iss="platform", sub="5fcc3087-device-user", aud="adobe")
    first = app(1, subjectToken=subject)
    login_on_the_page(first)
    assert token_source(first) == "MockMVPD"

    second = app(2, subjectToken=subject)
    notes, response = second.exchange("checkAuthentication")
    assert response["result"] == {"status": 1, "errorCode": ""}
    assert [n["method"] for n in notes] == ["setAuthenticationStatus", "sendTrackingData"]
    # As for any stored login (the fourth value, "cached", true); the GUID is the MD5 of the user's userID.
    assert notes[1]["params"] == {"data": ["true", "MockMVPD", hashlib.md5(b"demo-user-0001").hexdigest(), "true", "unknown", "restApiV2",
                                           "Linux"], "eventType": 0}
    assert token_source(second) == "platformSSO"
    # Its decisions go through on that login: the demo user's ch1, not ch2.
    assert "token" in second.call("checkAuthorization", {"resource": "ch1"})
    assert second.call("checkAuthorization", {"resource": "ch2"})["errorCode"] == "User not Authorized Error"
    assert second.call("checkPreauthorizedResources", {"resources": ["ch2", "ch1"], "cache": False}) == {"resources": ["ch1"]}

    # Another platform identity is nobody's login.
    third = app(3, subjectToken=jwt(iss="platform", sub="someone-else"))
    assert third.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_a_service_token_logs_in_another_device_at_get_authentication_without_a_page(app):
    service = jwt(iss="programmer-idp", sub="account-42", aud="Adobe")
    first = app(1, serviceToken=service)
    login_on_the_page(first)

    second = app(2, serviceToken=service)
    notes, response = second.exchange("getAuthentication")
    assert response["result"] == {"status": 1, "errorCode": ""}
    assert [n["method"] for n in notes] == ["setAuthenticationStatus", "sendTrackingData"]
    assert token_source(second) == "serviceTokenSSO"
    assert "token" in second.call("getAuthorization", {"resource": "ch1"})
    # The user metadata comes with it.
    metadata = second.call("getMetadata", {"opCode": "METADATA_USER_META"})["metadata"]
    assert metadata["data"]["userID"] == "demo-user-0001" and metadata["data"]["mvpd"] == "MockMVPD"

    # A platform identity is not a service token: the same claims under the other header give nothing.
    third = app(3, subjectToken=service)
    assert third.call("checkAuthentication")["status"] == 0


def test_empty_tokens_are_refused(daemon):
    client = daemon.client()
    for name in ("subjectToken", "serviceToken"):
        _, response = client.exchange("init", {name: ""})
        assert response["error"]["code"] == -32602 and response["error"]["data"] == {"param": name, "reason": "must not be empty"}
    _, response = client.exchange("init", {"subjectToken": 5})
    assert response["error"]["data"]["param"] == "subjectToken"
    assert client.call("init", {}) == {}
    client.close()
