// The case of test/work.members*.test.ts, on any store: Work's copy of a
// project's membership (`member.changed`, docs/work.md) is written when the
// membership changes, also for a project created while the server runs and
// whose Work nobody has opened yet, so a restart finds nothing to record: the
// project's position stays where it was and a client resuming from its last
// event gets no frames it never missed.
import assert from 'node:assert/strict';
import type { EventStore } from '../../src/storage/index.js';
import { startRoost, type Roost } from '../../src/server/index.js';
import { createOwner } from '../../src/cli/owner.js';
import { call, login, headersOf, type Caller } from './shared.js';
import { openSse } from './sse.js';
import { until } from './until.js';

/** Runs the case; `open` opens the same store again each time it is called (a restart). */
export async function membersAcrossRestart(open: () => Promise<EventStore>): Promise<void> {
  const store = await open();
  await createOwner(store, 'ann', 'ann-password', 'Ann');
  let roost: Roost = await startRoost(store, { port: 0 });
  try {
    const ann = await login(roost.url, 'ann', 'ann-password');
    assert.equal((await call(roost.url, ann, 'POST', '/projects', { id: 'gamma', name: 'Gamma' })).status, 201);
    // Members join before anyone opens gamma's Work.
    assert.equal((await call(roost.url, ann, 'POST', '/users', { login: 'bob', name: 'Bob', password: 'bob-password', project: 'gamma', role: 'editor' })).status, 201);
    const carol = await call(roost.url, ann, 'POST', '/users', { login: 'carol', name: 'Carol', password: 'carol-password' });
    assert.equal(carol.status, 201);
    assert.equal((await call(roost.url, ann, 'PUT', `/projects/gamma/members/carol`, { role: 'viewer' })).status, 200);

    const members = (s: any) => (s.members as { name: string; role: string }[]).map((m) => `${m.name}:${m.role}`).sort();
    const snap = async (who: Caller) => (await call(roost.url, who, 'GET', '/api/v2/snapshot?project=gamma')).json;
    const want = ['Ann:owner', 'Bob:editor', 'Carol:viewer'];
    // Work's copy follows the membership as it happens, not at the next start.
    const before = await until('gamma’s Work to list its three members', async () => {
      const s = await snap(ann);
      return JSON.stringify(members(s)) === JSON.stringify(want) && s;
    }, 10_000);

    await roost.close();
    roost = await startRoost(await open(), { port: 0 });
    const ann2 = await login(roost.url, 'ann', 'ann-password');
    const after = await snap(ann2);
    assert.equal(after.position, before.position, 'a restart does not move the project’s position');
    assert.deepEqual(members(after), want);

    // A client resuming from the last event it had gets nothing until something happens.
    const es = await openSse(`${roost.url}/api/v2/events?project=gamma`, { ...headersOf(ann2, roost.url), 'last-event-id': before.lastEventId });
    try {
      const c = await call(roost.url, ann2, 'POST', '/api/v2/conversations', { project: 'gamma', title: 'after the restart' });
      assert.equal(c.status, 200, JSON.stringify(c.json));
      const first = await es.waitFor((f) => f.id !== undefined, 10_000);
      assert.equal(first.event, 'conversation.changed', `the first frame after resuming is the new conversation, not ${first.event} ${first.data}`);
      assert.equal(JSON.parse(first.data).id, c.json.id);
      assert.ok(!es.frames.some((f) => f.event === 'snapshot'), 'the resume replays from its id, no new snapshot');
    } finally {
      es.close();
    }
  } finally {
    await roost.close();
  }
}
