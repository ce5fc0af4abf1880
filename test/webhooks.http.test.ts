// Outbound webhooks over real HTTP (docs/webhooks.md): an owner adds a target,
// agents' events become signed POSTs that a receiver written from the
// documented scheme verifies; private addresses are refused on the resolved
// address; deliveries survive a receiver outage and a Roost restart, and none
// arrives twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess, tempDir } from './support/server.js';
import { pendingOf } from './support/approvals-http.js';
import { until } from './support/until.js';
import { Receiver, verifySignature } from './support/webhook-receiver.js';
import type { Resolver } from '../src/server/net-address.js';

const SECRET = 'a-test-secret-of-enough-length';

async function call(url: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const t = await r.text();
  return { status: r.status, json: t ? JSON.parse(t) : null };
}

/** One agent's turn ending: a session.stopped event (Claude Code's Stop makes the same floor status). */
async function turn(base: string, agent: string): Promise<void> {
  for (const status of ['working', 'done']) {
    const r = await call(base + '/events', 'POST', { type: 'status', agent: { id: agent, name: agent }, status, source: 'test' });
    assert.ok(r.status < 300, `event accepted (${r.status} ${JSON.stringify(r.json)})`);
  }
}

const FAST = { webhookBackoffMs: 100, webhookLeaseMs: 3000 };

test('a target gets each session.stopped once, signed: the receiver verifies Roost-Signature from the documented scheme; the delivery log shows it delivered', { timeout: 60_000 }, async () => {
  const rx = await new Receiver(SECRET).start();
  const roost = await inProcess(FAST);
  try {
    const add = await call(roost.url + '/webhooks', 'POST', { url: rx.url, kinds: ['session.stopped'], secret: SECRET, allow_private: true });
    assert.equal(add.status, 201, JSON.stringify(add.json));
    assert.equal(add.json.secret, SECRET);
    await turn(roost.url, 'ann');
    await turn(roost.url, 'bob');
    await until('two deliveries', () => rx.got.length >= 2, 20_000);
    assert.deepEqual(
      rx.got.map((g) => [g.kind, g.json.data.agent]),
      [
        ['session.stopped', 'ann'],
        ['session.stopped', 'bob'],
      ],
    );
    assert.equal(rx.got[0].json.id, rx.got[0].id, 'the body names its delivery, as the Roost-Delivery header does');
    assert.equal(rx.got[0].json.project, 'default');
    assert.deepEqual(rx.refusedSignatures, []);
    // A tampered body or another secret does not verify.
    assert.equal(verifySignature(`t=${Math.floor(Date.now() / 1000)},v1=00`, rx.got[0].body, SECRET), false);
    const log = await until('the log says delivered', async () => {
      const r = await call(roost.url + '/webhooks', 'GET');
      return r.json.deliveries.length === 2 && r.json.deliveries.every((d: any) => d.status === 'delivered') ? r.json : null;
    }, 10_000);
    assert.equal(log.targets[0].url, rx.url);
    assert.equal('secret' in log.targets[0], false, 'the secret is never shown again');
    assert.deepEqual(log.deliveries.map((d: any) => d.attempts), [1, 1]);
    // Resend: the same body again, with a fresh signature.
    const first = log.deliveries[1];
    assert.equal((await call(`${roost.url}/webhooks/deliveries/${first.id}/resend`, 'POST', {})).status, 200);
    await until('the resend', () => rx.got.length >= 3, 10_000);
    assert.equal(rx.got[2].id, first.id);
    assert.equal(rx.got[2].body, rx.got[0].body);
    // A Slack-shaped target gets {"text": ...}.
    const slack = await call(roost.url + '/webhooks', 'POST', { url: rx.url, kinds: ['session.stopped'], secret: SECRET, slack: true, allow_private: true });
    assert.equal(slack.status, 201);
    await turn(roost.url, 'cid');
    await until('the slack body', () => rx.got.some((g) => typeof g.json.text === 'string' && g.json.text.includes('cid finished')), 10_000);
  } finally {
    await roost.close();
    await rx.stop();
  }
});

