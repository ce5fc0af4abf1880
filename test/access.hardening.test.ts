// Shared mode's hardening (issue 12, part 6) through a real server over HTTP:
// the sign-in page's `next=` stays on this server; an unknown login and a
// wrong password answer alike; one login's failures from many addresses are
// slowed; a project that exists and one that does not get the same 403 on
// every route; cookies are Secure behind an https public origin.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ANON, call, headersOf, makeUser, mintToken, sharedServer, stream, type Caller, type SharedServer } from './support/shared.js';
import { request } from 'node:http';
import { scryptRuns } from '../src/server/identity/secrets.js';

/** The target the sign-in page will go to after signing in (the server decides it and writes it into the page). */
async function nextOf(url: string, next: string | null): Promise<string | null> {
  const r = await fetch(url + '/signin' + (next === null ? '' : `?next=${encodeURIComponent(next)}`));
  assert.equal(r.status, 200);
  const m = /const next = ("(?:[^"\\]|\\.)*");/.exec(await r.text());
  return m ? (JSON.parse(m[1]) as string) : null;
}

describe('sign-in next= goes only to this server', () => {
  let srv: SharedServer;
  before(async () => {
    srv = await sharedServer();
  });
  after(() => srv.close());

  const HOSTILE = [
    '//evil.example',
    '//evil.example/x',
    '/\\evil.example',
    '/\\/evil.example',
    '\\\\evil.example',
    '/\t/evil.example',
    '/%09/evil.example',
    '/\n/evil.example',
    '/\r\n/evil.example',
    ' //evil.example',
    '/%5Cevil.example',
    '/%5C%5Cevil.example',
    'https://evil.example/',
    'http:evil.example',
    'https:/evil.example',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'evil.example',
    '',
    '/\u0000/evil.example',
    '///evil.example',
  ];

  for (const next of HOSTILE) {
    test(`next=${JSON.stringify(next)} lands on /`, async () => {
      const target = await nextOf(srv.url, next);
      // The raw value as given, and decoded once more (a double-encoded link), both go home.
      assert.equal(target, '/', `next=${JSON.stringify(next)} went to ${JSON.stringify(target)}`);
    });
  }

  test('a same-origin path keeps its path, query and fragment; nothing given is /', async () => {
    assert.equal(await nextOf(srv.url, '/fleet'), '/fleet');
    assert.equal(await nextOf(srv.url, '/fleet/t1?project=side#x'), '/fleet/t1?project=side#x');
    assert.equal(await nextOf(srv.url, srv.url + '/work'), '/', 'an absolute URL is refused even when it is our own: a path is enough');
    assert.equal(await nextOf(srv.url, null), '/');
  });

  test('a next= that tries to leave the script is written as data', async () => {
    const r = await fetch(srv.url + '/signin?next=' + encodeURIComponent('/a</script><script>alert(1)</script>'));
    const text = await r.text();
    assert.ok(!text.includes('</script><script>alert(1)'), 'the value cannot close the script element');
  });
});

describe('an unknown login and a wrong password answer alike', () => {
  let srv: SharedServer;
  before(async () => {
    srv = await sharedServer();
    await makeUser(srv, 'bob', 'default', 'editor');
  });
  after(() => srv.close());

  test('the same status and body, and an unknown login runs a password check too', async () => {
    const before1 = scryptRuns();
    const wrong = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'bob', password: 'not-bobs-password' });
    const ranWrong = scryptRuns() - before1;
    const before2 = scryptRuns();
    const unknown = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'nobody-here', password: 'not-bobs-password' });
    const ranUnknown = scryptRuns() - before2;
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, wrong.status);
    assert.deepEqual(unknown.json, wrong.json);
    assert.equal(unknown.headers.get('set-cookie'), null);
    assert.equal(ranWrong, 1, 'a wrong password is one scrypt');
    assert.equal(ranUnknown, ranWrong, 'an unknown login costs the same scrypt (against a dummy hash of the same parameters)');
  });
});

