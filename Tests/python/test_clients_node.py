"""The Node sample (Clients/node/demo.mjs) runs login → authorize → logout over stdio against the emulator."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_node_sample_runs_the_whole_flow(bin_dir: pathlib.Path) -> None:
    proc = subprocess.run(["node", str(ROOT / "Clients" / "node" / "demo.mjs"), "--bin-dir", str(bin_dir)],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    lines = out.splitlines()
    for step in ["setRequestor", "checkAuthentication", "getAuthentication", "getAuthorization ch1",
                 "getAuthorization ch2", "getMetadata", "logout", "passbridge"]:
        assert any(l.startswith(f"[ok] {step}:") for l in lines), f"{step} missing:\n{out}"
    assert any("denied: User not Authorized Error" in l for l in lines)
    assert "redirect to adobepass://ios.app" in out
    assert lines[-1] == "NODE DEMO OK: every step did what it should"
