// Subagent hints: an event about an agent's helper lands on the helper's own
// desk, opened next to its parent the first time (and bound to the hint's key).

import { LIMITS, type Agent, type Effect, type FloorState } from './model.js';
import { str, tidyName } from './read.js';
import { touchAgent } from './agents.js';
import { setHint } from './parents.js';

/** An id for a new helper desk: `base`, else `'` appended until unique (bounded: a numbered suffix when that runs out). */
export function helperId(s: FloorState, base: string): string {
  let id = base;
  for (let i = 0; i <= LIMITS.id && s.agents.has(id); i++) id = (id + "'").slice(-LIMITS.id);
  // At the length cap, appending a prime ends at a string of primes; if even
  // that is taken, count (at most one more than the floor's size tries).
  for (let n = 2; s.agents.has(id); n++) id = base.slice(0, LIMITS.id - String(n).length - 1) + '~' + n;
  return id;
}

/**
 * Resolves a subagent hint to the helper the event is about (creating its desk
 * if needed). Looks only at the parent's own children. Undefined when a new
 * desk is needed and the floor is full.
 */
export function resolveHint(s: FloorState, parent: Agent, hint: Record<string, unknown>, ts: number, fx: Effect[]): Agent | undefined {
  const key = str(hint.key, LIMITS.subagentKey);
  const type = str(hint.type, LIMITS.role) ?? 'subagent';
  const hintKey = key !== undefined ? parent.id + '\u0000' + key : undefined;
  if (hintKey) {
    const bound = s.hints.get(hintKey);
    const helper = bound !== undefined ? s.agents.get(bound) : undefined;
    if (helper) return helper;
  }
  let best: Agent | undefined;
  let fallback: Agent | undefined;
  for (const id of s.index.children.get(parent.id) ?? []) {
    const a = s.agents.get(id);
    if (!a || a.role !== type) continue;
    if (!s.index.hintsByHelper.has(a.id)) {
      if (!best || a.seq < best.seq) best = a;
    } else if (!hintKey && (!fallback || a.seq < fallback.seq)) {
      fallback = a;
    }
  }
  let helper = best ?? fallback;
  if (!helper) {
    helper = touchAgent(
      s,
      { id: helperId(s, (parent.id + '/' + type + (key !== undefined ? '-' + key : '')).slice(0, LIMITS.id)), name: tidyName(type), role: type, source: parent.source || undefined },
      { team: { id: parent.team, name: s.teams.get(parent.team)!.name }, parent: parent.id, ts },
      fx,
    );
    if (!helper) return undefined;
    fx.push({ kind: 'brief', from: parent.id, to: helper.id });
  }
  if (hintKey) setHint(s, hintKey, helper.id);
  return helper;
}
