"""The second screen as a production TV needs it (Protocol/README.md, "Second screen"): the REGCODE status
carries the direct authenticate URL (`authenticateUrl`, REST API V2's "Perform authentication in user agent"),
the configured activation page only when there is one, and `url`, the one to show; the phone's browser ends on a
web page, never on the TV app's `adobepass://` scheme; and while the TV waits, REG100 counts down.

Each case drives the real daemon over real pipes against the emulator; the "phone" is a plain HTTP client that
follows redirects only while they stay on http(s) (`emulator_fixtures.Browser`)."""
import time
import urllib.parse

from emulator_fixtures import Browser
from rpc_helper import SocketDaemon, StdioDaemon, daemon_args
from test_engine_outcome_reasons import start_second_screen_login as start_login


def second_screen(bin_dir, emulator, tmp_path, *extra) -> StdioDaemon:
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state", *extra))
    assert daemon.call("init", {"webView": False}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    return daemon


def phone_logs_in(emulator, url: str) -> tuple[str, str]:
    """Opens `url` only, signs in as demo/demo on the MVPD's form: (the page it ends on, its text)."""
    phone = Browser(emulator.base)
    page, at = phone.go(url)
    assert page is not None and page.status == 200, (at, page)
    end, final = phone.submit(page, at, username="demo", password="demo")
    assert all(urllib.parse.urlsplit(u).scheme in ("http", "https") for u in phone.visited), phone.visited
    assert end is not None, f"the phone was sent to {final}, which a browser cannot open"
    return final, end.text


def test_a_phone_that_opens_only_the_authenticate_url_logs_the_tv_in(bin_dir, emulator, tmp_path):
    daemon = second_screen(bin_dir, emulator, tmp_path)
    start, login, regcode = start_login(daemon)
    code = regcode["code"]
    assert regcode["authenticateUrl"] == f"{emulator.base}/api/v2/authenticate/REF/{urllib.parse.quote(code, safe='')}"
    # No activation page configured: nothing invented, and the URL to show is the authenticate URL.
    assert "activationUrl" not in regcode and regcode["url"] == regcode["authenticateUrl"]
    assert isinstance(regcode["notAfter"], int) and regcode["notAfter"] > time.time() * 1000

    final, text = phone_logs_in(emulator, regcode["authenticateUrl"])
    # Item 3: the phone ends on the emulator's own web page, not on the app's custom scheme.
    assert final == f"{emulator.base}/activate/done" and "You are signed in" in text
    _, answer = daemon.response(login, start, timeout=30)
    assert answer["result"] == {"status": 1, "errorCode": ""}
    _, status = daemon.notification("setAuthenticationStatus", start)
    assert status["params"] == {"status": 1, "errorCode": ""}
    assert daemon.stop() == 0


def test_a_configured_activation_page_is_shown_with_the_code(bin_dir, emulator, tmp_path):
    activation = f"{emulator.base}/activate"
    daemon = second_screen(bin_dir, emulator, tmp_path, "--activation-url", activation)
    start, login, regcode = start_login(daemon)
    code = regcode["code"]
    assert regcode["activationUrl"] == activation
    assert regcode["url"] == f"{activation}?code={code}"
    assert regcode["authenticateUrl"] == f"{emulator.base}/api/v2/authenticate/REF/{code}"
    # The emulator's page takes the code from its query: the phone only presses Continue, then signs in.
    phone = Browser(emulator.base)
    form, at = phone.go(regcode["url"])
    assert f'value="{code}"' in form.text
    login_page, at = phone.submit(form, at)
    end, final = phone.submit(login_page, at, username="demo", password="demo")
    assert end is not None and final == f"{emulator.base}/activate/done", final
    _, answer = daemon.response(login, start, timeout=30)
    assert answer["result"] == {"status": 1, "errorCode": ""}
    assert daemon.stop() == 0


def test_a_web_redirect_url_is_where_the_phone_ends(bin_dir, emulator, tmp_path):
    """A second-screen host whose redirect URL is a web page keeps it: the session is made with it."""
    own = f"{emulator.base}/activate/done?from=tv"
    daemon = second_screen(bin_dir, emulator, tmp_path, "--redirect-url", own)
    start, login, regcode = start_login(daemon)
    final, _ = phone_logs_in(emulator, regcode["authenticateUrl"])
    assert final == own
    _, answer = daemon.response(login, start, timeout=30)
    assert answer["result"] == {"status": 1, "errorCode": ""}
    assert daemon.stop() == 0


def test_the_tv_counts_down_while_it_waits(bin_dir, emulator, tmp_path):
    """REG100 comes on a poll once 30 s have passed by the daemon's clock, which follows the backend's: the
    emulator's clock is moved 40 s ahead instead of waiting."""
    daemon = second_screen(bin_dir, emulator, tmp_path)
    start, login, regcode = start_login(daemon)
    assert emulator.admin("clock", {"advanceSeconds": 40}) == 200
    _, countdown = daemon.wait_for(lambda m: m.get("method") == "status" and m["params"]["id"] == "REG100", start, timeout=30)
    params = countdown["params"]
    assert params["level"] == "info" and params["message"]
    assert params["code"] == regcode["code"] and params["notAfter"] == regcode["notAfter"]
    assert isinstance(params["secondsLeft"], int)
    assert 1800 - 40 - 20 <= params["secondsLeft"] <= 1800 - 40, params
    assert set(params) == {"id", "errorId", "level", "message", "code", "notAfter", "secondsLeft"}
    # Cancelled: the countdown is information, never a reason of the outcome.
    notes, response = daemon.exchange("setSelectedProvider", {"mvpdId": None})
    _, answer = daemon.response(login, start)
    assert answer["result"]["errorCode"] == "Provider not Selected Error"
    assert "REG100" not in [s["id"] for s in answer["result"].get("statuses", [])]
    assert daemon.stop() == 0


def test_two_second_screens_of_one_device_activated_one_after_the_other_both_log_in(bin_dir, emulator, tmp_path, short_tmp):
    """Two instances of one daemon (one device) each show a code; both codes are activated before either TV
    polls again: both logins end logged in (the later login replaced the device's profile, which the first code
    then reads)."""
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    first, second = daemon.client(), daemon.client()
    for client in (first, second):
        assert client.call("init", {"webView": False}) == {}
        assert client.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    logins = [start_login(client) for client in (first, second)]
    for _, _, regcode in logins:
        phone_logs_in(emulator, regcode["authenticateUrl"])
    for client, (start, login, _) in zip((first, second), logins):
        assert client.response(login, start, timeout=30)[1]["result"] == {"status": 1, "errorCode": ""}
    assert daemon.stop() == 0
