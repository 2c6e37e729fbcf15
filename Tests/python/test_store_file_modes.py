"""The daemon's own files in the state directory (README.md "Using it with Adobe", ARCHITECTURE.md "The
store"): a store left readable by everyone (a restored backup, a directory made by hand) is made 0600 before it is
opened, so that another local user cannot read it; a store file that is a symbolic link or belongs to another user
stops the daemon with one line naming the file."""
import json
import os
import pathlib
import shutil
import sqlite3
import stat
import subprocess
import tempfile

import pytest

from rpc_helper import StdioDaemon, daemon_args
from test_bridge_flows import login, ready
from test_store import SET_REQUESTOR, run_daemon

NOBODY = 65534
STORE_FILES = ["passbridge.sqlite", "passbridge.sqlite-wal", "passbridge.sqlite-shm"]


@pytest.fixture()
def open_tmp():
    """A temporary folder every user may traverse (pytest's own folders are private to their owner), so that only
    the modes of the state directory and its files decide what another user can read."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="pb-modes-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def modes(directory: pathlib.Path) -> dict[str, int]:
    return {entry.name: stat.S_IMODE(entry.lstat().st_mode) for entry in directory.iterdir()}


def opened_by_nobody(paths: list[pathlib.Path]) -> dict[str, str]:
    """What uid and gid 65534, without supplementary groups, gets opening each path for reading: "ok" or the
    name of the exception. The switch happens in a forked child; the answer comes back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            outcomes = {}
            for path in paths:
                try:
                    os.close(os.open(path, os.O_RDONLY))
                    outcomes[str(path)] = "ok"
                except OSError as error:
                    outcomes[str(path)] = type(error).__name__
            os.write(write_end, json.dumps(outcomes).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(answer)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to open the store as a second user (uid 65534)")
def test_a_store_readable_by_everyone_is_made_0600_and_another_user_cannot_open_it(bin_dir, emulator, open_tmp):
    state = open_tmp / "state"
    state.mkdir()
    first = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    ready(first)
    login(first)
    assert first.stop() == 0

    # What a restored backup looks like: the directory 0755, every store file 0644 (the -wal and -shm that SQLite
    # removes at close made again, empty, so that all three are there).
    state.chmod(0o755)
    files = [state / name for name in STORE_FILES]
    for file in files:
        file.touch()
        file.chmod(0o644)
    assert modes(state) == {name: 0o644 for name in STORE_FILES}
    assert opened_by_nobody([state, *files]) == {str(path): "ok" for path in [state, *files]}, \
        "before the daemon runs, another user can read the store"

    second = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    ready(second)
    assert second.call("checkAuthentication") == {"status": 1, "errorCode": ""}, "the login survived"
    running = modes(state)
    assert set(STORE_FILES) <= set(running) and running == {name: 0o600 for name in running}, running
    assert opened_by_nobody([state, *files]) == {str(state): "ok", **{str(file): "PermissionError" for file in files}}
    assert second.stop() == 0

    after = modes(state)
    assert "passbridge.sqlite" in after and after == {name: 0o600 for name in after}, after
    assert stat.S_IMODE(state.stat().st_mode) == 0o755, "the directory itself is never chmod'ed"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a store file to another user (uid 65534)")
@pytest.mark.parametrize("name", ["passbridge.sqlite", "passbridge.sqlite-wal"])
def test_a_store_file_of_another_user_stops_the_daemon_with_one_line_naming_it(bin_dir, emulator, tmp_path, name):
    state = tmp_path / "state"
    # The store is created by the first setRequestor (Protocol/README.md "The store").
    assert run_daemon(bin_dir, *daemon_args(emulator.base, state), stdin=SET_REQUESTOR).returncode == 0
    file = state / name
    file.touch()
    file.chmod(0o644)
    os.chown(file, NOBODY, NOBODY)

    result = run_daemon(bin_dir, *daemon_args(emulator.base, state))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"refusing store file {file}: owned by uid {NOBODY}" in lines[0] and f"chown 0 {file}" in lines[0], lines[0]
    assert (file.stat().st_uid, stat.S_IMODE(file.stat().st_mode)) == (NOBODY, 0o644), "the file is left as it is"

    listed = subprocess.run([str(bin_dir / "passbridge"), "state", "list", "--state-dir", str(state)], capture_output=True,
                            text=True, timeout=30)
    assert listed.returncode == 1 and f"refusing store file {file}" in listed.stderr, listed.stderr


def test_a_symbolic_link_in_place_of_the_store_stops_the_daemon_and_its_target_is_left_alone(bin_dir, emulator,
                                                                                             tmp_path):
    elsewhere = tmp_path / "elsewhere"
    assert run_daemon(bin_dir, *daemon_args(emulator.base, elsewhere), stdin=SET_REQUESTOR).returncode == 0
    target = elsewhere / "passbridge.sqlite"
    target.chmod(0o644)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "passbridge.sqlite").symlink_to(target)

    result = run_daemon(bin_dir, *daemon_args(emulator.base, state))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"refusing store file {state / 'passbridge.sqlite'}: it is a symbolic link" in lines[0], \
        result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_state_directory_reached_through_a_symbolic_link_is_used(bin_dir, emulator, tmp_path):
    """Only the store's own files must not be links (`/var` or a home folder behind a link is common)."""
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    result = run_daemon(bin_dir, *daemon_args(emulator.base, tmp_path / "link" / "state"), stdin=SET_REQUESTOR)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines() if '"id":2' in line][0]["result"]["status"] == 1
    assert stat.S_IMODE((real / "state" / "passbridge.sqlite").stat().st_mode) == 0o600


