// ask_owner as an approval, the Sentry's watchdog and quarantine, and Jev's
// calibration from the log (issue 14, parts 6, 7 and part of 3), over real
// HTTP and SSE with the scripted model stand-in (support/flock-model.ts: a
// crow's message saying "offtopic", "unsourced" or "contradicts" breaches).
//
// - ask_owner: parked with its phrase and listed in the one approvals inbox;
//   the right reply approves it (and allows the approval), a wrong reply is
//   not a yes and leaves it open (a right one later approves it), silence past the (shortened) window
//   reads rejected (and the approval expires); decided from the inbox with the
//   phrase, the owner's reply is posted into the nest; a wrong phrase is a
//   rejection; a second decision is 409, the decider recorded.
// - the watchdog: a breaching deliver → a `watch` event, the Sentry's flag
//   naming the scores, 403 on the crow's next post with the contract's
//   message, the crow skipped by selection, an ask_owner to lift it, lifted
//   through the phrase (`quarantine.lifted`); a passing claim → no flag;
//   owner messages never scored; one flag per crow per referent; a refused
//   lift keeps the quarantine and a reply to the flag asks again; no model →
//   the embedded scorer scores, and GET /api/nests says so. (A refused lift:
//   a no decided in the inbox; a wrong reply in the nest leaves the ask open.)
// - a restart: an ask with no approval gets one, an approved lift never
//   carried out is, and both ways of deciding still work.
// - calibration: the owner's correction and the author's header are the
//   truth; `npx tsx scripts/jev.ts calibration --data <dir>` recomputes it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { inProcess, tempDir } from './support/server.js';
import { flockTs } from '../src/core/flock.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import { openSse, type SseReader } from './support/sse.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';
import { calibrationFromStore } from '../src/server/flock/jev-log.js';
import { WATCH_MARK } from '../src/server/flock/watchdog.js';

const WINDOW_MS = 3000;
type Rec = Record<string, any>;

/** The whole flock on the one live connection (`/live?s=flock:default`): every logged event, internal ones too. */
async function flockLog(url: string): Promise<{ sse: SseReader; next: (match: (e: Rec) => boolean, ms?: number) => Promise<Rec>; events: () => Rec[] }> {
  const sse = await openSse(`${url}/live?s=${encodeURIComponent('flock:default')}`);
  const parse = (data: string): Rec | null => {
    const f = JSON.parse(data) as Rec;
    return f.e === 'event' && f.d?.event ? (f.d.event as Rec) : null;
  };
  return {
    sse,
    events: () => sse.frames.filter((f) => f.event === 'message').map((f) => parse(f.data)).filter((e): e is Rec => e !== null),
    next: async (match, ms = 10_000) => parse((await sse.waitFor((f) => f.event === 'message' && !!parse(f.data) && match(parse(f.data)!), ms)).data)!,
  };
}

async function nestStream(url: string, nest: string): Promise<{ sse: SseReader; next: (match: (r: Rec) => boolean, ms?: number) => Promise<Rec> }> {
  const sse = await openSse(`${url}/api/events?nest_id=${nest}`);
  return { sse, next: async (match, ms = 10_000) => JSON.parse((await sse.waitFor((f) => f.event === 'nest.message' && match(JSON.parse(f.data)), ms)).data) };
}

