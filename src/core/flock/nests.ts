// Nests: created, renamed, deleted; their names and ids; the index and the
// refusals the edge answers with; which crows a nest's message goes to (pickCrows).

import { isWorkerPersona, WORKER_NAMES } from '../personas.js';
import { get, line, slugId, type Obj } from './read.js';
import { FLOCK_LIMITS, TODO_NEST, emptyNest, type FlockEffect, type FlockState, type Nest, type FlockStep } from './model.js';
import { crowAvailable, flightCap } from './crows.js';


/** The nest id of a name: lowercase, runs of anything but a-z0-9 become one `-`, trimmed of dashes. */
export function nestSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * A nest's name as kept: one line, control characters removed, runs of
 * white space one space, trimmed; undefined when empty or longer than
 * nestName. The route and the fold clean a name with this one function, so
 * a name the route accepts is the name the fold keeps (and its slug the id).
 */
export function cleanNestName(v: unknown): string | undefined {
  const n = line(v, FLOCK_LIMITS.nestName + 1)?.replace(/\s+/g, ' ');
  return n && n.length <= FLOCK_LIMITS.nestName ? n : undefined;
}

export function nestCreated(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const nest_id = slugId(get(o, 'nest_id'));
  const name = cleanNestName(get(o, 'name'));
  const raw = get(o, 'crows');
  // At most maxNests nests, todo counted; an id once deleted stays its old nest's (its messages are in the log).
  if (!nest_id || !name || nestSlug(name) !== nest_id || s.nests.has(nest_id) || s.goneNests.has(nest_id) || s.nests.size >= FLOCK_LIMITS.maxNests) return [];
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > FLOCK_LIMITS.nestCrows) return [];
  const core: string[] = [];
  for (const c of raw) {
    if (!isWorkerPersona(c) || core.includes(c as string)) return [];
    core.push(c as string);
  }
  s.nests.set(nest_id, emptyNest(nest_id, name, core, at, line(get(o, 'by'), FLOCK_LIMITS.requester) ?? ''));
  return [{ kind: 'nest', nest_id }];
}

/** Whose rate a post counts against: the person behind it (`by`) when the event names one, else its author. */
export function posterOf(o: Obj, author: string): string {
  const by = get(o, 'by');
  return typeof by === 'string' && by !== '' && by.length <= FLOCK_LIMITS.requester ? by : author;
}

/** Whether a nest may be deleted or a spun crow removed now: none of its flights in the air. */
function nestBusy(s: FlockState, nest: Nest): boolean {
  for (const f of nest.flights.values()) if (f.state === 'flying') return true;
  for (const l of s.lists.values()) if (!l.finished && l.nest_id === nest.nest_id) return true;
  return false;
}

/** Why the owner may not delete a nest now, or '' (the route answers 404, 400 or 409 with it). */
export function nestDeleteRefusal(s: FlockState, nest_id: string): '' | 'unknown' | 'todo' | 'busy' | 'too many' {
  const nest = s.nests.get(nest_id);
  if (!nest) return 'unknown';
  if (nest_id === TODO_NEST) return 'todo';
  if (nestBusy(s, nest)) return 'busy';
  if (s.goneNests.size >= FLOCK_LIMITS.goneNests) return 'too many';
  return '';
}

export function nestRenamed(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const name = cleanNestName(get(o, 'name'));
  // The id stays (every msg_id is built on it); todo keeps its name.
  if (!nest || nest.nest_id === TODO_NEST || !name || !nestSlug(name) || name === nest.name || !line(get(o, 'by'), FLOCK_LIMITS.requester)) return [];
  nest.name = name;
  return [{ kind: 'nest', nest_id: nest.nest_id }];
}

export function nestDeleted(s: FlockState, o: Obj): FlockEffect[] {
  const nest_id = slugId(get(o, 'nest_id')) ?? '';
  if (nestDeleteRefusal(s, nest_id) !== '' || !line(get(o, 'by'), FLOCK_LIMITS.requester)) return [];
  s.nests.delete(nest_id);
  s.goneNests.add(nest_id);
  // A quarantine started there stays (the crow's breach does not go away with the room): the owner lifts it directly.
  return [{ kind: 'nest', nest_id }];
}


/** `GET /api/nests`: the roster (the eight workers) and every nest with its core, `todo` first. */
export function nestsIndex(s: FlockState): { roster: string[]; nests: { nest_id: string; name: string; crows: string[] }[] } {
  return {
    roster: [...WORKER_NAMES],
    nests: [...s.nests.values()].map((n) => ({ nest_id: n.nest_id, name: n.name, crows: n.core.slice() })),
  };
}

