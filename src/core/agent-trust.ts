// Earned trust for coding agents' tool calls (docs/approvals.md "Earned
// trust"): the one trust ledger (src/core/trust.ts) with a project's teams as
// holders, judged per action class (src/core/action-class.ts). It lives in the
// project's approvals fold (src/core/approvals.ts calls in here), because the
// decisions it judges are approvals: a person's allow is an approval, a deny a
// rejection, an expiry a timeout; an allow by a session rule or by trust, and
// a withdrawal (the agent went away), change nothing.
//
// Events, on the project's approvals stream:
//   trust.enabled { on, by, ts }                    an owner turns earned trust on or off
//   trust.never   { classes[], by, ts }             an owner's classes that never run on trust
//   trust.changed { holder, action_class, from, to, by, reason, approval?, ts }
//                                                   a person lowers a holder (a revocation, a demotion), or an
//                                                   owner raises it with the call it allowed ("Allow and trust")
// Trust is off until an owner turns it on; while off, nothing is judged and
// nothing is allowed by trust.
//
// Pure; bounded: at most LIMITS.holders entries (oldest let go), the newest
// LIMITS.history changes (the log keeps all).

import { trimOldest } from './bounded.js';
import { DEFAULT_NEVER, CLASS_MAX } from './action-class.js';
import {
  MAX_TRUST,
  TRUST_LEVELS,
  copyChange,
  entryOf,
  judge,
  levelOf,
  ownerLowers,
  ownerRaises,
  recordChange,
  trustKey,
  trustRules,
  type LedgerChange,
  type LedgerEntry,
  type TrustRef,
} from './trust.js';

export const AGENT_TRUST_LIMITS = { holders: 5_000, history: 1_000, never: 50, team: 80, by: 120, reason: 500 } as const;

/**
 * Where a (team, class) starts: regular. Its calls already wait for a person
 * (the approval rules chose them), so three approvals in a row by a person
 * make it trusted and the fourth call runs on trust (issue 30); a deny, a
 * timeout or a revocation puts it back to regular, two of them to stranger
 * (then six approvals in a row earn it back).
 */
export const AGENT_START_LEVEL = 1;

/** A decision the ledger judged: the approval and who decided it. */
export interface AgentRef extends TrustRef {
  approval: string;
}

/**
 * holder = the team, task_type = the action class. `earned`: the decisions
 * behind its last raise to trusted (kept on the entry, so a hook's check is
 * O(1) whatever the history's length).
 */
export type AgentEntry = LedgerEntry<string, AgentRef> & { earned?: AgentRef[] };
export type AgentChange = LedgerChange<string, AgentRef> & { approval: string };

export interface AgentTrustState {
  on: boolean;
  never: string[];
  /** Who set `on` and `never` last. */
  by: string;
  trust: Map<string, AgentEntry>;
  history: AgentChange[];
  changes: number;
}

export function emptyAgentTrust(): AgentTrustState {
  return { on: false, never: [...DEFAULT_NEVER], by: '', trust: new Map(), history: [], changes: 0 };
}

function str(v: unknown, cap: number): string {
  if (typeof v !== 'string') return '';
  const t = v.replace(/\s+/g, ' ').trim();
  return t.length > cap ? t.slice(0, cap) : t;
}

const iso = (ts: number) => (Number.isFinite(ts) && Math.abs(ts) < 8.64e15 ? new Date(ts).toISOString() : '');

/** Folds one `trust.*` event of the approvals stream; true when it changed something. */
export function applyAgentTrust(s: AgentTrustState, o: Record<string, unknown>, ts: number, position: number | null): boolean {
  const by = str(o.by, AGENT_TRUST_LIMITS.by);
  if (!by) return false;
  switch (o.type) {
    case 'trust.enabled':
      if (typeof o.on !== 'boolean') return false;
      s.on = o.on;
      s.by = by;
      return true;
    case 'trust.never': {
      if (!Array.isArray(o.classes)) return false;
      const out: string[] = [];
      for (const c of o.classes.slice(0, AGENT_TRUST_LIMITS.never)) {
        const k = str(c, CLASS_MAX);
        if (k && !out.includes(k)) out.push(k);
      }
      s.never = out;
      s.by = by;
      return true;
    }
    case 'trust.changed': {
      const holder = str(o.holder, AGENT_TRUST_LIMITS.team);
      const cls = str(o.action_class, CLASS_MAX);
      const reason = str(o.reason, AGENT_TRUST_LIMITS.reason);
      const from = o.from;
      const to = o.to;
      if (!holder || !cls || !reason || typeof from !== 'number' || typeof to !== 'number' || !Number.isInteger(to)) return false;
      const approval = str(o.approval, 128);
      // A raise is an owner's "Allow and trust this class": only with the allowed call it came with.
      if (to > from ? !approval || !ownerRaises(s, holder, cls, from, to, AGENT_START_LEVEL) : !ownerLowers(s, holder, cls, from, to, AGENT_START_LEVEL)) return false;
      const because: AgentRef[] = to > from ? [{ verdict: 'approved', by, approval }] : [];
      if (to === MAX_TRUST && to > from) s.trust.get(trustKey(holder, cls))!.earned = because.slice();
      recordChange<AgentChange>(s, { holder, task_type: cls, from, to, because, by, reason, ts: iso(ts), at: ts, position, announced: true, approval }, AGENT_TRUST_LIMITS.history);
      return true;
    }
    default:
      return false;
  }
}

