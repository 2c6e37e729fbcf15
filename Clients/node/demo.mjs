#!/usr/bin/env node
// PassBridge from Node (standard library only, Node >= 18): login -> authorize -> logout over stdio against
// the Adobe Pass emulator. Starts pass-emulator, spawns passbridge --backend URL with a fresh state
// directory, logs in at MockMVPD as demo/demo through the mock login page (fetch, redirects followed by hand,
// stopping at the redirect URL), authorizes ch1 (media token checked by `pass-emulator verify-token`) and ch2
// (denied), logs out. Prints each step; exits 0 only if every step did what it should.
//
//   node Clients/node/demo.mjs [--bin-dir DIR]      (default: $PASSBRIDGE_BIN_DIR, else swift's bin path)
//
// The emulator and the daemon end with this process, also when its stdout closes early (`demo.mjs | head -1`).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PassBridge } from './passbridge.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REDIRECT_URL = 'adobepass://ios.app';
const TIMEOUT_MS = 60_000;

const USAGE = `usage: node Clients/node/demo.mjs [--bin-dir DIR]
Runs login -> authorize -> logout against pass-emulator and prints each step; exit 0 when every step did
what it should. DIR holds passbridge and pass-emulator (default: $PASSBRIDGE_BIN_DIR, else \`swift build --show-bin-path\`).`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
// A reader that went away (`| head -1`) ends the demo; the 'exit' handlers end its children.
process.stdout.on('error', (e) => process.exit(e.code === 'EPIPE' ? 0 : 1));

const say = (line) => console.log(line);
const ok = (step, detail) => say(`[ok] ${step}: ${detail}`);
function expect(cond, step, detail) {
  if (!cond) throw new Error(`${step}: ${detail}`);
}
const withTimeout = (promise, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS).unref())]);

function binDir() {
  const i = process.argv.indexOf('--bin-dir');
  if (i > 0 && process.argv[i + 1]) return process.argv[i + 1];
  if (process.env.PASSBRIDGE_BIN_DIR) return process.env.PASSBRIDGE_BIN_DIR;
  return execFileSync('swift', ['build', '--show-bin-path'], { cwd: ROOT, encoding: 'utf8' }).trim();
}

function dummySoftwareStatement() {
  const part = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  return [part({ alg: 'RS256', typ: 'JWT' }), part({ iss: 'passbridge-node-demo', iat: Math.floor(Date.now() / 1000) }), part('not-a-real-signature')].join('.');
}

function startEmulator(exe, logFd) {
  // --exit-on-eof: the emulator also ends when this process dies and its stdin pipe closes.
  const child = spawn(exe, ['--port', '0', '--exit-on-eof'], { stdio: ['pipe', 'pipe', logFd] });
  process.once('exit', () => child.kill());
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    lines.once('line', (url) => (url.startsWith('http') ? resolve({ child, url }) : reject(new Error(`pass-emulator printed ${url}`))));
    child.once('exit', (code) => reject(new Error(`pass-emulator exited with ${code}`)));
  });
}

