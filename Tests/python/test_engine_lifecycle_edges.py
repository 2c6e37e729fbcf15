"""Lifecycle edges an outside bad-input pass found (Protocol/README.md, Lifecycle 3 and "Failure reasons"), each
over real pipes against the emulator:

- calls that run one at a time each answer before the next one's first notification (the turn ended before the
  response was written, so a queued call's callbacks came first);
- of two setRequestor in flight, the one sent last decides the requestor, whichever is answered last (the slower,
  earlier one used to win);
- an unknown MVPD id of a megabyte is refused with its PB404 quoting an excerpt, and the connection goes on
  (the suggestion was computed over the whole id, seconds of work on the loop);
- a setSelectedProvider sent behind the first setRequestor, with no login in progress, waits for it and is checked
  against the requestor it configured (it was taken as a cancel), over pipes and a socket."""
import json
import urllib.request

import pytest

from rpc_helper import StdioDaemon, daemon_args, follow_to_redirect_url, pipes_or_socket, web_login

QUEUED = [("checkAuthentication", None), ("getMetadata", {"opCode": "METADATA_DEVICE_ID"}),
          ("checkAuthorization", {"resource": "ch1"}), ("checkPreauthorizedResources", {"resources": ["ch1"]})]
RUNS = 30


def test_queued_calls_answer_before_the_next_one_starts(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    failures = []
    for _ in range(RUNS):
        start = daemon.mark()
        ids = [daemon.send(method, params) for method, params in QUEUED]
        daemon.response(ids[-1], start)
        messages = daemon.received[start:]
        # Each response is followed by the next call's callbacks, never preceded by them.
        positions = {m["id"]: i for i, m in enumerate(messages) if "id" in m and "method" not in m}
        terminal = {"setAuthenticationStatus": ids[0], "setMetadataStatus": ids[1], "tokenRequestFailed": ids[2],
                    "setToken": ids[2], "preauthorizedResources": ids[3]}
        for i, message in enumerate(messages):
            owner = terminal.get(message.get("method", ""))
            if owner is None:
                continue
            earlier = [request for request in ids if request < owner]
            if any(positions[request] > i for request in earlier):
                failures.append(f"{message['method']} of #{owner} came before an earlier call's response: "
                                f"{[m.get('method', m.get('id')) for m in messages]}")
                break
    assert daemon.stop() == 0
    assert failures == [], f"{len(failures)} of {RUNS} runs: {failures[0]}"


def test_of_two_set_requestor_in_flight_the_last_sent_decides(bin_dir, emulator, tmp_path):
    # REF's configuration answers 1.5 s late, REF2's at once: REF2 is answered first, and stays in force.
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 1500})
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    start = daemon.mark()
    first = daemon.send("setRequestor", {"requestorID": "REF"})
    second = daemon.send("setRequestor", {"requestorID": "REF2"})
    login = daemon.send("getAuthentication")
    _, dialog = daemon.notification("displayProviderDialog", start, timeout=15)
    answered = [m["id"] for m in daemon.received[start:] if m.get("id") in (first, second) and "method" not in m]
    assert answered == [second, first], "REF2's configuration was expected to come first"
    offered = [mvpd["ID"] for mvpd in dialog["params"]["mvpds"]]
    assert "DegradedAuthN" in offered, f"the dialog offers REF's MVPDs, not REF2's: {offered}"
    daemon.send("setSelectedProvider", {"mvpdId": None})
    assert daemon.response(login, start)[1]["result"]["errorCode"] == "Provider not Selected Error"
    assert daemon.stop() == 0


