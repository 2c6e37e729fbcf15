"""Shared fixtures for the end-to-end suites: where the built binaries are."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bin_dir() -> pathlib.Path:
    """The folder holding passbridge and pass-emulator (PASSBRIDGE_BIN_DIR, else swift's debug bin path)."""
    env = os.environ.get("PASSBRIDGE_BIN_DIR")
    if env:
        return pathlib.Path(env)
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return pathlib.Path(out.stdout.strip())


# --- JSON-RPC transport fixtures and raw-byte helpers (issue 2) ------------------------------------
import json
import select
import shutil
import signal
import socket
import tempfile
import time


@pytest.fixture(scope="session")
def passbridge(bin_dir) -> str:
    """Path of the built passbridge binary."""
    path = bin_dir / "passbridge"
    assert path.exists(), f"build first: {path} is missing"
    return str(path)


@pytest.fixture()
def short_tmp():
    """A short temporary folder (Unix socket paths must stay under 108 bytes)."""
    path = tempfile.mkdtemp(prefix="pb-", dir="/tmp")
    yield pathlib.Path(path)
    shutil.rmtree(path, ignore_errors=True)


def wait_for_socket(path, proc, timeout=10.0):
    """Waits until something accepts on the Unix socket `path` (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited early with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
                return
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.01)
    raise TimeoutError(f"no socket at {path}")


class SocketDaemon:
    """A `passbridge --socket` process started for one test."""

    def __init__(self, binary, path, extra):
        self.path = str(path)
        self.proc = subprocess.Popen([binary, "--socket", self.path, "--test-methods", *extra],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for_socket(self.path, self.proc)

    def connect(self, timeout=10.0) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(self.path)
        return sock

    def stop(self, timeout=10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture()
def socket_daemon(passbridge, short_tmp):
    """Starts `passbridge --socket … --test-methods [extra flags]`; stopped with SIGTERM after the test."""
    daemons = []

    def start(*extra, name="pb.sock"):
        daemon = SocketDaemon(passbridge, short_tmp / name, extra)
        daemons.append(daemon)
        return daemon

    yield start
    for daemon in daemons:
        if daemon.proc.poll() is None:
            daemon.stop()
        daemon.proc.stdout.close()
        daemon.proc.stderr.close()


# Raw-byte helpers for the JSON-RPC tests (import with `from conftest import …`).
class ByteReader:
    """Buffers bytes from a file descriptor and hands out lines or Content-Length bodies."""

    def __init__(self, fd):
        self.fd = fd
        self.buffer = b""

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no data in time")
        ready, _, _ = select.select([self.fd], [], [], remaining)
        if not ready:
            raise TimeoutError("no data in time")
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise EOFError("peer closed")
        self.buffer += chunk

    def line(self, timeout=5.0) -> bytes:
        """The next line, without its newline."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            self._fill(deadline)
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def frame(self, timeout=5.0) -> bytes:
        """The next Content-Length body."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            self._fill(deadline)
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: "), header
        length = int(header.split(b": ")[1])
        while len(rest) < length:
            self.buffer = header + b"\r\n\r\n" + rest
            self._fill(deadline)
            header, _, rest = self.buffer.partition(b"\r\n\r\n")
        self.buffer = rest[length:]
        return rest[:length]

    def json(self, timeout=5.0):
        return json.loads(self.line(timeout))

    def closed(self, timeout=5.0) -> bool:
        """True when the peer closes with nothing more sent."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._fill(deadline)
                if self.buffer.strip():
                    return False
        except EOFError:
            return True


class StdioDaemon:
    """`passbridge --stdio` over real pipes."""

    def __init__(self, binary, *args):
        self.proc = subprocess.Popen([binary, "--stdio", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.reader = ByteReader(self.proc.stdout.fileno())

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def call(self, text, timeout=5.0) -> bytes:
        """Sends one NDJSON line and returns the next line received."""
        self.send(text + "\n")
        return self.reader.line(timeout)

    def close_input(self):
        self.proc.stdin.close()

    def finish(self, timeout=10.0):
        """Closes stdin and returns (exit code, remaining stdout, stderr)."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout)
        rest = self.reader.buffer + self.proc.stdout.read()
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, rest, err


def request(method, params=None, id=1):
    message = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        message["params"] = params
    return json.dumps(message)