// The web view: follows redirects by hand with cookies, submits the login form, stops at the redirect URL.
async function webView(url, fields) {
  const cookies = new Map();
  let body;
  let method = 'GET';
  for (let step = 0; step < 12; step++) {
    const headers = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const resp = await fetch(url, { method, body, headers, redirect: 'manual' });
    say(`    web view: ${method} ${url.split('?')[0]} -> ${resp.status}`);
    for (const c of resp.headers.getSetCookie?.() ?? []) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = resp.headers.get('location');
    const text = await resp.text();
    [method, body] = ['GET', undefined];
    if (resp.status >= 300 && resp.status < 400 && location) {
      const target = new URL(location, url).href;
      if (!/^https?:/.test(target)) {
        say(`    web view: redirect to ${target} (not loaded: handed to the app)`);
        return target;
      }
      url = target;
      continue;
    }
    if (resp.status >= 400) throw new Error(`HTTP ${resp.status} from ${url.split('?')[0]}`);
    const form = text.match(/<form\b([^>]*)>([\s\S]*?)<\/form>/i);
    if (!form) throw new Error(`page ${url.split('?')[0]} has no form and no redirect`);
    const attr = (tag, name) => (tag.match(new RegExp(`\\b${name}\\s*=\\s*["']([^"']*)["']`, 'i')) ?? [])[1];
    const data = new URLSearchParams();
    for (const [input] of form[2].matchAll(/<input\b[^>]*>/gi)) {
      const name = attr(input, 'name');
      if (!name) continue;
      const type = (attr(input, 'type') ?? 'text').toLowerCase();
      if (type === 'submit' && data.has(name)) continue;
      data.append(name, type !== 'hidden' && fields[name] !== undefined ? fields[name] : (attr(input, 'value') ?? ''));
    }
    const action = new URL((attr(form[1], 'action') ?? '').replaceAll('&amp;', '&') || url, url).href;
    if ((attr(form[1], 'method') ?? 'GET').toUpperCase() === 'POST') [url, method, body] = [action, 'POST', data.toString()];
    else url = `${action.split('?')[0]}?${data}`;
  }
  throw new Error('gave up after 12 pages');
}