describe('ask_owner as an approval', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    model = await flockModel('anthropic');
    roost = await inProcess({ models: model.roster(), flockVerdictWindowMs: WINDOW_MS, flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost.close();
    await model.close();
  });
  const say = (body: Rec) => c.post('/api/nests/todo/messages', body);
  const messages = async () => (await c.get('/api/nests/todo/messages')).body as Rec[];
  const resolved = async (msg_id: string) => (await messages()).find((r) => r.msg_id === msg_id)!.resolved as string;
  const approvalOf = async (msg_id: string): Promise<Rec> => {
    const r = (await c.get('/approvals?recent=100')).body;
    return [...r.pending, ...r.recent].find((a: Rec) => a.kind === 'ask' && a.scope.nest === 'todo' && a.scope.msg === msg_id);
  };
  const ask = async (phrase: string, author = 'Quill') => {
    const r = await say({ author, kind: 'ask_owner', text: `May I ${phrase}?`, approval_phrase: phrase });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.kind, 'ask_owner');
    assert.equal(r.body.resolved, '');
    return r.body.msg_id as string;
  };

  test('parked with its phrase, in the inbox as kind ask; the exact reply approves it and allows the approval', async () => {
    const id = await ask('Ship  It');
    const a = await approvalOf(id);
    assert.ok(a, 'the ask is in the one approvals inbox');
    assert.equal(a.status, 'pending');
    assert.equal(a.kind, 'ask');
    assert.equal(a.asker, 'Quill');
    assert.equal(a.tool, 'ask_owner');
    assert.equal(a.phrase, 'ship it');
    assert.equal(a.source, 'nest');
    assert.ok(a.deadline - a.requestedAt <= WINDOW_MS, 'the window is the setting (ROOST_FLOCK_WINDOW_MS)');
    const yes = await say({ author: 'owner', text: '  SHIP IT ', refers_to: id });
    assert.equal(yes.status, 201);
    assert.equal(await resolved(id), 'approved');
    const after = await approvalOf(id);
    assert.equal(after.status, 'allowed');
    assert.equal(after.decidedBy, 'owner');
    // A second decision, in the inbox this time: 409, and the nest's first reply stands.
    const again = await c.post(`/approvals/${after.id}/decision`, { decision: 'deny' });
    assert.equal(again.status, 409);
    assert.match(again.body.message, /allowed by owner/);
    assert.equal(await resolved(id), 'approved');
  });

  test('a wrong reply is not a yes, and the ask stays open: pending in the nest and the inbox; a right reply later approves it', async () => {
    const id = await ask('merge it', 'Sentry');
    assert.equal((await say({ author: 'owner', text: 'merge it please', refers_to: id })).status, 201);
    assert.equal(await resolved(id), '');
    assert.equal((await approvalOf(id)).status, 'pending');
    assert.equal((await say({ author: 'owner', text: 'no', refers_to: id })).status, 201);
    assert.equal(await resolved(id), '');
    assert.equal((await say({ author: 'owner', text: ' Merge it ', refers_to: id })).status, 201);
    assert.equal(await resolved(id), 'approved');
    assert.equal((await approvalOf(id)).status, 'allowed');
    // A reply that does not refer to the ask decides nothing.
    const other = await ask('deploy');
    await say({ author: 'owner', text: 'deploy' });
    assert.equal(await resolved(other), '');
  });

  test('silence: rejected once the window passed; the approval expires; a reply after it changes nothing', async () => {
    const id = await ask('wait for me');
    assert.equal(await resolved(id), '');
    await new Promise((r) => setTimeout(r, WINDOW_MS + 300));
    assert.equal(await resolved(id), 'rejected');
    let a = await approvalOf(id);
    for (let i = 0; i < 40 && a.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      a = await approvalOf(id);
    }
    assert.equal(a.status, 'expired');
    await say({ author: 'owner', text: 'wait for me', refers_to: id });
    assert.equal(await resolved(id), 'rejected');
    // Deciding it now is 409.
    assert.equal((await c.post(`/approvals/${a.id}/decision`, { decision: 'allow', phrase: 'wait for me' })).status, 409);
  });

  test('decided from the inbox with the phrase: the owner\'s reply is posted into the nest; a wrong phrase is a rejection; 409 on a second decision', async () => {
    const nest = await nestStream(roost.url, 'todo');
    try {
      const id = await ask('Publish the post');
      const a = await approvalOf(id);
      const ok = await c.post(`/approvals/${a.id}/decision`, { decision: 'allow', phrase: '  publish THE post ', by: 'ann' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.approval.status, 'allowed');
      assert.equal(ok.body.approval.decidedBy, 'ann');
      const reply = await nest.next((r) => r.refers_to === id && r.author === 'owner');
      assert.equal(reply.text, 'Publish the post');
      assert.equal(await resolved(id), 'approved');
      const second = await c.post(`/approvals/${a.id}/decision`, { decision: 'allow', phrase: 'publish the post', by: 'bob' });
      assert.equal(second.status, 409);
      assert.match(second.body.message, /allowed by ann/);
      assert.equal((await messages()).filter((r) => r.refers_to === id).length, 1, 'one reply, once');

      const id2 = await ask('drop the table');
      const a2 = await approvalOf(id2);
      const wrong = await c.post(`/approvals/${a2.id}/decision`, { decision: 'allow', phrase: 'drop the tables', by: 'ann' });
      assert.equal(wrong.status, 200, 'a wrong phrase is a decision: the rejection');
      assert.equal(wrong.body.approval.status, 'denied');
      assert.match(wrong.body.approval.reason, /not the ask's/);
      const no = await nest.next((r) => r.refers_to === id2 && r.author === 'owner');
      assert.match(no.text, /^Rejected in the approvals inbox/);
      assert.equal(await resolved(id2), 'rejected');
      assert.equal((await c.post(`/approvals/${a2.id}/decision`, { decision: 'allow', phrase: 'drop the table' })).status, 409);
      assert.equal(await resolved(id2), 'rejected');

      const id3 = await ask('rename it');
      const a3 = await approvalOf(id3);
      assert.equal((await c.post(`/approvals/${a3.id}/decision`, { decision: 'deny', by: 'ann' })).status, 200);
      await nest.next((r) => r.refers_to === id3 && r.author === 'owner');
      assert.equal(await resolved(id3), 'rejected');
    } finally {
      nest.sse.close();
    }
  });
});