test('private targets: an IP literal is refused at once; a name that resolves to 127.0.0.1 is refused at every send, on the resolved address (nothing reaches the receiver)', { timeout: 60_000 }, async () => {
  const rx = await new Receiver(SECRET).start();
  // The resolver is injected: `hooks.example.test` answers 127.0.0.1, as a DNS record could.
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    if (host === 'hooks.example.test') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'mapped.example.test') return [{ address: '::ffff:127.0.0.1', family: 6 }];
    if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error('no such name'), { code: 'ENOTFOUND' });
  };
  const roost = await inProcess({ ...FAST, webhookResolve: resolve });
  try {
    for (const url of [`http://127.0.0.1:${rx.port}/`, `http://[::1]:${rx.port}/`, `http://[::ffff:7f00:1]:${rx.port}/`, 'http://169.254.169.254/latest', `http://10.1.2.3/`]) {
      const r = await call(roost.url + '/webhooks', 'POST', { url, kinds: ['session.stopped'], secret: SECRET });
      assert.equal(r.status, 400, url);
      assert.match(r.json.message, /address(?: \(.*\))?; a webhook target must be public/);
    }
    const ids: string[] = [];
    for (const host of ['hooks.example.test', 'mapped.example.test', 'localhost']) {
      const r = await call(roost.url + '/webhooks', 'POST', { url: `http://${host}:${rx.port}/hook`, kinds: ['session.stopped'], secret: SECRET });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      ids.push(r.json.target.id);
    }
    await turn(roost.url, 'ann');
    const log = await until('three refused attempts', async () => {
      const r = await call(roost.url + '/webhooks', 'GET');
      return r.json.deliveries.length === 3 && r.json.deliveries.every((d: any) => d.attempts >= 1) ? r.json : null;
    }, 20_000);
    for (const d of log.deliveries) {
      assert.equal(d.status, 'pending', 'refused, to be tried again (DNS may change)');
      assert.match(d.last_error, /^refused: \S+ resolves to \S+, a loopback address/);
    }
    assert.ok(log.deliveries.some((d: any) => /127\.0\.0\.1 inside an IPv6 mapped address/.test(d.last_error)));
    assert.equal(rx.got.length, 0, 'nothing reached the loopback receiver');
    assert.ok(asked.includes('hooks.example.test'));
  } finally {
    await roost.close();
    await rx.stop();
  }
});