def test_a_megabyte_mvpd_id_gets_a_short_pb404_and_the_connection_goes_on(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    huge = "MockMVPD" * 131072
    result = daemon.call("setSelectedProvider", {"mvpdId": huge}, timeout=60)
    assert result["errorCode"] == "Provider not Selected Error"
    (pb404,) = result["statuses"]
    assert pb404["id"] == "PB404"
    assert pb404["message"] == f"No MVPD '{huge[:64]}…' in the provider dialog"
    assert daemon.response(login, start)[1]["result"]["statuses"] == [pb404]
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0


def test_an_unknown_mvpd_with_no_dialog_open_is_named_among_the_requestors_mvpds(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    result = daemon.call("setSelectedProvider", {"mvpdId": "MockMvpd"})
    assert result["errorCode"] == "Provider not Selected Error"
    (pb404,) = result["statuses"]
    assert pb404["message"] == "No MVPD 'MockMvpd' among the requestor's MVPDs; did you mean 'MockMVPD'?"
    assert pb404["details"].startswith("The requestor's MVPDs: MockMVPD")
    assert daemon.stop() == 0


def test_a_setrequestor_of_a_replaced_instance_is_answered_before_init_and_says_nothing(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 500,
                              "count": 1})
    start = daemon.mark()
    old = daemon.send("setRequestor", {"requestorID": "REF"})
    assert daemon.call("init", {}) == {}
    replaced = daemon.mark()
    index, answer = daemon.response(old, start)
    assert answer["error"]["code"] == -32003 and answer["error"]["message"] == "Instance replaced"
    assert index < replaced - 1, "answered after init's response"
    assert daemon.call("rpc.stats")["callsInFlight"] == 0
    assert [m for m in daemon.received[start:] if "method" in m] == [], "the replaced instance said something"
    # The new instance has no requestor until its own setRequestor.
    assert daemon.exchange("checkAuthentication")[1]["error"]["code"] == -32002
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert [m["method"] for m in daemon.received[replaced:] if "method" in m] == ["setRequestorComplete"]
    assert daemon.stop() == 0


def test_a_logout_page_and_a_login_page_open_together_end_logout_first(bin_dir, emulator, tmp_path):
    """Protocol/README.md, "Ordering rules": the first handleExternalURL ends the logout, the next one the login."""
    from rpc_helper import REDIRECT_URL, follow_to_redirect_url, web_login
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(daemon)
    start = daemon.mark()
    logout = daemon.send("logout")
    daemon.notification("navigateToUrl", start)  # the logout page, left open
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    notes, _ = daemon.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    page = next(n["params"]["url"] for n in notes if n["method"] == "navigateToUrl")
    redirect = follow_to_redirect_url(page)
    first = daemon.call("handleExternalURL", {"url": REDIRECT_URL})
    assert first == {"status": 0, "errorCode": "User Not Authenticated Error"}
    assert daemon.response(logout, start)[1]["result"]["status"] == 0
    assert daemon.call("handleExternalURL", {"url": redirect})["status"] == 1
    assert daemon.response(login, start)[1]["result"]["status"] == 1
    assert daemon.stop() == 0


def test_a_temppass_logout_is_not_undone_by_the_next_setrequestor(bin_dir, emulator, tmp_path):
    """The re-sync adds no TempPass profile (Protocol/README.md, "Live logins"): logged out is logged out until the
    user picks TempPass again."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    daemon.call("setSelectedProvider", {"mvpdId": "TempPass"})
    assert daemon.response(login, start)[1]["result"]["status"] == 1
    assert daemon.call("logout")["status"] == 0
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0


def test_a_login_page_handed_back_before_it_was_walked_says_why(bin_dir, emulator, tmp_path):
    from rpc_helper import REDIRECT_URL
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    daemon.call("setSelectedProvider", {"mvpdId": "MockMVPD"})
    result = daemon.call("handleExternalURL", {"url": REDIRECT_URL})
    assert result["errorCode"] == "Generic Authentication Error"
    assert [s["id"] for s in result["statuses"]] == ["N130"] and "not completed" in result["statuses"][0]["message"]
    assert daemon.response(login, start)[1]["result"]["statuses"] == result["statuses"]
    assert daemon.stop() == 0


def test_a_redirect_url_is_recognised_whatever_the_case_of_its_percent_escapes(bin_dir, emulator, tmp_path):
    """Protocol/README.md, "Errors" (-32602): paths are compared after RFC 3986's normalization, so a browser that
    hands back `%2f` for the registered `%2F` (or `%7E` for `~`) completes the login; another path is still
    refused and the connection goes on."""
    registered = "https://app.example/done%2Fhere~"
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("init", {"redirectUrl": registered}) == {}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    _, refused = daemon.exchange("handleExternalURL", {"url": "https://app.example/done/here~"})
    assert refused["error"]["code"] == -32602
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    daemon.call("setSelectedProvider", {"mvpdId": "MockMVPD"})
    result = daemon.call("handleExternalURL", {"url": "https://app.example/done%2fhere%7E?code=1"})
    assert [s["id"] for s in result["statuses"]] == ["N130"]  # recognised: the (unwalked) page is over
    assert daemon.response(login, start)[1]["result"]["statuses"] == result["statuses"]
    assert daemon.stop() == 0


def test_at_end_of_input_calls_held_for_a_configuring_set_requestor_are_answered_first(bin_dir, emulator, tmp_path):
    """Protocol/README.md, Lifecycle 6: a checkAuthentication held behind a setRequestor whose configuration the
    backend answers slowly ends with its failure outcome at once when input ends, before that setRequestor's own
    response (which still comes, with its outcome)."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency",
                                     "value": 1500, "count": 1}) == 201
    configuring = daemon.send("setRequestor", {"requestorID": "REF"})
    held = daemon.send("checkAuthentication")
    daemon.close_input()
    held_at, held_answer = daemon.response(held)
    configured_at, configured = daemon.response(configuring)
    assert held_at < configured_at
    assert held_answer["result"]["status"] == 0
    assert configured["result"] == {"status": 1}
    assert daemon.stop() == 0


