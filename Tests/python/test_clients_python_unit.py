"""Unit tests of the Python client package (Clients/python/passbridge) against a tiny scripted fake daemon.

The fake speaks NDJSON on stdio like `passbridge --stdio` and plays a login the way Protocol/README.md orders it:
notifications first, then the responses they end. These tests check the client's framing, dispatch,
ordering and daemon→host requests; the real daemon is exercised by test_clients_demo.py and friends.
"""
import asyncio
import os
import pathlib
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))

import passbridge  # noqa: E402

FAKE = textwrap.dedent(
    r'''
    import json, sys
    pending = {}
    def send(m): sys.stdout.write(json.dumps(m, separators=(",", ":")) + "\n"); sys.stdout.flush()
    def note(method, **p): send({"jsonrpc": "2.0", "method": method, "params": p})
    def reply(rid, result): send({"jsonrpc": "2.0", "id": rid, "result": result})
    for line in sys.stdin:
        m = json.loads(line)
        if "method" not in m:  # the host's answer to our request
            reply(pending.pop("ask"), {"echo": m.get("result"), "error": m.get("error")})
            continue
        meth, p, rid = m["method"], m.get("params") or {}, m.get("id")
        if meth == "setRequestor":
            note("setRequestorComplete", status=1); reply(rid, {"status": 1})
        elif meth == "getAuthentication":
            pending["auth"] = rid
            note("displayProviderDialog", mvpds=[{"ID": "MockMVPD", "displayName": "Mock Cable"}])
        elif meth == "setSelectedProvider":
            note("navigateToUrl", url="http://127.0.0.1/login?mvpd=" + str(p["mvpdId"])); reply(rid, {})
        elif meth == "handleExternalURL":
            note("setAuthenticationStatus", status=1, errorCode="")
            note("sendTrackingData", data=["true", "MockMVPD"], eventType=0)
            reply(rid, {"status": 1, "errorCode": ""}); reply(pending.pop("auth"), {"status": 1, "errorCode": ""})
        elif meth == "getAuthorization":
            note("setToken", token="dG9rZW4=", resource=p["resource"], extra="ignored")
            reply(rid, {"token": "dG9rZW4=", "resource": p["resource"]})
        elif meth == "ask":
            pending["ask"] = rid
            send({"jsonrpc": "2.0", "id": "d1", "method": p["method"], "params": {"prompt": True}})
        elif meth == "future":
            note("brandNewCallback", x=1); reply(rid, None)
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found",
                                                            "data": {"method": meth}}})
    '''
)


@pytest.fixture
def fake(tmp_path: pathlib.Path) -> str:
    """An executable that ignores its flags and runs the fake daemon."""
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    exe = tmp_path / "fake-passbridge"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}"\n')
    exe.chmod(0o755)
    return str(exe)


class Recorder(passbridge.EntitlementDelegate):
    """Answers the picker and the login page the way an app would, and records every callback."""

    def __init__(self) -> None:
        self.seen = []
        self.client = None

    def onNotification(self, name, params):
        self.seen.append((name, params))

    def setRequestorComplete(self, status):
        self.seen.append(("setRequestorComplete", status))

    def setAuthenticationStatus(self, status, errorCode):
        self.seen.append(("setAuthenticationStatus", status, errorCode))

    def setToken(self, token, resource):
        self.seen.append(("setToken", token, resource))

    def sendTrackingData(self, data, eventType):
        self.seen.append(("sendTrackingData", data, eventType))


class AsyncRecorder(Recorder):
    async def displayProviderDialog(self, mvpds):
        self.seen.append(("displayProviderDialog", [m["ID"] for m in mvpds]))
        await self.client.setSelectedProvider(mvpds[0]["ID"])

    async def navigateToUrl(self, url, useSVC):
        self.seen.append(("navigateToUrl", url, useSVC))
        await self.client.handleExternalURL("adobepass://ios.app")


class SyncRecorder(Recorder):
    def displayProviderDialog(self, mvpds):
        self.seen.append(("displayProviderDialog", [m["ID"] for m in mvpds]))
        self.client.setSelectedProvider(mvpds[0]["ID"])

    def navigateToUrl(self, url, useSVC):
        self.seen.append(("navigateToUrl", url, useSVC))
        self.client.handleExternalURL("adobepass://ios.app")


def test_async_login_callbacks_come_before_the_response(fake: str) -> None:
    async def main():
        d = AsyncRecorder()
        ae = await passbridge.AsyncAccessEnabler.spawn(executable=fake, delegate=d)
        d.client = ae
        stream = ae.events("setAuthenticationStatus", "setToken")
        assert await ae.setRequestor("REF") == {"status": 1}
        assert d.seen == [("setRequestorComplete", 1)]
        result = await ae.getAuthentication()
        assert result == {"status": 1, "errorCode": ""}
        assert d.seen[1:] == [
            ("displayProviderDialog", ["MockMVPD"]),
            ("navigateToUrl", "http://127.0.0.1/login?mvpd=MockMVPD", None),
            ("setAuthenticationStatus", 1, ""),
            ("sendTrackingData", ["true", "MockMVPD"], 0),
        ]
        ev = await stream.next(timeout=5)
        assert (ev.name, ev["status"], ev["errorCode"]) == ("setAuthenticationStatus", 1, "")
        token = await ae.getAuthorization("ch1")
        assert token == {"token": "dG9rZW4=", "resource": "ch1"}
        assert d.seen[-1] == ("setToken", "dG9rZW4=", "ch1")
        assert (await stream.next(timeout=5)).params["resource"] == "ch1"
        return await ae.close()

    assert asyncio.run(main()) == 0


