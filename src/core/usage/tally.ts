// Tallies: adding one record's figures into a tally (or a keyed row of
// them), and a tally's total tokens.

import { emptyTally, type Tally } from './model.js';

export function add(t: Tally, d: Tally): void {
  t.input += d.input;
  t.output += d.output;
  t.cacheRead += d.cacheRead;
  t.cacheWrite += d.cacheWrite;
  t.costMicros += d.costMicros;
  t.requests += d.requests;
  t.unpricedTokens += d.unpricedTokens;
  t.accepted += d.accepted;
  t.rejected += d.rejected;
}

export function into<K>(m: Map<K, Tally>, k: K, d: Tally): void {
  let t = m.get(k);
  if (!t) m.set(k, (t = emptyTally()));
  add(t, d);
}

/** Total tokens of a tally (input, output and both cache figures). */
export function tokensOf(t: Tally): number {
  return t.input + t.output + t.cacheRead + t.cacheWrite;
}
