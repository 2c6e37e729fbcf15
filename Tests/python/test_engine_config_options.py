"""The requestor's configuration as the SDK reference describes it, through the real daemon on the real emulator:
a requestor without MVPDs ends the login with "Provider not Available Error" (Protocol/README.md "Values")."""
import json

import pytest

from emulator_fixtures import EmulatorProcess
from rpc_helper import REDIRECT_URL, SocketDaemon, daemon_args, notifications_named

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


# --------------------------------------------------------------------------------------------- no providers

def test_a_requestor_without_mvpds_ends_the_login_with_provider_not_available(configured):
    assert configured.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert configured.call("setRequestor", {"requestorID": "EMPTY"}) == {"status": 1}
    notes, response = configured.exchange("getAuthentication")
    assert response["result"] == {"status": 0, "errorCode": "Provider not Available Error"}
    assert "displayProviderDialog" not in notifications_named(notes)
    ended = [n for n in notes if n["method"] == "setAuthenticationStatus"]
    assert [n["params"] for n in ended] == [{"status": 0, "errorCode": "Provider not Available Error"}]