def test_after_a_clean_exit_the_database_file_alone_is_the_whole_store(bin_dir, emulator, tmp_path):
    """The daemon closes its store as it exits, so SQLite folds the write-ahead log into passbridge.sqlite: a
    backup of that one file keeps the device identifier and the registration (README.md)."""
    state = tmp_path / "state"
    result = run_daemon(bin_dir, *daemon_args(emulator.base, state), stdin=SET_REQUESTOR)
    assert result.returncode == 0, result.stderr
    assert sorted(entry.name for entry in state.iterdir()) == ["passbridge.sqlite"]
    backup = tmp_path / "backup.sqlite"
    shutil.copy(state / "passbridge.sqlite", backup)
    with sqlite3.connect(backup) as db:
        assert db.execute("SELECT count(*) FROM device_identity").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM client_credentials").fetchone()[0] == 1


def test_each_store_file_made_0600_is_logged_with_the_mode_it_had(bin_dir, emulator, tmp_path):
    """An operator learns that the daemon changed a file's mode: one warning per file, naming it and its old mode."""
    state = tmp_path / "state"
    first = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    ready(first)
    login(first)
    assert first.stop() == 0
    store = state / "passbridge.sqlite"
    store.chmod(0o640)
    # The daemon and `passbridge state`, which open the store the same way, both say it.
    listed = subprocess.run([str(bin_dir / "passbridge"), "state", "list", "--state-dir", str(state)], capture_output=True,
                            text=True, timeout=30)
    assert listed.returncode == 0 and listed.stdout.startswith("REQUESTOR"), listed.stdout + listed.stderr
    warned = [line for line in listed.stderr.splitlines() if " warning store: made " in line]
    assert len(warned) == 1 and f"made {store} 0600: it was 0640, open to its group or others" in warned[0], listed.stderr
    assert "warning" in warned[0] and "store" in warned[0], warned[0]
    assert modes(state)["passbridge.sqlite"] == 0o600
    (state / "passbridge.sqlite").chmod(0o604)
    second = StdioDaemon(bin_dir, *daemon_args(emulator.base, state))
    ready(second)
    assert second.stop() == 0
    assert f"made {store} 0600: it was 0604, open to its group or others" in second.log(), second.log()
    # Nothing to say when every file is already private.
    quiet = subprocess.run([str(bin_dir / "passbridge"), "state", "list", "--state-dir", str(state)], capture_output=True,
                           text=True, timeout=30)
    assert " warning store: made " not in quiet.stderr, quiet.stderr
