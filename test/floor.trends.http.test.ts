// An agent's trends over HTTP (GET /floor/trends, docs/floor.md "Trends"):
// known events at known times of the server's clock give known numbers per
// day over the last 30 days: tool calls, approvals waited for (not those a
// rule allowed at once), minutes waiting for a person, failures, cost; a
// day's last millisecond and the next day's first fall on their own days, in
// UTC and in the caller's time zone; the window's first day counts and the
// day before it does not; other agents are not counted; viewers only.
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';
import { decide } from './support/approvals-http.js';
import { ANON, call, makeUser, mintToken, sharedServer } from './support/shared.js';

const DAY = 86_400_000;
const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, json: await r.json() };
};

test("an agent's trends: per day over 30 days, day boundaries in UTC and in the caller's zone", async () => {
  const roost = await inProcess();
  const real = Date.now();
  // Today's UTC midnight, and the moment the trends are asked for (noon).
  const day0 = Math.floor(real / DAY) * DAY;
  const NOW = day0 + 12 * 3_600_000;
  mock.timers.enable({ apis: ['Date'], now: day0 - 40 * DAY });
  const at = async (t: number, f: () => Promise<unknown>) => {
    mock.timers.setTime(t);
    await f();
  };
  try {
    const u = roost.url;
    const ev = (e: Record<string, unknown>) => () => post(u, e);
    await at(day0 - 29 * DAY - 1, ev({ type: 'join', agent: 'ada', team: 'Pay', status: 'working' }));
    await at(day0 - 29 * DAY - 1, ev({ type: 'tool', agent: 'ada', tool: 'Read' })); // before the window
    await at(day0 - 29 * DAY, ev({ type: 'tool', agent: 'ada', tool: 'Read' })); // its first day
    await at(day0 - 1, ev({ type: 'tool', agent: 'ada', tool: 'Edit' })); // yesterday's last ms (UTC)
    await at(day0, ev({ type: 'tool', agent: 'ada', tool: 'Edit' })); // today's first
    await at(day0 + 1000, ev({ type: 'tool', agent: 'otto', team: 'Pay', tool: 'Bash' })); // another agent
    await at(day0 + 2000, ev({ type: 'status', agent: 'ada', status: 'error', activity: 'tests failed' }));
    await at(day0 - 2 * DAY + 5000, ev({ type: 'status', agent: 'ada', status: 'error' }));
    // An approval a person answered after 90 s, two days ago.
    mock.timers.setTime(day0 - 2 * DAY);
    const { approval: a1 } = await roost.approvals.request({ asker: 'ada', askerName: 'Ada', source: 'test', tool: 'Bash', input: '$ npm test' });
    mock.timers.setTime(day0 - 2 * DAY + 90_000);
    assert.equal((await decide(u, a1.id, 'allow', 'alice')).status, 200);
    // One a rule allowed at once (nobody waited), yesterday.
    mock.timers.setTime(day0 - DAY + 3_600_000);
    await roost.store.append('approvals', [
      { type: 'approval.requested', body: JSON.stringify({ type: 'approval.requested', id: 'ruled', asker: 'ada', tool: 'Read', input: 'x', ts: Date.now() }) },
      { type: 'approval.decided', body: JSON.stringify({ type: 'approval.decided', id: 'ruled', decision: 'allow', rule: 'Read', by: 'rule', ts: Date.now() }) },
    ]);
    // One still waiting, asked two hours before the trends are read.
    mock.timers.setTime(NOW - 2 * 3_600_000);
    await roost.approvals.request({ asker: 'ada', askerName: 'Ada', source: 'test', tool: 'Bash', input: '$ rm -rf build' });
    // Cost: two model requests today, one yesterday (the usage log), one of another agent.
    const usage = (t: number, agent: string, costMicros: number) => ({ type: 'usage', body: JSON.stringify({ type: 'usage', agent, session: agent, model: 'claude-sonnet-4', input: 10, output: 10, costMicros, ts: t }) });
    mock.timers.setTime(day0 + 60_000);
    await roost.store.append('usage', [usage(day0, 'ada', 1_250_000), usage(day0, 'ada', 250_000), usage(day0, 'otto', 9_000_000)]);
    mock.timers.setTime(day0 - 10 * 60_000);
    await roost.store.append('usage', [usage(day0, 'ada', 500_000)]);

    mock.timers.setTime(NOW);
    const utc = await get(`${u}/floor/trends?agent=ada&tz=0`);
    assert.equal(utc.status, 200, JSON.stringify(utc.json));
    const d = utc.json.days as { start: number; tools: number; approvals: number; waitMs: number; failures: number; costMicros: number }[];
    assert.equal(d.length, 30);
    assert.equal(d[29].start, day0, "the last day is today's, from UTC midnight");
    assert.equal(d[0].start, day0 - 29 * DAY);
    assert.equal(utc.json.complete, true);
    assert.deepEqual(
      d.map((x) => x.tools),
      [1, ...Array(27).fill(0), 1, 1],
      'the first day counts, the ms before it does not; 23:59:59.999 is yesterday, 00:00 today; Otto not counted',
    );
    assert.deepEqual(d.map((x) => x.failures).slice(27), [1, 0, 1]);
    assert.equal(d[27].approvals, 1, 'the approval a person answered');
    assert.equal(d[27].waitMs, 90_000, 'it waited 90 s for alice');
    assert.equal(d[28].approvals, 0, 'allowed by a rule at once: nobody was waited for');
    assert.equal(d[29].approvals, 1, 'the one still waiting');
    assert.equal(d[29].waitMs, 2 * 3_600_000, 'it has waited two hours so far');
    assert.equal(d[29].costMicros, 1_500_000);
    assert.equal(d[28].costMicros, 500_000);
    assert.equal(d.reduce((n, x) => n + x.approvals, 0), 2);

    // A caller one hour ahead of UTC (getTimezoneOffset() = -60): yesterday 23:59:59.999 UTC is 00:59 today there.
    const paris = (await get(`${u}/floor/trends?agent=ada&tz=-60`)).json.days as typeof d;
    assert.equal(paris[29].start, day0 - 3_600_000, 'their midnight');
    assert.equal(paris[29].tools, 2);
    assert.equal(paris[28].tools, 0);
    assert.equal(paris[28].costMicros, 0, "the usage at 23:50 UTC is their today's");
    assert.equal(paris[29].costMicros, 2_000_000);

    // Nothing for an agent the log does not name; bad input refused.
    const none = (await get(`${u}/floor/trends?agent=nobody`)).json.days as typeof d;
    assert.ok(none.every((x) => !x.tools && !x.approvals && !x.failures && !x.costMicros));
    assert.equal((await get(`${u}/floor/trends`)).status, 400);
    assert.equal((await get(`${u}/floor/trends?agent=ada&tz=abc`)).status, 400);
    assert.equal((await get(`${u}/floor/trends?agent=${'x'.repeat(1025)}`)).status, 400);
  } finally {
    mock.timers.reset();
    await roost.close();
  }
});

