// Snapshots: the state as JSON (Maps and Sets tagged) and back.

import { get, type Obj } from './read.js';
import { type FlockState } from './model.js';


// Maps and Sets are written as tagged arrays; everything else in the state is
// plain data built by this module, so the tags cannot collide with it.
function dec(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dec);
  if (v && typeof v === 'object') {
    const o = v as Obj;
    if (Array.isArray(get(o, '$map'))) return new Map((o.$map as [string, unknown][]).map(([k, x]) => [k, dec(x)]));
    if (Array.isArray(get(o, '$set'))) return new Set(o.$set as unknown[]);
    // Records keyed by label (probabilities) get a null prototype, so no key reaches Object.prototype.
    const out: Record<string, unknown> = Object.create(null);
    for (const k of Object.keys(o)) out[k] = dec(o[k]);
    return { ...out };
  }
  return v;
}

/**
 * `JSON.stringify`'s replacer for the flock's state (or anything holding it):
 * Maps and Sets as `{$map: [[key, value], …]}` and `{$set: […]}`, what
 * `flockFromJSON` reads. A snapshot is written with it in one pass, with no
 * copy of the state built first.
 */
export function flockReplacer(_key: string, v: unknown): unknown {
  if (v instanceof Map) return { $map: [...v] };
  if (v instanceof Set) return { $set: [...v] };
  return v;
}

/** The state as plain JSON (a snapshot, as an object: the server writes its text with `flockReplacer`). */
export function flockToJSON(s: FlockState): unknown {
  return JSON.parse(JSON.stringify(s, flockReplacer));
}

/** The state back from `flockToJSON`'s output. */
export function flockFromJSON(j: unknown): FlockState {
  const s = dec(j) as FlockState;
  // Snapshots from before nests could be deleted.
  if (!(s.goneNests instanceof Set)) s.goneNests = new Set();
  // Snapshots from before the rotation kept its round.
  for (const nest of s.nests.values()) if (!(nest.round instanceof Set)) nest.round = new Set();
  return s;
}
