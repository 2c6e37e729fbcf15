"""The Node client's typed helpers and AbortSignal cancellation (Clients/node/passbridge.mjs), end to end: the real
daemon against the emulator's default configuration, a second-screen login completed by a "phone" on the Python
side, `authorize` rejecting with NotAuthorized (the MVPD's message) and NotAuthenticated, and an aborted login
or getAuthorization cancelled in the daemon with `$/cancelRequest` (its notifications before the rejection)."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from clients_support import ROOT, emulator_url, statement  # noqa: F401  (fixture)
from test_clients_python_api import DENIED, phone

import passbridge  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")

SCRIPT = r"""
import { PassBridge, EntitlementError, NotAuthorized, NotAuthenticated, LoginCancelled, RequestorFailed, PassBridgeError } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const out = {};
const why = (e) => ({ name: e.constructor.name, base: e instanceof EntitlementError && e instanceof PassBridgeError,
  errorCode: e.errorCode, resource: e.resource, reasons: e.reasons, mvpdMessage: e.mvpdMessage, message: e.message });
const flags = ['--backend', emulator, '--state-dir', state, '--software-statement', statement, '--activation-url', emulator + '/activate'];
const ae = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
const seen = [];
ae.on('status', (s) => seen.push(`status ${s.id}`));
ae.on('setAuthenticationStatus', (s) => seen.push(`setAuthenticationStatus ${s.status} ${s.errorCode}`));
ae.on('tokenRequestFailed', (s) => seen.push(`tokenRequestFailed ${s.errorCode}`));
await ae.call('init', { webView: false });
await ae.setRequestorOrThrow('REF');
out.before = await ae.checkAuthentication();
out.unauthenticated = await ae.authorize('ch1').catch(why);

// An aborted login: cancelled in the daemon, rejected with the signal's reason after the flow's end.
const controller = new AbortController();
ae.once('displayProviderDialog', () => ae.call('setSelectedProvider', { mvpdId: 'MockMVPD' }));
const leave = (s) => { if (s.id === 'REGCODE') { ae.off('status', leave); controller.abort(new Error('user left')); } };
ae.on('status', leave);
out.aborted = await ae.call('getAuthentication', {}, { signal: controller.signal }).then((v) => ({ ok: v }), (e) => ({ rejected: e.message, seenBefore: [...seen] }));
out.afterAbort = await ae.checkAuthentication();

// The real login: the phone (the test) completes the code printed here.
seen.length = 0;
ae.once('displayProviderDialog', () => ae.call('setSelectedProvider', { mvpdId: 'MockMVPD' }));
const regcode = (s) => { if (s.id === 'REGCODE') { console.log(JSON.stringify({ code: s.code, url: s.url })); ae.off('status', regcode); } };
ae.on('status', regcode);
out.login = await ae.call('getAuthentication');
out.token = typeof (await ae.authorize('ch1'));
out.denied = await ae.authorize('ch2').catch(why);
out.deniedIsNotAuthorized = (await ae.authorize('ch2').catch((e) => e)) instanceof NotAuthorized;
out.check = await ae.checkAuthorization('ch2');
out.pre = await ae.preauthorize(['ch1', 'ch2']);
out.zip = await ae.metadata('METADATA_USER_META', { key: 'zip' });
// A logout the backend does not take keeps the login: logOut rejects (it used to resolve as if logged out).
const faults = emulator + '/__admin/faults';
await fetch(faults, { method: 'POST', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ method: 'GET', path: '/api/v2/REF/logout/*', kind: 'drop' }) });
out.keptLogout = await ae.logOut().then(() => 'resolved', why);
await fetch(faults, { method: 'DELETE' });
out.stillIn = (await ae.checkAuthentication()).authenticated;
out.logout = await ae.logOut();

// getAuthorization that must log in, aborted at the provider dialog.
seen.length = 0;
const again = new AbortController();
ae.once('displayProviderDialog', () => again.abort(new Error('back button')));
out.abortedAuthorize = await ae.authorize('ch1', { login: true, signal: again.signal }).then((v) => ({ ok: v }), (e) => ({ rejected: e.message, seenBefore: [...seen] }));
await ae.close();