@pytest.fixture(params=["pipes", "socket"])
def logged_in(request, bin_dir, emulator, tmp_path):
    """A connection whose device is logged in with MockMVPD, its instance then replaced by `init {}` (no requestor)."""
    connection, finish = pipes_or_socket(request, bin_dir, emulator, tmp_path)
    assert connection.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(connection)
    assert connection.call("init", {}) == {}
    yield connection
    assert finish()


def test_a_pick_sent_behind_the_first_setrequestor_waits_for_it(logged_in, emulator):
    # A UI that restores the last provider at start-up sends setSelectedProvider right behind setRequestor: with no
    # login in progress the pick waits for the requestor (Lifecycle 3), is remembered (event 2) and answered {}.
    # It was taken as a cancel: "Provider not Selected Error", and a logged-in user was told status 0.
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 300, "count": 3})
    client = logged_in
    for mvpd, outcome in [("MockMVPD", {}), ("MockMvpd", "PB404"), (None, "N005")]:
        start = client.mark()
        configured = client.send("setRequestor", {"requestorID": "REF"})
        pick = client.send("setSelectedProvider", {"mvpdId": mvpd})
        _, answer = client.response(pick, start)
        messages = client.received[start:]
        order = [m.get("method") or m["id"] for m in messages]
        assert order.index(configured) < order.index(pick), f"{mvpd}: {order}"
        after = order[order.index(configured) + 1:order.index(pick)]
        if outcome == {}:
            assert answer["result"] == {}, f"{mvpd}: {answer}"
            assert after == ["sendTrackingData"], f"{mvpd}: {order}"
            (tracking,) = [m for m in messages if m.get("method") == "sendTrackingData"]
            assert tracking["params"]["eventType"] == 2 and tracking["params"]["data"][0] == "MockMVPD"
            assert client.call("getSelectedProvider")["mvpd"]["ID"] == "MockMVPD"
        else:
            assert answer["result"]["errorCode"] == "Provider not Selected Error", f"{mvpd}: {answer}"
            assert [status["id"] for status in answer["result"].get("statuses", [])] == ([outcome] if outcome == "PB404" else [])
            if outcome == "PB404":
                assert "did you mean 'MockMVPD'" in answer["result"]["statuses"][0]["message"]
            statuses = [m["params"]["id"] for m in messages if m.get("method") == "status"]
            assert statuses == [outcome], f"{mvpd}: {order}"
        # Whatever the pick, the stored login is untouched.
        assert client.call("checkAuthentication")["status"] == 1


def logouts_at(emulator) -> int:
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return sum(1 for r in json.loads(response.read())["requests"] if "/logout" in r["path"])


def test_a_logout_with_no_requestor_is_a_failure_and_the_login_stays(bin_dir, emulator, tmp_path):
    # A logout held for a setRequestor that then failed, or that the end of input cut short, logged nobody out: it
    # said setAuthenticationStatus(0, "User Not Authenticated Error"), the SDK's callback of a logout done, and the
    # login was back at the next start.
    state = tmp_path / "state"
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(daemon)
    assert daemon.stop() == 0
    before = logouts_at(emulator)

    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "status", "value": 500, "count": 1})
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    start = daemon.mark()
    daemon.send("setRequestor", {"requestorID": "REF"})
    logout = daemon.send("logout")
    _, answer = daemon.response(logout, start)
    told = [m["params"] for m in daemon.received[start:] if m.get("method") == "setAuthenticationStatus"]
    assert told == [{"status": 0, "errorCode": "Generic Authentication Error"}], told
    assert answer["result"]["errorCode"] == "Generic Authentication Error"
    assert [s["id"] for s in answer["result"]["statuses"]] == ["CFG500"]
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 1

    # The same when the input ends while setRequestor still configures: the held logout is answered at once.
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 1500, "count": 1})
    daemon.call("init", {})
    start = daemon.mark()
    daemon.send("setRequestor", {"requestorID": "REF"})
    logout = daemon.send("logout")
    daemon.close_input()
    _, answer = daemon.response(logout, start)
    assert answer["result"]["errorCode"] == "Generic Authentication Error", answer
    assert daemon.stop() == 0
    assert logouts_at(emulator) == before, "a logout reached the backend"
    again = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    assert again.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert again.call("checkAuthentication")["status"] == 1
    assert again.stop() == 0


