// Idempotency keys and store errors through the HTTP API (issue 12 part 4):
// what a client retrying a request, or reusing a key by mistake, sees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';

test('a store that cannot write answers 503 unavailable (retry later with the same key), not 500', async () => {
  const srv = await inProcess();
  try {
    assert.equal((await post(srv.url, { type: 'join', agent: 'a1' })).status, 200);
    await srv.store.close(); // what a node sees while its database is gone or it is shutting down
    const r = await post(srv.url, { type: 'join', agent: 'a2' }, { 'idempotency-key': 'k-503' });
    assert.equal(r.status, 503);
    assert.equal(r.json.kind, 'unavailable');
    assert.match(r.json.message, /retry/);
  } finally {
    await srv.close();
  }
});

type Server = Awaited<ReturnType<typeof inProcess>>;

/** A POST with JSON and an Idempotency-Key; fails the test if no answer comes within `ms` (a request must never hang). */
async function keyed(srv: Server, path: string, body: unknown, key: string, ms = 5000): Promise<{ status: number; json: any }> {
  const r = await fetch(srv.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ms),
  }).catch((e: Error) => assert.fail(`POST ${path} got no answer within ${ms} ms (${e.name})`));
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

async function getJson(srv: Server, path: string): Promise<any> {
  const r = await fetch(srv.url + path);
  assert.equal(r.status, 200, `${path} answered ${r.status}`);
  return r.json();
}

/** The fleet board's paths for a thread of a project. */
const fleet = (thread: string, project?: string, what = '') => `/fleet/${thread}${what}${project ? `?project=${project}` : ''}`;
const floor = (project?: string) => `/events${project ? `?project=${project}` : ''}`;

test('issue 12: the same key on the same thread name in two projects: both requests are answered and stored', async () => {
  const srv = await inProcess();
  try {
    const spawn = await keyed(srv, fleet('t'), { type: 'session.spawn', id: 'a1', session: 'first' }, 'K1');
    assert.equal(spawn.status, 200, JSON.stringify(spawn.json));
    // Project p's thread t is another board: its key K1 is its own (it once waited forever for a position of the default board).
    const start = await keyed(srv, fleet('t', 'p', '/requests'), { type: 'request.start', id: 'yy', session: 'second' }, 'K1');
    assert.equal(start.status, 200, JSON.stringify(start.json));
    assert.deepEqual([start.json.id, start.json.position, start.json.duplicate], ['yy', 1, false]);
    // A retry of each is recognised in its own project.
    const again = await keyed(srv, fleet('t', 'p', '/requests'), { type: 'request.start', id: 'yy', session: 'second' }, 'K1');
    assert.deepEqual([again.status, again.json.id, again.json.position, again.json.duplicate], [200, 'yy', 1, true]);
    assert.deepEqual((await keyed(srv, fleet('t'), { type: 'session.spawn', id: 'a1', session: 'first' }, 'K1')).json.duplicate, true);
  } finally {
    await srv.close();
  }
});

test('issue 12: key "p:K" on the default floor does not swallow project p\'s event with key "K"', async () => {
  const srv = await inProcess();
  try {
    const d = await keyed(srv, floor(), { type: 'join', agent: 'default-agent' }, 'p:K');
    assert.deepEqual([d.status, d.json.duplicate], [200, false]);
    const p = await keyed(srv, floor('p'), { type: 'join', agent: 'p-agent' }, 'K');
    assert.deepEqual([p.status, p.json.first, p.json.duplicate], [200, 1, false], 'stored on project p\'s floor, not taken for a retry');
    const st = await getJson(srv, '/state?project=p');
    assert.deepEqual(st.agents.map((a: any) => a.id), ['p-agent']);
    assert.deepEqual((await getJson(srv, '/state')).agents.map((a: any) => a.id), ['default-agent']);
  } finally {
    await srv.close();
  }
});
