// The fleet board through the HTTP API of a real in-process server: what the
// workstation bridge posting session events, and a member's browser reading the
// board and its chat, would see.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { answer, inProcess, tempDir } from './support/server.js';
import { openSse, type SseFrame } from './support/sse.js';

type Server = Awaited<ReturnType<typeof inProcess>>;

async function send(srv: Server, thread: string, body: unknown, opts: { as?: string; key?: string; contentType?: string } = {}): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (opts.as) headers['roost-name'] = opts.as;
  if (opts.key) headers['idempotency-key'] = opts.key;
  const r = await fetch(`${srv.url}/fleet/${thread}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return answer(r);
}

async function board(srv: Server, thread: string): Promise<any> {
  const r = await fetch(`${srv.url}/fleet/${thread}`);
  assert.equal(r.status, 200);
  return r.json();
}

const spawn = { type: 'session.spawn', id: 's1', session: 'fix-login', flavor: 'scoped', root: '~/src/app', worktree: 'wt-fix-login', by: 'Paul' };

describe('the board over HTTP: identity, rules, errors', () => {
  let srv: Server;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('the transport sets name, uid and ts, whatever the payload says', async () => {
    const before = Date.now();
    const r = await send(srv, 't1', { ...spawn, name: 'Mallory', uid: 'u_mallory', ts: 1 }, { as: 'Claude' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual([r.json.accepted, r.json.first, r.json.last, r.json.duplicate], [1, 1, 1, false]);
    const b = await board(srv, 't1');
    assert.equal(b.position, 1);
    assert.equal(b.thread, 't1');
    const s = b.sessions[0];
    assert.deepEqual([s.id, s.name, s.flavor, s.root, s.worktree, s.by, s.state], ['s1', 'fix-login', 'scoped', '~/src/app', 'wt-fix-login', 'Paul', 'running']);
    assert.ok(s.ts >= before && s.ts <= Date.now(), 'ts is the server clock, not the payload');
    // The stored event says who really posted it.
    const sse = await openSse(`${srv.url}/fleet/t1/stream?lastEventId=${srv.store.epoch}:0`);
    const f = await sse.waitFor((x) => x.event === 'event');
    sse.close();
    const { event, chat } = JSON.parse(f.data);
    assert.deepEqual([event.name, event.uid], ['Claude', 'local']);
    assert.deepEqual(chat, { text: 'started session “fix-login” on ~/src/app', action: true });
  });

  test('a prompt counts; the first decision wins and a later one is refused with who decided', async () => {
    assert.equal((await send(srv, 't1', { type: 'session.prompt', id: 's1', text: 'fix the flaky test' }, { as: 'Ana' })).status, 200);
    assert.equal((await send(srv, 't1', { type: 'session.approval', id: 's1', rid: 'a1', tool: 'git push', digest: 'origin main', state: 'pending' }, { as: 'Claude' })).status, 200);
    const allow = await send(srv, 't1', { type: 'session.approval', id: 's1', rid: 'a1', state: 'allowed', name: 'Bob' }, { as: 'Ana' });
    assert.equal(allow.status, 200);
    const deny = await send(srv, 't1', { type: 'session.approval', id: 's1', rid: 'a1', state: 'denied' }, { as: 'Bob' });
    assert.equal(deny.status, 409);
    assert.deepEqual(deny.json, { message: 'approval "a1" was already allowed by Ana', kind: 'conflict' });
    const b = await board(srv, 't1');
    assert.equal(b.sessions[0].prompts, 1);
    assert.deepEqual(b.sessions[0].approvals, [{ rid: 'a1', tool: 'git push', digest: 'origin main', state: 'allowed', by: 'Ana' }]);
    assert.equal(b.position, 4, 'the refused deny was not stored');
  });

  test('unknown sessions and requests are 404, an ended session refuses everything, nothing of it is stored', async () => {
    const unknown = await send(srv, 't1', { type: 'session.status', id: 's9', state: 'running' }, { as: 'Claude' });
    assert.deepEqual([unknown.status, unknown.json.kind], [404, 'not_found']);
    const unposted = await send(srv, 't1', { type: 'session.approval', id: 's1', rid: 'a9', state: 'allowed' }, { as: 'Mallory' });
    assert.deepEqual([unposted.status, unposted.json.message], [404, 'no approval "a9" in session "fix-login"']);
    assert.equal((await send(srv, 't1', { type: 'session.approval', id: 's1', rid: 'a2', tool: 'rm', state: 'pending' }, { as: 'Claude' })).status, 200);
    assert.equal((await send(srv, 't1', { type: 'session.end', id: 's1', reason: 'closed' }, { as: 'Paul' })).status, 200);
    const head = (await board(srv, 't1')).position;
    const zombie = await send(srv, 't1', { type: 'session.status', id: 's1', state: 'running', activity: 'zombie' }, { as: 'Claude' });
    assert.deepEqual([zombie.status, zombie.json.message], [409, 'session "fix-login" has ended']);
    const b = await board(srv, 't1');
    assert.equal(b.position, head);
    assert.deepEqual([b.sessions[0].state, b.sessions[0].activity, b.sessions[0].reason], ['ended', '', 'closed']);
    assert.deepEqual(b.sessions[0].approvals.map((a: any) => a.rid), ['a1'], 'the pending a2 died with the session');
  });

  test('bad input is a 4xx that says what is wrong, and stores nothing', async () => {
    const head = (await board(srv, 't1')).position;
    const cases: [unknown, number, RegExp, string?][] = [
      [{ type: 'session.spawn', id: 'bad id' }, 400, /"id" must be 1 to 64/],
      [{ type: 'session.stream', id: 's1', text: 'partial' }, 400, /ephemeral/],
      [{ type: 'session.status', id: 's1', state: 'ended' }, 400, /session\.end/],
      [{ type: 'session.prompt', id: 's1', text: 'x'.repeat(20_001) }, 400, /"text" is longer than 20000/],
      [[spawn, { type: 'session.prompt', id: 's1' }], 400, /^event 1: "text" is required/],
      [[], 400, /empty/],
      [Array.from({ length: 201 }, (_, i) => ({ ...spawn, id: `b${i}` })), 413, /at most 200/],
      ['{"type":', 400, /not valid JSON/],
      [JSON.stringify(spawn), 415, /Content-Type/, 'text/plain'],
    ];
    for (const [body, status, re, ct] of cases) {
      const r = await send(srv, 't1', body, { as: 'Claude', contentType: ct });
      assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 60)} → ${JSON.stringify(r.json)}`);
      assert.match(r.json.message, re);
      assert.equal(typeof r.json.kind, 'string');
    }
    const badThread = await send(srv, 'no.dots', spawn);
    assert.deepEqual([badThread.status, badThread.json.kind], [400, 'bad_request']);
    assert.equal((await board(srv, 't1')).position, head);
  });

  test('a batch is judged in order (spawn then prompt) and is all or nothing', async () => {
    const ok = await send(srv, 't2', [{ ...spawn, id: 'b1' }, { type: 'session.prompt', id: 'b1', text: 'go' }], { as: 'Ana' });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.accepted, 2);
    const bad = await send(srv, 't2', [{ ...spawn, id: 'b2' }, { type: 'session.prompt', id: 'nope', text: 'go' }], { as: 'Ana' });
    assert.deepEqual([bad.status, bad.json.message], [404, 'event 1: no session "nope" on this board']);
    const b = await board(srv, 't2');
    assert.deepEqual(b.sessions.map((s: any) => [s.id, s.prompts]), [['b1', 1]]);
  });

  test('threads are separate boards', async () => {
    assert.equal((await board(srv, 't3')).sessions.length, 0);
    assert.equal((await board(srv, 't3')).position, 0);
    assert.ok((await board(srv, 't1')).sessions.length > 0);
  });

  test('an Idempotency-Key retry stores nothing twice, even when the first answer was lost', async () => {
    assert.equal((await send(srv, 't4', spawn, { as: 'Claude', key: 'spawn-1' })).status, 200);
    const turn = { type: 'session.turn', id: 's1', text: 'Found it.' };
    const first = await send(srv, 't4', turn, { as: 'Claude', key: 'turn-1' });
    const retry = await send(srv, 't4', turn, { as: 'Claude', key: 'turn-1' });
    assert.equal(retry.status, 200);
    assert.deepEqual([retry.json.first, retry.json.duplicate], [first.json.first, true]);
    const spawnRetry = await send(srv, 't4', spawn, { as: 'Claude', key: 'spawn-1' });
    assert.deepEqual([spawnRetry.status, spawnRetry.json.duplicate], [200, true], 'a retried spawn is the same spawn, not a conflict');
    const b = await board(srv, 't4');
    assert.equal(b.sessions[0].turns, 1);
    assert.equal(b.position, 2);
    // A new request that conflicts is still refused, key or not.
    const dup = await send(srv, 't4', spawn, { as: 'Claude', key: 'spawn-2' });
    assert.equal(dup.status, 409);
  });

  test('/lib/fleet.js serves the fold as is: it loads alone and folds', async () => {
    const r = await fetch(srv.url + '/lib/fleet.js');
    assert.equal(r.status, 200, 'run npm run build first');
    const code = await r.text();
    const mod = await import('data:text/javascript;base64,' + Buffer.from(code).toString('base64'));
    const s = mod.reduceSessions(mod.emptySessions(), { type: 'session.spawn', id: 'x', session: 'x', name: 'Claude', ts: 5 });
    assert.equal(s.sessions[0].statusTs, 5);
  });
});