const bare = await PassBridge.spawn(exe, ['--backend', emulator, '--state-dir', state + '-bare'], { stderr: 'ignore' });
out.requestor = await bare.setRequestorOrThrow('REF').then(() => 'ok', why);
out.requestorIsRequestorFailed = (await bare.setRequestorOrThrow('REF').catch((e) => e)) instanceof RequestorFailed;
await bare.close();
console.log(JSON.stringify(out));
"""


def run_node(source: str, name: str, bin_dir, emulator_url, tmp_path) -> dict:
    """Runs a Node script of this file to its end (exit 0); returns the JSON of its last line."""
    script = tmp_path / f"{name}.mjs"
    script.write_text(source.replace("PACKAGE", str(ROOT / "Clients" / "node" / "passbridge.mjs")))
    run = subprocess.run(["node", str(script), str(bin_dir / "passbridge"), emulator_url, statement(), str(tmp_path / "state")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def run_with_phone(source: str, name: str, bin_dir, emulator_url, tmp_path) -> dict:
    """Runs a Node script of this file: its first stdout line is the second screen's code, which the scripted
    phone completes; returns the JSON of its last line."""
    script = tmp_path / f"{name}.mjs"
    script.write_text(source.replace("PACKAGE", str(ROOT / "Clients" / "node" / "passbridge.mjs")))
    proc = subprocess.Popen(["node", str(script), str(bin_dir / "passbridge"), emulator_url, statement(),
                             str(tmp_path / "state")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        assert line.startswith("{"), line + proc.stderr.read()
        shown = json.loads(line)
        phone(passbridge.RegistrationCode(shown["code"], shown["url"], shown.get("authenticateUrl") or shown["url"], None, None))
        rest, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, rest + err
    finally:
        proc.kill()
        proc.wait()
    return json.loads(rest.strip().splitlines()[-1])


def test_node_typed_helpers_and_abort_signal_cancel_request(bin_dir, emulator_url, tmp_path):
    out = run_with_phone(SCRIPT, "api", bin_dir, emulator_url, tmp_path)
    assert out["before"] == {"authenticated": False, "errorCode": passbridge.USER_NOT_AUTHENTICATED_ERROR, "statuses": []}
    assert out["unauthenticated"]["name"] == "NotAuthenticated" and out["unauthenticated"]["base"]
    assert (out["unauthenticated"]["errorCode"], out["unauthenticated"]["resource"]) == (passbridge.USER_NOT_AUTHENTICATED_ERROR, "ch1")
    # The abort waited for the daemon's end of the flow: its notifications came before the rejection.
    assert out["aborted"]["rejected"] == "user left"
    assert "setAuthenticationStatus 0 Provider not Selected Error" in out["aborted"]["seenBefore"]
    assert "status N005" in out["aborted"]["seenBefore"]
    assert out["afterAbort"]["authenticated"] is False
    assert out["login"] == {"status": 1, "errorCode": ""}
    assert out["token"] == "string"
    assert out["denied"]["name"] == "NotAuthorized" and out["deniedIsNotAuthorized"]
    assert (out["denied"]["errorCode"], out["denied"]["mvpdMessage"]) == (passbridge.USER_NOT_AUTHORIZED_ERROR, DENIED)
    assert out["denied"]["reasons"][0].startswith("Z100 ")
    assert out["check"]["kind"] == "failure" and out["check"]["description"] == DENIED
    assert {k: out["pre"][k] for k in ("authorized", "denied")} == {"authorized": ["ch1"], "denied": ["ch2"]}
    # The wire's preauthorize (not checkPreauthorizedResources): each refusal says why; no failure.
    assert list(out["pre"]["errors"]) == ["ch2"] and out["pre"]["errors"]["ch2"]["code"] == "preauthorization_denied_by_mvpd"
    assert "failure" not in out["pre"]
    assert out["zip"]["key"] == 3 and out["zip"]["encrypted"] is True
    assert out["keptLogout"]["name"] == "EntitlementError" and out["keptLogout"]["base"], out["keptLogout"]
    assert out["keptLogout"]["errorCode"] == "Generic Authentication Error" and out["keptLogout"]["reasons"][0].startswith("CFG404 ")
    assert out["stillIn"] is True
    assert out["logout"] == {"statuses": []}
    assert out["abortedAuthorize"]["rejected"] == "back button"
    assert "tokenRequestFailed Provider not Selected Error" in out["abortedAuthorize"]["seenBefore"]
    assert out["requestor"]["name"] == "RequestorFailed" and out["requestor"]["reasons"] == ["R400 No software statement"]
    assert out["requestorIsRequestorFailed"]


LOGIN = r"""
import { PassBridge, LoginCancelled, Timeout } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const out = {};
const flags = ['--backend', emulator, '--state-dir', state, '--software-statement', statement, '--activation-url', emulator + '/activate'];
const ae = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
const seen = [];
ae.on('status', (s) => seen.push(`status ${s.id}`));
ae.on('setAuthenticationStatus', (s) => seen.push(`setAuthenticationStatus ${s.status} ${s.errorCode}`));
await ae.call('init', { webView: false });
await ae.setRequestorOrThrow('REF');

