// Lists and items: a list started, an item triaged, answered or skipped, a
// list finished; and the list queries the driver reads (itemPhase, toFly,
// draftAnswer, listStatus, inFlight).

import { trimOldest } from '../bounded.js';
import { FLOCK_LIMITS, SKIP_REASONS, TASK_TYPES, TODO_NEST, TRIAGE_MODES, type Flight, type FlightBoard, type FlockEffect, type FlockItem, type FlockList, type FlockState, type SkipReason, type Triage, type VerdictValue, type FlockStep } from './model.js';
import { cut, get, id, int, isObj, line, oneOf, optText, slugId, text, type Obj } from './read.js';
import { anyFlying, itemOf, liveList, pushBounded, requesterOf, triagePassed, wanted, workers } from './lookups.js';

export function listStarted(s: FlockState, o: Obj, at: number, ts: string): FlockEffect[] {
  const list_id = id(get(o, 'list_id'));
  if (!list_id || s.lists.has(list_id) || s.forgottenLists.has(list_id)) return [];
  const rawNest = get(o, 'nest_id');
  const nest_id = rawNest === undefined ? TODO_NEST : slugId(rawNest);
  if (!nest_id || !s.nests.has(nest_id)) return [];
  const requester = line(get(o, 'requester'), FLOCK_LIMITS.requester);
  const raw = get(o, 'items');
  if (!requester || !Array.isArray(raw) || raw.length < 1 || raw.length > FLOCK_LIMITS.maxItems) return [];
  const items: FlockItem[] = [];
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i];
    if (!isObj(r) || get(r, 'item_id') !== `${list_id}-${i + 1}`) return [];
    const t = text(get(r, 'text'), FLOCK_LIMITS.itemText);
    if (!t) return [];
    items.push({ item_id: `${list_id}-${i + 1}`, n: i + 1, text: t, triage: null, triageVerdict: null, flights: new Map(), answer: null, outputVerdict: null, skipped: null });
  }
  const b = get(o, 'token_budget');
  const token_budget = b === undefined ? s.budget.project : int(b, FLOCK_LIMITS.minBudget, FLOCK_LIMITS.maxBudget);
  if (token_budget === undefined) return [];
  s.lists.set(list_id, {
    list_id,
    nest_id,
    requester,
    startedAt: at,
    ts,
    items,
    token_budget,
    tokens_used: 0,
    banter: { started: 0, lines: 0, open: [] },
    pranks: 0,
    finished: null,
  });
  pushBounded(requesterOf(s, requester).lists, at, FLOCK_LIMITS.listsPerMinute);
  return [{ kind: 'list', list_id }];
}

export function itemTriaged(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  if (!list || !item || item.triage || item.skipped) return [];
  // The Sentry's call arrives while its flight is in the air or after it landed well.
  const sentry = item.flights.get('Sentry');
  if (!sentry || sentry.state === 'failed') return [];
  const mode = oneOf(get(o, 'mode'), TRIAGE_MODES);
  const task_type = oneOf(get(o, 'task_type'), TASK_TYPES);
  const needs = get(o, 'needs_approval');
  const reason = optText(get(o, 'reason'), FLOCK_LIMITS.reason);
  const raw = get(o, 'subtasks');
  if (!mode || !task_type || typeof needs !== 'boolean' || reason === undefined) return [];
  if (raw !== undefined && !Array.isArray(raw)) return [];
  const subtasks: string[] = [];
  for (const r of (raw as unknown[] | undefined) ?? []) {
    if (subtasks.length >= FLOCK_LIMITS.maxSubtasks) return [];
    const t = text(r, FLOCK_LIMITS.subtask);
    if (!t) return [];
    subtasks.push(t);
  }
  if (mode === 'split' && subtasks.length < 2) return [];
  item.triage = { mode, task_type, subtasks, reason, needs_approval: needs };
  return [{ kind: 'list', list_id: list.list_id }];
}

export function itemAnswered(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  if (!list || !item || item.answer || item.skipped || !triagePassed(item) || anyFlying(item)) return [];
  const answer = text(get(o, 'answer'), FLOCK_LIMITS.answer);
  const needs = get(o, 'needs_approval');
  const raw = get(o, 'crows');
  if (!answer || typeof needs !== 'boolean' || !Array.isArray(raw) || raw.length > FLOCK_LIMITS.nestCrows + 4) return [];
  // Only crows that worked this item and came back well are credited (and judged).
  const crows: string[] = [];
  for (const c of raw) {
    if (typeof c !== 'string' || crows.includes(c)) continue;
    const f = item.flights.get(c);
    if (f && f.role === 'work' && f.state === 'ok') crows.push(c);
  }
  if (crows.length === 0) return [];
  item.answer = { text: answer, crows, needs_approval: needs, at };
  return [{ kind: 'list', list_id: list.list_id }];
}

export function itemSkipped(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const reason = oneOf(get(o, 'reason'), SKIP_REASONS);
  // Every target that arose gets its one verdict (an answered item its output
  // verdict, a triaged one its triage verdict) before the item can close, and
  // nothing is dropped mid-air.
  if (!list || !item || !reason || item.skipped || item.answer || (item.triage && !item.triageVerdict) || anyFlying(item)) return [];
  item.skipped = { reason, at };
  return [{ kind: 'list', list_id: list.list_id }];
}

