#!/usr/bin/env python3
"""CPU per operation: what the daemon's process spends (user + system, from /proc) on each call, next to what curl
spends on the same REST API V2 request, in one run. Wall time is the second column.

    python3 Bench/cpu-bench.py --bin-dir .build/release [--passbridge PATH] [--before PATH [--before-emulator PATH]]
                               [--calls 1000] [--flows 40] [--rounds 3] [--pairs 3] [--instructions] [--mvpds N]

Rows, each on a device logged in through the real flow against pass-emulator on loopback, one call at a time
through the bench's C client (`c-client/ndjson-client.c`, `calls` mode; compiled here with `cc`):

- `getAuthorization` (logged in: one REST API V2 decision), `checkAuthentication`, `checkPreauthorizedResources` of
  10 resources (`cache: false`, so each call asks the backend), `getMetadata` (METADATA_AUTHENTICATION), and an
  unknown method (answered -32601: what a call costs the daemon with no work, the host's leg alone);
- a whole web login: a fresh connection, `init`, `setRequestor`, `getAuthentication` → `setSelectedProvider` →
  the emulator's login page walked by the tests' scripted browser → `handleExternalURL`, `getAuthorization`,
  `logout` (its page walked too), close;
- curl: the same `decisions/authorize` request, one curl process chaining the requests with `--next` on one
  kept-alive connection; its CPU is the child's rusage, (2N requests − N requests) / N so that its start-up drops out.
  getAuthorization and curl take turns: each round measures `--pairs` slices of getAuthorization calls, each
  followed at once by curl's requests, and each pair gives one getAuthorization ÷ curl ratio.

For each: the daemon's CPU per call (µs; user + system of all its threads, read from /proc: each thread's
`schedstat`, to the nanosecond), the emulator's CPU per call (µs; `utime + stime` of /proc/PID/stat, which counts
the threads libmicrohttpd ends with their connections too), and the wall time per call (µs). With `--instructions` a second pass runs each daemon
under callgrind (`valgrind --tool=callgrind`, counters zeroed before a row and dumped after it with
`callgrind_control`) and adds the instructions per call (user space; callgrind counts instructions, not time, so
the figure does not move with the machine's load). `--threads` prints the daemon's CPU per thread for each row.
After the rows, the connection stays open (a requestor, a login) and nothing is asked for `--idle-seconds`: the
daemon's threads' context switches over that time are its idle wake-ups per second (until 2026-12-05 the SQLite
store's 200 ms look for other processes' logins was 5 of them). Rounds interleave the daemons; each cell is the
median of the rounds, and a second table gives each row's fastest and slowest round (getAuthorization's and curl's cells: the median pair of each round). The getAuthorization ÷ curl
ratio is taken within each pair (the median of every round's pairs, and their range), since the two figures of a
pair, seconds apart, move together when the VM slows down. With `--mvpds N` the emulator's requestor REF lists N
MVPDs (the built-in configuration lists 4; a real requestor may list hundreds), so that work done per MVPD listed
shows.
"""
import argparse
import base64
import json
import os
import pathlib
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "Tests" / "python"))
store_bench = __import__("store-bench")  # the daemon's command line and the real login flow
from rpc_helper import follow_to_redirect_url  # noqa: E402  (the scripted browser of the tests)

DEVICE = "cpu-bench-device"
TICK = os.sysconf("SC_CLK_TCK")
RESOURCES10 = [f"ch{i}" for i in range(1, 11)]
HOST_LEG = "the host's leg alone (an unknown method: -32601)"
ROWS = [
    ("getAuthorization", "getAuthorization", {"resource": "ch1"}),
    ("checkAuthentication", "checkAuthentication", {}),
    ("checkPreauthorizedResources (10)", "checkPreauthorizedResources", {"resources": RESOURCES10, "cache": False}),
    ("getMetadata", "getMetadata", {"opCode": "METADATA_AUTHENTICATION"}),
    (HOST_LEG, "bench/unknown", {}),
]
LOGIN = "web login (init → logout)"


def cpu_seconds(pid):
    """User + system CPU of process `pid` in seconds: `utime + stime` of /proc/PID/stat (every thread, those that
    ended included; in clock ticks, 10 ms here)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def running_seconds(pid):
    """The CPU time of `pid`'s live threads in seconds, to the nanosecond: the first field of each
    /proc/PID/task/TID/schedstat, the time the thread ran (user + system). The daemon's threads live as long as it
    does, so this is its CPU with a resolution the 10 ms ticks of /proc/PID/stat lack."""
    total = 0
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / 1e9


def thread_seconds(pid):
    """{thread name: seconds it ran} of `pid`'s live threads (schedstat; threads of one name summed)."""
    split = {}
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            ran = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (FileNotFoundError, ProcessLookupError):
            continue
        split[name] = split.get(name, 0.0) + ran
    return split