// Aborted from showCode: the login is cancelled in the daemon before the rejection.
const controller = new AbortController();
out.aborted = await ae.loginSecondScreen(() => controller.abort(new Error('user left')), { mvpd: 'MockMVPD', signal: controller.signal })
  .then((v) => ({ ok: v }), (e) => ({ rejected: e.message, seenBefore: [...seen] }));
// A showCode that throws, and a timeout.
out.thrown = await ae.loginSecondScreen(() => { throw new Error('no screen'); }, { mvpd: 'MockMVPD' }).catch((e) => e.message);
out.timeout = await ae.loginSecondScreen(() => {}, { mvpd: 'MockMVPD', timeout: 2 }).catch((e) => e instanceof Timeout);
out.cancelled = await ae.loginSecondScreen(() => {}, { mvpd: () => null }).catch((e) => [e instanceof LoginCancelled, e.errorCode]);
// The real login: the phone (the test) completes the code printed here.
const codes = [];
out.login = await ae.loginSecondScreen((code) => { codes.push(code); if (!code.update) console.log(JSON.stringify(code)); }, { mvpd: 'MockMVPD', timeout: 90 });
out.first = codes[0];
out.listeners = ['displayProviderDialog', 'navigateToUrl', 'status'].map((n) => ae.listenerCount(n));
await ae.close();
console.log(JSON.stringify(out));
"""


def test_node_second_screen_login_helper_abort_throw_timeout_and_success(bin_dir, emulator_url, tmp_path):
    out = run_with_phone(LOGIN, "login", bin_dir, emulator_url, tmp_path)
    assert out["aborted"]["rejected"] == "user left"
    assert out["aborted"]["seenBefore"][-2:] == ["setAuthenticationStatus 0 Provider not Selected Error", "status N005"]
    assert out["thrown"] == "no screen"
    assert out["timeout"] is True
    assert out["cancelled"] == [True, passbridge.PROVIDER_NOT_SELECTED_ERROR]
    assert out["login"] == {"authenticated": True, "errorCode": "", "statuses": []}
    first = out["first"]
    # `url` is what the daemon says to show: the configured activation page, with the code filled in.
    assert first["url"].startswith(emulator_url + "/activate?code=") and first["update"] is False
    assert first["authenticateUrl"].startswith(emulator_url + "/api/v2/authenticate/REF/")
    assert 0 < first["secondsLeft"] <= 1800 and first["notAfter"] > 0
    assert out["listeners"] == [0, 0, 1]  # only the test's own status listener is left


WEB = r"""
import { execFileSync } from 'node:child_process';
import { PassBridge } from 'PACKAGE';
const [exe, emulator, statement, state, python, browser] = process.argv.slice(2);
const ae = await PassBridge.spawn(exe, ['--backend', emulator, '--state-dir', state, '--software-statement', statement], { stderr: 'ignore' });
await ae.setRequestorOrThrow('REF');
const pages = [];
const handedOver = [];  // the URLs handed to handleExternalURL, in order
const call = ae.call.bind(ae);
ae.call = (method, params, options) => {
  if (method === 'handleExternalURL') handedOver.push(params.url);
  return call(method, params, options);
};
// The web view: the scripted browser logs in as demo/demo and prints the redirect URL it stopped at.
const view = async (url) => {
  pages.push(url.split('?')[0]);
  return execFileSync(python, [browser, url, '--field', 'username=demo', '--field', 'password=demo'], { encoding: 'utf8' }).trim();
};
const login = await ae.loginWeb(view, { mvpd: (mvpds) => mvpds.find((m) => m.ID === 'MockMVPD').ID, timeout: 60 });
const token = await ae.authorize('ch1');
const logout = await ae.logOut({ openUrl: view, timeout: 60 });
const after = await ae.checkAuthentication();
// A logout whose page comes back after the call gave up (Timeout): the late page must not end the next login's.
let lateDone;
const late = new Promise((resolve) => { lateDone = resolve; });
const slow = (url) => new Promise((resolve) => setTimeout(() => { resolve(view(url)); setTimeout(lateDone, 300); }, 1500));
await ae.loginWeb(view, { mvpd: 'MockMVPD', timeout: 60 });
const gaveUp = await ae.logOut({ openUrl: slow, timeout: 0.5 }).then(() => 'resolved', (e) => e.constructor.name);
const relogin = await ae.loginWeb(async (url) => { await late; return view(url); }, { mvpd: 'MockMVPD', timeout: 60 })
  .then((v) => v.authenticated, (e) => `${e.constructor.name}: ${e.message}`);
