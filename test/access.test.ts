// Shared mode through the HTTP API of a real in-process server: who may do
// what in a project, on every endpoint of the floor, the board, approvals,
// hooks and identity itself; sign-in, cookies, the Origin check, tokens, live
// streams that close when access goes, idempotency, limits; and local mode
// left as it was.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost, type Roost, type RoostConfig } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { inProcess, tempDir } from './support/server.js';
import { openSse, type SseReader } from './support/sse.js';

type Res = { status: number; json: any; headers: Headers };

/** Somebody calling the server: a cookie (a person), a bearer token, or nothing. */
interface Caller {
  cookie?: string;
  token?: string;
  uid?: string;
}

const ANON: Caller = {};

async function sharedServer(cfg: Partial<RoostConfig> = {}): Promise<Roost & { owner: Caller }> {
  const dir = tempDir();
  const store = new SqliteStore({ path: join(dir, 'roost.db') });
  const { uid } = await createOwner(store, 'ann', 'ann-password', 'Ann');
  const roost = await startRoost(store, { port: 0, ...cfg });
  const owner = await login(roost.url, 'ann', 'ann-password');
  assert.equal(owner.uid, uid);
  return Object.assign(roost, { owner });
}

async function call(url: string, who: Caller, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Res> {
  const headers: Record<string, string> = { ...extra };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (who.cookie) {
    headers.cookie = who.cookie;
    // A browser sends its page's Origin with every write.
    if (method !== 'GET' && !('origin' in extra)) headers.origin = url;
  }
  if (who.token) headers.authorization = `Bearer ${who.token}`;
  if (extra.origin === '') delete headers.origin;
  const r = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, headers: r.headers };
}

async function login(url: string, loginName: string, password: string): Promise<Caller> {
  const r = await call(url, ANON, 'POST', '/auth/login', { login: loginName, password });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const set = r.headers.get('set-cookie') ?? '';
  const m = /roost_session=([^;]+)/.exec(set);
  assert.ok(m, 'the sign-in sets the session cookie');
  return { cookie: `roost_session=${m[1]}`, uid: r.json.user.uid };
}

async function makeUser(srv: Roost & { owner: Caller }, loginName: string, project: string | null, role?: string): Promise<Caller> {
  const r = await call(srv.url, srv.owner, 'POST', '/users', { login: loginName, name: loginName[0].toUpperCase() + loginName.slice(1), password: `${loginName}-password`, ...(project ? { project, role } : {}) });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return login(srv.url, loginName, `${loginName}-password`);
}

async function mintToken(srv: Roost, who: Caller, project: string, role: string, label = 'test'): Promise<Caller> {
  const r = await call(srv.url, who, 'POST', '/tokens', { project, role, label });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  assert.match(r.json.secret, /^rst_/);
  return { token: r.json.secret, uid: who.uid };
}

async function stream(url: string, who: Caller, path: string): Promise<SseReader> {
  const headers: Record<string, string> = {};
  if (who.cookie) headers.cookie = who.cookie;
  if (who.token) headers.authorization = `Bearer ${who.token}`;
  return openSse(url + path, headers);
}

const RANK: Record<string, number> = { anon: 0, outsider: 0, viewer: 1, editor: 2, owner: 3 };

