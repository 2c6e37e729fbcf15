"""Partner single sign-on supplied by the host (Adobe's "Apple SSO Cookbook (REST API V2)", steps 1-4; Protocol/README.md "Daemon → host
requests"): the real passbridge over stdio against the real pass-emulator, with a scripted host that answers the
daemon's partnerSSO/* requests on the same connection. One test per branch of the issue's list."""
import json
import pathlib
import socket
import threading
import time
import urllib.request

import jsonschema
import pytest

from rpc_helper import (NOT_AUTHENTICATED, NOT_SELECTED, REDIRECT_URL, Client, Emulator, RPCError, SocketDaemon,
                        StdioDaemon, check_against_openrpc, daemon_args, follow_to_redirect_url, notifications_named,
                        thread_names)

DOCUMENT = json.loads((pathlib.Path(__file__).resolve().parents[2] / "Protocol" / "openrpc.json").read_text())
METHODS = {m["name"]: m for m in DOCUMENT["methods"]}
ALL_MVPDS = ["MockMVPD", "TempPass", "MockSSO", "MockPicker"]
HOUR_MS = 3_600_000


def now_ms() -> int:
    return int(time.time() * 1000)


class HostFailure(Exception):
    """Makes the scripted host answer with a JSON-RPC error whose data carries `reason` (and extra members)."""

    def __init__(self, reason=None, **data):
        super().__init__(reason)
        self.data = ({"reason": reason} if reason else {}) | data


class Platform:
    """The host's TV-provider account. `access` and `picker` may be a HostFailure to answer with an error;
    `picker` is what the platform's own picker returns (None: the signed-in provider)."""

    def __init__(self, emulator: Emulator, **script):
        self.emulator = emulator
        self.access = "granted"
        self.signed_in = "MockSSO"
        self.expires = now_ms() + HOUR_MS
        self.picker = None
        self.silent = False  # never answer (the daemon's 10 s deadline)
        self.saml = None  # a HostFailure: the SAML request (the one with a verificationToken) fails
        self.__dict__.update(script)

    def answer(self, method: str, params: dict):
        if method == "partnerSSO/checkAccessStatus":
            if isinstance(self.access, HostFailure):
                raise self.access
            return {"accessStatus": self.access}
        assert method == "partnerSSO/requestAccountMetadata", method
        provider = self.signed_in
        if params["interruptionAllowed"] and self.picker is not None:
            if isinstance(self.picker, HostFailure):
                raise self.picker
            provider = self.signed_in = self.picker  # the user signed in through the platform's picker
        if "verificationToken" not in params:
            return {"providerId": provider, "authenticationExpirationDate": self.expires if provider else None}
        if isinstance(self.saml, HostFailure):
            raise self.saml
        saml = self.emulator_saml(provider, params["verificationToken"])
        return {"providerId": provider, "authenticationExpirationDate": self.expires, "samlAttributeQueryResponse": saml}

    def emulator_saml(self, provider: str, token: str) -> str:
        """The MVPD's SAML answer, minted by the emulator (`/__admin/partner-saml`, Sources/PassEmulator/README.md)."""
        body = json.dumps({"providerId": provider, "username": "demo", "password": "demo", "request": token}).encode()
        request = urllib.request.Request(self.emulator.base + "/__admin/partner-saml", data=body,
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            saml = json.loads(response.read())["samlResponse"]
        return "\n  " + saml.replace("<saml:Assertion>", "\n\t<saml:Assertion>") + "\n"  # as a platform may indent it


class AnswersHostRequests:
    """A client whose daemon→host requests are answered by `platform` through the shipped client's request handlers
    (`on_request`: each answered on a thread of its own) and recorded in `host_requests` (method, params), in order,
    not in `received`; `answers` pairs each request with the answer sent. Mixed into a Client (call `_host_setup`
    before its __init__ and `_host_handlers` after)."""

    HOST_METHODS = ("partnerSSO/checkAccessStatus", "partnerSSO/requestAccountMetadata")

    def _host_setup(self, platform: Platform):
        self.platform = platform
        self.host_requests: list[tuple[str, dict]] = []
        self.answers: list[tuple[dict, dict]] = []  # (request, the answer message)
        self._requests_by_id: dict = {}

    def _host_handlers(self):
        for method in self.HOST_METHODS:
            self.on_request(method, lambda params, method=method: self._host_answer(method, params))

    def _record(self, message):
        if isinstance(message, dict) and "method" in message and "id" in message:
            with self._lock:
                self.host_requests.append((message["method"], message.get("params")))
                self._requests_by_id[message["id"]] = message
                self.transcript.append(("<--", message))
            return
        super()._record(message)

    def _send(self, message):
        if "method" not in message and message.get("id") in self._requests_by_id:
            with self._lock:
                self.answers.append((self._requests_by_id[message["id"]], message))
        super()._send(message)

    def _host_answer(self, method: str, params):
        if self.platform.silent:
            time.sleep(60)  # never within the test: the daemon's 10 s deadline passes first
        try:
            return self.platform.answer(method, params or {})
        except HostFailure as failure:
            raise RPCError(-32000, "partner request failed", failure.data) from None

    def take_requests(self) -> list[tuple[str, dict]]:
        with self._lock:
            taken, self.host_requests = self.host_requests, []
        return taken


class ScriptedHost(AnswersHostRequests, StdioDaemon):
    """passbridge over stdio with a scripted platform host."""

    def __init__(self, bin_dir, platform: Platform, *args):
        self._host_setup(platform)
        super().__init__(bin_dir, *args)
        self._host_handlers()


class ScriptedSocketHost(AnswersHostRequests, Client):
    """One connection to `passbridge --socket` with a scripted platform host."""

    def __init__(self, path: str, platform: Platform):
        self._host_setup(platform)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)

        def close():
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()

        super().__init__(self.sock.makefile("rb"), self.sock.sendall, close)
        self._host_handlers()


