// Web Push, the server's half: a real Roost sends encrypted push messages to
// a push-service stand-in (support/push-service.ts) that checks the VAPID
// JWT against the server's public key and decrypts every payload with the
// subscription's own private key, as a browser vendor's push service and the
// browser would. The other half (the service worker) is push.browser.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess, tempDir } from './support/server.js';
import { PushServiceStandin, decryptAes128gcm, encryptAes128gcm } from './support/push-service.js';
import { send, withPushRig } from './support/push.js';
import { sharedServer, makeUser, mintToken, call } from './support/shared.js';
import { until } from './support/until.js';
import { createECDH, randomBytes } from 'node:crypto';
import { PUSH_STREAM } from '../src/core/push.js';
import { deliver, isPrivateAddress } from '../src/server/push/endpoint.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197/09-PreToolUse-Bash.json'), 'utf8'));


test("the stand-in's decryption is RFC 8291's: what it encrypts for a subscription it decrypts with the subscription's key, and a wrong auth secret fails", () => {
  const ua = createECDH('prime256v1');
  ua.generateKeys();
  const auth = randomBytes(16);
  const box = encryptAes128gcm(Buffer.from('{"hi":1}'), ua.getPublicKey(), auth);
  assert.equal(decryptAes128gcm(box, ua, auth).toString(), '{"hi":1}');
  assert.throws(() => decryptAes128gcm(box, ua, randomBytes(16)));
});

test('an approval posted reaches the push service, encrypted for the subscription and signed with the VAPID key the server made at its first start; the payload names the approval and opens its decision', async () => {
  const ps = await new PushServiceStandin().start();
  const dataDir = tempDir();
  let roost = await inProcess({}, dataDir);
  try {
    const info = await (await fetch(`${roost.url}/push`)).json();
    assert.match(info.publicKey, /^[A-Za-z0-9_-]{87}$/);
    assert.deepEqual(info.prefs, { approval: true, ask: true, failed: true, finished: true, done: true, budget: true });
    assert.deepEqual(info.subscriptions, []);
    // The browser subscribes with the server's key, and hands the subscription to Roost.
    const sub = ps.subscribe(info.publicKey);
    const r = await send(`${roost.url}/push/subscriptions`, PushServiceStandin.json(sub));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.match(r.json.id, /^ps_[a-f0-9]{24}$/);

    const held = send(`${roost.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1&team=Shop`, PRE_BASH);
    await ps.until((m) => m.length >= 1);
    const [m] = ps.to(sub.id);
    assert.equal(m.ok, true, m.error);
    assert.equal(m.headers['content-encoding'], 'aes128gcm');
    assert.equal(m.headers.urgency, 'high');
    assert.ok(Number(m.headers.ttl) > 0 && Number(m.headers.ttl) <= 60);
    assert.equal(m.jwt!.aud, ps.url);
    const pending = roost.approvals.state.byId.values().next().value!;
    assert.deepEqual(m.payload, {
      v: 1,
      kind: 'approval',
      project: 'default',
      title: `${pending.askerName} waits for you`,
      body: 'Allow Bash? (default)',
      url: `/inbox/${pending.id}`,
      tag: `approval:${pending.id}`,
      waiting: 1,
    });
    // No secret rides along: the tool call's input stays on the server.
    assert.doesNotMatch(m.text!, /exit 3/);
    // Decided, the hook returns; nothing more is pushed for the decision.
    assert.equal((await send(`${roost.url}/approvals/${pending.id}/decision`, { decision: 'allow' })).status, 200);
    assert.equal((await held).status, 200);
    await roost.notices.settled();
    assert.equal(ps.messages.length, 1);

    // A restart keeps the key pair and the subscription (they are in the log), and sends nothing old again.
    await roost.close();
    roost = await inProcess({}, dataDir);
    const again = await (await fetch(`${roost.url}/push`)).json();
    assert.equal(again.publicKey, info.publicKey);
    assert.deepEqual(
      again.subscriptions.map((s: any) => [s.id, s.service]),
      [[r.json.id, ps.url]],
    );
    await roost.notices.settled();
    assert.equal(ps.messages.length, 1);
  } finally {
    await roost.close();
    await ps.close();
  }
});