describe('shared mode: every endpoint of the floor, the board, approvals and hooks, by role', () => {
  let srv: Roost & { owner: Caller };
  const as: Record<string, Caller> = {};
  before(async () => {
    srv = await sharedServer();
    as.owner = srv.owner;
    as.editor = await makeUser(srv, 'bob', 'default', 'editor');
    as.viewer = await makeUser(srv, 'carol', 'default', 'viewer');
    as.outsider = await makeUser(srv, 'dave', null);
    as.anon = ANON;
  });
  after(() => srv.close());

  // [method, path, body, minimum role]. "Allowed" means neither 401 nor 403;
  // some allowed calls still answer 404 (no such approval) or 409.
  const ENDPOINTS: [string, string, unknown, string][] = [
    ['GET', '/state', undefined, 'viewer'],
    ['GET', '/stream', undefined, 'viewer'],
    ['POST', '/events', { type: 'status', agent: 'bot-1', status: 'working' }, 'editor'],
    ['POST', '/reset', undefined, 'owner'],
    ['GET', '/approvals', undefined, 'viewer'],
    ['GET', '/approvals/stream', undefined, 'viewer'],
    ['GET', '/approvals/ap_none', undefined, 'viewer'],
    ['POST', '/approvals/ap_none/decision', { decision: 'allow' }, 'editor'],
    ['GET', '/fleet/t1', undefined, 'viewer'],
    ['GET', '/fleet/t1/stream', undefined, 'viewer'],
    ['POST', '/fleet/t1', { type: 'session.spawn', id: 's-perm', session: 'perm', flavor: 'plain', root: '~/x' }, 'editor'],
    ['POST', '/fleet/t1/requests', { type: 'request.start', root: '~/x' }, 'editor'],
    ['POST', '/fleet/t1/live', { type: 'session.stream', id: 'nope', text: 'x' }, 'editor'],
    ['POST', '/hooks/claude-code', { session_id: 'hook-perm', hook_event_name: 'SessionStart', cwd: '/tmp/x', source: 'startup' }, 'editor'],
  ];

  for (const [method, path, body, min] of ENDPOINTS) {
    test(`${method} ${path}: ${min} and above may, the rest get 401/403 with a message`, async () => {
      for (const role of ['anon', 'outsider', 'viewer', 'editor', 'owner']) {
        const isStream = path.endsWith('/stream');
        const who = as[role];
        let status: number;
        let json: any = null;
        if (isStream) {
          const ac = new AbortController();
          const h: Record<string, string> = {};
          if (who.cookie) h.cookie = who.cookie;
          const r = await fetch(srv.url + path, { headers: h, signal: ac.signal });
          status = r.status;
          if (status !== 200) json = await r.json();
          ac.abort();
        } else ({ status, json } = await call(srv.url, who, method, path, body));
        const allowed = RANK[role] >= RANK[min];
        if (allowed) assert.ok(status !== 401 && status !== 403, `${role} may ${method} ${path}, got ${status} ${JSON.stringify(json)}`);
        else {
          assert.equal(status, role === 'anon' ? 401 : 403, `${role} may not ${method} ${path}`);
          assert.equal(typeof json.message, 'string');
          assert.ok(json.message.length > 10, 'the refusal says why');
          if (role !== 'anon' && role !== 'outsider') assert.match(json.message, new RegExp(`needs the ${min} role`));
          if (role === 'outsider') assert.match(json.message, /not a member of project "default"/);
        }
      }
    });
  }

  test('identity endpoints: each refuses who may not, with 401 or 403', async () => {
    const cases: [Caller, string, string, unknown, number][] = [
      [ANON, 'GET', '/auth/me', undefined, 401],
      [ANON, 'GET', '/projects', undefined, 401],
      [ANON, 'POST', '/projects', { id: 'x1' }, 401],
      [ANON, 'GET', '/tokens', undefined, 401],
      [ANON, 'POST', '/users', { login: 'eve', password: 'eve-password' }, 401],
      [as.editor, 'POST', '/users', { login: 'eve', password: 'eve-password' }, 403],
      [as.editor, 'POST', '/auth/invites', { project: 'default', role: 'viewer' }, 403],
      [as.outsider, 'POST', '/auth/invites', {}, 403],
      [as.viewer, 'PUT', `/projects/default/members/${as.outsider.uid}`, { role: 'viewer' }, 403],
      [as.editor, 'DELETE', `/projects/default/members/${as.viewer.uid}`, undefined, 403],
      [as.outsider, 'GET', '/projects/default/members', undefined, 403],
      [as.outsider, 'GET', `/projects/default/members/${as.viewer.uid}`, undefined, 403],
      [as.viewer, 'POST', '/tokens', { project: 'default', role: 'editor' }, 403],
      [as.outsider, 'POST', '/tokens', { project: 'default', role: 'viewer' }, 403],
    ];
    for (const [who, method, path, body, want] of cases) {
      const r = await call(srv.url, who, method, path, body);
      assert.equal(r.status, want, `${method} ${path} → ${r.status} ${JSON.stringify(r.json)}`);
      assert.ok(typeof r.json?.message === 'string' && r.json.message.length > 10);
    }
    // And the allowed side of the same endpoints.
    assert.equal((await call(srv.url, as.viewer, 'GET', '/projects/default/members')).status, 200);
    assert.equal((await call(srv.url, as.viewer, 'GET', `/projects/default/members/${as.editor.uid}`)).json.role, 'editor');
    assert.equal((await call(srv.url, as.viewer, 'GET', '/projects/default/members/bob')).json.uid, as.editor.uid, 'a member is named by uid or login');
    assert.equal((await call(srv.url, as.viewer, 'POST', '/tokens', { project: 'default', role: 'viewer' })).status, 201);
    const me = await call(srv.url, as.editor, 'GET', '/auth/me');
    assert.deepEqual([me.json.mode, me.json.kind, me.json.user.login, me.json.projects.map((p: any) => `${p.id}:${p.role}`)], ['shared', 'person', 'bob', ['default:editor']]);
  });

  test('projects scope the apps: a second project has its own floor, visible only to its members', async () => {
    const made = await call(srv.url, as.editor, 'POST', '/projects', { name: 'Side Quest' });
    assert.equal(made.status, 201);
    assert.deepEqual(made.json.project, { id: 'side-quest', name: 'Side Quest', role: 'owner' });
    const p = await call(srv.url, as.editor, 'POST', '/events?project=side-quest', { type: 'status', agent: 'side-bot', status: 'working' });
    assert.equal(p.status, 200);
    const side = await call(srv.url, as.editor, 'GET', '/state', undefined, { 'roost-project': 'side-quest' });
    assert.deepEqual(side.json.agents.map((a: any) => a.id), ['side-bot']);
    const main = await call(srv.url, as.editor, 'GET', '/state');
    assert.ok(!main.json.agents.some((a: any) => a.id === 'side-bot'), 'the default floor does not show another project');
    // The owner of `default` is not a member of side-quest.
    assert.equal((await call(srv.url, as.owner, 'GET', '/state?project=side-quest')).status, 403);
    assert.equal((await call(srv.url, as.viewer, 'GET', '/projects')).json.projects.some((x: any) => x.id === 'side-quest'), false);
    assert.equal((await call(srv.url, as.editor, 'POST', '/projects', { id: 'side-quest' })).status, 409);
  });

  test('a token is shown once and works only in its project and up to its role', async () => {
    const made = await call(srv.url, as.editor, 'POST', '/tokens', { project: 'default', role: 'viewer', label: 'laptop' });
    assert.equal(made.status, 201);
    const secret = made.json.secret;
    const list = await call(srv.url, as.editor, 'GET', '/tokens');
    const listed = list.json.tokens.find((t: any) => t.id === made.json.token.id);
    assert.deepEqual([listed.label, listed.role, listed.project, listed.revoked], ['laptop', 'viewer', 'default', false]);
    assert.ok(!JSON.stringify(list.json).includes(secret), 'the secret is never listed');
    assert.ok(!JSON.stringify(await srv.store.read('identity', 0, 10_000)).includes(secret), 'the secret is not in the log');
    const tok: Caller = { token: secret };
    assert.equal((await call(srv.url, tok, 'GET', '/state')).status, 200);
    const w = await call(srv.url, tok, 'POST', '/events', { type: 'status', agent: 'x', status: 'idle' });
    assert.equal(w.status, 403, 'a viewer token cannot write, even for an editor');
    assert.equal((await call(srv.url, tok, 'GET', '/state?project=side-quest')).status, 403, 'another project is refused');
    assert.match((await call(srv.url, tok, 'GET', '/state?project=side-quest')).json.message, /scoped to project "default"/);
    assert.equal((await call(srv.url, tok, 'POST', '/projects', { id: 'from-token' })).status, 403, 'a token cannot create projects');
    assert.equal((await call(srv.url, tok, 'POST', '/tokens', { project: 'default' })).status, 403, 'a token cannot mint tokens');
    const me = await call(srv.url, tok, 'GET', '/auth/me');
    assert.deepEqual([me.json.kind, me.json.user.login, me.json.scope], ['token', 'bob', { project: 'default', role: 'viewer' }]);
    // An editor token writes, attributed to its maker.
    const ed = await mintToken(srv, as.editor, 'default', 'editor');
    const ok = await call(srv.url, ed, 'POST', '/fleet/t2', { type: 'session.spawn', id: 's-tok', session: 'tok', flavor: 'plain', root: '~/t' });
    assert.equal(ok.status, 200);
    const [stored] = await srv.store.read('sessions:t2', 0, 1);
    assert.equal(JSON.parse(stored.body).name, 'Bob', 'identity comes from the token, not the payload');
    assert.equal(JSON.parse(stored.body).uid, as.editor.uid);
    // Wrong or garbled tokens are nobody.
    assert.equal((await call(srv.url, { token: 'rst_nope' }, 'GET', '/state')).status, 401);
  });

  test('cookies are HttpOnly SameSite; a cookie write needs our Origin; a token write does not', async () => {
    const r = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'bob', password: 'bob-password' });
    const set = r.headers.get('set-cookie')!;
    assert.match(set, /HttpOnly/);
    assert.match(set, /SameSite=(Lax|Strict)/);
    assert.match(set, /Path=\//);
    assert.equal((await call(srv.url, ANON, 'POST', '/auth/login', { login: 'bob', password: 'wrong-password' })).status, 401);
    const csrf = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'bob', password: 'bob-password' }, { origin: 'https://evil.example' });
    assert.equal(csrf.status, 403, 'a foreign page cannot sign a browser in');
    assert.equal(csrf.headers.get('set-cookie'), null);
    assert.equal((await call(srv.url, ANON, 'POST', '/auth/login', { login: 'nobody', password: 'wrong-password' })).status, 401);
    const ev = { type: 'status', agent: 'origin-bot', status: 'working' };
    const none = await call(srv.url, as.editor, 'POST', '/events', ev, { origin: '' });
    assert.equal(none.status, 403);
    assert.match(none.json.message, /Origin/);
    const evil = await call(srv.url, as.editor, 'POST', '/events', ev, { origin: 'https://evil.example' });
    assert.equal(evil.status, 403);
    assert.match(evil.json.message, /evil\.example is not allowed/);
    assert.equal((await call(srv.url, as.editor, 'POST', '/events', ev)).status, 200, 'our own Origin is fine');
    assert.equal((await call(srv.url, as.editor, 'GET', '/state', undefined, { origin: 'https://evil.example' })).status, 200, 'reads are not checked');
    const tok = await mintToken(srv, as.editor, 'default', 'editor');
    assert.equal((await call(srv.url, tok, 'POST', '/events', ev)).status, 200, 'a bearer write needs no Origin');
  });

  test('logout ends the session: the cookie stops working and its streams close', async () => {
    const me = await login(srv.url, 'carol', 'carol-password');
    const s = await stream(srv.url, me, '/stream');
    await s.waitFor((f) => f.event === 'snapshot');
    const out = await call(srv.url, me, 'POST', '/auth/logout');
    assert.equal(out.status, 200);
    assert.match(out.headers.get('set-cookie')!, /Max-Age=0/);
    const err = await s.waitFor((f) => f.event === 'error', 2000);
    assert.match(JSON.parse(err.data).reason, /signed out/);
    await s.ended;
    assert.equal((await call(srv.url, me, 'GET', '/state')).status, 401);
    assert.equal((await call(srv.url, as.viewer, 'GET', '/state')).status, 200, "another sign-in of the same person is not touched");
  });
});

