"""pass-emulator for a real phone: `--host` picks the address it listens on (loopback unless told), `--public-url` the
base of every URL its pages and answers hand out. The phone is browser.py reaching this machine by its network
address only; the TV is the real daemon over pipes.
"""
import fcntl
import pathlib
import socket
import struct
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Iterator, List, Optional, Tuple

import pytest

from rpc_helper import StdioDaemon, daemon_args

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python" / "examples"))

from browser import Browser  # noqa: E402


def interface_addresses() -> List[str]:
    """This machine's IPv4 addresses other than loopback (SIOCGIFADDR on each interface)."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                answer = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue  # no IPv4 address
            address = socket.inet_ntoa(answer[20:24])
            if not address.startswith("127."):
                found.append(address)
    return found


@pytest.fixture
def network_address() -> str:
    addresses = interface_addresses()
    if not addresses:
        pytest.skip("this machine has no IPv4 address but loopback: nothing else to reach the emulator at")
    return addresses[0]


class Started:
    def __init__(self, bin_dir: pathlib.Path, *args: str, lines: int) -> None:
        self.process = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        self.lines = [self.process.stdout.readline().strip() for _ in range(lines)]

    def stop(self) -> None:
        self.process.terminate()
        assert self.process.wait(timeout=10) == 0


@pytest.fixture
def emulator_with(bin_dir: pathlib.Path) -> Iterator:
    started: List[Started] = []

    def start(*args: str, lines: int = 1) -> Started:
        started.append(Started(bin_dir, *args, lines=lines))
        return started[-1]

    yield start
    for emulator in started:
        emulator.stop()


def port_of(url: str) -> int:
    port = urllib.parse.urlsplit(url).port
    assert port is not None, url
    return port


class RecordingBrowser(Browser):
    """browser.py that remembers every URL it loads."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: List[str] = []

    def _fetch(self, url: str, data: Optional[bytes] = None) -> Tuple[int, Optional[str], str]:
        self.loaded.append(url)
        return super()._fetch(url, data)


def registration_code(daemon: StdioDaemon) -> Tuple[int, dict]:
    """A second-screen login up to its REGCODE status: (getAuthentication's request id, the status params)."""
    assert daemon.call("init", {"webView": False}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog")
    since = daemon.mark()
    daemon.send("setSelectedProvider", {"mvpdId": "MockMVPD"})
    _, status = daemon.wait_for(lambda m: m.get("method") == "status" and m["params"].get("id") == "REGCODE", since)
    assert login is not None
    return login, status["params"]


def test_by_default_it_listens_on_loopback_only(emulator_with, network_address):
    emulator = emulator_with()
    local = emulator.lines[0]
    assert local.startswith("http://127.0.0.1:")
    assert urllib.request.urlopen(local + "/activate", timeout=10).status == 200
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((network_address, port_of(local)), timeout=10).close()


def test_on_every_interface_a_phone_logs_in_through_the_network_address_alone(emulator_with, bin_dir, tmp_path):
    emulator = emulator_with("--host", "0.0.0.0", lines=2)
    local, public = emulator.lines
    assert local.startswith("http://127.0.0.1:")
    public_host = urllib.parse.urlsplit(public).hostname
    assert public_host in interface_addresses() and port_of(public) == port_of(local), (local, public)

    daemon = StdioDaemon(bin_dir, *daemon_args(local, tmp_path / "state", "--activation-url", public + "/activate"))
    login, status = registration_code(daemon)
    assert status["activationUrl"] == public + "/activate" and status["url"] == f"{public}/activate?code={status['code']}"
    phone = RecordingBrowser()
    fill = {"code": status["code"], "mvpd": "MockMVPD", "username": "demo", "password": "demo"}.get
    phone.run(status["url"], fill)
    _, answer = daemon.response(login)
    assert answer["result"]["status"] == 1, answer
    assert len(phone.loaded) >= 4 and all(url.startswith(public + "/") for url in phone.loaded), phone.loaded
    assert daemon.stop() == 0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def location(url: str, form: Optional[dict] = None) -> str:
    """The Location of the redirect `url` answers (a POST of `form` when given)."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        urllib.request.build_opener(NoRedirect).open(urllib.request.Request(url, data=data), timeout=10)
    except urllib.error.HTTPError as redirect:
        assert 300 <= redirect.code < 400, redirect.code
        return redirect.headers["Location"]
    raise AssertionError(f"{url} did not redirect")


def test_the_public_url_is_the_base_of_the_urls_its_pages_hand_out(emulator_with, bin_dir, tmp_path):
    emulator = emulator_with("--public-url", "http://tv-box.example:8080/", lines=2)
    local, public = emulator.lines
    assert local.startswith("http://127.0.0.1:") and public == "http://tv-box.example:8080"
    daemon = StdioDaemon(bin_dir, *daemon_args(local, tmp_path / "state"))
    _, status = registration_code(daemon)
    authenticate = location(local + "/activate", {"requestor": "REF", "code": status["code"], "mvpd": ""})
    assert authenticate == f"{public}/api/v2/authenticate/REF/{status['code']}"
    login_page = location(local + urllib.parse.urlsplit(authenticate).path)
    assert login_page.startswith(f"{public}/mock-mvpd/MockMVPD/login?"), login_page
    assert daemon.stop() == 0
