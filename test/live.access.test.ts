// Every live stream follows the caller's access, whatever app serves it: a
// revoked token and a sign-out close Work's events stream, its lossy live
// stream (presence, role, the terminal) and a Space's command feed at once;
// those streams count toward the per-caller limit like every other; a removal
// closes that project's streams; a demotion keeps a reader reading and says
// so. (Before one mechanism served them all, Work's lossy stream and the Space
// feed were written by hand and escaped all of this: review D1.)
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { SseReader } from './support/sse.js';
import { call, login, makeUser, mintToken, refused, sharedServer, stream, type Caller, type SharedServer } from './support/shared.js';

/** A Space of `who`, contributed to `project`, observing one bridge agent; returns the ids. */
async function spaceWithAgent(srv: SharedServer, who: Caller, project: string, name: string): Promise<{ space: string; agent: string }> {
  const made = await call(srv.url, who, 'POST', '/api/v2/spaces', { name });
  assert.equal(made.status, 200, JSON.stringify(made.json));
  const space = made.json.id as string;
  const given = await call(srv.url, who, 'POST', `/api/v2/projects/${project}/spaces`, { space });
  assert.equal(given.status, 200, JSON.stringify(given.json));
  const seen = await call(srv.url, who, 'POST', `/api/v2/spaces/${space}/agents`, { project, agents: [{ session: `${name}-session`, label: 'worker', origin: 'bridge', state: 'idle' }] });
  assert.equal(seen.status, 200, JSON.stringify(seen.json));
  return { space, agent: seen.json.agents[0].id };
}

/** The three Work streams a bridge and a Work tab hold: the Space feed, the events stream and the lossy live stream (with the terminal). */
async function workStreams(srv: SharedServer, who: Caller, space: string, agent: string): Promise<Record<'feed' | 'events' | 'live', SseReader>> {
  const q = `project=default&agent=${encodeURIComponent(agent)}`;
  const feed = await stream(srv.url, who, `/api/v2/spaces/${space}/commands`);
  const events = await stream(srv.url, who, `/api/v2/events?${q}`);
  const live = await stream(srv.url, who, `/api/v2/live?${q}`);
  await feed.waitFor((f) => f.event === 'commands');
  await events.waitFor((f) => f.event === 'snapshot');
  await live.waitFor((f) => f.event === 'role');
  return { feed, events, live };
}

async function allClosed(streams: Record<string, SseReader>, reason: RegExp): Promise<void> {
  for (const [name, s] of Object.entries(streams)) {
    const err = await s.waitFor((f) => f.event === 'error', 2000).catch(() => null);
    assert.ok(err, `${name}: closed with an error frame`);
    assert.match(JSON.parse(err.data).reason, reason, name);
    await s.ended;
  }
}