describe('the watchdog and quarantine', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  let log: Awaited<ReturnType<typeof flockLog>>;
  let nest: Awaited<ReturnType<typeof nestStream>>;
  before(async () => {
    model = await flockModel('anthropic');
    roost = await inProcess({ models: model.roster(), flockVerdictWindowMs: 60_000, flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
    assert.equal((await c.post('/api/nests', { name: 'Watch', crows: ['Pepper', 'Inky'] })).status, 201);
    log = await flockLog(roost.url);
    nest = await nestStream(roost.url, 'watch');
  });
  after(async () => {
    log.sse.close();
    nest.sse.close();
    await roost.close();
    await model.close();
  });
  const say = (body: Rec) => c.post('/api/nests/watch/messages', body);
  const request = async (to: string, text: string) => {
    const r = await say({ author: 'owner', kind: 'request', to, text });
    assert.equal(r.status, 201);
    assert.equal(r.body.kind, 'request');
    return r.body.msg_id as string;
  };
  const watchScores = () => model.asks().filter((a) => a.tool === 'watch_scores');

  test('GET /api/nests says the watchdog is on, with its model and band', async () => {
    const r = (await c.get('/api/nests')).body;
    assert.equal(r.watchdog.on, true);
    assert.equal(r.watchdog.band, 0.8);
    assert.match(r.watchdog.model, /claude-standin/);
    assert.deepEqual(r.quarantined, []);
    assert.equal((await c.get('/api/flock')).body.watchdog.on, true);
  });

  test('a passing claim is scored once and not flagged', async () => {
    const req = await request('Inky', 'draft the launch blurb');
    const claim = await say({ author: 'Inky', kind: 'claim', text: 'on it: the blurb is mine', refers_to: req, to: 'owner' });
    assert.equal(claim.status, 201);
    const w = await log.next((e) => e.type === 'watch' && e.msg_id === claim.body.msg_id);
    assert.deepEqual(w.scores, { answers_request: 0.9, states_fact_without_source: 0.1, contradicts_earlier: 0.05 });
    assert.equal(w.crow, 'Inky');
    assert.equal(w.band, 0.8);
    await roost.flock.watch.settled();
    // The call that scores this claim (the crow the request invoked answers it too, and its call's thread may name the claim).
    assert.equal(watchScores().filter((a) => a.user.includes(`${WATCH_MARK} (${claim.body.msg_id},`)).length, 1, 'one model call');
    assert.ok(!log.events().some((e) => e.type === 'nest.message' && e.kind === 'flag'), 'no flag');
    assert.equal((await say({ author: 'Inky', text: 'still here' })).status, 201);
  });

  test('a breaching deliver: watch event, the Sentry\'s flag naming the scores, 403, skipped by selection, an ask to lift it, lifted through the phrase', async () => {
    const req = await request('Pepper', 'write three taglines');
    const del = await say({ author: 'Pepper', kind: 'deliver', text: 'here is an offtopic ramble about pigeons', refers_to: req, to: 'owner' });
    assert.equal(del.status, 201);
    assert.equal(del.body.kind, 'deliver');
    const w = await log.next((e) => e.type === 'watch' && e.msg_id === del.body.msg_id);
    assert.equal(w.scores.answers_request, 0.1);
    const flag = await nest.next((r) => r.kind === 'flag');
    assert.equal(flag.author, 'Sentry');
    assert.equal(flag.to, 'Pepper');
    assert.equal(flag.refers_to, req, 'the flag refers to the request (one per crow per referent)');
    assert.match(flag.text, /answers_request 0\.1, states_fact_without_source 0\.1, contradicts_earlier 0\.05/);
    assert.match(flag.text, new RegExp(del.body.msg_id));
    const ask = await nest.next((r) => r.kind === 'ask_owner' && r.refers_to === flag.msg_id);
    assert.equal(ask.author, 'Sentry');
    assert.equal(ask.approval_phrase, 'lift Pepper');
    assert.equal(ask.resolved, '');
    // 403 with the contract's message, whatever the kind.
    for (const body of [{ text: 'sorry' }, { kind: 'claim', text: 'again', refers_to: req }]) {
      const r = await say({ author: 'Pepper', ...body });
      assert.equal(r.status, 403);
      assert.deepEqual(r.body.message, "Pepper is quarantined pending the owner's decision.");
    }
    const idx = (await c.get('/api/nests')).body;
    assert.deepEqual(
      idx.quarantined.map((q: Rec) => [q.crow, q.nest_id, q.flag]),
      [['Pepper', 'watch', flag.msg_id]],
    );
    // In the one approvals inbox.
    const pending = (await c.get('/approvals')).body.pending as Rec[];
    const lift = pending.find((a) => a.kind === 'ask' && a.scope.msg === ask.msg_id);
    assert.ok(lift);
    assert.equal(lift.phrase, 'lift pepper');

    // Skipped by selection: a list in the nest (Pepper first in its core) is flown by Inky.
    const list_id = await c.start('write a haiku about crows', 'ann', { nest_id: 'watch' });
    const lw = await c.watch(list_id);
    await lw.next('item.triaged');
    assert.equal((await c.verdict(`${list_id}-1`, 'triage', true)).status, 204);
    const flying = await lw.next('crow.flying', (d) => d.crow !== 'Sentry');
    assert.equal(flying.data.crow, 'Inky');
    await lw.next('item.answered');
    assert.equal((await c.verdict(`${list_id}-1`, 'output', true)).status, 204);
    await lw.next('list.finished');
    lw.close();

    // A wrong word in the nest would reject; the phrase lifts it.
    const yes = await say({ author: 'owner', text: 'Lift Pepper', refers_to: ask.msg_id });
    assert.equal(yes.status, 201);
    const lifted = await log.next((e) => e.type === 'quarantine.lifted');
    assert.deepEqual([lifted.crow, lifted.by, lifted.ask], ['Pepper', 'owner', ask.msg_id]);
    assert.deepEqual((await c.get('/api/nests')).body.quarantined, []);
    const rec = ((await c.get('/api/nests/watch/messages')).body as Rec[]).find((r) => r.msg_id === ask.msg_id)!;
    assert.equal(rec.resolved, 'approved');
    const ap = ((await c.get('/approvals?recent=100')).body.recent as Rec[]).find((a) => a.id === lift.id)!;
    assert.equal(ap.status, 'allowed');
    assert.equal((await say({ author: 'Pepper', text: 'back to work' })).status, 201);

    // One flag per crow per referent: another breach on the same request is logged, not posted.
    const again = await say({ author: 'Pepper', kind: 'deliver', text: 'unsourced: pigeons invented the wheel', refers_to: req, to: 'owner' });
    assert.equal(again.status, 201);
    const w2 = await log.next((e) => e.type === 'watch' && e.msg_id === again.body.msg_id);
    assert.equal(w2.scores.states_fact_without_source, 0.95);
    await roost.flock.watch.settled();
    const flags = ((await c.get('/api/nests/watch/messages')).body as Rec[]).filter((r) => r.kind === 'flag');
    assert.equal(flags.length, 1);
    assert.equal((await say({ author: 'Pepper', text: 'still free' })).status, 201);
  });

  test('a refused lift keeps the crow quarantined; the owner\'s reply to the flag makes the Sentry ask again; the phrase lifts it', async () => {
    const todo = await nestStream(roost.url, 'todo');
    try {
      const post = (body: Rec) => c.post('/api/nests/todo/messages', body);
      const req = (await post({ author: 'owner', kind: 'request', to: 'Rook', text: 'check the launch date' })).body.msg_id;
      const del = await post({ author: 'Rook', kind: 'deliver', text: 'Done: the launch is on Monday, which contradicts what Inky said', refers_to: req, to: 'owner' });
      assert.equal(del.status, 201);
      const flag = await todo.next((r) => r.kind === 'flag' && r.to === 'Rook');
      assert.match(flag.text, /contradicts_earlier 0\.9/);
      const first = await todo.next((r) => r.kind === 'ask_owner' && r.refers_to === flag.msg_id);
      await post({ author: 'owner', text: 'no, keep it', refers_to: first.msg_id });
      const nestNow = async () => (await c.get('/api/nests/todo/messages')).body as Rec[];
      assert.equal((await nestNow()).find((r) => r.msg_id === first.msg_id)!.resolved, '', 'a wrong answer is not a yes, and the ask stays open');
      assert.equal((await post({ author: 'Rook', text: 'let me out' })).status, 403, 'a wrong answer is not a yes');
      // Refused in the inbox: rejected.
      const ap = ((await c.get('/approvals')).body.pending as Rec[]).find((a) => a.kind === 'ask' && a.scope.msg === first.msg_id)!;
      assert.equal((await c.post(`/approvals/${ap.id}/decision`, { decision: 'deny' })).status, 200);
      await todo.next((r) => r.refers_to === first.msg_id && r.author === 'owner' && /^Rejected in the approvals inbox/.test(r.text));
      assert.equal((await nestNow()).find((r) => r.msg_id === first.msg_id)!.resolved, 'rejected');
      // A reply to the flag while nothing is open: the Sentry asks again.
      await post({ author: 'owner', text: 'fine, reconsider', refers_to: flag.msg_id });
      const second = await todo.next((r) => r.kind === 'ask_owner' && r.refers_to === flag.msg_id && r.msg_id !== first.msg_id);
      assert.equal(second.approval_phrase, 'lift Rook');
      // While that ask is open, another reply to the flag does not pile up asks.
      await post({ author: 'owner', text: 'still thinking', refers_to: flag.msg_id });
      assert.equal((await nestNow()).filter((r) => r.kind === 'ask_owner' && r.refers_to === flag.msg_id).length, 2);
      await post({ author: 'owner', text: 'lift rook', refers_to: second.msg_id });
      await log.next((e) => e.type === 'quarantine.lifted' && e.crow === 'Rook');
      assert.equal((await post({ author: 'Rook', text: 'thank you' })).status, 201);
    } finally {
      todo.sse.close();
    }
  });

  test('owner messages are never scored', async () => {
    const req = await request('Inky', 'summarise the notes');
    const mine = await say({ author: 'owner', kind: 'deliver', text: 'offtopic owner note nobody should score', refers_to: req });
    assert.equal(mine.status, 201);
    const theirs = await say({ author: 'Inky', kind: 'deliver', text: 'the notes say: ship on Friday', refers_to: req, to: 'owner' });
    await log.next((e) => e.type === 'watch' && e.msg_id === theirs.body.msg_id);
    await roost.flock.watch.settled();
    assert.ok(!log.events().some((e) => e.type === 'watch' && e.msg_id === mine.body.msg_id));
    assert.ok(!watchScores().some((a) => a.user.includes('nobody should score')), 'never sent to the model');
    // Nor a crow's plain talk, nor a claim that refers to no request.
    const talk = await say({ author: 'Inky', text: 'offtopic chatter' });
    await roost.flock.watch.settled();
    assert.ok(!log.events().some((e) => e.type === 'watch' && e.msg_id === talk.body.msg_id));
  });
});

describe('without a model: the watchdog runs on the embedded scorer; asks still work; calibration from the log', () => {
  let roost: Roost & { dataDir: string };
  let c: FlockClient;
  before(async () => {
    roost = await inProcess({ models: null, flockVerdictWindowMs: WINDOW_MS });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost.close();
  });
  const say = (body: Rec) => c.post('/api/nests/todo/messages', body);

  test('GET /api/nests: the watchdog is on, scored by the embedded scorer; an off-topic deliver is flagged, a fitting claim is not', async () => {
    const r = (await c.get('/api/nests')).body;
    assert.deepEqual({ on: r.watchdog.on, scorer: r.watchdog.scorer, model: r.watchdog.model }, { on: true, scorer: 'embedded', model: null });
    const log = await flockLog(roost.url);
    try {
      const req = await say({ author: 'owner', kind: 'request', to: 'Tansy', text: 'Please summarise the release notes.' });
      const claim = await say({ author: 'Tansy', kind: 'claim', text: 'I will take the release notes.', refers_to: req.body.msg_id });
      assert.equal(claim.status, 201);
      const scored = await log.next((e) => e.type === 'watch' && e.msg_id === claim.body.msg_id);
      assert.equal(scored.source, 'embedded');
      assert.ok(scored.scores.answers_request > 0.8, JSON.stringify(scored.scores));
      const off = await say({ author: 'owner', kind: 'request', to: 'Sable', text: 'look into the pricing page' });
      const del = await say({ author: 'Sable', kind: 'deliver', text: 'Here is a limerick about pigeons.', refers_to: off.body.msg_id });
      assert.equal(del.status, 201);
      const w = await log.next((e) => e.type === 'watch' && e.msg_id === del.body.msg_id);
      assert.equal(w.source, 'embedded');
      assert.ok(w.scores.answers_request <= 0.2, JSON.stringify(w.scores));
      const flag = await log.next((e) => e.type === 'nest.message' && e.kind === 'flag' && e.to === 'Sable');
      assert.equal(flag.refers_to, off.body.msg_id);
      assert.equal((await say({ author: 'Sable', text: 'free as a bird' })).status, 403);
      assert.ok(!log.events().some((e) => e.kind === 'flag' && e.to === 'Tansy'), 'the fitting claim is not flagged');
      // An ask needs no model: it is parked and listed.
      const ask = await say({ author: 'owner', kind: 'ask_owner', text: 'note to self: rotate keys?', approval_phrase: 'rotate' });
      const pending = (await c.get('/approvals')).body.pending as Rec[];
      assert.ok(pending.some((a) => a.kind === 'ask' && a.scope.msg === ask.body.msg_id));
    } finally {
      log.sse.close();
    }
  });

  test('calibration from the log: the owner\'s correction, else the author\'s header; one command over the data dir', async () => {
    // Headers that agree with the text, one that does not; the owner corrects another message.
    const posts: Rec[] = [
      { author: 'owner', kind: 'request', mode: 'solo', to: 'Hugin', text: 'please write the release notes for version two' },
      { author: 'Hugin', kind: 'claim', text: 'I will take the release notes' },
      { author: 'Hugin', kind: 'deliver', text: 'here are the release notes you asked for' },
      { author: 'Munin', kind: 'decline', text: 'I cannot do that, I am busy with the audit' },
      { author: 'Munin', kind: 'say', text: 'please review the pull request for the parser' },
      { author: 'owner', text: 'good morning everyone' },
    ];
    const ids: string[] = [];
    for (const p of posts) {
      const r = await say(p);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids.push(r.body.msg_id);
    }
    // The owner says what the headerless one and the mislabelled one really were.
    const fix = await c.post(`/api/nests/todo/messages/${ids[4]}/kind`, { kind: 'request', mode: 'solo' });
    assert.equal(fix.status, 200, JSON.stringify(fix.body));
    assert.deepEqual({ ...fix.body, by: '' }, { nest_id: 'todo', msg_id: ids[4], kind: 'request', mode: 'solo', by: '' });
    assert.equal((await c.post(`/api/nests/todo/messages/${ids[5]}/kind`, { kind: 'say' })).status, 200);
    assert.equal((await c.post(`/api/nests/todo/messages/${ids[5]}/kind`, { kind: 'shout' })).status, 400);
    assert.equal((await c.post(`/api/nests/todo/messages/${ids[5]}/kind`, { mode: 'solo' })).status, 400, 'only a request has a mode');
    assert.equal((await c.post(`/api/nests/todo/messages/todo-999/kind`, { kind: 'say' })).status, 404);
    assert.equal((await c.post(`/api/nests/nowhere/messages/x-1/kind`, { kind: 'say' })).status, 404);

    const cal = await calibrationFromStore(roost.store);
    const mine = cal.rows.filter((r) => ids.includes(r.msg_id));
    const kinds = new Map(mine.filter((r) => r.question === 'kind').map((r) => [r.msg_id, [r.truth, r.from]]));
    assert.deepEqual(kinds.get(ids[0]), ['request', 'header']);
    assert.deepEqual(kinds.get(ids[3]), ['decline', 'header']);
    assert.deepEqual(kinds.get(ids[4]), ['request', 'owner'], "the owner's correction beats the header");
    assert.deepEqual(kinds.get(ids[5]), ['say', 'owner']);
    const modes = new Map(mine.filter((r) => r.question === 'mode').map((r) => [r.msg_id, [r.truth, r.from]]));
    assert.deepEqual(modes.get(ids[0]), ['solo', 'header']);
    // A mode is logged when the message tagged as a request (Jev may have overridden Munin's "say"): its truth is the owner's.
    if (modes.has(ids[4])) assert.deepEqual(modes.get(ids[4]), ['solo', 'owner']);
    assert.equal(modes.size, modes.has(ids[4]) ? 2 : 1);
    for (const r of mine) assert.ok(Math.abs(Object.values(r.probs).reduce((a, b) => a + b, 0) - 1) < 0.01, 'the logged probabilities');

    // The one command, over the server's data dir.
    const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'scripts', 'jev.ts'), 'calibration', '--data', roost.dataDir], { timeout: 60_000 });
    assert.match(run.stdout, new RegExp(`counted ${cal.byOwner + cal.byHeader} \\(${cal.byOwner} by the owner's correction, ${cal.byHeader} by the author's header\\)`));
    assert.match(run.stdout, new RegExp(`kind \\(log\\): n ${cal.kind.n}, accuracy ${cal.kind.accuracy}, ECE ${cal.kind.ece}, Brier ${cal.kind.brier}`));
    assert.match(run.stdout, /\| predicted p \| n \| mean p \| observed \|/);
  });
});