/** POST /auth/login from a given loopback address (127.0.0.0/8 is all this machine): many callers, one login. */
function loginFrom(url: string, from: string, login: string, password: string): Promise<{ status: number; json: any; retryAfter: string | undefined }> {
  return new Promise((ok, fail) => {
    const body = JSON.stringify({ login, password });
    const req = request(url + '/auth/login', { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => ok({ status: res.statusCode!, json: JSON.parse(text), retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe('per-login backoff: one login failing from many addresses is slowed, a success resets it', () => {
  let srv: SharedServer;
  before(async () => {
    srv = await sharedServer({ loginFailuresFree: 3, loginBackoffMs: 1500 });
    await makeUser(srv, 'bob', 'default', 'editor');
  });
  after(() => srv.close());

  test('failures from 4 addresses lock the login (429, Retry-After) for every address; the wait passes; a success resets the count', async () => {
    // 3 free failures and the one that starts the wait, each from its own address (no per-address limit is near).
    for (let i = 0; i < 4; i++) assert.equal((await loginFrom(srv.url, `127.0.0.${10 + i}`, 'bob', 'guess-' + i)).status, 401);
    const locked = await loginFrom(srv.url, '127.0.0.20', 'bob', 'bob-password');
    assert.equal(locked.status, 429, 'even the right password waits: ' + JSON.stringify(locked.json));
    assert.ok(Number(locked.retryAfter) >= 1 && Number(locked.retryAfter) <= 2, `Retry-After ${locked.retryAfter}`);
    assert.match(locked.json.message, /too many failed sign-ins/);
    // Another login is not affected, from any address.
    assert.equal((await loginFrom(srv.url, '127.0.0.20', 'ann', 'ann-password')).status, 200);
    // An unknown login is locked the same way (its answers say nothing about whether it exists).
    for (let i = 0; i < 4; i++) assert.equal((await loginFrom(srv.url, `127.0.0.${30 + i}`, 'nobody', 'guess-' + i)).status, 401);
    const lockedNobody = await loginFrom(srv.url, '127.0.0.40', 'nobody', 'guess');
    assert.equal(lockedNobody.status, 429);
    assert.deepEqual(lockedNobody.json, locked.json);

    await new Promise((r) => setTimeout(r, Number(locked.retryAfter) * 1000 + 100));
    assert.equal((await loginFrom(srv.url, '127.0.0.21', 'bob', 'bob-password')).status, 200, 'after the wait the right password signs in');
    // The success reset the count: three failures are free again.
    for (let i = 0; i < 3; i++) assert.equal((await loginFrom(srv.url, `127.0.0.${50 + i}`, 'bob', 'guess-' + i)).status, 401);
    assert.equal((await loginFrom(srv.url, '127.0.0.60', 'bob', 'bob-password')).status, 200);
  });
});

describe('a project that exists and one that does not: the same refusal on every route', () => {
  let srv: SharedServer;
  let dave: Awaited<ReturnType<typeof makeUser>>;
  before(async () => {
    srv = await sharedServer();
    assert.equal((await call(srv.url, srv.owner, 'POST', '/projects', { id: 'side', name: 'Side' })).status, 201);
    // Dave has an account and is a member of nothing.
    dave = await makeUser(srv, 'dave', null);
  });
  after(() => srv.close());

  // Routes where the project's existence is the answer itself, not a leak: creating a project
  // (any person may; "exists already" is what they need to hear).
  const EXEMPT = new Set(['POST /projects']);

  /** One request naming project `p` every way a route may read it: the path's `:names`, `?project=`, and the body's `project`. */
  async function ask(method: string, path: string, p: string, who: Caller = dave): Promise<{ status: number; body: string }> {
    const filled = path.replace(/:[a-z]+/gi, p);
    const sep = filled.includes('?') ? '&' : '?';
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 3000);
    try {
      const headers: Record<string, string> = { ...headersOf(who, srv.url, method), 'content-type': 'application/json' };
      const r = await fetch(`${srv.url}${filled}${sep}project=${p}`, { method, headers, body: method === 'GET' ? undefined : JSON.stringify({ project: p }), signal: ctl.signal });
      const stream = r.headers.get('content-type')?.includes('event-stream');
      const text = stream ? '(a stream)' : await r.text();
      if (stream) ctl.abort();
      // The project's own id may be named back (the caller gave it); nothing else may differ.
      return { status: r.status, body: text.split(p).join('<project>') };
    } finally {
      clearTimeout(timer);
    }
  }

  test('an outsider, and a token of another project, get the same status and body for "side" (exists) and "ghost" (does not) on every route', async () => {
    const bob = await makeUser(srv, 'bob', 'default', 'editor');
    const token = await mintToken(srv, bob, 'default', 'editor');
    const differ: string[] = [];
    let asked = 0;
    for (const [who, caller] of [['outsider', dave], ['token', token]] as const) {
      for (const r of srv.routes) {
        const name = `${r.method} ${r.path}`;
        if (r.auth === 'public' || EXEMPT.has(name)) continue;
        asked++;
        const a = await ask(r.method, r.path, 'side', caller);
        const b = await ask(r.method, r.path, 'ghost', caller);
        if (a.status !== b.status || a.body !== b.body) differ.push(`${who} ${name}: ${a.status} ${a.body.slice(0, 120)} | ${b.status} ${b.body.slice(0, 120)}`);
      }
    }
    assert.ok(asked >= 80, `asked ${asked} routes`);
    assert.deepEqual(differ, []);
  });

  test('the live connection refuses a scope of either project alike', async () => {
    const frames = async (p: string): Promise<string> => {
      const scopes = ['floor', 'approvals', 'usage', 'work', 'work.live', 'members'].map((a) => `s=${a}:${p}`).concat(`s=fleet:${p}/t1`).join('&');
      const sse = await stream(srv.url, dave, `/live?${scopes}`);
      try {
        const isClosed = (f: { data: string }) => f.data.includes('"closed"');
        await sse.waitFor(() => sse.frames.filter(isClosed).length >= 7, 5000);
        return sse.frames.filter(isClosed).map((f) => f.data.split(p).join('<project>')).sort().join('\n');
      } finally {
        sse.close();
      }
    };
    const side = await frames('side');
    assert.match(side, /not a member/);
    assert.equal(side, await frames('ghost'));
  });
});

describe('Secure cookies when the public origin is https', () => {
  const cookieOf = (r: { headers: Headers }) => r.headers.get('set-cookie') ?? '';

  test('behind https://roost.example (a TLS proxy): every session cookie is Secure, and the public origin may write', async () => {
    const srv = await sharedServer({ publicUrl: 'https://roost.example' });
    try {
      const signIn = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'ann', password: 'ann-password' });
      assert.equal(signIn.status, 200);
      assert.match(cookieOf(signIn), /roost_session=[^;]+;.*; Secure/);
      assert.match(cookieOf(signIn), /HttpOnly/);
      const cookie = /roost_session=[^;]+/.exec(cookieOf(signIn))![0];
      // The browser on the public origin writes with its Origin; the proxy may keep the public Host too.
      const headers = { cookie, origin: 'https://roost.example', 'content-type': 'application/json' };
      const post = await fetch(srv.url + '/events', { method: 'POST', headers, body: JSON.stringify({ type: 'status', agent: 'a1', status: 'working' }) });
      assert.equal(post.status, 200, await post.text());
      const inv = await call(srv.url, { cookie }, 'POST', '/auth/invites', { project: 'default', role: 'viewer' });
      const accept = await call(srv.url, ANON, 'POST', `/auth/invites/${inv.json.code}/accept`, { login: 'vera', password: 'vera-password' });
      assert.equal(accept.status, 201);
      assert.match(cookieOf(accept), /; Secure/);
      const out = await fetch(srv.url + '/auth/logout', { method: 'POST', headers: { ...headers, host: 'roost.example' }, body: '{}' });
      assert.equal(out.status, 200);
      assert.match(out.headers.get('set-cookie') ?? '', /Max-Age=0.*; Secure/);
    } finally {
      await srv.close();
    }
  });

  test('plain http (no public URL, or an http one): no Secure flag, or the browser would drop the cookie', async () => {
    for (const cfg of [{}, { publicUrl: 'http://roost.lan:4319' }]) {
      const srv = await sharedServer(cfg);
      try {
        const signIn = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'ann', password: 'ann-password' });
        assert.equal(signIn.status, 200);
        assert.doesNotMatch(cookieOf(signIn), /Secure/);
      } finally {
        await srv.close();
      }
    }
  });

  test('a public URL must be an http(s) origin: anything else stops the start with a message', async () => {
    for (const bad of ['roost.example', 'ftp://roost.example', 'https://roost.example/app', 'https://user@roost.example']) {
      await assert.rejects(sharedServer({ publicUrl: bad }), /public URL/, bad);
    }
  });
});
