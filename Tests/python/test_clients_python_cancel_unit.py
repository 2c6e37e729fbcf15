"""The Python client's side of `$/cancelRequest` and of the second screen's countdown, against a scripted fake
daemon that follows the contract of Protocol/README.md: a cancelled login ends with setAuthenticationStatus(0,
"Provider not Selected Error") and status N005, then its response becomes error -32800. The real daemon is
driven by test_clients_python_api.py."""
import asyncio
import json
import pathlib
import sys
import textwrap
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))

import passbridge  # noqa: E402

FAKE = textwrap.dedent(
    r'''
    import json, sys
    log = open(sys.argv[1], "a")
    pending = {}
    def send(m): sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
    def note(method, **p): send({"jsonrpc": "2.0", "method": method, "params": p})
    for line in sys.stdin:
        m = json.loads(line)
        log.write(line); log.flush()
        meth, p, rid = m.get("method"), m.get("params") or {}, m.get("id")
        if meth == "getAuthentication":
            pending[rid] = meth
            note("displayProviderDialog", mvpds=[{"ID": "MockMVPD", "displayName": "Mock Cable"}])
        elif meth == "setSelectedProvider":
            note("status", id="REGCODE", level="info", code="ABC1234", url="http://act/activate?code=ABC1234",
                 authenticateUrl="http://act/api/v2/authenticate/REF/ABC1234", activationUrl="http://act/activate",
                 notAfter=4102444800000)
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
            note("status", id="REG100", level="info", code="ABC1234", notAfter=4102444800000, secondsLeft=42)
        elif meth == "$/cancelRequest":
            if p["id"] in pending:
                del pending[p["id"]]
                note("setAuthenticationStatus", status=0, errorCode="Provider not Selected Error")
                note("status", id="N005", level="info")
                send({"jsonrpc": "2.0", "id": p["id"], "error": {"code": -32800, "message": "Request cancelled"}})
    '''
)


@pytest.fixture
def fake(tmp_path: pathlib.Path):
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    log = tmp_path / "received.ndjson"
    exe = tmp_path / "fake-passbridge"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "{log}"\n')
    exe.chmod(0o755)
    return str(exe), log


def received(log: pathlib.Path):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_cancelling_the_task_sends_cancel_request_and_waits_for_its_answer(fake) -> None:
    exe, log = fake

    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(executable=exe)
        before = set(threading.enumerate())
        shown = []
        counted = asyncio.Event()

        def show(code: passbridge.RegistrationCode) -> None:
            shown.append(code)
            if code.update:
                counted.set()

        events = ae.events("setAuthenticationStatus")
        login = asyncio.ensure_future(ae.login_second_screen(show, mvpd="MockMVPD"))
        await asyncio.wait_for(counted.wait(), 10)
        login.cancel()
        with pytest.raises(asyncio.CancelledError):
            await login
        ended = await events.next(timeout=5)
        leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()
                    and t.get_coro().__qualname__ not in ("StderrTail.pump", "AsyncConnection._read_loop", "Process.wait")]
        threads = set(threading.enumerate()) - before
        code = await ae.close()
        return shown, ended, leftover, threads, code

    shown, ended, leftover, threads, code = asyncio.run(main())
    assert [m.get("method") for m in received(log)] == ["getAuthentication", "setSelectedProvider", "$/cancelRequest"]
    login_id = received(log)[0]["id"]
    assert received(log)[2]["params"] == {"id": login_id} and "id" not in received(log)[2]
    assert (ended["status"], ended["errorCode"]) == (0, passbridge.PROVIDER_NOT_SELECTED_ERROR)
    first, update = shown
    # `url` is the page the daemon says to show; the direct URL and the activation page come beside it.
    assert (first.code, first.url, first.authenticate_url, first.activation_url, first.update) == (
        "ABC1234", "http://act/activate?code=ABC1234", "http://act/api/v2/authenticate/REF/ABC1234", "http://act/activate",
        False)
    assert (update.seconds_left, update.update, update.url) == (42, True, first.url)
    assert leftover == []
    assert threads == set()
    assert code == 0


def test_a_timeout_cancels_the_login_and_raises_timeout(fake) -> None:
    exe, log = fake

    async def main():
        async with await passbridge.AsyncAccessEnabler.spawn(executable=exe) as ae:
            with pytest.raises(passbridge.Timeout):
                await ae.login_second_screen(lambda code: None, mvpd="MockMVPD", timeout=1)

    asyncio.run(main())
    methods = [m.get("method") for m in received(log)]
    assert methods == ["getAuthentication", "setSelectedProvider", "$/cancelRequest"]


def test_cancelling_a_plain_sdk_call_sends_cancel_request_too(fake) -> None:
    exe, log = fake

    async def main():
        async with await passbridge.AsyncAccessEnabler.spawn(executable=exe) as ae:
            picker = ae.events("displayProviderDialog")
            call = asyncio.ensure_future(ae.getAuthentication())
            await picker.next(timeout=10)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            with pytest.raises(passbridge.Timeout):
                await ae.call("getAuthentication", timeout=0.5)

    asyncio.run(main())
    got = received(log)
    assert [m.get("method") for m in got] == ["getAuthentication", "$/cancelRequest", "getAuthentication", "$/cancelRequest"]
    assert got[1]["params"]["id"] == got[0]["id"] and got[3]["params"]["id"] == got[2]["id"]


def test_the_blocking_client_runs_show_code_on_the_calling_thread(fake) -> None:
    exe, log = fake
    threads = []
    with passbridge.AccessEnabler.spawn(executable=exe) as ae:
        with pytest.raises(passbridge.Timeout):
            ae.login_second_screen(lambda code: threads.append((threading.current_thread(), code.update)),
                                   mvpd="MockMVPD", timeout=2)
    assert threads == [(threading.current_thread(), False), (threading.current_thread(), True)]
    assert [m.get("method") for m in received(log)][-1] == "$/cancelRequest"
