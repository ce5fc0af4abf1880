// The one trust ledger in shared mode, over real HTTP and SSE with the
// scripted model stand-ins (issue 37 point 3, issue 36 point 14):
// - a verdict on a list you handed over earns nothing: one editor approving
//   its own list's 8 verdicts leaves the flock a stranger for `code`;
// - another member's verdicts earn it, and the ledger's history names who
//   earned each level;
// - every level change is announced as `trust.changed` on the stream of the
//   list whose verdict caused it, even when the verdicts come at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, sharedServer, stream, type Caller, type SharedServer } from './support/shared.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import type { SseReader } from './support/sse.js';
import { until } from './support/until.js';

let srv: SharedServer;
let model: FlockModel;
let bob: Caller;
let carl: Caller;

before(async () => {
  model = await flockModel('anthropic');
  srv = await sharedServer({ models: model.roster(), flockBanterWaitMs: 1000 });
  bob = await makeUser(srv, 'bob', 'default', 'editor');
  carl = await makeUser(srv, 'carl', 'default', 'editor');
});
after(async () => {
  await srv.close();
  await model.close();
});

const data = (f: { data: string }) => JSON.parse(f.data) as Record<string, any>;

async function handOver(who: Caller, items: string[]): Promise<{ list_id: string; w: SseReader }> {
  const r = await call(srv.url, who, 'POST', '/api/lists', { text: items.join('\n') });
  assert.equal(r.status, 202, JSON.stringify(r.json));
  const list_id = r.json.list_id as string;
  return { list_id, w: await stream(srv.url, who, `/api/events?list_id=${list_id}`) };
}

/** Decides every verdict of the list as `who`, one at a time, in the order they come; resolves when the list finished. */
async function decideAll(who: Caller, list_id: string, w: SseReader, n: number): Promise<void> {
  const done = new Set<string>();
  while (done.size < 2 * n) {
    const f = await w.waitFor((f) => {
      if (f.event !== 'item.triaged' && f.event !== 'item.answered') return false;
      const d = data(f);
      return d.needs_approval === true && !done.has(`${d.item_id}/${f.event}`);
    }, 30_000);
    const d = data(f);
    done.add(`${d.item_id}/${f.event}`);
    const target = f.event === 'item.triaged' ? 'triage' : 'output';
    const r = await call(srv.url, who, 'POST', '/api/verdicts', { item_id: d.item_id, target, approve: true });
    assert.equal(r.status, 204, JSON.stringify(r.json));
  }
  await w.waitFor((f) => f.event === 'list.finished', 30_000);
  void list_id;
}

test('a verdict on a list you handed over earns nothing: one editor approving its own 8 code items leaves the flock a stranger', async () => {
  const items = Array.from({ length: 8 }, (_, i) => `code fix number ${i + 1}`);
  const { list_id, w } = await handOver(bob, items);
  await decideAll(bob, list_id, w, 8);
  const ledger = (await call(srv.url, bob, 'GET', '/api/trust')).json;
  const levels = ledger.holders.filter((h: any) => h.task_type === 'code').map((h: any) => [h.holder, h.level]);
  assert.ok(
    levels.every(([, level]: [string, number]) => level === 0),
    `nobody earns from their own list's verdicts: ${JSON.stringify(levels)}`,
  );
  const flock = ledger.holders.find((h: any) => h.holder === 'flock' && h.task_type === 'code');
  assert.equal(flock?.level ?? 0, 0);
  assert.equal(flock?.run ?? 0, 0, 'no run either: the next approval starts from nothing');
  assert.deepEqual(ledger.history, []);
  // Every verdict is still in the stream, approved and by Bob: it is a decision, it just earns nothing.
  const verdicts = w.frames.filter((f) => f.event === 'verdict').map(data);
  assert.equal(verdicts.length, 16);
  assert.ok(verdicts.every((v) => v.verdict === 'approved' && v.by === 'Bob'));
  assert.equal(w.frames.filter((f) => f.event === 'trust.changed').length, 0);
  w.close();
});