const wrongType = await ae.logOut({ openUrl: 42 }).then(() => 'resolved', (e) => e.constructor.name);
await ae.close();
await new Promise((resolve) => setTimeout(resolve, 100));  // any page still coming back has been handed over by now
console.log(JSON.stringify({ login, pages, token: typeof token, logout, after: after.authenticated, gaveUp, relogin, wrongType,
  handedOver: handedOver.length }));
"""


def test_node_web_login_helper_hands_the_redirect_over(bin_dir, emulator_url, tmp_path):
    script = tmp_path / "web.mjs"
    script.write_text(WEB.replace("PACKAGE", str(ROOT / "Clients" / "node" / "passbridge.mjs")))
    run = subprocess.run(["node", str(script), str(bin_dir / "passbridge"), emulator_url, statement(), str(tmp_path / "state"),
                          sys.executable, str(ROOT / "Clients" / "python" / "examples" / "browser.py")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["login"] == {"authenticated": True, "errorCode": "", "statuses": []}
    assert out["token"] == "string"
    # logOut's openUrl opened the MVPD's logout page and handed back where it ended (Node had no page hook: the
    # logout waited the daemon's 10 s for a page nothing opened).
    assert len(out["pages"]) == 5 and all(page.startswith(emulator_url) for page in out["pages"])
    assert [page.endswith("/logout") for page in out["pages"]] == [False, True, False, True, False]
    assert out["logout"] == {"statuses": []} and out["after"] is False
    # From a breaking pass: the page of a logout that had timed out came back during the next login and was handed
    # over as that login's (the pass saw the login end with N130); a page that comes back after its call ended is
    # not handed over now: four pages came back in time (two logins, a logout, the last login), and no fifth.
    assert out["gaveUp"] == "Timeout" and out["relogin"] is True, out
    assert out["handedOver"] == 4, out
    assert out["wrongType"] == "TypeError"


SECOND_SCREEN_HOST = r"""
import { PassBridge } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const ae = await PassBridge.spawn(exe, ['--backend', emulator, '--state-dir', state, '--software-statement', statement], { stderr: 'ignore' });
await ae.call('init', { webView: false });
await ae.setRequestorOrThrow('REF');
const began = Date.now();
const failed = await ae.loginWeb(async () => null, { mvpd: 'MockMVPD', timeout: 20 }).then(() => 'resolved', (e) => `${e.constructor.name}: ${e.message}`);
const seconds = (Date.now() - began) / 1000;
const after = await ae.checkAuthentication();
await ae.close();
console.log(JSON.stringify({ failed, seconds, after: after.authenticated }));
"""


def test_node_login_web_on_a_second_screen_host_fails_at_once_saying_why(bin_dir, emulator_url, tmp_path):
    """As the Python client (test_clients_python_api.py): loginWeb on a host that sent init {webView: false} waited
    silently for its timeout while the daemon showed a registration code nobody saw."""
    out = run_node(SECOND_SCREEN_HOST, "host", bin_dir, emulator_url, tmp_path)
    assert out["failed"].startswith("PassBridgeError: the daemon shows a registration code"), out
    assert "loginSecondScreen" in out["failed"] and out["seconds"] < 10 and out["after"] is False, out


PARTNER_HOST = r"""
import { PassBridge } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const ae = await PassBridge.spawn(exe, ['--backend', emulator, '--state-dir', state, '--software-statement', statement], { stderr: 'ignore' });
const statuses = [];
ae.on('status', (s) => statuses.push(s.id));
const out = {};
let forgetful = true;
// The first answer forgets its return: the daemon must get null, not a response with no result.
ae.handle('partnerSSO/checkAccessStatus', async () => { if (!forgetful) return { accessStatus: 'granted' }; });
ae.handle('partnerSSO/requestAccountMetadata', async (p) => {
  if (p.interruptionAllowed) throw { reason: 'unsupportedProvider', unsupportedProviderIdentifier: 'MockPicker' };
  return { providerId: null, authenticationExpirationDate: null };
});
await ae.call('init', { redirectUrl: 'adobepass://ios.app', partnerSSO: 'Apple' });
const began = Date.now();
out.requestor = await ae.call('setRequestor', { requestorID: 'REF' });
await ae.call('rpc.stats');
out.requestorSeconds = (Date.now() - began) / 1000;
out.requestorStatuses = [...statuses];
forgetful = false;
statuses.length = 0;
const navigated = new Promise((resolve) => ae.once('navigateToUrl', resolve));
const login = ae.call('getAuthentication');
await navigated;
out.selected = (await ae.call('getSelectedProvider')).mvpd?.ID;
out.statusesAtPage = [...statuses];
await ae.call('setSelectedProvider', { mvpdId: null });
await login;
await ae.close();
console.log(JSON.stringify(out));
"""


def test_node_host_handlers_answer_null_for_nothing_and_refuse_with_their_fields(bin_dir, emulator_url, tmp_path):
    """From a new-user pass (a Node set-top developer): a partnerSSO handler that returned nothing sent a response
    with neither result nor error, which the daemon took for no answer and waited 10 s on; and a refusal's
    `unsupportedProviderIdentifier` was dropped, so the picker's provider (MockPicker, a PICKER boarding) got N003
    and the regular picker instead of its own login page. Now: null, refused at once (APPL_ERROR); and the
    provider's page, with no status."""
    out = run_node(PARTNER_HOST, "partner", bin_dir, emulator_url, tmp_path)
    assert out["requestor"] == {"status": 1} and "APPL_ERROR" in out["requestorStatuses"], out
    assert out["requestorSeconds"] < 5, out
    assert out["selected"] == "MockPicker" and out["statusesAtPage"] == [], out


