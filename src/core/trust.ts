// The one trust ledger (docs/flock.md "Trust", docs/approvals.md "Earned
// trust"): a holder earns the right to skip a person by being approved, loses
// it by being rejected or left unanswered, and every step is kept with the
// decisions and the people behind it.
//
// Holders live in a book keyed by (holder, kind): the flock's crows and
// `flock` per task type (src/core/flock.ts folds them), and a coding agents'
// team per action class (src/core/agent-trust.ts). The rules are the same for
// both and live only here:
// - levels 0 stranger, 1 regular, 2 trusted;
// - an approval adds to the holder's run; the PROMOTE_AFTER-th in a row moves
//   it up one level (at most trusted) and starts a new run;
// - a rejection or a timeout moves it down one level (at least stranger) and
//   ends the run;
// - `auto` (nobody was asked) and a self-approval (the decider is the one who
//   asked for the work: a verdict on the list you handed over, an agent's own
//   token) change nothing: trust is earned from somebody else's yes;
// - an owner may demote (one down) or reset (to stranger) with a reason;
//   nobody raises a level by hand.
//
// Pure: no clock, no I/O. Callers pass the book (their state's fields) and
// time; every function is O(1) in the size of the history (it is trimmed in
// tenths, amortised).

export const TRUST_LEVELS = ['stranger', 'regular', 'trusted'] as const;
export type TrustName = (typeof TRUST_LEVELS)[number];
/** Approvals in a row that move a holder up one level. */
export const PROMOTE_AFTER = 3;
export const MAX_TRUST = 2;

export type TrustVerdict = 'approved' | 'rejected' | 'timeout' | 'auto';

/** One decision the ledger judges: what it was and, for a person's, who made it. */
export interface TrustRef {
  verdict: TrustVerdict;
  /** The person who decided (absent for `auto` and `timeout`). */
  by?: string;
}

export interface LedgerEntry<K extends string = string, R extends TrustRef = TrustRef> {
  holder: string;
  /** What the holder is trusted at: the flock's task type, an agent's action class. */
  task_type: K;
  level: number;
  /** Approvals in a row since the last change (the last PROMOTE_AFTER are in `recent`). */
  run: number;
  recent: R[];
  approved: number;
  rejected: number;
  timeout: number;
  auto: number;
  /** Approvals that earned nothing: the decider was the one who asked (absent in states folded before the rule). */
  self?: number;
}

export interface LedgerChange<K extends string = string, R extends TrustRef = TrustRef> {
  /** 1-based number of the change in the book's history. */
  id: number;
  holder: string;
  task_type: K;
  from: number;
  to: number;
  /** The decisions that caused it (empty for an owner's action). */
  because: R[];
  /** The owner who demoted or reset ('' when decisions caused it). */
  by: string;
  reason: string;
  ts: string;
  at: number;
  position: number | null;
  /** An event announcing it is in the log (owner actions are their own event). */
  announced: boolean;
}

/** A ledger: the fields a state keeps it in (the flock's state is one). */
export interface TrustBook<E extends LedgerEntry<string, TrustRef>, C extends LedgerChange<string, TrustRef>> {
  trust: Map<string, E>;
  history: C[];
  changes: number;
}

export const trustKey = (holder: string, kind: string): string => `${holder}\u0000${kind}`;

/** A holder's level at `kind`, or `base` (its starting level) when it has no history. */
export function levelOf(book: TrustBook<LedgerEntry<string, TrustRef>, LedgerChange<string, TrustRef>>, holder: string, kind: string, base = 0): number {
  return book.trust.get(trustKey(holder, kind))?.level ?? base;
}

/** A holder's entry (a fresh one at `base` when it has none); never stored by this call. */
export function entryOf<K extends string, R extends TrustRef>(
  book: TrustBook<LedgerEntry<K, R>, LedgerChange<K, R>>,
  holder: string,
  kind: K,
  base = 0,
): LedgerEntry<K, R> {
  return book.trust.get(trustKey(holder, kind)) ?? { holder, task_type: kind, level: base, run: 0, recent: [], approved: 0, rejected: 0, timeout: 0, auto: 0, self: 0 };
}

/**
 * The rule, for one holder and one decision. `self` says the decider is the
 * one who asked (the list's requester, the agent's own token): that approval
 * earns nothing. Returns the next entry and the change it makes, if any;
 * never mutates.
 */
