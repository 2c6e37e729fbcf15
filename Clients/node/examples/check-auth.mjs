#!/usr/bin/env node
// @ts-check
// The smallest PassBridge app: is the user logged in? Type-checked against passbridge.d.mts by the tests
// (`tsc -p Clients/node`), and runnable: node examples/check-auth.mjs PASSBRIDGE [DAEMON-FLAGS...]
// Prints the result of checkAuthentication, or the reasons setRequestor failed.
import { PassBridge, RPCError } from '../passbridge.mjs';

/** @type {string[]} */
const argv = /** @type {any} */ (globalThis).process.argv.slice(2);
const [exe = 'passbridge', ...flags] = argv;
const ae = await PassBridge.spawn(exe, flags, { timeout: 10 });
ae.on('status', (status) => console.error(`status ${status.id} ${status.message ?? ''}`));
try {
  const requestor = await ae.call('setRequestor', { requestorID: 'REF' });
  if (requestor.status !== 1) {
    const why = (requestor.statuses ?? []).map((s) => `${s.id} ${s.message ?? ''}`).join('; ');
    console.log(`setRequestor failed: ${why || 'no reason given'}`);
  } else {
    const { status, errorCode } = await ae.call('checkAuthentication');
    console.log(status === 1 ? 'authenticated' : `not authenticated: ${errorCode}`);
  }
} catch (e) {
  console.log(e instanceof RPCError ? `error ${e.code}: ${e.rpcMessage}` : String(e));
} finally {
  await ae.close();
}
