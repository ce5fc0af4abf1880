// The flock's contract end to end (spec/flock-events.md) over real HTTP and
// SSE, against scripted Messages-API and OpenAI-compatible stand-ins
// (test/support/flock-model.ts): every event and status code, verdicts as
// approvals in the one inbox, the timeout, the prank and its 429, budgets,
// failing models, trust earned and demoted, Last-Event-ID replay.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { assertContractFrame, flockClient, type FlockClient } from './support/flock-client.js';
import { verdictApprovalId } from '../src/server/flock/service.js';
import type { Roost } from '../src/server/index.js';
import { NO_PROVIDER_MESSAGE } from '../src/models/config.js';

const CONTRACT = ['list.started', 'item.triaged', 'crow.flying', 'crow.landed', 'item.answered', 'verdict', 'trust.changed', 'item.skipped', 'requester.pranked', 'list.finished', 'crow.banter'];

async function server(model: FlockModel | null, extra: Record<string, unknown> = {}): Promise<{ roost: Roost; c: FlockClient }> {
  const roost = await inProcess({ models: model ? model.roster() : null, flockBanterWaitMs: 2000, ...extra });
  return { roost, c: flockClient(roost.url) };
}

describe('without a model', () => {
  let roost: Roost;
  let c: FlockClient;
  before(async () => ({ roost, c } = await server(null)));
  after(() => roost.close());

  test('POST /api/lists is 503 with a message naming the settings; the read routes answer', async () => {
    const r = await c.list('write the notes');
    assert.equal(r.status, 503);
    assert.equal(r.body.message, NO_PROVIDER_MESSAGE);
    assert.match(r.body.message, /--model/);
    assert.match(r.body.message, /ROOST_MODEL/);
    const personas = await c.get('/api/personas');
    assert.equal(personas.status, 200);
    assert.equal(personas.body.length, 12);
    for (const p of personas.body) assert.deepEqual(Object.keys(p).sort(), ['backstory', 'epithet', 'name', 'strength']);
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [] });
    const trust = await c.get('/api/trust');
    assert.equal(trust.body.protocol, 1);
    assert.deepEqual(trust.body.holders, []);
    assert.equal((await c.get('/api/nests')).body.nests[0].nest_id, 'todo');
  });
});

