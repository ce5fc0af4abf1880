// Properties of the approvals fold over long histories (the named cases and
// the short-history laws are in approvals.fold.test.ts): past KEEP_CLOSED
// closed requests, where the state forgets the oldest and must still refuse
// their ids; with any value at all (objects without a prototype, boxed
// values) where an event or a field is expected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KEEP_CLOSED, applyApproval, approvalsFromJSON, approvalsToJSON, emptyApprovals, pendingApprovals, recentApprovals, type ApprovalsState } from '../src/core/approvals.js';

const RUNS = Number(process.env.ROOST_FC_RUNS ?? 200);

/** A long history: requests over many ids, most of them closed soon after, so the kept window of closed ones moves. */
const history: fc.Arbitrary<Record<string, unknown>[]> = fc.array(fc.tuple(fc.nat(5), fc.nat(1_000_000)), { minLength: 150, maxLength: 400 }).map((steps) => {
  const out: Record<string, unknown>[] = [];
  let next = 0;
  const open: string[] = [];
  for (const [what, r] of steps) {
    const ts = out.length * 10;
    if (what <= 1 || open.length === 0) {
      // Sometimes an id from long ago (forgotten, or never used): it must stay refused or be a new request.
      const id = r % 9 === 0 ? `q${r % (next + 1)}` : r % 17 === 0 ? ['constructor', '__proto__', 'toString'][r % 3] : `q${next++}`;
      const kind = ['tool', 'fleet', 'verdict', 'ask'][r % 4];
      out.push({ type: 'approval.requested', id, kind, asker: `agent-${r % 5}`, tool: 'Bash', phrase: kind === 'ask' ? 'ship it' : undefined, window: 60_000, ts });
      open.push(id);
      continue;
    }
    const id = open.splice(r % open.length, 1)[0];
    if (what === 2) out.push({ type: 'approval.decided', id, decision: r % 2 ? 'allow' : 'deny', by: 'ann', phrase: r % 3 ? 'ship it' : 'nope', ts });
    else if (what === 3) out.push({ type: 'approval.expired', id, ts });
    else if (what === 4) out.push({ type: 'approval.withdrawn', id, reason: 'gone', ts });
    else out.push({ type: 'approval.decided', id, decision: 'deny', by: 'ben', ts });
  }
  return out;
});

const anything = fc.anything({ withNullPrototype: true, withBoxedValues: true, withSparseArray: true, maxDepth: 3 });
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  anything,
  fc.record({ type: fc.constantFrom('approval.requested', 'approval.decided', 'approval.expired', 'approval.withdrawn'), id: fc.oneof(fc.constantFrom('q1', 'q2', 'constructor'), anything), kind: anything, asker: anything, agent: anything, tool: anything, scope: anything, phrase: anything, decision: anything, by: anything, window: anything, ts: anything }, { requiredKeys: ['type'] }),
);

const wire = (s: ApprovalsState) => JSON.stringify(approvalsToJSON(s));

test('a long history, shipped as JSON at any point, folds to the same state; the closed window stays bounded and forgotten ids stay refused', () => {
  let forgot = 0;
  fc.assert(
    fc.property(history, fc.nat(), (events, cut) => {
      const s = emptyApprovals();
      const everRequested = new Set<string>();
      events.forEach((e, i) => {
        const known = s.byId.has(e.id as string) || s.forgotten.has(e.id as string);
        const fx = applyApproval(s, e, i + 1);
        if (e.type === 'approval.requested') {
          if (known) assert.deepEqual(fx, [], `an id seen before is refused (${e.id})`);
          if (fx.length) everRequested.add(e.id as string);
        }
        assert.ok(s.closed.length <= KEEP_CLOSED, 'at most KEEP_CLOSED closed requests in memory');
        for (const id of s.forgotten) assert.ok(!s.byId.has(id), 'a forgotten id is not in the state');
      });
      for (const id of everRequested) assert.ok(s.byId.has(id) || s.forgotten.has(id), 'every request is either kept or remembered as used');
      assert.equal(pendingApprovals(s).length + s.closed.length, s.byId.size, 'every approval in memory is pending or in the closed window');
      assert.deepEqual(recentApprovals(s).map((a) => a.id), [...s.closed].reverse());
      const k = cut % (events.length + 1);
      const head = emptyApprovals();
      events.slice(0, k).forEach((e, i) => applyApproval(head, e, i + 1));
      const shipped = approvalsFromJSON(JSON.parse(JSON.stringify(approvalsToJSON(head))));
      events.slice(k).forEach((e, i) => applyApproval(shipped, e, k + i + 1));
      assert.equal(wire(shipped), wire(s));
      if (s.forgotten.size) forgot++;
    }),
    { numRuns: RUNS },
  );
  assert.ok(forgot > RUNS / 4, `histories long enough to forget (${forgot})`);
});

test('any value at all, where an event or one of its fields is expected, never throws and never reaches Object.prototype', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(hostile, history.map((h) => h[0])), { maxLength: 40 }), (events) => {
      const s = emptyApprovals();
      events.forEach((e, i) => assert.ok(Array.isArray(applyApproval(s, e, i + 1))));
      assert.equal(wire(approvalsFromJSON(JSON.parse(wire(s)))), wire(s));
      assert.equal(({} as Record<string, unknown>).kind, undefined);
      assert.equal(typeof ({} as Record<string, unknown>).toString, 'function');
    }),
    { numRuns: RUNS },
  );
});
