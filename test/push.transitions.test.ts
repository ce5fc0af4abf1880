// "Done" and "needs you", pushed right (issue 31, point 3): a notice per
// agent per transition, never per event; each member's choices per project
// and per kind; quiet hours that hold everything but, when chosen, what waits
// for a person. Over real HTTP to a real Roost, with the push-service
// stand-in decrypting what arrives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PushServiceStandin } from './support/push-service.js';
import { send, withPushRig } from './support/push.js';
import { sharedServer, makeUser, call } from './support/shared.js';
import { client } from './support/work-server.js';
import { until } from './support/until.js';
import { flockLog } from './support/flock-events.js';
import { inQuietHours, minutesIn, phaseOf, quietAllows, transitionNotice } from '../src/core/notify.js';


const kinds = (ps: PushServiceStandin) => ps.messages.map((m) => [m.subscription, (m.payload as any).kind, (m.payload as any).url]);

test('the transition is a pure function of the previous and next phase; quiet hours wrap past midnight in the member zone', () => {
  assert.equal(transitionNotice(undefined, phaseOf('done')), 'done');
  assert.equal(transitionNotice('done', phaseOf('done')), null);
  assert.equal(transitionNotice('done', phaseOf('working')), null);
  assert.equal(transitionNotice('busy', phaseOf('error')), 'failed');
  assert.equal(transitionNotice('failed', phaseOf('error')), null);
  // 23:30 UTC is 08:30 in Tokyo (no daylight saving there).
  const t = Date.UTC(2026, 11, 5, 23, 30);
  assert.equal(minutesIn('Asia/Tokyo', t), 8 * 60 + 30);
  const night = { timeZone: 'Asia/Tokyo', start: 22 * 60, end: 9 * 60, letWaiting: true };
  assert.equal(inQuietHours(night, t), true);
  assert.equal(inQuietHours({ ...night, end: 8 * 60 }, t), false);
  assert.equal(quietAllows(night, 'done', t), false);
  assert.equal(quietAllows(night, 'approval', t), true);
  assert.equal(quietAllows({ ...night, letWaiting: false }, 'ask', t), false);
  assert.equal(quietAllows(null, 'done', t), true);
});

test('a burst of 20 events of one agent finishing sends one "done"; a later failure one "failed"; "done" turned off in one project is off there only', async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    const p = await subscribe();
    const q = await subscribe('q');

    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: { id: 'w-1', name: 'Worker 1' }, team: 'Shop', status: 'working' })).status, 200);
    for (let i = 0; i < 20; i++) assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-1', status: 'done', activity: `Turn finished ${i}` })).status, 200);
    await until('the floor folded the burst', () => roost.floor.state.agents.get('w-1')?.activity === 'Turn finished 19', 10_000);
    await ps.until((m) => m.length >= 1);
    await roost.notices.settled();
    assert.deepEqual(kinds(ps), [[p.id, 'done', '/?agent=w-1']]);
    assert.equal((ps.messages[0].payload as any).title, 'Worker 1 is done');

    // Working again, then a failure: one "failed", however many error events follow.
    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-1', status: 'working' })).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-1', status: 'error', activity: `crash ${i}` })).status, 200);
    await until('the floor folded the failures', () => roost.floor.state.agents.get('w-1')?.activity === 'crash 4', 10_000);
    await ps.until((m) => m.length >= 2);
    await roost.notices.settled();
    assert.deepEqual(kinds(ps).slice(1), [[p.id, 'failed', '/?agent=w-1']]);

    // "done" off for the default project: none from it, but Q's still arrive.
    const off = await send(`${roost.url}/push/prefs`, { done: false }, 'PUT');
    assert.equal(off.status, 200);
    assert.equal(off.json.prefs.done, false);
    assert.equal((await (await fetch(`${roost.url}/push?project=q`)).json()).prefs.done, true);
    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-2', status: 'done' })).status, 200);
    assert.equal((await send(`${roost.url}/events?project=q`, { type: 'status', agent: 'x-1', status: 'done' })).status, 200);
    await ps.until((m) => m.length >= 3);
    await until('the floor folded w-2', () => roost.floor.state.agents.get('w-2')?.status === 'done', 5000);
    await roost.notices.settled();
    assert.deepEqual(kinds(ps).slice(2), [[q.id, 'done', '/?agent=x-1&project=q']]);
  });
});

