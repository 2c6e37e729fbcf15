#!/usr/bin/env python3
"""Fuzzes the daemon's transport with mutated valid messages: NDJSON and Content-Length framing, the bytes split at
random points, over the Unix socket (`--transport socket`, the default) or over stdio (`--transport stdio`: the
daemon spawned with pipes, as a Python or Node host does). Not run by CI in full (it takes minutes; a short stdio run
is Tests/python/test_fuzz_smoke.py); run it by hand, see Tests/fuzz/README.md:

    PASSBRIDGE_BIN_DIR="$(swift build --show-bin-path)" python3 Tests/fuzz/fuzz_frames.py [--transport stdio] \
        [--frames N] [--seed S]

Each connection (socket) or daemon (stdio) gets frames in batches; every batch ends with a run of line breaks that
ends any damaged frame (Protocol/README.md: broken framing costs one message, never the session) and a sentinel
`echo` request, which must be answered. It reports, and exits 1 unless all failure counts are 0:
  crashes      socket: the daemon exited during the run or not with 0 at SIGTERM; stdio: a daemon killed by a
               signal or exiting non-zero
  early-exits  stdio: a daemon that exited 0 or closed its stdout before its stdin was closed (the protocol ends a
               stdio session only at end of input or SIGTERM)
  hangs        no answer to a sentinel, no output and no input read for 10 s while frames are pending, or no end
               within 10 s after the end of input (a socket connection not closed, a daemon not exited)
  unanswered   sentinels that got no answer, whatever the reason (a hang or an exit is also counted under its name)
  non-JSON     output that is not framed as the peer's framing requires, or a frame or line that is not strict
               UTF-8 JSON, or JSON that is not a JSON-RPC 2.0 message (an object, or a non-empty array of objects,
               with "jsonrpc": "2.0")
The bytes sent to a failing connection or daemon, and what came back, are kept in the --failures folder.
The bytes sent depend on --seed and the size options only; stdio daemon K draws from its own generator, so
`--only-daemon K` sends exactly what daemon K got in the full run.
"""
import argparse
import array
import collections
import fcntl
import json
import os
import pathlib
import random
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
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
SPLIT_SIZES = [1, 2, 7, 64, 1000, 4096, 65536]
TIMEOUT = 10.0
RECEIVED_KEPT = 4 << 20
FAILURES = ("crashes", "early-exits", "hangs", "unanswered", "non-JSON")


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


def frame(rng, body: bytes, framing: str, damaged: bool, counts=None) -> bytes:
    """One framed message; when `damaged`, sometimes mutated (then counted in counts["damaged"]). Content-Length
    values are only ever off by up to 100 bytes, so the run of line breaks before each sentinel always ends a
    damaged frame."""
    harmed = False
    if framing == "ndjson":
        line = body.replace(b"\n", b" ") + b"\n"
        if damaged and rng.random() < 0.3:
            line, harmed = mutate(rng, line), True
    else:
        if damaged and rng.random() < 0.3:
            body, harmed = mutate(rng, body), True
        length = len(body)
        if damaged and rng.random() < 0.3:
            length, harmed = max(0, length + rng.randint(-100, 100)), True
        header = b"Content-Length: %d\r\n" % length
        if rng.random() < 0.1:
            header += b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        if damaged and rng.random() < 0.05:
            junk = bytes(rng.choice(b"abcxyz{}[]:; \t\x00\xff") for _ in range(rng.randint(1, 40)))
            header = rng.choice([junk + b"\r\n" + header, header + junk + b"\r\n", junk + header])
            harmed = True
        line = header + b"\r\n" + body
    if counts is not None:
        counts["damaged"] += harmed
    return line


def sentinel_request(sentinel_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["end"], "id": sentinel_id}).encode()


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def is_jsonrpc(message) -> bool:
    items = message if isinstance(message, list) else [message]
    return bool(items) and all(isinstance(item, dict) and item.get("jsonrpc") == "2.0" for item in items)