@pytest.fixture()
def host(bin_dir, emulator, tmp_path):
    """Starts a daemon whose host answers partner requests from a Platform(script); checks the transcript after."""
    daemons = []

    def start(declare=True, **script):
        daemon = ScriptedHost(bin_dir, Platform(emulator, **script), *daemon_args(emulator.base, tmp_path / f"state{len(daemons)}"))
        daemons.append(daemon)
        params = {"redirectUrl": REDIRECT_URL} | ({"partnerSSO": "Apple"} if declare else {})
        assert daemon.call("init", params) == {}
        return daemon

    yield start
    for daemon in daemons:
        assert daemon.stop() == 0
        assert check_against_openrpc(daemon.transcript, DOCUMENT) > 0
        for request, reply in daemon.answers:  # the daemon's requests and our answers match the document too
            entry = METHODS[request["method"]]
            assert entry.get("x-direction") == "daemon-to-host" and "result" in entry
            schema = {"type": "object", "properties": {p["name"]: p["schema"] for p in entry["params"]},
                      "required": [p["name"] for p in entry["params"] if p.get("required")], "additionalProperties": False}
            jsonschema.validate(request["params"], schema)
            if "result" in reply:
                jsonschema.validate(reply["result"], entry["result"]["schema"])


def set_requestor(daemon) -> list[dict]:
    notes, response = daemon.exchange("setRequestor", {"requestorID": "REF"})
    assert response["result"] == {"status": 1}
    assert notes[0] == {"jsonrpc": "2.0", "method": "setRequestorComplete", "params": {"status": 1}}
    return notes


def statuses(notes) -> list[str]:
    return [m["params"]["id"] for m in notes if m.get("method") == "status"]


def start_login(daemon, until="displayProviderDialog"):
    """getAuthentication up to the notification `until`; returns (its id, the notification names up to it, them)."""
    start = daemon.mark()
    get_id = daemon.send("getAuthentication")
    index, _ = daemon.notification(until, start)
    with daemon._lock:
        notes = [m for m in daemon.received[start:index + 1] if "id" not in m]
    return get_id, start, notes


def cancel_picker(daemon, get_id, start):
    daemon.call("setSelectedProvider", {"mvpdId": None})
    _, response = daemon.response(get_id, start)
    assert response["result"] == {"status": 0, "errorCode": NOT_SELECTED}


def token_source(daemon):
    return daemon.call("getMetadata", {"opCode": "METADATA_USER_META", "userMetaKey": "tokenSource"})["metadata"]


def assert_fallback(daemon, code, with_platform_picker=True):
    """getAuthentication falls back to the regular picker with `code` (cookbook step 4), then is cancelled."""
    get_id, start, notes = start_login(daemon)
    names = notifications_named(notes)
    expected = (["presentTvProviderDialog", "dismissTvProviderDialog"] if with_platform_picker else []) + ["status", "displayProviderDialog"]
    assert names == expected, notes
    assert statuses(notes) == [code]
    assert [m["ID"] for m in notes[-1]["params"]["mvpds"]] == ALL_MVPDS
    cancel_picker(daemon, get_id, start)


