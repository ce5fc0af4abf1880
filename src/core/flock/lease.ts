import { type FlockState } from './model.js';

/** Who drives the flock at `now` (its lease holder), or '' when nobody holds a live lease. */
export function leaseHolder(s: FlockState, now: number): string {
  return s.lease && now < s.lease.until ? s.lease.node : '';
}