async function main() {
  const bins = binDir();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'passbridge-node-'));
  const emuLog = fs.openSync(path.join(work, 'pass-emulator.log'), 'w');
  const daemonLog = fs.openSync(path.join(work, 'passbridge.log'), 'w');
  const emulator = await startEmulator(path.join(bins, 'pass-emulator'), emuLog);
  ok('pass-emulator', `listening on ${emulator.url}`);
  let ae;
  try {
    ae = await PassBridge.spawn(path.join(bins, 'passbridge'), ['--backend', emulator.url, '--state-dir', path.join(work, 'state'), '--software-statement', dummySoftwareStatement()], { stderr: daemonLog });
    ok('passbridge', `spawned over stdio (pid ${ae.process.pid})`);
    const seen = [];
    const onNote = (name) => ae.on(name, (p) => {
      seen.push({ name, ...p });
      say(`    <- ${name} ${JSON.stringify(name === 'setToken' ? { ...p, token: p.token.slice(0, 12) + '…' } : name === 'navigateToUrl' ? { url: p.url.split('?')[0] + '?…' } : p)}`);
    });
    ['setRequestorComplete', 'setAuthenticationStatus', 'displayProviderDialog', 'navigateToUrl', 'setToken', 'tokenRequestFailed', 'setMetadataStatus', 'status'].forEach(onNote);
    const webResults = [];
    const webTasks = []; // one promise per navigateToUrl: settles once handleExternalURL has answered
    ae.on('displayProviderDialog', ({ mvpds }) => {
      say(`    (picker shows ${mvpds.map((m) => m.displayName).join(', ')}; user picks MockMVPD)`);
      ae.call('setSelectedProvider', { mvpdId: 'MockMVPD' }).catch(() => {});
    });
    ae.on('navigateToUrl', ({ url }) => webTasks.push((async () => {
      try {
        const reached = await webView(url, { username: 'demo', password: 'demo' });
        webResults.push(await ae.call('handleExternalURL', { url: reached }));
      } catch (e) {
        webResults.push({ error: e.message });
        ae.call('setSelectedProvider', { mvpdId: null }).catch(() => {});
      }
    })()));
    const call = (method, params) => { say(`--> ${method} ${params ? JSON.stringify(params) : ''}`); return withTimeout(ae.call(method, params), method); };
    const index = (name, from) => seen.findIndex((e, i) => i >= from && e.name === name);

    expect(JSON.stringify(await call('init', {})) === '{}', 'init', 'should answer {}');
    let mark = seen.length;
    let r = await call('setRequestor', { requestorID: 'REF' });
    expect(r.status === 1 && seen[index('setRequestorComplete', mark)]?.status === 1, 'setRequestor', JSON.stringify(r));
    ok('setRequestor', 'REF configured, setRequestorComplete(1) before the response');

    r = await call('checkAuthentication');
    expect(r.status === 0 && r.errorCode === 'User Not Authenticated Error', 'checkAuthentication', JSON.stringify(r));
    ok('checkAuthentication', `not logged in yet (${r.errorCode})`);

    mark = seen.length;
    r = await call('getAuthentication');
    expect(r.status === 1 && r.errorCode === '', 'getAuthentication', `${JSON.stringify(r)} ${JSON.stringify(webResults)}`);
    expect(index('displayProviderDialog', mark) >= 0 && index('navigateToUrl', mark) >= 0, 'getAuthentication', 'picker and login page expected');
    expect(seen[index('setAuthenticationStatus', mark)]?.status === 1, 'getAuthentication', 'no setAuthenticationStatus(1) before the response');
    await withTimeout(webTasks.at(-1), 'handleExternalURL'); // its answer may come after getAuthentication's
    expect(webResults.at(-1)?.status === 1, 'handleExternalURL', JSON.stringify(webResults));
    ok('getAuthentication', 'logged in at MockMVPD as demo');

    r = await call('getAuthorization', { resource: 'ch1' });
    expect(typeof r.token === 'string' && r.resource === 'ch1', 'getAuthorization ch1', JSON.stringify(r));
    say(`    short media token for ch1: ${r.token.slice(0, 48)}… (${r.token.length} characters of base64)`);
    try {
      execFileSync(path.join(bins, 'pass-emulator'), ['verify-token', r.token, '--resource', 'ch1', '--url', emulator.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      throw new Error(`verify-token: rejected (${String(e.stdout ?? '') + String(e.stderr ?? '')})`);
    }
    ok('getAuthorization ch1', 'permitted; pass-emulator verify-token accepts the media token');

    r = await call('getAuthorization', { resource: 'ch2' });
    expect(r.resource === 'ch2' && r.errorCode === 'User not Authorized Error' && !('token' in r), 'getAuthorization ch2', JSON.stringify(r));
    ok('getAuthorization ch2', `denied: ${r.errorCode}: ${r.errorDescription}`);

    r = await call('getMetadata', { opCode: 'METADATA_AUTHENTICATION' });
    // `metadata` is the SDK's date string; `expires` the same instant in epoch ms.
    expect(typeof r.metadata === 'string' && typeof r.expires === 'number' && r.expires > Date.now(), 'getMetadata', JSON.stringify(r));
    ok('getMetadata', `login valid until ${r.metadata}`);

    mark = seen.length;
    r = await call('logout');
    expect(r.status === 0 && r.errorCode === 'User Not Authenticated Error', 'logout', JSON.stringify(r));
    expect(index('navigateToUrl', mark) >= 0, 'logout', 'no navigateToUrl for the logout page');
    await withTimeout(webTasks.at(-1), 'handleExternalURL');
    expect(webResults.at(-1)?.status === 0, 'logout', `handleExternalURL answered ${JSON.stringify(webResults.at(-1))}`);
    ok('logout', 'logged out (logout page followed back to the redirect URL)');

    r = await call('checkAuthentication');
    expect(r.status === 0, 'checkAuthentication', JSON.stringify(r));
    ok('checkAuthentication', `logged out (${r.errorCode})`);

    const code = await withTimeout(ae.close(), 'passbridge exit');
    ae = undefined;
    expect(code === 0, 'passbridge', `exited with ${code}`);
    ok('passbridge', 'exited 0 when its stdin closed');
    say('NODE DEMO OK: every step did what it should');
    return 0;
  } catch (e) {
    say(`[FAIL] ${e.message}`);
    for (const name of ['passbridge.log', 'pass-emulator.log']) {
      say(`---- last lines of ${name} ----\n${fs.readFileSync(path.join(work, name), 'utf8').split('\n').slice(-30).join('\n')}`);
    }
    return 1;
  } finally {
    if (ae) ae.process.kill();
    emulator.child.kill();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();
