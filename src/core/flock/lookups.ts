// Lookups shared by the handlers: a live list, an item by id, its flights,
// a requester's record.

import { trimOldest } from '../bounded.js';
import { FLOCK_LIMITS, type Flight, type FlockItem, type FlockList, type FlockState, type RequesterRecord, type Triage } from './model.js';
import { id } from './read.js';


export function liveList(s: FlockState, v: unknown): FlockList | undefined {
  const lid = id(v);
  if (!lid) return undefined;
  const list = s.lists.get(lid);
  return list && !list.finished ? list : undefined;
}

/** The item of `list` named by `v` (`<list_id>-<n>`), found by its number: O(1). */
export function itemOf(list: FlockList, v: unknown): FlockItem | undefined {
  if (typeof v !== 'string' || v.length > list.list_id.length + 5) return undefined;
  const prefix = `${list.list_id}-`;
  if (!v.startsWith(prefix)) return undefined;
  const rest = v.slice(prefix.length);
  if (!/^[1-9][0-9]{0,2}$/.test(rest)) return undefined;
  const item = list.items[Number(rest) - 1];
  return item && item.item_id === v ? item : undefined;
}

export function triagePassed(item: FlockItem): boolean {
  return item.triageVerdict !== null && (item.triageVerdict.verdict === 'approved' || item.triageVerdict.verdict === 'auto');
}

export function workers(item: FlockItem): Flight[] {
  const out: Flight[] = [];
  for (const f of item.flights.values()) if (f.role === 'work') out.push(f);
  return out;
}

export function anyFlying(item: FlockItem): boolean {
  for (const f of item.flights.values()) if (f.state === 'flying') return true;
  return false;
}

/** How many worker flights an item wants: 1 solo, one per subtask split, MurderSize murder. */
export function wanted(t: Triage): number {
  return t.mode === 'solo' ? 1 : t.mode === 'split' ? t.subtasks.length : FLOCK_LIMITS.murderSize;
}

export function requesterOf(s: FlockState, name: string): RequesterRecord {
  let r = s.requesters.get(name);
  if (r) {
    // Most recently active last, so the oldest is dropped first past the cap.
    s.requesters.delete(name);
  } else {
    r = { strikes: [], lists: [], posts: [], cooldownUntil: 0 };
  }
  s.requesters.set(name, r);
  trimOldest(s.requesters, FLOCK_LIMITS.requesters);
  return r;
}

export function pushBounded(a: number[], v: number, cap: number): void {
  a.push(v);
  if (a.length > cap) a.shift();
}
