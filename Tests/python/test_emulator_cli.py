"""pass-emulator's own command line: a real --help, --version anywhere, --opt=value, one-line usage errors with exit 2,
and a clean stop that closes the listening socket exactly once."""
import pathlib
import re
import shutil
import signal
import subprocess
import time

import pytest

from emulator_fixtures import request


def run(bin_dir, *args):
    return subprocess.run([str(bin_dir / "pass-emulator"), *args], capture_output=True, text=True, timeout=30)


def test_help_lists_every_option_and_admin_call(bin_dir):
    help_ = run(bin_dir, "--help")
    assert help_.returncode == 0 and help_.stderr == ""
    for option in ["--port PORT", "--host ADDR", "--public-url URL", "--config FILE", "--key FILE", "--exit-on-eof", "--resource R", "--url BASE", "--public-key FILE",
                   "--help", "--version"]:
        assert option in help_.stdout, option
    assert "\n  --port PORT          Port to listen on, 0-65535; 0 takes any free port. (default: 0)\n" in help_.stdout
    assert "\n  TOKEN                A media token's serializedToken.\n" in help_.stdout
    for call in ["GET    /__admin/clock", "POST   /__admin/clock", "POST   /__admin/reset", "POST   /__admin/faults", "DELETE /__admin/faults",
                 "GET    /__admin/throttle", "POST   /__admin/throttle", "DELETE /__admin/throttle", "GET    /__admin/public-key",
                 "POST   /__admin/partner-saml", "POST   /__admin/limits", "POST   /__admin/degradation", "POST   /__admin/item-errors",
                 "POST   /__admin/platform-services", "GET    /__admin/requests"]:
        assert call in help_.stdout, call
    assert "Sources/PassEmulator/README.md" in help_.stdout
    for kind in ["latency", "status,", "malformed", "truncated", "contentType", "drop", "throttle", "redirect"]:
        assert kind in help_.stdout.split("kinds:")[1], kind
    assert run(bin_dir, "verify-token", "--help").stdout == help_.stdout
    assert run(bin_dir, "-h").stdout == help_.stdout


def test_version_wins_anywhere_on_the_line(bin_dir):
    for args in (["--version"], ["--port", "0", "--version"], ["--no-such-flag", "--version"], ["verify-token", "x", "--version"]):
        version = run(bin_dir, *args)
        assert version.returncode == 0 and re.fullmatch(r"pass-emulator \d+\.\d+\.\d+\n", version.stdout), (args, version)


@pytest.mark.parametrize("args, message", [
    (["--port"], "--port needs a value"),
    (["--config"], "--config needs a value"),
    (["--port", "99999"], "--port needs a number 0-65535, got 99999"),
    (["--port=x"], "--port needs a number 0-65535, got x"),
    (["--no-such-flag"], "unknown option --no-such-flag"),
    (["stray"], "unexpected argument stray"),
    (["--exit-on-eof=yes"], "--exit-on-eof takes no value"),
    (["--host", "localhost"], "--host needs an IPv4 address, got localhost"),
    (["--host=300.1.1.1"], "--host needs an IPv4 address, got 300.1.1.1"),
    (["--public-url", "tv.example:8080"], "--public-url needs an http or https URL without query or fragment, got tv.example:8080"),
    (["--public-url", "ftp://tv.example"], "--public-url needs an http or https URL without query or fragment, got ftp://tv.example"),
    (["verify-token"], "verify-token needs a TOKEN"),
    (["verify-token", "T", "--url"], "--url needs a value"),
    (["verify-token", "T"], "give exactly one of --url or --public-key"),
])
def test_usage_errors_are_one_line_and_exit_2(bin_dir, args, message):
    bad = run(bin_dir, *args)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == f"pass-emulator: {message} (see pass-emulator --help)\n"


def test_equals_form_is_accepted(bin_dir, tmp_path):
    process = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port=0", "--exit-on-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        base = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base)
        assert request(base, "GET", "/__admin/clock").status == 200
    finally:
        process.stdin.close()  # --exit-on-eof: end of input stops it
        assert process.wait(timeout=10) == 0
        process.stdout.close()


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_stop_closes_the_listening_socket_once(bin_dir, tmp_path):
    """MHD_stop_daemon closes a socket handed over with MHD_OPTION_LISTEN_SOCKET; the server must not close it again."""
    trace = tmp_path / "trace.txt"
    process = subprocess.Popen(["strace", "-f", "-e", "trace=listen,close", "-o", str(trace), str(bin_dir / "pass-emulator"), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    base = process.stdout.readline().strip()
    assert request(base, "GET", "/__admin/clock").status == 200
    emulator_pid = next(int(line.split()[0]) for line in trace.read_text().splitlines() if " listen(" in line)
    subprocess.run(["kill", "-TERM", str(emulator_pid)], check=True)
    assert process.wait(timeout=20) == 0
    process.stdout.close()
    lines = trace.read_text().splitlines()
    listen_at, listen_fd = next((i, re.search(r"listen\((\d+),", line).group(1)) for i, line in enumerate(lines) if " listen(" in line)
    closes = [line for line in lines[listen_at:] if re.search(rf"close\({listen_fd}\)", line)]
    assert len(closes) == 1 and closes[0].rstrip().endswith("= 0"), closes