/** Why a nest could not be created, or '' (the edge answers 400 or 409 with this). */
export function nestRefusal(s: FlockState, name: unknown, crows: unknown): '' | 'bad name' | 'taken' | 'too many nests' | 'bad crows' {
  const n = cleanNestName(name);
  if (!n || !nestSlug(n)) return 'bad name';
  if (!Array.isArray(crows) || crows.length < 1 || crows.length > FLOCK_LIMITS.nestCrows) return 'bad crows';
  const seen = new Set<string>();
  for (const c of crows) {
    if (!isWorkerPersona(c) || seen.has(c as string)) return 'bad crows';
    seen.add(c as string);
  }
  if (s.nests.has(nestSlug(n)) || s.goneNests.has(nestSlug(n))) return 'taken';
  if (s.nests.size >= FLOCK_LIMITS.maxNests) return 'too many nests';
  return '';
}

function rotation(names: readonly string[], last: string): string[] {
  const i = names.indexOf(last);
  return i < 0 ? names.slice() : [...names.slice(i + 1), ...names.slice(0, i + 1)];
}

/**
 * Picks up to `n` working crows for a job in `nest_id`: the nest's core first,
 * rotating from after the core crow that flew last; then, when the core is
 * short, crows from outside it (the roster in order, then spun crows by name),
 * rotating from after the one borrowed last. Within each, the crows that have
 * not flown in the rotation's current round go first (Nest.round), so which
 * crows fly does not depend on the order concurrent steps were appended. Quarantined crows, crows at their
 * flight cap and `exclude` are skipped; a saturated flock yields nothing. In
 * `todo` (empty core) every crow comes from the whole flock and none is
 * "borrowed". `pending` are flights already picked but not folded yet (a
 * driver composes several steps from one state): each counts as in the air
 * and advances its nest's rotation, so two picks from one state do not both
 * take the same crow. A pure function of its arguments.
 */
export function pickCrows(s: FlockState, nest_id: string, n: number, exclude: readonly string[] = [], pending: readonly { crow: string; nest_id: string }[] = []): { crow: string; borrowed: boolean }[] {
  const nest = s.nests.get(nest_id) ?? s.nests.get(TODO_NEST)!;
  const out: { crow: string; borrowed: boolean }[] = [];
  if (n <= 0) return out;
  const free = FLOCK_LIMITS.flockFlights - s.airborne.size - pending.length;
  const want = Math.min(n, free);
  let lastCore = nest.lastCore;
  let lastBorrowed = nest.lastBorrowed;
  const planned = new Map<string, number>();
  const plannedHere = new Set<string>();
  for (const p of pending) {
    planned.set(p.crow, (planned.get(p.crow) ?? 0) + 1);
    if (p.nest_id !== nest.nest_id) continue;
    plannedHere.add(p.crow);
    if (nest.core.includes(p.crow)) lastCore = p.crow;
    else lastBorrowed = p.crow;
  }
  const ok = (c: string) => !exclude.includes(c) && crowAvailable(s, c) && (s.busy.get(c) ?? 0) + (planned.get(c) ?? 0) < flightCap(c);
  // Fewest flights in this nest first (the picks not folded yet included), ties in rotation order (a stable sort).
  // Who has not flown in this round goes first (a stable sort keeps the rotation's order within each part).
  const flew = (c: string) => (nest.round.has(c) || plannedHere.has(c) ? 1 : 0);
  const rotate = (names: readonly string[], last: string) => {
    const order = rotation(names, last);
    // Every one of them has flown this round: the round comes round, in rotation order.
    return order.every((c) => flew(c)) ? order : order.sort((a, b) => flew(a) - flew(b));
  };
  for (const c of rotate(nest.core, lastCore)) {
    if (out.length >= want) return out;
    if (ok(c)) out.push({ crow: c, borrowed: false });
  }
  const spun = [...s.spun.keys()].sort();
  const outside = [...WORKER_NAMES, ...spun].filter((c) => !nest.core.includes(c));
  for (const c of rotate(outside, lastBorrowed)) {
    if (out.length >= want) return out;
    if (ok(c)) out.push({ crow: c, borrowed: nest.core.length > 0 });
  }
  return out;
}

/** The handlers of nests. */
export const NEST_STEPS: Readonly<Record<string, FlockStep>> = {
  'nest.created': nestCreated,
  'nest.renamed': nestRenamed,
  'nest.deleted': nestDeleted,
};
