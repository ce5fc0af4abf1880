// Verdicts and the flock's use of the one trust ledger (src/core/trust.ts):
// which verdicts need a person, a verdict judged into the ledger, an owner's
// demotion or reset, the announcements, and the ledger as GET /api/trust serves it.
// No level, rule or count is kept here: they are the ledger's.

import { levelOf, MAX_TRUST, entryOf as ledgerEntry, recordChange as ledgerRecord, judge, trustKey, copyChange, announce, ownerLowers, trustRules, type TrustName, TRUST_LEVELS } from '../trust.js';
import { FLOCK_LIMITS, FLOCK_PROTOCOL_VERSION, TASK_TYPES, VERDICTS, VERDICT_TARGETS, type FlockEffect, type FlockItem, type FlockList, type FlockState, type TaskType, type TrustChange, type TrustEntry, type VerdictRecord, type VerdictRef, type VerdictTarget, type VerdictValue, type FlockStep } from './model.js';
import { get, int, isObj, line, oneOf, type Obj } from './read.js';
import { itemOf, liveList } from './lookups.js';
import { isTrustHolder } from './crows.js';


function baseLevel(s: FlockState, holder: string): number {
  return s.spun.get(holder)?.trust ?? 0;
}

/** The level of `holder` at `task_type` (0 stranger, 1 regular, 2 trusted). */
export function trustLevel(s: FlockState, holder: string, task_type: string): number {
  return levelOf(s, holder, task_type, baseLevel(s, holder));
}

/** Triage needs a person's approval unless the flock is trusted at that task type. */
export function triageNeedsApproval(s: FlockState, task_type: string): boolean {
  return trustLevel(s, 'flock', task_type) < MAX_TRUST;
}

/** An output needs a person's approval unless every crow whose work is in it is trusted at that task type. */
export function outputNeedsApproval(s: FlockState, task_type: string, crows: readonly string[]): boolean {
  return crows.length === 0 || crows.some((c) => trustLevel(s, c, task_type) < MAX_TRUST);
}

function entryOf(s: FlockState, holder: string, task_type: TaskType): TrustEntry {
  return ledgerEntry(s, holder, task_type, baseLevel(s, holder));
}

function recordChange(s: FlockState, c: Omit<TrustChange, 'id'>): TrustChange {
  return ledgerRecord(s, c, FLOCK_LIMITS.keepHistory);
}

/**
 * The verdict's reference as the ledger keeps it, and whether it earns
 * nothing: an approval by the list's requester (the principal who handed the
 * list over) is a yes to one's own work (docs/flock.md "Trust", rule 8).
 */
function verdictRef(ctx: VerdictContext, by: string): { ref: VerdictRef; self: boolean } {
  const ref: VerdictRef = { list_id: ctx.list.list_id, item_id: ctx.item.item_id, target: ctx.target, verdict: ctx.verdict, ...(by ? { by } : {}) };
  return { ref, self: ctx.verdict === 'approved' && by !== '' && by === ctx.list.requester };
}

/** The decider a verdict event names (approved/rejected only). */
function verdictBy(o: Obj, verdict: VerdictValue): string {
  return verdict === 'approved' || verdict === 'rejected' ? (line(get(o, 'by'), FLOCK_LIMITS.requester) ?? '') : '';
}

interface VerdictContext {
  list: FlockList;
  item: FlockItem;
  target: VerdictTarget;
  verdict: VerdictValue;
  holders: string[];
  task_type: TaskType;
}

/** Checks a verdict event against the state: what it judges, or undefined when it is not admissible. */
function verdictContext(s: FlockState, o: Obj): VerdictContext | undefined {
  const list = liveList(s, get(o, 'list_id'));
  if (!list) return undefined;
  const item = itemOf(list, get(o, 'item_id'));
  const target = oneOf(get(o, 'target'), VERDICT_TARGETS);
  const verdict = oneOf(get(o, 'verdict'), VERDICTS);
  if (!item || !target || !verdict || !item.triage || item.skipped) return undefined;
  // `auto` is the verdict exactly when no approval was asked for, and a person's
  // verdict (or a timeout) exactly when one was: every target gets one verdict.
  if (target === 'triage') {
    if (item.triageVerdict) return undefined;
    if (item.triage.needs_approval === (verdict === 'auto')) return undefined;
    return { list, item, target, verdict, holders: ['flock'], task_type: item.triage.task_type };
  }
  if (!item.answer || item.outputVerdict) return undefined;
  if (item.answer.needs_approval === (verdict === 'auto')) return undefined;
  return { list, item, target, verdict, holders: item.answer.crows, task_type: item.triage.task_type };
}

/**
 * The trust changes folding `e` (a `verdict` event) would make, without
 * changing `s`: the service appends the verdict and these `trust.changed`
 * announcements together, in one append.
 */
export function previewTrust(s: FlockState, e: unknown): { holder: string; task_type: TaskType; from: number; to: number; because: VerdictRef[]; list_id: string }[] {
  if (!isObj(e) || get(e, 'type') !== 'verdict') return [];
  const ctx = verdictContext(s, e);
  if (!ctx) return [];
  const out: { holder: string; task_type: TaskType; from: number; to: number; because: VerdictRef[]; list_id: string }[] = [];
  const { ref, self } = verdictRef(ctx, verdictBy(e, ctx.verdict));
  for (const holder of ctx.holders) {
    const j = judge(entryOf(s, holder, ctx.task_type), ref, self);
    if (j.to !== j.from) out.push({ holder, task_type: ctx.task_type, from: j.from, to: j.to, because: j.because, list_id: ctx.list.list_id });
  }
  return out;
}