test("with the machine's own resolver: a target named `localhost` is refused on what the name resolves to, at every send; nothing reaches the receiver", { timeout: 60_000 }, async () => {
  const rx = await new Receiver(SECRET).start();
  // No resolver injected: the name goes through the system's lookup, as in production.
  const roost = await inProcess(FAST);
  try {
    const r = await call(roost.url + '/webhooks', 'POST', { url: `http://localhost:${rx.port}/hook`, kinds: ['session.stopped'], secret: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await turn(roost.url, 'bo');
    const d = await until('two refused attempts', async () => {
      const l = (await call(roost.url + '/webhooks', 'GET')).json;
      return l.deliveries.length === 1 && l.deliveries[0].attempts >= 2 ? l.deliveries[0] : null;
    }, 20_000);
    assert.equal(d.status, 'pending');
    assert.match(d.last_error, /^refused: localhost resolves to \S+, a loopback address/);
    assert.equal(rx.got.length, 0, 'nothing reached the loopback receiver');
  } finally {
    await roost.close();
    await rx.stop();
  }
});

test('retries across a receiver outage and a Roost restart: every delivery arrives, in order, none twice', { timeout: 120_000 }, async () => {
  const rx = await new Receiver(SECRET).start();
  const port = rx.port;
  const dataDir = tempDir();
  let roost = await inProcess(FAST, dataDir);
  try {
    assert.equal((await call(roost.url + '/webhooks', 'POST', { url: rx.url, kinds: ['session.stopped'], secret: SECRET, allow_private: true })).status, 201);
    await turn(roost.url, 'a1');
    await until('the first delivery', () => rx.got.length === 1, 20_000);
    // The receiver goes down; three more turns end.
    await rx.stop();
    for (const a of ['a2', 'a3', 'a4']) await turn(roost.url, a);
    await until('a failed attempt in the log', async () => {
      const r = await call(roost.url + '/webhooks', 'GET');
      return r.json.deliveries.some((d: any) => d.status === 'pending' && d.attempts >= 2 && /ECONNREFUSED/.test(d.last_error));
    }, 20_000);
    // Roost restarts while they wait (the pending deliveries are only in the log).
    await roost.close();
    roost = await inProcess(FAST, dataDir);
    await turn(roost.url, 'a5');
    // The receiver comes back on its port.
    await rx.start(port);
    await until('five deliveries', () => rx.got.length >= 5, 30_000);
    await new Promise((r) => setTimeout(r, 500)); // room for a duplicate to show
    assert.deepEqual(rx.twice(), [], 'no delivery twice');
    assert.deepEqual(
      rx.got.map((g) => g.json.data.agent),
      ['a1', 'a2', 'a3', 'a4', 'a5'],
      'in order per target',
    );
    const log = (await call(roost.url + '/webhooks', 'GET')).json;
    assert.ok(log.deliveries.every((d: any) => d.status === 'delivered'));
    assert.ok(log.deliveries.some((d: any) => d.attempts >= 2), 'the outage cost retries');
  } finally {
    await roost.close();
    await rx.stop();
  }
});

test('owner routes: bad bodies are 400 with the field named; a secret is made when none is given; an unknown target is 404; change and remove', { timeout: 60_000 }, async () => {
  const roost = await inProcess(FAST);
  try {
    let r = await call(roost.url + '/webhooks', 'POST', { url: 'ftp://x.example/', kinds: ['session.stopped'] });
    assert.equal(r.status, 400);
    r = await call(roost.url + '/webhooks', 'POST', { url: 'https://x.example/', kinds: ['nope'] });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /"kinds\[0\]"/);
    r = await call(roost.url + '/webhooks', 'POST', { url: 'https://x.example/', kinds: ['work.finished'], secret: 'short' });
    assert.equal(r.status, 400);
    r = await call(roost.url + '/webhooks', 'POST', { url: 'https://x.example/', kinds: ['work.finished'] });
    assert.equal(r.status, 201);
    assert.match(r.json.secret, /^whsec_/);
    const id = r.json.target.id;
    assert.equal((await call(`${roost.url}/webhooks/whnope`, 'DELETE')).status, 404);
    assert.equal((await call(`${roost.url}/webhooks/${id}`, 'PUT', { kinds: ['work.finished', 'list.finished'] })).json.target.kinds.length, 2);
    assert.equal((await call(`${roost.url}/webhooks/${id}`, 'DELETE')).status, 200);
    assert.deepEqual((await call(roost.url + '/webhooks', 'GET')).json.targets, []);
  } finally {
    await roost.close();
  }
});

test('approvals: a held tool call is delivered as approval.waiting, its decision as approval.decided (who and what), to a target that asked for both', { timeout: 60_000 }, async () => {
  const rx = await new Receiver(SECRET).start();
  const roost = await inProcess(FAST);
  try {
    assert.equal((await call(roost.url + '/webhooks', 'POST', { url: rx.url, kinds: ['approval.waiting', 'approval.decided'], secret: SECRET, allow_private: true })).status, 201);
    const pre = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8'));
    const held = call(`${roost.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1`, 'POST', pre);
    const [p] = await until('the call pending', async () => {
      const l = await pendingOf(roost.url);
      return l.length ? l : null;
    }, 20_000);
    await until('approval.waiting delivered', () => rx.got.some((g) => g.kind === 'approval.waiting'), 20_000);
    assert.equal((await call(`${roost.url}/approvals/${p.id}/decision`, 'POST', { decision: 'deny', by: 'alice', reason: 'not today' })).status, 200);
    await held;
    const decided = await until('approval.decided delivered', () => rx.got.find((g) => g.kind === 'approval.decided'), 20_000);
    const waiting = rx.got.find((g) => g.kind === 'approval.waiting')!;
    assert.equal(waiting.json.data.approval, p.id);
    assert.equal(waiting.json.data.tool, 'Bash');
    assert.equal(decided.json.data.approval, p.id);
    assert.equal(decided.json.data.status, 'denied');
    assert.equal(decided.json.data.decided_by, 'alice');
    assert.deepEqual(rx.twice(), []);
  } finally {
    await roost.close();
    await rx.stop();
  }
});

test('work.finished: an execution.finished committed to a project\'s Work stream is delivered once, with its command and status', { timeout: 60_000 }, async () => {
  const rx = await new Receiver(SECRET).start();
  const roost = await inProcess(FAST);
  try {
    assert.equal((await call(roost.url + '/webhooks', 'POST', { url: rx.url, kinds: ['work.finished'], secret: SECRET, allow_private: true })).status, 201);
    // As the Work routes append a bridge's report (the trigger hears the commit; Work's own checks are its tests').
    const ev = { type: 'execution.finished', command: 'c-42', status: 'failed', result: 'exit 1' };
    for (let i = 0; i < 2; i++) await roost.store.append('work:default', [{ type: ev.type, body: JSON.stringify(ev) }]);
    await until('the delivery', () => rx.got.length >= 1, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(rx.got.length, 1, 'the same command finished twice is told once');
    assert.equal(rx.got[0].kind, 'work.finished');
    assert.deepEqual(rx.got[0].json.data, { command: 'c-42', status: 'failed' });
  } finally {
    await roost.close();
    await rx.stop();
  }
});
