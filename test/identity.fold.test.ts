// The identity fold: named cases for the rules a user relies on (one account
// per login, an invite used once, a project never without an owner, a revoked
// token gone) and properties: hostile input never throws, and folding in two
// halves equals folding all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyIdentity, emptyIdentity, memberRole, type IdentityState } from '../src/core/identity.js';

function fold(events: unknown[], s: IdentityState = emptyIdentity()): IdentityState {
  for (const e of events) applyIdentity(s, e);
  return s;
}

const user = (uid: string, login: string, extra: object = {}) => ({ type: 'user.created', uid, login, name: login, passwordHash: 'scrypt$x', ts: 1, ...extra });
const base = [user('u1', 'ann', { admin: true }), { type: 'project.created', id: 'p', name: 'P', by: 'u1', ts: 1 }, { type: 'member.set', project: 'p', uid: 'u1', role: 'owner', ts: 1 }];

test('one account per uid and per login; bad logins fold to nothing', () => {
  const s = fold([...base, user('u1', 'other'), user('u2', 'ann'), user('u3', 'Not Valid'), user('u4', 'bob')]);
  assert.deepEqual([...s.users.keys()].sort(), ['u1', 'u4']);
  assert.equal(s.users.get('u1')!.admin, true);
  assert.equal(s.users.get('u4')!.admin, false);
});

test('an invite is used once, before it expires; its account exists only with it', () => {
  const inv = { type: 'invite.created', codeHash: 'h1', project: 'p', role: 'viewer', by: 'u1', expires: 100, ts: 1 };
  const accept = (uid: string, login: string, ts: number) => [
    { type: 'invite.used', codeHash: 'h1', uid, ts },
    user(uid, login, { via: 'h1', ts }),
    { type: 'member.set', project: 'p', uid, role: 'viewer', via: 'h1', ts },
  ];
  const s = fold([...base, inv, ...accept('u2', 'bob', 50), ...accept('u3', 'eve', 60)]);
  assert.ok(s.users.has('u2'));
  assert.equal(s.users.has('u3'), false, 'the second accept of one code makes no account');
  assert.equal(memberRole(s, 'p', 'u2'), 'viewer');
  assert.equal(memberRole(s, 'p', 'u3'), null);
  const late = fold([...base, inv, ...accept('u2', 'bob', 101)]);
  assert.equal(late.users.has('u2'), false, 'an expired invite makes no account');
});

test('a project keeps at least one owner; roles change and go', () => {
  const s = fold([...base, user('u2', 'bob'), { type: 'member.set', project: 'p', uid: 'u2', role: 'editor', ts: 2 }]);
  assert.deepEqual(applyIdentity(s, { type: 'member.set', project: 'p', uid: 'u1', role: 'viewer', ts: 3 }), []);
  assert.deepEqual(applyIdentity(s, { type: 'member.removed', project: 'p', uid: 'u1', ts: 3 }), []);
  assert.equal(memberRole(s, 'p', 'u1'), 'owner');
  assert.deepEqual(applyIdentity(s, { type: 'member.set', project: 'p', uid: 'u2', role: 'viewer', ts: 4 }), [{ kind: 'member', project: 'p', uid: 'u2' }]);
  assert.deepEqual(applyIdentity(s, { type: 'member.removed', project: 'p', uid: 'u2', ts: 5 }), [{ kind: 'member', project: 'p', uid: 'u2' }]);
  assert.equal(memberRole(s, 'p', 'u2'), null);
  assert.deepEqual(applyIdentity(s, { type: 'member.set', project: 'nope', uid: 'u1', role: 'owner', ts: 6 }), [], 'no member of a project that does not exist');
});

test('a revoked token is gone from the lookup; sign-ins open and close', () => {
  const s = fold([...base, { type: 'token.created', id: 't1', hash: 'th', uid: 'u1', project: 'p', role: 'editor', label: 'laptop', ts: 2 }]);
  assert.equal(s.tokenByHash.get('th'), 't1');
  assert.deepEqual(applyIdentity(s, { type: 'token.revoked', id: 't1', ts: 3 }), [{ kind: 'token', id: 't1' }]);
  assert.equal(s.tokenByHash.has('th'), false);
  assert.deepEqual(applyIdentity(s, { type: 'token.revoked', id: 't1', ts: 4 }), [], 'revoking twice changes nothing');
  applyIdentity(s, { type: 'login.opened', sessionHash: 'sh', uid: 'u1', expires: 10, ts: 5 });
  assert.equal(s.logins.get('sh')!.uid, 'u1');
  assert.deepEqual(applyIdentity(s, { type: 'login.closed', sessionHash: 'sh', ts: 6 }), [{ kind: 'login', sessionHash: 'sh' }]);
});

const anyEvent = fc.oneof(
  fc.anything(),
  fc.record({
    type: fc.constantFrom('user.created', 'user.password', 'invite.created', 'invite.used', 'token.created', 'token.revoked', 'project.created', 'member.set', 'member.removed', 'login.opened', 'login.closed', 'x'),
    uid: fc.constantFrom('u1', 'u2', 'u3', '', 'bad id!'),
    login: fc.constantFrom('ann', 'bob', 'carol', 'BAD', ''),
    passwordHash: fc.constantFrom('h', '', 5),
    project: fc.constantFrom('p', 'q', null, 7),
    id: fc.constantFrom('p', 'q', 't1', 't2'),
    role: fc.constantFrom('owner', 'editor', 'viewer', 'admin'),
    codeHash: fc.constantFrom('c1', 'c2'),
    hash: fc.constantFrom('h1', 'h2'),
    sessionHash: fc.constantFrom('s1', 's2'),
    via: fc.option(fc.constantFrom('c1', 'c2'), { nil: undefined }),
    expires: fc.integer({ min: 0, max: 100 }),
    ts: fc.integer({ min: 0, max: 100 }),
  }),
);

/** A comparable picture of the state. */
function picture(s: IdentityState): string {
  return JSON.stringify({
    users: [...s.users.values()],
    invites: [...s.invites.values()],
    tokens: [...s.tokens.values()],
    projects: [...s.projects.values()],
    members: [...s.members].map(([p, m]) => [p, [...m]]),
    logins: [...s.logins.values()],
  });
}

test('hostile events never throw, and a project that has an owner never loses its last one', () => {
  fc.assert(
    fc.property(fc.array(anyEvent, { maxLength: 60 }), (events) => {
      const s = fold(base);
      for (const e of events) {
        const had = new Set([...s.members].filter(([, m]) => [...m.values()].includes('owner')).map(([p]) => p));
        applyIdentity(s, e);
        for (const p of had) assert.ok([...s.members.get(p)!.values()].includes('owner'), `project ${p} lost its last owner`);
      }
    }),
    { numRuns: 300 },
  );
});

test('folding is deterministic: the same events give the same state on every node', () => {
  fc.assert(
    fc.property(fc.array(anyEvent, { maxLength: 40 }), fc.nat(40), (events, cut) => {
      const all = fold([...base, ...events]);
      const half = fold(events.slice(cut), fold([...base, ...events.slice(0, cut)]));
      assert.equal(picture(half), picture(all));
    }),
    { numRuns: 200 },
  );
});