describe('shared mode: changing a password', () => {
  test('needs the current one; the old password and the other sign-ins stop working', async () => {
    const srv = await sharedServer();
    try {
      const bob = await makeUser(srv, 'bob', 'default', 'viewer');
      const elsewhere = await login(srv.url, 'bob', 'bob-password');
      const s = await stream(srv.url, elsewhere, '/stream');
      await s.waitFor((f) => f.event === 'snapshot');
      const wrong = await call(srv.url, bob, 'POST', '/auth/password', { current: 'nope-nope', password: 'new-bob-password' });
      assert.equal(wrong.status, 403);
      assert.equal((await call(srv.url, bob, 'POST', '/auth/password', { current: 'bob-password', password: 'short' })).status, 400);
      const body = { current: 'bob-password', password: 'new-bob-password' };
      const ok = await call(srv.url, bob, 'POST', '/auth/password', body, { 'idempotency-key': 'pw1' });
      assert.deepEqual([ok.status, ok.json.signedOut], [200, 1]);
      const again = await call(srv.url, bob, 'POST', '/auth/password', body, { 'idempotency-key': 'pw1' });
      assert.deepEqual([again.status, again.json.duplicate], [200, true], 'a retry of a change that went through is not "wrong password"');
      const err = await s.waitFor((f) => f.event === 'error', 2000);
      assert.match(JSON.parse(err.data).reason, /signed out/);
      assert.equal((await call(srv.url, elsewhere, 'GET', '/state')).status, 401);
      assert.equal((await call(srv.url, bob, 'GET', '/state')).status, 200, 'the session that changed it stays signed in');
      assert.equal((await call(srv.url, ANON, 'POST', '/auth/login', { login: 'bob', password: 'bob-password' })).status, 401);
      await login(srv.url, 'bob', 'new-bob-password');
    } finally {
      await srv.close();
    }
  });
});

