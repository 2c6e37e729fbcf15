// passbridge — the Node client of the PassBridge daemon (Node >= 18, standard library only, no dependencies).
// Spawns `passbridge --stdio` (or connects to its Unix socket) and speaks newline-delimited JSON-RPC 2.0.
// Types: passbridge.d.mts. Wire contract: Protocol/README.md and Protocol/openrpc.json of the repository.
//
//   const ae = await PassBridge.spawn('passbridge', ['--backend', url]);
//   ae.on('navigateToUrl', ({ url }) => ...);          // every EntitlementDelegate callback is an event
//   const { status, statuses } = await ae.call('setRequestor', { requestorID: 'REF' });
//
// `call` resolves with the response's `result` (sent when the operation ends, after its notifications; a failed
// outcome carries `statuses`, the reasons) and rejects with an RPCError (`code`, `data`) for a JSON-RPC error,
// ConnectionClosed (DaemonExited when a spawned daemon failed) once the connection is closed, Timeout after the
// call's timeout, or the signal's reason when its AbortSignal fires (the request is then cancelled in the daemon
// with `$/cancelRequest`). The typed helpers (authorize, checkAuthentication, …) resolve with objects and reject
// with an EntitlementError (NotAuthorized, NotAuthenticated, LoginCancelled, AuthorizationFailed, RequestorFailed).
import { spawn as spawnChild } from 'node:child_process';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import readline from 'node:readline';

/** Seconds a call that does not wait on the user may take by default. */
export const DEFAULT_TIMEOUT = 30;
/** Methods that may wait on the user (provider dialog, login page, second screen): no default timeout. */
export const WAITS_ON_USER = Object.freeze(['getAuthentication', 'getAuthorization', 'logout']);

/** Base class of every error this client rejects with. */
export class PassBridgeError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** A JSON-RPC error object from the daemon. */
export class RPCError extends PassBridgeError {
  constructor(code, message, data) {
    super(`${code}: ${message}`);
    this.code = code;
    this.rpcMessage = message;
    this.data = data;
  }
}

/** The connection is closed: close() was called or the daemon went away. */
export class ConnectionClosed extends PassBridgeError {}

/** The spawned daemon exited with a non-zero status; `stderr` holds its last lines when it was captured. `method`:
 * the call it ended, named first in the message. */
