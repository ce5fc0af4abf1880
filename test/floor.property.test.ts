// Properties of the floor fold that must hold for every event sequence, checked
// with fast-check: folding in pieces (with the state shipped as JSON in between,
// as a snapshot does) equals folding in one go; hostile input never throws and
// never breaks the floor's invariants; lifetimes swept at monotone `now` agree
// with the logged sweep event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  EVENT_TYPES,
  STATUSES,
  SWEEP,
  applyEvent,
  dueForSweep,
  emptyFloor,
  floorFromJSON,
  floorToJSON,
  sweep,
  type Effect,
  type FloorEvent,
  type FloorState,
} from '../src/core/floor.js';
import { checkFloorEvent, normalizeFloorEvent } from '../src/core/floor-wire.js';

const RUNS = Number(process.env.ROOST_FC_RUNS ?? 300);
const T0 = 1_700_000_000_000;

// ---------------------------------------------------------------- arbitraries
// A small pool of ids so events collide on the same agents, teams and hints.
// (`'` × 128: a helper's id made from it is the parent's own id, and appending a prime cannot make it unique.)
const ids = fc.constantFrom('a', 'b', 'c', 'lead', 'rev', 'x/y', 'Lead', '__proto__', 'constructor', 'toString', 'a\u0000b', "'".repeat(128));
const roles = fc.constantFrom('lead', 'LEAD', 'coder', 'code-reviewer', 'tester', '', 'subagent');
const teams = fc.oneof(
  fc.constantFrom('T', 'U', 'default', '__proto__', ''),
  fc.record({ id: fc.option(fc.constantFrom('t1', 'T', 'U'), { nil: undefined }), name: fc.option(fc.constantFrom('Payments', 'T', ''), { nil: undefined }) }, { requiredKeys: [] }),
);
const agentField = fc.oneof(
  ids,
  fc.record({ id: ids, name: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }), role: fc.option(roles, { nil: undefined }), source: fc.option(fc.constantFrom('cli', 'codex'), { nil: undefined }) }, { requiredKeys: ['id'] }),
);
const statusField = fc.oneof(fc.constantFrom(...STATUSES), fc.constantFrom('busy', '', 'DONE'));

/** Events shaped like the contract's, with optional fields in any combination (no ts: it is assigned in order). */
const wellFormed: fc.Arbitrary<FloorEvent> = fc.record(
  {
    type: fc.constantFrom(...EVENT_TYPES, ...EVENT_TYPES, ...EVENT_TYPES),
    agent: agentField,
    name: fc.string({ maxLength: 6 }),
    role: roles,
    team: teams,
    parent: ids,
    source: fc.constantFrom('claude-code', 'cli'),
    status: statusField,
    activity: fc.string({ maxLength: 8 }),
    tool: fc.constantFrom('Read', 'Bash'),
    to: fc.oneof(ids, fc.array(ids, { maxLength: 4 })),
    text: fc.string({ maxLength: 6 }),
    task: fc.string({ maxLength: 6 }),
    subagent: fc.record({ key: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: undefined }), type: fc.option(roles, { nil: undefined }) }, { requiredKeys: [] }),
  },
  { requiredKeys: ['type', 'agent'] },
);

/** Events the HTTP edge accepts: right types everywhere, ids that collide. */
const valid: fc.Arbitrary<FloorEvent> = fc.record(
  {
    type: fc.constantFrom(...EVENT_TYPES),
    agent: fc.oneof(ids, fc.record({ id: ids, role: roles }, { requiredKeys: ['id'] })),
    team: fc.oneof(fc.constantFrom('T', 'U', ' T '), fc.record({ id: fc.constantFrom('t1', 'T'), name: fc.constantFrom('Payments', 'T') }, { requiredKeys: ['name'] })),
    parent: ids,
    status: fc.constantFrom(...STATUSES),
    activity: fc.string({ maxLength: 300 }),
    to: fc.oneof(ids, fc.array(ids, { maxLength: 3 })),
    text: fc.string({ maxLength: 4 }),
    subagent: fc.record({ key: fc.constantFrom('k1', 'k2'), type: roles }, { requiredKeys: [] }),
  },
  { requiredKeys: ['type', 'agent'] },
);

