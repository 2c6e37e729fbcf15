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


# --- JSON-RPC transport fixtures (issue 2) ---------------------------------------------------------
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
