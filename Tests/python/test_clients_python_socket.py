"""The Python package over the daemon's Unix socket: the blocking client answers the picker from inside its
delegate (TempPass, no web page), and an asyncio client on a second connection sees that login and its logout.
"""
import asyncio
import base64
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))

import passbridge  # noqa: E402


@pytest.fixture
def socket_path(bin_dir: pathlib.Path, tmp_path: pathlib.Path):
    emu = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    url = emu.stdout.readline().strip()
    part = lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("=")  # noqa: E731
    path = tmp_path / "pb.sock"
    daemon = subprocess.Popen([str(bin_dir / "passbridge"), "--socket", str(path), "--backend", url,
                               "--state-dir", str(tmp_path / "state"),
                               "--software-statement", ".".join([part(b"{}"), part(b'{"iss":"t"}'), part(b"s")])],
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield str(path)
    daemon.terminate()
    assert daemon.wait(timeout=15) == 0
    emu.terminate()
    emu.wait(timeout=10)


class PicksTempPass(passbridge.EntitlementDelegate):
    def __init__(self) -> None:
        self.client = None
        self.statuses = []
        self.picker = []

    def displayProviderDialog(self, mvpds):
        self.picker = [m["ID"] for m in mvpds]
        self.selection = self.client.setSelectedProvider("TempPass")  # a nested call from the callback

    def setAuthenticationStatus(self, status, errorCode):
        self.statuses.append((status, errorCode))

    def status(self, status):
        self.statuses.append(status["id"])


def test_socket_clients_share_a_login(socket_path: str) -> None:
    app = PicksTempPass()
    with passbridge.AccessEnabler.connect(socket_path, delegate=app) as ae:
        app.client = ae
        assert ae.init() == {}
        assert ae.setRequestor("REF") == {"status": 1}
        assert ae.getAuthentication() == {"status": 1, "errorCode": ""}
        assert app.picker[:2] == ["MockMVPD", "TempPass"]
        assert app.selection == {"status": 1, "errorCode": ""}  # TempPass ends the flow itself
        assert (1, "") in app.statuses and "N011" in app.statuses
        granted = ae.getAuthorization("ch2")  # TempPass permits every resource
        assert granted["resource"] == "ch2" and granted["token"]

        async def other_instance():
            async with await passbridge.AsyncAccessEnabler.connect(socket_path) as other:
                seen = other.events("setAuthenticationStatus")
                await other.setRequestor("REF")
                first = await other.checkAuthentication()
                note = await seen.next(timeout=5)
                await asyncio.to_thread(ae.logout)
                second = await other.checkAuthentication()
                return first, note, second

        first, note, second = asyncio.run(other_instance())
        assert first == {"status": 1, "errorCode": ""} and note["status"] == 1
        assert second["status"] == 0 and second["errorCode"] == passbridge.USER_NOT_AUTHENTICATED_ERROR
        with pytest.raises(passbridge.RPCError) as e:
            ae.handleExternalURL("https://example.com/not-the-redirect-url")
        assert e.value.code == -32602
