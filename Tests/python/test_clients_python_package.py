"""The Python package as an application uses it: closing, timeouts, the exception tree, spawn and connect failures,
the wire trace, and types a type checker can use (PEP 561). Real daemon over real pipes unless a test needs a
daemon that misbehaves on purpose.
"""
import asyncio
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest

from clients_support import ROOT, emulator_url, statement  # noqa: F401  (fixture)

import passbridge  # noqa: E402


def daemon_args(tmp_path: pathlib.Path, emulator: str) -> list:
    return ["--state-dir", str(tmp_path / "state"), "--backend", emulator, "--software-statement", statement()]


def test_sync_close_twice_and_calls_after_close_raise_at_once(bin_dir, emulator_url, tmp_path):
    with passbridge.AccessEnabler.spawn(*daemon_args(tmp_path, emulator_url), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL) as ae:
        assert ae.init() == {}
        assert ae.close() == 0
        assert ae.close() == 0
        started = time.monotonic()
        with pytest.raises(passbridge.ConnectionClosed):
            ae.checkAuthentication()
        assert time.monotonic() - started < 1
    # leaving the block closed a third time: nothing hangs


def test_async_close_twice_and_calls_after_close_raise_at_once(bin_dir, emulator_url, tmp_path):
    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(*daemon_args(tmp_path, emulator_url),
                                                      executable=str(bin_dir / "passbridge"), stderr=subprocess.DEVNULL)
        async with ae:
            await ae.init()
            assert await ae.close() == 0
            assert await ae.close() == 0
            with pytest.raises(passbridge.ConnectionClosed):
                await asyncio.wait_for(ae.checkAuthentication(), 1)

    asyncio.run(main())


SILENT = "import sys\nfor line in sys.stdin: pass\n"  # reads every request, answers none


@pytest.fixture
def silent(tmp_path: pathlib.Path) -> str:
    script = tmp_path / "silent.py"
    script.write_text(SILENT)
    exe = tmp_path / "silent-daemon"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}"\n')
    exe.chmod(0o755)
    return str(exe)


def test_calls_that_do_not_wait_on_the_user_time_out_by_default(silent):
    with passbridge.AccessEnabler.spawn(executable=silent, timeout=0.3) as ae:
        started = time.monotonic()
        with pytest.raises(passbridge.Timeout) as late:
            ae.checkAuthentication()
        assert 0.3 <= time.monotonic() - started < 2
        assert str(late.value) == "checkAuthentication: no answer within 0.3 s"
        assert isinstance(late.value, TimeoutError) and isinstance(late.value, passbridge.Error)
        with pytest.raises(passbridge.Timeout):
            ae.call("getAuthentication", timeout=0.2)  # a per-call timeout for a call that waits on the user


def test_calls_that_wait_on_the_user_have_no_default_timeout(silent):
    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(executable=silent, timeout=0.2)
        login = asyncio.ensure_future(ae.getAuthentication())
        await asyncio.sleep(0.6)
        still_waiting = not login.done()
        with pytest.raises(passbridge.Timeout):
            await ae.getMetadata(passbridge.METADATA_DEVICE_ID)
        await ae.close()
        with pytest.raises(passbridge.ConnectionClosed):
            await login
        return still_waiting

    assert asyncio.run(main())
    assert passbridge.WAITS_ON_USER == {"getAuthentication", "getAuthorization", "logout"}


def test_exception_tree():
    for cls in (passbridge.RPCError, passbridge.HostError, passbridge.ConnectionClosed, passbridge.DaemonExited,
                passbridge.Timeout):
        assert issubclass(cls, passbridge.Error)
    assert issubclass(passbridge.ConnectionClosed, ConnectionError)
    assert not issubclass(ConnectionRefusedError, passbridge.ConnectionClosed)
    assert passbridge.ConnectionClosed is not ConnectionError


def test_spawn_with_a_bad_flag_raises_daemon_exited_with_the_reason(bin_dir, capfd):
    ae = passbridge.AccessEnabler.spawn("--backend", "ftp://x", executable=str(bin_dir / "passbridge"))
    with pytest.raises(passbridge.DaemonExited) as exited:
        ae.init()
    assert exited.value.returncode == 2  # a usage error
    assert exited.value.stderr == [
        "passbridge: --backend needs an https URL (or http to a loopback host, or \"emulator\"), got ftp://x (see passbridge --help)"]
    assert str(exited.value) == ("the daemon exited with status 2: passbridge: --backend needs an https URL (or http to a "
                                 "loopback host, or \"emulator\"), got ftp://x (see passbridge --help)")
    assert "got ftp://x" in capfd.readouterr().err  # the daemon's stderr is still shown
    assert ae.close() == 2


def test_connect_to_a_missing_socket_names_the_path(tmp_path):
    path = str(tmp_path / "nothing.sock")
    with pytest.raises(FileNotFoundError) as missing:
        passbridge.AccessEnabler.connect(path)
    assert path in str(missing.value)

    async def main():
        with pytest.raises(FileNotFoundError) as missing_async:
            await passbridge.AsyncAccessEnabler.connect(path)
        return str(missing_async.value)

    assert path in asyncio.run(main())