def switches(pid):
    """{thread name: context switches} of `pid`'s live threads (voluntary and not, /proc/PID/task/TID/status): each
    is a time the thread went to sleep or was put off its CPU, so an idle thread's count is its wake-ups."""
    counts = {}
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            lines = (task / "status").read_text().splitlines()
        except (FileNotFoundError, ProcessLookupError):
            continue
        switched = sum(int(line.split()[1]) for line in lines if "ctxt_switches:" in line)
        counts[name] = counts.get(name, 0) + switched
    return counts


def user_system(pid):
    """(user, system) seconds of `pid` (/proc/PID/stat, clock ticks)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


class Meter:
    """CPU of some processes and wall time between `start()` and `stop(count)`, per counted operation."""

    def __init__(self, pids):
        self.pids = pids

    @staticmethod
    def seconds(name, pid):
        """The daemon's threads live as long as it does (`running_seconds`); the emulator's come and go with its
        connections (`cpu_seconds`)."""
        return running_seconds(pid) if name == "daemon" else cpu_seconds(pid)

    def start(self):
        self.threads = thread_seconds(self.pids["daemon"])
        self.user_system = user_system(self.pids["daemon"])
        self.cpu = {name: self.seconds(name, pid) for name, pid in self.pids.items()}
        self.began = time.monotonic()

    def stop(self, count):
        wall = time.monotonic() - self.began
        result = {f"{name}_cpu_us": (self.seconds(name, pid) - self.cpu[name]) / count * 1e6 for name, pid in self.pids.items()}
        result["wall_us"] = wall / count * 1e6
        after = thread_seconds(self.pids["daemon"])
        result["threads"] = {name: (ran - self.threads.get(name, 0.0)) / count * 1e6 for name, ran in after.items()}
        user, system = (a - b for a, b in zip(user_system(self.pids["daemon"]), self.user_system))
        result["system_share"] = system / (user + system) if user + system > 0 else 0.0
        return result


class Calls:
    """The C client in `calls` mode on one connection: `run(n, method, params)` makes n sequential calls."""

    def __init__(self, client, path, setup):
        self.process = subprocess.Popen([client, "calls", str(path), *map(json.dumps, setup)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "ready"

    def run(self, count, method, params):
        self.process.stdin.write(f"{count} {method} {json.dumps(params, separators=(',', ':'))}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline().split()
        assert line and line[0] == "sequential_ms", line
        return float(line[1])

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def setup_lines(device):
    return [{"jsonrpc": "2.0", "id": "init", "method": "init",
             "params": {"redirectUrl": store_bench.REDIRECT, "deviceIdentifier": device}},
            {"jsonrpc": "2.0", "id": "requestor", "method": "setRequestor", "params": {"requestorID": "REF"}}]


class Session:
    """A blocking JSON-RPC connection for the web login: calls, and waits for notifications."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.connect(str(path))
        self.reader = self.socket.makefile("rb")
        self.next_id = 0
        self.answers = {}

    def send(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.socket.sendall(json.dumps(message).encode() + b"\n")
        return self.next_id

    def until(self, predicate):
        """The first message (from now) that `predicate` accepts; responses on the way are kept for `answer`."""
        while line := self.reader.readline():
            message = json.loads(line)
            if "method" not in message:
                self.answers[message.get("id")] = message
            if predicate(message):
                return message
        raise RuntimeError("the daemon closed the connection")

    def answer(self, number):
        return self.answers.pop(number, None) or (self.until(lambda m: m.get("id") == number and "method" not in m),
                                                  self.answers.pop(number))[1]

    def call(self, method, params=None):
        return self.answer(self.send(method, params))

    def close(self):
        self.reader.close()
        self.socket.close()


def web_login(path, device):
    """One whole web login on a fresh connection: init → setRequestor → login → getAuthorization → logout."""
    session = Session(path)
    session.call("init", {"redirectUrl": store_bench.REDIRECT, "deviceIdentifier": device})
    assert session.call("setRequestor", {"requestorID": "REF"})["result"]["status"] == 1
    login = session.send("getAuthentication")
    session.until(lambda m: m.get("method") == "displayProviderDialog")
    session.send("setSelectedProvider", {"mvpdId": "MockMVPD"})
    page = session.until(lambda m: m.get("method") == "navigateToUrl")["params"]["url"]
    session.call("handleExternalURL", {"url": follow_to_redirect_url(page)})
    assert session.answer(login)["result"]["status"] == 1
    assert "token" in session.call("getAuthorization", {"resource": "ch1"})["result"]
    logout = session.send("logout")
    page = session.until(lambda m: m.get("method") == "navigateToUrl")["params"]["url"]
    session.call("handleExternalURL", {"url": follow_to_redirect_url(page)})
    assert session.answer(logout)["result"]["status"] == 0
    session.close()


def many_mvpds_config(work, count):
    """The emulator's built-in configuration with requestor REF listing `count` MVPDs: its own first (the bench logs
    in with MockMVPD), then made-up ones nobody logs in with."""
    config = json.loads((ROOT.parent / "Sources" / "PassEmulator" / "default-config.json").read_text())
    ref = next(provider for provider in config["serviceProviders"] if provider["id"] == "REF")
    ref["mvpds"] += [{"id": f"Cable{number:03d}", "displayName": f"Cable {number}"} for number in range(count - len(ref["mvpds"]))]
    path = work / "emulator-config.json"
    path.write_text(json.dumps(config))
    return path


def work_dir(state):
    return pathlib.Path(state).parent


def curl_figures(base, state, device, calls):
    """curl's CPU (µs) and wall (µs) per keep-alive decisions/authorize request."""
    database = state / "passbridge.sqlite"
    token = sqlite3.connect(database).execute("SELECT token FROM access_tokens").fetchone()[0]
    device_info = base64.b64encode(json.dumps({"model": "bench", "osName": "Linux", "connectionType": "LAN"}).encode()).decode()
    headers = {"Authorization": f"Bearer {token}", "AP-Device-Identifier": "fingerprint " + base64.b64encode(device.encode()).decode(),
               "X-Device-Info": device_info, "Accept": "application/json", "Content-Type": "application/json;charset=utf-8"}
    one = [f'url = "{base}/api/v2/REF/decisions/authorize/MockMVPD"', "silent", 'output = "/dev/null"', 'request = "POST"',
           *(f'header = "{name}: {value}"' for name, value in headers.items()), 'data = "{\\"resources\\":[\\"ch1\\"]}"']
    config = work_dir(state) / "curl.config"

    def run(count):
        config.write_text("\nnext\n".join(["\n".join(one)] * count) + "\n")
        began = time.monotonic()
        process = subprocess.Popen(["curl", "--config", str(config)])
        _, status, usage = os.wait4(process.pid, 0)
        assert status == 0, f"curl failed ({status})"
        return usage.ru_utime + usage.ru_stime, time.monotonic() - began

    check = subprocess.run(["curl", "--config", "-", "-w", "%{http_code}"], input="\n".join(one), capture_output=True, text=True)
    assert check.stdout.endswith("200"), f"curl decision failed: {check.stdout} {check.stderr}"

    run(calls)
    cpu1, wall1 = run(calls)
    cpu2, wall2 = run(2 * calls)
    return {"curl_cpu_us": (cpu2 - cpu1) / calls * 1e6, "wall_us": (wall2 - wall1) / calls * 1e6}


def curl_instructions(state, calls):
    """curl's instructions per request under callgrind: (2N requests − N requests) / N, from the config file
    `curl_figures` wrote."""
    config = work_dir(state) / "curl.config"
    one = config.read_text().split("\nnext\n")[0]

    def count(requests):
        config.write_text("\nnext\n".join([one] * requests) + "\n")
        out = work_dir(state) / "curl.callgrind"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "curl", "--config", str(config)],
                       check=True, capture_output=True)
        totals = [line for line in out.read_text().splitlines() if line.startswith(("totals:", "summary:"))]
        return int(totals[0].split()[1])

    return (count(2 * calls) - count(calls)) / calls