def walked_login_page(bin_dir, emulator, tmp_path):
    """A daemon whose getAuthentication waits at MockMVPD's login page, walked to the redirect URL but not handed back:
    (daemon, the getAuthentication's id, the mark before it, the redirect URL)."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    notes, _ = daemon.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    page = next(n["params"]["url"] for n in notes if n["method"] == "navigateToUrl")
    return daemon, login, start, follow_to_redirect_url(page)


def test_a_logout_ends_the_login_the_backend_holds_though_none_is_stored(bin_dir, emulator, tmp_path):
    # The login page was completed, but the profile could not be read: the backend holds the login, the store does
    # not. A logout then said "User Not Authenticated Error" without asking the backend, and the next setRequestor's
    # re-sync brought the login back.
    daemon, login, start, redirect = walked_login_page(bin_dir, emulator, tmp_path)
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/profiles/code/*", "kind": "status", "value": 503, "count": 1})
    assert daemon.call("handleExternalURL", {"url": redirect})["status"] == 0
    assert daemon.response(login, start)[1]["result"]["status"] == 0
    assert daemon.call("checkAuthentication")["status"] == 0
    before = logouts_at(emulator)

    start = daemon.mark()
    logout = daemon.send("logout")
    _, opened = daemon.notification("navigateToUrl", start)
    assert logouts_at(emulator) == before + 1, "the backend was not asked to log out"
    daemon.call("handleExternalURL", {"url": follow_to_redirect_url(opened["params"]["url"])})
    assert daemon.response(logout, start)[1]["result"] == {"status": 0, "errorCode": "User Not Authenticated Error"}
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 0, "the re-sync brought the login back"
    assert daemon.stop() == 0


def test_a_logout_sent_while_a_login_is_being_completed_ends_that_login(bin_dir, emulator, tmp_path):
    # The profile is read slowly after handleExternalURL; a logout sent meanwhile found nothing stored, answered
    # "logged out" without a backend call, and the login was stored after it: logged in after a logout.
    daemon, login, start, redirect = walked_login_page(bin_dir, emulator, tmp_path)
    emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/profiles/code/*", "kind": "latency", "value": 800, "count": 1})
    before = logouts_at(emulator)
    start = daemon.mark()
    completed = daemon.send("handleExternalURL", {"url": redirect})
    logout = daemon.send("logout")
    _, opened = daemon.notification("navigateToUrl", start, timeout=15)
    daemon.call("handleExternalURL", {"url": follow_to_redirect_url(opened["params"]["url"])})
    _, ended = daemon.response(logout, start)
    assert ended["result"] == {"status": 0, "errorCode": "User Not Authenticated Error"}
    order = [m.get("method") or m["id"] for m in daemon.received[start:] if m.get("method") != "sendTrackingData"]
    told = [m["params"]["status"] for m in daemon.received[start:] if m.get("method") == "setAuthenticationStatus"]
    assert told == [1, 0], order
    assert order.index(completed) < order.index(logout), order
    assert daemon.response(login, start)[1]["result"]["status"] == 1
    assert logouts_at(emulator) == before + 1
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0


def sessions_at(emulator) -> int:
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as response:
        return sum(1 for r in json.loads(response.read())["requests"] if r["path"].startswith("/api/v2/REF/sessions"))


def test_a_pick_waiting_for_setrequestor_that_is_cancelled_or_cut_off_reaches_nothing(bin_dir, emulator, tmp_path):
    # A TempPass pick held behind a slow setRequestor, then $/cancelRequest of it, then (a second daemon) the end of
    # input: it still ran under the requestor in force before, and logged the device in with TempPass.
    state = tmp_path / "state"
    before = sessions_at(emulator)
    for ending in ("cancel", "end of input"):
        daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
        assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        emulator.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 1000, "count": 1})
        start = daemon.mark()
        daemon.send("setRequestor", {"requestorID": "REF"})
        pick = daemon.send("setSelectedProvider", {"mvpdId": "TempPass"})
        if ending == "cancel":
            daemon.send("$/cancelRequest", {"id": pick}, notification=True)
            _, answer = daemon.response(pick, start)
            assert answer["error"]["code"] == -32800, answer
        else:
            daemon.close_input()
            _, answer = daemon.response(pick, start)
            assert answer["result"]["errorCode"] == "Provider not Selected Error", answer
        told = [m["params"] for m in daemon.received[start:] if m.get("method") in ("setAuthenticationStatus", "status")]
        assert {"status": 1, "errorCode": ""} not in told, f"{ending}: {told}"
        if ending == "cancel":
            assert daemon.call("checkAuthentication")["status"] == 0
        assert daemon.stop() == 0
        assert sessions_at(emulator) == before, f"{ending}: a TempPass session was asked for"