test('quiet hours hold a "done" notice but let a "waits for a person" through when the member chose it; a zone Intl does not know is refused', async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    const sub = await subscribe();
    const tz = 'America/New_York';
    assert.equal((await send(`${roost.url}/push/prefs`, { quiet: { timeZone: 'Mars/Olympus', start: '22:00', end: '07:00' } }, 'PUT')).status, 400);
    assert.equal((await send(`${roost.url}/push/prefs`, { quiet: { timeZone: tz, start: '25:00', end: '07:00' } }, 'PUT')).status, 400);
    // Quiet from an hour ago to an hour from now, in the member's zone.
    const hm = (m: number) => { const x = (m + 1440) % 1440; return `${String(Math.floor(x / 60)).padStart(2, '0')}:${String(x % 60).padStart(2, '0')}`; };
    const now = minutesIn(tz, Date.now())!;
    const set = await send(`${roost.url}/push/prefs`, { quiet: { timeZone: tz, start: hm(now - 60), end: hm(now + 60), letWaiting: true } }, 'PUT');
    assert.equal(set.status, 200, JSON.stringify(set.json));
    assert.deepEqual(set.json.quiet, { timeZone: tz, start: hm(now - 60), end: hm(now + 60), letWaiting: true });

    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-1', status: 'done' })).status, 200);
    await until('the floor folded w-1', () => roost.floor.state.agents.get('w-1')?.status === 'done', 5000);
    await roost.notices.settled();
    assert.equal(ps.messages.length, 0);
    const { approval } = await roost.approvals.request({ kind: 'tool', asker: 'bot-1', askerName: 'Bot One', source: 'cli', tool: 'Bash', input: 'ls', window: 60_000 });
    await ps.until((m) => m.length >= 1);
    await roost.notices.settled();
    assert.deepEqual(kinds(ps), [[sub.id, 'approval', `/inbox/${approval.id}`]]);

    // Not chosen: a waiting approval is held too; cleared, a "done" arrives again.
    assert.equal((await send(`${roost.url}/push/prefs`, { quiet: { timeZone: tz, start: hm(now - 60), end: hm(now + 60) } }, 'PUT')).status, 200);
    await roost.approvals.request({ kind: 'tool', asker: 'bot-1', source: 'cli', tool: 'Bash', input: 'ls -la', window: 60_000 });
    await roost.notices.settled();
    assert.equal(ps.messages.length, 1);
    const cleared = await send(`${roost.url}/push/prefs`, { quiet: null }, 'PUT');
    assert.equal(cleared.json.quiet, null);
    assert.equal((await send(`${roost.url}/events`, { type: 'status', agent: 'w-2', status: 'done' })).status, 200);
    await ps.until((m) => m.length >= 2);
    assert.equal((ps.messages[1].payload as any).kind, 'done');
  });
});

test("shared mode: a member sets only their own choices and quiet hours; another member's change never reaches mine", async () => {
  const srv = await sharedServer();
  try {
    const bob = await makeUser(srv, 'bob', 'default', 'viewer');
    const mine = await call(srv.url, srv.owner, 'PUT', '/push/prefs', { done: false, quiet: { timeZone: 'Europe/Paris', start: '22:00', end: '07:00', letWaiting: true } });
    assert.equal(mine.status, 200, JSON.stringify(mine.json));
    // Bob's change is his own; naming someone else in the body is refused.
    assert.equal((await call(srv.url, bob, 'PUT', '/push/prefs', { done: true, quiet: null })).status, 200);
    assert.equal((await call(srv.url, bob, 'PUT', '/push/prefs', { uid: 'owner', done: true })).status, 400);
    const after = await call(srv.url, srv.owner, 'GET', '/push');
    assert.equal(after.json.prefs.done, false);
    assert.deepEqual(after.json.quiet, { timeZone: 'Europe/Paris', start: '22:00', end: '07:00', letWaiting: true });
    const his = await call(srv.url, bob, 'GET', '/push');
    assert.equal(his.json.prefs.done, true);
    assert.equal(his.json.quiet, null);
  } finally {
    await srv.close();
  }
});