class OutputChecker:
    """Reads the daemon's output as it arrives, in the framing the peer chose (the daemon answers in the peer's
    framing): counts what is not framed JSON-RPC (`bad`, the first one kept in `first_bad`) and records the ids of
    responses. Output that breaks Content-Length framing cannot be read further; the rest is counted as one."""
    HEADER = re.compile(rb"Content-Length: ([0-9]{1,12})\r\n\r\n")

    def __init__(self, framing: str):
        self.framing = framing
        self.buffer = bytearray()
        self.broken = False
        self.bad = 0
        self.first_bad = None
        self.responses = {}  # json.dumps(id) -> the response object

    def _fail(self, what, data):
        self.bad += 1
        if self.first_bad is None:
            self.first_bad = (what, bytes(data[:2000]))

    def _message(self, body):
        try:
            message = json.loads(body.decode("utf-8"), parse_constant=reject_constant)
        except ValueError as error:  # UnicodeDecodeError and json.JSONDecodeError are ValueErrors
            self._fail(f"not JSON ({error})", body)
            return
        if not is_jsonrpc(message):
            self._fail("not a JSON-RPC message", body)
            return
        for item in message if isinstance(message, list) else [message]:
            if "id" in item and "method" not in item:
                self.responses[json.dumps(item["id"])] = item

    def feed(self, data: bytes):
        if self.broken:
            return
        self.buffer += data
        if self.framing == "ndjson":
            *lines, rest = self.buffer.split(b"\n")
            self.buffer = bytearray(rest)
            for line in lines:
                self._message(bytes(line))
            return
        at = 0
        while True:
            match = self.HEADER.match(self.buffer, at)
            if not match:
                pending = self.buffer[at:]
                if b"\r\n\r\n" in pending[:40] or (pending and not b"Content-Length: ".startswith(pending[:16])):
                    self._fail("output not framed with Content-Length", pending)
                    self.broken = True
                    self.buffer = bytearray()
                    return
                break
            end = match.end() + int(match.group(1))
            if end > len(self.buffer):
                break
            self._message(bytes(self.buffer[match.end():end]))
            at = end
        del self.buffer[:at]

    def finish(self):
        """At end of output: an unfinished line or frame is not framed JSON."""
        if self.buffer and not self.broken:
            self._fail("output ends inside a line or frame", self.buffer)
        self.buffer = bytearray()

    def answered(self, sentinel_id: str):
        return self.responses.get(json.dumps(sentinel_id))


