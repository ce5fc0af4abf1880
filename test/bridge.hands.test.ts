// The `--hooks-port` listener of hand-started sessions (src/bridge/hands.ts),
// over HTTP: what a hook command posts is taken; what a web page can make a
// browser send is refused; and it tracks a bounded number of sessions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { HandStarted } from '../src/bridge/index.js';
import { MAX_HANDS } from '../src/bridge/hands.js';
import type { Observation } from '../src/bridge/work.js';

function listener() {
  const seen: Observation[] = [];
  const hands = new HandStarted({
    space: { observe: (...a) => void seen.push(...a), execution: async () => ({ status: 200, json: {} }), terminal: () => undefined },
    claude: 'claude',
    env: () => ({}),
    settings: '{}',
    isOurs: () => false,
    wake: () => undefined,
    log: () => undefined,
  });
  return { hands, seen };
}

/** A raw request (no header added but `host` and `content-length`). */
function send(url: string, method: string, headers: Record<string, string>, body = ''): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((ok, fail) => {
    const q = request(url, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (b += d));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: b }));
    });
    q.on('error', fail);
    q.end(body);
  });
}

const hook = (session: string, event = 'SessionStart') => JSON.stringify({ session_id: session, hook_event_name: event, cwd: '/tmp/shop', permission_mode: 'default' });

test('the hooks listener takes a hook command’s JSON post and refuses what a web page can send', async (t) => {
  const { hands, seen } = listener();
  const url = await hands.listen(0);
  t.after(() => hands.stop('test over'));
  const json = { 'content-type': 'application/json' };

  // A page's "simple" cross-site requests: no preflight, so the content type must not pass.
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']) {
      const r = await send(url, 'POST', type ? { 'content-type': type } : {}, hook('s-plain'));
    assert.equal(r.status, 415, type);
  }
  // Any request that names an origin is a browser's (fetch with JSON, or a page rebinding its name to 127.0.0.1).
  const fromPage = await send(url, 'POST', { ...json, origin: 'https://evil.example' }, hook('s-page'));
  assert.equal(fromPage.status, 403);
  const nullOrigin = await send(url, 'POST', { ...json, origin: 'null' }, hook('s-page'));
  assert.equal(nullOrigin.status, 403);
  // The preflight a cross-site JSON post needs is never granted.
  const preflight = await send(url, 'OPTIONS', { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' });
  assert.notEqual(preflight.status, 200);
  assert.equal(preflight.headers['access-control-allow-origin'], undefined);
  // Another host name (DNS rebinding without an origin header) is refused too.
  const rebound = await send(url, 'POST', { ...json, host: 'evil.example' }, hook('s-host'));
  assert.equal(rebound.status, 403);
  assert.deepEqual(seen.map((o) => o.session), [], 'nothing refused was observed');
  assert.equal(hands.has('s-plain') || hands.has('s-page') || hands.has('s-host'), false);

  // What a hook command sends is taken.
  const ok = await send(url, 'POST', { 'content-type': 'application/json; charset=utf-8' }, hook('s-real'));
  assert.equal(ok.status, 200);
  assert.ok(hands.has('s-real'));
  assert.equal(seen.at(-1)?.session, 's-real');
  assert.equal(seen.at(-1)?.state, 'idle');
  // The curl command hook of docs/work.md, as written.
  let curl = true;
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
  } catch {
    curl = false;
  }
  if (curl) {
    // Run asynchronously: the listener answers from this same process.
    const out = await new Promise<string>((ok, fail) => {
      const c = execFile('/bin/sh', ['-c', `curl -s -X POST -H 'content-type: application/json' --data-binary @- ${url}`], (err, stdout) => (err ? fail(err) : ok(stdout)));
      c.stdin!.end(hook('s-curl', 'UserPromptSubmit'));
    });
    assert.equal(out, '{}');
    assert.ok(hands.has('s-curl'));
    assert.equal(seen.at(-1)?.state, 'working');
  }
  // Not JSON, or another path: refused.
  assert.equal((await send(url, 'POST', json, 'not json')).status, 400);
  assert.equal((await send(url.replace(/\/hook$/, '/other'), 'POST', json, hook('s-x'))).status, 404);
});

test('the hooks listener tracks at most MAX_HANDS hand-started sessions; one that ends makes room', async (t) => {
  const { hands } = listener();
  const url = await hands.listen(0);
  t.after(() => hands.stop('test over'));
  const json = { 'content-type': 'application/json' };
  for (let i = 0; i < MAX_HANDS; i++) assert.equal((await send(url, 'POST', json, hook(`s-${i}`))).status, 200);
  const over = await send(url, 'POST', json, hook('s-over'));
  assert.equal(over.status, 429);
  assert.equal(hands.has('s-over'), false);
  assert.equal(hands.observations().length, MAX_HANDS);
  // A known session still reports; one that ends makes room.
  assert.equal((await send(url, 'POST', json, hook('s-0', 'UserPromptSubmit'))).status, 200);
  assert.equal((await send(url, 'POST', json, hook('s-1', 'SessionEnd'))).status, 200);
  assert.equal((await send(url, 'POST', json, hook('s-over'))).status, 200);
  assert.ok(hands.has('s-over'));
});