/** Judges a closed approval of `team`'s call of class `cls`; the change it made, if any. */
export function judgeAgent(s: AgentTrustState, team: string, cls: string, ref: AgentRef, ts: number, position: number | null): AgentChange | undefined {
  if (!s.on || !team || !cls) return undefined;
  const j = judge<string, AgentRef>(entryOf(s, team, cls, AGENT_START_LEVEL), ref);
  if (j.to === MAX_TRUST && j.to > j.from) (j.next as AgentEntry).earned = j.because.slice();
  const key = trustKey(team, cls);
  // Re-inserted, so the holders judged least recently are the ones let go past the cap.
  s.trust.delete(key);
  s.trust.set(key, j.next);
  trimOldest(s.trust, AGENT_TRUST_LIMITS.holders);
  if (j.to === j.from) return undefined;
  return copyChange(
    recordChange<AgentChange>(s, { holder: team, task_type: cls, from: j.from, to: j.to, because: j.because, by: '', reason: '', ts: iso(ts), at: ts, position, announced: true, approval: ref.approval }, AGENT_TRUST_LIMITS.history),
  );
}

/** When `team`'s calls of class `cls` are allowed by trust now: the level and the decisions that earned it; else null. */
export function trustedFor(s: AgentTrustState, team: string, cls: string): { level: number; because: AgentRef[] } | null {
  if (!s.on || !team || !cls) return null;
  const e = s.trust.get(trustKey(team, cls));
  if (!e || e.level < MAX_TRUST) return null;
  // The three approvals that earned the last step up, or the owner's "Allow and trust" that raised it.
  return { level: MAX_TRUST, because: e.earned?.slice() ?? [] };
}

/** A holder's level at a class (AGENT_START_LEVEL when it has no history). */
export function agentLevel(s: AgentTrustState, team: string, cls: string): number {
  return levelOf(s, team, cls, AGENT_START_LEVEL);
}

/** The agents' part of `GET /api/trust`: on, the never-classes, every holder (team, class), the history (oldest first). */
export function agentLedgerJSON(s: AgentTrustState, holder?: { team: string; action_class: string }) {
  const pick = (team: string, cls: string) => !holder || (team === holder.team && cls === holder.action_class);
  return {
    on: s.on,
    never: s.never.slice(),
    by: s.by,
    levels: TRUST_LEVELS,
    rules: trustRules(),
    holders: [...s.trust.values()]
      .filter((e) => pick(e.holder, e.task_type))
      .sort((a, b) => (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : a.task_type < b.task_type ? -1 : a.task_type > b.task_type ? 1 : 0))
      .map((e) => ({ team: e.holder, action_class: e.task_type, level: e.level, level_name: TRUST_LEVELS[e.level], run: e.run, approved: e.approved, rejected: e.rejected, timeout: e.timeout, auto: e.auto })),
    history: s.history
      .filter((c) => pick(c.holder, c.task_type))
      .map((c) => ({
        id: c.id,
        team: c.holder,
        action_class: c.task_type,
        from: c.from,
        to: c.to,
        because: c.because,
        ...(c.approval ? { approval: c.approval } : {}),
        ...(c.by ? { by: c.by, reason: c.reason } : {}),
        ts: c.ts,
      })),
  };
}

export function agentTrustToJSON(s: AgentTrustState): unknown {
  return { on: s.on, never: s.never, by: s.by, trust: [...s.trust], history: s.history, changes: s.changes };
}

export function agentTrustFromJSON(j: unknown): AgentTrustState {
  const s = emptyAgentTrust();
  if (!j || typeof j !== 'object') return s;
  const o = j as { on?: boolean; never?: string[]; by?: string; trust?: [string, AgentEntry][]; history?: AgentChange[]; changes?: number };
  s.on = o.on === true;
  if (Array.isArray(o.never)) s.never = o.never.slice();
  s.by = o.by ?? '';
  for (const [k, e] of o.trust ?? []) s.trust.set(k, { ...e, recent: e.recent.slice(), ...(e.earned ? { earned: e.earned.slice() } : {}) });
  s.history = (o.history ?? []).map((c) => ({ ...c, because: c.because.slice() }));
  s.changes = o.changes ?? s.history.length;
  return s;
}
