// Flights: a crow flying for an item (a subtask, a code flight's board) and
// its landing with tokens and output.

import { SESSION_ID_PATTERN } from '../fleet.js';
import { FLOCK_LIMITS, type Flight, type FlightBoard, type FlockEffect, type FlockState, type FlockStep } from './model.js';
import { get, int, line, text, tokens, type Obj } from './read.js';
import { anyFlying, itemOf, liveList, triagePassed, wanted, workers } from './lookups.js';
import { isBorrowed, isWorkerCrow, land, listKey, rotated, takeOff } from './crows.js';

export function crowFlying(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  if (!list || !item || item.skipped || item.answer || typeof crow !== 'string' || item.flights.has(crow)) return [];
  const nest = s.nests.get(list.nest_id);
  let role: Flight['role'];
  let subtask = 0;
  if (crow === 'Sentry') {
    if (item.triage) return [];
    role = 'triage';
  } else if (crow === 'Elder') {
    // The Elder merges a murder's answers once every crow of it has landed and two or more came back well.
    if (!item.triage || item.triage.mode !== 'murder' || !triagePassed(item) || anyFlying(item)) return [];
    if (workers(item).filter((f) => f.state === 'ok').length < 2) return [];
    role = 'merge';
  } else if (isWorkerCrow(s, crow)) {
    const t = item.triage;
    if (!t || !triagePassed(item) || item.flights.has('Elder')) return [];
    const ws = workers(item);
    if (ws.length >= wanted(t)) return [];
    if (t.mode === 'split') {
      const n = int(get(o, 'subtask'), 1, t.subtasks.length);
      if (n === undefined || ws.some((f) => f.subtask === n)) return [];
      subtask = n;
    }
    role = 'work';
  } else {
    return [];
  }
  const borrowed = role === 'work' && isBorrowed(nest, crow);
  const board = role === 'work' ? boardOf(get(o, 'board')) : undefined;
  item.flights.set(crow, { crow, role, subtask, borrowed, state: 'flying', tokens: 0, error: '', output: '', since: at, ...(board ? { board } : {}) });
  takeOff(s, listKey(list.list_id, item.item_id, crow), crow, at);
  if (role === 'work' && nest) rotated(nest, crow);
  return [{ kind: 'list', list_id: list.list_id }];
}

/** A `crow.flying`'s `board`, when it names a thread and a session as the fleet fold spells them. */
function boardOf(v: unknown): FlightBoard | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const thread = get(v as Obj, 'thread');
  const session = get(v as Obj, 'session');
  return typeof thread === 'string' && typeof session === 'string' && SESSION_ID_PATTERN.test(thread) && SESSION_ID_PATTERN.test(session) ? { thread, session } : undefined;
}

export function crowLanded(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  const ok = get(o, 'ok');
  if (!list || !item || typeof crow !== 'string' || typeof ok !== 'boolean') return [];
  const f = item.flights.get(crow);
  if (!f || f.state !== 'flying') return [];
  f.state = ok ? 'ok' : 'failed';
  f.tokens = tokens(get(o, 'tokens'));
  f.error = ok ? '' : (line(get(o, 'error'), FLOCK_LIMITS.error) ?? 'failed');
  f.output = ok ? (text(get(o, 'output'), FLOCK_LIMITS.output) ?? '') : '';
  list.tokens_used += f.tokens;
  land(s, listKey(list.list_id, item.item_id, crow), crow);
  return [{ kind: 'list', list_id: list.list_id }];
}

/** The handlers of a list's flights. */
export const FLIGHT_STEPS: Readonly<Record<string, FlockStep>> = {
  'crow.flying': crowFlying,
  'crow.landed': crowLanded,
};
