// Builders of flock events for tests: each call stamps the next `ts` of a
// fake clock (one second apart unless told), so fixtures read like a log.
//
//   const f = flockLog();
//   f.apply(f.started('l-1', ['write the notes']));
//   f.apply(f.flying('l-1', 1, 'Sentry'));
//   f.now()   // the clock, ms
//
// The builders write the contract's payloads (spec/flock-events.md) plus the
// extra fields docs/flock.md names; nothing here checks anything.

import { applyFlock, emptyFlock, flockTs, type FlockEffect, type FlockState } from '../../src/core/flock.js';

export const T0 = Date.UTC(2026, 11, 1, 9, 0, 0);

export type Ev = Record<string, unknown> & { type: string; ts: string };

export interface FlockLog {
  s: FlockState;
  /** Every event built so far, in order (what the log would hold). */
  log: Ev[];
  now(): number;
  /** Moves the clock forward by `ms`. */
  tick(ms: number): void;
  /** Folds `e` (at the next position) and returns its effects. */
  apply(e: Ev): FlockEffect[];
  ev(type: string, fields: Record<string, unknown>): Ev;
  started(list_id: string, items: string[], extra?: Record<string, unknown>): Ev;
  flying(list_id: string, n: number, crow: string, extra?: Record<string, unknown>): Ev;
  landed(list_id: string, n: number, crow: string, ok?: boolean, extra?: Record<string, unknown>): Ev;
  triaged(list_id: string, n: number, fields?: Partial<{ mode: string; task_type: string; subtasks: string[]; reason: string; needs_approval: boolean }>): Ev;
  verdict(list_id: string, n: number, target: 'triage' | 'output', verdict: string, by?: string): Ev;
  answered(list_id: string, n: number, answer: string, crows: string[], needs_approval?: boolean): Ev;
  skipped(list_id: string, n: number, reason: string): Ev;
  finished(list_id: string): Ev;
  message(nest_id: string, n: number, fields: Record<string, unknown>): Ev;
}

export function flockLog(start = T0, stepMs = 1000): FlockLog {
  let t = start;
  const s = emptyFlock();
  const log: Ev[] = [];
  const ev = (type: string, fields: Record<string, unknown>): Ev => {
    t += stepMs;
    return { type, ts: flockTs(t), ...fields };
  };
  const it = (list_id: string, n: number) => `${list_id}-${n}`;
  return {
    s,
    log,
    now: () => t,
    tick: (ms) => {
      t += ms;
    },
    apply(e) {
      log.push(e);
      return applyFlock(s, e, log.length);
    },
    ev,
    started: (list_id, items, extra = {}) =>
      ev('list.started', { list_id, requester: 'ann', nest_id: 'todo', items: items.map((text, i) => ({ item_id: it(list_id, i + 1), text })), ...extra }),
    flying: (list_id, n, crow, extra = {}) => ev('crow.flying', { list_id, item_id: it(list_id, n), crow, borrowed: false, ...extra }),
    landed: (list_id, n, crow, ok = true, extra = {}) =>
      ev('crow.landed', { list_id, item_id: it(list_id, n), crow, ok, tokens: 100, ...(ok ? { output: `${crow}'s work on ${it(list_id, n)}` } : { error: 'model unavailable' }), ...extra }),
    triaged: (list_id, n, fields = {}) =>
      ev('item.triaged', { list_id, item_id: it(list_id, n), mode: 'solo', task_type: 'writing', subtasks: [], reason: 'one crow can do it', needs_approval: true, ...fields }),
    verdict: (list_id, n, target, verdict, by = 'owner') => ev('verdict', { list_id, item_id: it(list_id, n), target, verdict, ...(by ? { by } : {}) }),
    answered: (list_id, n, answer, crows, needs_approval = true) => ev('item.answered', { list_id, item_id: it(list_id, n), answer, crows, needs_approval }),
    skipped: (list_id, n, reason) => ev('item.skipped', { list_id, item_id: it(list_id, n), reason }),
    finished: (list_id) => ev('list.finished', { list_id, tokens_used: 0, token_budget: 0 }),
    message: (nest_id, n, fields) =>
      ev('nest.message', { nest_id, msg_id: `${nest_id}-${n}`, kind: 'say', author: 'owner', text: 'hello', to: '', refers_to: '', tagged_by: 'default', mode: '', mode_tagged_by: '', invited: 0, approval_phrase: '', ...fields }),
  };
}
