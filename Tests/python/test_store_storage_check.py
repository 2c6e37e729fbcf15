"""init's storageCheck, the iOS SDK's initWithStorageCheck (Protocol/README.md, Lifecycle 2), over a real SQLite
state directory and the emulator: `clear` ends the requestor's login at Adobe and here, so that neither the next
checkAuthentication nor a later setRequestor's re-sync finds it; `all` does so only when a stored value does not
read; `none` and a sound store leave the login alone."""
import json
import sqlite3
import urllib.request

from rpc_helper import StdioDaemon, daemon_args, web_login


def logouts(emulator) -> int:
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return sum(1 for r in json.loads(response.read())["requests"] if r["path"] == "/api/v2/REF/logout/MockMVPD")


def logged_in_daemon(bin_dir, emulator, state):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(daemon)
    assert daemon.stop() == 0


def start_with(bin_dir, emulator, state, check: str) -> StdioDaemon:
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    assert daemon.call("init", {"storageCheck": check}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    return daemon


def test_clear_ends_the_login_at_adobe_and_here(bin_dir, emulator, tmp_path):
    state = tmp_path / "state"
    logged_in_daemon(bin_dir, emulator, state)
    before = logouts(emulator)
    daemon = start_with(bin_dir, emulator, state, "clear")
    assert logouts(emulator) == before + 1, "the login was not ended at Adobe"
    assert daemon.call("checkAuthentication")["status"] == 0
    # The re-sync of a later setRequestor finds nothing to bring back, and the check ran once.
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 0
    assert logouts(emulator) == before + 1
    assert daemon.stop() == 0


def test_all_clears_a_store_whose_login_does_not_read(bin_dir, emulator, tmp_path):
    state = tmp_path / "state"
    logged_in_daemon(bin_dir, emulator, state)
    with sqlite3.connect(state / "passbridge.sqlite") as database:
        assert database.execute("UPDATE profiles SET profile = '{not json' WHERE requestor = 'REF'").rowcount == 1
    before = logouts(emulator)
    daemon = start_with(bin_dir, emulator, state, "all")
    assert logouts(emulator) == before + 1
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0


def test_all_and_none_leave_a_sound_login_alone(bin_dir, emulator, tmp_path):
    state = tmp_path / "state"
    logged_in_daemon(bin_dir, emulator, state)
    before = logouts(emulator)
    for check in ("all", "none"):
        daemon = start_with(bin_dir, emulator, state, check)
        assert daemon.call("checkAuthentication")["status"] == 1, check
        assert daemon.stop() == 0
    assert logouts(emulator) == before


def test_an_unknown_check_is_refused(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    _, refused = daemon.exchange("init", {"storageCheck": "some"})
    assert refused["error"]["code"] == -32602 and "none, all or clear" in refused["error"]["message"]
    assert daemon.stop() == 0


def test_clear_ends_a_login_adobe_has_and_this_store_lost(bin_dir, emulator, tmp_path):
    """A login Adobe keeps for the device while the store has none (made elsewhere, or after `passbridge state
    reset`): clear ends it there too, so that the re-sync does not bring it back."""
    from test_store_live_logins import admin
    state = tmp_path / "state"
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    device = daemon.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    assert daemon.stop() == 0
    assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device})["profiles"] >= 1
    before = logouts(emulator)
    daemon = start_with(bin_dir, emulator, state, "clear")
    assert logouts(emulator) == before + 1
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0


def test_clear_says_why_when_adobe_did_not_take_the_logout(bin_dir, emulator, tmp_path):
    # A 503 on the logout: the login Adobe still holds comes back at the re-sync (Lifecycle 2), and the log says why,
    # where nothing said the check had not ended it.
    state = tmp_path / "state"
    logged_in_daemon(bin_dir, emulator, state)
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/logout/MockMVPD", "kind": "status", "value": 503, "count": 1})
    daemon = start_with(bin_dir, emulator, state, "clear")
    assert daemon.call("checkAuthentication")["status"] == 1
    assert daemon.stop() == 0
    warnings = [line for line in daemon.log().splitlines() if "storage check:" in line]
    assert any("the logout of MockMVPD was not made at the backend" in line for line in warnings), warnings