export function listFinished(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  if (!list || !listDone(list)) return [];
  list.finished = { at, tokens_used: list.tokens_used, token_budget: list.token_budget };
  s.finishedOrder.set(list.list_id, true);
  if (s.finishedOrder.size > FLOCK_LIMITS.keepFinishedLists) {
    const old = s.finishedOrder.keys().next().value as string;
    s.finishedOrder.delete(old);
    s.lists.delete(old);
    s.forgottenLists.add(old);
    trimOldest(s.forgottenLists, FLOCK_LIMITS.rememberForgottenLists);
  }
  return [{ kind: 'list', list_id: list.list_id }];
}

/** Every item of the list is closed: done (its output verdict in) or skipped (itemPhase). */
export function itemsClosed(list: FlockList): boolean {
  for (const it of list.items) if (!it.skipped && !it.outputVerdict) return false;
  return true;
}

function listDone(list: FlockList): boolean {
  return list.banter.open.length === 0 && itemsClosed(list);
}


export type ItemPhase =
  /** Needs the Sentry. */
  | 'triage'
  | 'triaging'
  /** Triaged; waits for its triage verdict (a person's when needs_approval, else `auto` to write). */
  | 'triage_verdict'
  /** Triage rejected or timed out: skip it with reason `rejected`. */
  | 'rejected'
  /** Needs worker flights (see `toFly`). */
  | 'work'
  | 'flying'
  /** A murder with two or more answers: needs the Elder. */
  | 'merge'
  | 'merging'
  /** Everything landed: write item.answered (see `draftAnswer`). */
  | 'answer'
  /** Answered; waits for its output verdict. */
  | 'output_verdict'
  | 'done'
  | 'skipped'
  /** A flight failed (or the log is inconsistent): skip it with reason `failure`. */
  | 'failed';

/** Where an item stands, derived from its facts (never stored). */
export function itemPhase(item: FlockItem): ItemPhase {
  if (item.skipped) return 'skipped';
  if (item.outputVerdict) return 'done';
  if (item.answer) return 'output_verdict';
  if (!item.triage) {
    const sentry = item.flights.get('Sentry');
    return !sentry ? 'triage' : sentry.state === 'flying' ? 'triaging' : 'failed';
  }
  if (!item.triageVerdict) return 'triage_verdict';
  if (!triagePassed(item)) return 'rejected';
  const elder = item.flights.get('Elder');
  if (elder) return elder.state === 'flying' ? 'merging' : elder.state === 'ok' ? 'answer' : 'failed';
  const ws = workers(item);
  if (ws.some((f) => f.state === 'flying')) return 'flying';
  const t = item.triage;
  if (ws.length === 0) return 'work';
  const ok = ws.filter((f) => f.state === 'ok').length;
  if (t.mode === 'split') {
    if (ws.some((f) => f.state === 'failed')) return 'failed';
    return ws.length < t.subtasks.length ? 'work' : 'answer';
  }
  if (ok === 0) return 'failed';
  if (t.mode === 'murder' && ok >= 2) return 'merge';
  return 'answer';
}

/** Split subtasks (1-based) no crow has taken yet; for solo/murder, how many crows are still wanted. */
export function toFly(item: FlockItem): { subtasks: number[]; crows: number } {
  const t = item.triage;
  if (!t) return { subtasks: [], crows: 0 };
  const ws = workers(item);
  if (t.mode === 'split') {
    const out: number[] = [];
    for (let n = 1; n <= t.subtasks.length; n++) if (!ws.some((f) => f.subtask === n)) out.push(n);
    return { subtasks: out, crows: out.length };
  }
  return { subtasks: [], crows: Math.max(0, wanted(t) - ws.length) };
}

/**
 * The answer an item in phase `answer` should carry, and the crows whose work
 * is in it: solo, the crow's output; split, the subtasks' outputs in order
 * under their subtask; murder, the Elder's merge (or the one answer that came back).
 */
export function draftAnswer(item: FlockItem): { answer: string; crows: string[] } {
  const ok = workers(item).filter((f) => f.state === 'ok');
  const crows = ok.map((f) => f.crow);
  const t = item.triage;
  let answer: string;
  if (t?.mode === 'split') {
    answer = ok
      .slice()
      .sort((a, b) => a.subtask - b.subtask)
      .map((f) => `${f.subtask}. ${t.subtasks[f.subtask - 1] ?? ''}\n${f.output}`)
      .join('\n\n');
  } else if (t?.mode === 'murder' && item.flights.get('Elder')?.state === 'ok') {
    answer = item.flights.get('Elder')!.output;
  } else {
    answer = ok[0]?.output ?? '';
  }
  return { answer: cut(answer, FLOCK_LIMITS.answer), crows };
}