class Column:
    """One daemon binary measured against its emulator."""

    def __init__(self, name, passbridge, emulator, work, emulator_args=()):
        self.name, self.passbridge, self.emulator_binary = name, pathlib.Path(passbridge), pathlib.Path(emulator)
        self.emulator_args = list(emulator_args)
        self.work = work / re.sub(r"\W+", "-", name)
        self.work.mkdir()
        (self.work / "bin").mkdir()
        shutil.copy(self.passbridge, self.work / "bin" / "passbridge")
        self.samples = []

    def start(self):
        self.emulator = subprocess.Popen([str(self.emulator_binary), "--port", "0", *self.emulator_args], stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True)
        self.base = self.emulator.stdout.readline().strip()

    def stop(self):
        self.emulator.terminate()
        self.emulator.wait(timeout=10)

    def round(self, client, calls, flows, idle_seconds, pairs):
        """One round: a fresh daemon and state; every row once, getAuthorization in `pairs` slices, each followed by
        curl's requests."""
        state = self.work / f"state-{len(self.samples)}"
        path = self.work / "cpu.sock"
        daemon = store_bench.start_daemon(self.work / "bin", path, ["--state-dir", str(state)], self.base)
        figures = {}
        try:
            meter = Meter({"daemon": daemon.pid, "emulator": self.emulator.pid})
            web_login(path, DEVICE + "-warm")
            meter.start()
            for number in range(flows):
                web_login(path, f"{DEVICE}-{number}")
            figures[LOGIN] = meter.stop(flows)
            import asyncio
            asyncio.run(store_bench.log_in(path, DEVICE))
            connection = Calls(client, path, setup_lines(DEVICE))
            for name, method, params in ROWS:
                connection.run(max(10, calls // 20), method, params)
                if name != "getAuthorization":
                    meter.start()
                    connection.run(calls, method, params)
                    figures[name] = meter.stop(calls)
                    continue
                # getAuthorization and curl take turns, `pairs` times: each slice of calls is compared with curl's
                # requests made right after it, before the VM's pace can change much.
                slices = []
                for _ in range(pairs):
                    meter.start()
                    connection.run(calls, method, params)
                    slices.append(meter.stop(calls))
                    curl = curl_figures(self.base, state, DEVICE, calls)
                    slices[-1].update(curl=curl, curl_cpu_us=curl["curl_cpu_us"])
                slices.sort(key=lambda figure: figure["daemon_cpu_us"])
                figures["curl"] = sorted((s.pop("curl") for s in slices), key=lambda figure: figure["curl_cpu_us"])[len(slices) // 2]
                figures[name] = dict(slices[len(slices) // 2], ratios=[s["daemon_cpu_us"] / s["curl_cpu_us"] for s in slices])
            # Idle: the connection stays open, with its requestor and its login, and nothing is asked.
            before = switches(daemon.pid)
            time.sleep(idle_seconds)
            after = switches(daemon.pid)
            figures["idle"] = {name: (count - before.get(name, 0)) / idle_seconds for name, count in after.items()}
            connection.close()
        finally:
            daemon.terminate()
            daemon.wait(timeout=20)
        self.samples.append(figures)

    def instructions(self, client, calls, flows):
        """Instructions per call of each row, the daemon under callgrind."""
        state = self.work / "state-callgrind"
        path = self.work / "callgrind.sock"
        out = self.work / "callgrind.out"
        # valgrind 3.19 cannot read the DWARF 5 of a Swift 6 release build: a copy without debug info (its symbols stay).
        binary = self.work / "bin" / "passbridge-callgrind"
        subprocess.run(["strip", "--strip-debug", "-o", str(binary), str(self.work / "bin" / "passbridge")], check=True)
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no", "--", str(binary)]
        daemon = start_under(command, path, ["--state-dir", str(state)], self.base)
        counts = {}
        try:
            def measure(name, count, body):
                subprocess.run(["callgrind_control", "-z", str(daemon.pid)], check=True, capture_output=True)
                body()
                subprocess.run(["callgrind_control", "-d", name.split()[0], str(daemon.pid)], check=True, capture_output=True)
                dumps = sorted(self.work.glob("callgrind.out.*"), key=lambda p: p.stat().st_mtime)
                totals = [line for line in dumps[-1].read_text().splitlines() if line.startswith(("totals:", "summary:"))]
                counts[name] = int(totals[0].split()[1]) / count
            web_login(path, DEVICE + "-warm")
            measure(LOGIN, flows, lambda: [web_login(path, f"{DEVICE}-cg-{n}") for n in range(flows)])
            import asyncio
            asyncio.run(store_bench.log_in(path, DEVICE))
            connection = Calls(client, path, setup_lines(DEVICE))
            for name, method, params in ROWS:
                connection.run(10, method, params)
                measure(name, calls, lambda: connection.run(calls, method, params))
            connection.close()
            curl_figures(self.base, state, DEVICE, 2)
            counts["curl"] = curl_instructions(state, calls)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
        return counts


def start_under(command, path, store_args, emulator):
    """The daemon started through `command` (a wrapper such as valgrind), waited for until it listens."""
    process = subprocess.Popen(command + ["--socket", str(path), "--backend", emulator, "--software-statement", store_bench.STATEMENT,
                                          "--log-level", "warning", *store_args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not os.path.exists(path):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"daemon did not start under {command[0]} ({process.poll()})")
        time.sleep(0.1)
    return process


def median(samples, row, figure):
    values = [sample[row][figure] for sample in samples if figure in sample.get(row, {})]
    return statistics.median(values) if values else None


def round_ratios(samples):
    """getAuthorization's CPU over curl's, one ratio per pair (a slice of calls, then curl's requests at once after),
    over every round: a VM that runs slower for a while slows both sides of a pair, and the ratio moves less than
    either figure."""
    return [ratio for sample in samples for ratio in sample.get("getAuthorization", {}).get("ratios", [])]


def leg_ratio(samples):
    """(getAuthorization − the host's leg alone) ÷ curl, from the rows' medians: a call the daemon answers without
    work still costs a read, a parse, a write and a sleep on the host's socket, which curl's request has no part of."""
    daemon, leg, curl = (median(samples, row, figure) for row, figure in
                         [("getAuthorization", "daemon_cpu_us"), (HOST_LEG, "daemon_cpu_us"), ("curl", "curl_cpu_us")])
    return f"{(daemon - leg) / curl:.2f}×" if None not in (daemon, leg, curl) else "—"


def spread(samples, row, figure):
    """`min–max` of a figure over the rounds."""
    values = [sample[row][figure] for sample in samples if figure in sample.get(row, {})]
    return f"{min(values):,.0f}–{max(values):,.0f}" if values else "—"


def report(columns, instructions, show_threads):
    def cell(value, digits=0):
        return "—" if value is None else f"{value:,.{digits}f}"

    lines = [f"Medians of {len(columns[0].samples)} rounds. CPU: user + system of the process, µs per call.", ""]
    header = "| operation | " + " | ".join(
        f"{c.name} CPU | {c.name} instructions | {c.name} wall | emulator CPU" for c in columns) + " |"
    lines += [header, "|---|" + "---|---|---|---|" * len(columns)]
    for name in [row[0] for row in ROWS] + [LOGIN]:
        cells = []
        for column in columns:
            counted = instructions.get(column.name, {}).get(name)
            cells += [cell(median(column.samples, name, "daemon_cpu_us")), cell(counted), cell(median(column.samples, name, "wall_us")),
                      cell(median(column.samples, name, "emulator_cpu_us"))]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = []
    for column in columns:
        cells += [cell(median(column.samples, "curl", "curl_cpu_us")), cell(instructions.get(column.name, {}).get("curl")),
                  cell(median(column.samples, "curl", "wall_us")), "—"]
    lines.append("| curl, keep-alive `decisions/authorize` (its own CPU) | " + " | ".join(cells) + " |")
    lines += ["", "CPU over the rounds, fastest–slowest (µs per call): how far the medians above can be trusted.", "",
              "| operation | " + " | ".join(c.name for c in columns) + " |", "|---|" + "---|" * len(columns)]
    for name, figure in [(row[0], "daemon_cpu_us") for row in ROWS] + [(LOGIN, "daemon_cpu_us"), ("curl", "curl_cpu_us")]:
        lines.append(f"| {name} | " + " | ".join(spread(c.samples, name, figure) for c in columns) + " |")
    lines += ["", "| ratio | " + " | ".join(c.name for c in columns) + " |", "|---|" + "---|" * len(columns)]
    ratios = []
    for column in columns:
        paired = round_ratios(column.samples)
        ratios.append(f"{statistics.median(paired):.2f}× ({min(paired):.2f}–{max(paired):.2f}×)" if paired else "—")
    lines.append(f"| getAuthorization CPU ÷ curl CPU, each pair's own ratio ({len(round_ratios(columns[0].samples))} pairs): "
                 "median (range) (goal ≤ 1.0×) | "
                 + " | ".join(ratios) + " |")
    if instructions:
        counted = []
        for column in columns:
            daemon, curl = (instructions.get(column.name, {}).get(key) for key in ("getAuthorization", "curl"))
            counted.append(f"{daemon / curl:.2f}×" if daemon and curl else "—")
        lines.append("| getAuthorization instructions ÷ curl instructions | " + " | ".join(counted) + " |")
    lines.append("| getAuthorization CPU less the host's leg alone, ÷ curl CPU (what the daemon adds to the request it makes) | "
                 + " | ".join(leg_ratio(c.samples) for c in columns) + " |")
    lines.append("| web login, daemon CPU (goal ≤ 2,000 µs) | " + " | ".join(
        cell(median(c.samples, LOGIN, "daemon_cpu_us")) + " µs" for c in columns) + " |")
    lines.append("| emulator CPU per decision (getAuthorization row; goal ≤ 300 µs) | " + " | ".join(
        cell(median(c.samples, "getAuthorization", "emulator_cpu_us")) + " µs" for c in columns) + " |")

    def idle(samples):
        total = statistics.median(sum(sample["idle"].values()) for sample in samples)
        split = ", ".join(f"{name} {rate:.1f}" for name, rate in sorted(samples[-1]["idle"].items()) if rate)
        return f"{total:.1f}" + (f" ({split})" if split else "")

    lines.append("| idle daemon's wake-ups per second: one connection with a requestor and a login, nothing asked (by thread, "
                 "last round) | " + " | ".join(idle(c.samples) for c in columns) + " |")
    if show_threads:
        for column in columns:
            last = column.samples[-1]
            names = sorted({name for row in last.values() for name in row.get("threads", {})})
            lines += ["", f"{column.name}: daemon CPU per call by thread (µs, last round), and the kernel's share of it", "",
                      "| operation | " + " | ".join(names) + " | system share |", "|---|" + "---|" * (len(names) + 1)]
            for name in [row[0] for row in ROWS] + [LOGIN]:
                threads = last[name]["threads"]
                lines.append(f"| {name} | " + " | ".join(cell(threads.get(t)) for t in names)
                             + f" | {last[name]['system_share']:.0%} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=str(ROOT.parent / ".build" / "release"))
    parser.add_argument("--passbridge", help="the daemon to measure (default: BIN_DIR/passbridge)")
    parser.add_argument("--emulator", help="its emulator (default: BIN_DIR/pass-emulator)")
    parser.add_argument("--before", help="a second daemon, in a column of its own")
    parser.add_argument("--before-emulator", help="the second daemon's emulator (default: the first's)")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--flows", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=3, help="getAuthorization slices per round, each followed by curl's")
    parser.add_argument("--instructions", action="store_true", help="also count instructions per call under callgrind")
    parser.add_argument("--threads", action="store_true", help="also print the daemon's CPU per thread")
    parser.add_argument("--idle-seconds", type=float, default=3, help="how long the idle daemon's wake-ups are counted")
    parser.add_argument("--mvpds", type=int, default=0,
                        help="the requestor lists this many MVPDs (the built-in ones, then made-up ones), as real ones list hundreds")
    args = parser.parse_args()
    if args.mvpds and args.mvpds < 4:
        parser.error("--mvpds: at least the built-in configuration's 4 (0 for the built-in configuration itself)")
    bin_dir = pathlib.Path(args.bin_dir)
    work = pathlib.Path(tempfile.mkdtemp(prefix="pb-cpu-bench-", dir="/tmp"))
    client = work / "ndjson-client"
    subprocess.run(["cc", "-O2", "-o", str(client), str(ROOT / "c-client" / "ndjson-client.c")], check=True)
    emulator = args.emulator or str(bin_dir / "pass-emulator")
    emulator_args = ["--config", str(many_mvpds_config(work, args.mvpds))] if args.mvpds else []
    columns = [Column("passbridge", args.passbridge or bin_dir / "passbridge", emulator, work, emulator_args)]
    if args.before:
        columns.append(Column("before", args.before, args.before_emulator or emulator, work, emulator_args))
    try:
        for column in columns:
            column.start()
        for number in range(args.rounds):
            for column in columns:
                column.round(client, args.calls, args.flows, args.idle_seconds, args.pairs)
            print(f"round {number + 1} of {args.rounds} done", file=sys.stderr, flush=True)
        instructions = {}
        if args.instructions:
            for column in columns:
                instructions[column.name] = column.instructions(client, max(50, args.calls // 10), max(3, args.flows // 10))
        print(report(columns, instructions, args.threads), flush=True)
    finally:
        for column in columns:
            try:
                column.stop()
            except Exception:  # noqa: BLE001  (a column that never started)
                pass
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
