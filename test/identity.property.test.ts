// Properties of the identity fold over generated stories: accounts, projects,
// members, invites, tokens and sign-ins chosen against the state folded so
// far (so invites get used and tokens revoked), with ids that are
// Object.prototype keys, and hostile events slipped in. Laws: folding a
// prefix, shipping the state as JSON, then folding the rest equals folding
// all; hostile events never throw; the lookups agree with what they index; a
// project that has an owner never loses its last one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyIdentity, emptyIdentity, identityFromJSON, identityToJSON, type IdentityChange, type IdentityState } from '../src/core/identity.js';

const RUNS = Number(process.env.ROOST_FC_RUNS ?? 300);

const UIDS = ['u1', 'u2', '__proto__', 'constructor'];
const LOGINS = ['ann', 'bob', 'constructor', 'tostring'];
const PROJECTS = ['p', 'constructor', 'hasownproperty'];
const ROLES = ['owner', 'editor', 'viewer'] as const;

/** A story: each step is (what, which), turned into an event against the state so far. */
const story: fc.Arbitrary<Record<string, unknown>[]> = fc.array(fc.tuple(fc.nat(11), fc.nat(1_000_000)), { maxLength: 70, size: 'max' }).map((steps) => {
  const s = emptyIdentity();
  const out: Record<string, unknown>[] = [];
  const pick = <T>(xs: readonly T[], r: number): T => xs[r % xs.length];
  let n = 0;
  for (const [what, r] of steps) {
    const ts = out.length + 1;
    const users = [...s.users.keys()];
    const invites = [...s.invites.values()];
    const tokens = [...s.tokens.keys()];
    let batch: Record<string, unknown>[];
    switch (what) {
      case 0:
        batch = [{ type: 'user.created', uid: pick(UIDS, r), login: pick(LOGINS, r >> 2), name: 'N', passwordHash: 'scrypt$h', admin: r % 5 === 0, ts }];
        break;
      case 1:
        batch = [{ type: 'project.created', id: pick(PROJECTS, r), name: 'P', by: pick(UIDS, r >> 2), ts }];
        break;
      case 2:
      case 3:
        batch = [{ type: 'member.set', project: pick(PROJECTS, r), uid: users.length ? pick(users, r >> 2) : pick(UIDS, r), role: pick(ROLES, r >> 4), ts }];
        break;
      case 4:
        batch = [{ type: 'member.removed', project: pick(PROJECTS, r), uid: users.length ? pick(users, r >> 2) : pick(UIDS, r), ts }];
        break;
      case 5:
        batch = [{ type: 'invite.created', codeHash: `c${n++}`, project: r % 3 ? pick(PROJECTS, r) : null, role: pick(ROLES, r >> 2), by: 'u1', expires: ts + (r % 20), ts }];
        break;
      case 6: {
        // Accepting an invite: the use, the account it makes, the membership it gives.
        const inv = invites.length ? pick(invites, r) : undefined;
        const uid = `v${n++}`;
        batch = inv
          ? [
              { type: 'invite.used', codeHash: inv.codeHash, uid, ts },
              { type: 'user.created', uid, login: `guest${n}`, passwordHash: 'h', via: inv.codeHash, ts },
              ...(inv.project ? [{ type: 'member.set', project: inv.project, uid, role: inv.role, via: inv.codeHash, ts }] : []),
            ]
          : [{ type: 'invite.used', codeHash: 'nope', uid, ts }];
        break;
      }
      case 7:
        batch = [{ type: 'token.created', id: pick(['t1', '__proto__', 'toString', `t${n++}`], r), hash: `th${r % 4}`, uid: users.length ? pick(users, r >> 2) : 'u1', project: pick(PROJECTS, r >> 3), role: pick(ROLES, r >> 5), label: 'laptop', ts }];
        break;
      case 8:
        batch = [{ type: 'token.revoked', id: tokens.length ? pick(tokens, r) : '__proto__', ts }];
        break;
      case 9:
        batch = [{ type: 'login.opened', sessionHash: `sh${r % 5}`, uid: users.length ? pick(users, r >> 3) : 'u1', expires: ts + 100, ts }];
        break;
      case 10:
        batch = [{ type: 'login.closed', sessionHash: `sh${r % 5}`, ts }];
        break;
      default:
        batch = [{ type: 'user.password', uid: users.length ? pick(users, r) : 'constructor', passwordHash: `scrypt$${r % 7}`, ts }];
    }
    for (const e of batch) {
      applyIdentity(s, e);
      out.push(e);
    }
  }
  return out;
});

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ withNullPrototype: true, maxDepth: 3 }),
  fc.record(
    {
      type: fc.oneof(fc.constantFrom('user.created', 'member.set', 'token.created', 'token.revoked', 'invite.used', 'login.opened', '__proto__', 'toString'), fc.anything({ maxDepth: 1 })),
      uid: fc.oneof(fc.constantFrom(...UIDS), fc.anything({ maxDepth: 1 })),
      login: fc.oneof(fc.constantFrom(...LOGINS, 'Bad Login'), fc.anything({ maxDepth: 1 })),
      project: fc.oneof(fc.constantFrom(...PROJECTS, '__proto__'), fc.anything({ maxDepth: 1 })),
      id: fc.oneof(fc.constantFrom('t1', '__proto__', 'p'), fc.anything({ maxDepth: 1 })),
      role: fc.oneof(fc.constantFrom(...ROLES, 'admin', 'constructor'), fc.anything({ maxDepth: 1 })),
      passwordHash: fc.oneof(fc.constant('h'), fc.constant('x'.repeat(1000)), fc.anything({ maxDepth: 1 })),
      hash: fc.anything({ maxDepth: 1 }),
      codeHash: fc.oneof(fc.constantFrom('c0', '__proto__'), fc.anything({ maxDepth: 1 })),
      via: fc.anything({ maxDepth: 1 }),
      ts: fc.oneof(fc.double(), fc.anything({ maxDepth: 1 })),
    },
    { requiredKeys: [] },
  ),
  fc.constant(JSON.parse('{"type":"user.created","uid":"u9","login":"zed","passwordHash":"h","__proto__":{"admin":true}}')),
);

