#!/usr/bin/env python3
"""Authorizations per second through 1, 2 and 4 daemons sharing one store — a PostgreSQL database (fleet mode,
`--store`) or one SQLite state directory — for 1,000 distinct devices, against pass-emulator, and what each costs
in CPU: per daemon core, and for the whole box.

Each device is logged in once (the real flow, through the emulator's login page, from this script); then the
bench's C client (`c-client/ndjson-client.c`, `load` mode, compiled here with `cc`) opens one connection per device
(`init {deviceIdentifier}` + `setRequestor`), spread over the daemons round robin, and keeps `--in-flight`
`getAuthorization` calls going, each on the next idle device, for `--seconds` after a warm-up. A logged-in
authorization is one REST API V2 decision at the emulator; the login comes from the daemon's memory and the
decision's expiry is a cache write, made with others.

For each cell: authorizations per second; the CPU (user + system, from /proc) per authorization of the daemons, the
emulator, PostgreSQL (its server processes) and the client; **authorizations per daemon core** (per second of the
daemons' CPU); and the box: how busy its CPUs were, and its ceiling, the CPUs ÷ the whole mix's CPU per
authorization (what the box would do if nothing else ran and the mix stayed the same).

    swift build -c release --product passbridge && swift build -c release --product pass-emulator
    python3 Bench/store-bench.py --bin-dir .build/release [--store postgresql|sqlite|both]   # ~2 min per store
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


def cpu_seconds(pid):
    """User + system CPU of process `pid` (every thread, those that ended included), seconds."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_processes(cluster_dir):
    """The PIDs of the cluster's postmaster and its server processes (backends, writers)."""
    postmaster = int(pathlib.Path(cluster_dir, "data", "postmaster.pid").read_text().split()[0])
    children = [postmaster]
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
    return children


def measure(client, paths, devices, args, processes):
    """Runs the C client's load over `paths`; returns its figures and the CPU seconds each group of `processes`
    ({name: [pids]}) spent during the measured part."""
    init = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "init",
                       "params": {"redirectUrl": REDIRECT, "deviceIdentifier": "bench-device-%04d", "forwardedFor": "203.0.113.7"}})
    setup = json.dumps({"jsonrpc": "2.0", "id": "requestor", "method": "setRequestor", "params": {"requestorID": "REF"}})
    load = subprocess.Popen([client, "load", str(args.seconds), "2", str(args.in_flight), str(len(devices)), "getAuthorization",
                             '{"resource":"ch1"}', init, setup, "--", *map(str, paths)], stdout=subprocess.PIPE, text=True)

    def sample():
        return {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in processes.items()}

    assert load.stdout.readline().strip() == "warm"
    before = sample()
    figures = dict(line.split() for line in load.stdout)
    after = sample()
    assert load.wait() == 0
    spent = {name: after[name] - before[name] for name in processes}
    spent["client"] = float(figures["client_cpu"])
    return {name: float(value) for name, value in figures.items()}, spent


async def run_store(name, store_args_for, bin_dir, emulator, work, devices, args, client, cluster_dir):
    results = {}
    for count in (1, 2, 4):
        paths = [work / f"{name}-{count}-{i}.sock" for i in range(count)]
        daemons = [start_daemon(bin_dir, path, store_args_for(i), emulator.base) for i, path in enumerate(paths)]
        try:
            if count == 1:
                began = time.monotonic()
                for start in range(0, len(devices), 20):
                    await asyncio.gather(*(log_in(paths[0], identifier) for identifier in devices[start:start + 20]))
                print(f"  {name}: {len(devices)} devices logged in in {time.monotonic() - began:.1f} s", flush=True)
            processes = {"daemons": [d.pid for d in daemons], "emulator": [emulator.pid]}
            if cluster_dir:
                processes["postgres"] = postgres_processes(cluster_dir)
            figures, spent = measure(client, paths, devices, args, processes)
            calls, seconds = figures["calls"], figures["seconds"]
            per_call = {group: cpu / calls * 1e6 for group, cpu in spent.items()}
            box = sum(spent.values())
            results[count] = {"rate": calls / seconds, "per_call": per_call, "per_core": calls / spent["daemons"],
                              "busy": box / seconds / os.cpu_count(), "ceiling": os.cpu_count() / (box / calls),
                              "failures": figures["failures"]}
            print(f"  {name}, {count} daemon(s): {calls / seconds:,.0f} authorizations/s ({figures['failures']:.0f} failed), "
                  + ", ".join(f"{group} {value:,.0f} µs" for group, value in per_call.items()), flush=True)
        finally:
            for daemon in daemons:
                daemon.terminate()
            for daemon in daemons:
                daemon.wait(timeout=20)
    return results


def table(name, results):
    groups = list(results[1]["per_call"])
    lines = [f"{name}:", "", "| daemons | authorizations/s | per daemon core | " + " | ".join(f"{g} CPU (µs)" for g in groups)
             + " | box busy | box ceiling |", "|---|" + "---|" * (len(groups) + 4)]
    for count, cell in results.items():
        lines.append(f"| {count} | {cell['rate']:,.0f}/s | {cell['per_core']:,.0f}/s | "
                     + " | ".join(f"{cell['per_call'][g]:,.0f}" for g in groups)
                     + f" | {cell['busy']:.0%} | {cell['ceiling']:,.0f}/s |")
    return "\n".join(lines)


class RunningEmulator:
    def __init__(self, binary):
        self.process = subprocess.Popen([str(binary), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.base = self.process.stdout.readline().strip()
        self.pid = self.process.pid

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--bin-dir", default=str(ROOT / ".build" / "release"))
    parser.add_argument("--store", choices=["postgresql", "sqlite", "both"], default="both")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.bin_dir)
    work = pathlib.Path(tempfile.mkdtemp(prefix="pb-store-bench-", dir="/tmp"))
    client = work / "ndjson-client"
    subprocess.run(["cc", "-O2", "-o", str(client), str(ROOT / "Bench" / "c-client" / "ndjson-client.c")], check=True)
    emulator = RunningEmulator(bin_dir / "pass-emulator")
    cluster_dir = None
    devices = [f"bench-device-{i:04d}" for i in range(args.devices)]
    try:
        print(f"{args.devices} devices, {args.in_flight} calls in flight, {args.seconds:.0f} s per cell, {os.cpu_count()} CPUs",
              flush=True)
        tables = []
        if args.store in ("sqlite", "both"):
            sqlite = await run_store("SQLite", lambda i: ["--state-dir", str(work / "state")], bin_dir, emulator, work, devices, args,
                                     client, None)
            tables.append(table("SQLite (one state directory)", sqlite))
        if args.store in ("postgresql", "both"):
            cluster = subprocess.run(["bash", str(ROOT / "Tests" / "postgres-cluster.sh"), "start"], capture_output=True, text=True,
                                     check=True)
            exports = dict(line.removeprefix("export ").split("=", 1) for line in cluster.stdout.splitlines())
            cluster_dir = exports["PASSBRIDGE_TEST_POSTGRES_DIR"].strip("'")
            url = exports["PASSBRIDGE_TEST_POSTGRES_URL"].strip("'")
            postgres = await run_store("PostgreSQL", lambda i: ["--state-dir", str(work / f"machine-{i}"), "--store", url], bin_dir,
                                       emulator, work, devices, args, client, cluster_dir)
            tables.append(table("PostgreSQL (one database)", postgres))
        print("\n" + "\n\n".join(tables))
    finally:
        if cluster_dir:
            subprocess.run(["bash", str(ROOT / "Tests" / "postgres-cluster.sh"), "stop", cluster_dir], check=False)
        emulator.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