describe('shared mode: role changes reach open streams at once; history keeps its names', () => {
  let srv: Roost & { owner: Caller };
  let bob: Caller;
  before(async () => {
    srv = await sharedServer();
    bob = await makeUser(srv, 'bob', 'default', 'editor');
  });
  after(() => srv.close());

  test('editor → viewer: streams stay, the next write fails; removed: streams close with a reason, requests refused', async (t) => {
    const bobToken = await mintToken(srv, bob, 'default', 'editor');
    const r1 = await call(srv.url, bob, 'POST', '/fleet/t1', { type: 'session.spawn', id: 's1', session: 'bob-session', flavor: 'plain', root: '~/b' });
    assert.equal(r1.status, 200);
    const floorStream = await stream(srv.url, bob, '/stream');
    const boardStream = await stream(srv.url, bob, '/fleet/t1/stream');
    const approvalsStream = await stream(srv.url, bob, '/approvals/stream');
    const tokenStream = await stream(srv.url, bobToken, '/stream');
    const ownerStream = await stream(srv.url, srv.owner, '/stream');
    for (const s of [floorStream, boardStream, approvalsStream, tokenStream, ownerStream]) await s.waitFor((f) => f.event === 'snapshot');

    const demote = await call(srv.url, srv.owner, 'PUT', `/projects/default/members/${bob.uid}`, { role: 'viewer' });
    assert.equal(demote.status, 200);
    assert.equal(demote.json.member.role, 'viewer');
    const w = await call(srv.url, bob, 'POST', '/events', { type: 'status', agent: 'b', status: 'idle' });
    assert.equal(w.status, 403);
    assert.match(w.json.message, /needs the editor role.*you are a viewer/);
    assert.equal((await call(srv.url, bobToken, 'POST', '/events', { type: 'status', agent: 'b', status: 'idle' })).status, 403, "the token is capped by its maker's role");
    // Streams are reads: a viewer keeps them.
    const post = await call(srv.url, srv.owner, 'POST', '/events', { type: 'status', agent: 'owner-bot', status: 'working' });
    assert.equal(post.status, 200);
    await floorStream.waitFor((f) => f.event === 'event' && f.data.includes('owner-bot'));

    const t0 = Date.now();
    const gone = await call(srv.url, srv.owner, 'DELETE', `/projects/default/members/${bob.uid}`);
    assert.equal(gone.status, 200);
    for (const s of [floorStream, boardStream, approvalsStream, tokenStream]) {
      const err = await s.waitFor((f) => f.event === 'error', 2000);
      assert.match(JSON.parse(err.data).reason, /no longer a member of project "default"/);
      await s.ended;
    }
    const closedIn = Date.now() - t0;
    assert.ok(closedIn < 1000, `streams closed within ${closedIn} ms`);
    t.diagnostic(`removal answered and 4 streams closed in ${closedIn} ms`);
    assert.equal((await call(srv.url, bob, 'GET', '/state')).status, 403);
    assert.equal((await call(srv.url, bobToken, 'GET', '/state')).status, 403);
    const again = await openSse(srv.url + '/stream', { cookie: bob.cookie! }).catch((e: Error) => e);
    assert.ok(again instanceof Error && /403/.test(again.message), 'a new stream is refused');
    // The owner's stream was not touched.
    await call(srv.url, srv.owner, 'POST', '/events', { type: 'status', agent: 'after', status: 'working' });
    await ownerStream.waitFor((f) => f.event === 'event' && f.data.includes('"after"'));
    // History keeps its attribution: the board's replay still names Bob.
    const replay = await stream(srv.url, srv.owner, `/fleet/t1/stream?lastEventId=${srv.store.epoch}:0`);
    const spawned = await replay.waitFor((f) => f.event === 'event' && f.data.includes('bob-session'));
    assert.equal(JSON.parse(spawned.data).event.name, 'Bob');
    assert.equal(JSON.parse(spawned.data).event.uid, bob.uid);
    replay.close();
    ownerStream.close();
  });

  test('a revoked token stops at once, its streams included', async () => {
    const carol = await makeUser(srv, 'carol', 'default', 'editor');
    const tok = await mintToken(srv, carol, 'default', 'viewer');
    const s = await stream(srv.url, tok, '/approvals/stream');
    await s.waitFor((f) => f.event === 'snapshot');
    const list = await call(srv.url, carol, 'GET', '/tokens');
    const id = list.json.tokens[0].id;
    assert.equal((await call(srv.url, bob, 'DELETE', `/tokens/${id}`)).status, 403, "another member may not revoke carol's token");
    const r = await call(srv.url, srv.owner, 'DELETE', `/tokens/${id}`);
    assert.equal(r.status, 200, "the project's owner may revoke a member's token");
    assert.equal(r.json.token.revoked, true);
    const err = await s.waitFor((f) => f.event === 'error', 2000);
    assert.match(JSON.parse(err.data).reason, /revoked/);
    assert.equal((await call(srv.url, tok, 'GET', '/approvals')).status, 401);
  });

  test('a project keeps at least one owner', async () => {
    const r = await call(srv.url, srv.owner, 'PUT', `/projects/default/members/${srv.owner.uid}`, { role: 'editor' });
    assert.equal(r.status, 409);
    assert.match(r.json.message, /at least one owner/);
    assert.equal((await call(srv.url, srv.owner, 'DELETE', `/projects/default/members/ann`)).status, 409);
  });
});

