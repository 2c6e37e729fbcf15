"""The Safari View Controller as the app names it (Protocol/README.md, "Values", `handleSVC`): with the default
emulator, whose configuration says `requiresSVC` of no MVPD, `init {svcMVPDs, svcRedirectUrl}` decides which pages
come with `useSVC: true` and end on the app's own scheme, which handleExternalURL then accepts; the other MVPDs'
pages keep the redirect URL. The daemon's `--svc-mvpds` / `--svc-redirect-url` say the same for a box. The real
daemon over pipes and over a socket, against the emulator."""
import pytest

from rpc_helper import REDIRECT_URL, StdioDaemon, daemon_args, follow_to_redirect_url, pipes_or_socket

SVC = "myapp://svc"


@pytest.fixture(params=["pipes", "socket"])
def connection(request, bin_dir, emulator, tmp_path):
    client, finish = pipes_or_socket(request, bin_dir, emulator, tmp_path)
    yield client
    assert finish()


def login_page(client, mvpd: str) -> tuple[int, int, dict]:
    """getAuthentication up to `mvpd`'s login page: (its id, the position before it, navigateToUrl's params)."""
    start = client.mark()
    login = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    notes, _ = client.exchange("setSelectedProvider", {"mvpdId": mvpd})
    page = next(n["params"] for n in notes if n["method"] == "navigateToUrl")
    return login, start, page


def log_in_and_out(client, mvpd: str) -> tuple[dict, str, dict, str]:
    """A login through `mvpd`'s page and a logout through its logout page: each page's params and the URL its
    browser ends at, each handed back to handleExternalURL."""
    login, start, page = login_page(client, mvpd)
    reached = follow_to_redirect_url(page["url"])
    assert client.call("handleExternalURL", {"url": reached})["status"] == 1
    assert client.response(login, start)[1]["result"]["status"] == 1
    start = client.mark()
    logout = client.send("logout")
    _, out = client.notification("navigateToUrl", start)
    left = follow_to_redirect_url(out["params"]["url"])
    assert client.call("handleExternalURL", {"url": left})["status"] == 0
    assert client.response(logout, start)[1]["result"]["status"] == 0
    return page, reached, out["params"], left


def test_the_apps_svc_mvpds_open_in_the_view_controller_and_end_on_its_scheme(connection):
    assert connection.call("init", {"redirectUrl": REDIRECT_URL, "svcMVPDs": ["MockMVPD"], "svcRedirectUrl": SVC}) == {}
    assert connection.call("setOptions", {"handleSVC": True}) == {}
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    page, reached, out, left = log_in_and_out(connection, "MockMVPD")
    assert page["useSVC"] is True and reached.startswith(SVC)
    assert out["useSVC"] is True and left.startswith(SVC)
    # Another MVPD: no view controller, the redirect URL.
    page, reached, out, left = log_in_and_out(connection, "MockPicker")
    assert page.get("useSVC", False) is False and reached.startswith(REDIRECT_URL)
    assert out.get("useSVC", False) is False and left.startswith(REDIRECT_URL)
    # TempPass logs in without a page at all.
    start = connection.mark()
    temp = connection.send("getAuthentication")
    connection.notification("displayProviderDialog", start)
    connection.call("setSelectedProvider", {"mvpdId": "TempPass"})
    assert connection.response(temp, start)[1]["result"]["status"] == 1
    assert "navigateToUrl" not in [m.get("method") for m in connection.received[start:]]


def test_without_handle_svc_the_listed_mvpd_keeps_the_redirect_url(connection):
    assert connection.call("init", {"redirectUrl": REDIRECT_URL, "svcMVPDs": ["MockMVPD"], "svcRedirectUrl": SVC}) == {}
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    page, reached, out, left = log_in_and_out(connection, "MockMVPD")
    assert page.get("useSVC", False) is False and reached.startswith(REDIRECT_URL)


def test_a_redirect_url_with_a_space_or_a_control_character_is_refused_at_init(connection):
    for name in ("redirectUrl", "svcRedirectUrl"):
        for value in ("myapp://svc x", "myapp://s\u0007vc", "myapp://svc\u0000x", "myapp:/no-host"):
            _, refused = connection.exchange("init", {name: value})
            assert refused["error"]["code"] == -32602 and refused["error"]["data"]["param"] == name, (name, value)
    assert connection.call("init", {"svcRedirectUrl": SVC}) == {}


def test_a_box_names_them_on_the_command_line(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", "--svc-mvpds", "MockMVPD",
                                               "--svc-redirect-url", SVC))
    assert daemon.call("setOptions", {"handleSVC": True}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    page, reached, out, left = log_in_and_out(daemon, "MockMVPD")
    assert page["useSVC"] is True and reached.startswith(SVC) and left.startswith(SVC)
    # A redirect URL of neither kind is still refused.
    _, refused = daemon.exchange("handleExternalURL", {"url": "otherapp://done"})
    assert refused["error"]["code"] == -32602
    assert daemon.stop() == 0
