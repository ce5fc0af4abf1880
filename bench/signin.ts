// Sign-in timing (issue 12, part 6): an unknown login must cost what a wrong
// password costs, so the time of a refusal does not tell whether an account
// exists. A real server over HTTP with production parameters; `n` unknown and
// `n` wrong sign-ins, interleaved, each against a different login (so the
// per-login backoff never engages). Prints the medians and their ratio.
//
// Then the owner under a flood (issue 37, point 5): one address (127.0.0.2)
// sends wrong sign-ins 40 at a time, each for a login of its own, for the
// whole measure; meanwhile the owner signs in `k` times from her browser (its
// device cookie, from her first sign-in) at 127.0.0.1, half a second apart.
// Prints each of her sign-ins' time and how many got in.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/app.js';
import { createOwner } from '../src/cli/owner.js';
import { request } from 'node:http';

const n = Number(process.argv[2] ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'roost-bench-signin-'));
const store = new SqliteStore({ path: join(dir, 'roost.db') });
await createOwner(store, 'ann', 'ann-password', 'Ann');
const srv = await startRoost(store, { port: 0, requestsPerMinute: 100_000 });

async function post(path: string, body: unknown, cookie?: string): Promise<{ status: number; ms: number; cookie: string | null }> {
  const t = performance.now();
  const r = await fetch(srv.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie, origin: srv.url } : {}) }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t, cookie: r.headers.get('set-cookie') };
}

const owner = await post('/auth/login', { login: 'ann', password: 'ann-password' });
const cookie = /roost_session=[^;]+/.exec(owner.cookie ?? '')![0];
const device = /roost_device=[^;]+/.exec(owner.cookie ?? '')?.[0];
for (let i = 0; i < n; i++) {
  const r = await post('/users', { login: `user-${i}`, password: `password-${i}` }, cookie);
  if (r.status !== 201) throw new Error(`making user-${i}: ${r.status}`);
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];
// One of each first, to warm up.
await post('/auth/login', { login: 'warm-nobody', password: 'x-password' });
const unknown: number[] = [];
const wrong: number[] = [];
for (let i = 0; i < n; i++) {
  const u = await post('/auth/login', { login: `nobody-${i}`, password: 'wrong-password' });
  const w = await post('/auth/login', { login: `user-${i}`, password: 'wrong-password' });
  if (u.status !== 401 || w.status !== 401) throw new Error(`expected 401s, got ${u.status} and ${w.status}`);
  unknown.push(u.ms);
  wrong.push(w.ms);
}

/** POST /auth/login from a loopback address of its own; resolves with the status and the time taken. */
function signInFrom(from: string, body: unknown, cookieHeader?: string): Promise<{ status: number; ms: number }> {
  const u = new URL(srv.url + '/auth/login');
  const data = JSON.stringify(body);
  const t = performance.now();
  return new Promise((ok, fail) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', localAddress: from, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...(cookieHeader ? { cookie: cookieHeader } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => ok({ status: res.statusCode ?? 0, ms: performance.now() - t }));
      },
    );
    req.on('error', fail);
    req.end(data);
  });
}

const k = Number(process.argv[3] ?? 5);
let flooding = true;
let sent = 0;
const floods = Array.from({ length: 40 }, async () => {
  while (flooding) {
    await signInFrom('127.0.0.2', { login: `flood-${sent++}`, password: 'wrong-password' }).catch(() => null);
  }
});
await new Promise((r) => setTimeout(r, 2000));
const ownerMs: number[] = [];
let ownerIn = 0;
for (let i = 0; i < k; i++) {
  const r = await signInFrom('127.0.0.1', { login: 'ann', password: 'ann-password' }, device);
  ownerMs.push(r.ms);
  if (r.status === 200) ownerIn++;
  await new Promise((res) => setTimeout(res, 500));
}
flooding = false;
await Promise.all(floods);
await srv.close();
rmSync(dir, { recursive: true, force: true });
const mu = median(unknown);
const mw = median(wrong);
process.stdout.write(JSON.stringify({ unknownMs: mu, wrongMs: mw, ratio: mu / mw, floodOwnerMs: ownerMs, floodOwnerIn: ownerIn, floodOwnerTries: k, floodSent: sent }) + '\n');