# ------------------------------------------------------------------------------------------------ the branches

def test_granted_and_signed_in_logs_in_silently_during_set_requestor(host, emulator):
    daemon = host()
    assert notifications_named(set_requestor(daemon)) == ["setRequestorComplete"]
    requests = daemon.take_requests()
    assert [m for m, _ in requests] == ["partnerSSO/checkAccessStatus", "partnerSSO/requestAccountMetadata",
                                        "partnerSSO/requestAccountMetadata"]
    assert requests[0][1] == {"prompt": False}
    assert requests[1][1] == {"interruptionAllowed": False, "supportedProviderIds": ["MockSSO", "MockPicker"],
                              "featuredProviderIds": ["MockSSO", "MockPicker"]}
    assert requests[2][1]["verificationToken"] and requests[2][1]["attributeNames"] == ["uid"]
    notes, response = daemon.exchange("checkAuthentication")
    assert notifications_named(notes) == ["setAuthenticationStatus", "sendTrackingData"]
    assert response["result"] == {"status": 1, "errorCode": ""}
    assert notes[1]["params"]["data"][:2] == ["true", "MockSSO"]
    # The decision on the appleSSO profile carries AP-Partner-Framework-Status (the emulator refuses it otherwise).
    token = daemon.call("checkAuthorization", {"resource": "ch1"})["token"]
    check = emulator.verify_token(token, "ch1")
    assert check.returncode == 0, check.stdout + check.stderr


def test_denied_reports_vsa403_and_the_regular_picker(host):
    daemon = host(access="denied")
    notes = set_requestor(daemon)
    assert statuses(notes) == ["VSA403"]
    assert daemon.take_requests() == [("partnerSSO/checkAccessStatus", {"prompt": False})]
    notes, response = daemon.exchange("checkAuthentication")
    assert response["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED} and statuses(notes) == ["VSA403"]
    assert_fallback(daemon, "VSA403", with_platform_picker=False)
    assert ("partnerSSO/checkAccessStatus", {"prompt": True}) in daemon.take_requests()


def test_not_determined_reports_vsa404(host):
    daemon = host(access="notDetermined")
    assert statuses(set_requestor(daemon)) == ["VSA404"]
    assert_fallback(daemon, "VSA404", with_platform_picker=False)


def test_host_error_reports_appl_error_and_falls_back(host):
    daemon = host(access=HostFailure())  # no reason at all counts as "other"
    notes = set_requestor(daemon)
    assert statuses(notes) == ["APPL_ERROR"] and notes[-1]["params"]["level"] == "error"
    assert_fallback(daemon, "APPL_ERROR", with_platform_picker=False)


def test_a_failed_silent_exchange_reports_appl_error_after_set_requestor_complete(host):
    """Cookbook step 2: the silent exchange's SAML request failing at the host is an error between the device and
    the platform: APPL_ERROR (level error, the host's error message in `details`) right after setRequestorComplete(1)."""
    daemon = host(saml=HostFailure("serviceTemporarilyUnavailable"))
    notes = set_requestor(daemon)
    assert notifications_named(notes) == ["setRequestorComplete", "status"]
    assert statuses(notes) == ["APPL_ERROR"] and notes[-1]["params"]["level"] == "error"
    assert notes[-1]["params"]["details"] == "partner request failed"  # the host's error message
    requests = daemon.take_requests()
    assert [m for m, _ in requests][-1] == "partnerSSO/requestAccountMetadata" and "verificationToken" in requests[-1][1]
    _, response = daemon.exchange("checkAuthentication")
    assert response["result"]["status"] == 0


def platform_services(emulator, mvpd: str, enabled: bool):
    """Switches `mvpd`'s single sign-on under REF off or on at the emulator (`POST /__admin/platform-services`)."""
    assert emulator.admin("platform-services", {"serviceProvider": "REF", "mvpd": mvpd, "enablePlatformServices": enabled}) == 200


def test_a_partner_profile_reads_zero_once_sso_is_disabled_for_its_mvpd(host, emulator):
    """Cookbook step 3: status 0 when single sign-on is disabled for the profile's MVPD, while another MVPD still
    has it (N000) and when none has (the platform is not asked); 1 again once it is back."""
    daemon = host()
    set_requestor(daemon)
    assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}
    platform_services(emulator, "MockSSO", False)
    set_requestor(daemon)
    notes, response = daemon.exchange("checkAuthentication")
    assert response["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert statuses(notes) == ["N000"]
    platform_services(emulator, "MockPicker", False)
    set_requestor(daemon)
    daemon.take_requests()
    assert daemon.call("checkAuthentication") == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert daemon.take_requests() == []
    platform_services(emulator, "MockSSO", True)
    set_requestor(daemon)
    assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}


