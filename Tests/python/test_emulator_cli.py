"""pass-emulator's own command line: a real --help, --version anywhere, --opt=value, one-line usage errors with exit 2,
a clean stop that closes the listening socket exactly once, and where the signing key comes from (--key, else
PASS_EMULATOR_KEY_FILE, else a new key at each start)."""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from emulator_fixtures import TEST_KEY, TEST_PUBLIC_KEY, request


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


# ---- the signing key: --key, else PASS_EMULATOR_KEY_FILE, else a new key at each start ---------------------------

def public_key(bin_dir, *args, key_file=None):
    """The PEM that a pass-emulator started with `args` publishes at /__admin/public-key; PASS_EMULATOR_KEY_FILE is
    `key_file`, or removed when None."""
    env = {name: value for name, value in os.environ.items() if name != "PASS_EMULATOR_KEY_FILE"}
    if key_file is not None:
        env["PASS_EMULATOR_KEY_FILE"] = str(key_file)
    process = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0", "--exit-on-eof", *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        pem = request(process.stdout.readline().strip(), "GET", "/__admin/public-key")
        assert pem.status == 200
        return pem.text
    finally:
        process.stdin.close()
        assert process.wait(timeout=10) == 0
        process.stdout.close()


def test_without_key_or_variable_each_start_makes_a_new_key(bin_dir):
    fresh = {public_key(bin_dir), public_key(bin_dir, key_file="")}  # an empty variable counts as unset
    assert len(fresh) == 2 and TEST_PUBLIC_KEY not in fresh and all(pem.startswith("-----BEGIN PUBLIC KEY-----") for pem in fresh)


def test_the_variable_names_the_key_and_key_wins_over_it(bin_dir, tmp_path):
    key = tmp_path / "key.pem"
    key.write_text(TEST_KEY)
    assert public_key(bin_dir, key_file=key).strip() == TEST_PUBLIC_KEY.strip()
    assert public_key(bin_dir, key_file=key) == public_key(bin_dir, key_file=key)  # one key across restarts
    suite_key = os.environ["PASS_EMULATOR_KEY_FILE"]
    assert public_key(bin_dir, "--key", suite_key, key_file=key) == public_key(bin_dir, key_file=suite_key) != TEST_PUBLIC_KEY



@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_start_up_stops_it_with_exit_0_before_it_serves(bin_dir, stop):
    """--help promises exit 0 on SIGTERM or SIGINT; one that came while the key was made killed the emulator instead
    (exit 143, a new-user pass). The signal is sent once /proc shows it blocked, which the emulator now does before it
    reads its configuration and makes its key (a good part of a second), and did only after them before."""
    emulator = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "PASS_EMULATOR_KEY_FILE": ""})
    try:
        deadline = time.monotonic() + 30
        while not int(re.search(r"^SigBlk:\s*([0-9a-f]+)$", pathlib.Path(f"/proc/{emulator.pid}/status").read_text(),
                                re.M).group(1), 16) & (1 << (int(stop) - 1)):
            assert time.monotonic() < deadline, "the emulator never blocked the signal"
            time.sleep(0.001)
        emulator.send_signal(stop)
        stdout, stderr = emulator.communicate(timeout=30)
    finally:
        if emulator.poll() is None:
            emulator.kill()
    assert (emulator.returncode, stdout) == (0, ""), stderr
    assert stderr.endswith(f" pass-emulator: signal {int(stop)} while starting: stopping\n"), stderr


@pytest.mark.parametrize("content", [None, "not a key\n"])
def test_a_variable_naming_no_key_ends_start_up_naming_it(bin_dir, tmp_path, content):
    key = tmp_path / "key.pem"
    if content is not None:
        key.write_text(content)
    result = subprocess.run([str(bin_dir / "pass-emulator"), "--port", "0"], capture_output=True, text=True, timeout=30,
                            env={**os.environ, "PASS_EMULATOR_KEY_FILE": str(key)})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.endswith(f" pass-emulator: cannot read an RSA private key from {key} (named by PASS_EMULATOR_KEY_FILE)\n"), result.stderr


def test_backend_emulator_child_signs_with_the_variables_key(bin_dir, tmp_path):
    """`passbridge --backend emulator` passes no --key: its child takes the key from the environment it inherits."""
    key = tmp_path / "key.pem"
    key.write_text(TEST_KEY)
    sock = pathlib.Path(tempfile.mkdtemp(prefix="pb-", dir="/tmp")) / "pb.sock"
    daemon = subprocess.Popen([str(bin_dir / "passbridge"), "--socket", str(sock), "--backend", "emulator", "--state-dir",
                               str(tmp_path / "state")], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PASS_EMULATOR_KEY_FILE": str(key)})
    try:
        line = daemon.stderr.readline()
        match = re.search(r"listening on \S+; backend pass-emulator at (http://127\.0\.0\.1:\d+), store \S+$", line.rstrip())
        assert match, line
        assert request(match[1], "GET", "/__admin/public-key").text.strip() == TEST_PUBLIC_KEY.strip()
    finally:
        daemon.terminate()
        assert daemon.wait(timeout=20) == 0
        daemon.stderr.close()
        shutil.rmtree(sock.parent, ignore_errors=True)


def test_more_connections_than_the_open_file_limit_it_started_with_are_served(bin_dir):
    """Started with a soft limit of 256 open files (systemd's default is 1,024), it raises it to the hard limit and
    serves 1,100 connections at once: past libmicrohttpd's default limit of 1,020 too. Before, connections past
    either waited in the listen queue, never accepted, and the request on the last one timed out."""
    import resource
    import socket

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard limit on open files is {hard}")
    if soft != resource.RLIM_INFINITY and soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))  # this test's own 1,100 sockets
    process = subprocess.Popen([str(bin_dir / "pass-emulator"), "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)))
    held = []
    try:
        base = process.stdout.readline().strip()
        port = int(base.rsplit(":", 1)[1])
        with open(f"/proc/{process.pid}/limits") as limits:
            files = next(line for line in limits if line.startswith("Max open files")).split()[3:5]
        assert files[0] == files[1], f"soft limit not raised: {files}"
        for _ in range(1100):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        last = held[-1]
        last.sendall(b"GET /__admin/clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert last.recv(4096).startswith(b"HTTP/1.1 200"), "the last connection was not served"
    finally:
        for sock in held:
            sock.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
        process.stdout.close()
        process.stderr.close()
