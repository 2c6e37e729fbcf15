"""The transport under hostile and broken peers, with the real daemon over real pipes and sockets: work linear in
the bytes, output bounded per peer, framing that resynchronizes, logging that never blocks, the relay under
back-pressure, socket access and running out of file descriptors."""
import datetime
import json
import os
import pathlib
import re
import resource
import select
import signal
import socket
import subprocess
import threading
import time

import pytest

from rpc_helper import ByteReader, SocketDaemon, StdioDaemon, wait_for_socket

ROOT = pathlib.Path(__file__).resolve().parents[2]


def instructions_to_echo(test_daemon, count, scratch) -> int:
    """Instructions (callgrind's total, user space) that `passbridge-test-daemon` runs to start, read one `echo`
    (a test method) whose params carry `count` doubles, write the result that echoes them, and exit at the end of
    its input. callgrind counts instructions, not seconds: other processes on the machine cannot move the figure,
    and with Swift's deterministic hashing two runs agree within 0.1 %."""
    junk = [0.5 + index / 7 for index in range(count)]
    request = {"jsonrpc": "2.0", "method": "echo", "params": {"junk": junk}, "id": count}
    out = scratch / f"callgrind.{count}"
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no", str(test_daemon)],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=300,
        env={**os.environ, "SWIFT_DETERMINISTIC_HASHING": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == {"jsonrpc": "2.0", "id": count, "result": {"junk": junk}}
    collected = re.search(r"Collected : (\d+)", run.stderr)
    assert collected, run.stderr[-2000:]
    return int(collected.group(1))


def test_echoing_doubles_takes_work_proportional_to_their_count(test_daemon, tmp_path):
    """The work of an echo, less the daemon's start and exit (an echo of no doubles), grows tenfold for ten times
    the doubles: 10.0× measured; a parser or writer quadratic in the bytes would be 100×. (Before the writer was
    linear, 40,000 doubles took 46 s.)"""
    # valgrind 3.19 cannot read the DWARF 5 of a Swift 6 build: a copy without debug info (its symbols stay).
    binary = tmp_path / "passbridge-test-daemon"
    subprocess.run(["strip", "--strip-debug", "-o", str(binary), test_daemon], check=True)
    start = instructions_to_echo(binary, 0, tmp_path)
    small = instructions_to_echo(binary, 4_000, tmp_path) - start
    large = instructions_to_echo(binary, 40_000, tmp_path) - start
    ratio = large / small
    print(f"instructions: start and exit {start:,}; 4,000 doubles {small:,}; 40,000 doubles {large:,} ({ratio:.2f}×)")
    assert ratio <= 11, f"4,000 doubles {small:,} instructions, 40,000 doubles {large:,} ({ratio:.2f}×)"


# --- back-pressure: a peer that never reads costs at most the high-water mark plus one message ------------------

HIGH_WATER = 1 << 20
# What a peer that never reads may cost beyond the output it is owed: the rest of its last read, held unparsed.
ONE_READ = 64 * 1024
# The allocator keeps what the first peer's transient buffers freed, and reuses it for the next peers.
SLACK = 1 << 20
DISCOVER = (json.dumps({"jsonrpc": "2.0", "method": "rpc.discover", "id": 1}) + "\n").encode()


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def settled_rss(pid, timeout=8.0):
    """The daemon's RSS once it stopped changing for half a second (it has done all it will do)."""
    deadline = time.monotonic() + timeout
    last, since = rss_bytes(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = rss_bytes(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= 0.5:
            break
    return last


def one_discover_answer_bytes(client):
    return len(json.dumps(client.call("rpc.discover"), separators=(",", ":")).encode()) + 40


@pytest.mark.parametrize("batched", [False, True], ids=["lines", "batch"])
def test_socket_peers_that_never_read_cost_at_most_the_high_water_mark_each(bin_dir, short_tmp, batched):
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", "--state-dir", str(short_tmp / "state"))
    try:
        probe = daemon.client()
        message = one_discover_answer_bytes(probe)
        before = settled_rss(daemon.process.pid)
        hogs = []
        for _ in range(4):
            hog = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            hog.connect(daemon.path)
            if batched:
                calls = [{"jsonrpc": "2.0", "method": "rpc.discover", "id": n} for n in range(1000)]
                hog.sendall((json.dumps(calls) + "\n").encode())
            else:
                hog.sendall(DISCOVER * 1000)
            hogs.append(hog)
        grown = settled_rss(daemon.process.pid) - before
        # Measured: 4.8 MB (lines) and 5.1 MB (batch) for 4 peers; 203 MB before output was bounded per message.
        assert grown <= 4 * (HIGH_WATER + message + ONE_READ) + SLACK, f"RSS grew by {grown} bytes"
        # The others are still served.
        assert probe.call("rpc.discover", timeout=5)["openrpc"] == "1.3.2"
        for hog in hogs:
            hog.close()
    finally:
        assert daemon.stop() == 0


def test_a_stdio_host_that_never_reads_costs_at_most_the_high_water_mark(bin_dir, tmp_path):
    daemon = subprocess.Popen([str(bin_dir / "passbridge"), "--stdio", "--state-dir", str(tmp_path / "state")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        os.set_blocking(daemon.stdin.fileno(), False)
        sent = 0
        payload = DISCOVER * 1000
        os.write(daemon.stdin.fileno(), DISCOVER)
        message = len(daemon.stdout.readline())
        before = settled_rss(daemon.pid)
        deadline = time.monotonic() + 5
        while sent < len(payload) and time.monotonic() < deadline:
            try:
                sent += os.write(daemon.stdin.fileno(), payload[sent:])
            except BlockingIOError:
                time.sleep(0.05)
        grown = settled_rss(daemon.pid) - before
        assert grown <= HIGH_WATER + message + ONE_READ + SLACK, f"RSS grew by {grown} bytes"  # measured 1.2 MB
        # Reading now gets every answer, in order: nothing was dropped.
        os.set_blocking(daemon.stdin.fileno(), True)
        daemon.stdin.write(payload[sent:])
        daemon.stdin.close()
        answers = daemon.stdout.read().splitlines()
        assert len(answers) == 1000 and all(json.loads(a)["result"]["openrpc"] == "1.3.2" for a in answers[:3])
        assert daemon.wait(20) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()


# --- framing: a wrong Content-Length costs one message, never the session ----------------------------------

def framed(text):
    body = text.encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def calls_answered_from_two_threads():
    """3,000 setRequestor (answered on the engine's thread: the backend is unreachable) each followed by a
    checkAuthentication, an rpc.discover (about 50 KB of answer) after every third, then rpc.stats "FINAL": answers
    written by the engine while the loop feeds input it held back. Returns (input bytes, ids expected)."""
    lines = []
    for i in range(3000):
        lines.append({"jsonrpc": "2.0", "id": i, "method": "setRequestor", "params": {"requestorID": "REF"}})
        lines.append({"jsonrpc": "2.0", "id": 100_000 + i, "method": "checkAuthentication"})
        if i % 3 == 0:
            lines.append({"jsonrpc": "2.0", "id": 200_000 + i, "method": "rpc.discover"})
    lines.append({"jsonrpc": "2.0", "id": "FINAL", "method": "rpc.stats"})
    ids = [line["id"] for line in lines]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines), ids


def test_held_input_is_read_again_whichever_thread_drained_the_output(bin_dir, tmp_path, short_tmp):
    """Protocol/README.md, "Back-pressure": reading goes on once the peer has read enough. A wake-up asked for by
    the engine's thread while the loop fed held input outlived that input, and the next pause then asked for none:
    the connection never read again (12 of 12 socket runs stalled after about 2,000 lines; 1 in 6 over stdio). Every
    request is answered, over a socket read while it writes and over pipes."""
    data, ids = calls_answered_from_two_threads()
    args = ["--state-dir", str(tmp_path / "state"), "--backend", "http://127.0.0.1:1", "--stall-timeout", "60"]
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *args)
    try:
        for run in range(2):
            peer = daemon.connect(timeout=30)
            threading.Thread(target=peer.sendall, args=(data,), daemon=True).start()
            reader, answered = ByteReader(peer.fileno()), []
            while len(answered) < len(ids):
                message = json.loads(reader.line(timeout=30))
                if "method" not in message:
                    answered.append(message["id"])
            assert sorted(map(str, answered)) == sorted(map(str, ids)), f"run {run}"
            peer.close()
    finally:
        assert daemon.stop() == 0
    for run in range(3):
        piped = subprocess.run([str(bin_dir / "passbridge"), *args], input=data, capture_output=True, timeout=120)
        assert piped.returncode == 0, piped.stderr[-2000:]
        answered = [m["id"] for m in map(json.loads, piped.stdout.splitlines()) if "method" not in m]
        assert sorted(map(str, answered)) == sorted(map(str, ids)), f"pipes, run {run}"


def test_input_left_in_a_closed_pipe_is_read_to_its_end_after_the_held_input(test_daemon):
    """Protocol/README.md, "Back-pressure", over pipes: the host writes, closes stdin while the daemon holds input
    back, and only then reads. The pipe without writers leaves epoll, so once the held input is used the daemon reads
    what is left directly; it stopped after the first such read when that read's messages left the output under
    the mark, and never saw the end of its input (the daemon waited for more, forever; two fresh-clone CI runs timed
    out that way in the test above). Every request is answered and the daemon exits 0."""
    daemon = StdioDaemon(test_daemon, raw=True)
    ignored = b'{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}\n'  # a notification: no answer
    # About 1.3 MB of notifications answer one request: the output passes the 1 MiB mark and stays there.
    daemon.write(b'{"jsonrpc":"2.0","method":"test/notify","params":{"count":30000},"id":"flood"}\n' + ignored * 100)
    assert json.loads(daemon.reader.line(timeout=30))["method"] == "test/event"
    # Room is left in the stdin pipe (64 KiB): what the daemon read is held, this waits unread behind it.
    daemon.write(ignored * 500 + b'{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"last"}\n' + ignored * 100)
    daemon.close_input()
    answers = {}
    while True:
        try:
            line = daemon.reader.line(timeout=30)
        except EOFError:
            break
        except TimeoutError:
            pytest.fail(f"no end of output; answers so far: {answers}")
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = message["result"]
    assert answers == {"flood": {"sent": 30000}, "last": 3}
    assert daemon.process.wait(10) == 0
    daemon.stop()


def polled_fds(pid: int) -> set[int]:
    """The fds that process `pid`'s epoll instances watch (/proc/PID/fdinfo, "tfd:" lines)."""
    watched = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:[eventpoll]":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                watched |= {int(line.split()[1]) for line in info if line.startswith("tfd:")}
        except FileNotFoundError:
            pass
    return watched


def test_a_fifo_opened_again_after_its_writer_left_is_polled_again(test_daemon, tmp_path):
    """The case beside the one above: stdin is a FIFO, its writer leaves while input is held (the daemon stops
    polling it), and another writer opens it before the held input is used. The direct read then finds the FIFO
    empty but not ended; the daemon polls it again, answers what the new writer sends, and ends with it."""
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(fifo, os.O_WRONLY)
    daemon = subprocess.Popen([test_daemon, "--stdio"], stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    os.close(read_end)
    try:
        reader = ByteReader(daemon.stdout.fileno())
        ignored = b'{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}\n'
        os.write(writer, b'{"jsonrpc":"2.0","method":"test/notify","params":{"count":30000},"id":"flood"}\n' + ignored * 100)
        assert json.loads(reader.line(timeout=30))["method"] == "test/event"
        os.close(writer)
        deadline = time.monotonic() + 30
        while 0 in polled_fds(daemon.pid):  # the hang-up seen with input held: stdin leaves epoll
            assert time.monotonic() < deadline, "stdin still polled after its writer left"
            time.sleep(0.01)
        writer = os.open(fifo, os.O_WRONLY)
        while "flood" not in json.loads(reader.line(timeout=30)).get("id", ""):
            pass
        os.write(writer, b'{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"last"}\n')
        assert json.loads(reader.line(timeout=30)) == {"jsonrpc": "2.0", "id": "last", "result": 3}
        os.close(writer)
        writer = -1
        assert daemon.wait(10) == 0
    finally:
        if writer >= 0:
            os.close(writer)
        daemon.kill()
        daemon.wait()
        daemon.stdout.close()


def test_a_content_length_one_byte_short_costs_only_that_request(test_daemon):
    daemon = StdioDaemon(test_daemon, raw=True)
    counted = '{"jsonrpc":"2.0","method":"echo","params":["é"],"id":1}'
    short = b"Content-Length: %d\r\n\r\n" % len(counted) + counted.encode()  # characters counted, not bytes
    daemon.write(short + framed('{"jsonrpc":"2.0","method":"echo","params":["next"],"id":2}'))
    first = json.loads(daemon.reader.frame())
    assert first["id"] is None and first["error"]["code"] == -32700
    assert json.loads(daemon.reader.frame()) == {"jsonrpc": "2.0", "id": 2, "result": ["next"]}
    # The session goes on.
    daemon.write(framed('{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":3}'))
    assert json.loads(daemon.reader.frame()) == {"jsonrpc": "2.0", "id": 3, "result": 3}
    code, rest, _ = daemon.finish()
    assert code == 0 and rest == b""


def test_a_stdio_daemon_whose_output_is_gone_stops_at_once(test_daemon):
    daemon = StdioDaemon(test_daemon, raw=True)
    daemon.process.stdout.close()
    daemon.write('{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}\n')
    # stdin stays open: the failed write alone ends the session.
    assert daemon.process.wait(5) == 0
    daemon.stop()


# --- logging never blocks the protocol ---------------------------------------------------------------------

def test_a_stderr_pipe_nobody_reads_does_not_stall_the_daemon(test_daemon):
    daemon = StdioDaemon(test_daemon, "--log-level", "debug", raw=True, drain_stderr=False)
    # Each bad line logs a debug line: far more than the 64 KiB a pipe holds.
    daemon.write(b'{"bad\n' * 3000)
    for _ in range(3000):
        assert json.loads(daemon.reader.line(timeout=10))["error"]["code"] == -32700
    assert daemon.roundtrip('{"jsonrpc":"2.0","method":"echo","params":["answered"],"id":1}', timeout=5) == \
        b'{"jsonrpc":"2.0","id":1,"result":["answered"]}'
    # Once stderr is read, the count of the lines that did not fit is logged.
    daemon.close_input()
    log = daemon.process.stderr.read().decode()
    assert daemon.process.wait(10) == 0
    assert "log lines dropped: stderr was not read fast enough" in log
    daemon.stop()


def log_lines(program, journal_stream) -> list[str]:
    """The stderr lines of `program --stdio --log-level debug` fed one bad line, its stderr a pipe and
    JOURNAL_STREAM set by `journal_stream(stat of that pipe)` (journald sets DEVICE:INODE of the stream it hands)."""
    read_end, write_end = os.pipe()
    info = os.fstat(write_end)
    env = {**os.environ, "JOURNAL_STREAM": journal_stream(info)}
    with subprocess.Popen([program, "--stdio", "--log-level", "debug"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          stderr=write_end, env=env) as process:
        os.close(write_end)
        process.communicate(b'{"bad\n', timeout=20)
        with os.fdopen(read_end, "rb") as log:
            return log.read().decode().splitlines()


def test_under_journald_each_line_carries_its_syslog_priority_and_no_time(test_daemon):
    lines = log_lines(test_daemon, lambda info: f"{info.st_dev}:{info.st_ino}")
    assert lines and all(line[:3] in ("<7>", "<6>", "<4>", "<3>") for line in lines), lines
    assert any(line.startswith("<7>passbridge[") and "parse error" in line for line in lines), lines


RFC3339_UTC_MS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


@pytest.mark.parametrize("stream", ["other", "unset"])
def test_outside_journald_each_line_starts_with_its_utc_time(test_daemon, stream):
    """JOURNAL_STREAM naming another stream (a child of a service whose stderr was redirected) is not journald."""
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    lines = log_lines(test_daemon, lambda info: f"{info.st_dev}:{info.st_ino + 1}" if stream == "other" else "")
    after = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
    assert lines and all(re.match(RFC3339_UTC_MS + r" passbridge\[\d+\] (trace|debug|info|warning|error) ", line) for line in lines), lines
    assert any("parse error" in line for line in lines), lines
    for line in lines:
        stamp = datetime.datetime.strptime(line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        assert before <= stamp <= after, line


def test_the_emulators_log_lines_follow_the_same_rule(bin_dir):
    for journal_stream, pattern in [(lambda info: f"{info.st_dev}:{info.st_ino}", r"pass-emulator: "),
                                    (lambda info: "", RFC3339_UTC_MS + r" pass-emulator: ")]:
        read_end, write_end = os.pipe()
        env = {**os.environ, "JOURNAL_STREAM": journal_stream(os.fstat(write_end))}
        with subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0", "--exit-on-eof"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=write_end, env=env, text=True) as process:
            os.close(write_end)
            process.stdout.readline()
            process.stdin.close()
            assert process.wait(timeout=10) == 0
            with os.fdopen(read_end, "rb") as log:
                lines = log.read().decode().splitlines()
        assert any("serving REF, REF2 at http://127.0.0.1:" in line for line in lines), lines
        assert lines and all(re.fullmatch(pattern + ".*", line) for line in lines), lines


def test_a_terminal_read_only_after_end_of_input_still_gets_every_answer(test_daemon):
    """Protocol/README.md, "Lifecycle" 6: a stdout that is not a pipe or a socket (here a terminal) is written by a relay
    thread, and at end of input it gets the shutdown timeout to take the output, as a pipe does. 100 answers (105 KB)
    fit in the relay's pipe and buffer and the terminal's 18 KiB, so the daemon's loop ends (it closes stdin) with the
    host having read nothing; the host then waits 2 s and reads. With the 1 s the relay had, the process exited with
    most of the output unwritten (a breaking pass found 253–261 of 300 answers with a reader that paused)."""
    import pty
    import tty
    leader, follower = pty.openpty()
    tty.setraw(follower)
    requests = b"".join(b'{"jsonrpc":"2.0","method":"echo","params":{"pad":"%s"},"id":%d}\n' % (b"e" * 1000, n)
                        for n in range(100))
    daemon = subprocess.Popen([test_daemon, "--stdio", "--shutdown-timeout", "30"], stdin=subprocess.PIPE,
                              stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    stdin_pipe = f"pipe:[{os.fstat(daemon.stdin.fileno()).st_ino}]"
    daemon.stdin.write(requests)
    daemon.stdin.close()

    def reads_stdin() -> bool:  # fd 0 may be given to another file once the daemon has closed its stdin
        try:
            return os.readlink(f"/proc/{daemon.pid}/fd/0") == stdin_pipe
        except FileNotFoundError:
            return False

    output = bytearray()
    try:
        deadline = time.monotonic() + 60
        while reads_stdin():
            assert time.monotonic() < deadline, "the daemon never closed its stdin"
            time.sleep(0.01)
        time.sleep(2)
        while time.monotonic() < deadline:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's last writer is gone and nothing is left
                break
            if not chunk:
                break
            output += chunk
        assert daemon.wait(30) == 0
    finally:
        daemon.kill()
        daemon.wait()
        os.close(leader)
    lines = bytes(output).split(b"\n")
    assert lines[-1] == b"", f"the output ends inside a line, after {len(lines) - 1} answers"
    assert [json.loads(line)["id"] for line in lines[:-1]] == list(range(100))


# --- the relay under back-pressure -------------------------------------------------------------------------

def relay_calls(relay, path, count, method="echo", params="[%d]"):
    """Pipes `count` requests through `passbridge-relay PATH` at once; returns (exit code, answer lines)."""
    relay = subprocess.Popen([relay, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    lines = b"".join(b'{"jsonrpc":"2.0","method":"%s","params":%s,"id":%d}\n' % (method.encode(), (params % n).encode(), n)
                     for n in range(count))
    writer = threading.Thread(target=lambda: (relay.stdin.write(lines), relay.stdin.close()), daemon=True)
    writer.start()
    answers = relay.stdout.read().splitlines()
    writer.join(30)
    code = relay.wait(30)
    relay.stdout.close()
    relay.stderr.close()
    return code, answers


def test_the_relay_gets_every_answer_of_60000_calls_through_back_pressure(socket_daemon, relay):
    daemon = socket_daemon("--stall-timeout", "2")
    code, answers = relay_calls(relay, daemon.path, 60_000)
    assert code == 0
    assert len(answers) == 60_000
    assert json.loads(answers[-1]) == {"jsonrpc": "2.0", "id": 59_999, "result": [59_999]}


def test_the_relay_exits_non_zero_when_the_daemon_dies_midway(socket_daemon, relay):
    daemon = socket_daemon()
    threading.Timer(0.3, daemon.process.kill).start()
    code, answers = relay_calls(relay, daemon.path, 500, method="test/sleep", params='{"ms":%d}')
    assert code == 1 and len(answers) < 2_000


def test_the_relay_names_a_reset_by_what_it_lost(relay, short_tmp):
    """A peer that closes with our requests unread resets the connection. The relay said "connection to the daemon
    failed: Connection reset by peer" (a breaking pass); it is a close like any other, and the relay says what was
    lost: here 3 requests, sent and unanswered, stdin still open."""
    import socket
    path = str(short_tmp / "reset.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    proc = subprocess.Popen([relay, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        peer, _ = server.accept()
        proc.stdin.write(b"".join(b'{"jsonrpc":"2.0","method":"echo","params":[%d],"id":%d}\n' % (n, n) for n in range(3)))
        proc.stdin.flush()
        received = b""
        while received.count(b"\n") < 3:  # all three are in our receive queue, unread
            received = peer.recv(4096, socket.MSG_PEEK)
        peer.close()
        assert proc.wait(timeout=30) == 1
        assert proc.stderr.read().decode() == "passbridge-relay: the daemon closed the connection with 3 of 3 requests unanswered\n"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
        server.close()


def passbridge_call_session(passbridge, path, lines):
    script = ROOT / "Clients" / "shell" / "passbridge-call"
    return subprocess.run([str(script), "--socket", path, "--session"], input=lines, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PASSBRIDGE": passbridge})


def test_passbridge_call_sessions_run_through_the_relay(socket_daemon, passbridge):
    # 500 by default (bash reads each answer before the next call: ~2 ms a call); PASSBRIDGE_CALL_COUNT=60000
    # runs the full count (measured: 60,000 answers, exit 0, 108 s with a debug build).
    count = int(os.environ.get("PASSBRIDGE_CALL_COUNT", "500"))
    daemon = socket_daemon("--stall-timeout", "2")
    result = passbridge_call_session(passbridge, daemon.path, "".join(f"sum [{n}, 1]\n" for n in range(count)))
    assert result.returncode == 0, result.stderr
    answers = result.stdout.splitlines()
    assert len(answers) == count and json.loads(answers[-1]) == {"jsonrpc": "2.0", "id": count, "result": count}


def test_passbridge_call_fails_when_the_daemon_is_killed_midway(socket_daemon, passbridge):
    daemon = socket_daemon()
    threading.Timer(0.5, daemon.process.kill).start()
    result = passbridge_call_session(passbridge, daemon.path, 'test/sleep {"ms": 5}\n' * 2000)
    assert result.returncode == 2 and "the daemon" in result.stderr
    assert len(result.stdout.splitlines()) < 2000


# --- signals -----------------------------------------------------------------------------------------------

def test_sigterm_while_the_backend_starts_stops_cleanly(passbridge, tmp_path):
    daemon = subprocess.Popen([passbridge, "--stdio", "--backend", "emulator", "--state-dir", str(tmp_path / "state")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Once the emulator child exists, the daemon is inside Backend.start (its signal thread runs already).
    children = pathlib.Path(f"/proc/{daemon.pid}/task/{daemon.pid}/children")
    deadline = time.monotonic() + 10
    while not children.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.005)
    daemon.send_signal(signal.SIGTERM)
    out, err = daemon.communicate(timeout=20)
    assert daemon.returncode == 0, err
    assert out == b""


def test_a_second_sigterm_during_a_stuck_drain_ends_the_daemon(test_daemon):
    daemon = StdioDaemon(test_daemon, "--shutdown-timeout", "60", raw=True)
    assert daemon.roundtrip('{"jsonrpc":"2.0","method":"echo","params":[],"id":0}', timeout=20)  # up and running
    daemon.write('{"jsonrpc":"2.0","method":"test/sleep","params":{"ms":60000},"id":1}\n')
    time.sleep(0.2)
    daemon.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert daemon.process.poll() is None  # draining: the sleep may still be answered
    daemon.process.send_signal(signal.SIGTERM)
    assert daemon.process.wait(5) == 1
    # A log line like the others (time, program, pid, level, label), though it is written just before _exit.
    assert re.search(r"Z passbridge\[\d+\] error main: signal 15 again while stopping: exiting without draining\n",
                     daemon.log()), daemon.log()
    daemon.stop()


def test_two_sigterms_at_once_end_with_the_status_the_log_gives(test_daemon, tmp_path):
    """Two SIGTERMs back to back (`kill -TERM`, twice; `timeout` signalling the process group): an idle daemon may
    finish its drain between them. Either the second one forced the exit (status 1, "again while stopping", no
    "stopped" line), or the daemon had stopped (status 0, "stopped, exit status 0") and the second one changes
    nothing. A new-user pass saw both lines and status 1. By repetition: 30 daemons."""
    seen = set()
    for run in range(30):
        daemon = SocketDaemon(test_daemon, tmp_path / f"d{run}.sock", "--state-dir", str(tmp_path / "state"))
        daemon.process.send_signal(signal.SIGTERM)
        daemon.process.send_signal(signal.SIGTERM)
        status = daemon.process.wait(10)
        log = daemon.log()
        stopped = "stopped, exit status 0" in log
        forced = "again while stopping" in log
        assert (status, stopped, forced) in [(0, True, False), (1, False, True)], (run, status, log)
        seen.add(status)
    print("exit statuses seen:", sorted(seen))


# --- out of file descriptors -------------------------------------------------------------------------------

def echo_round_trips(sock, reader, count=50):
    """Median seconds of `count` echo calls on an established connection."""
    times = []
    for n in range(count):
        started = time.monotonic()
        sock.sendall(b'{"jsonrpc":"2.0","method":"echo","params":[%d],"id":%d}\n' % (n, n))
        assert json.loads(reader.line(timeout=5))["result"] == [n]
        times.append(time.monotonic() - started)
    return sorted(times)[count // 2]


def test_out_of_file_descriptors_pauses_accepting_and_keeps_serving(short_tmp, test_daemon):
    path = str(short_tmp / "pb.sock")
    log_path = short_tmp / "stderr.log"
    with open(log_path, "wb") as log:
        daemon = subprocess.Popen([test_daemon, "--socket", path], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=log,
                                  preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
    try:
        wait_for_socket(path, daemon)
        established = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        established.connect(path)
        reader = ByteReader(established.fileno())
        normal = echo_round_trips(established, reader)
        started = time.monotonic()
        crowd = []
        for _ in range(120):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(path)
            crowd.append(client)
        time.sleep(0.5)
        crowded = echo_round_trips(established, reader)
        elapsed = time.monotonic() - started
        assert crowded <= 3 * normal + 0.005, f"echo {normal * 1000:.2f} ms before, {crowded * 1000:.2f} ms out of fds"
        for client in crowd:
            client.close()
        time.sleep(0.6)
        late = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        late.connect(path)
        late.sendall(b'{"jsonrpc":"2.0","method":"echo","params":["late"],"id":1}\n')
        assert json.loads(ByteReader(late.fileno()).line(timeout=5))["result"] == ["late"]
        late.close()
        established.close()
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(10) == 0
    warnings = log_path.read_text().count("Too many open files")
    pauses = (elapsed + 0.6) / 0.25 + 2
    assert 1 <= warnings <= pauses, f"{warnings} warnings in {elapsed:.1f} s"
