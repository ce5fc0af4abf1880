// Work against the words of its contract (spec/live-work.md, issue 16), as
// cases run on each store: test/work.http.test.ts on SQLite,
// test/work.pg.test.ts on PostgreSQL. Each goes through HTTP and the SSE
// streams with several identities (TestAccess).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '../../src/bridge/client.js';
import { applyWork, emptyWork, type WorkState } from '../../src/core/work.js';
import { SpaceLink } from '../../src/bridge/work.js';
import { openSse, type SseReader } from './sse.js';
import { TestAccess, client, type WorkServer } from './work-server.js';

type Open = (access: TestAccess) => Promise<WorkServer>;
type Client = ReturnType<typeof client>;

function people(): TestAccess {
  const a = new TestAccess().person('ann', 'Ann').person('bob', 'Bob').person('vic', 'Vic').person('eve', 'Eve');
  a.setRole('alpha', 'ann', 'owner');
  a.setRole('alpha', 'bob', 'editor');
  a.setRole('alpha', 'vic', 'viewer');
  a.setRole('beta', 'eve', 'owner');
  return a;
}

/** `who` registers a Space, contributes it to `project` and reports one bridge agent. */
async function spaceOf(who: Client, project: string, name: string, session = 'sess-1'): Promise<{ space: string; agent: string }> {
  const sp = await who.post('/api/v2/spaces', { name });
  assert.equal(sp.status, 200, JSON.stringify(sp.json));
  const space = sp.json.id as string;
  assert.equal((await who.post(`/api/v2/projects/${project}/spaces`, { space })).status, 200);
  const r = await who.post(`/api/v2/spaces/${space}/agents`, { project, full: true, agents: [{ session, label: 'worker', origin: 'bridge' }] });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return { space, agent: `${space}:${session}` };
}