describe('live streams in shared mode: closing on loss of access, and limits', () => {
  let srv: SharedServer;
  let bob: Caller;
  before(async () => {
    srv = await sharedServer();
    bob = await makeUser(srv, 'bob', 'default', 'editor');
  });
  after(() => srv.close());

  test('a revoked token: its Work events stream, live stream (terminal) and Space command feed close at once, and get nothing after', async () => {
    const tok = await mintToken(srv, bob, 'default', 'editor', 'laptop');
    const { space, agent } = await spaceWithAgent(srv, tok, 'default', 'laptop');
    const s = await workStreams(srv, tok, space, agent);
    const t0 = Date.now();
    const r = await call(srv.url, bob, 'DELETE', `/tokens/${tok.tokenId}`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    await allClosed(s, /revoked/);
    assert.ok(Date.now() - t0 < 1000, 'closed within a second');
    // A command queued and terminal bytes sent after the revocation reach nobody holding the token.
    const cmd = await call(srv.url, srv.owner, 'POST', '/api/v2/commands?project=default', { agent, text: 'SECRET PROMPT after revocation' });
    assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
    const term = await call(srv.url, bob, 'POST', `/api/v2/spaces/${space}/terminal`, { session: 'laptop-session', data: 'SECRET BYTES' });
    assert.equal(term.status, 200, JSON.stringify(term.json));
    assert.equal(term.json.delivered, 0, 'no open stream watches that terminal now');
    for (const x of Object.values(s)) assert.ok(!x.frames.some((f) => f.data.includes('SECRET')), 'nothing secret after the revocation');
  });

  test('signing out closes the Work streams and the Space feed of that sign-in, not of another', async () => {
    const { space, agent } = await spaceWithAgent(srv, bob, 'default', 'desk');
    const elsewhere = await login(srv.url, 'bob', 'bob-password');
    const s = await workStreams(srv, elsewhere, space, agent);
    const other = await workStreams(srv, bob, space, agent);
    const out = await call(srv.url, elsewhere, 'POST', '/auth/logout');
    assert.equal(out.status, 200);
    await allClosed(s, /signed out/);
    // Bob's other sign-in still hears his terminal.
    const term = await call(srv.url, bob, 'POST', `/api/v2/spaces/${space}/terminal`, { session: 'desk-session', data: 'still here' });
    assert.equal(term.json.delivered, 2, 'the events and live streams of the other sign-in watch it');
    await other.live.waitFor((f) => f.event === 'terminal' && f.data.includes('still here'));
    for (const x of Object.values(other)) x.close();
  });

  test('a removed member: that project’s Work streams close, the Space feed stays and says it acts nowhere now', async () => {
    const carol = await makeUser(srv, 'carol', 'default', 'editor');
    const { space, agent } = await spaceWithAgent(srv, carol, 'default', 'carol-box');
    const s = await workStreams(srv, carol, space, agent);
    const gone = await call(srv.url, srv.owner, 'DELETE', `/projects/default/members/${carol.uid}`);
    assert.equal(gone.status, 200);
    await allClosed({ events: s.events, live: s.live }, /no longer a member of project "default"/);
    const f = await s.feed.waitFor((x) => x.event === 'commands' && JSON.parse(x.data).projects.length === 0, 2000);
    assert.deepEqual(JSON.parse(f.data).commands, []);
    s.feed.close();
  });

  test('a demoted member keeps reading, and a role frame says the new role', async () => {
    const dan = await makeUser(srv, 'dan', 'default', 'editor');
    const { space, agent } = await spaceWithAgent(srv, dan, 'default', 'dan-box');
    const s = await workStreams(srv, dan, space, agent);
    const floor = await stream(srv.url, dan, '/stream');
    await floor.waitFor((f) => f.event === 'snapshot');
    const down = await call(srv.url, srv.owner, 'PUT', `/projects/default/members/${dan.uid}`, { role: 'viewer' });
    assert.equal(down.status, 200);
    for (const x of [s.events, s.live]) {
      const f = await x.waitFor((fr) => fr.event === 'role' && JSON.parse(fr.data).role === 'viewer', 2000);
      assert.equal(JSON.parse(f.data).project, 'default');
    }
    const posted = await call(srv.url, srv.owner, 'POST', '/events', { type: 'status', agent: 'after-demotion', status: 'working' });
    assert.equal(posted.status, 200);
    await floor.waitFor((f) => f.event === 'event' && f.data.includes('after-demotion'));
    const msg = await call(srv.url, srv.owner, 'POST', '/api/v2/conversations?project=default', { title: 'seen by a viewer' });
    assert.equal(msg.status, 200);
    await s.events.waitFor((f) => f.event === 'conversation.changed');
    for (const x of [...Object.values(s), floor]) assert.ok(!x.frames.some((f) => f.event === 'error'), 'nothing was closed');
    for (const x of [...Object.values(s), floor]) x.close();
  });
});

describe('live streams in shared mode: the per-caller limit counts every stream', () => {
  test('the Space feed and Work’s live stream count toward the limit like the others', async () => {
    const srv = await sharedServer({ streamsPerCaller: 3 });
    try {
      const erin = await makeUser(srv, 'erin', 'default', 'editor');
      const tok = await mintToken(srv, erin, 'default', 'editor');
      const { space, agent } = await spaceWithAgent(srv, tok, 'default', 'erin-box');
      const s = await workStreams(srv, tok, space, agent);
      assert.equal(await refused(srv.url, tok, '/stream'), 429, 'a fourth stream of the same caller is refused');
      assert.equal(await refused(srv.url, tok, `/api/v2/spaces/${space}/commands`), 429);
      assert.equal(await refused(srv.url, tok, '/api/v2/live?project=default'), 429);
      s.feed.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = await stream(srv.url, tok, '/stream');
      await again.waitFor((f) => f.event === 'snapshot');
      again.close();
      s.events.close();
      s.live.close();
    } finally {
      await srv.close();
    }
  });
});
