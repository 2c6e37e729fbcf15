"""The demo (Clients/python/examples/demo.py) run for real: pass-emulator + passbridge + the Python client.

Each step of the demo's flow prints an `[ok] step: …` line; these tests check the exit status and that every
step reported what a user would look for (the login, the media token, the denial, metadata, the logout).
"""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEMO = ROOT / "Clients" / "python" / "examples" / "demo.py"


def run_demo(bin_dir: pathlib.Path, *extra: str) -> str:
    proc = subprocess.run([sys.executable, str(DEMO), "--bin-dir", str(bin_dir), *extra],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return proc.stdout


def ok_line(out: str, step: str) -> str:
    """The `[ok] step: …` line of a step (the first one)."""
    lines = [l for l in out.splitlines() if l.startswith(f"[ok] {step}:")]
    assert lines, f"no [ok] line for {step}:\n{out}"
    return lines[0]


def assert_common_steps(out: str) -> None:
    assert ok_line(out, "pass-emulator").startswith("[ok] pass-emulator: listening on http://127.0.0.1:")
    assert "setRequestorComplete(1)" in ok_line(out, "setRequestor")
    assert "User Not Authenticated Error" in ok_line(out, "checkAuthentication")
    assert "logged in at MockMVPD as demo" in ok_line(out, "getAuthentication")
    token_line = next(l for l in out.splitlines() if "short media token for ch1:" in l)
    assert len(token_line.split(":", 1)[1].strip()) > 20
    assert "pass-emulator verify-token --resource ch1 -> exit 0" in out
    assert "permitted" in ok_line(out, "getAuthorization ch1")
    denial = ok_line(out, "getAuthorization ch2")
    assert 'denied: User not Authorized Error: Your subscription does not include "Channel 2".' in denial
    assert "zip encrypted" in ok_line(out, "getMetadata")
    assert "logged out" in ok_line(out, "logout")
    assert out.splitlines()[-1] == "DEMO OK: every step did what it should"
    assert "[FAIL]" not in out


def test_demo_web_view_flow(bin_dir: pathlib.Path) -> None:
    out = run_demo(bin_dir)
    assert_common_steps(out)
    assert "redirect to adobepass://ios.app" in out  # the login and the logout page both end at the redirect URL
    assert out.count("handleExternalURL ->") == 2
    assert "logout page followed back to the redirect URL" in ok_line(out, "logout")


def test_demo_second_screen_flow(bin_dir: pathlib.Path) -> None:
    out = run_demo(bin_dir, "--second-screen")
    assert_common_steps(out)
    assert "second-screen host (webView: false)" in ok_line(out, "init")
    regcode = next(l for l in out.splitlines() if l.strip().startswith("REGCODE "))
    assert "/activate" in regcode
    assert "the phone completed" in ok_line(out, "second screen")
    assert "web view:" not in out.split("[ok] logout")[0]  # no web view on a set-top box


def test_demo_fails_cleanly_without_binaries(tmp_path: pathlib.Path) -> None:
    proc = subprocess.run([sys.executable, str(DEMO), "--bin-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "[FAIL]" in proc.stdout and "passbridge not found" in proc.stdout
