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
// call's timeout, or the signal's reason when its AbortSignal fires.
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

/** The spawned daemon exited with a non-zero status; `stderr` holds its last lines when it was captured. */
export class DaemonExited extends ConnectionClosed {
  constructor(exitCode, stderr = []) {
    super(`the daemon exited with status ${exitCode}${stderr.length ? `: ${stderr.at(-1)}` : ''}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** No answer within the call's timeout. */
export class Timeout extends PassBridgeError {}

/** `spawn` found no daemon to start: `looked` says where (the executable as given, and PATH for a bare name). */
export class DaemonNotFound extends PassBridgeError {
  constructor(looked) {
    super(
      `passbridge daemon not found; looked at: ${looked}. To fix: install the Debian package ` +
        '(apt install ./passbridge_VERSION_amd64.deb, built by Clients/debian/build-deb.sh) or build it ' +
        '(swift build -c release), and pass its path to spawn() or set PASSBRIDGE to it',
    );
    this.looked = looked;
  }
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
  #stderrTail = null;

  /**
   * Starts `exe --stdio ...args` (`exe` null or undefined: $PASSBRIDGE, else `passbridge` in PATH; none found
   * rejects with DaemonNotFound, saying where it looked and what to install). `stderr`: 'inherit' (default), 'ignore', 'pipe' (kept for DaemonExited and
   * copied to ours) or an fd. `timeout`: default seconds for calls that do not wait on the user (null: none).
   * The child is killed if this process exits first.
   */
  static spawn(exe, args = [], { stderr = 'pipe', env = process.env, timeout = DEFAULT_TIMEOUT } = {}) {
    exe ??= env.PASSBRIDGE || 'passbridge';
    const child = spawnChild(exe, ['--stdio', ...args], { stdio: ['pipe', 'pipe', stderr], env });
    const ae = new PassBridge(child.stdout, child.stdin, { timeout });
    ae.process = child;
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
    output.on('error', () => {}); // a vanished daemon surfaces as 'close' and rejected calls
  }

  /** Whether the connection is closed (by close() or by the daemon). */
  get closed() {
    return this.#closed;
  }

  /**
   * Sends a request; resolves with its result. `timeout` (seconds, null for none) defaults to the client's for
   * methods that do not wait on the user; `signal` aborts the wait (the request may still complete).
   */
  call(method, params, { timeout, signal } = {}) {
    if (this.#closed) return Promise.reject(this.#ended ?? new ConnectionClosed('connection closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const seconds = timeout !== undefined ? timeout : WAITS_ON_USER.includes(method) ? null : this.timeout;
    const id = this.#nextId++;
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    return new Promise((resolve, reject) => {
      let timer;
      const onAbort = () => finish(reject, signal.reason);
      const finish = (settle, value) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#pending.delete(id);
        settle(value);
      };
      this.#pending.set(id, { resolve: (v) => finish(resolve, v), reject: (e) => finish(reject, e) });
      if (seconds != null) timer = setTimeout(() => finish(reject, new Timeout(`${method}: no answer within ${seconds} s`)), seconds * 1000);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#out.write(JSON.stringify(msg) + '\n');
    });
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
      return this.exited ?? 0;
    })();
    return this.#closing;
  }

  async #end() {
    this.#closed = true;
    let error = new ConnectionClosed('the daemon closed the connection');
    if (this.exited && !this.#closing) {
      const code = await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000, 0))]);
      if (code !== 0) error = new DaemonExited(code, this.#stderrTail ?? []);
    }
    this.#ended = error;
    for (const { reject } of [...this.#pending.values()]) reject(error);
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
      if (typeof m.method === 'string' && 'id' in m) this.#answer(m);
      else if (typeof m.method === 'string') this.emit(m.method, m.params ?? {});
      else this.#settle(m);
    }
  }

  #settle(m) {
    const waiter = this.#pending.get(m.id);
    if (!waiter) return;
    if (m.error) waiter.reject(new RPCError(m.error.code, m.error.message, m.error.data));
    else waiter.resolve(m.result);
  }

  async #answer(m) {
    const fn = this.#handlers.get(m.method);
    const reply = { jsonrpc: '2.0', id: m.id };
    try {
      if (!fn) throw Object.assign(new Error(`no host handler for ${m.method}`), { rpcCode: -32601 });
      reply.result = await fn(m.params ?? {});
    } catch (e) {
      reply.error = { code: e.rpcCode ?? -32000, message: e.message ?? String(e), data: { reason: e.reason ?? 'other' } };
    }
    this.#out.write(JSON.stringify(reply) + '\n');
  }
}