for (const kind of ['anthropic', 'openai'] as const) {
  describe(`a list end to end (${kind} stand-in)`, () => {
    let model: FlockModel;
    let roost: Roost;
    let c: FlockClient;
    before(async () => {
      model = await flockModel(kind);
      ({ roost, c } = await server(model));
    });
    after(async () => {
      await roost.close();
      await model.close();
    });

    test('solo: triage, approval, flight, answer, approval, finished; every frame is the contract', async () => {
      const list_id = await c.start('- [ ] write the release notes\n\n* review the ship checklist', 'ann');
      const w = await c.watch(list_id);
      const started = await w.next('list.started');
      assert.deepEqual(started.data.items, [
        { item_id: `${list_id}-1`, text: 'write the release notes' },
        { item_id: `${list_id}-2`, text: 'review the ship checklist' },
      ]);
      assert.equal(started.data.requester, 'ann');
      assert.equal(started.data.nest_id, 'todo');
      const item = `${list_id}-1`;
      await w.next('crow.flying', (d) => d.item_id === item && d.crow === 'Sentry');
      const triaged = await w.next('item.triaged', (d) => d.item_id === item);
      assert.equal(triaged.data.mode, 'solo');
      assert.equal(triaged.data.task_type, 'writing');
      assert.deepEqual(triaged.data.subtasks, []);
      assert.equal(triaged.data.needs_approval, true, 'a stranger flock asks');
      const sentry = await w.next('crow.landed', (d) => d.item_id === item && d.crow === 'Sentry');
      assert.equal(sentry.data.ok, true);
      assert.equal(sentry.data.tokens, 15, "the provider's own usage (10 in, 5 out)");
      // The pending verdict is an approval of kind verdict in the one inbox. It is asked once
      // the fold shows the item waiting, in an append of its own (as for the output below).
      const id = verdictApprovalId('default', item, 'triage');
      await until(async () => (await c.get(`/approvals/${id}`)).status === 200);
      const ap = await c.get(`/approvals/${id}`);
      assert.equal(ap.status, 200);
      assert.equal(ap.body.kind, 'verdict');
      assert.deepEqual(ap.body.scope, { list: list_id, item, target: 'triage' });
      assert.equal(ap.body.status, 'pending');
      // A bad body is 400; a missing approve is never a no.
      assert.equal((await c.post('/api/verdicts', { item_id: item, target: 'triage' })).status, 400);
      assert.equal((await c.post('/api/verdicts', { item_id: item, target: 'verdict', approve: true })).status, 400);
      assert.equal((await c.post('/api/verdicts', { item_id: item, target: 'triage', approve: 'yes' })).status, 400);
      assert.equal((await c.get(`/approvals/${id}`)).body.status, 'pending');
      // Nothing waits for the output yet, nor for an unknown item.
      assert.equal((await c.verdict(item, 'output', true)).status, 404);
      assert.equal((await c.verdict(`${list_id}-9`, 'triage', true)).status, 404);
      assert.equal((await c.verdict('nope-1', 'triage', true)).status, 404);
      const ok = await c.verdict(item, 'triage', true);
      assert.equal(ok.status, 204);
      assert.equal(ok.body, null);
      const v = await w.next('verdict', (d) => d.item_id === item && d.target === 'triage');
      assert.equal(v.data.verdict, 'approved');
      assert.equal(v.data.by, 'local owner');
      assert.equal((await c.verdict(item, 'triage', true)).status, 404, 'a second answer');
      assert.equal((await c.verdict(item, 'triage', false)).status, 404, 'a second answer, the other way');
      const decided = (await c.get(`/approvals/${id}`)).body;
      assert.equal(decided.status, 'allowed');
      assert.equal(decided.decidedBy, 'local owner');
      const flying = await w.next('crow.flying', (d) => d.item_id === item && d.crow !== 'Sentry');
      assert.equal(flying.data.borrowed, false);
      const landed = await w.next('crow.landed', (d) => d.item_id === item && d.crow === flying.data.crow);
      assert.equal(landed.data.ok, true);
      const answered = await w.next('item.answered', (d) => d.item_id === item);
      assert.equal(answered.data.answer, `${flying.data.crow} did: write the release notes`);
      assert.deepEqual(answered.data.crows, [flying.data.crow]);
      assert.equal(answered.data.needs_approval, true);
      // The output is decided in the inbox this time: POST /approvals/:id/decision.
      const outId = verdictApprovalId('default', item, 'output');
      await until(async () => (await c.get(`/approvals/${outId}`)).status === 200);
      const d = await c.post(`/approvals/${outId}/decision`, { decision: 'allow', by: 'Bea' });
      assert.equal(d.status, 200);
      const ov = await w.next('verdict', (x) => x.item_id === item && x.target === 'output');
      assert.equal(ov.data.verdict, 'approved');
      assert.equal(ov.data.by, 'Bea');
      assert.equal((await c.verdict(item, 'output', false)).status, 404, 'first decision wins');
      // Item 2: rejected triage skips it.
      const item2 = `${list_id}-2`;
      await w.next('item.triaged', (x) => x.item_id === item2);
      assert.equal((await c.verdict(item2, 'triage', false)).status, 204);
      assert.equal((await w.next('verdict', (x) => x.item_id === item2)).data.verdict, 'rejected');
      assert.equal((await w.next('item.skipped', (x) => x.item_id === item2)).data.reason, 'rejected');
      const fin = await w.next('list.finished');
      assert.equal(fin.data.token_budget, 200_000);
      assert.ok(fin.data.tokens_used >= 45, `tokens_used ${fin.data.tokens_used}`);
      const all = w.events();
      for (const e of all) {
        assert.ok(CONTRACT.includes(e.event), `only contract events: ${e.event}`);
        assertContractFrame(e, list_id);
      }
      // tokens_used is every landing's and banter's tokens.
      const landings = all.filter((e) => e.event === 'crow.landed').reduce((n, e) => n + e.data.tokens, 0);
      const banter = all.filter((e) => e.event === 'crow.banter').reduce((n, e) => n + (e.data.tokens ?? 0), 0);
      assert.ok(fin.data.tokens_used >= landings + banter);
      // Exactly one verdict per target that arose.
      const verdicts = all.filter((e) => e.event === 'verdict').map((e) => `${e.data.item_id}/${e.data.target}`);
      assert.deepEqual(verdicts.sort(), [`${item}/output`, `${item}/triage`, `${item2}/triage`].sort());
      w.close();
    });

    test('split and murder: one crow per subtask; three crows merged by the Elder', async () => {
      const list_id = await c.start('split the launch plan\nmurder a tagline for the launch');
      const w = await c.watch(list_id);
      const [split, murder] = [`${list_id}-1`, `${list_id}-2`];
      const t1 = await w.next('item.triaged', (d) => d.item_id === split);
      assert.equal(t1.data.mode, 'split');
      assert.deepEqual(t1.data.subtasks, ['first half', 'second half']);
      await w.next('item.triaged', (d) => d.item_id === murder);
      assert.equal((await c.verdict(split, 'triage', true)).status, 204);
      assert.equal((await c.verdict(murder, 'triage', true)).status, 204);
      const a1 = await w.next('item.answered', (d) => d.item_id === split);
      const splitFlights = w.events().filter((e) => e.event === 'crow.flying' && e.data.item_id === split && e.data.crow !== 'Sentry');
      assert.deepEqual(splitFlights.map((e) => e.data.subtask).sort(), [1, 2]);
      assert.equal(new Set(splitFlights.map((e) => e.data.crow)).size, 2);
      assert.match(a1.data.answer, /^1\. first half\n.*\(1\)\n\n2\. second half\n.*\(2\)$/s);
      const a2 = await w.next('item.answered', (d) => d.item_id === murder);
      const murderFlights = w.events().filter((e) => e.event === 'crow.flying' && e.data.item_id === murder);
      const crows = murderFlights.map((e) => e.data.crow).filter((x) => x !== 'Sentry' && x !== 'Elder');
      assert.equal(crows.length, 3, 'MurderSize crows');
      assert.ok(murderFlights.some((e) => e.data.crow === 'Elder'), 'the Elder flew');
      assert.ok(w.events().some((e) => e.event === 'crow.landed' && e.data.item_id === murder && e.data.crow === 'Elder' && e.data.ok));
      assert.match(a2.data.answer, /^merged: /);
      assert.deepEqual([...a2.data.crows].sort(), [...crows].sort());
      assert.equal((await c.verdict(split, 'output', true)).status, 204);
      assert.equal((await c.verdict(murder, 'output', false)).status, 204);
      const fin = await w.next('list.finished');
      // Banter: in character, between two crows, at most two per list, counted in the budget.
      const banter = w.events().filter((e) => e.event === 'crow.banter');
      assert.ok(banter.length >= 1 && banter.length <= 2, `banter lines: ${banter.length}`);
      for (const b of banter) {
        assert.notEqual(b.data.crow, b.data.to);
        assert.match(b.data.text, /^\S.{0,299}$/);
        assert.match(b.data.item_id, new RegExp(`^${list_id}-[12]$`));
      }
      const landed = w.events().filter((e) => e.event === 'crow.landed').reduce((n, e) => n + e.data.tokens, 0);
      assert.equal(fin.data.tokens_used, landed + banter.reduce((n, e) => n + e.data.tokens, 0));
      w.close();
    });

    test("GET /usage: every call's provider usage, on the crow that made it (team the nest), equals the stand-in's to the token", async () => {
      // Both lists above finished; each of the stand-in's replies reports 10 in, 5 out.
      const calls = model.asks().length;
      type Agent = { id: string; team: string; own: { input: number; output: number; requests: number; costMicros: number } };
      let u: { agents: Agent[]; teams: [string, { input: number }][]; project: { input: number; output: number; requests: number } } = { agents: [], teams: [], project: { input: 0, output: 0, requests: 0 } };
      await until(async () => {
        u = (await c.get('/usage')).body.state;
        return u.project.requests === calls;
      });
      assert.equal(u.project.input, calls * 10);
      assert.equal(u.project.output, calls * 5);
      const todo = (await c.get('/api/nests')).body.nests.find((n: { nest_id: string }) => n.nest_id === 'todo');
      // Each crow's floor agent (flock:<crow>) in its nest's room (src/server/flock/floor.ts).
      const crows = new Set(['Sentry', 'Elder', ...(await c.get('/api/personas')).body.map((p: { name: string }) => p.name)].map((n) => `flock:${n}`));
      const room = `flock · ${todo.name}`;
      assert.ok(u.agents.some((a) => a.id === 'flock:Sentry'));
      for (const a of u.agents) {
        assert.ok(crows.has(a.id), `a crow: ${a.id}`);
        assert.equal(a.team, room);
        assert.equal(a.own.input, a.own.requests * 10);
        assert.equal(a.own.output, a.own.requests * 5);
      }
      assert.deepEqual(u.teams.map(([t]) => t), [room]);
    });
  });
}

