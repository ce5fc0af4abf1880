// What views read off the floor: a quiet agent (working, yet silent for a
// while) and the count of agents by status.

import type { Agent, FloorState, Status } from './model.js';

/**
 * How long a working or thinking agent may say nothing before views show it
 * as quiet (docs/floor.md, "Quiet agents"). A setting of each view; this is
 * the default.
 */
export const QUIET_AFTER_MS = 2 * 60 * 1000;

/**
 * When the agent was last heard from, if at `now` it is working or thinking
 * but has been silent for `quietAfterMs` or more (so "working" would be a
 * guess: it may have ended while the server was away); null otherwise.
 * Pure: the clock comes in as `now`.
 */
export function quietSince(a: Agent, now: number, quietAfterMs: number = QUIET_AFTER_MS): number | null {
  if (a.leftAt !== null || (a.status !== 'working' && a.status !== 'thinking')) return null;
  return now - a.lastSeen >= quietAfterMs ? a.lastSeen : null;
}

/** Counts agents by status (for headers and /health). */
export function countByStatus(s: FloorState): Record<Status, number> {
  const c = { idle: 0, thinking: 0, working: 0, waiting: 0, done: 0, error: 0, offline: 0 } as Record<Status, number>;
  for (const a of s.agents.values()) c[a.status]++;
  return c;
}
