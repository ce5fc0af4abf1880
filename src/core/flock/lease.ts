// The driver's lease: claimed (won when nobody holds it live, or renewed by
// its holder) and released; who holds it at a time.

import { FLOCK_LIMITS, type FlockEffect, type FlockState, type FlockStep } from './model.js';
import { get, int, line, type Obj } from './read.js';

/** Who drives the flock at `now` (its lease holder), or '' when nobody holds a live lease. */
export function leaseHolder(s: FlockState, now: number): string {
  return s.lease && now < s.lease.until ? s.lease.node : '';
}

function claimed(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const node = line(get(o, 'node'), FLOCK_LIMITS.node);
  const ttl = int(get(o, 'ttl_ms'), FLOCK_LIMITS.minLeaseMs, FLOCK_LIMITS.maxLeaseMs);
  if (!node || ttl === undefined) return [];
  const l = s.lease;
  // A claim wins when nobody holds the lease at the claim's time, or it renews the holder's own.
  if (l && l.node !== node && at < l.until) return [];
  s.lease = { node, since: l && l.node === node && at < l.until ? l.since : at, until: at + ttl };
  return [{ kind: 'lease' }];
}

function released(s: FlockState, o: Obj): FlockEffect[] {
  const node = line(get(o, 'node'), FLOCK_LIMITS.node);
  if (!node || !s.lease || s.lease.node !== node) return [];
  s.lease = null;
  return [{ kind: 'lease' }];
}

/** The handlers of the driver's lease. */
export const LEASE_STEPS: Readonly<Record<string, FlockStep>> = {
  'lease.claimed': claimed,
  'lease.released': released,
};
