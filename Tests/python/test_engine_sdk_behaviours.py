"""SDK behaviours through the real daemon on the real emulator, each with the value the SDK reference gives:
advisory codes (N010, Z010, Z011, N111), no useSVC for an MVPD that does not require it, a malformed MRSS refused with Z130, one
loopback rule."""
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from rpc_helper import (NOT_AUTHENTICATED, NOT_AUTHORIZED, NOT_SELECTED, REDIRECT_URL, Emulator, RpcError, SocketDaemon,
                        StdioDaemon, daemon_args, follow_to_redirect_url, notifications_named, web_login)
from test_bridge_flows import login, logout_through_page


@pytest.fixture()
def app(daemon):
    app = daemon.client()
    yield app
    app.close()


def ready(app, requestor="REF"):
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    assert app.call("setRequestor", {"requestorID": requestor}) == {"status": 1}


def statuses(notes):
    return [n["params"]["id"] for n in notes if n.get("method") == "status"]


def advance_clock(emulator, seconds):
    request = urllib.request.Request(emulator.base + "/__admin/clock", data=b'{"advanceSeconds": %d}' % seconds,
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def pick(app, mvpd):
    """getAuthentication → picker → setSelectedProvider `mvpd`; returns (getAuthentication id, start, notes, answer)."""
    start = app.mark()
    get_id = app.send("getAuthentication")
    app.notification("displayProviderDialog", start)
    notes, response = app.exchange("setSelectedProvider", {"mvpdId": mvpd})
    return get_id, start, notes, response


def test_authenticate_all_degradation_reports_n010_then_z010(app):
    ready(app, "REF2")
    get_id, start, notes, response = pick(app, "DegradedAuthN")
    assert "navigateToUrl" not in notifications_named(notes)
    assert response["result"] == {"status": 1, "errorCode": ""}
    assert statuses(notes) == ["N010"]
    assert app.response(get_id, start)[1]["result"] == {"status": 1, "errorCode": ""}
    notes, response = app.exchange("checkAuthorization", {"resource": "ch1"})
    assert notifications_named(notes) == ["setToken", "sendTrackingData", "status"]
    assert notes[-1]["params"]["id"] == "Z010" and notes[-1]["params"]["level"] == "warning"
    assert response["result"]["resource"] == "ch1" and response["result"]["token"]


def test_authorize_all_degradation_reports_z010(app):
    ready(app, "REF2")
    get_id, start, notes, _ = pick(app, "DegradedAuthZ")
    redirect = follow_to_redirect_url(notes[-1]["params"]["url"])
    assert app.call("handleExternalURL", {"url": redirect}) == {"status": 1, "errorCode": ""}
    notes, response = app.exchange("checkAuthorization", {"resource": "ch1"})
    assert statuses(notes) == ["Z010"]
    assert response["result"]["resource"] == "ch1"


def test_temp_pass_authorization_reports_z011(app):
    ready(app)
    pick(app, "TempPass")
    notes, response = app.exchange("checkAuthorization", {"resource": "ch1"})
    assert notifications_named(notes) == ["setToken", "sendTrackingData", "status"]
    assert notes[-1]["params"]["id"] == "Z011" and notes[-1]["params"]["level"] == "info"
    assert response["result"]["resource"] == "ch1" and response["result"]["statuses"] == [notes[-1]["params"]]


def test_temp_pass_picked_again_after_it_expired_reports_n111(app, emulator):
    ready(app)
    pick(app, "TempPass")
    advance_clock(emulator, 181)
    # The first call that reaches the backend learns the TempPass is over (and forgets it).
    notes, _ = app.exchange("checkAuthorization", {"resource": "ch1"})
    assert statuses(notes) == ["N111"]
    get_id, start, notes, response = pick(app, "TempPass")
    n111 = [n["params"] for n in notes if n["method"] == "status"]
    assert response["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED, "statuses": n111}  # the reason, a warning
    assert statuses(notes) == ["N111"]
    # The getAuthentication this login answers carries the same reason (Protocol/README.md "Failure reasons").
    assert app.response(get_id, start)[1]["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED, "statuses": n111}


def test_handle_svc_leaves_the_pages_of_an_mvpd_without_requires_svc_plain(app):
    """MockMVPD's configuration has no `requiresSVC`: with handleSVC its login and logout pages still come without
    useSVC (the pages of an MVPD that requires it: test_engine_config_options.py)."""
    ready(app)
    assert app.call("setOptions", {"handleSVC": True}) == {}
    _, _, notes, _ = pick(app, "MockMVPD")
    assert notes[-1]["method"] == "navigateToUrl" and "useSVC" not in notes[-1]["params"]
    app.call("handleExternalURL", {"url": follow_to_redirect_url(notes[-1]["params"]["url"])})
    start = app.mark()
    logout_id = app.send("logout")
    _, navigate = app.notification("navigateToUrl", start)
    assert "useSVC" not in navigate["params"]
    app.call("handleExternalURL", {"url": follow_to_redirect_url(navigate["params"]["url"])})
    assert app.response(logout_id, start)[1]["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_unescaped_mrss_is_refused_with_z130(app):
    ready(app)
    login(app)
    mrss = ('<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>REF</title><item>'
            '<title>Law & Order: "SVU" <Pilot></title></item></channel></rss>')
    notes, response = app.exchange("checkAuthorization", {"resource": mrss})
    assert notifications_named(notes) == ["tokenRequestFailed", "sendTrackingData", "status"]
    assert notes[0]["params"]["resource"] == mrss and notes[0]["params"]["errorCode"] == NOT_AUTHORIZED
    assert notes[-1]["params"]["id"] == "Z130"
    assert response["result"]["errorCode"] == NOT_AUTHORIZED


def test_one_loopback_rule_for_the_command_line_and_set_requestor(bin_dir, tmp_path, short_tmp):
    """--backend http://127.0.0.2:PORT is accepted, and setRequestor really calls it; a plain-http service
    provider off loopback is refused with -32602 instead of being dropped."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.2", 0))
    listener.listen(8)
    accepted = threading.Event()

    def accept():
        connection, _ = listener.accept()
        accepted.set()
        connection.close()

    threading.Thread(target=accept, daemon=True).start()
    backend = "http://127.0.0.2:%d" % listener.getsockname()[1]
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(backend, tmp_path / "state"))
    try:
        app = daemon.client()
        notes, response = app.exchange("setRequestor", {"requestorID": "REF"})
        assert accepted.is_set()
        assert response["result"] == {"status": 0, "statuses": [{"id": "CFG404", "errorId": "CFG404", "level": "error", "message": "Backend not reachable",
                                                                 "details": f"{backend} could not be reached"}]}
        assert [n["params"] for n in notes if n["method"] == "status"][0]["message"] == "Backend not reachable"
        with pytest.raises(RpcError) as refused:
            app.call("setRequestor", {"requestorID": "REF", "serviceProviders": [backend, "http://sp.example"]})
        assert refused.value.code == -32602
        assert refused.value.error["data"]["param"] == "serviceProviders" and "item 1" in refused.value.error["message"]
        app.close()
    finally:
        assert daemon.stop() == 0
        listener.close()


def test_an_mvpd_two_service_providers_list_is_paired_with_the_first_listed_at_every_start(bin_dir, tmp_path):
    """Protocol/README.md, "Transports and framing", Limits: the MVPDs of `serviceProviders` are merged in the order
    listed, whichever answers first. Two emulators list the same MVPDs; the user logs in while the second is slow to
    answer its configuration, and the daemon starts again while the first is. Before, an MVPD was paired with the
    first to answer: after the restart MockMVPD went to the second, the login stored under the first was not seen
    (checkAuthentication said not authenticated), and a logout would have ended nothing."""
    first, second = Emulator(bin_dir), Emulator(bin_dir)
    providers = [first.base, second.base]
    state = tmp_path / "state"

    def start(slow):
        assert slow.admin("faults", {"method": "GET", "path": "/api/v2/REF/configuration", "kind": "latency", "value": 1500}) == 201
        daemon = StdioDaemon(bin_dir, *daemon_args(first.base, state))
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        assert daemon.call("setRequestor", {"requestorID": "REF", "serviceProviders": providers}) == {"status": 1}
        urllib.request.urlopen(urllib.request.Request(slow.base + "/__admin/faults", method="DELETE"), timeout=10).close()
        return daemon

    def decisions(emulator):
        with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as answer:
            return [r["path"] for r in json.loads(answer.read())["requests"] if "/decisions/" in r["path"]]

    try:
        daemon = start(slow=second)
        web_login(daemon)
        assert daemon.stop() == 0
        daemon = start(slow=first)
        try:
            assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}
            assert daemon.call("getAuthorization", {"resource": "ch1"})["resource"] == "ch1"
            assert decisions(first) == ["/api/v2/REF/decisions/authorize/MockMVPD"] and decisions(second) == []
            logout_through_page(daemon)
            assert daemon.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
        finally:
            assert daemon.stop() == 0
        # The logout ended the login at the first: a start at which it answers first finds none either.
        daemon = start(slow=second)
        try:
            assert daemon.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
        finally:
            assert daemon.stop() == 0
    finally:
        first.stop()
        second.stop()


def test_set_requestor_asks_at_most_16_service_providers(app, emulator):
    """Protocol/README.md, "Limits": a list of 16 service providers is taken; a 17th is refused with -32602 before
    any is asked, and the connection goes on; an empty list fails the setRequestor with CFG404."""
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    with pytest.raises(RpcError) as refused:
        app.call("setRequestor", {"requestorID": "REF", "serviceProviders": [emulator.base] * 17})
    assert refused.value.code == -32602
    assert refused.value.error["data"] == {"param": "serviceProviders", "reason": "lists 17 URLs, more than 16"}
    with urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/reset", method="POST"), timeout=10):
        pass
    assert app.call("setRequestor", {"requestorID": "REF", "serviceProviders": [emulator.base] * 16})["status"] == 1
    # One backend listed 16 times is asked once (a breaking pass: 16 times, one after another against a backend that
    # never answered).
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as answer:
        asked = [r["path"] for r in json.loads(answer.read())["requests"] if r["path"].endswith("/configuration")]
    assert asked == ["/api/v2/REF/configuration"], asked
    # An empty list asks none.
    empty = app.call("setRequestor", {"requestorID": "REF", "serviceProviders": []})
    assert empty["status"] == 0 and [(s["id"], s["message"]) for s in empty["statuses"]] == [("CFG404", "No usable service provider")]


@pytest.mark.parametrize("requestor", [".", ".."])
def test_a_dot_segment_requestor_id_is_sent_as_that_id_not_as_a_path_step(app, emulator, requestor):
    """A requestor id goes in the path as one segment: `..` was a dot segment that libcurl removed, so the daemon
    asked /api/configuration. Its dots are escaped (%2E) now: the backend gets the id itself and refuses it (CFG400)."""
    with urllib.request.urlopen(urllib.request.Request(emulator.base + "/__admin/reset", method="POST"), timeout=10):
        pass
    assert app.call("init", {"redirectUrl": REDIRECT_URL}) == {}
    result = app.call("setRequestor", {"requestorID": requestor})
    assert result["status"] == 0 and [s["id"] for s in result["statuses"]] == ["CFG400"], result
    with urllib.request.urlopen(emulator.base + "/__admin/requests", timeout=10) as answer:
        paths = [r["path"] for r in json.loads(answer.read())["requests"] if r["path"].startswith("/api/")]
    # The emulator logs the path decoded.
    assert paths == [f"/api/v2/{requestor}/configuration"], paths


def test_logout_clears_the_applications_logins_under_its_other_requestors(daemon):
    ref, ref2 = daemon.client(), daemon.client()
    ready(ref)
    ready(ref2, "REF2")
    login(ref)
    _, _, notes, _ = pick(ref2, "MockMVPD")
    assert ref2.call("handleExternalURL", {"url": follow_to_redirect_url(notes[-1]["params"]["url"])})["status"] == 1
    assert ref2.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    logout_through_page(ref)
    # The same application under REF2 on this device is logged out too (no network: checkAuthentication).
    assert ref2.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    ref.close()
    ref2.close()


def test_data_is_the_promotional_temp_pass_identity(app):
    ready(app, "REF2")
    identity = {"email": "viewer@example.com"}
    start = app.mark()
    get_id = app.send("getAuthentication", {"data": identity})
    _, dialog = app.notification("displayProviderDialog", start)
    assert next(m for m in dialog["params"]["mvpds"] if m["ID"] == "PromoTempPass")["isTempPass"] is True
    notes, response = app.exchange("setSelectedProvider", {"mvpdId": "PromoTempPass"})
    assert response["result"] == {"status": 1, "errorCode": ""} and statuses(notes) == ["N011"]
    assert app.response(get_id, start)[1]["result"] == {"status": 1, "errorCode": ""}
    notes, response = app.exchange("checkAuthorization", {"resource": "ch1", "data": identity})
    assert response["result"]["resource"] == "ch1" and response["result"]["token"]
    assert statuses(notes) == ["Z011"]


def test_promotional_temp_pass_without_data_is_refused(app):
    """Refused with the backend's own words in N500 (`invalid_header_identity_for_temporary_access`), as a decision's
    Z500 has them; N500 said only "Internal authentication error" before, which told a QA team nothing."""
    ready(app, "REF2")
    _, _, notes, response = pick(app, "PromoTempPass")
    assert response["result"]["status"] == 0
    said = [n["params"] for n in notes if n.get("method") == "status"]
    assert [(s["id"], s["level"], s["message"]) for s in said] == [
        ("N500", "error", "The identity for temporary access header value is missing or invalid.")], said
    assert response["result"]["statuses"] == said
    assert app.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}


def test_get_authorization_cancelled_at_the_picker_ends_with_token_request_failed(app):
    """The reference: any failure of getAuthorization ends with tokenRequestFailed, the user's cancel of the login
    it started included; the response has the authorization shape (not the login's)."""
    ready(app)
    start = app.mark()
    authz_id = app.send("getAuthorization", {"resource": "ch1"})
    app.notification("displayProviderDialog", start)
    app.call("setSelectedProvider", {"mvpdId": None})
    index, answer = app.response(authz_id, start)
    assert answer["result"] == {"resource": "ch1", "errorCode": NOT_SELECTED, "errorDescription": ""}
    names = notifications_named(app.received[start:index])
    assert names[:2] == ["displayProviderDialog", "setAuthenticationStatus"]
    failed = [m["params"] for m in app.received[start:index] if m.get("method") == "tokenRequestFailed"]
    assert failed == [{"resource": "ch1", "errorCode": NOT_SELECTED, "errorDescription": ""}]
    assert names.index("setAuthenticationStatus") < names.index("tokenRequestFailed")
    tracking = [m["params"] for m in app.received[start:index] if m.get("method") == "sendTrackingData"]
    assert [t["data"][0] for t in tracking if t["eventType"] == 1] == ["false"]  # one failed authorization event


def test_a_throttled_call_waits_for_retry_after_and_succeeds(app, emulator):
    ready(app)
    request = urllib.request.Request(emulator.base + "/__admin/throttle", method="POST",
                                     data=json.dumps({"requestsPerSecond": 0.25, "burst": 1}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}  # the one-time burst
    started = time.monotonic()
    notes, response = app.exchange("setRequestor", {"requestorID": "REF"})
    # 429 with Retry-After: 4 (one request per 4 s): the engine waits that long, then the retry is admitted.
    assert response["result"] == {"status": 1} and statuses(notes) == []
    assert time.monotonic() - started >= 3


def test_a_call_after_init_replaced_a_configured_instance_says_why_it_has_no_requestor(app):
    """Protocol/README.md, Lifecycle 2: from a Node new-user pass, an app that sent init again after setRequestor got
    "call setRequestor first", and had called it."""
    with pytest.raises(RpcError) as fresh:
        app.call("checkAuthentication")
    assert fresh.value.error["data"] == {"reason": "call setRequestor first"}
    ready(app)
    assert app.call("init", {"redirectUrl": REDIRECT_URL, "webView": False}) == {}
    with pytest.raises(RpcError) as replaced:
        app.call("checkAuthentication")
    assert replaced.value.code == -32002
    assert replaced.value.error["data"] == {
        "reason": "call setRequestor first: the init sent after the last setRequestor started a new instance, which has none"}
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert app.call("checkAuthentication")["status"] == 0


def test_force_authn_while_logged_in_opens_the_dialog_and_a_pick_of_the_same_mvpd_ends_with_the_login_held(app):
    """getAuthentication {forceAuthn: true} while logged in opens the provider dialog (no early answer). REST API V2
    answers the session of the MVPD the device holds a profile of with `authorize`, so a pick of it ends the login
    at once with that profile: no navigateToUrl, status 1 (Protocol/README.md, Lifecycle 4)."""
    ready(app)
    login(app)
    start = app.mark()
    get_id = app.send("getAuthentication", {"forceAuthn": True})
    app.notification("displayProviderDialog", start)
    notes, picked = app.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert picked["result"] == {"status": 1, "errorCode": ""}, picked
    _, answered = app.response(get_id, start)
    assert answered["result"] == {"status": 1, "errorCode": ""}
    shown = [n["method"] for n in app.received[start:] if "method" in n and n["method"] != "sendTrackingData"]
    assert shown == ["displayProviderDialog", "setAuthenticationStatus"], shown
    assert app.call("checkAuthentication") == {"status": 1, "errorCode": ""}


def test_a_login_seeded_at_the_backend_with_a_short_life_ends_with_an_unsolicited_status(app, emulator):
    """A QA scenario with no clock skew: a login made at the backend for this device, valid 2 s
    (`POST /__admin/profiles {…, ttlSeconds: 2}`), is found by the next setRequestor, and its expiry ends it with the
    unsolicited setAuthenticationStatus(0) of "Live logins", no CFG100 anywhere. Before, only a moved emulator clock
    (which brings CFG100) or a configuration of its own could make a login expire soon."""
    from test_store_live_logins import admin
    ready(app)
    device = app.call("getMetadata", {"opCode": "METADATA_DEVICE_ID"})["metadata"]
    with pytest.raises(urllib.error.HTTPError) as refused:
        admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device, "ttlSeconds": 0})
    assert json.loads(refused.value.read()) == {"error": "ttlSeconds must be an integer from 1 to 315360000 (ten years)"}
    assert admin(emulator, "POST", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": device, "ttlSeconds": 2})["profiles"] >= 1
    assert app.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert app.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    start = app.mark()
    _, ended = app.notification("setAuthenticationStatus", start, timeout=15)
    assert ended["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert app.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert "CFG100" not in json.dumps(app.received)