AWKWARD_HOST = r"""
import { PassBridge } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const ae = await PassBridge.spawn(exe, ['--backend', emulator, '--state-dir', state, '--software-statement', statement], { stderr: 'ignore' });
const statuses = [];
ae.on('status', (s) => statuses.push(s.id));
const handlers = [
  () => { const e = { reason: 'accessNotGranted' }; e.self = e; throw e; },   // a cycle: the reason still goes
  () => ({ accessStatus: 'granted', n: 10n }),                                 // a BigInt: no JSON, so 'other'
  () => { throw { reason: 'accessNotGranted', message: 42, rpcCode: 'x' }; },  // odd types: made valid
];
let turn = 0;
ae.handle('partnerSSO/checkAccessStatus', async () => handlers[turn]());
ae.handle('partnerSSO/requestAccountMetadata', async () => ({ providerId: null, authenticationExpirationDate: null }));
await ae.call('init', { redirectUrl: 'adobepass://ios.app', partnerSSO: 'Apple' });
const out = [];
for (turn = 0; turn < handlers.length; turn++) {
  statuses.length = 0;
  const began = Date.now();
  await ae.call('setRequestor', { requestorID: 'REF' });
  await ae.call('rpc.stats');
  out.push({ seconds: (Date.now() - began) / 1000, statuses: [...statuses] });
}
await ae.close();
console.log(JSON.stringify(out));
"""


