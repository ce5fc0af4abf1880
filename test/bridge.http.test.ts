// The server side of the bridge protocol, over HTTP: start requests on the
// thread's stream (checked, stamped, idempotent, invisible to the board) and
// the lossy live relay (relayed to live readers, never stored or replayed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { openSse } from './support/sse.js';

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${roost.url}/fleet/t1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) };
}

async function stored() {
  return (await roost.store.read('sessions:t1', 0, 1000)).map((e) => JSON.parse(e.body));
}

test('a start request is checked, stamped with the transport identity, stored on the thread stream and leaves the board alone', async () => {
  for (const [body, why] of [
    [{ type: 'request.start' }, /"session" is required/],
    [{ type: 'request.start', session: 'x', flavor: 'root-of-everything' }, /"flavor" must be scoped or plain/],
    [{ type: 'request.start', session: 'x', id: 'bad id' }, /"id" must be/],
    [{ type: 'request.start', session: 'x', root: 'r'.repeat(301) }, /"root" is longer than 300/],
    [{ type: 'request.nope', session: 'x' }, /"type" must be one of/],
    [{ type: 'request.refused' }, /"id" is required/],
  ] as const) {
    const r = await post('/requests', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.json.message, why);
  }
  assert.equal((await stored()).length, 0, 'nothing refused is stored');

  const sse = await openSse(`${roost.url}/fleet/t1/stream`);
  const first = { type: 'request.start', session: 'fix-login', name: 'Mallory', uid: 'u_mallory', ts: 1 };
  const r = await post('/requests', first, { 'roost-name': 'Paul', 'idempotency-key': 'k1' });
  assert.equal(r.status, 200);
  assert.match(r.json.id, /^s-[0-9a-f]{12}$/, 'the server picks an id');
  const again = await post('/requests', first, { 'roost-name': 'Paul', 'idempotency-key': 'k1' });
  assert.equal(again.json.duplicate, true);
  assert.equal(again.json.id, r.json.id, 'a retry learns the id the first attempt got');
  // The same key on another request is refused, not taken for a retry.
  const other = await post('/requests', { type: 'request.start', session: 'something-else' }, { 'roost-name': 'Paul', 'idempotency-key': 'k1' });
  assert.equal(other.status, 422);
  const [e] = await stored();
  assert.deepEqual({ ...e, ts: 0 }, { type: 'request.start', id: r.json.id, session: 'fix-login', flavor: 'scoped', root: '', name: 'Paul', uid: 'local', ts: 0 });
  assert.ok(e.ts > 1, 'ts is the server clock');
  const frame = await sse.waitFor((f) => f.event === 'event');
  assert.deepEqual(JSON.parse(frame.data).chat, null, 'no chat line');
  assert.deepEqual((await (await fetch(`${roost.url}/fleet/t1`)).json()).sessions, [], 'the board is unchanged');
  sse.close();

  // Once the session is on the board, a start for its id is a conflict.
  assert.equal((await post('', { type: 'session.spawn', id: 's1', session: 'fix-login' }, { 'roost-name': 'Claude' })).status, 200);
  assert.equal((await post('/requests', { type: 'request.start', id: 's1', session: 'again' })).status, 409);
  const refused = await post('/requests', { type: 'request.refused', id: 'zz', reason: 'outside the root' }, { 'roost-name': 'Claude' });
  assert.equal(refused.status, 200);
  assert.equal((await stored()).at(-1).reason, 'outside the root');
});