describe('shared mode: every mutation is idempotent with its key', () => {
  let srv: Roost & { owner: Caller };
  before(async () => {
    srv = await sharedServer();
  });
  after(() => srv.close());

  const identityCount = async () => (await srv.store.read('identity', 0, 100_000)).length;

  async function twice(who: Caller, method: string, path: string, body: unknown, key: string): Promise<[Res, Res, number, number]> {
    const before = await identityCount();
    const a = await call(srv.url, who, method, path, body, { 'idempotency-key': key });
    const mid = await identityCount();
    const b = await call(srv.url, who, method, path, body, { 'idempotency-key': key });
    const after = await identityCount();
    assert.equal(after, mid, `${method} ${path}: the repeat stores nothing`);
    return [a, b, mid - before, after - mid];
  }

  test('users, projects, members, tokens, invites, sign-in: the repeat answers the same and stores nothing', async () => {
    const [u1, u2, n] = await twice(srv.owner, 'POST', '/users', { login: 'bob', password: 'bob-password' }, 'k-user');
    assert.equal(u1.status, 201);
    assert.equal(n, 1);
    assert.equal(u2.status, 201, 'a repeat is not "the login is taken"');
    assert.equal(u2.json.user.uid, u1.json.user.uid);
    assert.equal(u2.json.duplicate, true);
    assert.equal((await call(srv.url, srv.owner, 'POST', '/users', { login: 'bob', password: 'bob-password' }, { 'idempotency-key': 'k-other' })).status, 409, 'a new key for a taken login is refused');

    const [p1, p2] = await twice(srv.owner, 'POST', '/projects', { id: 'p2', name: 'Two' }, 'k-proj');
    assert.deepEqual([p1.status, p2.status, p2.json.project.id, p2.json.duplicate], [201, 201, 'p2', true]);

    const [m1, m2] = await twice(srv.owner, 'PUT', `/projects/p2/members/${u1.json.user.uid}`, { role: 'editor' }, 'k-mem');
    assert.deepEqual([m1.status, m2.status, m2.json.member.role, m2.json.duplicate], [200, 200, 'editor', true]);

    const bob = await login(srv.url, 'bob', 'bob-password');
    const [t1, t2] = await twice(bob, 'POST', '/tokens', { project: 'p2', role: 'editor' }, 'k-tok');
    assert.equal(t2.json.token.id, t1.json.token.id);
    assert.equal(t2.json.secret, t1.json.secret, 'a quick retry (a lost answer) sees the same secret');
    assert.equal((await call(srv.url, bob, 'GET', '/tokens')).json.tokens.length, 1);

    const [r1, r2] = await twice(bob, 'DELETE', `/tokens/${t1.json.token.id}`, undefined, 'k-rev');
    assert.deepEqual([r1.status, r2.status, r2.json.duplicate], [200, 200, true]);

    const [i1, i2] = await twice(srv.owner, 'POST', '/auth/invites', { project: 'p2', role: 'viewer' }, 'k-inv');
    assert.equal(i2.json.code, i1.json.code);
    const [a1, a2, made] = await twice(ANON, 'POST', `/auth/invites/${i1.json.code}/accept`, { login: 'erin', password: 'erin-password' }, 'k-acc');
    assert.deepEqual([a1.status, a2.status, a2.json.user.uid], [201, 201, a1.json.user.uid]);
    assert.ok(made >= 3, 'the accept made the account, used the invite, set the membership and signed in');
    assert.deepEqual(a1.json.projects, [{ id: 'p2', name: 'Two', role: 'viewer' }]);
    const reuse = await call(srv.url, ANON, 'POST', `/auth/invites/${i1.json.code}/accept`, { login: 'frank', password: 'frank-password' });
    assert.equal(reuse.status, 409);
    assert.match(reuse.json.message, /used already/);

    const [l1, l2, opened] = await twice(ANON, 'POST', '/auth/login', { login: 'erin', password: 'erin-password' }, 'k-login');
    assert.equal(opened, 1);
    assert.equal(l2.headers.get('set-cookie'), l1.headers.get('set-cookie'), 'the repeat of a sign-in returns the same session');
    const stolen = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'erin', password: 'guess-guess' }, { 'idempotency-key': 'k-login' });
    assert.equal(stolen.status, 401, 'a known key without the password gets no session');
    const otherCode = await call(srv.url, ANON, 'POST', `/auth/invites/${i1.json.code}/accept`, { login: 'erin', password: 'other-password' }, { 'idempotency-key': 'k-acc' });
    assert.equal(otherCode.headers.get('set-cookie'), null, "a different body with the accept's key gets no one's cookie");

    const [d1, d2] = await twice(srv.owner, 'DELETE', `/projects/p2/members/erin`, undefined, 'k-del');
    assert.deepEqual([d1.status, d2.status, d2.json.duplicate], [200, 200, true]);
  });

  test('the apps: floor, board and approvals writes with a key store once', async () => {
    const tok = await mintToken(srv, srv.owner, 'default', 'editor');
    const ev = { type: 'status', agent: 'idem-bot', status: 'working' };
    const f1 = await call(srv.url, tok, 'POST', '/events', ev, { 'idempotency-key': 'f1' });
    const f2 = await call(srv.url, tok, 'POST', '/events', ev, { 'idempotency-key': 'f1' });
    assert.deepEqual([f2.json.first, f2.json.duplicate], [f1.json.first, true]);
    assert.equal(srv.floor.position, f1.json.last);
    const spawn = { type: 'session.spawn', id: 's9', session: 'nine', flavor: 'plain', root: '~/n' };
    const s1 = await call(srv.url, tok, 'POST', '/fleet/t9', spawn, { 'idempotency-key': 's1' });
    const s2 = await call(srv.url, tok, 'POST', '/fleet/t9', spawn, { 'idempotency-key': 's1' });
    assert.deepEqual([s1.status, s2.status, s2.json.duplicate, s2.json.first], [200, 200, true, s1.json.first]);
    assert.equal((await srv.store.read('sessions:t9', 0, 100)).length, 1);
  });
});

