// quietSince: the floor fold stays pure (the clock comes in as `now`); only
// working and thinking agents turn quiet, and only after the threshold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QUIET_AFTER_MS, applyEvent, emptyFloor, quietSince } from '../src/core/floor.js';

test('a working or thinking agent is quiet after the threshold; a statement (idle, waiting, done) never is', () => {
  const s = emptyFloor();
  const t0 = 1_000_000;
  for (const [id, status] of [['w', 'working'], ['t', 'thinking'], ['i', 'idle'], ['q', 'waiting'], ['d', 'done']])
    applyEvent(s, { type: 'status', agent: id, team: 'T', status, ts: t0 });
  const at = (id: string, now: number, after?: number) => quietSince(s.agents.get(id)!, now, after);
  assert.equal(at('w', t0 + QUIET_AFTER_MS - 1), null, 'just under the default: still working');
  assert.equal(at('w', t0 + QUIET_AFTER_MS), t0, 'at the default: quiet since its last event');
  assert.equal(at('t', t0 + 10 * QUIET_AFTER_MS), t0);
  for (const id of ['i', 'q', 'd']) assert.equal(at(id, t0 + 100 * QUIET_AFTER_MS), null, `${id} said what it is`);
  assert.equal(at('w', t0 + 1_000, 1_000), t0, 'the threshold is a setting');
  applyEvent(s, { type: 'tool', agent: 'w', tool: 'Bash', ts: t0 + 5 * QUIET_AFTER_MS });
  assert.equal(at('w', t0 + 5 * QUIET_AFTER_MS + 1), null, 'a word from it: working again');
});