describe('banter that fails never blocks', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    model = await flockModel('openai', { banter: '' });
    ({ roost, c } = await server(model));
  });
  after(async () => {
    await roost.close();
    await model.close();
  });

  test('an unusable line is dropped (its tokens still count), and the list finishes', async () => {
    const list_id = await c.start('murder a slogan');
    const w = await c.watch(list_id);
    await w.next('item.triaged');
    assert.equal((await c.verdict(`${list_id}-1`, 'triage', true)).status, 204);
    await w.next('item.answered');
    assert.equal((await c.verdict(`${list_id}-1`, 'output', true)).status, 204);
    const fin = await w.next('list.finished');
    assert.ok(!w.events().some((e) => e.event === 'crow.banter'));
    const landed = w.events().filter((e) => e.event === 'crow.landed').reduce((n, e) => n + e.data.tokens, 0);
    assert.equal(fin.data.tokens_used, landed + 15, 'the dropped line cost its call');
    // The whole flock is a scope on /live too.
    const r = await fetch(`${roost.url}/live?s=flock:default`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    assert.equal(r?.status, 200);
    w.close();
  });
});

describe('failures, budgets, pranks, trust, replay', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    model = await flockModel('anthropic');
    ({ roost, c } = await server(model, { flockVerdictWindowMs: 1500 }));
  });
  after(async () => {
    await roost.close();
    await model.close();
  });

  test('bad lists are 400 (with a strike), an unknown nest 404, a missing requester 400', async () => {
    assert.equal((await c.list('   \n\n  ', 'zed')).status, 400);
    assert.equal((await c.list('write it', 'zed', { nest_id: 'nowhere' })).status, 404);
    const r = await c.post('/api/lists', { text: 'write it' });
    assert.equal(r.status, 400);
    assert.match(r.body.message, /requester/);
    assert.equal((await c.post('/api/lists', { requester: 'zed' })).status, 400);
    assert.equal((await c.list('write it', 'zed', { token_budget: 5 })).status, 400);
  });

  test('a failing model: the call is retried, lands ok:false with the error, and the item is skipped (failure)', async () => {
    const list_id = await c.start('sentryfail writing\ncrowfail writing');
    const w = await c.watch(list_id);
    const s = await w.next('crow.landed', (d) => d.item_id === `${list_id}-1`);
    assert.equal(s.data.crow, 'Sentry');
    assert.equal(s.data.ok, false);
    assert.match(s.data.error, /unavailable/);
    assert.equal((await w.next('item.skipped', (d) => d.item_id === `${list_id}-1`)).data.reason, 'failure');
    await w.next('item.triaged', (d) => d.item_id === `${list_id}-2`);
    assert.equal((await c.verdict(`${list_id}-2`, 'triage', true)).status, 204);
    const l = await w.next('crow.landed', (d) => d.item_id === `${list_id}-2` && d.crow !== 'Sentry');
    assert.equal(l.data.ok, false);
    assert.match(l.data.error, /500|unavailable/);
    assert.equal((await w.next('item.skipped', (d) => d.item_id === `${list_id}-2`)).data.reason, 'failure');
    await w.next('list.finished');
    // Two tries each (the test's retry policy): nothing hangs.
    assert.equal(model.asks().filter((a) => a.user.includes('crowfail') && a.tool === null).length, 2);
    w.close();
  });

  test('the verdict window: unanswered, it is a timeout, which counts as rejected', async () => {
    const list_id = await c.start('write a haiku about timeouts');
    const w = await c.watch(list_id);
    const v = await w.next('verdict', () => true, 8000);
    assert.equal(v.data.verdict, 'timeout');
    assert.equal(v.data.target, 'triage');
    assert.equal((await w.next('item.skipped')).data.reason, 'rejected');
    await w.next('list.finished');
    assert.equal((await c.get(`/approvals/${verdictApprovalId('default', `${list_id}-1`, 'triage')}`)).body.status, 'expired');
    assert.equal((await c.verdict(`${list_id}-1`, 'triage', true)).status, 404);
    w.close();
  });

  test('a budget: an item whose next call would pass it is skipped (budget); list.finished reports both figures', async () => {
    const list_id = await c.start('write the budget note', 'bud', { token_budget: 1000 });
    const w = await c.watch(list_id);
    assert.equal((await w.next('list.started')).data.token_budget, 1000);
    await w.next('item.triaged');
    assert.equal((await c.verdict(`${list_id}-1`, 'triage', true)).status, 204);
    assert.equal((await w.next('item.skipped')).data.reason, 'budget');
    const fin = await w.next('list.finished');
    assert.deepEqual([fin.data.tokens_used, fin.data.token_budget], [15, 1000]);
    assert.ok(!w.events().some((e) => e.event === 'crow.flying' && e.data.crow !== 'Sentry'), 'no worker flew');
    w.close();
  });

  test('pranks: the sixth list in a minute is 429; the third strike starts a cooldown, pranks the flying list, and 429s new lists', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await c.list(`write note ${i}`, 'rapid')).status, 202);
    const sixth = await c.list('write note 6', 'rapid');
    assert.equal(sixth.status, 429);
    assert.equal(typeof sixth.body.message, 'string');
    assert.ok(sixth.body.cooldown_s > 0);

    const flying = await c.start('write something real', 'pat');
    const w = await c.watch(flying);
    assert.equal((await c.list('', 'pat')).status, 400);
    assert.equal((await c.list('- \n* \n', 'pat')).status, 400);
    const third = await c.list('!!! ???', 'pat');
    assert.equal(third.status, 429);
    assert.equal(third.body.cooldown_s, 60);
    assert.equal(typeof third.body.message, 'string');
    const p = await w.next('requester.pranked');
    assert.equal(p.data.cooldown_s, 60);
    assert.equal(typeof p.data.message, 'string');
    const later = await c.list('write a proper list', 'pat');
    assert.equal(later.status, 429);
    assert.ok(later.body.cooldown_s > 0 && later.body.cooldown_s <= 60);
    assert.deepEqual(Object.keys(later.body).sort(), ['cooldown_s', 'message']);
    w.close();
  });

  test('trust is earned by approved triage (3 in a row per level), then triage is auto; an owner demotes with a reason', async () => {
    const list_id = await c.start(['plan a', 'plan b', 'plan c', 'plan d', 'plan e', 'plan f'].map((x) => `${x} planning`).join('\n'), 'tess');
    const w = await c.watch(list_id);
    for (let n = 1; n <= 6; n++) {
      await w.next('item.triaged', (d) => d.item_id === `${list_id}-${n}`);
      assert.equal((await c.verdict(`${list_id}-${n}`, 'triage', true)).status, 204);
      await w.next('verdict', (d) => d.item_id === `${list_id}-${n}` && d.target === 'triage');
    }
    const ups = w.events().filter((e) => e.event === 'trust.changed');
    assert.deepEqual(
      ups.map((e) => [e.data.holder, e.data.task_type, e.data.from, e.data.to]),
      [
        ['flock', 'planning', 0, 1],
        ['flock', 'planning', 1, 2],
      ],
    );
    assert.deepEqual(
      ups[0].data.because.map((b: any) => b.item_id),
      [1, 2, 3].map((n) => `${list_id}-${n}`),
    );
    // Trusted now: the next planning item's triage skips the approval (verdict auto).
    const next = await c.start('plan g planning', 'tess');
    const w2 = await c.watch(next);
    const t7 = await w2.next('item.triaged');
    assert.equal(t7.data.needs_approval, false);
    assert.equal((await w2.next('verdict', (d) => d.target === 'triage')).data.verdict, 'auto');
    assert.equal((await c.verdict(`${next}-1`, 'triage', true)).status, 404, 'nothing waits for an auto verdict');
    w2.close();
    const ledger = (await c.get('/api/trust')).body;
    const flock = ledger.holders.find((h: any) => h.holder === 'flock' && h.task_type === 'planning');
    assert.equal(flock.level, 2);
    assert.equal(flock.level_name, 'trusted');
    // The owner demotes, with a reason: logged in the ledger's history.
    assert.equal((await c.post('/api/trust', { holder: 'flock', task_type: 'planning', action: 'demote' })).status, 400, 'a reason is required');
    assert.equal((await c.post('/api/trust', { holder: 'Nobody', task_type: 'planning', action: 'demote', reason: 'x' })).status, 404);
    const d = await c.post('/api/trust', { holder: 'flock', task_type: 'planning', action: 'reset', reason: 'too eager' });
    assert.equal(d.status, 200);
    assert.deepEqual([d.body.from, d.body.to], [2, 0]);
    const last = (await c.get('/api/trust')).body.history.at(-1);
    assert.equal(last.reason, 'too eager');
    assert.equal(last.by, 'local owner');
    assert.equal(last.to, 0);
    assert.equal((await c.post('/api/trust', { holder: 'flock', task_type: 'planning', action: 'demote', reason: 'again' })).status, 409);
    w.close();
  });

  test('Last-Event-ID: a reader that reconnects gets exactly what it missed', async () => {
    const list_id = await c.start('write line one\nwrite line two', 'rita');
    const w = await c.watch(list_id);
    await w.next('item.triaged', (d) => d.item_id === `${list_id}-2`);
    await w.next('crow.landed', (d) => d.item_id === `${list_id}-2`);
    await w.next('crow.landed', (d) => d.item_id === `${list_id}-1`);
    // Both items now wait for their triage verdicts: what comes next comes live,
    // whatever the first frame (the list so far, every event in it with one id) held.
    assert.equal((await c.verdict(`${list_id}-1`, 'triage', false)).status, 204);
    await w.next('item.skipped', (d) => d.item_id === `${list_id}-1`);
    const seen = w.events();
    // The cut: the first event that came live.
    const cut = seen.findIndex((e) => e.id !== seen[0].id);
    assert.ok(cut >= 0 && cut < seen.length - 1, `some events came live: ${seen.map((e) => e.id).join(' ')}`);
    const resumeFrom = seen[cut].id;
    w.close();
    // Things happen while nobody listens.
    assert.equal((await c.verdict(`${list_id}-2`, 'triage', false)).status, 204);
    const full = await c.watch(list_id);
    const fin = await full.next('list.finished');
    // A reader with no cursor gets the list from its start (all with the position folded then, or later ones).
    const all = full.events();
    full.close();
    const again = await c.watch(list_id, resumeFrom);
    await again.next('list.finished');
    const replayed = again.events();
    again.close();
    // The resumed reader got every event after its cursor, in order, and none before it.
    const positions = (xs: { id: string }[]) => xs.map((e) => Number(e.id.split(':')[1]));
    const cursor = Number(resumeFrom.split(':')[1]);
    assert.ok(positions(replayed).every((p) => p > cursor));
    const afterCut = seen.slice(cut + 1).map((e) => `${e.event}/${e.data.item_id ?? ''}/${e.data.crow ?? ''}`);
    assert.deepEqual(
      replayed.slice(0, afterCut.length).map((e) => `${e.event}/${e.data.item_id ?? ''}/${e.data.crow ?? ''}`),
      afterCut,
    );
    assert.equal(replayed.at(-1)!.event, 'list.finished');
    assert.equal(replayed.at(-1)!.id, fin.id);
    assert.deepEqual(
      all.map((e) => e.event),
      [...seen.slice(0, cut + 1), ...replayed].map((e) => e.event),
    );
  });

  test('the heartbeat: a comment line on the stream (15 s by default)', async () => {
    const { roost: r2, c: c2 } = await server(model, { heartbeatMs: 200 });
    try {
      const list_id = await c2.start('write the heartbeat note', 'hb');
      const w = await c2.watch(list_id);
      await until(async () => w.sse.comments >= 2, 3000);
      w.close();
    } finally {
      await r2.close();
    }
  });
});

