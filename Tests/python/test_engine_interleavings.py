"""Interleavings an app really produces, through the real daemon on the real emulator (Protocol/README.md,
Lifecycle 3 and 5, Diagnostics): an app that quits during start-up frees its instance, and a repeated
setRequestor (the app back in the foreground) leaves the login in progress to finish."""
import json
import socket
import time

from rpc_helper import REDIRECT_URL, follow_to_redirect_url, notifications_named
from test_bridge_flows import ready

CONFIGURATION = "/api/v2/REF/configuration"


def slow_configuration(emulator, milliseconds, count=1):
    assert emulator.admin("faults", {"method": "GET", "path": CONFIGURATION, "kind": "latency", "value": milliseconds,
                                     "count": count}) == 201


def instances(observer) -> dict:
    """rpc.stats without its profileReads: the instances, connections and calls in flight."""
    stats = observer.call("rpc.stats")
    return {name: stats[name] for name in ("instances", "connections", "callsInFlight")}


def wait_for_stats(observer, predicate, timeout=30):
    """Asks rpc.stats (`instances`) until `predicate(stats)` holds; returns the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        stats = instances(observer)
        if predicate(stats) or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)


def test_rpc_stats_counts_instances_connections_and_calls(daemon):
    observer = daemon.client()
    assert instances(observer) == {"instances": 0, "connections": 1, "callsInFlight": 0}
    app = daemon.client()
    ready(app)
    assert instances(observer) == {"instances": 1, "connections": 2, "callsInFlight": 0}
    start = app.mark()
    app.send("getAuthentication")
    app.notification("displayProviderDialog", start)
    assert instances(observer) == {"instances": 1, "connections": 2, "callsInFlight": 1}
    app.close()
    assert wait_for_stats(observer, lambda s: s["instances"] == 0) == {"instances": 0, "connections": 1, "callsInFlight": 0}
    observer.close()


def test_fifty_apps_that_quit_during_start_up_are_all_freed(daemon, emulator):
    observer = daemon.client()
    before = instances(observer)
    slow_configuration(emulator, 1000, count=50)
    lines = b"".join(json.dumps(m).encode() + b"\n" for m in [
        {"jsonrpc": "2.0", "method": "setRequestor", "params": {"requestorID": "REF"}, "id": 1},
        {"jsonrpc": "2.0", "method": "getAuthentication", "id": 2},
    ])
    for _ in range(50):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.connect(daemon.path)
            peer.sendall(lines)
    # Every peer closed while its configuration was still on the way (1 s each): all 50 instances are alive at once.
    assert wait_for_stats(observer, lambda s: s["instances"] == 50)["instances"] == 50
    after = wait_for_stats(observer, lambda s: s == before)
    assert after == before == {"instances": 0, "connections": 1, "callsInFlight": 0}
    # The daemon still serves: a new app logs in normally.
    app = daemon.client()
    ready(app)
    assert app.call("checkAuthentication")["status"] == 0
    app.close()
    observer.close()


def open_login_page(app):
    """getAuthentication → picker → MockMVPD → the login page, completed in the browser; returns
    (getAuthentication's id, its position, the redirect URL the browser handed back)."""
    start = app.mark()
    get_id = app.send("getAuthentication")
    app.notification("displayProviderDialog", start)
    notes, _ = app.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert notifications_named(notes) == ["sendTrackingData", "navigateToUrl"]
    return get_id, start, follow_to_redirect_url(notes[1]["params"]["url"])


def test_repeated_set_requestor_with_handle_external_url_completes_the_login(daemon, emulator):
    app = daemon.client()
    ready(app)
    get_id, get_start, redirect = open_login_page(app)
    slow_configuration(emulator, 1500)
    start = app.mark()
    set_id = app.send("setRequestor", {"requestorID": "REF"})
    handle_id = app.send("handleExternalURL", {"url": redirect})
    handle_index, handle = app.response(handle_id, start)
    assert handle["result"] == {"status": 1, "errorCode": ""}
    status_index, status = app.notification("setAuthenticationStatus", start)
    assert status["params"] == {"status": 1, "errorCode": ""}
    assert app.response(get_id, get_start)[1]["result"] == {"status": 1, "errorCode": ""}
    # The login finished under the previous requestor while the new configuration was still on the way.
    complete_index, complete = app.notification("setRequestorComplete", start)
    assert complete["params"] == {"status": 1}
    assert status_index < handle_index < complete_index
    assert app.response(set_id, start)[1]["result"] == {"status": 1}
    assert app.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    app.close()


def test_repeated_set_requestor_with_set_selected_provider_goes_on_with_the_login(daemon, emulator):
    app = daemon.client()
    ready(app)
    get_start = app.mark()
    get_id = app.send("getAuthentication")
    app.notification("displayProviderDialog", get_start)
    slow_configuration(emulator, 1500)
    start = app.mark()
    set_id = app.send("setRequestor", {"requestorID": "REF"})
    pick_id = app.send("setSelectedProvider", {"mvpdId": "MockMVPD"})
    pick_index, pick = app.response(pick_id, start)
    assert pick["result"] == {}
    _, navigate = app.notification("navigateToUrl", start)
    complete_index, _ = app.notification("setRequestorComplete", start)
    assert pick_index < complete_index
    assert notifications_named(app.received[start:pick_index]) == ["sendTrackingData", "navigateToUrl"]
    assert app.response(set_id, start)[1]["result"] == {"status": 1}
    # The user goes on in the browser and the login completes.
    redirect = follow_to_redirect_url(navigate["params"]["url"])
    assert redirect.startswith(REDIRECT_URL)
    assert app.call("handleExternalURL", {"url": redirect}) == {"status": 1, "errorCode": ""}
    assert app.response(get_id, get_start)[1]["result"] == {"status": 1, "errorCode": ""}
    app.close()
