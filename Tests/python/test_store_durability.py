"""Durability where it matters (Protocol/README.md "The store"): a login reported with setAuthenticationStatus(1)
is on disk, whatever moment the daemon is killed at; authorization and preauthorization, which only cache, never
fsync."""
import base64
import json
import pathlib
import random
import shutil
import subprocess
import threading
import time

import pytest

from rpc_helper import REDIRECT_URL, StdioDaemon, daemon_args, follow_to_redirect_url
from test_bridge_flows import login, ready


def statement(name: str) -> str:
    """A well-formed three-part JWT of its own: each one is a registered application with its own login."""
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    return f"{part({'alg': 'none'})}.{part({'software_id': name})}.c2ln"


def login_loop(daemon: StdioDaemon, names: list[str], prefix: str):
    """Logs in with one new application after another until the daemon dies; `names` gets each one tried."""
    try:
        for index in range(1000):
            name = f"{prefix}-{index}"
            names.append(name)
            daemon.call("init", {"redirectUrl": REDIRECT_URL, "softwareStatement": statement(name)}, timeout=10)
            daemon.call("setRequestor", {"requestorID": "REF"}, timeout=10)
            start = daemon.mark()
            get_id = daemon.send("getAuthentication")
            daemon.notification("displayProviderDialog", start, timeout=10)
            notes, _ = daemon.exchange("setSelectedProvider", {"mvpdId": "MockMVPD"}, timeout=10)
            url = [m for m in notes if m.get("method") == "navigateToUrl"][0]["params"]["url"]
            daemon.call("handleExternalURL", {"url": follow_to_redirect_url(url)}, timeout=10)
            daemon.response(get_id, start, timeout=10)
    except (AssertionError, OSError, ValueError, IndexError):
        return  # killed


def test_100_sigkills_during_logins_lose_no_reported_login(bin_dir, emulator, tmp_path):
    state = tmp_path / "state"
    rng = random.Random(20261130)
    reported: list[str] = []
    for round_number in range(100):
        daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
        names: list[str] = []
        worker = threading.Thread(target=login_loop, args=(daemon, names, f"r{round_number}"), daemon=True)
        worker.start()
        time.sleep(rng.uniform(0.02, 0.5))
        daemon.process.kill()
        daemon.process.wait(timeout=10)
        worker.join(timeout=30)
        # Every setAuthenticationStatus(1) that reached us ended the login of the next name tried, in order.
        successes = [m for m in daemon.received if m.get("method") == "setAuthenticationStatus" and m["params"]["status"] == 1]
        reported += names[:len(successes)]
        daemon.stop()
    assert len(reported) >= 50, f"too few logins reported to prove anything: {len(reported)}"

    # The store opens, and every reported login is there.
    checker = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    for name in reported:
        checker.call("init", {"redirectUrl": REDIRECT_URL, "softwareStatement": statement(name)})
        assert checker.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
        assert checker.call("checkAuthentication") == {"status": 1, "errorCode": ""}, name
    assert checker.stop() == 0
    print(f"{len(reported)} logins reported before 100 SIGKILLs, all kept")


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (Tests/install-deps.sh installs it)")
def test_authorization_and_preauthorization_never_fsync_while_a_login_does(bin_dir, emulator, tmp_path):
    trace = tmp_path / "syncs.txt"
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range,msync", "-o", str(trace),
                               "-p", str(daemon.process.pid)], stderr=subprocess.PIPE)
    time.sleep(1.0)  # attached

    def syncs() -> int:
        time.sleep(0.5)
        return sum(1 for line in trace.read_text().splitlines() if "sync" in line and "resumed" not in line)

    ready(daemon)
    before_login = syncs()
    login(daemon)
    after_login = syncs()
    assert after_login > before_login, "a login is made durable (fsync) before it is reported"
    for index in range(20):
        assert "token" in daemon.call("getAuthorization", {"resource": "ch1"})
        daemon.call("checkAuthorization", {"resource": f"ch{index}"})
        daemon.call("checkPreauthorizedResources", {"resources": ["ch1", "ch2"], "cache": False})
        daemon.call("getMetadata", {"opCode": "METADATA_AUTHORIZATION", "resource": "ch1"})
    assert syncs() == after_login, trace.read_text()
    tracer.terminate()
    tracer.wait(timeout=10)
    assert daemon.stop() == 0