def test_wire_logger_traces_every_message_at_debug(bin_dir, emulator_url, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="passbridge.wire")
    with passbridge.AccessEnabler.spawn(*daemon_args(tmp_path, emulator_url), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL) as ae:
        ae.setRequestor("REF")
    lines = [r.getMessage() for r in caplog.records if r.name == "passbridge.wire"]
    assert lines[0] == '--> {"jsonrpc":"2.0","method":"setRequestor","params":{"requestorID":"REF"},"id":1}'
    assert '<-- {"jsonrpc":"2.0","method":"setRequestorComplete","params":{"status":1}}' in lines
    assert lines[-1] == '<-- {"jsonrpc":"2.0","id":1,"result":{"status":1}}'


def test_unhandled_provider_dialog_is_logged(bin_dir, emulator_url, tmp_path, caplog):
    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(*daemon_args(tmp_path, emulator_url),
                                                      executable=str(bin_dir / "passbridge"), stderr=subprocess.DEVNULL)
        async with ae:
            await ae.setRequestor("REF")
            login = asyncio.ensure_future(ae.getAuthentication())
            for _ in range(100):
                if any("displayProviderDialog arrived" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.05)
            await ae.setSelectedProvider(None)
            await login

    caplog.set_level(logging.WARNING, logger="passbridge")
    asyncio.run(main())
    assert any(r.levelno == logging.WARNING and "displayProviderDialog arrived but nothing handles it" in r.getMessage()
               for r in caplog.records)


def test_a_login_step_nobody_can_show_ends_the_call_instead_of_hanging(bin_dir, emulator_url, tmp_path, caplog):
    """A delegate whose displayProviderDialog or navigateToUrl raises, or a client with no delegate at all: the
    client cancels the login (setSelectedProvider null), so the call ends with "Provider not Selected Error"
    instead of waiting for a user who will never see anything (Clients/python/README.md, "Logging")."""
    class Broken(passbridge.EntitlementDelegate):
        def __init__(self, step: str) -> None:
            self.step = step

        def displayProviderDialog(self, mvpds):
            if self.step == "displayProviderDialog":
                raise RuntimeError("no screen")
            self.ae.setSelectedProvider("MockMVPD")

        def navigateToUrl(self, url, useSVC=False):
            raise RuntimeError("no browser")

    caplog.set_level(logging.WARNING, logger="passbridge")
    for step in ("displayProviderDialog", "navigateToUrl"):
        delegate = Broken(step)
        with passbridge.AccessEnabler.spawn(*daemon_args(tmp_path / step, emulator_url), executable=str(bin_dir / "passbridge"),
                                            delegate=delegate, stderr=subprocess.DEVNULL) as ae:
            delegate.ae = ae
            ae.setRequestor("REF")
            result = ae.call("getAuthentication", timeout=30)  # a Timeout, not a hang, if the login waits
            assert result["status"] == 0 and result["errorCode"] == passbridge.PROVIDER_NOT_SELECTED_ERROR, step
    with passbridge.AccessEnabler.spawn(*daemon_args(tmp_path / "none", emulator_url), executable=str(bin_dir / "passbridge"),
                                        stderr=subprocess.DEVNULL) as ae:
        ae.setRequestor("REF")
        assert ae.call("getAuthorization", {"resource": "ch1"}, timeout=30)["errorCode"] == passbridge.PROVIDER_NOT_SELECTED_ERROR

    async def main():
        ae = await passbridge.AsyncAccessEnabler.spawn(*daemon_args(tmp_path / "async", emulator_url),
                                                      executable=str(bin_dir / "passbridge"), stderr=subprocess.DEVNULL)
        async with ae:
            await ae.setRequestor("REF")
            return await asyncio.wait_for(ae.getAuthentication(), 30)

    assert asyncio.run(main())["errorCode"] == passbridge.PROVIDER_NOT_SELECTED_ERROR
    assert any("cancelling the login" in r.getMessage() for r in caplog.records)


APP = textwrap.dedent('''
    import passbridge

    def main() -> None:
        with passbridge.AccessEnabler.spawn("--backend", "emulator") as ae:
            r = ae.getAuthorization("ch1")
            token: int = r["token"]
            ae.setRequestor(123)
            print(token, ae.getAuthorisation)
''')


def test_an_app_type_checks_against_the_installed_package(tmp_path):
    pytest.importorskip("mypy")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                    "--disable-pip-version-check", str(ROOT / "Clients" / "python")], check=True, timeout=300, cwd=tmp_path)
    (tmp_path / "app.py").write_text(APP)
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                          str(venv / "bin" / "python"), "app.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "Skipping analyzing" not in out.stdout, out.stdout
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in out.stdout, out.stdout
    assert 'Argument 1 to "setRequestor" of "AccessEnabler" has incompatible type "int"; expected "str"' in out.stdout
    assert '"AccessEnabler" has no attribute "getAuthorisation"; maybe ' in out.stdout
