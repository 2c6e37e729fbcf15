"""The Node client: the sample (Clients/node/demo.mjs) runs login → authorize → logout over stdio against the
emulator; spawn without a daemon rejects with DaemonNotFound saying where it looked."""
import json
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


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_node_spawn_without_a_daemon_rejects_with_daemon_not_found(tmp_path: pathlib.Path) -> None:
    script = tmp_path / "missing.mjs"
    module = (ROOT / "Clients" / "node" / "passbridge.mjs").as_uri()
    script.write_text(f"""import {{ PassBridge, DaemonNotFound, PassBridgeError }} from '{module}';
for (const [exe, env] of [[null, {{ PATH: '/nowhere' }}], ['/nowhere/passbridge', {{}}]]) {{
  try {{ await PassBridge.spawn(exe, [], {{ env }}); console.log('spawned'); }}
  catch (e) {{ console.log(JSON.stringify([e instanceof DaemonNotFound && e instanceof PassBridgeError, e.looked, e.message])); }}
}}
""")
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (ok1, looked1, message1), (ok2, looked2, _) = (json.loads(line) for line in proc.stdout.splitlines())
    assert ok1 and ok2
    assert looked1 == "'passbridge' in PATH=/nowhere"
    assert looked2 == "/nowhere/passbridge (no such file)"
    assert message1.startswith("passbridge daemon not found; looked at: 'passbridge' in PATH=/nowhere. To fix: install")
    assert "apt install ./passbridge_VERSION_amd64.deb" in message1
