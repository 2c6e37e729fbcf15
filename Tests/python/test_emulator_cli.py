"""pass-emulator's own command line: --help and --version answer on stdout with exit 0, a bad flag exits 2."""
import subprocess


def run(bin_dir, *args):
    return subprocess.run([str(bin_dir / "pass-emulator"), *args], capture_output=True, text=True, timeout=30)


def test_help_version_and_usage_errors(bin_dir):
    help_ = run(bin_dir, "--help")
    assert help_.returncode == 0 and "pass-emulator verify-token TOKEN" in help_.stdout
    version = run(bin_dir, "--version")
    assert version.returncode == 0 and version.stdout.startswith("pass-emulator ")
    bad = run(bin_dir, "--no-such-flag")
    assert bad.returncode == 2 and "unexpected argument --no-such-flag" in bad.stderr and bad.stdout == ""