async function until(f: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await f()) return;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the lease', () => {
  test('an idle flock writes nothing: the lease is taken while there is work and lapses after', async () => {
    const model = await flockModel('anthropic');
    const { roost, c } = await server(model, { flockLeaseMs: 1000 });
    try {
      const head = () => roost.store.head(roost.flock.stream);
      assert.equal(await head(), 0, 'nothing written at start');
      const list_id = await c.start('write the lease note', 'lee');
      const w = await c.watch(list_id);
      await w.next('item.triaged');
      assert.equal(roost.flock.driving, true);
      // Work waits on a person: the holder renews meanwhile.
      const before = await head();
      await new Promise((r) => setTimeout(r, 800));
      assert.ok((await head()) > before, 'renewed while a list is unfinished');
      assert.equal((await c.verdict(`${list_id}-1`, 'triage', false)).status, 204);
      await w.next('list.finished');
      w.close();
      await new Promise((r) => setTimeout(r, 1200));
      assert.equal(roost.flock.driving, false, 'lapsed');
      const idle = await head();
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(await head(), idle, 'idle: nothing written');
      // New work takes it again.
      const next = await c.start('write another lease note', 'lee');
      const w2 = await c.watch(next);
      await w2.next('item.triaged');
      assert.equal(roost.flock.driving, true);
      w2.close();
    } finally {
      await roost.close();
      await model.close();
    }
  });
});