def test_node_host_handlers_always_answer_one_valid_response(bin_dir, emulator_url, tmp_path):
    """From a breaking pass: a handler whose refusal held a cycle, or whose result held a BigInt, made the client
    throw while writing the answer (the host process exited under Node's defaults, and the daemon waited 10 s); a
    refusal with a message or a code of the wrong type went out as an invalid error object, its reason lost."""
    out = run_node(AWKWARD_HOST, "awkward", bin_dir, emulator_url, tmp_path)
    assert [turn["statuses"] for turn in out] == [["VSA403"], ["APPL_ERROR"], ["VSA403"]], out
    assert all(turn["seconds"] < 5 for turn in out), out


ENDINGS = r"""
import { PassBridge } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const out = {};
const flags = ['--backend', emulator, '--state-dir', state, '--software-statement', statement];
const named = (e) => ({ name: e.constructor.name, message: e.message, method: e.method, statuses: e.statuses });
const refused = (e) => [e.constructor.name, e.message];

out.spawnSocket = await PassBridge.spawn(exe, [...flags, '--socket', state + '.sock']).then(() => 'resolved', refused);
const ae = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
await ae.setRequestorOrThrow('REF');
out.params = await ae.call('setRequestor', 'REF').then(() => 'resolved', refused);
out.arrayParams = await ae.call('setRequestor', ['REF']).then(() => 'resolved', refused);
out.mapParams = await ae.call('setRequestor', new Map([['requestorID', 'REF']])).then(() => 'resolved', refused);
out.metadata = await ae.metadata('METADATA_USER_META', { userMetaKey: 'zip' }).then(() => 'resolved', refused);
// No mvpd and no listener of the app's: nothing would answer the dialog.
out.unanswered = await ae.loginWeb(() => null, { timeout: 30 }).then(() => 'resolved', named);
out.afterUnanswered = (await ae.checkAuthentication()).authenticated;
// The daemon stops (SIGTERM) while its login page is open: the login is not the user's cancel.
out.stopped = await ae.loginWeb(() => { ae.process.kill('SIGTERM'); return new Promise(() => {}); }, { mvpd: 'MockMVPD' })
  .then(() => 'resolved', named);
out.exit = await ae.exited;
out.afterStop = await ae.call('rpc.stats').then(() => 'resolved', named);
await ae.close();

const closed = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
await closed.close();
out.afterClose = await closed.call('rpc.stats').then(() => 'resolved', named);
const killed = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
await killed.setRequestorOrThrow('REF');
killed.once('displayProviderDialog', () => killed.process.kill('SIGKILL'));
out.killed = await killed.call('getAuthentication').then(() => 'resolved', named);
console.log(JSON.stringify(out));
"""


def test_node_client_says_how_a_call_ended(bin_dir, emulator_url, tmp_path):
    """From a Node new-user pass (Clients/node/README.md): a daemon stopped during a login made loginWeb reject with
    LoginCancelled, as if the user had cancelled; `metadata` took `{userMetaKey}` and ignored it; a loginWeb with
    nothing to answer the provider dialog waited for ever; `spawn` with `--socket` failed only at the first call;
    a call after close() said the daemon closed the connection; a killed daemon's DaemonExited named no call."""
    out = run_node(ENDINGS, "endings", bin_dir, emulator_url, tmp_path)
    assert out["spawnSocket"][0] == "TypeError" and "PassBridge.connect(path)" in out["spawnSocket"][1]
    assert out["params"] == ["TypeError", "setRequestor: params must be a plain object of named params (or left out), not string"]
    assert out["arrayParams"] == ["TypeError", "setRequestor: params must be a plain object of named params (or left out), not an array"]
    assert out["mapParams"] == ["TypeError", "setRequestor: params must be a plain object of named params (or left out), not a Map object"]
    assert out["metadata"][0] == "TypeError" and "unknown option 'userMetaKey'" in out["metadata"][1]
    assert out["unanswered"]["name"] == "PassBridgeError" and "nothing answers it" in out["unanswered"]["message"]
    assert out["afterUnanswered"] is False
    stopped = out["stopped"]
    assert stopped["name"] == "ConnectionClosed", stopped
    assert [(s["id"], s.get("details")) for s in stopped["statuses"]] == [
        ("N005", "the instance closed: its connection ended, or the daemon is stopping")]
    assert out["exit"] == 0
    assert out["afterStop"] == {"name": "ConnectionClosed", "message": "rpc.stats: the daemon closed the connection", "method": "rpc.stats"}
    assert out["afterClose"] == {"name": "ConnectionClosed", "message": "rpc.stats: the connection was closed by close()", "method": "rpc.stats"}
    assert out["killed"]["name"] == "DaemonExited" and out["killed"]["method"] == "getAuthentication"
    assert out["killed"]["message"].startswith("getAuthentication: the daemon exited with status SIGKILL"), out["killed"]