export class DaemonExited extends ConnectionClosed {
  constructor(exitCode, stderr = [], method) {
    super(`${method ? `${method}: ` : ''}the daemon exited with status ${exitCode}${stderr.length ? `: ${stderr.at(-1)}` : ''}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
    if (method) this.method = method;
  }
}

/** `error` (how the connection ended) as the error of one call of `method`: the same kind, the method named. */
function forCall(error, method) {
  if (error instanceof DaemonExited) return new DaemonExited(error.exitCode, error.stderr, method);
  return Object.assign(new ConnectionClosed(`${method}: ${error.message}`), { method });
}

/** The details of the N005 a login ends with when its instance closed, not by the user: its connection ended, or
 * the daemon is stopping (Protocol/README.md, Lifecycle 5). */
export const INSTANCE_CLOSED = 'the instance closed: its connection ended, or the daemon is stopping';

/** A helper's cancel outcome ("Provider not Selected Error") after `closedBy`, the N005 of an instance that closed
 * (an info status: not in the result's `statuses`), as ConnectionClosed; else null. */
function closedOutcome(errorCode, closedBy) {
  if (errorCode !== PROVIDER_NOT_SELECTED || !closedBy) return null;
  return Object.assign(new ConnectionClosed(`the login was cancelled because ${INSTANCE_CLOSED}`), { statuses: [closedBy] });
}

/** No answer within the call's timeout. */
export class Timeout extends PassBridgeError {}

/** `spawn` found no daemon to start: `looked` says where (the executable as given, and PATH for a bare name). */
export class DaemonNotFound extends PassBridgeError {
  constructor(looked) {
    super(
      `passbridge daemon not found; looked at: ${looked}. To fix: install the Debian package ` +
        '(apt install ./passbridge_VERSION_amd64.deb, built by Clients/debian/build-deb.sh) or build it ' +
        '(swift build -c release), and pass its path to spawn(), or pass null and set PASSBRIDGE to it',
    );
    this.looked = looked;
  }
}

/** The JSON-RPC error code of a request cancelled by `$/cancelRequest` (Protocol/README.md "Cancelling a request"). */
export const REQUEST_CANCELLED = -32800;
/** Seconds an aborted or timed-out call waits for the daemon's answer to its `$/cancelRequest`. */
export const CANCEL_GRACE = 5;
/** Seconds close() waits for a spawned daemon to exit, beyond the --shutdown-timeout given to spawn (default 5 s),
 * before it stops it (SIGTERM, then SIGKILL 2 s later). */
export const CLOSE_GRACE = 5;
/** The seconds of `--shutdown-timeout` in a daemon's `args` (`--shutdown-timeout S` or `=S`), else its default, 5. */
function shutdownSeconds(args) {
  const at = args.findIndex((a) => a === '--shutdown-timeout' || String(a).startsWith('--shutdown-timeout='));
  const given = at < 0 ? undefined : args[at].includes('=') ? args[at].split('=')[1] : args[at + 1];
  const seconds = Number(given);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : 5;
}

/** Why a login helper failed when nothing of the app's answered the provider dialog. */
const UNANSWERED_DIALOG =
  "the daemon shows the provider dialog and nothing answers it: pass {mvpd} (an ID, or a function of the MVPDs) to loginWeb or loginSecondScreen, or listen for 'displayProviderDialog'";

/** The notifications a login waits at: one whose listener throws has its login cancelled. */
const USER_STEPS = ['displayProviderDialog', 'navigateToUrl'];

const USER_NOT_AUTHENTICATED = 'User Not Authenticated Error';
const PROVIDER_NOT_SELECTED = 'Provider not Selected Error';
const USER_NOT_AUTHORIZED = 'User not Authorized Error';

/**
 * A failed AccessEnabler outcome, thrown only by the typed helpers (setRequestorOrThrow, authorize): `errorCode`
 * is Adobe's, `statuses` the outcome's reasons ({id, level, message?, details?, resource?}), `reasons` each as
 * "ID message". The `call` API never throws it: it resolves with the outcome.
 */
export class EntitlementError extends PassBridgeError {
  constructor(errorCode, statuses = [], message = errorCode) {
    const reasons = statuses.map((s) => [s.id, s.message].filter(Boolean).join(' '));
    super(reasons.length ? `${message} (${reasons.join('; ')})` : message);
    this.errorCode = errorCode;
    this.statuses = statuses;
    this.reasons = reasons;
    this.resource = undefined;
  }
}
/** setRequestor failed: `statuses` says why (R400, CFG400, CFG404…); `errorCode` is "". */
export class RequestorFailed extends EntitlementError {}
/** No valid login: `errorCode` is Adobe's reason ("User Not Authenticated Error", N130 profile gone…). */
export class NotAuthenticated extends EntitlementError {}
/** The login was cancelled ("Provider not Selected Error"): at the dialog, by $/cancelRequest, or an unknown MVPD (PB404). */
export class LoginCancelled extends NotAuthenticated {}
/** An authorization that failed for `resource`; `description` is the outcome's errorDescription. */
class AuthorizationError extends EntitlementError {
  constructor(resource, errorCode, description = '', statuses = []) {
    super(errorCode, statuses, `${resource}: ${errorCode}${description ? `: ${description}` : ''}`);
    this.resource = resource;
    this.description = description;
  }
}
/** The MVPD denied `resource` ("User not Authorized Error", Z100, Z110, Z130, Z169): `mvpdMessage` is what the MVPD said. */
export class NotAuthorized extends AuthorizationError {
  get mvpdMessage() {
    const deny = this.statuses.find((s) => ['Z100', 'Z110', 'Z169', 'Z130'].includes(s.id) && s.details);
    return deny?.details ?? this.description;
  }
}
/** Any other authorization failure (Generic / Internal Authorization Error, Z500…). */
export class AuthorizationFailed extends AuthorizationError {}

/**
 * The error response for a host handler's refusal `e` (or its failure, a result that is no JSON included): `data`
 * holds its `reason` (`other` when it has none) and its own fields, a `data` object of its own merged in
 * (unsupportedProvider's unsupportedProviderIdentifier), each field that cannot be written as JSON (a cycle, a
 * BigInt, a getter that throws) left out; a code that is no integer is -32000, a message that is no string is made
 * one. Always one valid error response.
 */
function refusalLine(id, e) {
  const refusal = e !== null && typeof e === 'object' ? e : {};
  const read = (from, name) => { try { return from[name]; } catch { return undefined; } };
  const text = (value) => { try { return String(value); } catch { return 'the host could not answer'; } };
  const reason = typeof read(refusal, 'reason') === 'string' ? read(refusal, 'reason') : 'other';
  const code = Number.isInteger(read(refusal, 'rpcCode')) ? read(refusal, 'rpcCode') : -32000;
  const given = read(refusal, 'message');
  const message = typeof given === 'string' ? given : reason === 'other' ? text(e) : reason;
  const data = {};
  const take = (from, skip) => {
    for (const key of Object.keys(from)) {
      if (skip.includes(key)) continue;
      const value = read(from, key);
      try { JSON.stringify(value); data[key] = value; } catch { /* not JSON: left out */ }
    }
  };
  const own = read(refusal, 'data');
  if (own !== null && typeof own === 'object') take(own, ['reason']);
  take(refusal, ['rpcCode', 'message', 'data', 'reason']);
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, data: { ...data, reason } } });
}

/** The typed outcome of a checkAuthorization/getAuthorization result. */
export function authorizationOutcome(resource, result) {
  const statuses = result.statuses ?? [];
  if (result.token) return { kind: 'token', resource: result.resource ?? resource, token: result.token, statuses };
  return { kind: 'failure', resource: result.resource ?? resource, errorCode: result.errorCode ?? '', description: result.errorDescription ?? '', statuses };
}

/** The typed error of an authorization failure (see authorizationOutcome). */
export function authorizationError(failure) {
  const { resource, errorCode, description, statuses } = failure;
  if (errorCode === USER_NOT_AUTHORIZED) return new NotAuthorized(resource, errorCode, description, statuses);
  if (errorCode === USER_NOT_AUTHENTICATED || errorCode === PROVIDER_NOT_SELECTED || errorCode.includes('Authentication')) {
    const error = errorCode === PROVIDER_NOT_SELECTED ? new LoginCancelled(errorCode, statuses) : new NotAuthenticated(errorCode, statuses);
    error.resource = resource;
    return error;
  }
  return new AuthorizationFailed(resource, errorCode, description, statuses);
}

/** The typed outcome of an AuthenticationStatus result. */
export function authenticationOutcome(result) {
  return { authenticated: result.status === 1, errorCode: result.errorCode ?? '', statuses: result.statuses ?? [] };
}

/**
 * Hands the page's end over (handleExternalURL) for loginWeb and logOut: `reached` is what their openUrl resolved to,
 * a URL or null (the app hands it over itself). Nothing is sent once the call has ended (`ended()`): a page that comes
 * back late would end the next login's page instead.
 */
async function handOver(ae, reached, ended) {
  if (reached == null || ended()) return;
  if (typeof reached !== 'string') throw new PassBridgeError(`openUrl resolved to ${typeof reached}, not a URL string or null`);
  await ae.call('handleExternalURL', { url: reached });
}

/** Children still running when this process exits. */
const children = new Set();
process.once('exit', () => {
  for (const child of children) child.kill();
});

export class PassBridge extends EventEmitter {
  #out;
  #nextId = 1;
  #pending = new Map();
  #handlers = new Map();
  #closed = false;
  #closing = null;
  #ended = null;
  #endKnown = null; // settles once #end has found out why the connection ended
  #stderrTail = null;
  #closedBy = null; // the N005 of this connection's instance closing (INSTANCE_CLOSED), once it came
  #closeGrace = CLOSE_GRACE; // seconds close() gives a spawned daemon to exit

  /**
   * Starts `exe --stdio ...args` (`exe` null or undefined: $PASSBRIDGE, else `passbridge` in PATH; none found
   * rejects with DaemonNotFound, saying where it looked and what to install). `stderr`: 'pipe' (default: copied to ours, the last lines
   * kept for DaemonExited), 'inherit', 'ignore' or an fd. `timeout`: default seconds for calls that do not wait on the user (null: none).
   * The child is killed if this process exits first.
   */
  static spawn(exe, args = [], { stderr = 'pipe', env = process.env, timeout = DEFAULT_TIMEOUT } = {}) {
    const transport = args.find((a) => a === '--stdio' || a === '--socket' || String(a).startsWith('--socket='));
    if (transport) {
      return Promise.reject(new TypeError(`spawn: ${transport} is not for spawn, which runs the daemon over its stdin and stdout (it adds --stdio); for a daemon serving a socket, use PassBridge.connect(path)`));
    }
    exe ??= env.PASSBRIDGE || 'passbridge';
    const child = spawnChild(exe, ['--stdio', ...args], { stdio: ['pipe', 'pipe', stderr], env });
    const ae = new PassBridge(child.stdout, child.stdin, { timeout });
    ae.process = child;
    ae.#closeGrace = shutdownSeconds(args) + CLOSE_GRACE;
    children.add(child);
    if (stderr === 'pipe') {
      ae.#stderrTail = [];
      readline.createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
        ae.#stderrTail.push(line);
        if (ae.#stderrTail.length > 20) ae.#stderrTail.shift();
        process.stderr.write(line + '\n');
      });
    }
    ae.exited = new Promise((resolve) =>
      child.on('close', (code, signal) => {
        children.delete(child);
        resolve(code ?? signal);
      }),
    );
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve(ae));
      child.once('error', (e) => {
        children.delete(child);
        if (e.code !== 'ENOENT') return reject(e);
        const looked = exe.includes('/') ? `${exe} (no such file)` : `'${exe}' in PATH=${env.PATH ?? ''}`;
        reject(Object.assign(new DaemonNotFound(looked), { cause: e }));
      });
    });
  }

  /** Connects to a daemon's Unix socket; a failure names the path. */
  static connect(path, { timeout = DEFAULT_TIMEOUT } = {}) {
    return new Promise((resolve, reject) => {
      const sock = net.createConnection(path, () => resolve(new PassBridge(sock, sock, { timeout })));
      sock.once('error', (e) => reject(Object.assign(new ConnectionClosed(`cannot connect to ${path}: ${e.message}`), { cause: e, path })));
    });
  }

  constructor(input, output, { timeout = DEFAULT_TIMEOUT } = {}) {
    super();
    this.timeout = timeout;
    this.#out = output;
    // readline decodes UTF-8 across chunk boundaries and splits on newlines.
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    lines.on('line', (line) => this.#receive(line));
    lines.on('close', () => this.#end());
    // A vanished daemon (ECONNRESET on a socket's read, EPIPE on a write) surfaces as rejected calls: readline
    // passes its input's errors on to the interface, which would throw them with no listener, and closes only at
    // the input's end, which a reset connection never reaches.
    lines.on('error', () => {});
    output.on('error', () => {});
    input.on('close', () => this.#end());
  }

  /** Whether the connection is closed (by close() or by the daemon). */
  get closed() {
    return this.#closed;
  }

  /**
   * Sends a request; resolves with its result. `timeout` (seconds, null for none) defaults to the client's for
   * methods that do not wait on the user. When `signal` aborts, the request is cancelled in the daemon
   * (`$/cancelRequest {id}`: a login or logout waiting on the user ends as a cancel at the dialog does) and the
   * call rejects with the signal's reason once the daemon has answered (-32800) or CANCEL_GRACE seconds passed.
   * A timeout of a WAITS_ON_USER method cancels it the same way before rejecting with Timeout.
   */
  call(method, params, { timeout, signal } = {}) {
    if (this.#closed) {
      // Ended by the daemon: its exit status may still be on its way (DaemonExited), so wait for #end's verdict.
      const known = this.#closing || this.#ended || !this.#endKnown ? Promise.resolve() : this.#endKnown;
      return known.then(() => Promise.reject(forCall(this.#ended ?? new ConnectionClosed(this.#closing ? 'the connection was closed by close()' : 'connection closed'), method)));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const kind = params === null ? 'null' : Array.isArray(params) ? 'an array' : typeof params !== 'object' ? typeof params : null;
    const plain = kind === null && params !== undefined && [Object.prototype, null].includes(Object.getPrototypeOf(params));
    if (params !== undefined && !plain) {
      const what = kind ?? `a ${params.constructor?.name ?? 'non-plain'} object`;
      return Promise.reject(new TypeError(`${method}: params must be a plain object of named params (or left out), not ${what}`));
    }
    const waitsOnUser = WAITS_ON_USER.includes(method);
    const seconds = timeout !== undefined ? timeout : waitsOnUser ? null : this.timeout;
    const id = this.#nextId++;
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    return new Promise((resolve, reject) => {
      let timer;
      let cancelling = null;
      const finish = (settle, value) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#pending.delete(id);
        settle(value);
      };
      // Gives the request up in the daemon, then rejects with `error` once it answered (or after the grace).
      const cancel = (error) => {
        if (cancelling) return;
        cancelling = error;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.#closed) return finish(reject, error);
        this.#out.write(JSON.stringify({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } }) + '\n');
        timer = setTimeout(() => finish(reject, error), CANCEL_GRACE * 1000);
      };
      const onAbort = () => cancel(signal.reason);
      this.#pending.set(id, {
        method,
        resolve: (v) => finish(cancelling ? reject : resolve, cancelling ?? v),
        reject: (e) => finish(reject, cancelling ?? e),
      });
      if (seconds != null) {
        timer = setTimeout(() => {
          const error = new Timeout(`${method}: no answer within ${seconds} s`);
          if (waitsOnUser) cancel(error);
          else finish(reject, error);
        }, seconds * 1000);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#out.write(JSON.stringify(msg) + '\n');
    });
  }

  // ---- typed helpers: outcomes as objects, failures as EntitlementError (see passbridge.d.mts) ----------------

  /** setRequestor; rejects with RequestorFailed (`statuses`: R400, CFG400, CFG404…) when it failed. */
  async setRequestorOrThrow(requestorID, options = {}) {
    const result = await this.call('setRequestor', { requestorID }, options);
    if (result.status !== 1) throw new RequestorFailed('', result.statuses ?? [], 'setRequestor failed');
  }

  /** checkAuthentication as {authenticated, errorCode, statuses}. */
  async checkAuthentication(options = {}) {
    return authenticationOutcome(await this.call('checkAuthentication', {}, options));
  }

  /** checkAuthorization as {kind: 'token', resource, token, statuses} or {kind: 'failure', resource, errorCode, description, statuses}. */
  async checkAuthorization(resource, options = {}) {
    return authorizationOutcome(resource, await this.call('checkAuthorization', { resource }, options));
  }

  /**
   * The short media token for `resource`. `login: false` (default) sends checkAuthorization (no login, the
   * client's timeout); `login: true` sends getAuthorization (logs in first when needed; no timeout unless given;
   * `signal` cancels it). Rejects with NotAuthorized (`mvpdMessage`), NotAuthenticated / LoginCancelled
   * (`errorCode`: Adobe's reason), AuthorizationFailed, or as `call` does.
   */
  async authorize(resource, { login = false, data, ...options } = {}) {
    const params = data === undefined ? { resource } : { resource, data };
    // A login with nothing of the app's to answer its dialog is cancelled there, rather than wait for ever.
    let unanswered = false;
    const onUnanswered = () => {
      if (this.listenerCount('displayProviderDialog') > 1) return;
      unanswered = true;
      this.call('setSelectedProvider', { mvpdId: null }).catch(() => {});
    };
    if (login) this.on('displayProviderDialog', onUnanswered);
    let result;
    try {
      result = await this.call(login ? 'getAuthorization' : 'checkAuthorization', params, options);
    } finally {
      this.off('displayProviderDialog', onUnanswered);
    }
    const outcome = authorizationOutcome(resource, result);
    if (outcome.kind === 'token') return outcome.token;
    if (unanswered) throw new PassBridgeError(UNANSWERED_DIALOG);
    throw closedOutcome(outcome.errorCode, this.#closedBy) ?? authorizationError(outcome);
  }

  /** The wire's preauthorize as {authorized, denied, errors, failure?}: `errors` maps each refused resource to REST
   * API V2's error object; `failure` is the error of a request that failed before any decision. `cache: false` asks
   * the backend even for permits this instance knows (disableFeatures LOCAL_CACHE). */
  async preauthorize(resources, { cache, ...options } = {}) {
    const params = cache === false ? { resources, disableFeatures: ['LOCAL_CACHE'] } : { resources };
    const result = await this.call('preauthorize', params, options);
    const byId = new Map(result.decisions.map((d) => [d.id, d]));
    const asked = [...new Set(resources)];
    const authorized = asked.filter((r) => byId.get(r)?.authorized === true);
    const errors = Object.fromEntries(asked.filter((r) => byId.get(r)?.error).map((r) => [r, byId.get(r).error]));
    const outcome = { authorized, denied: asked.filter((r) => !authorized.includes(r)), errors };
    if (result.status) outcome.failure = result.status;
    return outcome;
  }

  /** getMetadata as {key, value, encrypted, arguments, statuses} (`value` of an expiry in epoch ms; `statuses` why
   * `value` is null when something failed: a failed setRequestor's reasons, STORE500); `key` of the options is the
   * user attribute (op code 3). */
  async metadata(opCode, { resource, key, timeout, signal, ...unknown } = {}) {
    const [extra] = Object.keys(unknown);
    if (extra !== undefined) {
      throw new TypeError(`metadata: unknown option '${extra}' (it takes resource, key: the user attribute of op code 3, timeout, signal)`);
    }
    const options = { timeout, signal };
    const params = { opCode };
    if (resource !== undefined) params.resource = resource;
    if (key !== undefined) params.userMetaKey = key;
    const result = await this.call('getMetadata', params, options);
    const value = result.key === 0 || result.key === 1 ? (result.expires ?? null) : result.metadata;
    return { key: result.key, value, encrypted: result.encrypted, arguments: result.arguments, statuses: result.statuses ?? [] };
  }

  /**
   * Logs in on a web-view host (getAuthentication): `openUrl(url)` gets the login page and resolves to the
   * redirect URL the page reached (handed to handleExternalURL) or null when the app hands it over itself.
   * `mvpd` answers the provider dialog (an ID, or a function of the offered MVPDs resolving to an ID or null to
   * cancel); left out, the app's own 'displayProviderDialog' listener answers. Resolves with {authenticated,
   * errorCode, statuses} once the login ended; rejects with NotAuthenticated / LoginCancelled (Adobe's reason), with
   * Timeout after `timeout` seconds, with what `openUrl` threw, or with the signal's reason; in each of those cases
   * the login is first cancelled in the daemon ($/cancelRequest).
   */
  loginWeb(openUrl, options = {}) {
    return this.#login(openUrl, null, options);
  }

  /**
   * Logs in on a second-screen host (init {webView: false}): `showCode(code)` gets {code, url (the REGCODE's
   * url: the configured activation page with the code, else the direct authenticate URL), authenticateUrl (the
   * direct URL), activationUrl (null when none is configured), notAfter (epoch ms), secondsLeft, update: false}, and
   * again with update: true and a fresh secondsLeft for each REG100 countdown status. Resolves once the other
   * device completed the page; `mvpd`, `timeout`, `signal` and rejections as in loginWeb.
   */
  loginSecondScreen(showCode, options = {}) {
    return this.#login(null, showCode, options);
  }

  async #login(openUrl, showCode, { mvpd, signal, timeout = null, forceAuthn = false } = {}) {
    if (signal?.aborted) throw signal.reason;
    const inner = new AbortController();
    const fail = (e) => inner.abort(e);
    const onOuterAbort = () => inner.abort(signal.reason);
    let code = null;
    const onPicker = async ({ mvpds }) => {
      try {
        const choice = typeof mvpd === 'function' ? await mvpd(mvpds) : mvpd;
        await this.call('setSelectedProvider', { mvpdId: choice ?? null });
      } catch (e) {
        fail(e);
      }
    };
    let settled = false;
    const onPage = async ({ url }) => {
      try {
        if (!openUrl) throw new PassBridgeError(`the daemon opened a login page (${url.split('?')[0]}) and nothing shows it (a second-screen host sends init {webView: false})`);
        await handOver(this, await openUrl(url), () => settled);
      } catch (e) {
        fail(e);
      }
    };
    const onStatus = async (s) => {
      if (s.id === 'REGCODE' && !showCode && openUrl) {
        fail(new PassBridgeError('the daemon shows a registration code for another device and nothing shows it (a web-view host leaves init\'s webView at true; a second-screen host logs in with loginSecondScreen)'));
        return;
      }
      if (!showCode || (s.id !== 'REGCODE' && s.id !== 'REG100')) return;
      const left = (notAfter) => (typeof notAfter === 'number' ? Math.max(0, Math.floor((notAfter - Date.now()) / 1000)) : null);
      if (s.id === 'REGCODE' || code === null) {
        code = { code: s.code, url: s.url ?? s.authenticateUrl ?? '', authenticateUrl: s.authenticateUrl ?? s.url ?? '', activationUrl: s.activationUrl ?? null, notAfter: s.notAfter ?? null, secondsLeft: left(s.notAfter), update: false };
      }
      if (s.id === 'REG100') code = { ...code, notAfter: s.notAfter ?? code.notAfter, secondsLeft: s.secondsLeft ?? left(s.notAfter), update: true };
      try {
        await showCode({ ...code });
      } catch (e) {
        fail(e);
      }
    };
    // With no `mvpd` and no listener of the app's, nothing would answer the dialog, and the login would wait for ever.
    const onUnanswered = () => {
      if (this.listenerCount('displayProviderDialog') === 1) fail(new PassBridgeError(UNANSWERED_DIALOG));
    };
    signal?.addEventListener('abort', onOuterAbort, { once: true });
    this.on('displayProviderDialog', mvpd !== undefined ? onPicker : onUnanswered);
    this.on('navigateToUrl', onPage).on('status', onStatus);
    try {
      const result = await this.call('getAuthentication', forceAuthn ? { forceAuthn: true } : {}, { signal: inner.signal, timeout });
      const outcome = authenticationOutcome(result);
      if (!outcome.authenticated) {
        const closed = closedOutcome(outcome.errorCode, this.#closedBy);
        if (closed) throw closed;
        const Kind = outcome.errorCode === PROVIDER_NOT_SELECTED ? LoginCancelled : NotAuthenticated;
        throw new Kind(outcome.errorCode || USER_NOT_AUTHENTICATED, outcome.statuses);
      }
      return outcome;
    } finally {
      settled = true;
      signal?.removeEventListener('abort', onOuterAbort);
      this.off('displayProviderDialog', onPicker).off('displayProviderDialog', onUnanswered).off('navigateToUrl', onPage).off('status', onStatus);
    }
  }

  /**
   * logout to its end, as {statuses}. On a web-view host the daemon opens the MVPD's logout page: `openUrl(url)` gets
   * it and resolves to the redirect URL the page reached (handed to handleExternalURL) or null, as in loginWeb; left
   * out, the page is the app's own 'navigateToUrl' listener's, and if nothing opens it the daemon answers 10 s later.
   * Rejects with an EntitlementError ("Generic Authentication Error", with the reasons) when the login was kept (the
   * backend did not take the logout, or the store could not make it: Protocol/README.md, Lifecycle 4); with Timeout
   * after `timeout` seconds, with what `openUrl` threw, or with the signal's reason, the logout then cancelled in the
   * daemon ($/cancelRequest) with its profiles already deleted.
   */
  async logOut({ openUrl, signal, ...options } = {}) {
    if (openUrl != null && typeof openUrl !== 'function') throw new TypeError('logOut: openUrl must be a function');
    if (signal?.aborted) throw signal.reason;
    const inner = new AbortController();
    const onOuterAbort = () => inner.abort(signal.reason);
    let settled = false;
    const onPage = async ({ url }) => {
      try {
        await handOver(this, await openUrl(url), () => settled);
      } catch (e) {
        inner.abort(e);
      }
    };
    signal?.addEventListener('abort', onOuterAbort, { once: true });
    if (openUrl) this.on('navigateToUrl', onPage);
    let result;
    try {
      result = await this.call('logout', {}, { ...options, signal: inner.signal });
    } finally {
      settled = true;
      signal?.removeEventListener('abort', onOuterAbort);
      this.off('navigateToUrl', onPage);
    }
    // The backend did not take it, or the store could not make it: the login is kept (Protocol/README.md, Lifecycle 4).
    if (result.errorCode === 'Generic Authentication Error') throw new EntitlementError(result.errorCode, result.statuses ?? [], 'logout failed; the login is kept');
    return { statuses: result.statuses ?? [] };
  }

  /** Answers daemon->host requests named `method` with `await fn(params)`; throw {reason} to refuse. */
  handle(method, fn) {
    this.#handlers.set(method, fn);
  }

  /** Closes our side; for a spawned daemon resolves with its exit code. Calling it again gives the same. */
  close() {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#out.end();
      if (!this.exited) return 0;
      // A daemon that does not exit (stopped, wedged) is stopped: a second signal while it stops ends it at once,
      // its emulator's temporary directory removed (Protocol/README.md, Lifecycle 6), and SIGKILL follows for one
      // that cannot take a signal (stopped). close() must end.
      const term = setTimeout(() => this.process.kill('SIGTERM'), this.#closeGrace * 1000);
      const kill = setTimeout(() => this.process.kill('SIGKILL'), (this.#closeGrace + 2) * 1000);
      try {
        return await this.exited;
      } finally {
        clearTimeout(term);
        clearTimeout(kill);
      }
    })();
    return this.#closing;
  }

  #end() {
    this.#closed = true;
    this.#endKnown ??= this.#findEnd();
    return this.#endKnown;
  }

  async #findEnd() {
    let error = new ConnectionClosed(this.#closing ? 'the connection was closed by close()' : 'the daemon closed the connection');
    if (this.exited && !this.#closing) {
      const code = await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000, 0))]);
      if (code !== 0) error = new DaemonExited(code, this.#stderrTail ?? []);
    }
    this.#ended = error;
    for (const { method, reject } of [...this.#pending.values()]) reject(forCall(error, method));
    this.emit('close');
  }

  #receive(line) {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      if (typeof m.method === 'string' && 'id' in m) void this.#answer(m);
      else if (typeof m.method === 'string') {
        if (m.method === 'status' && m.params?.id === 'N005' && m.params?.details === INSTANCE_CLOSED) this.#closedBy = m.params;
        this.#emitSafely(m.method, m.params ?? {});
      }
      else this.#settle(m);
    }
  }

  /** Emits a notification to each listener in turn. One that throws, or whose promise rejects (an async listener),
   * is reported on stderr rather than thrown into the connection's reader (which would end the process), the
   * others still run (the helpers' own among them), and at a login's step its login is cancelled, since nothing
   * answers it. */
  #emitSafely(method, params) {
    const failed = (e) => {
      console.error(`passbridge: a '${method}' listener threw:`, e);
      const login = [...this.#pending.values()].some((p) => p.method === 'getAuthentication' || p.method === 'getAuthorization');
      if (USER_STEPS.includes(method) && login) this.call('setSelectedProvider', { mvpdId: null }).catch(() => {});
    };
    for (const listener of this.rawListeners(method)) {
      try {
        const returned = listener.call(this, params);
        if (typeof returned?.then === 'function') returned.then(null, failed);
      } catch (e) {
        failed(e);
      }
    }
  }

  #settle(m) {
    const waiter = this.#pending.get(m.id);
    if (!waiter) return;
    if (m.error) waiter.reject(new RPCError(m.error.code, m.error.message, m.error.data));
    else waiter.resolve(m.result);
  }

  /** Answers one daemon->host request; whatever the handler does, one valid response goes out. */
  async #answer(m) {
    let line;
    try {
      const fn = this.#handlers.get(m.method);
      if (!fn) throw Object.assign(new Error(`no host handler for ${m.method}`), { rpcCode: -32601 });
      // A handler that returns nothing answers null: a response needs a result (the daemon would take none as broken).
      line = JSON.stringify({ jsonrpc: '2.0', id: m.id, result: (await fn(m.params ?? {})) ?? null });
    } catch (e) {
      line = refusalLine(m.id, e);
    }
    this.#out.write(line + '\n');
  }
}
