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
import { SCRYPT_COST, hashPassword, setScryptCostForTests, verifyPassword } from '../src/server/identity/secrets.js';
import { tempDir } from './support/server.js';
import { ANON, call } from './support/shared.js';

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
  srv = await startRoost(store, { port: 0 });
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