/** Anything at all where an event is expected, including prototype-pollution keys and deep or huge values. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ withNullPrototype: true, withSparseArray: true, withBoxedValues: true, maxDepth: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
  // wrong types in every field of an otherwise valid event
  fc.record({
    type: fc.oneof(fc.constantFrom(...EVENT_TYPES, SWEEP, 'toString', '__proto__'), fc.anything({ maxDepth: 1 })),
    agent: fc.oneof(agentField, fc.anything({ maxDepth: 2 })),
    team: fc.oneof(teams, fc.anything({ maxDepth: 2 })),
    parent: fc.anything({ maxDepth: 1 }),
    status: fc.anything({ maxDepth: 1 }),
    to: fc.anything({ maxDepth: 2 }),
    subagent: fc.anything({ maxDepth: 2 }),
    ts: fc.oneof(fc.double(), fc.anything({ maxDepth: 1 })),
    activity: fc.anything({ maxDepth: 1 }),
    task: fc.anything({ maxDepth: 1 }),
  }, { requiredKeys: [] }),
  // JSON-parsed payloads carry `__proto__` as an own key
  fc.constantFrom(
    '{"type":"join","agent":{"id":"__proto__","__proto__":{"polluted":1}},"team":{"__proto__":{"x":1},"name":"T"}}',
    '{"__proto__":{"type":"join","agent":"p"},"type":"status","agent":"constructor"}',
    '{"type":"message","agent":"a","to":["__proto__","constructor","hasOwnProperty"]}',
    '{"type":"tool","agent":"__proto__","subagent":{"key":"__proto__","type":"constructor"}}',
  ).map((t) => JSON.parse(t)),
  // huge strings and deep nesting
  fc.constantFrom(
    { type: 'status', agent: 'h'.repeat(200_000), activity: 'a'.repeat(300_000), team: 't'.repeat(100_000) },
    { type: 'message', agent: 'h', to: Array.from({ length: 10_000 }, (_, i) => `r${i}`), text: 'x'.repeat(100_000) },
    { type: 'join', agent: deep(5000) },
    { type: 'task', agent: 'h', task: 'w'.repeat(1_000_000) },
  ),
);

function deep(n: number): unknown {
  let o: unknown = { id: 'deep' };
  for (let i = 0; i < n; i++) o = { id: o };
  return o;
}

// ---------------------------------------------------------------- checks

/** The fold's index agrees with the state it indexes (src/core/floor.ts, `FloorIndex`). */
function checkIndex(s: FloorState): void {
  const { seats, children, hintsByHelper, hintsByPrefix } = s.index;
  assert.deepEqual([...seats.keys()].sort(), [...s.teams.keys()].sort(), 'one seating per room');
  for (const [team, st] of seats) {
    const here = [...s.agents.values()].filter((a) => a.team === team);
    assert.equal(st.members, here.length, `room ${JSON.stringify(team)} counts its agents`);
    assert.deepEqual([...st.taken].sort((x, y) => x - y), here.map((a) => a.desk).sort((x, y) => x - y), 'taken desks are the agents’ desks');
    const free = new Set(st.free);
    assert.equal(free.size, st.free.length, 'a free desk is listed once');
    for (let d = 1; d < st.next; d++) assert.equal(free.has(d), !st.taken.has(d), `desk ${d} is free exactly when nobody sits there`);
    for (const d of st.free) assert.ok(d >= 1 && d < st.next);
    st.free.forEach((d, i) => i > 0 && assert.ok(st.free[(i - 1) >> 1] <= d, 'the free list is a min-heap'));
    for (const d of st.taken) assert.ok(d < st.next || d === 0);
  }
  const kids = new Map<string, string[]>();
  for (const a of s.agents.values()) if (a.parent !== null) kids.set(a.parent, [...(kids.get(a.parent) ?? []), a.id]);
  assert.deepEqual(new Map([...children].map(([p, set]) => [p, [...set].sort()])), new Map([...kids].map(([p, list]) => [p, list.sort()])), 'children index');
  const byHelper = new Map<string, string[]>();
  const byPrefix = new Map<string, string[]>();
  for (const [k, v] of s.hints) {
    byHelper.set(v, [...(byHelper.get(v) ?? []), k]);
    for (let i = k.indexOf('\u0000'); i >= 0; i = k.indexOf('\u0000', i + 1)) byPrefix.set(k.slice(0, i), [...(byPrefix.get(k.slice(0, i)) ?? []), k]);
  }
  const sorted = (m: Map<string, Set<string> | string[]>) => new Map([...m].map(([x, list]) => [x, [...list].sort()]));
  assert.deepEqual(sorted(hintsByHelper), sorted(byHelper), 'hints by helper');
  assert.deepEqual(sorted(hintsByPrefix), sorted(byPrefix), 'hints by the agents they would be forgotten with');
}

/** The floor's invariants, as stated at the top of src/core/floor.ts. */
function checkInvariants(s: FloorState): void {
  checkIndex(s);
  const desks = new Map<string, Set<number>>();
  for (const [id, a] of s.agents) {
    assert.equal(a.id, id, 'an agent is keyed by its id');
    assert.ok(s.teams.has(a.team), `agent ${JSON.stringify(id)} is in an existing team`);
    assert.ok(Number.isInteger(a.desk) && a.desk >= 0, 'desks are whole numbers');
    if (a.desk === 0) assert.equal(a.role.toLowerCase(), 'lead', 'desk 0 is only for a lead');
    const used = desks.get(a.team) ?? new Set();
    assert.ok(!used.has(a.desk), `desk ${a.desk} of team ${a.team} is taken once`);
    used.add(a.desk);
    desks.set(a.team, used);
    assert.ok((STATUSES as readonly string[]).includes(a.status));
    assert.ok(a.activity.length <= 280);
    assert.ok(a.id.length <= 128 && a.name.length <= 80);
  }
  for (const id of s.teams.keys()) assert.ok(desks.has(id), `team ${JSON.stringify(id)} is not empty`);
  for (const helper of s.hints.values()) assert.ok(s.agents.has(helper), 'every remembered hint points at an agent on the floor');
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
}