def keep_failure(folder: pathlib.Path, name: str, sent: bytes, received: bytes, log: bytes = b"", note: str = ""):
    """Writes what a failing connection or daemon was sent and what came back, for a reproduction."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.in").write_bytes(sent)
    (folder / f"{name}.out").write_bytes(received)
    if log:
        (folder / f"{name}.stderr").write_bytes(log)
    if note:
        (folder / f"{name}.txt").write_text(note + "\n")
    print(f"FAILURE {name}: {note} (bytes kept in {folder})", flush=True)


# --- socket ------------------------------------------------------------------------------------------------------

def split_send(rng, sock, data: bytes, received: list):
    at = 0
    while at < len(data):
        size = rng.choice(SPLIT_SIZES)
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


def run_socket(args, bin_dir, folder, failures, totals):
    rng = random.Random(args.seed)
    per_connection = args.per_connection or 400
    path = os.path.join(folder, "pb.sock")
    daemon = subprocess.Popen([str(bin_dir / "passbridge-test-daemon"), "--socket", path, "--log-level", "error"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=child_env(folder))
    while not os.path.exists(path):
        if daemon.poll() is not None:
            sys.exit(f"the daemon exited with {daemon.returncode} before listening")
        time.sleep(0.01)
    bodies = [json.dumps(seed).encode() for seed in SEEDS]
    started = time.monotonic()
    while totals["frames"] < args.frames and daemon.poll() is None:
        framing = rng.choice(["ndjson", "contentLength"])
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        received: list = []
        stream = bytearray()
        # The first frame is intact, so the framing is the one chosen.
        stream += frame(rng, bodies[0], framing, damaged=False)
        for _ in range(per_connection - 2):
            stream += frame(rng, rng.choice(bodies), framing, damaged=True, counts=totals)
        sentinel_id = f"sentinel-{totals['connections']}"
        stream += b"\r\n" * 256 + frame(rng, sentinel_request(sentinel_id), framing, damaged=False)
        hung = False
        try:
            split_send(rng, sock, bytes(stream), received)
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(TIMEOUT)
            while True:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                received.append(chunk)
        except (socket.timeout, TimeoutError):
            hung = True
            totals["hangs"] += 1
        except (ConnectionResetError, BrokenPipeError):
            pass
        sock.close()
        checker = OutputChecker(framing)
        checker.feed(b"".join(received))
        checker.finish()
        totals["non-JSON"] += checker.bad
        answer = checker.answered(sentinel_id)
        if answer is None:
            totals["unanswered"] += 1
        elif "error" in answer:
            totals["sentinel errors"] += 1
        if hung or answer is None or checker.bad:
            note = f"framing {framing}; hang {hung}; sentinel answered {answer is not None}; first bad {checker.first_bad}"
            keep_failure(failures, f"connection-{totals['connections']}", bytes(stream), b"".join(received), note=note)
        totals["frames"] += per_connection
        totals["connections"] += 1
        if totals["connections"] % 250 == 0:
            print(f"{totals} {time.monotonic() - started:.0f} s", flush=True)
    if daemon.poll() is not None:
        totals["crashes"] += 1
        print(f"FAILURE the daemon exited with {daemon.returncode} during the run", flush=True)
    else:
        daemon.send_signal(signal.SIGTERM)
        try:
            code = daemon.wait(2 * TIMEOUT)
        except subprocess.TimeoutExpired:
            daemon.kill()
            code = daemon.wait()
            totals["hangs"] += 1
        if code != 0:
            totals["crashes"] += 1
    return started


# --- stdio -------------------------------------------------------------------------------------------------------

class Stalled(Exception):
    """The daemon read no input and wrote no output for TIMEOUT seconds while it had something to do."""


class Ended(Exception):
    """The daemon closed its stdin or stdout, or exited."""


class StdioDaemon:
    """One `passbridge-test-daemon --stdio` with its three pipes, driven by one thread with a selector: output is
    read whenever it comes, so the daemon never waits on a full stdout pipe while the harness waits on its stdin."""

    def __init__(self, command, framing: str, env):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, bufsize=0, env=env)
        self.stdin = self.process.stdin.fileno()
        os.set_blocking(self.stdin, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout.fileno(), selectors.EVENT_READ, "stdout")
        self.selector.register(self.process.stderr.fileno(), selectors.EVENT_READ, "stderr")
        self.checker = OutputChecker(framing)
        self.sent = bytearray()
        self.received = collections.deque()  # the last RECEIVED_KEPT bytes or so of the output, in chunks
        self.received_bytes = 0
        self.log = bytearray()
        self.killed = False
        self.output_ended = False
        self.input_closed = False
        self.last_progress = time.monotonic()

    def unread_input(self) -> int:
        """Bytes written to stdin that the daemon has not read yet (FIONREAD works on either end of a pipe)."""
        count = array.array("i", [0])
        fcntl.ioctl(self.stdin, termios.FIONREAD, count)
        return count[0]

    def pump(self, timeout: float):
        """Reads what stdout and stderr have within `timeout` seconds."""
        for key, _ in self.selector.select(timeout):
            chunk = os.read(key.fd, 1 << 20)
            if key.data == "stderr":
                self.log = (self.log + chunk)[-65536:]
                if not chunk:
                    self.selector.unregister(key.fd)
                continue
            if not chunk:
                self.selector.unregister(key.fd)
                self.output_ended = True
                self.checker.finish()
                continue
            self.last_progress = time.monotonic()
            self.received.append(chunk)
            self.received_bytes += len(chunk)
            while self.received_bytes - len(self.received[0]) > RECEIVED_KEPT:
                self.received_bytes -= len(self.received.popleft())
            self.checker.feed(chunk)

    def _check_stall(self):
        if time.monotonic() - self.last_progress > TIMEOUT:
            raise Stalled()

    def write(self, chunk: bytes):
        """Writes `chunk`, then waits until the daemon has read it all, so the chunk's end is a read boundary."""
        self.last_progress = time.monotonic()
        view = memoryview(chunk)
        while view:
            if self.output_ended or self.process.poll() is not None:
                raise Ended()
            try:
                count = os.write(self.stdin, view)
            except BlockingIOError:
                self.pump(0.01)
                self._check_stall()
                continue
            except BrokenPipeError:
                raise Ended()
            self.sent += view[:count]
            view = view[count:]
            self.last_progress = time.monotonic()
        pending = self.unread_input()
        while pending:
            if self.output_ended or self.process.poll() is not None:
                raise Ended()
            self.pump(0.0005)
            now = self.unread_input()
            if now < pending:
                self.last_progress = time.monotonic()
            pending = now
            self._check_stall()

    def wait_for_answer(self, sentinel_id: str):
        """The sentinel's response; Stalled when it does not come within TIMEOUT seconds."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = self.checker.answered(sentinel_id)
            if answer is not None:
                return answer
            if self.output_ended:
                raise Ended()
            if time.monotonic() > deadline:
                raise Stalled()
            self.pump(0.05)

    def close_input(self):
        if not self.input_closed:
            self.input_closed = True
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass

    def wait_exit(self, timeout: float = TIMEOUT):
        """The exit status, reading output until it ends; None if the daemon is still there after `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.selector.get_map():
                self.pump(0.05)
            else:
                time.sleep(0.01)
            if self.output_ended and self.process.poll() is not None:
                while self.selector.get_map() and self.selector.select(0):
                    self.pump(0)  # the rest of stderr
                return self.process.returncode
        return None

    def kill(self):
        """SIGKILL; what the daemon was writing is cut, so its end is not checked."""
        self.killed = True
        self.process.kill()
        self.process.wait()
        for fd in list(self.selector.get_map()):
            self.selector.unregister(fd)

    def close(self):
        self.close_input()
        self.selector.close()
        self.process.stdout.close()
        self.process.stderr.close()


def chunks(rng, data: bytes):
    at = 0
    while at < len(data):
        size = rng.choice(SPLIT_SIZES)
        yield data[at:at + size]
        at += size


def run_one_daemon(index, args, command, env, bodies, totals, failures, frames_left):
    """Daemon `index`: batches of frames each ended by a sentinel, then end of input. Returns the frames sent."""
    rng = random.Random(f"{args.seed}:{index}")
    framing = rng.choice(["ndjson", "contentLength"])
    per_daemon = min(args.per_connection or 10_000, frames_left)
    per_batch = max(2, args.per_batch)
    daemon = StdioDaemon(command, framing, env)
    totals["connections"] += 1
    frames, problem, batch = 0, None, 0
    try:
        while frames < per_daemon:
            count = min(per_batch, per_daemon - frames)
            stream, damage = bytearray(), {"damaged": 0}
            for position in range(count - 1):
                if frames == 0 and position == 0:
                    # The daemon's first frame is intact, so the framing is the one chosen.
                    stream += frame(rng, bodies[0], framing, damaged=False)
                else:
                    stream += frame(rng, rng.choice(bodies), framing, damaged=True, counts=damage)
            sentinel_id = f"sentinel-{index}-{batch}"
            stream += b"\r\n" * 256 + frame(rng, sentinel_request(sentinel_id), framing, damaged=False)
            for chunk in chunks(rng, bytes(stream)):
                daemon.write(chunk)
            frames += count
            totals["damaged"] += damage["damaged"]
            if "error" in daemon.wait_for_answer(sentinel_id):
                totals["sentinel errors"] += 1
            batch += 1
        daemon.close_input()
        code = daemon.wait_exit()
        if code is None:
            totals["hangs"] += 1
            problem = f"still running {TIMEOUT:.0f} s after the end of its input"
            daemon.kill()
        elif code != 0:
            totals["crashes"] += 1
            problem = f"exited with {code} at the end of its input"
    except Stalled:
        totals["hangs"] += 1
        totals["unanswered"] += 1
        problem = f"stalled in batch {batch}: no answer or progress for {TIMEOUT:.0f} s"
        daemon.kill()
    except Ended:
        totals["unanswered"] += 1
        code = daemon.wait_exit()
        if code is None:
            totals["hangs"] += 1
            problem = f"closed its stdout in batch {batch} but did not exit within {TIMEOUT:.0f} s"
            daemon.kill()
        elif code != 0:
            totals["crashes"] += 1
            problem = f"exited with {code} in batch {batch}, before the end of its input"
        else:
            totals["early-exits"] += 1
            problem = f"exited 0 in batch {batch}, before the end of its input"
    if not daemon.killed:
        daemon.checker.finish()
    totals["non-JSON"] += daemon.checker.bad
    if daemon.checker.bad and problem is None:
        problem = f"{daemon.checker.bad} non-JSON output(s)"
    if problem:
        note = f"daemon {index} (seed {args.seed}), framing {framing}: {problem}; first bad output {daemon.checker.first_bad}"
        keep_failure(failures, f"daemon-{index}", bytes(daemon.sent), b"".join(daemon.received), bytes(daemon.log), note)
    daemon.close()
    return frames


def run_stdio(args, bin_dir, folder, failures, totals):
    command = [str(bin_dir / "passbridge-test-daemon"), "--stdio", "--log-level", "error"]
    env = child_env(folder)
    bodies = [json.dumps(seed).encode() for seed in SEEDS]
    per_daemon = args.per_connection or 10_000
    started = time.monotonic()
    daemons = -(-args.frames // per_daemon)
    indexes = [args.only_daemon] if args.only_daemon is not None else range(daemons)
    for index in indexes:
        # Daemon K gets per_daemon frames, the last one what is left, as in the full run.
        frames_left = args.frames - index * per_daemon
        totals["frames"] += run_one_daemon(index, args, command, env, bodies, totals, failures,
                                           min(per_daemon, frames_left) if frames_left > 0 else per_daemon)
        if (index + 1) % args.progress == 0:
            print(f"{totals} {time.monotonic() - started:.0f} s", flush=True)
    return started


def child_env(folder):
    """The daemons' environment: their temporary state folders go under the harness's own, removed at the end."""
    env = dict(os.environ)
    env["TMPDIR"] = folder
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["socket", "stdio"], default="socket")
    parser.add_argument("--frames", type=int, default=1_000_000, help="frames in all (default 1,000,000)")
    parser.add_argument("--per-connection", type=int, default=None,
                        help="frames per socket connection (default 400) or per stdio daemon (default 10,000)")
    parser.add_argument("--per-batch", type=int, default=400,
                        help="stdio: frames per batch, the last one its sentinel (default 400)")
    parser.add_argument("--only-daemon", type=int, default=None, metavar="K",
                        help="stdio: run daemon K of the full run alone (to reproduce a failure)")
    parser.add_argument("--failures", type=pathlib.Path, default=None,
                        help="folder for the bytes of failing connections or daemons (default: a new one in /tmp)")
    parser.add_argument("--progress", type=int, default=10, help="stdio: print the counts every N daemons")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bin_dir = pathlib.Path(os.environ.get("PASSBRIDGE_BIN_DIR", ".build/debug"))
    if not (bin_dir / "passbridge-test-daemon").exists():
        sys.exit(f"{bin_dir / 'passbridge-test-daemon'} is missing: swift build --product passbridge-test-daemon")
    folder = tempfile.mkdtemp(prefix="pb-fuzz-", dir="/tmp")
    failures = args.failures or pathlib.Path(f"/tmp/pb-fuzz-failures-{args.transport}-seed{args.seed}-{os.getpid()}")
    totals = {"frames": 0, "damaged": 0, "connections": 0, "crashes": 0, "early-exits": 0, "hangs": 0,
              "unanswered": 0, "non-JSON": 0, "sentinel errors": 0}
    run = run_stdio if args.transport == "stdio" else run_socket
    try:
        started = run(args, bin_dir, folder, failures, totals)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    elapsed = time.monotonic() - started
    print(f"{totals} in {elapsed:.0f} s")
    print("RESULT " + json.dumps({"transport": args.transport, "seed": args.seed, **totals, "seconds": round(elapsed, 1)}))
    sys.exit(1 if any(totals[key] for key in FAILURES) else 0)


if __name__ == "__main__":
    main()