describe('the board live: snapshot, chat frames in order, replay, restart', () => {
  test('frames carry each event with its chat line; a reconnect replays exactly what it missed; a restart keeps the board', async () => {
    const dataDir = tempDir();
    let srv = await inProcess({ snapshotEvery: 3 }, dataDir);
    try {
      assert.equal((await send(srv, 'room', spawn, { as: 'Claude' })).status, 200);
      const live = await openSse(`${srv.url}/fleet/room/stream`);
      const snap = JSON.parse((await live.waitFor((f) => f.event === 'snapshot')).data);
      assert.deepEqual([snap.protocol, snap.position, snap.reset, snap.state.sessions.length], [1, 1, false, 1]);

      const steps: [unknown, string][] = [
        [{ type: 'session.prompt', id: 's1', text: 'fix the flaky reminder test' }, 'Paul'],
        [{ type: 'session.status', id: 's1', state: 'running', activity: 'go test ./...' }, 'Claude'],
        [{ type: 'session.turn', id: 's1', text: 'Found it.' }, 'Claude'],
        [{ type: 'session.result', id: 's1', summary: '2 files changed' }, 'Claude'],
      ];
      for (const [e, as] of steps) assert.equal((await send(srv, 'room', e, { as })).status, 200);
      await live.waitFor((f) => f.id === `${srv.store.epoch}:5`);
      const chat = (frames: SseFrame[]) => frames.filter((f) => f.event === 'event').map((f) => JSON.parse(f.data)).map((d) => (d.chat ? `${d.event.name}: ${d.chat.text}` : null));
      assert.deepEqual(chat(live.frames), ['Paul: asked fix-login: “fix the flaky reminder test”', null, 'Claude: [fix-login] Found it.', 'Claude: [fix-login] ✅ 2 files changed']);
      const lastSeen = live.frames[live.frames.length - 2].id!; // as if the connection dropped before the last frame
      live.close();

      // Missed while away: two more events.
      assert.equal((await send(srv, 'room', { type: 'session.prompt', id: 's1', text: 'and push' }, { as: 'Ana' })).status, 200);
      assert.equal((await send(srv, 'room', { type: 'session.end', id: 's1', reason: 'closed' }, { as: 'Ana' })).status, 200);
      const back = await openSse(`${srv.url}/fleet/room/stream`, { 'last-event-id': lastSeen });
      await back.waitFor((f) => f.id === `${srv.store.epoch}:7`);
      await new Promise((r) => setTimeout(r, 100));
      back.close();
      assert.deepEqual(back.frames.map((f) => f.id), [5, 6, 7].map((p) => `${srv.store.epoch}:${p}`), 'exactly the missed frames, no snapshot, no duplicate');
      assert.deepEqual(chat(back.frames), ['Claude: [fix-login] ✅ 2 files changed', 'Ana: asked fix-login: “and push”', 'Ana: closed session “fix-login”']);

      const before = await board(srv, 'room');
      await srv.close();
      srv = await inProcess({ snapshotEvery: 3 }, dataDir);
      const after = await board(srv, 'room');
      assert.deepEqual(after, before, 'the board is rebuilt from the log (and its snapshots) after a restart');
      // A replay from a position behind the snapshot, on the restarted server, is exact too.
      const again = await openSse(`${srv.url}/fleet/room/stream?lastEventId=${srv.store.epoch}:2`);
      await again.waitFor((f) => f.id === `${srv.store.epoch}:7`);
      again.close();
      assert.deepEqual(again.frames.map((f) => f.id), [3, 4, 5, 6, 7].map((p) => `${srv.store.epoch}:${p}`));
      const foreign = await openSse(`${srv.url}/fleet/room/stream?lastEventId=other:3`);
      const reset = JSON.parse((await foreign.waitFor((f) => f.event === 'snapshot')).data);
      foreign.close();
      assert.equal(reset.reset, true);
      assert.deepEqual(reset.state, { sessions: after.sessions });
    } finally {
      await srv.close();
    }
  });
});
