"""setOptions and the requestor's configuration as the SDK reference describes them, through the real daemon on the
real emulator: `applicationProfile` goes out as the configuration request's `profile` (checked in the emulator's
request log, `GET /__admin/requests`), a requestor without MVPDs ends the login with "Provider not Available
Error", and setOptions refuses a key it does not know as every other method does (Protocol/README.md "Values", "Errors")."""
import json
import urllib.request

import pytest

from emulator_fixtures import EmulatorProcess
from rpc_helper import REDIRECT_URL, RpcError, SocketDaemon, daemon_args, notifications_named

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
