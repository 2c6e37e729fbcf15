#!/usr/bin/env python3
"""The authorization row of passbridge-bench: a logged-in `getAuthorization` through the daemon against
pass-emulator on loopback, one call at a time, next to the same REST API V2 `decisions/authorize` request made
by `curl` with keep-alive (one curl process, the requests chained with `--next`).

    python3 Bench/auth-bench.py --bin-dir .build/release [--passbridge PATH] [--calls 300] [--c-client PATH]

Prints `authorization_ms X` (daemon, through this script's Python client), `authorization_c_ms` (through the
bench's C client, `c-client/ndjson-client.c`, when `--c-client` names it built) and `curl_keepalive_ms Y`
(milliseconds per call, means), and `wakeups_per_call W`: the daemon's thread wake-ups per call during the Python
client's run, counted as the voluntary context switches of all its threads (`/proc/PID/task/*/status`: each is a
thread going to sleep, to be woken again). The curl figure is (time for 2N requests − time for N requests) / N, so curl's own
start-up drops out.
"""
import argparse
import asyncio
import base64
import json
import pathlib
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
store_bench = __import__("store-bench")  # the real login flow and the daemon's command line

DEVICE = "auth-bench-device"
BODY = '{"resources":["ch1"]}'


def voluntary_switches(pid):
    """The voluntary context switches of every thread of process `pid`, summed."""
    total = 0
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except FileNotFoundError:
            continue
        total += int(next(line for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")).split()[1])
    return total


def daemon_ms(path, calls, pid=None, wakeups=None):
    """Milliseconds per sequential getAuthorization on one connection (notifications skipped); with `pid`, appends
    the daemon's thread wake-ups per call to `wakeups`."""
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(str(path))
    reader = connection.makefile("rb")

    def call(number, method, params):
        connection.sendall(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode() + b"\n")
        while True:
            message = json.loads(reader.readline())
            if message.get("id") == number:
                return message["result"]

    call(1, "init", {"redirectUrl": store_bench.REDIRECT, "deviceIdentifier": DEVICE})
    assert call(2, "setRequestor", {"requestorID": "REF"})["status"] == 1
    for number in range(10):
        assert "token" in call(3 + number, "getAuthorization", {"resource": "ch1"})
    switches = voluntary_switches(pid) if pid else 0
    began = time.monotonic()
    for number in range(calls):
        call(100 + number, "getAuthorization", {"resource": "ch1"})
    elapsed = time.monotonic() - began
    if pid:
        wakeups.append((voluntary_switches(pid) - switches) / calls)
    connection.close()
    return elapsed / calls * 1000


def c_client_ms(client, path, calls):
    """Milliseconds per sequential getAuthorization through the C client (its own connection, set up alike)."""
    setup = [json.dumps({"jsonrpc": "2.0", "id": "init", "method": "init",
                         "params": {"redirectUrl": store_bench.REDIRECT, "deviceIdentifier": DEVICE}}),
             json.dumps({"jsonrpc": "2.0", "id": "requestor", "method": "setRequestor", "params": {"requestorID": "REF"}})]
    printed = subprocess.run([client, "sequential", str(calls), str(path), "getAuthorization", '{"resource":"ch1"}', *setup],
                             capture_output=True, text=True, check=True).stdout
    return float(printed.split()[1])


def curl_ms(base, state, calls):
    """Milliseconds per decisions/authorize request made by one curl process on one kept-alive connection."""
    database = next(pathlib.Path(state).glob("*.sqlite*"), None) or next(p for p in pathlib.Path(state).iterdir() if p.is_file())
    token = sqlite3.connect(database).execute("SELECT token FROM access_tokens").fetchone()[0]
    device_info = base64.b64encode(json.dumps({"model": "bench", "osName": "Linux", "connectionType": "LAN"}).encode()).decode()
    one = [f"{base}/api/v2/REF/decisions/authorize/MockMVPD", "-s", "-o", "/dev/null", "-X", "POST",
           "-H", f"Authorization: Bearer {token}",
           "-H", "AP-Device-Identifier: fingerprint " + base64.b64encode(DEVICE.encode()).decode(),
           "-H", f"X-Device-Info: {device_info}", "-H", "Accept: application/json",
           "-H", "Content-Type: application/json;charset=utf-8", "--data", BODY]
    check = subprocess.run(["curl", "-w", "%{http_code}", *one[1:4], *one[4:], one[0]], capture_output=True, text=True)
    assert check.stdout.endswith("200"), f"curl decision failed: {check.stdout} {check.stderr}"

    def run(count):
        command = ["curl"] + one
        for _ in range(count - 1):
            command += ["--next"] + one
        began = time.monotonic()
        subprocess.run(command, check=True)
        return time.monotonic() - began

    run(calls)
    return (run(2 * calls) - run(calls)) / calls * 1000


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=str(ROOT.parent / ".build" / "release"))
    parser.add_argument("--passbridge", help="the daemon to measure (default: BIN_DIR/passbridge)")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--c-client", help="the bench's C client, built (adds authorization_c_ms)")
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.bin_dir)
    work = pathlib.Path(tempfile.mkdtemp(prefix="pb-auth-bench-", dir="/tmp"))
    if args.passbridge:
        shutil.copy(args.passbridge, work / "passbridge")
        daemon_dir = work
    else:
        daemon_dir = bin_dir
    emulator = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
    base = emulator.stdout.readline().strip()
    path = work / "auth.sock"
    daemon = store_bench.start_daemon(daemon_dir, path, ["--state-dir", str(work / "state")], base)
    try:
        await store_bench.log_in(path, DEVICE)
        wakeups = []
        print(f"authorization_ms {daemon_ms(path, args.calls, daemon.pid, wakeups):.3f}", flush=True)
        print(f"wakeups_per_call {wakeups[0]:.2f}", flush=True)
        if args.c_client:
            print(f"authorization_c_ms {c_client_ms(args.c_client, path, args.calls):.3f}", flush=True)
        print(f"curl_keepalive_ms {curl_ms(base, work / 'state', args.calls):.3f}", flush=True)
    finally:
        daemon.terminate()
        daemon.wait(timeout=20)
        emulator.terminate()
        emulator.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
