"""The Node package (Clients/node): installable with npm, typed (checked by Debian's TypeScript compiler),
timeouts and AbortSignal, calls after close, failure reasons, and no child left behind.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from clients_support import ROOT, emulator_url, statement  # noqa: F401  (fixture)
from test_clients_failure_reasons import NO_STATEMENT

NODE_DIR = ROOT / "Clients" / "node"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


def test_package_json_declares_an_esm_package_without_dependencies():
    package = json.loads((NODE_DIR / "package.json").read_text())
    assert package["type"] == "module"
    assert package["exports"]["."] == {"types": "./passbridge.d.mts", "default": "./passbridge.mjs"}
    assert package["dependencies"] == {} and "devDependencies" not in package
    assert package["engines"] == {"node": ">=18"}
    assert package["license"] == "Apache-2.0"
    for name in package["files"]:
        assert (NODE_DIR / name).is_file(), name


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_install_of_the_folder_gives_an_importable_package(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "app", "version": "1.0.0", "type": "module"}')
    install = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", str(NODE_DIR)], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr
    probe = subprocess.run(["node", "--input-type=module", "-e",
                            "import { PassBridge, DEFAULT_TIMEOUT } from 'passbridge'; console.log(typeof PassBridge.spawn, DEFAULT_TIMEOUT)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert probe.stdout.strip() == "function 30", probe.stderr


def test_typescript_checks_the_declarations_and_the_sample(tmp_path):
    tsc = shutil.which("tsc")
    assert tsc is not None, "tsc is missing: Tests/install-deps.sh --with-test-tools installs node-typescript"
    ok = subprocess.run([tsc, "-p", str(NODE_DIR)], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = NODE_DIR / "examples" / "check-auth.mjs"
    wrong = tmp_path / "wrong.mjs"
    wrong.write_text(bad.read_text().replace("'../passbridge.mjs'", json.dumps(str(NODE_DIR / "passbridge.mjs")))
                     .replace("requestorID: 'REF'", "requestorId: 'REF'"))
    config = tmp_path / "tsconfig.json"
    config.write_text(json.dumps({"extends": str(NODE_DIR / "tsconfig.json"),
                                  "files": [str(NODE_DIR / "passbridge.d.mts"), str(wrong)]}))
    refused = subprocess.run([tsc, "-p", str(config)], capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "wrong.mjs" in refused.stdout, refused.stdout


CHECKS = r"""
import { PassBridge, ConnectionClosed, DaemonExited, PassBridgeError, RPCError, Timeout } from 'PACKAGE';
const [exe, silent, emulator, statement, state, closer, flag] = process.argv.slice(2);
const out = {};
const settle = (p) => p.then((v) => ({ ok: v }), (e) => ({ error: e.constructor.name, message: e.message, base: e instanceof PassBridgeError }));

// failure reasons and the misspelled param, against the real daemon
let ae = await PassBridge.spawn(exe, ['--backend', emulator, '--state-dir', state], { stderr: 'ignore' });
out.noStatement = await ae.call('setRequestor', { requestorID: 'REF' });
out.typo = await settle(ae.call('init', { webview: false }));
out.typoData = (await ae.call('init', { webview: false }).catch((e) => e)).data;
out.close1 = await ae.close();
out.close2 = await ae.close();
const started = Date.now();
out.afterClose = await settle(ae.call('checkAuthentication'));
out.afterCloseMs = Date.now() - started;

// a bad flag: the daemon's exit status and message
ae = await PassBridge.spawn(exe, ['--backend', 'ftp://x']);
out.exited = await ae.call('init').catch((e) => ({ error: e.constructor.name, exitCode: e.exitCode, stderr: e.stderr, closed: e instanceof ConnectionClosed }));

