// A timeline opened at a moment (GET /floor/timeline?from=, what a search
// result opens; docs/search.md "In the web app"): the page starts with the
// entry the search found and goes on older, with the approvals of the same
// time merged; it opens the history of an agent the floor has forgotten when
// the entry names that agent, and nobody else's; a malformed moment is a 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';
import { decide } from './support/approvals-http.js';
import { until } from './support/until.js';

const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, json: await r.json() };
};

test('a timeline opened at a moment found by search, of an agent on the floor and of one it has forgotten', async () => {
  const roost = await inProcess();
  try {
    const u = roost.url;
    await post(u, [
      { type: 'join', agent: 'ada', team: 'Pay', status: 'working' },
      { type: 'join', agent: 'old', team: 'Pay', status: 'working' },
    ]);
    for (let i = 0; i < 10; i++) await post(u, { type: 'tool', agent: 'ada', tool: 'Edit', activity: `step ${i}${i === 4 ? ' walrus' : ''}` });
    const { approval } = await roost.approvals.request({ asker: 'ada', askerName: 'Ada', source: 'test', tool: 'Bash', input: '$ make walrus' });
    assert.equal((await decide(u, approval.id, 'allow', 'alice')).status, 200);
    await post(u, [{ type: 'tool', agent: 'old', tool: 'Grep', activity: 'grep narwhal' }, { type: 'leave', agent: 'old' }]);
    for (let i = 10; i < 14; i++) await post(u, { type: 'tool', agent: 'ada', tool: 'Edit', activity: `step ${i}` });

    const found = (await get(`${u}/api/search?q=walrus`)).json.hits as { family: string; kind: string; position: number; agent: string }[];
    const tool = found.find((h) => h.family === 'floor')!;
    const asked = found.find((h) => h.kind === 'approval.requested')!;
    assert.ok(tool && asked, JSON.stringify(found));

    // At the tool call: it first, then what came before it.
    const at = (await get(`${u}/floor/timeline?agent=ada&from=f:${tool.position}`)).json;
    assert.equal(at.items[0].key, `f:${tool.position}`);
    assert.equal(at.items[0].activity, 'step 4 walrus');
    assert.deepEqual(
      at.items.slice(1, 5).map((i: any) => i.activity),
      ['step 3', 'step 2', 'step 1', 'step 0'],
    );
    // At the approval request: it first, the floor's older steps after it, nothing newer.
    const ap = (await get(`${u}/floor/timeline?agent=ada&from=a:${asked.position}`)).json;
    assert.equal(ap.items[0].key, `a:${asked.position}`);
    assert.equal(ap.items[0].approval.by, 'alice');
    assert.ok(!ap.items.some((i: any) => /step 1[0-3]/.test(i.activity ?? '')), 'nothing after the moment');
    assert.ok(ap.items.some((i: any) => i.activity === 'step 9'));
    // Paging on from the moment continues older.
    const small = (await get(`${u}/floor/timeline?agent=ada&from=f:${tool.position}&limit=2`)).json;
    const next = (await get(`${u}/floor/timeline?agent=ada&from=f:${tool.position}&limit=2&before=${small.next}`)).json;
    assert.deepEqual([...small.items, ...next.items].map((i: any) => i.activity), ['step 4 walrus', 'step 3', 'step 2', 'step 1']);

    // A session the floor has forgotten: its history opens from a moment that names it.
    await until('old forgotten', async () => !((await get(`${u}/state`)).json.agents as { id: string }[]).some((a) => a.id === 'old'), 20_000, 200);
    assert.equal((await get(`${u}/floor/timeline?agent=old`)).status, 404);
    const gone = (await get(`${u}/api/search?q=narwhal`)).json.hits[0];
    const past = await get(`${u}/floor/timeline?agent=old&from=f:${gone.position}`);
    assert.equal(past.status, 200);
    assert.equal(past.json.items[0].activity, 'grep narwhal');
    assert.equal(past.json.items.at(-1).kind, 'join');
    // Paged on, the moment still opens it (it rides every page); without it, a 404.
    const p1 = (await get(`${u}/floor/timeline?agent=old&from=f:${gone.position}&limit=1`)).json;
    const p2 = await get(`${u}/floor/timeline?agent=old&from=f:${gone.position}&limit=1&before=${p1.next}`);
    assert.equal(p2.status, 200);
    assert.deepEqual([...p1.items, ...p2.json.items].map((i: any) => i.kind), ['tool', 'join']);
    assert.equal((await get(`${u}/floor/timeline?agent=old&limit=1&before=${p1.next}`)).status, 404);
    // A moment that does not name the agent opens nobody's history.
    assert.equal((await get(`${u}/floor/timeline?agent=old&from=f:${tool.position}`)).status, 404);
    assert.equal((await get(`${u}/floor/timeline?agent=nobody&from=f:${gone.position}`)).status, 404);
    for (const bad of ['x:1', 'f:', 'f:0', 'f:-1', 'f:1.5', `f:${'9'.repeat(40)}`]) assert.equal((await get(`${u}/floor/timeline?agent=ada&from=${encodeURIComponent(bad)}`)).status, 400, bad);
  } finally {
    await roost.close();
  }
});
