#!/usr/bin/env python3
"""Fuzzes the daemon's transport with mutated valid messages: NDJSON and Content-Length framing, every
connection's bytes split at random points. Not run by CI (it takes minutes); run it by hand:

    PASSBRIDGE_BIN_DIR="$(swift build --show-bin-path)" python3 Tests/fuzz/fuzz_frames.py [--frames N] [--seed S]

It reports, and exits 1 unless all are 0:
  crashes     the daemon exited during the run
  hangs       connections the daemon did not close within 10 s after the peer's end of input
  unanswered  sentinel requests (sent after the fuzzed frames and a run of line breaks that ends any damaged
              frame, as Protocol/README.md's framing rule allows) that got no answer
  non-JSON    output frames or lines that are not JSON, or output that is not framed
"""
import argparse
import json
import os
import pathlib
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SEEDS = [
    {"jsonrpc": "2.0", "method": "echo", "params": ["é😀✓", 1, 2.5, None, {"a": [True, False]}], "id": 1},
    {"jsonrpc": "2.0", "method": "sum", "params": [1, 2, 3, 4.5], "id": "s"},
    {"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 18446744073709551617},
    {"jsonrpc": "2.0", "method": "get_data", "id": None},
    {"jsonrpc": "2.0", "method": "update", "params": [1, 2]},
    {"jsonrpc": "2.0", "method": "test/sleep", "params": {"ms": 1, "result": "late"}, "id": 7},
    {"jsonrpc": "2.0", "method": "no/such", "id": 9},
    {"jsonrpc": "2.0", "id": "pb-1", "result": {}},
    [{"jsonrpc": "2.0", "method": "sum", "params": [1], "id": 10}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
     {"foo": "boo"}, {"jsonrpc": "2.0", "method": "echo", "params": {"x": "y"}, "id": 11}],
    [],
    {"jsonrpc": "2.0", "method": "rpc.discover", "id": 12},
]
INTERESTING = [b"\x00", b"\xff", b"\xc3", b"\"", b"\\", b"{", b"}", b"[", b"]", b",", b":", b"\n", b"\r\n",
               b"Content-Length: ", b"\r\n\r\n", b"1e999", b"-0", b"\\u0000", b"\\ud800", b"null"]


def mutate(rng, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        at = rng.randint(0, len(data))
        if kind == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[at:at] = rng.choice(INTERESTING)
        elif kind == 2 and data:
            del data[at:at + rng.randint(1, 8)]
        elif kind == 3:
            data = data[:at]
        elif kind == 4 and data:
            end = min(len(data), at + rng.randint(1, 16))
            data[at:at] = data[at:end]
        else:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(data)


def frame(rng, body: bytes, framing: str, damaged: bool) -> bytes:
    """One framed message; when `damaged`, sometimes mutated. Content-Length values are only ever off by up
    to 100 bytes, so the run of line breaks before each sentinel always ends a damaged frame."""
    if framing == "ndjson":
        line = body.replace(b"\n", b" ") + b"\n"
        return mutate(rng, line) if damaged and rng.random() < 0.3 else line
    if damaged and rng.random() < 0.3:
        body = mutate(rng, body)
    length = len(body)
    if damaged and rng.random() < 0.3:
        length = max(0, length + rng.randint(-100, 100))
    header = b"Content-Length: %d\r\n" % length
    if rng.random() < 0.1:
        header += b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    if damaged and rng.random() < 0.05:
        junk = bytes(rng.choice(b"abcxyz{}[]:; \t\x00\xff") for _ in range(rng.randint(1, 40)))
        header = rng.choice([junk + b"\r\n" + header, header + junk + b"\r\n", junk + header])
    return header + b"\r\n" + body


def split_send(rng, sock, data: bytes, received: list):
    at = 0
    while at < len(data):
        size = rng.choice([1, 2, 7, 64, 1000, 4096, 65536])
        sock.sendall(data[at:at + size])
        at += size
        drain(sock, received)


def drain(sock, received: list):
    sock.setblocking(False)
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            received.append(chunk)
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)


def parse_output(data: bytes):
    """(bodies, non-JSON count) of the daemon's output in whichever framing it used."""
    bodies, bad = [], 0
    if data.lstrip().startswith(b"Content-Length"):
        rest = data
        while rest:
            header, sep, rest = rest.partition(b"\r\n\r\n")
            if not sep or not header.startswith(b"Content-Length: "):
                return bodies, bad + 1
            length = int(header.split(b": ")[1])
            body, rest = rest[:length], rest[length:]
            bodies.append(body)
    else:
        bodies = [line for line in data.split(b"\n") if line]
        if data and not data.endswith(b"\n"):
            bad += 1
    parsed = []
    for body in bodies:
        try:
            parsed.append(json.loads(body))
        except ValueError:
            bad += 1
    return parsed, bad


def answered_ids(messages):
    ids = set()
    for message in messages:
        for element in message if isinstance(message, list) else [message]:
            if isinstance(element, dict) and "id" in element and "method" not in element:
                ids.add(json.dumps(element["id"]))
    return ids


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--per-connection", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bin_dir = pathlib.Path(os.environ.get("PASSBRIDGE_BIN_DIR", ".build/debug"))
    folder = tempfile.mkdtemp(prefix="pb-fuzz-", dir="/tmp")
    path = os.path.join(folder, "pb.sock")
    daemon = subprocess.Popen([str(bin_dir / "passbridge-test-daemon"), "--socket", path, "--log-level", "error"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(path):
        time.sleep(0.01)
    bodies = [json.dumps(seed).encode() for seed in SEEDS]
    totals = {"frames": 0, "connections": 0, "crashes": 0, "hangs": 0, "unanswered": 0, "non-JSON": 0}
    started = time.monotonic()
    while totals["frames"] < args.frames and daemon.poll() is None:
        framing = rng.choice(["ndjson", "contentLength"])
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        received: list = []
        stream = bytearray()
        # The first frame is intact, so the framing is the one chosen.
        stream += frame(rng, bodies[0], framing, damaged=False)
        for _ in range(args.per_connection - 2):
            stream += frame(rng, rng.choice(bodies), framing, damaged=True)
        sentinel_id = f"sentinel-{totals['connections']}"
        sentinel = json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["end"], "id": sentinel_id}).encode()
        stream += b"\r\n" * 256 + frame(rng, sentinel, framing, damaged=False)
        split_send(rng, sock, bytes(stream), received)
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(10)
        try:
            while True:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                received.append(chunk)
        except (socket.timeout, TimeoutError):
            totals["hangs"] += 1
        except ConnectionResetError:
            pass
        sock.close()
        messages, bad = parse_output(b"".join(received))
        totals["non-JSON"] += bad
        if json.dumps(sentinel_id) not in answered_ids(messages):
            totals["unanswered"] += 1
        totals["frames"] += args.per_connection
        totals["connections"] += 1
        if totals["connections"] % 250 == 0:
            print(f"{totals} {time.monotonic() - started:.0f} s", flush=True)
    if daemon.poll() is not None:
        totals["crashes"] += 1
    else:
        daemon.send_signal(signal.SIGTERM)
        if daemon.wait(20) != 0:
            totals["crashes"] += 1
    shutil.rmtree(folder, ignore_errors=True)
    print(f"{totals} in {time.monotonic() - started:.0f} s")
    failed = any(totals[key] for key in ("crashes", "hangs", "unanswered", "non-JSON"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