def test_metadata_failure_reports_vsa503_and_falls_back(host):
    daemon = host(signed_in=None, picker=HostFailure("serviceTemporarilyUnavailable"))
    assert notifications_named(set_requestor(daemon)) == ["setRequestorComplete"], "nobody signed in: no code"
    assert_fallback(daemon, "VSA503")


def test_unanswered_request_counts_as_vsa503_after_ten_seconds(host):
    daemon = host(signed_in=None)
    set_requestor(daemon)
    daemon.platform.silent = True
    start = daemon.mark()
    get_id = daemon.send("getAuthentication")
    index, _ = daemon.notification("displayProviderDialog", start, timeout=25)
    with daemon._lock:
        notes = [m for m in daemon.received[start:index] if "id" not in m]
    assert statuses(notes) == ["VSA503"]
    cancel_picker(daemon, get_id, start)


def test_other_provider_reports_n003(host):
    daemon = host(signed_in=None, picker=HostFailure("unsupportedProvider"))
    set_requestor(daemon)
    assert_fallback(daemon, "N003")


def test_unsupported_provider_reports_n004(host):
    daemon = host(signed_in=None, picker=HostFailure("unsupportedProvider", unsupportedProviderIdentifier="NoSuchTV"))
    set_requestor(daemon)
    assert_fallback(daemon, "N004")
    daemon.platform.picker = "NoSuchTV"  # a provider the platform signs in with but this requestor does not know
    assert_fallback(daemon, "N004")


def test_cancelled_platform_picker_reports_n005(host):
    daemon = host(signed_in=None, picker=HostFailure("userCancelled"))
    set_requestor(daemon)
    assert_fallback(daemon, "N005")
    # The platform's picker ran in a task of the engine's executor, not on Swift's global pool (test_store_quiet.py).
    names = thread_names(daemon.process.pid)
    assert all(name.startswith("passbridge") for name in names), names


def test_picker_boarded_provider_is_selected_silently_with_no_code(host):
    daemon = host(signed_in=None, picker=HostFailure("unsupportedProvider", unsupportedProviderIdentifier="MockPicker"))
    set_requestor(daemon)
    get_id, start, notes = start_login(daemon, until="navigateToUrl")
    assert notifications_named(notes) == ["presentTvProviderDialog", "dismissTvProviderDialog", "sendTrackingData", "navigateToUrl"]
    assert notes[2]["params"]["data"][0] == "MockPicker" and notes[2]["params"]["eventType"] == 2
    redirect = follow_to_redirect_url(notes[-1]["params"]["url"])
    done = daemon.mark()
    daemon.call("handleExternalURL", {"url": redirect})
    _, response = daemon.response(get_id, start)
    assert response["result"] == {"status": 1, "errorCode": ""}
    with daemon._lock:
        assert statuses(daemon.received[done:]) == []
    assert token_source(daemon) == "MockPicker"


def test_platform_picker_login_ends_with_set_authentication_status(host):
    daemon = host(signed_in=None, picker="MockSSO")
    set_requestor(daemon)
    daemon.take_requests()
    notes, response = daemon.exchange("getAuthentication")
    assert notifications_named(notes) == ["presentTvProviderDialog", "dismissTvProviderDialog", "setAuthenticationStatus",
                                          "sendTrackingData"]
    assert response["result"] == {"status": 1, "errorCode": ""}
    requests = daemon.take_requests()
    assert requests[0] == ("partnerSSO/checkAccessStatus", {"prompt": True})
    assert requests[1][1]["interruptionAllowed"] is True and "verificationToken" not in requests[1][1]
    assert requests[2][1]["interruptionAllowed"] is True and requests[2][1]["verificationToken"]
    # Already authenticated: an explicit getAuthentication still answers with setAuthenticationStatus.
    notes, response = daemon.exchange("getAuthentication")
    assert notifications_named(notes) == ["setAuthenticationStatus", "sendTrackingData"]