test('a budget crossed is one "budget" notice per threshold, and a member who turned budget off in the project hears none', async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    await subscribe();
    // The usage service writes budget.crossed once per budget version and threshold (its idempotency key); written twice, it is one commit.
    const cross = (th: number, version: number) =>
      roost.store.append('usage', [{ type: 'budget.crossed', body: JSON.stringify({ type: 'budget.crossed', threshold: th, version, costMicros: 1, limitMicros: 1, ts: Date.now() }) }], { idempotencyKey: `budget:${version}:${th}` });
    await cross(80, 1);
    await cross(80, 1);
    await cross(100, 1);
    await ps.until((m) => m.length >= 2);
    await roost.notices.settled();
    assert.deepEqual(
      ps.messages.map((m) => [(m.payload as any).kind, (m.payload as any).title, (m.payload as any).url]),
      [
        ['budget', 'The budget is 80% spent', '/cost'],
        ['budget', 'The budget is spent', '/cost'],
      ],
    );
    assert.equal((await send(`${roost.url}/push/prefs`, { budget: false }, 'PUT')).status, 200);
    await cross(80, 2);
    await roost.notices.settled();
    assert.equal(ps.messages.length, 2);
  });
});

test('a Work command done is one "done" notice and a failed one one "failed", however often the bridge reports the end', async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    await subscribe();
    const me = client(roost.url, null);
    const space = (await me.post('/api/v2/spaces', { name: 'lap' })).json.id;
    assert.equal((await me.post('/api/v2/projects/default/spaces', { space })).status, 200);
    assert.equal((await me.post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [{ session: 'a1', origin: 'bridge' }] })).status, 200);
    const agent = `${space}:a1`;
    const run = async (status: 'done' | 'failed') => {
      const r = await me.post('/api/v2/commands', { project: 'default', agent, text: 'go' });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const cmd = r.json.id;
      assert.equal((await me.post(`/api/v2/spaces/${space}/executions`, { command: cmd, event: 'started' })).status, 200);
      for (let i = 0; i < 3; i++) await me.post(`/api/v2/spaces/${space}/executions`, { command: cmd, event: 'finished', result: 'r', ...(status === 'failed' ? { status } : {}) });
    };
    await run('done');
    await ps.until((m) => m.length >= 1);
    await run('failed');
    await ps.until((m) => m.length >= 2);
    await roost.notices.settled();
    assert.deepEqual(
      ps.messages.map((m) => [(m.payload as any).kind, (m.payload as any).title, (m.payload as any).url]),
      [
        ['done', 'A Work command is done', '/work'],
        ['failed', 'A Work command failed', '/work'],
      ],
    );
  });
});

test('a flock list that finishes is one "finished" notice that opens the list; a member who turned "finished" off in the project hears none', async () => {
  await withPushRig(async ({ ps, roost, subscribe }) => {
    await subscribe();
    const f = flockLog(Date.now());
    const finish = async (list: string) => {
      // A list whose one item is skipped, then finished: as the flock writes them; the finish written twice is still one list finished.
      const evs = [f.started(list, ['write the notes']), f.skipped(list, 1, 'rejected'), f.finished(list), f.finished(list)];
      await roost.flock.append(evs);
    };
    await finish('L1');
    await ps.until((m) => m.length >= 1);
    await roost.notices.settled();
    assert.deepEqual(
      ps.messages.map((m) => [(m.payload as any).kind, (m.payload as any).title, (m.payload as any).url]),
      [['finished', 'A list is finished', '/flock?list=L1']],
    );
    assert.equal((await send(`${roost.url}/push/prefs`, { finished: false }, 'PUT')).status, 200);
    await finish('L2');
    await until('the flock folded L2 finished', () => roost.flock.state.lists.get('L2')?.finished !== undefined, 10_000);
    await roost.notices.settled();
    assert.equal(ps.messages.length, 1);
  });
});
