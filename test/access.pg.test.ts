// Shared mode on two nodes over one PostgreSQL database: identity is folded
// on every node, so a sign-in made on one node works on the other, and a
// removal or a revocation made on one node closes the streams held on the
// other, at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/storage/index.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { openSse } from './support/sse.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { tempDir } from './support/server.js';

const reachable = await pgReachable();

async function call(url: string, headers: Record<string, string>, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; cookie: string | null }> {
  const h: Record<string, string> = { ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  if (h.cookie && method !== 'GET') h.origin = url;
  const r = await fetch(url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, cookie: /roost_session=[^;]+/.exec(r.headers.get('set-cookie') ?? '')?.[0] ?? null };
}

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('shared mode on two PostgreSQL nodes', { timeout: 60_000 }, () => {
  const db = freshSchema('roost_access');
  let a: Roost;
  let b: Roost;

  before(async () => {
    if (!reachable) return;
    const s1 = await openStore({ db: db.url, dataDir: tempDir() });
    await createOwner(s1, 'ann', 'ann-password', 'Ann');
    a = await startRoost(s1, { port: 0 });
    b = await startRoost(await openStore({ db: db.url, dataDir: tempDir() }), { port: 0 });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (reachable) await db.drop();
  });

  test('an account made on node A signs in on node B; removal on A closes B’s streams; a token revoked on B stops on A', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const ann = { cookie: (await call(a.url, {}, 'POST', '/auth/login', { login: 'ann', password: 'ann-password' })).cookie! };
    assert.equal((await call(a.url, ann, 'POST', '/users', { login: 'bob', password: 'bob-password', project: 'default', role: 'editor' })).status, 201);
    // B hears of bob through the commit wake-up.
    let bobCookie: string | null = null;
    await waitFor('node B to know bob', async () => {
      const r = await call(b.url, {}, 'POST', '/auth/login', { login: 'bob', password: 'bob-password' });
      bobCookie = r.cookie;
      return r.status === 200;
    });
    const bob = { cookie: bobCookie! };
    const made = await call(b.url, bob, 'POST', '/tokens', { project: 'default', role: 'editor' });
    assert.equal(made.status, 201);
    const tok = { authorization: `Bearer ${made.json.secret}` };
    await waitFor('node A to know the token', async () => (await call(a.url, tok, 'GET', '/state')).status === 200);

    const onB = await openSse(b.url + '/stream', bob);
    await onB.waitFor((f) => f.event === 'snapshot');
    const tokOnA = await openSse(a.url + '/approvals/stream', tok);
    await tokOnA.waitFor((f) => f.event === 'snapshot');

    // Revoke on B: the token's stream on A closes.
    assert.equal((await call(b.url, bob, 'DELETE', `/tokens/${made.json.token.id}`)).status, 200);
    const revoked = await tokOnA.waitFor((f) => f.event === 'error', 3000);
    assert.match(JSON.parse(revoked.data).reason, /revoked/);
    assert.equal((await call(a.url, tok, 'GET', '/state')).status, 401);

    // Remove on A: bob's stream on B closes, and B refuses him.
    const t0 = Date.now();
    assert.equal((await call(a.url, ann, 'DELETE', `/projects/default/members/bob`)).status, 200);
    const err = await onB.waitFor((f) => f.event === 'error', 3000);
    assert.match(JSON.parse(err.data).reason, /no longer a member/);
    await onB.ended;
    t.diagnostic(`removal on node A closed the stream on node B in ${Date.now() - t0} ms`);
    assert.equal((await call(b.url, bob, 'GET', '/state')).status, 403);
  });
});