def test_expired_provider_info_is_not_exchanged(host):
    daemon = host(expires=now_ms() - 60_000)
    assert notifications_named(set_requestor(daemon)) == ["setRequestorComplete"]
    assert [m for m, _ in daemon.take_requests()] == ["partnerSSO/checkAccessStatus", "partnerSSO/requestAccountMetadata"]
    notes, response = daemon.exchange("checkAuthentication")
    assert response["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED} and statuses(notes) == ["N000"]
    # getAuthentication: the backend answers pfs_fallback, so the user gets that MVPD's own login page, no code.
    get_id, start, notes = start_login(daemon, until="navigateToUrl")
    assert notifications_named(notes) == ["presentTvProviderDialog", "dismissTvProviderDialog", "sendTrackingData", "navigateToUrl"]
    assert "/api/v2/authenticate/REF/" in notes[-1]["params"]["url"]
    cancel_picker(daemon, get_id, start)


def test_logout_reports_vsa203_and_the_next_set_requestor_exchanges_again(host):
    daemon = host()
    set_requestor(daemon)
    notes, response = daemon.exchange("logout")
    assert notifications_named(notes) == ["setAuthenticationStatus", "status"]
    assert notes[1]["params"]["id"] == "VSA203"
    assert response["result"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    daemon.take_requests()
    # Still signed in on the platform: the next setRequestor logs in again without a callback.
    assert notifications_named(set_requestor(daemon)) == ["setRequestorComplete"]
    assert "verificationToken" in daemon.take_requests()[-1][1]
    assert daemon.call("checkAuthentication") == {"status": 1, "errorCode": ""}


def test_token_source_tells_a_partner_login_from_a_regular_one(host):
    daemon = host()
    set_requestor(daemon)
    assert token_source(daemon) == "Apple"
    daemon.call("logout")
    # Access withdrawn on the platform: a regular login through the picker (VSA403 first).
    daemon.platform.access = "denied"
    set_requestor(daemon)
    assert token_source(daemon) is None
    get_id, start, notes = start_login(daemon)
    assert statuses(notes) == ["VSA403"]
    notes, _ = daemon.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    daemon.call("handleExternalURL", {"url": follow_to_redirect_url(notes[-1]["params"]["url"])})
    assert daemon.response(get_id, start)[1]["result"] == {"status": 1, "errorCode": ""}
    assert token_source(daemon) == "MockMVPD"


def test_a_host_that_declared_nothing_never_receives_a_request(host):
    daemon = host(declare=False)
    assert notifications_named(set_requestor(daemon)) == ["setRequestorComplete"]
    daemon.exchange("checkAuthentication")
    get_id, start, notes = start_login(daemon)
    assert notifications_named(notes) == ["displayProviderDialog"]
    cancel_picker(daemon, get_id, start)
    daemon.call("logout")
    assert daemon.take_requests() == []


def test_over_the_socket_a_closed_host_connection_cancels_only_its_own_partner_wait(bin_dir, emulator, tmp_path, short_tmp):
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    try:
        signed_in = ScriptedSocketHost(daemon.path, Platform(emulator))
        assert signed_in.call("init", {"partnerSSO": "Apple"}) == {}
        assert notifications_named(set_requestor(signed_in)) == ["setRequestorComplete"]
        assert signed_in.call("checkAuthentication") == {"status": 1, "errorCode": ""}

        stuck = ScriptedSocketHost(daemon.path, Platform(emulator, signed_in=None, silent=True))
        assert stuck.call("init", {"partnerSSO": "Apple"}) == {}
        stuck.send("setRequestor", {"requestorID": "REF"})
        deadline = time.monotonic() + 10
        while not stuck.host_requests:  # the daemon waits for this host's answer...
            assert time.monotonic() < deadline
            time.sleep(0.02)
        stuck.close()  # ...and the host goes away
        # The other connection is served as before.
        assert signed_in.call("getMetadata", {"opCode": "METADATA_USER_META", "userMetaKey": "tokenSource"})["metadata"] == "Apple"
        signed_in.close()
    finally:
        assert daemon.stop() == 0


# ------------------------------------------------------------------------------ the Python client's host helper

CLIENTS = pathlib.Path(__file__).resolve().parents[2] / "Clients" / "python"


def test_account_file_host_answers_from_the_file(bin_dir, emulator, tmp_path):
    """passbridge.partner_sso.TVProviderAccount over the Python client: signed in → silent login; the file
    edited (signed out, then access denied) → what the platform would say."""
    import asyncio
    import sys
    sys.path.insert(0, str(CLIENTS))
    import passbridge
    from passbridge.partner_sso import TVProviderAccount

    async def run():
        path = TVProviderAccount.write(tmp_path / "account.json", accessStatus="granted", providerId="MockSSO",
                                       expiresInSeconds=3600, username="demo", password="demo")
        assert path.stat().st_mode & 0o777 == 0o600
        events = []
        ae = await passbridge.AsyncAccessEnabler.spawn(*daemon_args(emulator.base, tmp_path / "state"),
                                                       executable=str(bin_dir / "passbridge"), stderr=asyncio.subprocess.DEVNULL)
        ae.add_listener(lambda event: events.append((event.name, dict(event.params))))
        ae.register_partner_sso(TVProviderAccount(path, emulator_url=emulator.base))
        try:
            assert await ae.init(partnerSSO="Apple") == {}
            assert await ae.setRequestor("REF") == {"status": 1}
            assert [name for name, _ in events] == ["setRequestorComplete"]
            assert await ae.checkAuthentication() == {"status": 1, "errorCode": ""}
            assert (await ae.getMetadata(passbridge.METADATA_USER_META, userMetaKey="tokenSource"))["metadata"] == "Apple"
            # Signed out on the platform: the partner profile no longer stands.
            TVProviderAccount.write(path, accessStatus="granted", providerId=None, username="demo", password="demo")
            assert (await ae.checkAuthentication())["status"] == 0
            # Permission withdrawn: VSA403.
            TVProviderAccount.write(path, accessStatus="denied", providerId="MockSSO", username="demo", password="demo")
            del events[:]
            assert (await ae.checkAuthentication())["status"] == 0
            assert [params["id"] for name, params in events if name == "status"] == ["VSA403"]
        finally:
            assert await ae.close() == 0

    asyncio.run(run())


def test_demo_logs_in_with_no_login_page(bin_dir):
    import subprocess
    import sys
    demo = CLIENTS / "examples" / "demo.py"
    proc = subprocess.run([sys.executable, str(demo), "--partner-sso", "--bin-dir", str(bin_dir)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "[ok] checkAuthentication: logged in by setRequestor through the platform's TV provider account" in out
    assert "[ok] getMetadata tokenSource: Apple" in out
    assert "[ok] getAuthentication: logged in at MockSSO as demo" in out
    assert "navigateToUrl" not in out and "displayProviderDialog" not in out and "web view:" not in out
    assert '"id": "VSA203"' in out
    assert out.splitlines()[-1] == "DEMO OK: every step did what it should"


class GatedPlatform(Platform):
    """A platform whose first answer waits until the test opens `gate`."""

    def __init__(self, emulator, **script):
        super().__init__(emulator, **script)
        self.gate = threading.Event()

    def answer(self, method: str, params: dict):
        self.gate.wait(20)
        return super().answer(method, params)


def test_a_replaced_instance_asks_the_platform_nothing_more_and_stores_no_login(bin_dir, emulator, tmp_path):
    """A later init replaces the instance while its setRequestor waits on the host's checkAccessStatus: once the host
    answers, the replaced instance asks nothing more (its silent exchange would have stored a login), and the new
    instance, which declared no partner, is never asked either."""
    platform = GatedPlatform(emulator)
    daemon = ScriptedHost(bin_dir, platform, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    daemon.send("setRequestor", {"requestorID": "REF"})
    deadline = time.monotonic() + 10
    while not daemon.host_requests:
        assert time.monotonic() < deadline, "no partnerSSO/checkAccessStatus"
        time.sleep(0.01)
    assert daemon.call("init", {}) == {}
    asked = len(daemon.host_requests)
    platform.gate.set()
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0
    assert len(daemon.host_requests) == asked, f"asked after the replacement: {daemon.host_requests[asked:]}"


class PickerGatedPlatform(Platform):
    """A platform whose picker (requestAccountMetadata with interruptionAllowed) answers once the test opens `gate`."""

    def __init__(self, emulator, **script):
        super().__init__(emulator, **script)
        self.gate = threading.Event()

    def answer(self, method: str, params: dict):
        if method == "partnerSSO/requestAccountMetadata" and params["interruptionAllowed"]:
            self.gate.wait(20)
        return super().answer(method, params)


@pytest.mark.parametrize("ending", ["cancelRequest", "setSelectedProvider null"])
def test_a_login_that_ends_at_the_platform_picker_dismisses_it_before_its_response(bin_dir, emulator, tmp_path, ending):
    """From a breaking pass: getAuthentication cancelled ($/cancelRequest) while the host showed the platform's
    picker got its response at once, but dismissTvProviderDialog came only when the host answered the picker
    request, or 10 s later when it never did: the host's picker outlived its login. It now comes right then, before
    the login's callbacks, and the host's late answer brings no second one."""
    platform = PickerGatedPlatform(emulator, signed_in=None)
    daemon = ScriptedHost(bin_dir, platform, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
        set_requestor(daemon)
        start = daemon.mark()
        get_id = daemon.send("getAuthentication")
        daemon.notification("presentTvProviderDialog", start)
        deadline = time.monotonic() + 10
        while not any(method == "partnerSSO/requestAccountMetadata" and params["interruptionAllowed"]
                      for method, params in daemon.host_requests):
            assert time.monotonic() < deadline, daemon.host_requests
            time.sleep(0.01)
        if ending == "cancelRequest":
            daemon.send("$/cancelRequest", {"id": get_id}, notification=True)
            index, response = daemon.response(get_id, start)
            assert response["error"]["code"] == -32800, response
        else:
            daemon.call("setSelectedProvider", {"mvpdId": None})
            index, response = daemon.response(get_id, start)
            assert response["result"] == {"status": 0, "errorCode": NOT_SELECTED}
        with daemon._lock:
            names = notifications_named(daemon.received[start:index])
        assert names == ["presentTvProviderDialog", "dismissTvProviderDialog", "setAuthenticationStatus",
                         "sendTrackingData", "status"], names
        # The host answers the picker now: nothing more comes of it (an engine call after it is answered behind it,
        # with its own callback only).
        after = daemon.mark()
        platform.gate.set()
        deadline = time.monotonic() + 10
        while not any(request["method"] == "partnerSSO/requestAccountMetadata" for request, _ in daemon.answers):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert daemon.call("getSelectedProvider") == {"mvpd": None}
        with daemon._lock:
            assert notifications_named(daemon.received[after:]) == ["selectedProvider"], daemon.received[after:]
    finally:
        platform.gate.set()
        assert daemon.stop() == 0


@pytest.mark.parametrize("answer", ['{{"jsonrpc":"2.0","id":"{id}","error":"oops"}}',
                                    '{{"id":"{id}","result":{{"accessStatus":"granted"}}}}',
                                    '{{"jsonrpc":"2.0","id":"{id}"}}'],
                         ids=["error-not-an-object", "no-jsonrpc-member", "neither-result-nor-error"])
def test_an_answer_that_is_no_valid_response_counts_as_an_error_at_once(bin_dir, emulator, tmp_path, answer):
    """From a breaking pass: a host's answer to partnerSSO/checkAccessStatus whose error was a string was dropped,
    and the daemon waited out its 10 s before saying APPL_ERROR; one without "jsonrpc" was even answered, as if it
    were a request, with an error response carrying the daemon's own id. Both now end the request at once as an
    error with reason `other` (APPL_ERROR), logged, and nothing answers them (Protocol/README.md, "Partner single
    sign-on")."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    start = daemon.mark()
    set_id = daemon.send("setRequestor", {"requestorID": "REF"})
    _, request = daemon.wait_for(lambda m: m.get("method") == "partnerSSO/checkAccessStatus" and "id" in m, start)
    began = time.monotonic()
    daemon.send_raw(answer.format(id=request["id"]))
    index, response = daemon.response(set_id, start)
    assert time.monotonic() - began < 5
    assert response["result"] == {"status": 1}
    with daemon._lock:
        after = daemon.received[start:index]
    assert statuses(after) == ["APPL_ERROR"], after
    assert daemon.call("rpc.stats")["callsInFlight"] == 0
    with daemon._lock:
        assert [m for m in daemon.received if m.get("id") == request["id"] and "method" not in m] == []
    assert daemon.stop() == 0
    assert f'the answer to "{request["id"]}" is no valid response' in daemon.log()


def host_request(daemon, method: str, since: int, **params) -> dict:
    """The next daemon→host request `method` after position `since` whose params include `params`."""
    return daemon.wait_for(lambda m: m.get("method") == method and "id" in m
                           and all(m["params"].get(k) == v for k, v in params.items()), since)[1]


def answer_host(daemon, request: dict, result: dict) -> None:
    daemon.send_raw(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))


def requestor_set_by_hand(daemon, access: str) -> None:
    """init declaring Apple, then setRequestor REF, its host requests answered here: `access`, and nobody signed
    in at the platform."""
    assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    start = daemon.mark()
    daemon.send("setRequestor", {"requestorID": "REF"})
    answer_host(daemon, host_request(daemon, "partnerSSO/checkAccessStatus", start), {"accessStatus": access})
    if access == "granted":
        answer_host(daemon, host_request(daemon, "partnerSSO/requestAccountMetadata", start),
               {"providerId": None, "authenticationExpirationDate": None})
    daemon.wait_for(lambda m: m.get("method") == "setRequestorComplete", start)


def picker_up(daemon) -> tuple[int, int, dict]:
    """getAuthentication up to the platform's picker (access granted): (its id, the mark, the picker request)."""
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    answer_host(daemon, host_request(daemon, "partnerSSO/checkAccessStatus", start, prompt=True), {"accessStatus": "granted"})
    return login, start, host_request(daemon, "partnerSSO/requestAccountMetadata", start, interruptionAllowed=True)


def test_a_late_answer_for_an_ended_login_leaves_the_next_logins_picker_up(bin_dir, emulator, tmp_path):
    """From a breaking pass: login 1 cancelled at the platform's picker (its dismiss sent then), login 2 at its own
    picker, and only then the host's answer to login 1's picker request: it dismissed login 2's picker, and login
    2's own answer then came with none. Each picker is now its login's."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"), "--log-level", "debug")
    try:
        requestor_set_by_hand(daemon, "granted")
        first, _, first_picker = picker_up(daemon)
        daemon.send("$/cancelRequest", {"id": first}, notification=True)
        daemon.response(first)
        second, second_start, second_picker = picker_up(daemon)
        cancelled = {"code": -32000, "message": "cancelled", "data": {"reason": "userCancelled"}}
        daemon.send_raw(json.dumps({"jsonrpc": "2.0", "id": first_picker["id"], "error": cancelled}))
        # The late answer taken (its debug line), and only then login 2's own.
        deadline = time.monotonic() + 10
        while "which has ended: ignored" not in daemon.log():
            assert time.monotonic() < deadline, daemon.log()
            time.sleep(0.01)
        daemon.send_raw(json.dumps({"jsonrpc": "2.0", "id": second_picker["id"], "error": cancelled}))
        daemon.notification("displayProviderDialog", second_start)
        with daemon._lock:
            names = notifications_named(daemon.received[second_start:])
        assert names == ["presentTvProviderDialog", "dismissTvProviderDialog", "status", "displayProviderDialog"], names
        daemon.call("setSelectedProvider", {"mvpdId": None})
        daemon.response(second)
    finally:
        assert daemon.stop() == 0


def test_an_init_that_replaces_the_instance_dismisses_its_platform_picker_first(bin_dir, emulator, tmp_path):
    """From a breaking pass: an init while the platform's picker was up replaced the instance, which then said
    nothing more, so the host was never told to close the picker. The dismiss now comes before init's response."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        requestor_set_by_hand(daemon, "notDetermined")
        login, login_start, picker = picker_up(daemon)
        before = daemon.mark()
        init = daemon.send("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"})
        index, response = daemon.response(init, before)
        assert response["result"] == {}
        with daemon._lock:
            between = daemon.received[before:index]
        assert notifications_named(between) == ["dismissTvProviderDialog"], between
        answer_host(daemon, picker, {"providerId": None, "authenticationExpirationDate": None})
        assert daemon.call("rpc.stats")["connections"] == 1
        with daemon._lock:
            assert notifications_named(daemon.received[index:]) == [], daemon.received[index:]
    finally:
        assert daemon.stop() == 0


def test_a_partner_other_than_apple_is_refused_at_init(bin_dir, emulator, tmp_path):
    """From a Node new-user pass: init {partnerSSO: "Roku"} (or "apple") was taken, the host was then asked as for
    Apple, and the login went to sessions/sso/Roku and ended in nothing, with no status and no log line."""
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        for partner, near in [("Roku", False), ("apple", True), ("", False)]:
            with pytest.raises(RPCError) as refused:
                daemon.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": partner})
            assert refused.value.code == -32602 and refused.value.error["data"]["param"] == "partnerSSO", partner
            assert "is not a partner of Adobe Pass REST API V2 (it has Apple)" in refused.value.error["message"]
            assert ("did you mean 'Apple'?" in refused.value.error["message"]) == near, refused.value.error
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL, "partnerSSO": "Apple"}) == {}
    finally:
        assert daemon.stop() == 0
