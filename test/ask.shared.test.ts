// `POST /ask` in shared mode (issue 37, point 4), over real HTTP with an
// owner, two editors, a viewer and an outsider: the asker of a question is
// the principal from the transport (never the body's agent, name or team), a
// principal cannot decide its own question (403, and it stays pending), the
// person the asking token acts for can, and one asker's pending questions are
// capped with a 429 that says so.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, headersOf, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';
import { until } from './support/until.js';
import { MAX_PENDING_ASKS } from '../src/server/ask.js';

/** Starts a question (it waits for the answer); `done` resolves with the answer, `stop` hangs up. */
function ask(url: string, who: Caller, body: Record<string, unknown>): { done: Promise<{ status: number; json: any }>; stop: () => void } {
  const ac = new AbortController();
  const done = fetch(url + '/ask', {
    method: 'POST',
    headers: { ...headersOf(who, url, 'POST'), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: ac.signal,
  }).then(
    async (r) => ({ status: r.status, json: await r.json().catch(() => null) }),
    () => ({ status: 0, json: null }),
  );
  return { done, stop: () => ac.abort() };
}

async function pending(url: string, who: Caller): Promise<any[]> {
  const r = await call(url, who, 'GET', '/approvals');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.pending;
}

describe('POST /ask in shared mode: who asks, who may answer', () => {
  let srv: SharedServer;
  let bob: Caller, cat: Caller, dan: Caller, eve: Caller;
  let bobToken: Caller, catToken: Caller, danToken: Caller;
  const open: (() => void)[] = [];

  before(async () => {
    srv = await sharedServer();
    bob = await makeUser(srv, 'bob', 'default', 'editor');
    cat = await makeUser(srv, 'cat', 'default', 'editor');
    dan = await makeUser(srv, 'dan', 'default', 'viewer');
    eve = await makeUser(srv, 'eve', null);
    bobToken = await mintToken(srv, bob, 'default', 'editor', 'bob laptop hook');
    catToken = await mintToken(srv, cat, 'default', 'editor', 'cat hook');
    danToken = await mintToken(srv, dan, 'default', 'viewer', 'dan');
  });
  after(async () => {
    for (const stop of open) stop();
    // The questions hung up are withdrawn before the server closes.
    await until('every question withdrawn', async () => (await pending(srv.url, srv.owner)).length === 0, 10_000);
    await srv.close();
  });

  test('the asker is the token that asked, whatever the body names; the token cannot answer itself, its person can', async () => {
    // The body claims to be the owner's agent, on the owner's team.
    const q = ask(srv.url, bobToken, { question: 'May I drop the prod table?', agent: 'claude-code:owner-session', name: 'Ann', team: 'Owners' });
    open.push(q.stop);
    const a = await until('the question pending', async () => (await pending(srv.url, srv.owner)).find((x) => x.tool === 'ask_person'), 10_000);
    assert.notEqual(a.askerName, 'Ann', 'the inbox does not show the name the body gave');
    assert.match(a.askerName, /^Bob\b/, `the inbox shows the person whose token asked: ${a.askerName}`);
    assert.equal(a.team, '', 'the team is not taken from the body');
    assert.notEqual(a.asker, 'claude-code:owner-session');

    // The same token decides its own question: refused, and it stays pending.
    const self = await call(srv.url, bobToken, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' });
    assert.equal(self.status, 403, JSON.stringify(self.json));
    assert.match(self.json.message, /cannot (answer|decide) its own/);
    assert.ok((await pending(srv.url, srv.owner)).some((x) => x.id === a.id), 'still pending after the refused self-decision');

    // A viewer cannot decide; an outsider cannot even see it.
    assert.equal((await call(srv.url, dan, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' })).status, 403);
    assert.equal((await call(srv.url, eve, 'GET', '/approvals')).status, 403);

    // Bob himself (signed in, a person) decides for his agent: the answer is yes.
    const yes = await call(srv.url, bob, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' });
    assert.equal(yes.status, 200, JSON.stringify(yes.json));
    const answer = await q.done;
    assert.equal(answer.status, 200);
    assert.equal(answer.json.answer, 'yes');
    assert.equal(answer.json.by, 'Bob');
  });

  test('another editor\'s token may answer; a viewer or an outsider cannot ask', async () => {
    const q = ask(srv.url, catToken, { question: 'Rebase?', agent: 'cat-agent' });
    open.push(q.stop);
    const a = await until('cat’s question pending', async () => (await pending(srv.url, srv.owner)).find((x) => x.input === 'Rebase?'), 10_000);
    assert.match(a.askerName, /^Cat\b/);
    const no = await call(srv.url, bobToken, 'POST', `/approvals/${a.id}/decision`, { decision: 'deny', reason: 'not now' });
    assert.equal(no.status, 200, JSON.stringify(no.json));
    assert.equal((await q.done).json.answer, 'no');

    assert.equal((await call(srv.url, danToken, 'POST', '/ask', { question: 'x', agent: 'a' })).status, 403);
    assert.equal((await call(srv.url, eve, 'POST', '/ask', { question: 'x', agent: 'a' })).status, 403);
  });

  test(`one asker has at most ${MAX_PENDING_ASKS} questions pending: the next is a 429 that says so; others still ask`, async () => {
    const mine: ReturnType<typeof ask>[] = [];
    for (let i = 0; i < MAX_PENDING_ASKS; i++) {
      const q = ask(srv.url, bobToken, { question: `flood ${i}`, agent: `flood-${i}`, window: 24 * 60 * 60 * 1000 });
      open.push(q.stop);
      mine.push(q);
    }
    await until('all of them pending', async () => (await pending(srv.url, srv.owner)).filter((x) => x.input.startsWith('flood ')).length === MAX_PENDING_ASKS, 15_000);
    // More at once, as a flood sends them: each refused, none pending.
    const extra = await Promise.all([0, 1, 2, 3, 4].map((i) => call(srv.url, bobToken, 'POST', '/ask', { question: `flood extra ${i}`, agent: `x-${i}` })));
    for (const r of extra) {
      assert.equal(r.status, 429, JSON.stringify(r.json));
      assert.match(r.json.message, new RegExp(`${MAX_PENDING_ASKS} questions`));
    }
    assert.equal((await pending(srv.url, srv.owner)).filter((x) => x.input.startsWith('flood ')).length, MAX_PENDING_ASKS);

    // Another principal is not held up by Bob's token.
    const other = ask(srv.url, catToken, { question: 'Still me?', agent: 'cat-agent' });
    open.push(other.stop);
    await until('cat still asks', async () => (await pending(srv.url, srv.owner)).find((x) => x.input === 'Still me?'), 10_000);

    // One answered frees one place.
    const first = (await pending(srv.url, srv.owner)).find((x) => x.input === 'flood 0');
    assert.equal((await call(srv.url, srv.owner, 'POST', `/approvals/${first.id}/decision`, { decision: 'deny' })).status, 200);
    await mine[0].done;
    const again = ask(srv.url, bobToken, { question: 'flood again', agent: 'flood-again' });
    open.push(again.stop);
    await until('a place again', async () => (await pending(srv.url, srv.owner)).find((x) => x.input === 'flood again'), 10_000);
  });
});

test('the fold: a stored decision by the principal that asked is not an answer', async () => {
  const { applyApproval, emptyApprovals } = await import('../src/core/approvals.js');
  const s = emptyApprovals();
  applyApproval(s, { type: 'approval.requested', id: 'q1', kind: 'tool', asker: 'token:t1', tool: 'ask_person', askedBy: 'token:t1', window: 60_000, ts: 1 });
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'q1', decision: 'allow', by: 'Bob', principal: 'token:t1', ts: 2 }), []);
  assert.equal(s.byId.get('q1')!.status, 'pending');
  applyApproval(s, { type: 'approval.decided', id: 'q1', decision: 'allow', by: 'Bob', principal: 'person:u1', ts: 3 });
  assert.equal(s.byId.get('q1')!.status, 'allowed');
});
