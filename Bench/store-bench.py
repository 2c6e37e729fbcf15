#!/usr/bin/env python3
"""Authorizations per second through 1, 2 and 4 daemons sharing one store: a PostgreSQL database (fleet mode,
`--store`) or one SQLite state directory, for 1,000 distinct devices, against pass-emulator.

Each device is logged in once (the real flow, through the emulator's login page), then every device has its own
connection (`init {deviceIdentifier}` + `setRequestor`), spread over the daemons round robin, and the client keeps
`--in-flight` `getAuthorization` calls going, each for the next device, for `--seconds`. An authorization is one
REST API V2 decision at the emulator, a read of the device's profile from the store and a cached expiry write.

    swift build -c release --product passbridge --product pass-emulator
    python3 Bench/store-bench.py --bin-dir .build/release            # ~2 min on a 2-vCPU VM
"""
import argparse
import asyncio
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "python"))
from rpc_helper import follow_to_redirect_url  # noqa: E402  (the scripted browser of the tests)

STATEMENT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJiZW5jaCJ9.c2ln"
REDIRECT = "adobepass://ios.app"


class Connection:
    """One NDJSON JSON-RPC connection; notifications are dropped, responses matched by id."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future] = {}
        self.task = asyncio.create_task(self.read_loop())

    @classmethod
    async def open(cls, path):
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 24)
        return cls(reader, writer)

    async def read_loop(self):
        while line := await self.reader.readline():
            message = json.loads(line)
            future = self.waiting.pop(message.get("id"), None) if "method" not in message else None
            if future:
                future.set_result(message)

    async def call(self, method, params=None):
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.writer.write(json.dumps(message).encode() + b"\n")
        answer = await future
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def close(self):
        self.task.cancel()
        self.writer.close()


async def device(path, identifier):
    connection = await Connection.open(path)
    await connection.call("init", {"redirectUrl": REDIRECT, "deviceIdentifier": identifier, "forwardedFor": "203.0.113.7"})
    assert (await connection.call("setRequestor", {"requestorID": "REF"}))["status"] == 1
    return connection


async def log_in(path, identifier):
    """The real login flow for one device, on a connection of its own (read loop paused while waiting)."""
    reader, writer = await asyncio.open_unix_connection(path, limit=1 << 24)
    next_id = 0

    async def send(method, params=None):
        nonlocal next_id
        next_id += 1
        writer.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params or {}}).encode() + b"\n")
        return next_id

    async def until(predicate):
        while line := await reader.readline():
            message = json.loads(line)
            if predicate(message):
                return message
        raise RuntimeError("daemon closed the connection")

    await send("init", {"redirectUrl": REDIRECT, "deviceIdentifier": identifier})
    request = await send("setRequestor", {"requestorID": "REF"})
    await until(lambda m: m.get("id") == request)
    await send("getAuthentication")
    await until(lambda m: m.get("method") == "displayProviderDialog")
    await send("setSelectedProvider", {"mvpdId": "MockMVPD"})
    navigate = await until(lambda m: m.get("method") == "navigateToUrl")
    redirect = await asyncio.to_thread(follow_to_redirect_url, navigate["params"]["url"])
    request = await send("handleExternalURL", {"url": redirect})
    answer = await until(lambda m: m.get("id") == request)
    assert answer["result"]["status"] == 1, answer
    writer.close()


def start_daemon(bin_dir, path, store_args, emulator):
    process = subprocess.Popen([str(bin_dir / "passbridge"), "--socket", str(path), "--backend", emulator,
                                "--software-statement", STATEMENT, "--log-level", "warning", *store_args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not os.path.exists(path):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"daemon did not start ({process.poll()})")
        time.sleep(0.02)
    return process


async def measure(paths, devices, in_flight, seconds):
    connections = []
    for index, identifier in enumerate(devices):
        connections.append(await device(paths[index % len(paths)], identifier))
    done = 0
    failures = 0
    stop_at = 0.0

    async def worker(offset):
        nonlocal done, failures
        index = offset
        while time.monotonic() < stop_at:
            result = await connections[index % len(connections)].call("getAuthorization", {"resource": "ch1"})
            if "token" in result:
                done += 1
            else:
                failures += 1
            index += in_flight

    stop_at = time.monotonic() + 2  # warm-up
    await asyncio.gather(*(worker(i) for i in range(in_flight)))
    done = failures = 0
    began = time.monotonic()
    stop_at = began + seconds
    await asyncio.gather(*(worker(i) for i in range(in_flight)))
    elapsed = time.monotonic() - began
    for connection in connections:
        connection.close()
    return done / elapsed, failures


async def run_store(name, store_args_for, bin_dir, emulator, work, devices, args):
    results = {}
    for count in (1, 2, 4):
        paths = [work / f"{name}-{count}-{i}.sock" for i in range(count)]
        daemons = [start_daemon(bin_dir, path, store_args_for(i), emulator) for i, path in enumerate(paths)]
        try:
            if count == 1:
                began = time.monotonic()
                for start in range(0, len(devices), 20):
                    await asyncio.gather(*(log_in(paths[0], identifier) for identifier in devices[start:start + 20]))
                print(f"  {name}: {len(devices)} devices logged in in {time.monotonic() - began:.1f} s", flush=True)
            rate, failures = await measure(paths, devices, args.in_flight, args.seconds)
            results[count] = rate
            print(f"  {name}, {count} daemon(s): {rate:,.0f} authorizations/s ({failures} failed)", flush=True)
        finally:
            for daemon in daemons:
                daemon.terminate()
            for daemon in daemons:
                daemon.wait(timeout=20)
    return results


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=str(ROOT / ".build" / "release"))
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.bin_dir)
    work = pathlib.Path(tempfile.mkdtemp(prefix="pb-store-bench-", dir="/tmp"))
    emulator = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True)
    base = emulator.stdout.readline().strip()
    cluster = subprocess.run(["bash", str(ROOT / "Tests" / "postgres-cluster.sh"), "start"], capture_output=True, text=True, check=True)
    exports = dict(line.removeprefix("export ").split("=", 1) for line in cluster.stdout.splitlines())
    cluster_dir = exports["PASSBRIDGE_TEST_POSTGRES_DIR"].strip("'")
    url = exports["PASSBRIDGE_TEST_POSTGRES_URL"].strip("'")
    devices = [f"bench-device-{i:04d}" for i in range(args.devices)]
    try:
        print(f"{args.devices} devices, {args.in_flight} calls in flight, {args.seconds:.0f} s per cell", flush=True)
        sqlite = await run_store("SQLite", lambda i: ["--state-dir", str(work / "state")], bin_dir, base, work, devices, args)
        postgres = await run_store("PostgreSQL", lambda i: ["--state-dir", str(work / f"machine-{i}"), "--store", url], bin_dir, base,
                                   work, devices, args)
        print("\n| daemons | SQLite (one state directory) | PostgreSQL (one database) |\n|---|---|---|")
        for count in (1, 2, 4):
            print(f"| {count} | {sqlite[count]:,.0f}/s | {postgres[count]:,.0f}/s |")
    finally:
        subprocess.run(["bash", str(ROOT / "Tests" / "postgres-cluster.sh"), "stop", cluster_dir], check=False)
        emulator.terminate()
        emulator.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
