// An agent's history from the log over HTTP (GET /floor/timeline): newest
// first, statuses, tools, messages both ways and approvals with their
// deciders; paged by a cursor without a gap or a repeat; searched by plain
// words (a regex is just text); pages capped; 404 for an agent not on the
// floor (`__proto__` included); viewers of the project only. And the pulse
// (GET /floor/pulse): events per minute per team.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess, post } from './support/server.js';
import { until } from './support/until.js';
import { pendingOf, decide } from './support/approvals-http.js';
import { ANON, call, makeUser, sharedServer } from './support/shared.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197/09-PreToolUse-Bash.json'), 'utf8'));

const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, json: await r.json() };
};

test('an agent timeline: newest first, every kind of item, paging without gaps or repeats, search, caps, 404s', async () => {
  const roost = await inProcess();
  try {
    const u = roost.url;
    await post(u, [
      { type: 'join', agent: { id: 'ada', name: 'Ada', role: 'lead' }, team: 'Payments', status: 'thinking', activity: 'Planning refunds' },
      { type: 'join', agent: { id: 'otto', name: 'Otto' }, team: 'Payments', parent: 'ada', status: 'working' },
    ]);
    // 120 events about Ada, with noise about Otto in between.
    const batch: Record<string, unknown>[] = [];
    for (let i = 0; i < 120; i++) {
      batch.push({ type: 'tool', agent: 'ada', tool: i % 2 ? 'Bash' : 'Read', activity: `step ${i}` });
      batch.push({ type: 'status', agent: 'otto', activity: `otto ${i}` });
    }
    await post(u, batch.slice(0, 200));
    await post(u, batch.slice(200));
    await post(u, { type: 'message', agent: 'otto', to: 'ada', text: 'Refunds are green' });
    await post(u, { type: 'message', agent: 'ada', to: 'otto', text: 'Ship it' });
    await post(u, { type: 'status', agent: 'ada', status: 'done', activity: 'Shipped' });

    const first = await get(`${u}/floor/timeline?agent=ada&limit=10`);
    assert.equal(first.status, 200);
    assert.equal(first.json.agent, 'ada');
    assert.equal(first.json.items.length, 10);
    const [done, sent, heard] = first.json.items;
    assert.deepEqual([done.kind, done.status, done.activity], ['status', 'done', 'Shipped']);
    assert.deepEqual([sent.kind, sent.to, sent.text], ['message', ['otto'], 'Ship it']);
    assert.deepEqual([heard.kind, heard.from, heard.text], ['heard', 'otto', 'Refunds are green']);
    assert.deepEqual([first.json.items[3].kind, first.json.items[3].tool, first.json.items[3].activity], ['tool', 'Bash', 'step 119']);
    for (const it of first.json.items) assert.ok(typeof it.at === 'number' && it.at > 0, 'every item has its time');
    assert.ok(!first.json.items.some((i: any) => /otto \d/.test(i.activity ?? '')), 'nothing of Otto\'s own');

    // Page through all of it: every item once, newest first, the join last.
    const seen: any[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const p = await get(`${u}/floor/timeline?agent=ada&limit=25${next ? `&before=${next}` : ''}`);
      assert.equal(p.status, 200);
      seen.push(...p.json.items);
      next = p.json.next;
      assert.ok(++pages < 20);
    } while (next);
    assert.equal(seen.length, 124, '1 join, 120 tools, 2 messages and the last status');
    assert.equal(new Set(seen.map((i) => i.key)).size, seen.length, 'no item twice');
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i - 1].at >= seen[i].at, 'newest first');
    assert.deepEqual([seen.at(-1).kind, seen.at(-1).team, seen.at(-1).activity], ['join', 'Payments', 'Planning refunds']);

    // Search: plain words, case-insensitive; a pattern is only text.
    const s = await get(`${u}/floor/timeline?agent=ada&q=STEP%2011`);
    assert.deepEqual(s.json.items.map((i: any) => i.activity), ['step 119', 'step 118', 'step 117', 'step 116', 'step 115', 'step 114', 'step 113', 'step 112', 'step 111', 'step 110', 'step 11']);
    assert.equal((await get(`${u}/floor/timeline?agent=ada&q=${encodeURIComponent('step.*9')}`)).json.items.length, 0);
    assert.equal((await get(`${u}/floor/timeline?agent=ada&q=green`)).json.items[0].kind, 'heard');

    // Caps and refusals.
    assert.equal((await get(`${u}/floor/timeline?agent=ada&limit=100000`)).json.items.length, 124, 'a page is capped at 200, here everything');
    assert.equal((await get(`${u}/floor/timeline?agent=ada&limit=-1`)).status, 400);
    assert.equal((await get(`${u}/floor/timeline?agent=ada&before=abc`)).status, 400);
    assert.equal((await get(`${u}/floor/timeline?agent=ada&q=${'x'.repeat(201)}`)).status, 400);
    assert.equal((await get(`${u}/floor/timeline`)).status, 400);
    for (const id of ['nobody', '__proto__', 'constructor', 'hasOwnProperty']) {
      const r = await get(`${u}/floor/timeline?agent=${id}`);
      assert.equal(r.status, 404, id);
      assert.equal(r.json.kind, 'not_found');
    }
  } finally {
    await roost.close();
  }
});

