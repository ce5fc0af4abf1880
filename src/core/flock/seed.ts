// A list's stream alone: what a browser seeds an empty state with before it
// folds one list's stream (nests and spun crows from the read routes).

import { isWorkerPersona } from '../personas.js';
import { FLOCK_LIMITS, emptyNest, type FlockState } from './model.js';
import { get, isObj, line, slugId } from './read.js';
import { spinRefusal } from './spun.js';


/**
 * Seeds a state with the context a list's own stream does not carry: the
 * nests (`GET /api/nests`'s `nests`) and the spun crows (`GET /api/crows`'s
 * `crows`), which the server folds from internal events that are never sent
 * on a list stream. A browser seeds an empty state this way, then folds the
 * list's stream from its start, and sees the list as the server does (trust
 * announcements aside: the ledger comes from `GET /api/trust`). Entries that
 * are not well formed, or already known, are skipped; returns how many were added.
 */
export function seedFlock(s: FlockState, ctx: { nests?: unknown; crows?: unknown }): number {
  let added = 0;
  if (Array.isArray(ctx.nests))
    for (const n of ctx.nests.slice(0, FLOCK_LIMITS.maxNests + 1)) {
      if (!isObj(n)) continue;
      const nest_id = slugId(get(n, 'nest_id'));
      const name = line(get(n, 'name'), FLOCK_LIMITS.nestName);
      const crows = get(n, 'crows');
      if (!nest_id || !name || s.nests.has(nest_id) || !Array.isArray(crows) || crows.length > FLOCK_LIMITS.nestCrows) continue;
      const core = [...new Set(crows.filter((c): c is string => isWorkerPersona(c)))];
      s.nests.set(nest_id, emptyNest(nest_id, name, core, 0, ''));
      added++;
    }
  if (Array.isArray(ctx.crows))
    for (const c of ctx.crows.slice(0, FLOCK_LIMITS.maxSpunCap)) {
      if (!isObj(c) || spinRefusal(s, get(c, 'name'), get(c, 'persona'), FLOCK_LIMITS.maxSpunCap) !== '') continue;
      const name = get(c, 'name') as string;
      s.spun.set(name, { name, persona: get(c, 'persona') as string, trust: get(c, 'trust') === 'regular' ? 1 : 0, by: '', nest_id: '', at: 0 });
      added++;
    }
  if (added) s.rev++;
  return added;
}