export interface ItemStatus {
  item_id: string;
  text: string;
  phase: ItemPhase;
  triage: Triage | null;
  triage_verdict: VerdictValue | null;
  output_verdict: VerdictValue | null;
  skipped: SkipReason | null;
  flights: { crow: string; role: Flight['role']; subtask: number; borrowed: boolean; state: Flight['state']; tokens: number; error: string; board?: FlightBoard }[];
  answer: string | null;
  crows: string[];
}

export interface ListStatus {
  list_id: string;
  nest_id: string;
  requester: string;
  ts: string;
  token_budget: number;
  tokens_used: number;
  items: ItemStatus[];
  /** Item ids by what they wait for. */
  waiting: { triage: string[]; verdict: string[]; flight: string[]; skip: string[]; answer: string[] };
  banter: { started: number; lines: number; open: number };
  pranks: number;
  /** Every item is done or skipped and no banter is in the air: list.finished may be written. */
  can_finish: boolean;
  finished: boolean;
}

/** A list's status, or undefined when the list is unknown (or forgotten). */
export function listStatus(s: FlockState, list_id: string): ListStatus | undefined {
  const list = s.lists.get(list_id);
  if (!list) return undefined;
  const waiting: ListStatus['waiting'] = { triage: [], verdict: [], flight: [], skip: [], answer: [] };
  const items = list.items.map((it): ItemStatus => {
    const phase = itemPhase(it);
    switch (phase) {
      case 'triage':
      case 'triaging':
        waiting.triage.push(it.item_id);
        break;
      case 'triage_verdict':
      case 'output_verdict':
        waiting.verdict.push(it.item_id);
        break;
      case 'work':
      case 'flying':
      case 'merge':
      case 'merging':
        waiting.flight.push(it.item_id);
        break;
      case 'rejected':
      case 'failed':
        waiting.skip.push(it.item_id);
        break;
      case 'answer':
        waiting.answer.push(it.item_id);
        break;
    }
    return {
      item_id: it.item_id,
      text: it.text,
      phase,
      triage: it.triage,
      triage_verdict: it.triageVerdict?.verdict ?? null,
      output_verdict: it.outputVerdict?.verdict ?? null,
      skipped: it.skipped?.reason ?? null,
      flights: [...it.flights.values()].map(({ crow, role, subtask, borrowed, state, tokens, error, board }) => ({ crow, role, subtask, borrowed, state, tokens, error, ...(board ? { board } : {}) })),
      answer: it.answer?.text ?? null,
      crows: it.answer?.crows ?? [],
    };
  });
  return {
    list_id: list.list_id,
    nest_id: list.nest_id,
    requester: list.requester,
    ts: list.ts,
    token_budget: list.token_budget,
    tokens_used: list.tokens_used,
    items,
    waiting,
    banter: { started: list.banter.started, lines: list.banter.lines, open: list.banter.open.length },
    pranks: list.pranks,
    can_finish: !list.finished && listDone(list),
    finished: list.finished !== null,
  };
}

/** Lists not finished yet, oldest first (what a driver resumes after a restart). */
export function unfinishedLists(s: FlockState): string[] {
  const out: string[] = [];
  for (const l of s.lists.values()) if (!l.finished) out.push(l.list_id);
  return out;
}

/** The requester's lists still flying (where a `requester.pranked` goes). */
export function flyingListsOf(s: FlockState, requester: string): string[] {
  const out: string[] = [];
  for (const l of s.lists.values()) if (!l.finished && l.requester === requester) out.push(l.list_id);
  return out;
}

/**
 * What a restart must redo or fail: flights in the air (a `crow.flying` or
 * `nest.flying` with no landing) and banter started but neither spoken nor dropped.
 */
export function inFlight(s: FlockState): {
  flights: { list_id: string; item_id: string; crow: string; role: Flight['role']; subtask: number; since: number }[];
  nestFlights: { nest_id: string; msg_id: string; crow: string; since: number }[];
  banter: { list_id: string; item_id: string; crow: string; to: string; since: number }[];
} {
  const flights: ReturnType<typeof inFlight>['flights'] = [];
  const nestFlights: ReturnType<typeof inFlight>['nestFlights'] = [];
  for (const key of s.airborne.keys()) {
    const [kind, a, b, crow] = key.split('\u0000');
    if (kind === 'L') {
      const f = s.lists.get(a)?.items.find((i) => i.item_id === b)?.flights.get(crow);
      if (f) flights.push({ list_id: a, item_id: b, crow, role: f.role, subtask: f.subtask, since: f.since });
    } else {
      const f = s.nests.get(a)?.flights.get(`${b}\u0000${crow}`);
      if (f) nestFlights.push({ nest_id: a, msg_id: b, crow, since: f.since });
    }
  }
  const banter: ReturnType<typeof inFlight>['banter'] = [];
  for (const l of s.lists.values()) for (const b of l.banter.open) banter.push({ list_id: l.list_id, item_id: b.item_id, crow: b.crow, to: b.to, since: b.at });
  return { flights, nestFlights, banter };
}

/** The handlers of lists and items. */
export const LIST_STEPS: Readonly<Record<string, FlockStep>> = {
  'list.started': listStarted,
  'item.triaged': itemTriaged,
  'item.answered': itemAnswered,
  'item.skipped': itemSkipped,
  'list.finished': listFinished,
};
