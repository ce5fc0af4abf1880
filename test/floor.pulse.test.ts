// The pulse counter (src/core/pulse.ts): events per minute per team over the
// last hour, bounded (60 minutes per team), old minutes zeroed as time moves on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PULSE_MAX_TEAMS, countPulse, emptyPulse, pulseSeries } from '../src/core/pulse.js';

const MIN = 60_000;
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % MIN);

test('counts per minute per team; the last hour only, oldest first', () => {
  const p = emptyPulse();
  countPulse(p, 'a', T0);
  countPulse(p, 'a', T0 + 1_000);
  countPulse(p, 'b', T0 + 5 * MIN, 3);
  let s = pulseSeries(p, T0 + 5 * MIN);
  assert.equal(s.start, T0 + 5 * MIN - 59 * MIN);
  assert.deepEqual(s.teams.map((t) => [t.team, t.total, t.counts[54], t.counts[59]]), [['b', 3, 0, 3], ['a', 2, 2, 0]]);
  // 70 minutes on: a's minute has left the hour, and a is forgotten; b's too.
  countPulse(p, 'b', T0 + 70 * MIN);
  s = pulseSeries(p, T0 + 70 * MIN);
  assert.deepEqual(s.teams.map((t) => [t.team, t.total]), [['b', 1]]);
  assert.equal(p.teams.has('a'), false);
  // A count older than the team's hour is dropped; one inside it lands in its minute.
  countPulse(p, 'b', T0);
  countPulse(p, 'b', T0 + 69 * MIN);
  assert.deepEqual(pulseSeries(p, T0 + 70 * MIN).teams[0].counts.slice(58), [1, 1]);
});

test('bounded: at most PULSE_MAX_TEAMS teams, hostile times ignored', () => {
  const p = emptyPulse();
  for (let i = 0; i < PULSE_MAX_TEAMS + 50; i++) countPulse(p, `t${i}`, T0);
  assert.equal(p.teams.size, PULSE_MAX_TEAMS);
  countPulse(p, 't1', NaN);
  countPulse(p, 't1', Infinity);
  assert.equal(pulseSeries(p, T0, 5).teams.length, 5);
});