/** The `trust.changed` event announcing a change the fold computed (what the service appends). */
export function trustChangedEvent(c: { holder: string; task_type: string; from: number; to: number; because: VerdictRef[]; list_id: string }, ts: string): Record<string, unknown> {
  return { type: 'trust.changed', list_id: c.list_id, ts, holder: c.holder, task_type: c.task_type, from: c.from, to: c.to, because: c.because };
}

export function verdictEvent(s: FlockState, o: Obj, at: number, ts: string, position: number | null): FlockEffect[] {
  const ctx = verdictContext(s, o);
  if (!ctx) return [];
  const { list, item, target, verdict } = ctx;
  const by = verdictBy(o, verdict);
  const record: VerdictRecord = { verdict, by, at };
  if (target === 'triage') item.triageVerdict = record;
  else item.outputVerdict = record;
  const fx: FlockEffect[] = [{ kind: 'list', list_id: list.list_id }];
  const { ref, self } = verdictRef(ctx, by);
  for (const holder of ctx.holders) {
    const j = judge(entryOf(s, holder, ctx.task_type), ref, self);
    s.trust.set(trustKey(holder, ctx.task_type), j.next);
    if (j.to !== j.from) {
      const change = recordChange(s, {
        holder,
        task_type: ctx.task_type,
        from: j.from,
        to: j.to,
        because: j.because,
        list_id: list.list_id,
        by: '',
        reason: '',
        ts,
        at,
        position,
        announced: false,
      });
      fx.push({ kind: 'trust', change: copyChange(change) });
    }
  }
  return fx;
}

export function trustChanged(s: FlockState, o: Obj, at: number, ts: string, position: number | null): FlockEffect[] {
  const holder = get(o, 'holder');
  const task_type = oneOf(get(o, 'task_type'), TASK_TYPES);
  const from = int(get(o, 'from'), 0, MAX_TRUST);
  const to = int(get(o, 'to'), 0, MAX_TRUST);
  if (!isTrustHolder(s, holder) || !task_type || from === undefined || to === undefined || from === to) return [];
  const rawBy = get(o, 'by');
  if (rawBy === undefined) {
    // An announcement: it marks the earliest matching change the fold computed
    // from verdicts as announced. It never moves a level by itself.
    const c = announce(s, (c) => c.holder === holder && c.task_type === task_type && c.from === from && c.to === to);
    return c ? [{ kind: 'trust', change: copyChange(c) }] : [];
  }
  // An owner's action: demote or reset, with a reason. Trust is earned, so
  // nobody raises a level by hand.
  const by = line(rawBy, FLOCK_LIMITS.requester);
  const reason = line(get(o, 'reason'), FLOCK_LIMITS.reason);
  if (!by || !reason || !ownerLowers(s, holder, task_type, from, to, baseLevel(s, holder))) return [];
  const change = recordChange(s, { holder, task_type, from, to, because: [], list_id: '', by, reason, ts, at, position, announced: true });
  return [{ kind: 'trust', change: copyChange(change) }];
}


export interface LedgerJSON {
  protocol: number;
  levels: readonly string[];
  rules: ReturnType<typeof trustRules>;
  holders: {
    holder: string;
    task_type: TaskType;
    level: number;
    level_name: TrustName;
    run: number;
    approved: number;
    rejected: number;
    timeout: number;
    auto: number;
  }[];
  starting: { holder: string; level: number }[];
  history: {
    id: number;
    holder: string;
    task_type: TaskType;
    from: number;
    to: number;
    because: VerdictRef[];
    list_id: string;
    by?: string;
    reason?: string;
    ts: string;
  }[];
}

/** The ledger as `GET /api/trust` serves it (docs/flock.md): entries sorted by holder then task type; history oldest first. */
export function flockLedger(s: FlockState): LedgerJSON {
  const holders = [...s.trust.values()]
    .sort((a, b) => (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : TASK_TYPES.indexOf(a.task_type) - TASK_TYPES.indexOf(b.task_type)))
    .map((e) => ({
      holder: e.holder,
      task_type: e.task_type,
      level: e.level,
      level_name: TRUST_LEVELS[e.level],
      run: e.run,
      approved: e.approved,
      rejected: e.rejected,
      timeout: e.timeout,
      auto: e.auto,
    }));
  const starting = [...s.spun.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((c) => ({ holder: c.name, level: c.trust }));
  const history = s.history.map((c) => ({
    id: c.id,
    holder: c.holder,
    task_type: c.task_type,
    from: c.from,
    to: c.to,
    because: c.because,
    list_id: c.list_id,
    ...(c.by ? { by: c.by, reason: c.reason } : {}),
    ts: c.ts,
  }));
  return {
    protocol: FLOCK_PROTOCOL_VERSION,
    levels: TRUST_LEVELS,
    rules: trustRules(),
    holders,
    starting,
    history,
  };
}

/** Changes computed from verdicts whose `trust.changed` is not in the log yet (a restart appends them). */
export function unannouncedTrust(s: FlockState): TrustChange[] {
  return s.history.filter((c) => !c.announced);
}

/** The handlers of verdicts and trust changes. */
export const VERDICT_STEPS: Readonly<Record<string, FlockStep>> = {
  verdict: verdictEvent,
  'trust.changed': trustChanged,
};