export function judge<K extends string, R extends TrustRef>(
  entry: LedgerEntry<K, R>,
  ref: R,
  self = false,
): { next: LedgerEntry<K, R>; from: number; to: number; because: R[] } {
  const next: LedgerEntry<K, R> = { ...entry, recent: entry.recent.slice() };
  const from = entry.level;
  switch (ref.verdict) {
    case 'auto':
      next.auto++;
      return { next, from, to: from, because: [] };
    case 'approved': {
      if (self) {
        next.self = (next.self ?? 0) + 1;
        return { next, from, to: from, because: [] };
      }
      next.approved++;
      next.run++;
      next.recent.push(ref);
      if (next.recent.length > PROMOTE_AFTER) next.recent.shift();
      if (next.run >= PROMOTE_AFTER && from < MAX_TRUST) {
        const because = next.recent.slice();
        next.level = from + 1;
        next.run = 0;
        next.recent = [];
        return { next, from, to: next.level, because };
      }
      return { next, from, to: from, because: [] };
    }
    default: {
      if (ref.verdict === 'rejected') next.rejected++;
      else next.timeout++;
      next.run = 0;
      next.recent = [];
      if (from > 0) {
        next.level = from - 1;
        return { next, from, to: next.level, because: [ref] };
      }
      return { next, from, to: from, because: [] };
    }
  }
}

/** Keeps a change in the book's history (the newest `keep`; the log keeps them all). */
export function recordChange<C extends LedgerChange<string, TrustRef>>(
  book: TrustBook<LedgerEntry<string, TrustRef>, C>,
  c: Omit<C, 'id'>,
  keep: number,
): C {
  const change = { id: ++book.changes, ...c } as C;
  book.history.push(change);
  // Drop the oldest tenth at once, so trimming stays amortised O(1).
  if (book.history.length > keep) book.history.splice(0, Math.ceil(keep / 10));
  return change;
}

/** Effects carry copies: a change in the book is marked announced later, and an effect must not change after the fact. */
export function copyChange<C extends LedgerChange<string, TrustRef>>(c: C): C {
  return { ...c, because: c.because.slice() };
}

/**
 * An announcement of a change computed from decisions: marks the earliest
 * unannounced one that `matches` as announced and returns it. It never moves
 * a level by itself (a forged announcement is a no-op).
 */
export function announce<C extends LedgerChange<string, TrustRef>>(book: TrustBook<LedgerEntry<string, TrustRef>, C>, matches: (c: C) => boolean): C | undefined {
  for (const c of book.history) {
    if (!c.announced && c.by === '' && matches(c)) {
      c.announced = true;
      return c;
    }
  }
  return undefined;
}

/**
 * An owner's demotion or reset: moves the holder from its current level
 * `from` down to `to`, and starts its run again. False (nothing changed)
 * when it would raise a level, or `from` is not the holder's level now.
 */
export function ownerLowers<K extends string, R extends TrustRef>(book: TrustBook<LedgerEntry<K, R>, LedgerChange<K, R>>, holder: string, kind: K, from: number, to: number, base = 0): boolean {
  if (to >= from || to < 0 || levelOf(book, holder, kind, base) !== from) return false;
  const entry = entryOf(book, holder, kind, base);
  book.trust.set(trustKey(holder, kind), { ...entry, level: to, run: 0, recent: [] });
  return true;
}

/**
 * An owner's raise ("Allow and trust this class", docs/approvals.md): moves
 * the holder from its current level `from` up to `to` (at most MAX_TRUST),
 * and starts its run again. False (nothing changed) when it would not raise,
 * or `from` is not the holder's level now.
 */
export function ownerRaises<K extends string, R extends TrustRef>(book: TrustBook<LedgerEntry<K, R>, LedgerChange<K, R>>, holder: string, kind: K, from: number, to: number, base = 0): boolean {
  if (to <= from || to > MAX_TRUST || levelOf(book, holder, kind, base) !== from) return false;
  const entry = entryOf(book, holder, kind, base);
  book.trust.set(trustKey(holder, kind), { ...entry, level: to, run: 0, recent: [] });
  return true;
}

/** The rules as `GET /api/trust` shows them. */
export function trustRules(): { promote_after: number; max_level: number; demote_on: string[]; auto_counts: false; self_counts: false } {
  return { promote_after: PROMOTE_AFTER, max_level: MAX_TRUST, demote_on: ['rejected', 'timeout'], auto_counts: false, self_counts: false };
}

/** Who earned a change: the people whose approvals are in its `because` (in order, once each). */
export function earnedBy(c: LedgerChange<string, TrustRef>): string[] {
  const out: string[] = [];
  for (const r of c.because) if (r.verdict === 'approved' && r.by && !out.includes(r.by)) out.push(r.by);
  return out;
}
