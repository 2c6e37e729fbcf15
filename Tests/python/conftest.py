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

#: The key every pass-emulator of the suite signs with (Sources/PassEmulator/README.md: PASS_EMULATOR_KEY_FILE), also
#: the ones that `passbridge --backend emulator` and `passbridge-call dev` start: without it each of the suite's 350-odd
#: emulators spends 0.2–1 s of CPU making a 2048-bit key. Tests of the variable itself set or remove it per process.
#: Tests/emulator-key.pem is a throwaway key that protects nothing; the XCTests' emulators sign with it too.
os.environ["PASS_EMULATOR_KEY_FILE"] = str(ROOT / "Tests/emulator-key.pem")


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


# --- the longest files first -----------------------------------------------------------------------------------------
#: The files that take far longer than the others (a fresh-clone CI run, two workers: test_packages.py 282 s, most of it
#: a static release build; test_engine_model.py 101 s; test_http_transport.py 65 s; test_clients_shell_dev.py 51 s;
#: test_store_durability.py 43 s; of 997 s in all). They are handed out first, so that neither worker picks one up near
#: the end while the other runs out of work. Tests/run-all.sh passes --no-loadscope-reorder, which keeps this order
#: instead of pytest-xdist's most-tests-first.
LONGEST_FIRST = ("test_packages.py", "test_engine_model.py", "test_http_transport.py", "test_clients_shell_dev.py",
                 "test_store_durability.py")


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        return LONGEST_FIRST.index(item.path.name) if item.path.name in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)  # a stable sort: each file's tests keep their order


# --- one line per suite ---------------------------------------------------------------------------------------------
# After the last test of each file, one line with the file's wall time and outcomes ("== test_store.py: 12 s, 14
# passed, 2 skipped"), so that a long run shows where it is (Tests/run-all.sh). Under pytest-xdist the workers run
# whole files (--dist loadfile) and only the controller, which receives every report, prints: the hooks below do
# nothing in a worker.

_files: dict = {}  # file → {"left": tests not torn down yet, "started": monotonic time, "outcomes": {outcome: n}}
_reporter = None  # the controller's terminal reporter (none in a worker)


def _count(nodeids) -> None:
    for nodeid in nodeids:
        entry = _files.setdefault(nodeid.split("::")[0], {"left": 0, "started": None, "outcomes": {}})
        entry["left"] += 1


def pytest_sessionstart(session):
    global _reporter
    if not hasattr(session.config, "workerinput"):
        _reporter = session.config.pluginmanager.get_plugin("terminalreporter")


def pytest_collection_finish(session):
    if not hasattr(session.config, "workerinput"):  # without xdist: this process runs the tests it selected
        _count(item.nodeid for item in session.items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    if not _files:  # every worker collects the same tests
        _count(ids)


def pytest_runtest_logreport(report):
    import time
    entry = _files.get(report.nodeid.split("::")[0])
    if _reporter is None or entry is None:
        return
    if entry["started"] is None:  # the first report comes after its setup, module fixtures included
        entry["started"] = time.monotonic() - report.duration
    if report.when == "call" or report.outcome != "passed":  # a skip or an error in setup counts once
        outcome = "skipped" if report.skipped else "failed" if report.failed else "passed"
        if report.when != "call" and report.failed:
            outcome = "errors"
        entry["outcomes"][outcome] = entry["outcomes"].get(outcome, 0) + 1
    if report.when == "teardown":
        entry["left"] -= 1
        if entry["left"] == 0:
            counts = ", ".join(f"{n} {outcome}" for outcome, n in entry["outcomes"].items())
            _reporter.write("\n")  # after the progress dots
            _reporter.write_line(f"== {pathlib.Path(report.nodeid.split('::')[0]).name}: "
                                 f"{time.monotonic() - entry['started']:.0f} s, {counts or 'nothing run'}")
