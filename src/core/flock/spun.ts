// Spun crows and quarantine: the Boss's spin-ups under the registry cap, an
// owner's removal, a quarantine lifted; the registry and the quarantined list.

import { isTakenPersonaName, isWorkerPersona } from '../personas.js';
import { FLOCK_LIMITS, type FlockEffect, type FlockState, type Quarantine, type FlockStep } from './model.js';
import { get, int, line, slugId, type Obj } from './read.js';

/** Why the owner may not remove a spun crow now, or '' (it is unknown, or has flights in the air). */
export function crowRemoveRefusal(s: FlockState, name: string): '' | 'unknown' | 'busy' {
  if (!s.spun.has(name)) return 'unknown';
  if ((s.busy.get(name) ?? 0) > 0) return 'busy';
  return '';
}

export function crowRemoved(s: FlockState, o: Obj): FlockEffect[] {
  const name = get(o, 'name');
  if (typeof name !== 'string' || crowRemoveRefusal(s, name) !== '' || !line(get(o, 'by'), FLOCK_LIMITS.requester)) return [];
  s.spun.delete(name);
  s.quarantine.delete(name);
  for (const n of s.nests.values()) n.invited.delete(name);
  // Its trust goes with it: a crow spun later under the name starts afresh (the history keeps what it earned).
  for (const k of [...s.trust.keys()]) if (k.startsWith(`${name}\u0000`)) s.trust.delete(k);
  return [{ kind: 'crow', crow: name }];
}

const SPUN_NAME = /^[A-Za-z][A-Za-z0-9' -]*$/;

/** Why a spin-up would be refused under a registry cap of `cap` (MaxSpunCrows), or '' when it may go ahead (the Boss's reply names the reason). */
export function spinRefusal(s: FlockState, name: unknown, persona: unknown, cap: number = FLOCK_LIMITS.maxSpun): '' | 'cap reached' | 'name taken' | 'persona unknown' | 'bad name' {
  if (s.spun.size >= Math.min(cap, FLOCK_LIMITS.maxSpunCap)) return 'cap reached';
  const n = line(name, FLOCK_LIMITS.crowName);
  if (!n || n !== name || !SPUN_NAME.test(n)) return 'bad name';
  if (isTakenPersonaName(n)) return 'name taken';
  const low = n.toLowerCase();
  for (const k of s.spun.keys()) if (k.toLowerCase() === low) return 'name taken';
  if (!isWorkerPersona(persona)) return 'persona unknown';
  return '';
}

export function crowSpun(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const name = get(o, 'name');
  const persona = get(o, 'persona');
  // The cap is the server's setting when the Boss spun it (on the event), so every node folds the same registry.
  const cap = int(get(o, 'cap'), 0, FLOCK_LIMITS.maxSpunCap) ?? FLOCK_LIMITS.maxSpun;
  if (spinRefusal(s, name, persona, cap) !== '') return [];
  // Earned trust cannot be minted: a spun crow starts at stranger or regular.
  const t = get(o, 'trust');
  const trust = t === 'regular' || t === 'trusted' || t === 1 || t === 2 ? 1 : 0;
  const rawNest = slugId(get(o, 'nest_id'));
  s.spun.set(name as string, {
    name: name as string,
    persona: persona as string,
    trust,
    by: line(get(o, 'by'), FLOCK_LIMITS.requester) ?? 'Boss',
    nest_id: rawNest && s.nests.has(rawNest) ? rawNest : '',
    at,
  });
  return [{ kind: 'crow', crow: name as string }];
}

/** Quarantined crows, in the order they were flagged. */
export function quarantined(s: FlockState): Quarantine[] {
  return [...s.quarantine.values()];
}

/** `GET /api/crows`: the spun-crow registry sorted by name, with the level each started at. */
export function spunCrows(s: FlockState): { name: string; persona: string; trust: 'stranger' | 'regular' }[] {
  return [...s.spun.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((c) => ({ name: c.name, persona: c.persona, trust: c.trust === 1 ? 'regular' : 'stranger' }));
}

function quarantineLifted(s: FlockState, o: Obj): FlockEffect[] {
  const crow = get(o, 'crow');
  const by = line(get(o, 'by'), FLOCK_LIMITS.requester);
  if (typeof crow !== 'string' || !s.quarantine.has(crow) || !by) return [];
  s.quarantine.delete(crow);
  return [{ kind: 'crow', crow }];
}

/** The handlers of spun crows and quarantine. */
export const SPUN_STEPS: Readonly<Record<string, FlockStep>> = {
  'crow.spun': crowSpun,
  'crow.removed': crowRemoved,
  'quarantine.lifted': quarantineLifted,
};