test('an approval in the timeline: what was asked, and who decided', async () => {
  const roost = await inProcess();
  try {
    const held = fetch(`${roost.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1&team=Shop`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(PRE_BASH) });
    const [p] = await until('the held call pending', async () => {
      const l = await pendingOf(roost.url);
      return l.length ? l : undefined;
    }, 10_000);
    const pending = await get(`${roost.url}/floor/timeline?agent=${encodeURIComponent(p.asker)}`);
    const asked = pending.json.items.find((i: any) => i.kind === 'approval');
    assert.deepEqual([asked.approval.tool, asked.approval.input, asked.approval.outcome], ['Bash', '$ exit 3', 'pending']);
    assert.equal((await decide(roost.url, p.id, 'deny', 'alice')).status, 200);
    await held;
    const after = await get(`${roost.url}/floor/timeline?agent=${encodeURIComponent(p.asker)}&q=alice`);
    const decided = after.json.items.find((i: any) => i.kind === 'approval');
    assert.ok(decided, 'the search finds the decider');
    assert.deepEqual([decided.approval.outcome, decided.approval.by], ['denied', 'alice']);
    assert.ok(decided.approval.decidedAt > 0);
    assert.ok(after.json.items.every((i: any) => JSON.stringify(i).toLowerCase().includes('alice')));
    // The floor's side of the same story is there too: waiting, then denied.
    const all = (await get(`${roost.url}/floor/timeline?agent=${encodeURIComponent(p.asker)}`)).json.items;
    assert.ok(all.some((i: any) => i.status === 'waiting'));
  } finally {
    await roost.close();
  }
});

test('the pulse counts events per minute per team, the last hour', async () => {
  const roost = await inProcess();
  try {
    await post(roost.url, [
      { type: 'join', agent: 'a1', team: 'Alpha' },
      { type: 'tool', agent: 'a1', tool: 'Read' },
      { type: 'tool', agent: 'a1', tool: 'Edit' },
      { type: 'join', agent: 'b1', team: { id: 'beta', name: 'Beta' } },
    ]);
    const r = await until('the pulse counted', async () => {
      const p = await get(`${roost.url}/floor/pulse`);
      return p.json.teams.length === 2 ? p : undefined;
    }, 10_000);
    assert.equal(r.json.minutes, 60);
    const [alpha, beta] = r.json.teams;
    assert.deepEqual([alpha.id, alpha.total, alpha.counts.length, alpha.counts[59]], ['Alpha', 3, 60, 3]);
    assert.deepEqual([beta.id, beta.name, beta.total], ['beta', 'Beta', 1]);
    assert.ok(r.json.start <= Date.now() - 59 * 60_000);
  } finally {
    await roost.close();
  }
});

test('the timeline and the pulse are read by viewers of the project, like the floor', async () => {
  const srv = await sharedServer();
  try {
    assert.equal((await call(srv.url, srv.owner, 'POST', '/events?project=default', { type: 'join', agent: 'ada', team: 'T' })).status, 200);
    const outsider = await makeUser(srv, 'olga', null);
    const viewer = await makeUser(srv, 'vic', 'default', 'viewer');
    assert.equal((await call(srv.url, ANON, 'GET', '/floor/timeline?agent=ada')).status, 401);
    assert.equal((await call(srv.url, outsider, 'GET', '/floor/timeline?agent=ada&project=default')).status, 403);
    assert.equal((await call(srv.url, outsider, 'GET', '/floor/pulse?project=default')).status, 403);
    const ok = await call(srv.url, viewer, 'GET', '/floor/timeline?agent=ada&project=default');
    assert.equal(ok.status, 200);
    assert.equal(ok.json.items[0].kind, 'join');
    assert.equal((await call(srv.url, viewer, 'GET', '/floor/pulse?project=default')).status, 200);
  } finally {
    await srv.close();
  }
});
