// Password hashing at production cost (docs/security.md, "Passwords"):
// scrypt N=2^17, r=8, p=1, the parameters stored with each hash, and a hash
// stored with lower parameters upgraded when its owner signs in. This file
// runs at production cost on purpose: the rest of the suite lowers it through
// test/support/scrypt-cost.ts (scripts/test.mjs loads it), which nothing
// under src/ may do.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost, type Roost, PACKAGE_ROOT } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { IDENTITY_STREAM } from '../src/core/identity.js';
import { SCRYPT_COST, SCRYPT_RUNNING, SCRYPT_WAITING, hashPassword, scryptLoad, setScryptCostForTests, verifyPassword } from '../src/server/identity/secrets.js';
import { request } from 'node:http';
import { tempDir } from './support/server.js';
import { ANON, call } from './support/shared.js';

/** POST /auth/login from a loopback address of its own (`from`), so many addresses can be had on one machine. */
function loginFrom(url: string, from: string, body: unknown): Promise<{ status: number; json: any; retry: string | null }> {
  const u = new URL(url + '/auth/login');
  const data = JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', localAddress: from, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => ok({ status: res.statusCode ?? 0, json: JSON.parse(text || 'null'), retry: (res.headers['retry-after']) ?? null }));
      },
    );
    req.on('error', fail);
    req.end(data);
  });
}

setScryptCostForTests(null);

let srv: Roost;
before(async () => {
  const store = new SqliteStore({ path: join(tempDir(), 'roost.db') });
  await createOwner(store, 'ann', 'ann-password', 'Ann');
  // Olga's hash was made by an older Roost: N=2^14.
  const old = await hashPassword('olga-password', { N: 1 << 14, r: 8, p: 1 });
  const ts = Date.now();
  const events = [
    { type: 'user.created', uid: 'u_olga', login: 'olga', name: 'Olga', passwordHash: old, admin: false, by: 'cli', ts },
    { type: 'member.set', project: 'default', uid: 'u_olga', role: 'viewer', by: 'cli', ts },
  ];
  await store.append(IDENTITY_STREAM, events.map((e) => ({ type: e.type, body: JSON.stringify(e) })));
  // A generous per-address budget (the flood below comes from many loopback addresses, each within its own limits).
  srv = await startRoost(store, { port: 0, requestsPerMinute: 10_000 });
});
after(() => srv?.close());

test('a new hash carries N=2^17, r=8, p=1 (at least), and checks', async () => {
  assert.ok(SCRYPT_COST.N >= 1 << 17 && SCRYPT_COST.r === 8 && SCRYPT_COST.p === 1);
  const h = await hashPassword('some-password');
  assert.match(h, new RegExp(`^scrypt\\$${SCRYPT_COST.N}\\$8\\$1\\$`));
  assert.equal(await verifyPassword('some-password', h), true);
  assert.equal(await verifyPassword('other-password', h), false);
  const ann = srv.identity.state.users.get(srv.identity.state.byLogin.get('ann')!)!;
  assert.match(ann.passwordHash, new RegExp(`^scrypt\\$${SCRYPT_COST.N}\\$`), 'the first owner, made at the machine, too');
});

test('a hash with lower parameters is upgraded when its owner signs in, and only then', async () => {
  const hashOf = () => srv.identity.state.users.get('u_olga')!.passwordHash;
  assert.match(hashOf(), /^scrypt\$16384\$8\$1\$/);
  assert.equal((await call(srv.url, ANON, 'POST', '/auth/login', { login: 'olga', password: 'wrong-password' })).status, 401);
  assert.match(hashOf(), /^scrypt\$16384\$/, 'a wrong password changes nothing');
  const r = await call(srv.url, ANON, 'POST', '/auth/login', { login: 'olga', password: 'olga-password' });
  assert.equal(r.status, 200);
  assert.match(hashOf(), new RegExp(`^scrypt\\$${SCRYPT_COST.N}\\$8\\$1\\$`), 'upgraded on sign-in');
  assert.equal(await verifyPassword('olga-password', hashOf()), true);
  const before = hashOf();
  assert.equal((await call(srv.url, ANON, 'POST', '/auth/login', { login: 'olga', password: 'olga-password' })).status, 200, 'the upgraded hash signs in');
  assert.equal(hashOf(), before, 'a current hash is left alone');
});

test('nothing under src/ lowers the cost (only tests may, through setScryptCostForTests)', () => {
  const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const callers = walk(join(PACKAGE_ROOT, 'src'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith(join('identity', 'secrets.ts')))
    .filter((f) => readFileSync(f, 'utf8').includes('setScryptCostForTests'));
  assert.deepEqual(callers, []);
});

test('a flood of sign-ins from many addresses holds at most two password checks at once; past the queue they are refused at once with 503 and Retry-After, and a sign-in works after', async () => {
  // Each check at production cost holds 128 MiB and a pool thread for a
  // quarter to half a second: 50 at once from many addresses would take
  // 6 GiB and every thread of libuv's pool without the gate.
  const flood = SCRYPT_RUNNING + SCRYPT_WAITING + 16;
  // The gate is about how many run, not how long each takes: N=2^15 (32 MiB, tens of ms) keeps the flood to seconds.
  setScryptCostForTests({ N: 1 << 15, r: 8, p: 1 });
  let most = { running: 0, waiting: 0 };
  const watch = setInterval(() => {
    const l = scryptLoad();
    most = { running: Math.max(most.running, l.running), waiting: Math.max(most.waiting, l.waiting) };
  }, 2);
  const answers = await Promise.all(
    Array.from({ length: flood }, async (_, i) => {
      const t0 = performance.now();
      // Each from an address of its own (one address holds at most 4 checks: signin-limits.ts).
      const r = await loginFrom(srv.url, `127.0.1.${i + 1}`, { login: `nobody-${i}`, password: 'some-password' });
      return { status: r.status, kind: r.json?.kind as string, retry: r.retry, ms: performance.now() - t0 };
    }),
  );
  clearInterval(watch);
  setScryptCostForTests(null);
  assert.ok(most.running <= SCRYPT_RUNNING && most.running > 0, `at most ${SCRYPT_RUNNING} checks ran at once (saw ${most.running})`);
  assert.ok(most.waiting <= SCRYPT_WAITING, `at most ${SCRYPT_WAITING} waited (saw ${most.waiting})`);
  const refused = answers.filter((a) => a.status === 503);
  assert.ok(refused.length > 0, 'the checks past the queue are refused');
  for (const a of answers) assert.ok(a.status === 401 || a.status === 503, `a flooded sign-in is 401 or 503 (got ${a.status})`);
  for (const a of refused) {
    assert.equal(a.kind, 'unavailable');
    assert.equal(a.retry, '1', 'a refused check says when to retry');
  }
  // The refused ones never waited for a password check: each answered faster than the slowest one that was checked.
  const slowestChecked = Math.max(...answers.filter((a) => a.status === 401).map((a) => a.ms));
  assert.ok(Math.max(...refused.map((a) => a.ms)) < slowestChecked, 'refused before any check');
  assert.deepEqual(scryptLoad(), { running: 0, waiting: 0, runningKnown: 0, waitingKnown: 0 }, 'every slot is given back');
  assert.equal((await call(srv.url, ANON, 'POST', '/auth/login', { login: 'ann', password: 'ann-password' })).status, 200, 'a sign-in after the flood works');
});
