// Requesters and pranks: strikes (rate, empty, garbage), the cooldown they
// earn, a prank on a requester's flying lists, and the rate a requester may post at.

import { FLOCK_LIMITS, STRIKE_REASONS, type FlockEffect, type FlockState, type StrikeReason, type FlockStep } from './model.js';
import { get, id, int, line, oneOf, text, type Obj } from './read.js';
import { requesterOf } from './lookups.js';

export function strike(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const requester = line(get(o, 'requester'), FLOCK_LIMITS.requester);
  const reason = oneOf(get(o, 'reason'), STRIKE_REASONS);
  if (!requester || !reason) return [];
  const r = requesterOf(s, requester);
  r.strikes.push({ at, reason });
  if (r.strikes.length > FLOCK_LIMITS.strikesKept) r.strikes.shift();
  // Strikes within the window, this one included, decide the cooldown: the
  // third starts one of firstCooldownS, each further one doubles it.
  let n = 0;
  for (const k of r.strikes) if (k.at > at - FLOCK_LIMITS.strikeWindowMs && k.at <= at) n++;
  if (n >= FLOCK_LIMITS.strikesForCooldown) {
    const secs = Math.min(FLOCK_LIMITS.maxCooldownS, FLOCK_LIMITS.firstCooldownS * 2 ** (n - FLOCK_LIMITS.strikesForCooldown));
    r.cooldownUntil = Math.max(r.cooldownUntil, at + secs * 1000);
  }
  return [{ kind: 'requester', requester }];
}


/** Seconds of cooldown left for `requester` at `now` (0: none). */
export function cooldownS(s: FlockState, requester: string, now: number): number {
  const r = s.requesters.get(requester);
  if (!r || r.cooldownUntil <= now) return 0;
  return Math.ceil((r.cooldownUntil - now) / 1000);
}

/**
 * True when one more list (or nest post) by `requester` at `now` would pass
 * the per-minute rate: the service refuses it with a `rate` strike.
 */
export function overRate(s: FlockState, requester: string, now: number, what: 'list' | 'post'): boolean {
  const r = s.requesters.get(requester);
  if (!r) return false;
  const times = what === 'list' ? r.lists : r.posts;
  const cap = what === 'list' ? FLOCK_LIMITS.listsPerMinute : FLOCK_LIMITS.postsPerMinute;
  let n = 0;
  for (const t of times) if (t > now - 60_000 && t <= now) n++;
  return n >= cap;
}

/** A requester's strikes (newest last) and cooldown, for the ledger view. */
export function strikesOf(s: FlockState, requester: string): { strikes: { at: number; reason: StrikeReason }[]; cooldownUntil: number } {
  const r = s.requesters.get(requester);
  return { strikes: r ? r.strikes.slice() : [], cooldownUntil: r?.cooldownUntil ?? 0 };
}

function pranked(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = s.lists.get(id(get(o, 'list_id')) ?? '');
  const cooldown_s = int(get(o, 'cooldown_s'), 0, 1e9);
  if (!list || list.finished || cooldown_s === undefined) return [];
  list.pranks++;
  list.prank = { message: text(get(o, 'message'), FLOCK_LIMITS.reason) ?? '', cooldown_s, at };
  return [{ kind: 'list', list_id: list.list_id }];
}

/** The handlers of requesters' strikes and pranks. */
export const REQUESTER_STEPS: Readonly<Record<string, FlockStep>> = {
  'requester.strike': strike,
  'requester.pranked': pranked,
};