describe('after a restart', () => {
  test('an ask whose approval was never asked gets one; an approved lift never carried out is; decisions work both ways', async () => {
    const dataDir = tempDir();
    const cfg = { models: null, flockVerdictWindowMs: 60_000 };
    const first = await inProcess(cfg, dataDir);
    // As if the node died right after each post, before its follow-ups: the events alone, straight into the log.
    const ts = flockTs(Date.now());
    const m = (n: number, rest: Rec) => ({ type: 'nest.message', nest_id: 'todo', msg_id: `todo-${n}`, to: '', refers_to: '', tagged_by: 'harness', ts, ...rest });
    await first.flock.append([
      m(1, { kind: 'ask_owner', author: 'Quill', text: 'Rotate the keys?', approval_phrase: 'Rotate', window_ms: 60_000 }),
      m(2, { kind: 'request', author: 'owner', to: 'Hugin', text: 'check it', mode: 'solo', mode_tagged_by: 'default' }),
      m(3, { kind: 'deliver', author: 'Hugin', text: 'checked', refers_to: 'todo-2' }),
      m(4, { kind: 'flag', author: 'Sentry', to: 'Hugin', text: 'answers_request 0.1', refers_to: 'todo-2' }),
      m(5, { kind: 'ask_owner', author: 'Sentry', to: 'owner', text: 'Lift Hugin?', approval_phrase: 'lift Hugin', refers_to: 'todo-4', window_ms: 60_000 }),
      m(6, { kind: 'say', author: 'owner', text: 'lift hugin', refers_to: 'todo-5' }),
    ]);
    let c = flockClient(first.url);
    assert.equal((await c.get('/approvals')).body.pending.length, 0);
    assert.equal((await c.post('/api/nests/todo/messages', { author: 'Hugin', text: 'hello?' })).status, 403);
    await first.close();

    const second = await inProcess(cfg, dataDir);
    try {
      c = flockClient(second.url);
      const pending = (await c.get('/approvals')).body.pending as Rec[];
      const ask = pending.find((a) => a.kind === 'ask' && a.scope.msg === 'todo-1');
      assert.ok(ask, 'the open ask has its approval now');
      assert.ok(!pending.some((a) => a.scope.msg === 'todo-5'), 'a decided ask is not asked');
      assert.equal((await c.post('/api/nests/todo/messages', { author: 'Hugin', text: 'hello again' })).status, 201, 'the approved lift was carried out');
      const nest = await nestStream(second.url, 'todo');
      try {
        assert.equal((await c.post(`/approvals/${ask.id}/decision`, { decision: 'allow', phrase: 'rotate' })).status, 200);
        const reply = await nest.next((r) => r.refers_to === 'todo-1' && r.author === 'owner');
        assert.equal(reply.text, 'Rotate');
        assert.equal(((await c.get('/api/nests/todo/messages')).body as Rec[]).find((r) => r.msg_id === 'todo-1')!.resolved, 'approved');
      } finally {
        nest.sse.close();
      }
    } finally {
      await second.close();
    }
  });
});