test("each member's choices are kept per project: an approval they turned off is not pushed, an ask_owner and a failed agent are, each to its project's subscriptions", async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    const sub = await subscribe();
    // Another project's subscription of the same browser hears only that project.
    const other = await subscribe('other');

    const off = await send(`${roost.url}/push/prefs`, { approval: false }, 'PUT');
    assert.equal(off.status, 200);
    assert.deepEqual(off.json.prefs, { approval: false, ask: true, failed: true, finished: true, done: true, budget: true });
    assert.equal((await send(`${roost.url}/push/prefs`, { approval: 'no' }, 'PUT')).status, 400);
    assert.equal((await send(`${roost.url}/push/prefs`, { sound: true }, 'PUT')).status, 400);
    assert.deepEqual((await (await fetch(`${roost.url}/push?project=other`)).json()).prefs, { approval: true, ask: true, failed: true, finished: true, done: true, budget: true });

    // A tool approval (off), then an ask_owner (on): only the ask arrives.
    await roost.approvals.request({ kind: 'tool', asker: 'bot-1', askerName: 'Bot One', source: 'cli', tool: 'Bash', input: 'rm -rf /tmp/x', window: 60_000 });
    const { approval: ask } = await roost.approvals.request({ kind: 'ask', asker: 'sentry', askerName: 'The Sentry', source: 'nest', tool: 'ask_owner', input: 'May I spend 2000 tokens?', phrase: 'yes spend', scope: { nest: 'n1', msg: '3' }, window: 60_000 });
    await ps.until((m) => m.length >= 1);
    await roost.notices.settled();
    assert.deepEqual(
      ps.messages.map((m) => [m.subscription, (m.payload as any).kind, (m.payload as any).url]),
      [[sub.id, 'ask', `/inbox/${ask.id}`]],
    );
    assert.equal((ps.messages[0].payload as any).title, 'The Sentry asks you');

    // An agent that fails on the floor.
    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: { id: 'w-7', name: 'Worker 7' }, team: 'Shop', status: 'working' })).status, 200);
    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-7', status: 'error', activity: 'token=abc crashed' })).status, 200);
    await ps.until((m) => m.length >= 2);
    const failed = ps.messages[1].payload as any;
    assert.deepEqual([failed.kind, failed.title, failed.url], ['failed', 'Worker 7 failed', '/?agent=w-7']);
    assert.doesNotMatch(ps.messages[1].text!, /token=abc/);

    // The other project's agent failing reaches only the other project's subscription, with its project in the page.
    assert.equal((await send(`${roost.url}/events?project=other`, { type: 'status', agent: 'x-1', status: 'error' })).status, 200);
    await ps.until((m) => m.length >= 3);
    assert.equal(ps.messages[2].subscription, other.id);
    assert.equal((ps.messages[2].payload as any).url, '/?agent=x-1&project=other');

    // Turned off: no failed notice.
    assert.equal((await send(`${roost.url}/push/prefs`, { failed: false }, 'PUT')).status, 200);
    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-8', status: 'error' })).status, 200);
    await until('the floor folded w-8', () => roost.floor.state.agents.get('w-8')?.status === 'error', 5000);
    await roost.notices.settled();
    assert.equal(ps.messages.length, 3);

    // A removed subscription hears nothing more.
    const listed = (await (await fetch(`${roost.url}/push`)).json()).subscriptions;
    assert.equal(listed.length, 1);
    const del = await fetch(`${roost.url}/push/subscriptions/${listed[0].id}`, { method: 'DELETE', headers: { 'roost-client': 'test' } });
    assert.equal(del.status, 200);
    assert.equal((await fetch(`${roost.url}/push/subscriptions/${listed[0].id}`, { method: 'DELETE', headers: { 'roost-client': 'test' } })).status, 404);
    await roost.approvals.request({ kind: 'ask', asker: 'sentry', askerName: 'The Sentry', source: 'nest', tool: 'ask_owner', input: 'again?', phrase: 'ok', window: 60_000 });
    await roost.notices.settled();
    assert.equal(ps.messages.length, 3);
  });
});

