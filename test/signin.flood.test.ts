// Signing in under a flood of wrong logins (issue 37, point 5), at the
// production scrypt cost: one address sending 40 wrong sign-ins at a time
// holds at most its share of the password-check gate (4), the owner, from a
// browser she signed in from before (its device cookie), still gets in, from
// her own address and from the flooding one, and strangers failing at her
// login do not lock her browser out. How fast she gets in is a bench row
// (bench/signin.ts); here, that she does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { scryptLoad, setScryptCostForTests } from '../src/server/identity/secrets.js';
import { SIGNIN_PER_ADDRESS } from '../src/server/identity/signin-limits.js';
import { tempDir } from './support/server.js';

/** POST /auth/login from `from` (a loopback address of its own), with `cookie` if given. */
function signIn(url: string, from: string, body: unknown, cookie?: string): Promise<{ status: number; cookies: string[] }> {
  const u = new URL(url + '/auth/login');
  const data = JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', localAddress: from, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...(cookie ? { cookie } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => ok({ status: res.statusCode ?? 0, cookies: ([] as string[]).concat(res.headers['set-cookie'] ?? []) }));
      },
    );
    req.on('error', fail);
    req.end(data);
  });
}

test('under one address’s flood of wrong sign-ins, the owner signs in from a browser she used before', { timeout: 240_000 }, async (t) => {
  setScryptCostForTests(null); // the production cost: a password check takes a real quarter second or more
  const store = new SqliteStore({ path: join(tempDir(), 'roost.db') });
  await createOwner(store, 'ann', 'ann-password', 'Ann');
  const roost = await startRoost(store, { port: 0 });
  let flooding = true;
  const statuses = new Map<number, number>();
  const floods: Promise<void>[] = [];
  try {
    // Her first sign-in from this browser makes it known: a device cookie, HttpOnly, sent only to /auth.
    const first = await signIn(roost.url, '127.0.0.1', { login: 'ann', password: 'ann-password' });
    assert.equal(first.status, 200);
    const device = first.cookies.find((c) => c.startsWith('roost_device='));
    assert.ok(device, `a device cookie is set: ${first.cookies.join(' | ')}`);
    assert.match(device, /; HttpOnly/);
    assert.match(device, /; Path=\/auth/);
    assert.match(device, /; SameSite=Strict/);
    const cookie = device.split(';')[0];

    // 40 wrong sign-ins at a time from one address, each for a login of its own (so no login's backoff stops them).
    let n = 0;
    let most = 0;
    for (let i = 0; i < 40; i++)
      floods.push(
        (async () => {
          while (flooding) {
            const r = await signIn(roost.url, '127.0.0.2', { login: `nobody-${n++}`, password: 'wrong-password' });
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            const l = scryptLoad();
            most = Math.max(most, l.running + l.waiting);
          }
        })(),
      );
    const until = async (what: string, f: () => boolean, ms = 60_000) => {
      const end = Date.now() + ms;
      while (!f()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await until('the flood under way', () => n >= 200 && (statuses.get(401) ?? 0) >= 4);
    await new Promise((r) => setTimeout(r, 1000));
    // What the flood alone held (her own checks below are not its).
    const held = most;
    assert.ok(held <= SIGNIN_PER_ADDRESS, `one address held ${held} password checks at once (at most ${SIGNIN_PER_ADDRESS})`);
    assert.ok((statuses.get(429) ?? 0) > 0, 'the rest of the flood is refused before the gate');

    // She signs in, from her own address and from the flooding one, with her browser's device cookie.
    for (const from of ['127.0.0.1', '127.0.0.2']) {
      const t0 = Date.now();
      const r = await signIn(roost.url, from, { login: 'ann', password: 'ann-password' }, cookie);
      assert.equal(r.status, 200, `from ${from} under the flood`);
      t.diagnostic(`the owner signed in from ${from} under the flood in ${Date.now() - t0} ms`);
    }

    // Strangers failing at her login put it in backoff; her known browser is not locked out.
    flooding = false;
    await Promise.all(floods);
    let backoff = 0;
    for (let i = 0; i < 12 && backoff === 0; i++) if ((await signIn(roost.url, '127.0.0.3', { login: 'ann', password: `guess-${i}-password` })).status === 429) backoff++;
    assert.equal(backoff, 1, 'her login is in backoff for strangers');
    assert.equal((await signIn(roost.url, '127.0.0.1', { login: 'ann', password: 'ann-password' }, cookie)).status, 200, 'her known browser still gets in');
    t.diagnostic(`the flood: ${JSON.stringify(Object.fromEntries(statuses))}; at most ${held} of its password checks at once`);
  } finally {
    flooding = false;
    await Promise.allSettled(floods);
    await roost.close();
  }
});