LISTENERS = r"""
import { PassBridge } from 'PACKAGE';
const [exe, emulator, statement, state] = process.argv.slice(2);
const out = {};
const flags = ['--backend', emulator, '--state-dir', state, '--software-statement', statement];
const ae = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
await ae.setRequestorOrThrow('REF');
ae.on('displayProviderDialog', () => { throw new Error('a bug of the app'); });
out.login = await ae.call('getAuthentication');
ae.removeAllListeners('displayProviderDialog');
ae.on('displayProviderDialog', async () => { throw new Error('an async bug of the app'); });
out.asyncLogin = await ae.call('getAuthentication');
ae.removeAllListeners('displayProviderDialog');
// No listener of the app's: authorize with a login cancels it at the dialog and says why.
out.authorize = await ae.authorize('ch1', { login: true, timeout: 30 }).then(() => 'resolved', (e) => [e.constructor.name, e.message]);
// A throwing listener does not keep the helpers' own listeners from their notification.
ae.on('navigateToUrl', () => { throw new Error('a bug at the page'); });
out.pages = [];
out.web = await ae.loginWeb((url) => { out.pages.push(url.split('?')[0]); return null; }, { mvpd: 'MockMVPD', timeout: 30 })
  .then(() => 'resolved', (e) => e.constructor.name);
out.after = await ae.checkAuthentication();
await ae.close();
// A daemon that does not exit: close() kills it after CLOSE_GRACE.
const stopped = await PassBridge.spawn(exe, flags, { stderr: 'ignore' });
await stopped.call('rpc.stats');
stopped.process.kill('SIGSTOP');
out.closed = await stopped.close();
console.log(JSON.stringify(out));
"""


def test_node_client_survives_a_throwing_listener_and_closes_a_daemon_that_does_not_exit(bin_dir, emulator_url, tmp_path):
    """From a breaking pass: a listener that threw ended the whole Node process (thrown into the client's reader);
    close() of a spawned daemon that had been stopped waited for as long as it stayed stopped."""
    script = tmp_path / "listeners.mjs"
    script.write_text(LISTENERS.replace("PACKAGE", str(ROOT / "Clients" / "node" / "passbridge.mjs")))
    run = subprocess.run(["node", str(script), str(bin_dir / "passbridge"), emulator_url, statement(), str(tmp_path / "state")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["login"] == {"status": 0, "errorCode": passbridge.PROVIDER_NOT_SELECTED_ERROR}
    assert "passbridge: a 'displayProviderDialog' listener threw: Error: a bug of the app" in run.stderr
    # An async listener's rejection too (a second breaking pass: it ended the process).
    assert out["asyncLogin"] == {"status": 0, "errorCode": passbridge.PROVIDER_NOT_SELECTED_ERROR}
    assert "passbridge: a 'displayProviderDialog' listener threw: Error: an async bug of the app" in run.stderr
    assert out["authorize"][0] == "PassBridgeError" and "nothing answers it" in out["authorize"][1]
    # The app's listener threw at the page; the helper's own still got it (and the login was cancelled).
    assert len(out["pages"]) == 1 and out["web"] == "LoginCancelled"
    assert out["after"]["authenticated"] is False
    assert out["closed"] == "SIGKILL"