def test_sync_client_runs_nested_calls_from_callbacks(fake: str) -> None:
    d = SyncRecorder()
    with passbridge.AccessEnabler.spawn(executable=fake, delegate=d) as ae:
        d.client = ae
        assert ae.setRequestor("REF")["status"] == passbridge.ACCESS_ENABLER_STATUS_SUCCESS
        assert ae.getAuthentication() == {"status": 1, "errorCode": ""}
        names = [s[0] for s in d.seen]
        assert names == ["setRequestorComplete", "displayProviderDialog", "navigateToUrl",
                         "setAuthenticationStatus", "sendTrackingData"]
        assert ae.getAuthorization("ch1")["token"] == "dG9rZW4="


def test_errors_and_unknown_notifications(fake: str) -> None:
    d = Recorder()
    with passbridge.AccessEnabler.spawn(executable=fake, delegate=d) as ae:
        with pytest.raises(passbridge.RPCError) as e:
            ae.call("noSuchMethod", {})
        assert e.value.code == -32601 and e.value.data == {"method": "noSuchMethod"}
        assert ae.call("future") is None
        assert d.seen == [("brandNewCallback", {"x": 1})]


def test_host_answers_daemon_requests(fake: str) -> None:
    class Host(passbridge.PartnerSSOHost):
        def checkAccessStatus(self, prompt):
            return {"accessStatus": "granted" if prompt else "denied"}

        def requestAccountMetadata(self, params):
            raise passbridge.HostError("userCancelled")

    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(executable=fake)
        ae.register_partner_sso(Host())
        ok = await ae.call("ask", {"method": "partnerSSO/checkAccessStatus"})
        refused = await ae.call("ask", {"method": "partnerSSO/requestAccountMetadata"})
        unknown = await ae.call("ask", {"method": "partnerSSO/somethingElse"})
        await ae.close()
        return ok, refused, unknown

    ok, refused, unknown = asyncio.run(main())
    assert ok == {"echo": {"accessStatus": "granted"}, "error": None}
    assert refused["error"]["data"] == {"reason": "userCancelled"}
    assert unknown["error"]["code"] == -32601


def test_sync_host_handler_runs_on_the_calling_thread(fake: str) -> None:
    import threading

    threads = []
    with passbridge.AccessEnabler.spawn(executable=fake) as ae:
        ae.register_request_handler("partnerSSO/checkAccessStatus",
                                    lambda p: threads.append(threading.current_thread()) or {"accessStatus": "granted"})
        assert ae.call("ask", {"method": "partnerSSO/checkAccessStatus"})["echo"] == {"accessStatus": "granted"}
    assert threads == [threading.current_thread()]


def test_daemon_exit_fails_waiting_calls(tmp_path: pathlib.Path) -> None:
    exe = tmp_path / "dies"
    exe.write_text("#!/bin/sh\nread line\necho 'passbridge: cannot open the state' >&2\nexit 3\n")
    exe.chmod(0o755)

    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(executable=str(exe))
        stream = ae.events()
        with pytest.raises(passbridge.DaemonExited) as exited:
            await ae.checkAuthentication()
        assert exited.value.returncode == 3
        assert exited.value.stderr == ["passbridge: cannot open the state"]
        assert str(exited.value) == "the daemon exited with status 3: passbridge: cannot open the state"
        with pytest.raises(passbridge.ConnectionClosed):
            await stream.next(timeout=5)
        return await ae.close()

    assert asyncio.run(main()) == 3
    assert os.path.exists(exe)


def test_a_call_made_after_the_daemon_closed_its_output_but_before_it_exited_raises_daemon_exited(tmp_path: pathlib.Path) -> None:
    """A daemon refusing its flags closes its output, then exits: a call made in between (the reader has seen the
    end, the exit status is not known yet) waits for the status and raises ``DaemonExited``, not a bare
    ``ConnectionClosed``. The fake daemon exits only once the call is waiting, so the order is fixed."""
    flag = tmp_path / "exit-now"
    exe = tmp_path / "refuses"
    exe.write_text(f"#!/bin/sh\necho 'passbridge: bad flag' >&2\nexec 1>&-\n"
                   f"i=0; while [ ! -e '{flag}' ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\nexit 2\n")
    exe.chmod(0o755)

    async def main():
        conn = await passbridge.rpc.AsyncConnection.spawn([str(exe)])
        while not conn.closed:  # the reader has seen the end of the daemon's output
            await asyncio.sleep(0.01)
        call = asyncio.ensure_future(conn.call("init", {}))
        for _ in range(10):
            await asyncio.sleep(0)
        assert not call.done(), "the call waits for the exit status"
        flag.touch()
        with pytest.raises(passbridge.DaemonExited) as exited:
            await call
        assert exited.value.returncode == 2 and exited.value.stderr == ["passbridge: bad flag"]
        await conn.close()

    asyncio.run(main())
