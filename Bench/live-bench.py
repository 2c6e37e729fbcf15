#!/usr/bin/env python3
"""Live logins across daemons: how long after a login or logout on daemon A an instance of the same device on
daemon B gets its unsolicited setAuthenticationStatus (Protocol/README.md, "Live logins"), with two daemons on one
PostgreSQL database (fleet mode, `--store`) or on one SQLite state directory, against pass-emulator.

Each round logs device D in through A (the real flow, through the emulator's login page) and out again through A
(a host without a web view: no logout page), each change after a random pause of up to 250 ms (so that changes
do not fall in step with the SQLite store's look every 200 ms; PostgreSQL's notifications wake B's store thread on
its connection's socket); the time measured is from A's answer to the change to B's notification. Reported:
median and 99th percentile over `--rounds` logins and as many logouts.

    swift build -c release --product passbridge --product pass-emulator
    python3 Bench/live-bench.py --bin-dir .build/release --store postgresql:///db?host=/tmp/...   # or --store sqlite
"""
import argparse
import asyncio
import json
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from importlib import import_module  # noqa: E402

bench = import_module("store-bench")


class Watcher:
    """B's instance of the device: records when each unsolicited setAuthenticationStatus arrives."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.arrivals: asyncio.Queue = asyncio.Queue()
        self.next_id = 0
        self.answers: dict[int, asyncio.Future] = {}
        self.task = asyncio.create_task(self.read())

    async def read(self):
        while line := await self.reader.readline():
            message = json.loads(line)
            if message.get("method") == "setAuthenticationStatus":
                await self.arrivals.put((time.monotonic(), message["params"]["status"]))
            elif "id" in message and message["id"] in self.answers:
                self.answers.pop(message["id"]).set_result(message)

    async def call(self, method, params=None):
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.answers[self.next_id] = future
        self.writer.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}).encode() + b"\n")
        return (await future)["result"]


async def main_async(args, paths):
    reader, writer = await asyncio.open_unix_connection(str(paths[1]), limit=1 << 24)
    watcher = Watcher(reader, writer)
    await watcher.call("init", {"webView": False, "deviceIdentifier": "device-live"})
    await watcher.call("setRequestor", {"requestorID": "REF"})
    await watcher.call("checkAuthentication")
    while not watcher.arrivals.empty():
        watcher.arrivals.get_nowait()
    quiet = await bench.Connection.open(str(paths[0]))
    await quiet.call("init", {"webView": False, "deviceIdentifier": "device-live"})
    await quiet.call("setRequestor", {"requestorID": "REF"})
    logins, logouts = [], []
    for _ in range(args.rounds):
        await asyncio.sleep(random.uniform(0, 0.25))
        await bench.log_in(str(paths[0]), "device-live")
        answered = time.monotonic()
        arrived, status = await asyncio.wait_for(watcher.arrivals.get(), 10)
        assert status == 1
        logins.append(arrived - answered)
        await asyncio.sleep(random.uniform(0, 0.25))
        await quiet.call("logout")
        answered = time.monotonic()
        arrived, status = await asyncio.wait_for(watcher.arrivals.get(), 10)
        assert status == 0
        logouts.append(arrived - answered)
    quiet.close()
    watcher.task.cancel()
    writer.close()
    return logins, logouts


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", type=pathlib.Path, default=pathlib.Path(".build/release"))
    parser.add_argument("--store", default="sqlite", help="sqlite (one shared state directory) or a PostgreSQL URL")
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-live-") as work:
        work = pathlib.Path(work)
        emulator = subprocess.Popen([str(args.bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE, text=True)
        base = emulator.stdout.readline().strip()
        paths = [work / "a.sock", work / "b.sock"]
        daemons = []
        try:
            for index, path in enumerate(paths):
                store = ["--store", args.store] if args.store != "sqlite" else ["--state-dir", str(work / "state")]
                daemons.append(bench.start_daemon(args.bin_dir, path, store, base))
            logins, logouts = asyncio.run(main_async(args, paths))
        finally:
            for process in daemons:
                process.terminate()
                process.wait(timeout=10)
            emulator.terminate()
            emulator.wait(timeout=10)
    everything = logins + logouts
    print(f"store {'SQLite' if args.store == 'sqlite' else 'PostgreSQL'}: {len(everything)} changes, notification after "
          f"median {statistics.median(everything) * 1000:.1f} ms, p99 {percentile(everything, 0.99) * 1000:.1f} ms "
          f"(logins median {statistics.median(logins) * 1000:.1f} ms, logouts median {statistics.median(logouts) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
