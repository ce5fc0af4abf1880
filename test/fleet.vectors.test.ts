// The contract's 13 vectors, run as data from the fixture file (a byte-for-byte
// copy of spec/agents-fold.vectors.json): every expected state and every
// expected chat projection must deep-equal what the fold gives, after a JSON
// round trip (the form a snapshot travels in).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { applySessionEvent, emptySessions, projectSession, reduceSessions, type SessionsState } from '../src/core/fleet.js';

interface Vector {
  name: string;
  description?: string;
  initial_state?: SessionsState;
  event?: Record<string, unknown>;
  event_sequence?: Record<string, unknown>[];
  expected_state_update?: unknown;
  expected_state?: unknown;
  expected_group_chat_projection?: unknown;
  expected_group_chat_projection_of?: Record<string, unknown>;
}

const contract = JSON.parse(readFileSync(new URL('./fixtures/agents-fold.vectors.json', import.meta.url), 'utf8')) as {
  app: string;
  vectors: Vector[];
};

const asData = (x: unknown): unknown => JSON.parse(JSON.stringify(x));
/** Deep-frozen copies make any mutation of the input state throw (modules are strict mode). */
function frozen<T>(x: T): T {
  const c = asData(x) as T;
  const freeze = (v: unknown): void => {
    if (v && typeof v === 'object') {
      Object.freeze(v);
      for (const k of Object.keys(v)) freeze((v as Record<string, unknown>)[k]);
    }
  };
  freeze(c);
  return c;
}

test('the fixture holds the 13 vectors of the agents contract', () => {
  assert.equal(contract.app, 'agents');
  assert.equal(contract.vectors.length, 13);
  assert.equal(new Set(contract.vectors.map((v) => v.name)).size, 13);
});

for (const v of contract.vectors) {
  test(`vector ${v.name}`, () => {
    if (v.event) {
      // One event onto an initial state.
      assert.ok(v.initial_state, 'a single-event vector has an initial state');
      const before = frozen(v.initial_state);
      const next = reduceSessions(before, v.event);
      assert.deepStrictEqual(asData(next), v.expected_state_update, 'state');
      if ('expected_group_chat_projection' in v) {
        assert.deepStrictEqual(asData(projectSession(v.event, before)), v.expected_group_chat_projection, 'projection against the state');
        const both = applySessionEvent(before, v.event);
        assert.deepStrictEqual(asData(both.state), v.expected_state_update);
        assert.deepStrictEqual(asData(both.chat), v.expected_group_chat_projection, 'projection as a reader folds it');
      }
      return;
    }
    // An event sequence from the empty board.
    assert.ok(v.event_sequence && v.event_sequence.length > 0, 'a vector has an event or an event sequence');
    let s = frozen(v.initial_state ?? emptySessions());
    let projectedAt: SessionsState | undefined;
    for (const e of v.event_sequence) {
      if (v.expected_group_chat_projection_of && projectedAt === undefined && JSON.stringify(e) === JSON.stringify(v.expected_group_chat_projection_of)) {
        projectedAt = s;
      }
      s = frozen(reduceSessions(s, e));
    }
    assert.deepStrictEqual(asData(s), v.expected_state, 'state');
    if (v.expected_group_chat_projection_of) {
      assert.ok(projectedAt, 'the projected event is one of the sequence');
      assert.deepStrictEqual(asData(projectSession(v.expected_group_chat_projection_of, projectedAt)), v.expected_group_chat_projection, 'projection against the state');
      assert.deepStrictEqual(asData(projectSession(v.expected_group_chat_projection_of)), v.expected_group_chat_projection, 'projection from the event alone');
    }
  });
}