test("another member's verdicts earn trust, the history names who earned it, and each change is announced on its list's stream", async () => {
  const items = Array.from({ length: 6 }, (_, i) => `research question ${i + 1}`);
  const { list_id, w } = await handOver(bob, items);
  // Carl approves every triage at once, as soon as they are all waiting.
  await until('six triaged', () => w.frames.filter((f) => f.event === 'item.triaged').length === 6, 30_000);
  const rs = await Promise.all(items.map((_, i) => call(srv.url, carl, 'POST', '/api/verdicts', { item_id: `${list_id}-${i + 1}`, target: 'triage', approve: true })));
  assert.deepEqual(rs.map((r) => r.status), [204, 204, 204, 204, 204, 204]);
  const ledger = (await call(srv.url, carl, 'GET', '/api/trust')).json;
  const flock = ledger.holders.find((h: any) => h.holder === 'flock' && h.task_type === 'research');
  assert.equal(flock.level, 2, 'six approvals in a row by another member: trusted');
  const changes = ledger.history.filter((c: any) => c.holder === 'flock' && c.task_type === 'research');
  assert.deepEqual(changes.map((c: any) => [c.from, c.to]), [[0, 1], [1, 2]]);
  for (const c of changes) {
    assert.equal(c.list_id, list_id);
    assert.deepEqual(c.because.map((b: any) => b.by), ['Carl', 'Carl', 'Carl'], 'owners see who earned each level');
  }
  // Every change is announced on the stream of the list whose verdict caused it.
  for (const c of changes) {
    await w.waitFor((f) => f.event === 'trust.changed' && data(f).holder === 'flock' && data(f).task_type === 'research' && data(f).from === c.from && data(f).to === c.to, 10_000);
  }
  const announced = w.frames.filter((f) => f.event === 'trust.changed').map(data);
  assert.equal(announced.length, 2, 'each change once');
  for (const a of announced) {
    assert.equal(a.list_id, list_id);
    assert.deepEqual(Object.keys(a).filter((k) => ['holder', 'task_type', 'from', 'to'].includes(k)).sort(), ['from', 'holder', 'task_type', 'to']);
  }
  w.close();
});

test('every level change is announced on its list\'s stream when many verdicts are decided at once in the inbox', async () => {
  // Nine planning items, their triage approvals decided in one burst through the inbox's decide path.
  const items = Array.from({ length: 9 }, (_, i) => `planning step ${i + 1}`);
  const { list_id, w } = await handOver(bob, items);
  await until('nine waiting', async () => {
    const r = await call(srv.url, carl, 'GET', '/approvals');
    return r.json.pending.filter((a: any) => a.kind === 'verdict' && a.scope.list === list_id).length === 9;
  }, 30_000);
  const pending = (await call(srv.url, carl, 'GET', '/approvals')).json.pending.filter((a: any) => a.kind === 'verdict' && a.scope.list === list_id);
  const rs = await Promise.all(pending.map((a: any) => call(srv.url, carl, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' })));
  assert.ok(rs.every((r) => r.status === 200), JSON.stringify(rs.map((r) => r.status)));
  await until('nine verdicts', () => w.frames.filter((f) => f.event === 'verdict').length >= 9, 30_000);
  const ledger = (await call(srv.url, carl, 'GET', '/api/trust')).json;
  const changes = ledger.history.filter((c: any) => c.holder === 'flock' && c.task_type === 'planning');
  assert.deepEqual(changes.map((c: any) => [c.from, c.to]), [[0, 1], [1, 2]], 'six approvals raise it twice; the rest find it trusted');
  for (const c of changes) {
    await w.waitFor((f) => f.event === 'trust.changed' && data(f).holder === 'flock' && data(f).task_type === 'planning' && data(f).from === c.from && data(f).to === c.to, 10_000);
  }
  assert.equal(w.frames.filter((f) => f.event === 'trust.changed').length, 2, 'each change once');
  w.close();
});
