// Bounded collections in the folds: a Map or Set used as an insertion-ordered
// record of ids, whose oldest entries are let go past a cap. One way to trim
// them for every fold (approvals' forgotten ids and session rules, the flock's
// forgotten lists and requesters).

/** Drops the oldest entries (insertion order) of a Map or Set until it holds at most `cap`. */
export function trimOldest(c: Map<unknown, unknown> | Set<unknown>, cap: number): void {
  if (c.size <= cap) return;
  // Deleting the entry being visited is safe: iteration goes on from the next one.
  for (const k of c.keys()) {
    if (c.size <= cap) break;
    c.delete(k);
  }
}