describe('shared mode: limits per person', () => {
  test('requests per minute and open streams per person answer 429 too_many', async () => {
    const srv = await sharedServer({ requestsPerMinute: 8, streamsPerCaller: 2 });
    try {
      const tok = await mintToken(srv, srv.owner, 'default', 'viewer');
      const a = await stream(srv.url, tok, '/stream');
      const b = await stream(srv.url, tok, '/approvals/stream');
      const third = await fetch(srv.url + '/stream', { headers: { authorization: `Bearer ${tok.token}` } });
      assert.equal(third.status, 429);
      assert.match(((await third.json())).message, /at most 2 per person/);
      a.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = await stream(srv.url, tok, '/stream');
      again.close();
      b.close();
      let seen429 = false;
      for (let i = 0; i < 10 && !seen429; i++) {
        const r = await call(srv.url, tok, 'GET', '/state');
        if (r.status === 429) {
          seen429 = true;
          assert.equal(r.json.kind, 'too_many');
        }
      }
      assert.ok(seen429, 'the ninth request in a minute is refused');
      // Limits are per person: the owner's browser has spent the same budget (another person's own: test/live.limits.test.ts).
      const other = await call(srv.url, srv.owner, 'GET', '/auth/me');
      assert.equal(other.status, 429, 'the owner’s browser shares the budget of the owner’s token: limits are per person');
    } finally {
      await srv.close();
    }
  });
});

