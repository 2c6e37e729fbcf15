// A PassBridge client for Node >= 18 with the standard library only: spawns `passbridge --stdio` (or
// connects to its Unix socket) and speaks newline-delimited JSON-RPC 2.0.
//
//   const ae = await PassBridge.spawn('/path/to/passbridge', ['--backend', url]);
//   ae.on('navigateToUrl', ({ url }) => ...);          // every EntitlementDelegate callback is an event
//   const { status } = await ae.call('setRequestor', { requestorID: 'REF' });
//
// `call` resolves with the response's `result` (sent when the operation ends, after its notifications) and
// rejects with an Error carrying `code` and `data` for a JSON-RPC error. Daemon->host requests (partner SSO)
// go to handlers registered with `handle(method, fn)`; fn's return value (or promise) is the result.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import readline from 'node:readline';

export class PassBridge extends EventEmitter {
  #out;
  #nextId = 1;
  #pending = new Map();
  #handlers = new Map();

  /** Starts `exe --stdio ...args`; `stderr` is where the daemon's logs go ('inherit', 'ignore' or an fd). */
  static spawn(exe, args = [], { stderr = 'inherit', env = process.env } = {}) {
    const child = spawn(exe, ['--stdio', ...args], { stdio: ['pipe', 'pipe', stderr], env });
    const ae = new PassBridge(child.stdout, child.stdin);
    ae.process = child;
    ae.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve(ae));
      child.once('error', reject);
    });
  }

  /** Connects to a daemon's Unix socket. */
  static connect(path) {
    return new Promise((resolve, reject) => {
      const sock = net.createConnection(path, () => resolve(new PassBridge(sock, sock)));
      sock.once('error', reject);
    });
  }

  constructor(input, output) {
    super();
    this.#out = output;
    // readline decodes UTF-8 across chunk boundaries and splits on newlines.
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    lines.on('line', (line) => this.#receive(line));
    lines.on('close', () => {
      for (const { reject } of this.#pending.values()) reject(new Error('the daemon closed the connection'));
      this.#pending.clear();
      this.emit('close');
    });
    output.on('error', () => {}); // a vanished daemon surfaces as 'close' and rejected calls
  }

  /** Sends a request; resolves with its result. */
  call(method, params) {
    const id = this.#nextId++;
    const msg = { jsonrpc: '2.0', id, method };
    if (params !== undefined) msg.params = params;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#out.write(JSON.stringify(msg) + '\n');
    });
  }

  /** Answers daemon->host requests named `method` with `await fn(params)`; throw {reason} to refuse. */
  handle(method, fn) {
    this.#handlers.set(method, fn);
  }

  /** Closes our side; for a spawned daemon resolves with its exit code. */
  async close() {
    this.#out.end();
    return this.exited ?? 0;
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
    this.#pending.delete(m.id);
    if (m.error) {
      const err = new Error(`${m.error.code}: ${m.error.message}`);
      Object.assign(err, { code: m.error.code, data: m.error.data });
      waiter.reject(err);
    } else waiter.resolve(m.result);
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