const sequence = fc.tuple(story, fc.array(fc.tuple(fc.nat(), hostile), { maxLength: 8 })).map(([events, extra]) => {
  const out: unknown[] = [...events];
  for (const [at, h] of extra) out.splice(out.length ? at % (out.length + 1) : 0, 0, h);
  return out;
});

function fold(events: unknown[], s: IdentityState = emptyIdentity()): { s: IdentityState; changes: IdentityChange[][] } {
  return { s, changes: events.map((e) => applyIdentity(s, e)) };
}

const wire = (s: IdentityState) => JSON.stringify(identityToJSON(s));

function checkInvariants(s: IdentityState): void {
  assert.deepEqual([...s.byLogin].sort(), [...s.users.values()].map((u) => [u.login, u.uid]).sort(), 'one login per account, looked up both ways');
  assert.deepEqual(
    [...s.tokenByHash].sort(),
    [...s.tokens.values()].filter((t) => !t.revoked).map((t) => [t.hash, t.id]).sort(),
    'only live tokens open anything',
  );
  for (const [p, m] of s.members) {
    assert.ok(s.projects.has(p), 'members of existing projects only');
    for (const uid of m.keys()) assert.ok(s.users.has(uid), 'members are accounts');
  }
  for (const t of s.tokens.values()) assert.ok(s.users.has(t.uid) && s.projects.has(t.project));
  assert.equal(({} as Record<string, unknown>).admin, undefined, 'no prototype pollution');
}

test('folding a prefix, shipping the state as JSON, then folding the rest equals folding all (with the same changes)', () => {
  fc.assert(
    fc.property(sequence, fc.nat(), (events, cut) => {
      const k = events.length ? cut % (events.length + 1) : 0;
      const whole = fold(events);
      const shipped = identityFromJSON(JSON.parse(JSON.stringify(identityToJSON(fold(events.slice(0, k)).s))));
      const rest = fold(events.slice(k), shipped);
      assert.equal(wire(rest.s), wire(whole.s));
      assert.deepEqual(rest.s, whole.s, 'the lookups too');
      assert.deepEqual(rest.changes, whole.changes.slice(k));
    }),
    { numRuns: RUNS },
  );
});

test('stories and hostile events never throw, keep the lookups true, and never take a project’s last owner', () => {
  let members = 0;
  let revoked = 0;
  let invited = 0;
  fc.assert(
    fc.property(sequence, (events) => {
      const s = emptyIdentity();
      for (const e of events) {
        const owned = [...s.members].filter(([, m]) => [...m.values()].includes('owner')).map(([p]) => p);
        applyIdentity(s, e);
        checkInvariants(s);
        for (const p of owned) assert.ok([...s.members.get(p)!.values()].includes('owner'), `project ${p} lost its last owner`);
      }
      if ([...s.members.values()].some((m) => m.size > 1)) members++;
      if ([...s.tokens.values()].some((t) => t.revoked)) revoked++;
      if ([...s.invites.values()].some((i) => i.usedBy !== null)) invited++;
    }),
    { numRuns: RUNS },
  );
  assert.ok(members > RUNS / 10 && revoked > RUNS / 10 && invited > RUNS / 10, `the stories reach shared projects (${members}), revoked tokens (${revoked}) and used invites (${invited})`);
});

test('ids that are Object.prototype keys are accounts, projects and tokens like any other', () => {
  const s = emptyIdentity();
  const events = [
    { type: 'user.created', uid: '__proto__', login: 'constructor', passwordHash: 'h', ts: 1 },
    { type: 'project.created', id: 'constructor', name: 'C', by: '__proto__', ts: 1 },
    { type: 'member.set', project: 'constructor', uid: '__proto__', role: 'owner', ts: 1 },
    { type: 'token.created', id: 'toString', hash: 'hasOwnProperty', uid: '__proto__', project: 'constructor', role: 'editor', ts: 2 },
  ];
  for (const e of events) assert.notDeepEqual(applyIdentity(s, e), [], JSON.stringify(e));
  assert.equal(s.users.get('__proto__')!.login, 'constructor');
  assert.equal(s.byLogin.get('constructor'), '__proto__');
  assert.equal(s.members.get('constructor')!.get('__proto__'), 'owner');
  assert.equal(s.tokenByHash.get('hasOwnProperty'), 'toString');
  assert.deepEqual(identityToJSON(identityFromJSON(JSON.parse(JSON.stringify(identityToJSON(s))))), identityToJSON(s));
  assert.deepEqual(applyIdentity(s, { type: 'token.revoked', id: 'valueOf', ts: 3 }), [], 'an unknown id is a no-op');
  checkInvariants(s);
});