test('a subscription the push service says is gone (410) is removed, and the next notice skips it', async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    const live = await subscribe();
    const gone = await subscribe();
    ps.answers.set(gone.id, 410);
    await roost.approvals.request({ kind: 'tool', asker: 'bot-1', tool: 'Bash', source: 'cli', input: 'ls', window: 60_000 });
    await ps.until((m) => m.length >= 2);
    await roost.notices.settled();
    assert.equal(roost.push.stats.gone, 1);
    assert.deepEqual(
      [...roost.push.state.subs.values()].map((s) => s.endpoint),
      [live.endpoint],
    );
    const log = (await roost.store.read(PUSH_STREAM, 0)).map((e) => JSON.parse(e.body));
    assert.ok(log.some((e) => e.type === 'push.unsubscribed' && /410/.test(e.reason)));
    await roost.approvals.request({ kind: 'tool', asker: 'bot-1', tool: 'Bash', source: 'cli', input: 'ls -la', window: 60_000 });
    await ps.until((m) => m.length >= 3);
    await roost.notices.settled();
    const first = ps.messages.slice(0, 2).map((m) => `${m.subscription} ${m.status}`);
    assert.deepEqual(first.sort(), [`${gone.id} 410`, `${live.id} 201`].sort());
    assert.deepEqual([ps.messages[2].subscription, ps.messages[2].status], [live.id, 201]);
  });
});

test('a subscription is checked before it is kept: bad keys, a non-URL; in shared mode https only and no private address, a person and not a token, and each member sees and removes only their own', async () => {
  const ps = await new PushServiceStandin().start();
  const local = await inProcess();
  try {
    const sub = PushServiceStandin.json(ps.subscribe());
    const bad = async (body: unknown, re: RegExp) => {
      const r = await send(`${local.url}/push/subscriptions`, body);
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.match(r.json.message, re);
    };
    await bad({ ...sub, endpoint: 'not a url' }, /absolute URL/);
    await bad({ ...sub, endpoint: 'ftp://push.example/x' }, /http or https/);
    await bad({ ...sub, keys: { ...sub.keys, p256dh: sub.keys.p256dh.slice(0, 80) } }, /P-256/);
    await bad({ ...sub, keys: { ...sub.keys, auth: Buffer.alloc(20).toString('base64url') } }, /16 bytes/);
    await bad({ endpoint: sub.endpoint }, /"keys" is required/);
  } finally {
    await local.close();
    await ps.close();
  }

  const srv = await sharedServer();
  try {
    const bob = await makeUser(srv, 'bob', 'default', 'viewer');
    const keys = PushServiceStandin.json(ps.subscribe()).keys;
    const at = (endpoint: string) => ({ endpoint, keys });
    for (const e of ['http://push.example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://[fd00::1]/x', 'https://169.254.169.254/latest', 'https://localhost/x', 'https://intranet/x']) {
      const r = await call(srv.url, bob, 'POST', '/push/subscriptions', at(e));
      assert.equal(r.status, 400, `${e}: ${JSON.stringify(r.json)}`);
      assert.match(r.json.message, /https|public address/);
    }
    const ok = await call(srv.url, bob, 'POST', '/push/subscriptions', at('https://push.example.com/send/abc'));
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const annSub = await call(srv.url, srv.owner, 'POST', '/push/subscriptions', at('https://push.example.com/send/ann'));
    assert.equal(annSub.status, 200);
    // Each sees only their own; nobody removes another's.
    const mine = await call(srv.url, bob, 'GET', '/push');
    assert.deepEqual(
      mine.json.subscriptions.map((s: any) => [s.id, s.service]),
      [[ok.json.id, 'https://push.example.com']],
    );
    assert.equal((await call(srv.url, bob, 'DELETE', `/push/subscriptions/${annSub.json.id}`)).status, 404);
    // A token is no browser.
    const tok = await mintToken(srv, srv.owner, 'default', 'editor');
    assert.equal((await call(srv.url, tok, 'POST', '/push/subscriptions', at('https://push.example.com/send/t'))).status, 403);
    // A project bob is not in.
    assert.equal((await call(srv.url, bob, 'GET', '/push?project=secret')).status, 403);
  } finally {
    await srv.close();
  }
});

test('a send checks the address it connects to: a name that resolves to loopback is refused before any byte leaves, and the address rules', async () => {
  await assert.rejects(deliver(new URL('https://localhost:9/x'), {}, null, { httpsOnly: true, privateOk: false }, 2000), /resolves to a private address/);
  await assert.rejects(deliver(new URL('https://127.0.0.1:9/x'), {}, null, { httpsOnly: true, privateOk: false }, 2000), /private address/);
  for (const a of ['127.0.0.1', '10.0.0.8', '172.20.1.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1']) assert.equal(isPrivateAddress(a), true, a);
  for (const a of ['8.8.8.8', '142.250.1.1', '2a00:1450:4001::1', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
});