/** The raw answer (status and text, byte for byte). */
async function raw(s: WorkServer, uid: string, path: string, body: unknown, key?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${uid}` };
  if (key) headers['idempotency-key'] = key;
  const r = await fetch(s.url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
}

/** The durable frames after the snapshot, as `event id` strings. */
function durable(sse: SseReader): string[] {
  return sse.frames.filter((f) => f.id !== undefined && f.event !== 'snapshot').map((f) => `${f.event} ${JSON.parse(f.data).id}`);
}

async function events(s: WorkServer, stream: string): Promise<Record<string, any>[]> {
  return (await s.store.read(stream, 0)).map((e) => JSON.parse(e.body));
}

export function workContractCases(store: string, open: Open, ready: (t: TestContext) => boolean = () => true): void {
  const run = (name: string, body: (s: WorkServer, access: TestAccess) => Promise<void>): void =>
    void test(`${store}: ${name}`, { timeout: 60_000 }, async (t) => {
      if (!ready(t)) return;
      const access = people();
      const s = await open(access);
      try {
        await body(s, access);
      } finally {
        await s.close();
      }
    });

  run('1. every Work mutation without an Idempotency-Key is a 400 naming the header, and stores nothing', async (s) => {
    const ann = client(s.url, 'ann');
    const { space, agent } = await spaceOf(ann, 'alpha', 'lap');
    const cmd = (await ann.post('/api/v2/commands', { project: 'alpha', agent, text: 'go' })).json.id as string;
    const sse = await openSse(`${s.url}/api/v2/events?project=alpha`, ann.auth);
    await sse.waitFor((f) => f.event === 'snapshot');
    const heads = async () => [await s.store.head('work:alpha'), await s.store.head('work:private:ann'), await s.store.head('work:spaces')];
    const before = await heads();
    const writes: [string, unknown][] = [
      ['/api/v2/conversations', { project: 'alpha', title: 'room' }],
      ['/api/v2/conversations/general/messages', { text: 'note' }],
      ['/api/v2/general/link', { project: 'alpha', message: 1 }],
      ['/api/v2/commands', { project: 'alpha', agent, text: 'again' }],
      [`/api/v2/commands/${cmd}/cancel?project=alpha`, {}],
      [`/api/v2/agents/${encodeURIComponent(agent)}/callable?project=alpha`, { callable: false }],
      ['/api/v2/spaces', { name: 'another' }],
      ['/api/v2/projects/alpha/spaces', { space }],
      [`/api/v2/projects/alpha/spaces/${space}/revoke`, {}],
      [`/api/v2/spaces/${space}/agents`, { agents: [{ session: 'sess-2', origin: 'bridge' }] }],
      [`/api/v2/spaces/${space}/executions`, { command: cmd, event: 'started' }],
    ];
    for (const [path, body] of writes) {
      for (let i = 0; i < 2; i++) {
        const r = await ann.postBare(path, body);
        assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.json)}`);
        assert.match(r.json.message, /Idempotency-Key header/, path);
      }
    }
    assert.deepEqual(await heads(), before, 'two identical unkeyed posts of each store nothing');
    // Terminal bytes are lossy, never stored: no key needed.
    assert.equal((await ann.postBare(`/api/v2/spaces/${space}/terminal`, { session: 'sess-1', data: 'x' })).status, 200);
    // The stream saw nothing of them: the next frame is the next keyed write's.
    const conv = (await ann.post('/api/v2/conversations', { project: 'alpha', title: 'keyed' })).json.id;
    await sse.waitFor((f) => f.event === 'conversation.changed' && JSON.parse(f.data).id === conv);
    assert.deepEqual(durable(sse), [`conversation.changed ${conv}`]);
    sse.close();
  });

  run('1. every stored event carries its actor from the transport, the Space\'s reports included', async (s) => {
    const ann = client(s.url, 'ann');
    const bob = client(s.url, 'bob');
    const { space, agent } = await spaceOf(ann, 'alpha', 'lap');
    const cmd = (await bob.post('/api/v2/commands', { project: 'alpha', agent, text: 'go' })).json.id as string;
    for (const [event, extra] of [['started', {}], ['blocked', { reason: 'Bash' }], ['resumed', {}], ['output', { text: 'hi' }], ['finished', { result: 'ok' }]] as const)
      assert.equal((await ann.post(`/api/v2/spaces/${space}/executions`, { command: cmd, event, ...extra })).status, 200, event);
    assert.equal((await ann.post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [] })).status, 200);
    const stored = await events(s, 'work:alpha');
    const types = new Set(stored.map((e) => e.type));
    for (const t of ['agent.observed', 'agent.ended', 'execution.started', 'execution.blocked', 'execution.resumed', 'execution.output', 'execution.finished']) assert.ok(types.has(t), t);
    for (const e of stored) {
      assert.ok(e.by && typeof e.by.uid === 'string' && typeof e.by.name === 'string', `${e.type} carries its actor: ${JSON.stringify(e)}`);
      if (e.type.startsWith('agent.') || e.type.startsWith('execution.')) assert.deepEqual(e.by, { uid: 'ann', name: 'Ann' }, e.type);
    }
  });

  run('2. a duplicate returns the first answer byte for byte, and stores and sends nothing', async (s) => {
    const ann = client(s.url, 'ann');
    const bob = client(s.url, 'bob');
    const { space, agent } = await spaceOf(ann, 'alpha', 'lap');
    const first = await raw(s, 'bob', '/api/v2/commands', { project: 'alpha', agent, text: 'one' }, 'k-one');
    assert.equal(first.status, 200, first.text);
    const one = JSON.parse(first.text).id as string;
    const started = await raw(s, 'ann', `/api/v2/spaces/${space}/executions`, { command: one, event: 'started' }, `${one}:started`);
    assert.equal(started.status, 200, started.text);
    // The world moves on: another command waits, the first finishes.
    await bob.post('/api/v2/commands', { project: 'alpha', agent, text: 'two' });
    assert.equal((await ann.post(`/api/v2/spaces/${space}/executions`, { command: one, event: 'finished', result: 'ok' })).status, 200);
    const sse = await openSse(`${s.url}/api/v2/events?project=alpha`, bob.auth);
    await sse.waitFor((f) => f.event === 'snapshot');
    const head = await s.store.head('work:alpha');
    const again = await raw(s, 'bob', '/api/v2/commands', { project: 'alpha', agent, text: 'one' }, 'k-one');
    assert.deepEqual(again, first, 'the command as it was queued: its position, status and queue then');
    assert.deepEqual(await raw(s, 'ann', `/api/v2/spaces/${space}/executions`, { command: one, event: 'started' }, `${one}:started`), started, 'running, as when it started');
    const conv = await raw(s, 'bob', '/api/v2/conversations', { project: 'alpha', title: 'room' }, 'k-room');
    assert.deepEqual(await raw(s, 'bob', '/api/v2/conversations', { project: 'alpha', title: 'room' }, 'k-room'), conv);
    const space2 = await raw(s, 'ann', '/api/v2/spaces', { name: 'box' }, 'k-box');
    assert.deepEqual(await raw(s, 'ann', '/api/v2/spaces', { name: 'box' }, 'k-box'), space2, 'a registration too (`duplicate` as the first said)');
    assert.equal(await s.store.head('work:alpha'), head + 1, 'only the new conversation was stored');
    const id = JSON.parse(conv.text).id;
    await sse.waitFor((f) => f.event === 'conversation.changed' && JSON.parse(f.data).id === id);
    assert.deepEqual(durable(sse), [`conversation.changed ${id}`], 'a duplicate sends no frame');
    sse.close();
  });

  run("3. a refusal about the state of the world does not stick to its key (the bridge's `<command>:started`)", async (s) => {
    const ann = client(s.url, 'ann');
    const bob = client(s.url, 'bob');
    const { space, agent } = await spaceOf(ann, 'alpha', 'lap');
    const one = (await bob.post('/api/v2/commands', { project: 'alpha', agent, text: 'one' })).json.id as string;
    const two = (await bob.post('/api/v2/commands', { project: 'alpha', agent, text: 'two' })).json.id as string;
    // The bridge's own connection and key scheme (`<command>:<event>`).
    const conn = new Connection({ server: s.url, token: 'ann', name: 'lap', log: () => {} });
    const link = new SpaceLink({ conn, name: 'lap', log: () => {}, observations: () => [], onDue: () => {} });
    link.id = space;
    try {
      assert.equal((await link.execution(one, 'started')).status, 200);
      const sse = await openSse(`${s.url}/api/v2/events?project=alpha`, bob.auth);
      await sse.waitFor((f) => f.event === 'snapshot');
      // Too early: `two` is not the head of an idle agent yet.
      const early = await link.execution(two, 'started');
      assert.equal(early.status, 409, JSON.stringify(early.json));
      assert.equal((await link.execution(one, 'finished', { result: 'ok' })).status, 200);
      // Now it is: the same key is a new, valid attempt.
      const late = await link.execution(two, 'started');
      assert.equal(late.status, 200, JSON.stringify(late.json));
      assert.equal(late.json?.state, 'running');
      await sse.waitFor((f) => f.event === 'execution.changed' && JSON.parse(f.data).id === `x-${two}`);
      assert.equal((await bob.get(`/api/v2/executions/x-${two}?project=alpha`)).json.item.state, 'running');
      // And the key that went through answers as it did, whatever the state now.
      assert.equal((await link.execution(two, 'finished', { result: 'done' })).status, 200);
      assert.deepEqual(await link.execution(two, 'started'), late);
      sse.close();
    } finally {
      conn.close();
    }
    // A refusal about the request itself is answered the same however often it is sent.
    for (let i = 0; i < 2; i++) assert.equal((await client(s.url, 'vic').post('/api/v2/commands', { project: 'alpha', agent, text: 'x' }, 'k-vic')).status, 403);
  });

  run("4. removing a member revokes their Spaces there (queued commands cancelled, the reason in the chat); a removed owner still revokes their Space everywhere", async (s, access) => {
    access.setRole('beta', 'bob', 'editor', 'eve');
    const ann = client(s.url, 'ann');
    const bob = client(s.url, 'bob');
    const { space, agent } = await spaceOf(bob, 'alpha', "Bob's box");
    assert.equal((await bob.post('/api/v2/projects/beta/spaces', { space })).status, 200);
    const queued: string[] = [];
    for (const text of ['one', 'two']) queued.push((await ann.post('/api/v2/commands', { project: 'alpha', agent, text })).json.id as string);
    const sse = await openSse(`${s.url}/api/v2/events?project=alpha`, ann.auth);
    await sse.waitFor((f) => f.event === 'snapshot');
    access.setRole('alpha', 'bob', null, 'ann');
    await sse.waitFor((f) => f.event === 'project.changed' && JSON.parse(f.data).id === space);
    await sse.waitFor((f) => f.event === 'agent.changed' && JSON.parse(f.data).id === agent);
    const snap = (await ann.get('/api/v2/snapshot?project=alpha')).json;
    const sp = snap.spaces.find((x: any) => x.id === space);
    assert.equal(sp.contributed, false);
    assert.match(sp.revokedWhy, /its owner Bob was removed from the project/);
    assert.deepEqual(snap.commands.filter((c: any) => queued.includes(c.id)).map((c: any) => c.status), ['cancelled', 'cancelled']);
    const chat = (await ann.get(`/api/v2/conversations/${encodeURIComponent('agent:' + agent)}?project=alpha`)).json.item;
    assert.match(chat.messages.at(-1).text, /Bob's box was revoked by Ann \(its owner Bob was removed from the project\): 2 queued command\(s\) cancelled/, 'the senders see why');
    assert.equal(chat.messages.filter((m: any) => m.kind === 'prompt').length, 2, 'the chat is kept');
    const refused = await ann.post('/api/v2/commands', { project: 'alpha', agent, text: 'three' });
    assert.equal(refused.status, 409, JSON.stringify(refused.json));
    // Bob, no longer a member of alpha, may still revoke what is his: alpha's is revoked already (409, not 403) ...
    const again = await bob.post(`/api/v2/projects/alpha/spaces/${space}/revoke`);
    assert.equal(again.status, 409, JSON.stringify(again.json));
    assert.equal((await client(s.url, 'eve').post(`/api/v2/projects/alpha/spaces/${space}/revoke`)).status, 403, 'a stranger may not');
    // ... and everywhere at once.
    const beta = await s.store.head('work:beta');
    const all = await raw(s, 'bob', `/api/v2/spaces/${space}/revoke`, {}, 'k-all');
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(JSON.parse(all.text), { space, revoked: ['beta'] });
    assert.deepEqual(await raw(s, 'bob', `/api/v2/spaces/${space}/revoke`, {}, 'k-all'), all, 'a retry: the same answer, nothing stored');
    assert.equal(await s.store.head('work:beta'), beta + 1);
    assert.equal((await client(s.url, 'eve').get('/api/v2/snapshot?project=beta')).json.spaces.find((x: any) => x.id === space).contributed, false);
    sse.close();
  });

  run('5. membership and role changes are durable project.changed events: the stream alone says who may do what at each position', async (s, access) => {
    const bob = client(s.url, 'bob');
    const { agent } = await spaceOf(client(s.url, 'ann'), 'alpha', 'lap');
    const sse = await openSse(`${s.url}/api/v2/events?project=alpha`, client(s.url, 'ann').auth);
    await sse.waitFor((f) => f.event === 'snapshot');
    const cmd = await bob.post('/api/v2/commands', { project: 'alpha', agent, text: 'as an editor' });
    assert.equal(cmd.status, 200);
    access.setRole('alpha', 'bob', 'viewer', 'ann');
    const demoted = await sse.waitFor((f) => f.event === 'project.changed' && JSON.parse(f.data).id === 'member:bob');
    assert.deepEqual(Object.keys(JSON.parse(demoted.data)).sort(), ['id', 'rev'], "the contract's shape: identity and revision");
    access.setRole('alpha', 'vic', null, 'ann');
    await sse.waitFor((f) => f.event === 'project.changed' && JSON.parse(f.data).id === 'member:vic');
    const stored = await s.store.read('work:alpha', 0);
    // The stream alone, folded position by position.
    const at: Map<number, WorkState['members']> = new Map();
    const st = emptyWork();
    for (const e of stored) {
      applyWork(st, JSON.parse(e.body), e.position);
      at.set(e.position, new Map(st.members));
    }
    const roles = (pos: number) => Object.fromEntries([...at.get(pos)!].map(([uid, m]) => [uid, m.role]));
    const queuedAt = stored.find((e) => JSON.parse(e.body).id === cmd.json.id)!.position;
    assert.deepEqual(roles(queuedAt), { ann: 'owner', bob: 'editor', vic: 'viewer' }, 'bob queued it as an editor');
    assert.deepEqual(roles(stored.at(-1)!.position), { ann: 'owner', bob: 'viewer' });
    const changes = stored.map((e) => JSON.parse(e.body)).filter((e) => e.type === 'member.changed');
    assert.deepEqual(changes.slice(-2).map((e) => [e.uid, e.role, e.by.name]), [['bob', 'viewer', 'Ann'], ['vic', null, 'Ann']]);
    assert.deepEqual((await bob.get('/api/v2/snapshot?project=alpha')).json.members.map((m: any) => [m.uid, m.role]).sort(), [['ann', 'owner'], ['bob', 'viewer']]);
    // Nothing new to say: nothing stored (a restart, another node).
    const head = await s.store.head('work:alpha');
    await s.work.syncMembers('alpha', { uid: 'roost', name: 'Roost' });
    assert.equal(await s.store.head('work:alpha'), head);
    sse.close();
  });
}
