// Crows: who is a crow, a worker, a trust holder; flight caps and saturation;
// a flight's take-off and landing on the busy counts; a nest's rotation.

import { isWorkerPersona, isServiceRole } from '../personas.js';
import { FLOCK_LIMITS, type FlockState, type Nest } from './model.js';


/** A crow that takes work: one of the eight worker personas or a spun crow. */
export function isWorkerCrow(s: FlockState, name: unknown): name is string {
  return typeof name === 'string' && (isWorkerPersona(name) || s.spun.has(name));
}

/** Any crow: a worker, a spun crow, or a service role (Sentry, Elder, Quill, Boss). */
export function isCrow(s: FlockState, name: unknown): name is string {
  return isWorkerCrow(s, name) || isServiceRole(name);
}

/** A holder in the trust ledger: `flock` (the Sentry's triage) or a working crow. */
export function isTrustHolder(s: FlockState, name: unknown): name is string {
  return name === 'flock' || isWorkerCrow(s, name);
}

export function flightCap(name: string): number {
  return isServiceRole(name) ? FLOCK_LIMITS.serviceFlights : FLOCK_LIMITS.crowFlights;
}

/** True when `crow` may be sent now: not quarantined, below its flight cap, and the flock is not saturated. */
export function crowAvailable(s: FlockState, crow: string): boolean {
  if (!isCrow(s, crow) || s.quarantine.has(crow)) return false;
  if (s.airborne.size >= FLOCK_LIMITS.flockFlights) return false;
  return (s.busy.get(crow) ?? 0) < flightCap(crow);
}

/** True when no more flights may start anywhere in the flock. */
export function flockSaturated(s: FlockState): boolean {
  return s.airborne.size >= FLOCK_LIMITS.flockFlights;
}

export function takeOff(s: FlockState, key: string, crow: string, at: number): void {
  s.airborne.set(key, { since: at });
  s.busy.set(crow, (s.busy.get(crow) ?? 0) + 1);
}

export function land(s: FlockState, key: string, crow: string): void {
  s.airborne.delete(key);
  const n = (s.busy.get(crow) ?? 1) - 1;
  if (n > 0) s.busy.set(crow, n);
  else s.busy.delete(crow);
}

export const listKey = (list_id: string, item_id: string, crow: string) => `L\u0000${list_id}\u0000${item_id}\u0000${crow}`;
export const nestKey = (nest_id: string, msg_id: string, crow: string) => `N\u0000${nest_id}\u0000${msg_id}\u0000${crow}`;

/** Rotation: remember who flew last, in the core or borrowed from outside it. */
export function rotated(nest: Nest, crow: string): void {
  if (nest.core.includes(crow)) nest.lastCore = crow;
  else nest.lastBorrowed = crow;
  if (nest.round.has(crow)) {
    // Its second turn: a new round of its group begins with it.
    const core = nest.core.includes(crow);
    for (const c of nest.round) if (nest.core.includes(c) === core) nest.round.delete(c);
  }
  nest.round.add(crow);
}

export function isBorrowed(nest: Nest | undefined, crow: string): boolean {
  return !!nest && nest.core.length > 0 && !nest.core.includes(crow);
}