function wire(s: FloorState): string {
  return JSON.stringify(floorToJSON(s));
}

/** Stamps increasing timestamps (random gaps up to 3 h) onto events; occasionally a logged sweep. */
function timeline(steps: { e: FloorEvent | null; gap: number }[]): FloorEvent[] {
  let t = T0;
  return steps.map(({ e, gap }) => {
    t += gap;
    return e ? { ...e, ts: t } : { type: SWEEP, ts: t };
  });
}

const steps = fc.array(
  fc.record({ e: fc.option(wellFormed, { freq: 6, nil: null }), gap: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 3 * 3_600_000 })) }),
  { maxLength: 60 },
);

// ---------------------------------------------------------------- properties

test('folding a prefix, shipping the state as JSON, then folding the rest equals folding all', () => {
  fc.assert(
    fc.property(steps, fc.nat(), (st, cut) => {
      const events = timeline(st);
      const k = events.length ? cut % (events.length + 1) : 0;
      const whole = emptyFloor();
      const fxWhole: Effect[][] = events.map((e) => applyEvent(whole, e));

      const first = emptyFloor();
      for (const e of events.slice(0, k)) applyEvent(first, e);
      const shipped = floorFromJSON(JSON.parse(JSON.stringify(floorToJSON(first))));
      const fxRest = events.slice(k).map((e) => applyEvent(shipped, e));

      assert.equal(wire(shipped), wire(whole));
      assert.deepEqual(fxRest, fxWhole.slice(k), 'the rest plays the same effects');
      checkIndex(shipped); // the index rebuilt from JSON keeps agreeing as the rest is folded
      checkIndex(whole);
    }),
    { numRuns: RUNS },
  );
});

test('hostile events never throw and keep the invariants', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(hostile, wellFormed), { maxLength: 30 }), (events) => {
      const s = emptyFloor();
      for (const e of events) {
        const fx = applyEvent(s, e as FloorEvent);
        assert.ok(Array.isArray(fx));
        checkInvariants(s);
      }
      // and the state still ships as JSON
      checkInvariants(floorFromJSON(JSON.parse(JSON.stringify(floorToJSON(s)))));
    }),
    { numRuns: RUNS },
  );
});

test('non-object events are ignored outright', () => {
  const s = emptyFloor();
  for (const e of [null, undefined, 0, 'join', [], [{ type: 'join', agent: 'a' }], true]) assert.deepEqual(applyEvent(s, e as unknown as FloorEvent), []);
  assert.equal(s.agents.size, 0);
});

test('sweeps interleaved with events at monotone now keep the invariants and leave nothing due', () => {
  fc.assert(
    fc.property(steps, (st) => {
      const events = timeline(st);
      const direct = emptyFloor();
      const logged = emptyFloor();
      for (const e of events) {
        if (e.type === SWEEP) {
          const now = e.ts as number;
          const due = dueForSweep(direct, now);
          const removed = sweep(direct, now);
          assert.deepEqual(removed, due, 'sweep removes exactly what was due');
          assert.deepEqual(dueForSweep(direct, now), [], 'nothing is due right after a sweep');
          const fx = applyEvent(logged, e);
          assert.deepEqual(fx, removed.length ? [{ kind: 'remove', agents: removed }] : [], 'the logged sweep event removes the same agents');
          for (const id of removed) assert.equal(direct.agents.has(id), false);
        } else {
          applyEvent(direct, e);
          applyEvent(logged, e);
        }
        checkInvariants(direct);
        assert.equal(wire(logged), wire(direct));
      }
    }),
    { numRuns: RUNS },
  );
});

test('whatever the HTTP edge accepts, the fold puts on the floor (edge and fold agree)', () => {
  let accepted = 0;
  fc.assert(
    fc.property(fc.array(fc.oneof(valid, valid, wellFormed, hostile), { maxLength: 20 }), (items) => {
      const s = emptyFloor();
      let t = T0;
      for (const x of items) {
        if (checkFloorEvent(x) !== null) continue;
        accepted++;
        const e = normalizeFloorEvent(JSON.parse(JSON.stringify(x)), (t += 1000));
        // what is stored is what is folded, and it ships as JSON unchanged
        assert.deepEqual(JSON.parse(JSON.stringify(e)), e);
        applyEvent(s, e);
        checkInvariants(s);
        if (e.type === 'reset') {
          assert.equal(s.agents.size, 0);
          continue;
        }
        const raw = typeof e.agent === 'string' ? e.agent : (e.agent as { id: string }).id;
        const id = raw.trim().slice(0, 128);
        assert.ok(s.agents.has(id), `the agent ${JSON.stringify(id)} of an accepted ${e.type} is on the floor`);
        assert.equal(s.agents.get(id)!.leftAt === null, e.type !== 'leave' || e.subagent !== undefined);
      }
    }),
    { numRuns: RUNS },
  );
  assert.ok(accepted > RUNS * 2, `the generators produce events the edge accepts (${accepted})`);
});
