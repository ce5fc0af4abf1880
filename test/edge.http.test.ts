// The server's edge in local mode: a web page on another site cannot reach it.
// Each case was open on main before (each test failed first):
// - DNS rebinding: a page whose name rebinds to 127.0.0.1 could read /state,
//   allow an approval and queue a Work command (any Host was answered);
// - a form on another site could post to POST /reset or revoke a Space (no
//   Origin check on bodiless writes in local mode);
// - nothing forbade framing (a framed inbox's Allow decided), and no response
//   said nosniff or a referrer policy;
// - slowloris: sockets that dribble their headers stayed open for a minute
//   and more (40 of 40 for 65 s).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { inProcess } from './support/server.js';
import { openSse } from './support/sse.js';
import type { Roost } from '../src/server/index.js';

/** A raw request, with the Host and Origin headers as given (fetch sets its own Host). */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(base);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe('local mode answers only its own Host', () => {
  let srv: Roost;
  let port = '';
  before(async () => {
    srv = await inProcess();
    port = new URL(srv.url).port;
  });
  after(() => srv.close());

  test('a rebound name (Host: evil.example) is refused before anything is read or written', async () => {
    const evil = { host: `evil.example:${port}` };
    const state = await raw(srv.url, 'GET', '/state', evil);
    assert.equal(state.status, 421, state.text);
    assert.match(JSON.parse(state.text).message, /127\.0\.0\.1:\d+|localhost/);
    // The rebound page's writes: an approval decision and a Work command (same-origin to it, so it sends its own Origin).
    const write = { ...evil, origin: `http://evil.example:${port}`, 'content-type': 'application/json' };
    assert.equal((await raw(srv.url, 'POST', '/approvals/ap_x/decision', write, JSON.stringify({ decision: 'allow' }))).status, 421);
    assert.equal((await raw(srv.url, 'POST', '/api/v2/commands?project=default', write, JSON.stringify({ agent: 'a', text: 'rm -rf /' }))).status, 421);
    assert.equal((await raw(srv.url, 'GET', '/', evil)).status, 421, 'the web app too');
    assert.equal((await raw(srv.url, 'GET', '/stream', evil)).status, 421, 'and the live streams');
  });

  test('the names the server listens on are answered', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const r = await raw(srv.url, 'GET', '/state', { host });
      assert.equal(r.status, 200, host);
    }
    assert.equal((await raw(srv.url, 'GET', '/state', { host: `127.0.0.1:${Number(port) + 1}` })).status, 421, 'another port is another server');
  });
});

describe('a state-changing request from another site is refused', () => {
  let srv: Roost;
  let own = '';
  before(async () => {
    srv = await inProcess();
    own = srv.url;
  });
  after(() => srv.close());

  test('a foreign Origin is a 403 on every POST, PUT and DELETE, with a body or without one', async () => {
    const foreign = { host: new URL(own).host, origin: 'http://evil.example' };
    const sp = await (await fetch(own + '/api/v2/spaces', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify({ name: 'box' }) })).json();
    await fetch(own + '/api/v2/projects/default/spaces', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify({ space: sp.id }) });
    for (const [method, path, body] of [
      ['POST', '/reset', undefined],
      ['POST', `/api/v2/projects/default/spaces/${sp.id}/revoke`, undefined],
      ['POST', '/events', JSON.stringify({ type: 'status', agent: 'x' })],
      ['DELETE', '/tokens/tk_x', undefined],
      ['PUT', '/projects/default/members/u', JSON.stringify({ role: 'owner' })],
    ] as const) {
      const r = await raw(own, method, path, body ? { ...foreign, 'content-type': 'application/json' } : foreign, body);
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      assert.match(JSON.parse(r.text).message, /Origin http:\/\/evil\.example/);
    }
    // Origin: null (a sandboxed frame, a file) is not this server either.
    assert.equal((await raw(own, 'POST', '/reset', { host: new URL(own).host, origin: 'null' })).status, 403);
    // Nothing was reset or revoked.
    const snap = await (await fetch(own + '/api/v2/snapshot?project=default')).json();
    assert.equal(snap.spaces.find((x: any) => x.id === sp.id)?.contributed, true);
  });

  test('without an Origin, a write must not look like a form: JSON, or a Roost-* or Authorization header', async () => {
    const host = { host: new URL(own).host };
    // What a cross-site form (or an old browser's) can send: no Origin, a form's content type or none.
    for (const headers of [host, { ...host, 'content-type': 'application/x-www-form-urlencoded' }, { ...host, 'content-type': 'text/plain' }, { ...host, 'content-type': 'multipart/form-data; boundary=x' }]) {
      const r = await raw(own, 'POST', '/reset', headers, headers === host ? undefined : 'a=1');
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.match(JSON.parse(r.text).message, /Content-Type: application\/json|Roost-/);
    }
    // What Roost's own clients send: JSON (hooks, the bridge, the CLI), or a Roost-* header on a bodiless post.
    assert.equal((await raw(own, 'POST', '/reset', { ...host, 'content-type': 'application/json' })).status, 200);
    assert.equal((await raw(own, 'POST', '/reset', { ...host, 'roost-client': 'cli' })).status, 200);
    // The server's own pages send their Origin: accepted.
    assert.equal((await raw(own, 'POST', '/reset', { ...host, origin: own })).status, 200);
    // Reads are not writes: a GET needs none of this.
    assert.equal((await raw(own, 'GET', '/state', host)).status, 200);
  });
});