test("trends and a timeline's moment are read by viewers of the project only: nothing of another project", async () => {
  const srv = await sharedServer();
  try {
    const viewer = await makeUser(srv, 'vic', 'default', 'viewer');
    await call(srv.url, srv.owner, 'POST', '/projects', { id: 'beta' });
    const betaViewer = await makeUser(srv, 'bea', 'beta', 'viewer');
    const beta = await mintToken(srv, srv.owner, 'beta', 'editor');
    for (const ev of [
      { type: 'join', agent: 'zed', team: 'Ops' },
      { type: 'tool', agent: 'zed', team: 'Ops', tool: 'Bash', activity: 'rotate the secret keys' },
    ]) assert.ok((await call(srv.url, beta, 'POST', '/events?project=beta', ev)).status < 300);
    assert.equal((await call(srv.url, ANON, 'GET', '/floor/trends?agent=zed')).status, 401);
    assert.equal((await call(srv.url, viewer, 'GET', '/floor/trends?agent=zed&project=beta')).status, 403, 'another project is refused');
    const mine = await call(srv.url, viewer, 'GET', '/floor/trends?agent=zed&project=default');
    assert.equal(mine.status, 200);
    assert.equal(mine.json.days.reduce((n: number, d: { tools: number }) => n + d.tools, 0), 0, "beta's agent is nothing in default");
    const theirs = await call(srv.url, betaViewer, 'GET', '/floor/trends?agent=zed&project=beta');
    assert.equal(theirs.json.days.reduce((n: number, d: { tools: number }) => n + d.tools, 0), 1);
    // The moment of beta's tool call, found by beta's viewer, opens nothing in default.
    const hit = (await call(srv.url, betaViewer, 'GET', '/api/search?q=secret&project=beta')).json.hits[0];
    assert.equal((await call(srv.url, betaViewer, 'GET', `/floor/timeline?agent=zed&from=f:${hit.position}&project=beta`)).status, 200);
    assert.equal((await call(srv.url, viewer, 'GET', `/floor/timeline?agent=zed&from=f:${hit.position}&project=default`)).status, 404);
    assert.equal((await call(srv.url, viewer, 'GET', '/api/search?q=secret&project=default')).json.hits.length, 0);
  } finally {
    await srv.close();
  }
});
