// Lifetimes (LIFETIMES): who is forgotten at `now` (left, a finished helper,
// or silent too long), the sweep that removes them, and when the next is due.

import { LIFETIMES, type Agent, type FloorState } from './model.js';
import { removeAgent } from './agents.js';

/** Why an agent would be forgotten at `now`, or null if it stays. */
export function expired(a: Agent, now: number): boolean {
  if (a.leftAt !== null && now - a.leftAt >= LIFETIMES.afterLeave) return true;
  if (a.parent !== null && a.status === 'done' && a.doneAt !== null && now - a.doneAt >= LIFETIMES.helperAfterDone) return true;
  return now - a.lastSeen >= LIFETIMES.silent;
}

/** Ids of the agents a sweep at `now` would remove, without changing anything. */
export function dueForSweep(s: FloorState, now: number): string[] {
  const out: string[] = [];
  for (const a of s.agents.values()) if (expired(a, now)) out.push(a.id);
  return out;
}

/** Applies the lifetimes at `now`; returns the removed agent ids (rooms left empty vanish too). */
export function sweep(s: FloorState, now: number): string[] {
  const removed = dueForSweep(s, now);
  if (removed.length === 0) return removed;
  for (const id of removed) removeAgent(s, id);
  s.rev++;
  return removed;
}

/** The earliest time at which some agent will be due for a sweep (or null with an empty floor). */
export function nextSweepAt(s: FloorState): number | null {
  let next: number | null = null;
  for (const a of s.agents.values()) {
    let t = a.lastSeen + LIFETIMES.silent;
    if (a.leftAt !== null) t = Math.min(t, a.leftAt + LIFETIMES.afterLeave);
    if (a.parent !== null && a.status === 'done' && a.doneAt !== null) t = Math.min(t, a.doneAt + LIFETIMES.helperAfterDone);
    if (next === null || t < next) next = t;
  }
  return next;
}