describe('every response says how it may be used', () => {
  let srv: Roost;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('what a browser renders is not framable, not sniffed, runs only its own scripts and sends no referrer beyond this origin', async () => {
    for (const path of ['/', '/inbox', '/lib/floor.js', '/signin']) {
      const r = await fetch(srv.url + path, { headers: { accept: 'text/html' } });
      await r.arrayBuffer();
      assert.equal(r.status, 200, path);
      const h = r.headers;
      assert.match(h.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
      if (path !== '/signin') assert.match(h.get('content-security-policy') ?? '', /script-src 'self'/, path);
      assert.equal(h.get('x-frame-options'), 'DENY', path);
      assert.equal(h.get('x-content-type-options'), 'nosniff', path);
      assert.equal(h.get('referrer-policy'), 'same-origin', path);
    }
  });

  test('every API answer, refusals included, is not sniffed', async () => {
    for (const [method, path, body, status] of [
      ['GET', '/state', undefined, 200],
      ['GET', '/nope.js', undefined, 404],
      ['POST', '/events', JSON.stringify({ type: 'status', agent: 'x' }), 200],
      ['POST', '/events', '{', 400],
    ] as const) {
      const r = await fetch(srv.url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body });
      await r.arrayBuffer();
      assert.equal(r.status, status, `${method} ${path}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/, path);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    }
    const refused = await fetch(srv.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{}' });
    await refused.arrayBuffer();
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('x-content-type-options'), 'nosniff');
  });
});

describe('slow requests are cut; long responses are not', () => {
  let srv: Roost;
  const HEADERS_MS = 1000;
  before(async () => {
    srv = await inProcess({ headersTimeoutMs: HEADERS_MS, requestTimeoutMs: 2000, keepAliveTimeoutMs: 1000, heartbeatMs: 300 });
  });
  after(() => srv.close());

  test('sockets that dribble their headers (and one that sends nothing) are closed within the headers timeout', async () => {
    const u = new URL(srv.url);
    const started = performance.now();
    const socks: { s: Socket; closedAt: number | null; timer: NodeJS.Timeout | null }[] = [];
    for (let i = 0; i < 20; i++) {
      const s = connect(Number(u.port), u.hostname);
      const entry = { s, closedAt: null as number | null, timer: null as NodeJS.Timeout | null };
      s.on('close', () => {
        entry.closedAt = performance.now() - started;
        if (entry.timer) clearInterval(entry.timer);
      });
      s.on('error', () => {});
      s.resume(); // read what the server says (its 408), so its close is seen
      if (i > 0) {
        // One header byte every 100 ms: always sending, never done.
        s.write(`GET /state HTTP/1.1\r\nHost: ${u.host}\r\n`);
        entry.timer = setInterval(() => s.writable && s.write('X'), 100);
      }
      socks.push(entry);
    }
    const deadline = HEADERS_MS * 4;
    while (performance.now() - started < deadline && socks.some((x) => x.closedAt === null)) await new Promise((r) => setTimeout(r, 50));
    const open = socks.filter((x) => x.closedAt === null).length;
    for (const x of socks) {
      if (x.timer) clearInterval(x.timer);
      x.s.destroy();
    }
    assert.equal(open, 0, `${open} of ${socks.length} slow sockets still open after ${deadline} ms`);
  });

  test('a live stream outlives every request timeout, heartbeats and all', async () => {
    const sse = await openSse(`${srv.url}/stream`);
    let ended = false;
    void sse.ended.then(() => (ended = true));
    try {
      await new Promise((r) => setTimeout(r, 3500));
      assert.equal(ended, false, 'the stream is still open after more than every timeout');
      assert.ok(sse.comments >= 5, `heartbeats kept coming (${sse.comments})`);
      const from = sse.frames.length;
      await fetch(srv.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'status', agent: 'late', status: 'working' }) });
      await sse.waitFor((f) => f.event === 'event', 5000, from);
    } finally {
      sse.close();
    }
  });
});
