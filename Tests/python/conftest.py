"""Fixtures of the end-to-end suites: where the built binaries are, short socket folders, an emulator, daemons. The
processes and clients themselves are in rpc_helper.py. A module's own fixture of the same name overrides these."""
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from rpc_helper import Emulator, SocketDaemon, daemon_args

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bin_dir() -> pathlib.Path:
    """The folder holding passbridge and pass-emulator (PASSBRIDGE_BIN_DIR, else swift's debug bin path)."""
    env = os.environ.get("PASSBRIDGE_BIN_DIR")
    if env:
        return pathlib.Path(env)
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return pathlib.Path(out.stdout.strip())


@pytest.fixture(scope="session")
def passbridge(bin_dir) -> str:
    """Path of the built passbridge binary."""
    path = bin_dir / "passbridge"
    assert path.exists(), f"build first: {path} is missing"
    return str(path)


@pytest.fixture(scope="session")
def test_daemon(bin_dir) -> str:
    """Path of passbridge-test-daemon: the daemon plus the test methods (Tests/TestDaemon)."""
    path = bin_dir / "passbridge-test-daemon"
    assert path.exists(), f"build first: {path} is missing"
    return str(path)


@pytest.fixture(scope="session")
def relay(bin_dir) -> str:
    """Path of passbridge-relay."""
    path = bin_dir / "passbridge-relay"
    assert path.exists(), f"build first: {path} is missing"
    return str(path)


@pytest.fixture()
def short_tmp():
    """A short temporary folder (Unix socket paths must stay under 108 bytes)."""
    path = tempfile.mkdtemp(prefix="pb-", dir="/tmp")
    yield pathlib.Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture()
def socket_daemon(test_daemon, short_tmp):
    """Starts `passbridge-test-daemon --socket … [extra flags]`; stopped with SIGTERM after the test."""
    daemons = []

    def start(*extra, name="pb.sock"):
        daemon = SocketDaemon(test_daemon, short_tmp / name, *extra)
        daemons.append(daemon)
        return daemon

    yield start
    for daemon in daemons:
        daemon.stop()


@pytest.fixture()
def emulator(bin_dir):
    """A `pass-emulator` on a free loopback port, stopped after the test."""
    emulator = Emulator(bin_dir)
    yield emulator
    emulator.stop()


@pytest.fixture()
def daemon(bin_dir, emulator, tmp_path, short_tmp):
    """`passbridge` on a Unix socket, backed by `emulator`, its state under tmp_path; it must exit 0 after the test."""
    daemon = SocketDaemon(bin_dir, short_tmp / "pb.sock", *daemon_args(emulator.base, tmp_path / "state"))
    yield daemon
    assert daemon.stop() == 0


# --- one line per suite ---------------------------------------------------------------------------------------------
# After the last test of each file, one line with the file's wall time and outcomes ("== test_store.py: 12 s, 14
# passed, 2 skipped"), so that a long run shows where it is (Tests/run-all.sh).

_suite = {"file": None, "started": 0.0, "outcomes": {}}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    import time
    if _suite["file"] != item.path:
        _suite.update(file=item.path, started=time.monotonic(), outcomes={})
    yield
    if nextitem is None or nextitem.path != item.path:
        reporter = item.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            counts = ", ".join(f"{n} {outcome}" for outcome, n in _suite["outcomes"].items())
            reporter.write("\n")  # after the file's progress dots
            reporter.write_line(f"== {item.path.name}: {time.monotonic() - _suite['started']:.0f} s, {counts or 'nothing run'}")


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":  # a skip or an error in setup counts once
        outcome = "skipped" if report.skipped else "failed" if report.failed else "passed"
        if report.when != "call" and report.failed:
            outcome = "errors"
        _suite["outcomes"][outcome] = _suite["outcomes"].get(outcome, 0) + 1
