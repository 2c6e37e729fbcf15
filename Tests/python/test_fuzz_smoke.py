"""A short run of Tests/fuzz/fuzz_frames.py in each transport, for CI (the million-frame runs are by hand, see
Tests/fuzz/README.md), and the harness itself against stand-in daemons that misbehave, so it is known to count
what it is meant to count."""
import json
import os
import stat
import subprocess
import sys

import pytest

from conftest import ROOT

HARNESS = ROOT / "Tests" / "fuzz" / "fuzz_frames.py"
FAILURES = ("crashes", "early-exits", "hangs", "unanswered", "non-JSON")


def run_harness(bin_dir, tmp_path, *args, timeout=60):
    """(exit status, the RESULT counts, all output) of one harness run."""
    env = dict(os.environ, PASSBRIDGE_BIN_DIR=str(bin_dir))
    done = subprocess.run([sys.executable, str(HARNESS), "--failures", str(tmp_path / "failures"), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"no RESULT line; stdout {done.stdout!r}, stderr {done.stderr!r}"
    return done.returncode, json.loads(lines[-1][len("RESULT "):]), done.stdout + done.stderr


@pytest.mark.parametrize("seed", [1, 2])
def test_stdio_fuzz_finds_nothing(bin_dir, test_daemon, tmp_path, seed):
    code, counts, output = run_harness(bin_dir, tmp_path, "--transport", "stdio", "--frames", "2000",
                                       "--per-connection", "1000", "--per-batch", "250", "--seed", str(seed))
    assert code == 0, output
    assert {key: counts[key] for key in FAILURES} == dict.fromkeys(FAILURES, 0), output
    assert counts["frames"] == 2000 and counts["connections"] == 2, output
    assert counts["damaged"] > 400, output  # roughly half the frames are damaged
    assert not (tmp_path / "failures").exists()


def test_socket_fuzz_finds_nothing(bin_dir, test_daemon, tmp_path):
    code, counts, output = run_harness(bin_dir, tmp_path, "--transport", "socket", "--frames", "2000")
    assert code == 0, output
    assert {key: counts[key] for key in FAILURES} == dict.fromkeys(FAILURES, 0), output
    assert counts["frames"] == 2000 and counts["connections"] == 5, output


def stand_in(tmp_path, body: str):
    """A folder whose passbridge-test-daemon is the Python program `body`."""
    folder = tmp_path / "bin"
    folder.mkdir()
    path = folder / "passbridge-test-daemon"
    path.write_text(f"#!{sys.executable}\nimport os, signal, sys\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def test_stdio_harness_counts_a_daemon_killed_by_a_signal(tmp_path):
    folder = stand_in(tmp_path, "sys.stdin.buffer.read(100)\nos.kill(os.getpid(), signal.SIGSEGV)")
    code, counts, output = run_harness(folder, tmp_path, "--transport", "stdio", "--frames", "800",
                                       "--per-connection", "400")
    assert code == 1, output
    assert (counts["connections"], counts["crashes"], counts["unanswered"], counts["hangs"]) == (2, 2, 2, 0), output
    assert sorted(path.name for path in (tmp_path / "failures").iterdir() if path.suffix == ".in") == \
        ["daemon-0.in", "daemon-1.in"]


def test_stdio_harness_counts_junk_output_and_an_early_exit(tmp_path):
    folder = stand_in(tmp_path, "sys.stdout.write('Content-Length: 2\\r\\n\\r\\n{}\\nnot JSON\\n')")
    code, counts, output = run_harness(folder, tmp_path, "--transport", "stdio", "--frames", "400")
    assert code == 1, output
    assert (counts["early-exits"], counts["unanswered"], counts["crashes"]) == (1, 1, 0), output
    assert counts["non-JSON"] >= 1, output