// a call made after the daemon closed its output but before it exited waits for the status: the fake daemon
// exits only once the call is waiting
ae = await PassBridge.spawn(closer, []);
while (!ae.closed) await new Promise((r) => setTimeout(r, 10));
let lateSettled = false;
const late = ae.call('init').catch((e) => ({ error: e.constructor.name, exitCode: e.exitCode }));
late.then(() => (lateSettled = true));
for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
out.lateWaited = !lateSettled;
(await import('node:fs')).writeFileSync(flag, '');
out.late = await late;

// a daemon that never answers: default timeout, AbortSignal, no timeout for calls that wait on the user
ae = await PassBridge.spawn(silent, [], { timeout: 0.3, stderr: 'ignore' });
out.timeout = await settle(ae.call('checkAuthentication'));
const controller = new AbortController();
const aborted = settle(ae.call('getAuthorization', { resource: 'ch1' }, { signal: controller.signal }));
controller.abort(new Error('user left'));
out.aborted = await aborted;
const login = ae.call('getAuthentication');
let loginDone = false;
login.then(() => (loginDone = true), () => (loginDone = true));
await new Promise((r) => setTimeout(r, 800));
out.loginStillWaiting = !loginDone;
await ae.close();
out.loginAfterClose = await settle(login);
console.log(JSON.stringify(out));
"""


def test_timeouts_abort_close_and_failure_reasons(bin_dir, emulator_url, tmp_path):
    silent = tmp_path / "silent"
    silent.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "import sys\nfor l in sys.stdin: pass"\n')
    silent.chmod(0o755)
    script = tmp_path / "checks.mjs"
    script.write_text(CHECKS.replace("PACKAGE", str(NODE_DIR / "passbridge.mjs")))
    flag = tmp_path / "exit-now"
    closer = tmp_path / "closer"
    closer.write_text(f"#!/bin/sh\nexec 1>&-\ni=0; while [ ! -e '{flag}' ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\n"
                      "exit 2\n")
    closer.chmod(0o755)
    run = subprocess.run(["node", str(script), str(bin_dir / "passbridge"), str(silent), emulator_url, statement(),
                          str(tmp_path / "state"), str(closer), str(flag)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    out = json.loads(run.stdout)
    assert out["noStatement"] == {"status": 0, "statuses": [{"id": "R400", "errorId": "R400", "level": "error", "message": "No software statement",
                                                             "details": NO_STATEMENT}]}
    assert out["typo"]["error"] == "RPCError" and out["typo"]["base"]
    assert out["typo"]["message"] == "-32602: Invalid params: 'webview' is not a param of init; did you mean 'webView'?"
    assert out["typoData"]["closest"] == "webView"
    assert out["close1"] == 0 and out["close2"] == 0
    assert out["afterClose"]["error"] == "ConnectionClosed" and out["afterCloseMs"] < 500
    assert out["exited"] == {"error": "DaemonExited", "exitCode": 2, "closed": True,  # a usage error
                             "stderr": ["passbridge: --backend needs an https URL (or http to a loopback host, or \"emulator\"), got ftp://x (see passbridge --help)"]}
    assert out["lateWaited"] is True and out["late"] == {"error": "DaemonExited", "exitCode": 2}
    assert out["timeout"] == {"error": "Timeout", "message": "checkAuthentication: no answer within 0.3 s", "base": True}
    assert out["aborted"]["message"] == "user left"
    assert out["loginStillWaiting"] is True
    assert out["loginAfterClose"]["error"] == "ConnectionClosed"


def test_demo_piped_into_head_leaves_no_child(bin_dir):
    emulator = str(bin_dir / "pass-emulator")
    run = subprocess.run(["bash", "-c", f'node "{NODE_DIR / "demo.mjs"}" --bin-dir "{bin_dir}" | head -1'],
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.startswith("[ok] pass-emulator: listening on http://127.0.0.1:")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", f"^{emulator} --port 0 --exit-on-eof"], capture_output=True, text=True).stdout
        if not left:
            break
        time.sleep(0.2)
    assert left == ""


def test_demo_help():
    run = subprocess.run(["node", str(NODE_DIR / "demo.mjs"), "--help"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout.startswith("usage: node Clients/node/demo.mjs [--bin-dir DIR]")