test('live frames reach live readers without an id and are never stored or replayed', async () => {
  assert.equal((await post('/live', { type: 'session.tool', id: 'nobody', text: 'x' })).status, 404);
  assert.equal((await post('/live', { type: 'session.turn', id: 's1' })).status, 400);
  const sse = await openSse(`${roost.url}/fleet/t1/stream`);
  await sse.waitFor((f) => f.event === 'snapshot');
  const before = (await stored()).length;
  const r = await post('/live', { type: 'session.tool', id: 's1', tool: 'Bash', text: '$ npm test' }, { 'roost-name': 'Claude' });
  assert.equal(r.status, 200);
  const live = await sse.waitFor((f) => f.event === 'live');
  assert.equal(live.id, undefined, 'no id: a reader’s Last-Event-ID does not move');
  const data = JSON.parse(live.data);
  assert.equal(data.tool, 'Bash');
  assert.equal(data.name, 'Claude');
  assert.equal((await stored()).length, before, 'nothing stored');
  sse.close();
  // A replay from the start holds the stored events only.
  const snap = await (await fetch(`${roost.url}/fleet/t1`)).json();
  const replay = await openSse(`${roost.url}/fleet/t1/stream`, { 'last-event-id': `${snap.epoch}:0` });
  await replay.waitFor((f) => f.id === `${snap.epoch}:${snap.position}`);
  assert.equal(replay.frames.some((f) => f.event === 'live'), false);
  replay.close();
  // Ended sessions relay nothing.
  assert.equal((await post('', { type: 'session.end', id: 's1', reason: 'closed' })).status, 200);
  assert.equal((await post('/live', { type: 'session.tool', id: 's1', text: 'late' })).status, 409);
});

test('the bridge’s hook fails closed: no bridge, a dead bridge or a bad answer all deny', async () => {
  const { hookCommand } = await import('../src/bridge/index.js');
  const { execFile } = await import('node:child_process');
  const { createServer } = await import('node:http');
  const { freePort } = await import('./support/server.js');
  const run = (env: Record<string, string>) =>
    new Promise<any>((ok, fail) => {
      const c = execFile('/bin/sh', ['-c', hookCommand(5000)], { env: { PATH: process.env.PATH ?? '', ...env } }, (err, stdout) => (err ? fail(err) : ok(JSON.parse(stdout))));
      c.stdin!.end(JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf /' }, tool_use_id: 'toolu_1' }));
    });
  const decision = (out: any) => [out.hookSpecificOutput.permissionDecision, out.hookSpecificOutput.permissionDecisionReason];
  assert.deepEqual(decision(await run({})), ['deny', 'no Roost bridge to ask: denied']);
  const [d1, why1] = decision(await run({ ROOST_BRIDGE_HOOK_URL: `http://127.0.0.1:${await freePort()}/hook/s1?k=x` }));
  assert.equal(d1, 'deny');
  assert.match(why1, /could not be reached/);
  // A server that answers something else than a decision.
  const odd = createServer((_req, res) => res.end('<html>proxy error</html>'));
  await new Promise<void>((ok) => odd.listen(0, '127.0.0.1', ok));
  const [d2, why2] = decision(await run({ ROOST_BRIDGE_HOOK_URL: `http://127.0.0.1:${(odd.address() as any).port}/hook/s1?k=x` }));
  odd.close();
  assert.equal(d2, 'deny');
  assert.match(why2, /gave no decision/);
  // And a real decision passes through as is.
  const yes = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'Allowed in Roost by Ana' } })));
  });
  await new Promise<void>((ok) => yes.listen(0, '127.0.0.1', ok));
  assert.deepEqual(decision(await run({ ROOST_BRIDGE_HOOK_URL: `http://127.0.0.1:${(yes.address() as any).port}/hook/s1?k=x` })), ['allow', 'Allowed in Roost by Ana']);
  yes.close();
});

test('presence: members learn how many bridges follow the thread, live', async () => {
  const state = async () => ((await (await fetch(`${roost.url}/fleet/t1`)).json())).bridges;
  assert.equal(await state(), 0);
  const member = await openSse(`${roost.url}/fleet/t1/stream`);
  await member.waitFor((f) => f.event === 'snapshot');
  const bridge = await openSse(`${roost.url}/fleet/t1/stream`, { 'roost-client': 'bridge' });
  const snap = await bridge.waitFor((f) => f.event === 'snapshot');
  assert.equal(JSON.parse(snap.data).bridges, 1);
  assert.equal(await state(), 1);
  const on = await member.waitFor((f) => f.event === 'live' && JSON.parse(f.data).type === 'bridges');
  assert.deepEqual(JSON.parse(on.data), { type: 'bridges', count: 1 });
  const n = member.frames.length;
  bridge.close();
  const off = await member.waitFor((f) => f.event === 'live' && JSON.parse(f.data).type === 'bridges', 5000, n);
  assert.deepEqual(JSON.parse(off.data), { type: 'bridges', count: 0 });
  assert.equal(await state(), 0);
  member.close();
});
