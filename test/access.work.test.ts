// Work's endpoints (/api/v2) behind the same access layer as every other app:
// each role allowed what it may do and refused the rest, a token only in its
// project, and a removed member's Work streams closed at once.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { answer, tempDir } from './support/server.js';
import { openSse } from './support/sse.js';

interface Caller {
  cookie?: string;
  token?: string;
  uid?: string;
}

async function call(url: string, who: Caller, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = crypto.randomUUID();
  if (who.cookie) (headers.cookie = who.cookie), (headers.origin = url);
  if (who.token) headers.authorization = `Bearer ${who.token}`;
  const r = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return answer(r);
}

async function login(url: string, login: string, password: string): Promise<Caller> {
  const r = await fetch(url + '/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login, password }) });
  assert.equal(r.status, 200);
  const uid = ((await r.json())).user.uid;
  return { cookie: /roost_session=[^;]+/.exec(r.headers.get('set-cookie') ?? '')![0], uid };
}

const RANK: Record<string, number> = { anon: 0, outsider: 0, viewer: 1, editor: 2, owner: 3 };

describe('Work (/api/v2) by role in shared mode', () => {
  let srv: Roost;
  const as: Record<string, Caller> = { anon: {} };
  before(async () => {
    const dir = tempDir();
    const store = new SqliteStore({ path: join(dir, 'roost.db') });
    await createOwner(store, 'ann', 'ann-password', 'Ann');
    srv = await startRoost(store, { port: 0 });
    as.owner = await login(srv.url, 'ann', 'ann-password');
    for (const [name, role] of [['bob', 'editor'], ['carol', 'viewer'], ['dave', null]] as const) {
      const r = await call(srv.url, as.owner, 'POST', '/users', { login: name, password: `${name}-password`, ...(role ? { project: 'default', role } : {}) });
      assert.equal(r.status, 201);
    }
    as.editor = await login(srv.url, 'bob', 'bob-password');
    as.viewer = await login(srv.url, 'carol', 'carol-password');
    as.outsider = await login(srv.url, 'dave', 'dave-password');
  });
  after(() => srv.close());

  const q = '?project=default';
  const ENDPOINTS: [string, string, unknown, string][] = [
    ['GET', `/api/v2/snapshot${q}`, undefined, 'viewer'],
    ['GET', `/api/v2/events${q}`, undefined, 'viewer'],
    ['GET', `/api/v2/live${q}`, undefined, 'viewer'],
    ['GET', `/api/v2/conversations/c-none${q}`, undefined, 'viewer'],
    ['GET', `/api/v2/agents/a-none${q}`, undefined, 'viewer'],
    ['GET', `/api/v2/executions/x-none${q}`, undefined, 'viewer'],
    ['GET', `/api/v2/results/r-none${q}`, undefined, 'viewer'],
    ['POST', `/api/v2/conversations${q}`, { title: 'Plans' }, 'editor'],
    ['POST', `/api/v2/conversations/c-none/messages${q}`, { text: 'hello' }, 'editor'],
    ['POST', `/api/v2/general/link${q}`, { message: 1 }, 'editor'],
    ['POST', `/api/v2/commands${q}`, { agent: 'a-none', text: 'do it' }, 'editor'],
    ['POST', `/api/v2/commands/k-none/cancel${q}`, {}, 'editor'],
    ['POST', `/api/v2/agents/a-none/callable${q}`, { callable: true }, 'editor'],
    ['POST', `/api/v2/projects/default/spaces`, { space: 'sp-none' }, 'editor'],
    ['POST', `/api/v2/projects/default/spaces/sp-none/revoke`, undefined, 'viewer'],
  ];

  for (const [method, path, body, min] of ENDPOINTS) {
    test(`${method} ${path.split('?')[0]}: ${min} and above may, the rest get 401/403`, async () => {
      for (const role of ['anon', 'outsider', 'viewer', 'editor', 'owner']) {
        const who = as[role];
        let status: number;
        let json: any = null;
        if (method === 'GET' && /\/(events|live)\?/.test(path)) {
          const ac = new AbortController();
          const r = await fetch(srv.url + path, { headers: who.cookie ? { cookie: who.cookie } : {}, signal: ac.signal });
          status = r.status;
          if (status !== 200) json = await r.json();
          ac.abort();
        } else ({ status, json } = await call(srv.url, who, method, path, body));
        if (RANK[role] >= RANK[min]) assert.ok(status !== 401 && status !== 403, `${role} may ${method} ${path}: got ${status} ${JSON.stringify(json)}`);
        else {
          assert.equal(status, role === 'anon' ? 401 : 403, `${role} may not ${method} ${path}: got ${status} ${JSON.stringify(json)}`);
          assert.ok(typeof json?.message === 'string' && json.message.length > 10, 'the refusal says why');
        }
      }
    });
  }

  test('Spaces: nobody without credentials; a Space acts only for its owner', async () => {
    for (const [m, path, body] of [
      ['GET', '/api/v2/spaces', undefined],
      ['POST', '/api/v2/spaces', { name: 'laptop' }],
      ['GET', '/api/v2/projects', undefined],
      ['POST', '/api/v2/spaces/sp-x/agents', { agents: [] }],
    ] as const) {
      const r = await call(srv.url, as.anon, m, path, body);
      assert.equal(r.status, 401, `${m} ${path}`);
    }
    const made = await call(srv.url, as.viewer, 'POST', '/api/v2/spaces', { name: 'carol-laptop' });
    assert.ok(made.status === 200 || made.status === 201, JSON.stringify(made.json));
    const id = made.json.id ?? made.json.space?.id ?? made.json.space;
    const other = await call(srv.url, as.editor, 'POST', `/api/v2/spaces/${id}/agents`, { agents: [] });
    assert.equal(other.status, 403, "another member's bridge may not report for carol's Space");
  });

  test('a token reaches Work only in its own project, and a removed member’s Work streams close at once', async () => {
    const side = await call(srv.url, as.owner, 'POST', '/projects', { id: 'side' });
    assert.equal(side.status, 201);
    const made = await call(srv.url, as.editor, 'POST', '/tokens', { project: 'default', role: 'editor' });
    const tok: Caller = { token: made.json.secret };
    assert.equal((await call(srv.url, tok, 'GET', `/api/v2/snapshot${q}`)).status, 200);
    assert.equal((await call(srv.url, tok, 'GET', '/api/v2/snapshot?project=side')).status, 403);
    assert.equal((await call(srv.url, tok, 'POST', '/api/v2/conversations?project=side', { title: 'x' })).status, 403);

    const events = await openSse(`${srv.url}/api/v2/events${q}`, { cookie: as.editor.cookie! });
    const tokenEvents = await openSse(`${srv.url}/api/v2/events${q}`, { authorization: `Bearer ${tok.token}` });
    await events.waitFor(() => true);
    await tokenEvents.waitFor(() => true);
    const gone = await call(srv.url, as.owner, 'DELETE', `/projects/default/members/${as.editor.uid}`);
    assert.equal(gone.status, 200);
    for (const s of [events, tokenEvents]) {
      const err = await s.waitFor((f) => f.event === 'error', 2000);
      assert.match(JSON.parse(err.data).reason, /no longer a member/);
      await s.ended;
    }
    assert.equal((await call(srv.url, as.editor, 'GET', `/api/v2/snapshot${q}`)).status, 403);
    assert.equal((await call(srv.url, tok, 'POST', `/api/v2/conversations${q}`, { title: 'late' })).status, 403);
  });
});
