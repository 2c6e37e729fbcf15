"""What the daemon links and maps: no Foundation beyond FoundationEssentials (neither Foundation,
FoundationNetworking, FoundationInternationalization nor ICU), and libcurl, libcrypto, SQLite and libpq only when
used — libcurl, libcrypto and SQLite from the first requestor on, libpq only with a PostgreSQL store (readelf on the
built binary, /proc/PID/maps of the running daemon)."""
import os
import shlex
import subprocess

import pytest

from rpc_helper import REDIRECT_URL, StdioDaemon, daemon_args, executable
from test_bridge_flows import login, ready


def needed_libraries(path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return sorted(line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line)


def mapped(pid: int, prefix: str) -> bool:
    with open(f"/proc/{pid}/maps") as maps:
        return any(line.rstrip().rsplit("/", 1)[-1].startswith(prefix) for line in maps)


def test_passbridge_needs_only_foundation_essentials(bin_dir):
    needed = needed_libraries(executable(bin_dir))
    forbidden = [name for name in needed if name.startswith(("libFoundation.", "libFoundationNetworking", "libFoundationInternationalization"))
                 or "ICU" in name or name.startswith("libicu")]
    assert forbidden == [], needed
    # Loaded when used (dlopen), so neither is a start-up dependency.
    assert [name for name in needed if name.startswith(("libcurl", "libcrypto", "libpq", "libsqlite3"))] == [], needed


def test_libcurl_libcrypto_and_sqlite_are_mapped_by_the_first_requestor_and_libpq_never_with_sqlite(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        assert daemon.call("rpc.discover", {})["openrpc"]
        pid = daemon.process.pid
        assert [name for name in ("libcurl.so", "libcrypto.so", "libsqlite3.so", "libpq.so") if mapped(pid, name)] == []
        ready(daemon)
        login(daemon)
        assert daemon.call("getAuthorization", {"resource": "ch1"})["token"]
        assert mapped(pid, "libcurl.so") and mapped(pid, "libcrypto.so") and mapped(pid, "libsqlite3.so")
        assert not mapped(pid, "libpq.so")
    finally:
        assert daemon.stop() == 0


def with_library_hidden(tmp_path, binary: str, library: str) -> str:
    """A launcher for `binary` that runs it in a private mount namespace where `library` (a file name in the
    system library folder) is an empty file, as on a box missing that package; skips where that is not allowed."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -m needs root")
    target = subprocess.run(["readlink", "-f", f"/usr/lib/x86_64-linux-gnu/{library}"], capture_output=True, text=True).stdout.strip()
    if not os.path.exists(target):
        pytest.skip(f"{library} is not installed here")
    empty = tmp_path / "empty-library"
    empty.write_bytes(b"")
    launcher = tmp_path / "passbridge-without-library"
    launcher.write_text(f'#!/bin/sh\nexec unshare -m sh -c \'mount --bind "$0" "$1" && shift && exec "$@"\' '
                        f'{shlex.quote(str(empty))} {shlex.quote(target)} {shlex.quote(binary)} "$@"\n')
    launcher.chmod(0o755)
    return str(launcher)


def test_without_libcurl_setrequestor_fails_with_cfg404_and_the_log_says_why(bin_dir, emulator, tmp_path):
    launcher = with_library_hidden(tmp_path, executable(bin_dir), "libcurl.so.4")
    daemon = StdioDaemon(launcher, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        result = daemon.call("setRequestor", {"requestorID": "REF"})
        assert result["status"] == 0
        assert [status["id"] for status in result["statuses"]] == ["CFG404"]
        assert "no HTTP: libcurl could not be loaded" in daemon.wait_for_log("libcurl4")
        assert daemon.call("rpc.discover", {})["openrpc"], "the connection keeps working"
    finally:
        assert daemon.stop() == 0


def test_without_sqlite_setrequestor_fails_with_store500_saying_why_and_the_connection_keeps_working(bin_dir, emulator, tmp_path):
    launcher = with_library_hidden(tmp_path, executable(bin_dir), "libsqlite3.so.0")
    daemon = StdioDaemon(launcher, *daemon_args(emulator.base, tmp_path / "state"))
    try:
        assert daemon.call("init", {"redirectUrl": REDIRECT_URL}) == {}
        result = daemon.call("setRequestor", {"requestorID": "REF"})
        assert result["status"] == 0
        [status] = [status for status in result["statuses"] if status["id"] == "STORE500"]
        assert "SQLite could not be loaded" in status["message"] and "libsqlite3-0" in status["message"], status
        assert "SQLite could not be loaded" in daemon.wait_for_log("libsqlite3-0")
        assert daemon.call("rpc.discover", {})["openrpc"], "the connection keeps working"
    finally:
        assert daemon.stop() == 0


def test_without_libpq_a_postgresql_store_is_refused_at_start_with_the_reason(bin_dir, tmp_path):
    launcher = with_library_hidden(tmp_path, executable(bin_dir), "libpq.so.5")
    finished = subprocess.run([launcher, "--store", "postgresql://nobody@127.0.0.1/none", "--backend", "http://127.0.0.1:9"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert finished.returncode == 1
    assert finished.stdout == ""
    assert "cannot open postgresql://nobody@127.0.0.1/none" in finished.stderr and "libpq5" in finished.stderr, finished.stderr