describe('local mode is unchanged', () => {
  let srv: Awaited<ReturnType<typeof inProcess>>;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('no credentials: the person at the machine owns everything, the old URLs work', async () => {
    assert.equal((await call(srv.url, ANON, 'POST', '/events', { type: 'status', agent: 'l1', status: 'working' })).status, 200);
    assert.equal((await call(srv.url, ANON, 'GET', '/state')).json.agents[0].id, 'l1');
    // A bodiless write says it is not a cross-site form (docs/security.md): a Roost-* header will do.
    assert.equal((await call(srv.url, ANON, 'POST', '/reset', undefined, { 'roost-client': 'test' })).status, 200);
    const me = await call(srv.url, ANON, 'GET', '/auth/me');
    assert.deepEqual([me.json.mode, me.json.kind, me.json.user.name], ['local', 'local', 'local owner']);
    const h = await call(srv.url, ANON, 'GET', '/health');
    assert.equal(h.json.agents, 0);
    // Accounts are shared mode's: asking for one says how to get there.
    const u = await call(srv.url, ANON, 'POST', '/users', { login: 'x', password: 'x-password' });
    assert.equal(u.status, 409);
    assert.match(u.json.message, /roost admin create-owner/);
    // Projects work locally too, each with its own floor.
    assert.equal((await call(srv.url, ANON, 'POST', '/projects', { id: 'mine' })).status, 201);
    await call(srv.url, ANON, 'POST', '/events?project=mine', { type: 'status', agent: 'm1', status: 'working' });
    assert.deepEqual((await call(srv.url, ANON, 'GET', '/state?project=mine')).json.agents.map((a: any) => a.id), ['m1']);
    assert.deepEqual((await call(srv.url, ANON, 'GET', '/state')).json.agents, []);
    // A bearer token or cookie means nothing here.
    assert.equal((await call(srv.url, { token: 'rst_x', cookie: 'roost_session=x' }, 'GET', '/state')).status, 200);
  });
});
