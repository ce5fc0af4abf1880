// How many agents a batch of events would bring onto the floor, counted
// without folding: what the HTTP edge checks before it accepts a batch.

import { LIMITS, type FloorEvent, type FloorState } from './model.js';
import { agentRef, str } from './read.js';

/**
 * How many agents these events would bring onto the floor `s` if folded in
 * order: each event's agent and each message recipient that is neither on the
 * floor nor brought by an earlier event (a `reset` empties the floor for the
 * events after it). A subagent hint may open one helper desk more per event;
 * those are not counted. The HTTP edge uses this to refuse a batch that brings
 * too many at once; it costs a lookup per id, not a fold, and stops counting
 * once past `upTo` (the answer is then `upTo + 1`).
 */
export function newAgentsIn(s: FloorState, events: readonly FloorEvent[], upTo = Infinity): number {
  let n = 0;
  let cleared = false;
  let seen: Set<string> | null = null;
  const count = (id: string | undefined): void => {
    if (id === undefined || (!cleared && s.agents.has(id)) || seen?.has(id)) return;
    (seen ??= new Set()).add(id);
    n++;
  };
  for (const e of events) {
    if (n > upTo) return n;
    if (!e || typeof e !== 'object') continue;
    if (e.type === 'reset') {
      cleared = true;
      seen = null;
      continue;
    }
    const ref = agentRef(e);
    if (!ref) continue;
    count(ref.id);
    if (e.type !== 'message') continue;
    if (e.to === undefined) {
      // No `to`: the plane goes to the parent, which is created if it is not on the floor.
      const parent = str(e.parent, LIMITS.id) ?? (cleared ? undefined : (s.agents.get(ref.id)?.parent ?? undefined));
      if (parent !== ref.id) count(parent);
      continue;
    }
    const raw = Array.isArray(e.to) ? e.to : [e.to];
    for (let i = 0; i < raw.length && i < LIMITS.recipients && n <= upTo; i++) {
      const id = str(raw[i], LIMITS.id);
      if (id !== ref.id) count(id);
    }
  }
  return Math.min(n, upTo + 1);
}
