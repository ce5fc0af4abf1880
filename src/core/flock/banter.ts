// Banter: one line between two crows of an item, started, spoken or dropped,
// capped per list.

import { FLOCK_LIMITS, type FlockEffect, type FlockList, type FlockState, type FlockStep } from './model.js';
import { get, line, tokens, type Obj } from './read.js';
import { itemOf, liveList } from './lookups.js';
import { isCrow } from './crows.js';

export function banterStarted(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  const to = get(o, 'to');
  if (!list || !item || !isCrow(s, crow) || !isCrow(s, to) || crow === to) return [];
  if (list.banter.started >= FLOCK_LIMITS.banterPerList) return [];
  list.banter.started++;
  list.banter.open.push({ item_id: item.item_id, crow, to, at });
  return [{ kind: 'list', list_id: list.list_id }];
}

function openBanter(list: FlockList, item_id: string, crow: string): number {
  return list.banter.open.findIndex((b) => b.item_id === item_id && b.crow === crow);
}

export function banter(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  const to = get(o, 'to');
  const t = line(get(o, 'text'), FLOCK_LIMITS.banterText);
  if (!list || !item || !t || !isCrow(s, crow) || !isCrow(s, to) || crow === to) return [];
  const i = openBanter(list, item.item_id, crow);
  if (i >= 0) list.banter.open.splice(i, 1);
  else if (list.banter.started >= FLOCK_LIMITS.banterPerList) return [];
  else list.banter.started++; // a line whose start was not logged (a client folding the list stream alone)
  list.banter.lines++;
  (list.said ??= []).push({ item_id: item.item_id, crow, to, text: t, at });
  list.tokens_used += tokens(get(o, 'tokens'));
  return [{ kind: 'list', list_id: list.list_id }];
}

export function banterDropped(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const crow = get(o, 'crow');
  if (!list || typeof crow !== 'string') return [];
  const i = openBanter(list, typeof get(o, 'item_id') === 'string' ? (get(o, 'item_id') as string) : '', crow);
  if (i < 0) return [];
  list.banter.open.splice(i, 1);
  list.tokens_used += tokens(get(o, 'tokens'));
  return [{ kind: 'list', list_id: list.list_id }];
}

/** The handlers of banter. */
export const BANTER_STEPS: Readonly<Record<string, FlockStep>> = {
  'crow.banter': banter,
  'banter.started': banterStarted,
  'banter.dropped': banterDropped,
};
