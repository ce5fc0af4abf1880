// Per-agent trends (issue 32, point 4; docs/floor.md "Trends"): one agent's
// tool calls, approvals it waited for, the time it waited for a person,
// failures and cost, per day over the last TREND_DAYS days. A pure fold of
// that agent's log entries: the server feeds it the floor's, the approvals'
// and the usage's entries of the window (src/server/trends.ts) and reads the
// series. Days are the caller's calendar days: `offsetMinutes` is what
// `Date.prototype.getTimezoneOffset()` says (UTC minus local time).

export const TREND_DAYS = 30;
const DAY = 86_400_000;
/** The caller's offset is taken within ±14 h (every zone on Earth). */
export const TREND_MAX_OFFSET = 14 * 60;
/** Approvals whose outcome the fold remembers while it waits for their request (the scan goes newest first). */
export const TREND_MAX_OPEN = 20_000;

export interface TrendDay {
  /** The day's first millisecond (local midnight of the caller, in UTC ms). */
  start: number;
  tools: number;
  /** Approvals the agent asked for that waited for a person (not allowed by a rule or by trust at once). */
  approvals: number;
  /** Milliseconds those approvals waited, counted on the day each was asked. */
  waitMs: number;
  /** Reports that put the agent in error. */
  failures: number;
  costMicros: number;
}

export interface TrendState {
  agent: string;
  offsetMs: number;
  /** The first day's start; days[i] starts at first + i days. */
  first: number;
  days: TrendDay[];
  now: number;
  /** Outcomes seen (the scan reads newest first): approval id -> when it closed and whether a person was waited for. */
  closed: Map<string, { at: number; person: boolean }>;
}

/** The local day index of `at` (ms) for a caller at `offsetMs`. */
function dayOf(at: number, offsetMs: number): number {
  return Math.floor((at - offsetMs) / DAY);
}

export function emptyTrends(agent: string, now: number, offsetMinutes = 0, days: number = TREND_DAYS): TrendState {
  const off = Math.max(-TREND_MAX_OFFSET, Math.min(TREND_MAX_OFFSET, Math.trunc(offsetMinutes) || 0)) * 60_000;
  const today = dayOf(now, off);
  const first = (today - days + 1) * DAY + off;
  const out: TrendDay[] = [];
  for (let i = 0; i < days; i++) out.push({ start: first + i * DAY, tools: 0, approvals: 0, waitMs: 0, failures: 0, costMicros: 0 });
  return { agent, offsetMs: off, first, days: out, now, closed: new Map() };
}

/** The window's start: entries appended before it are outside the trends. */
export function trendsSince(t: TrendState): number {
  return t.first;
}

function dayAt(t: TrendState, at: number): TrendDay | null {
  if (!Number.isFinite(at) || at < t.first) return null;
  const i = Math.floor((at - t.first) / DAY);
  return i >= 0 && i < t.days.length ? t.days[i] : null;
}

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
function idOf(v: unknown): string {
  if (typeof v === 'string') return v.trim();
  if (v && typeof v === 'object' && !Array.isArray(v)) return str((v as Record<string, unknown>).id);
  return '';
}

/** A floor event appended at `at`: a tool call of the agent, or a report that puts it in error. */
export function trendFloor(t: TrendState, e: unknown, at: number): void {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return;
  const o = e as Record<string, unknown>;
  // A helper's events posted through a subagent hint name its parent: they are not the parent's own.
  if (o.subagent !== undefined && o.subagent !== null) return;
  if (idOf(o.agent) !== t.agent) return;
  const d = dayAt(t, at);
  if (!d) return;
  if (o.type === 'tool') d.tools++;
  if (o.status === 'error') d.failures++;
}

/**
 * An approvals event appended at `at`. Fed newest first (the server scans
 * backwards): an outcome is remembered until its request comes by.
 */
export function trendApproval(t: TrendState, e: unknown, at: number): void {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return;
  const o = e as Record<string, unknown>;
  const id = str(o.id);
  if (!id || id.length > 200) return;
  if (o.type === 'approval.decided' || o.type === 'approval.expired' || o.type === 'approval.withdrawn') {
    // Allowed by a rule or by trust: nobody was waited for.
    const person = !(o.type === 'approval.decided' && (o.trust !== undefined || (typeof o.rule === 'string' && o.rule !== '')));
    if (!t.closed.has(id) && t.closed.size < TREND_MAX_OPEN) t.closed.set(id, { at, person });
    return;
  }
  if (o.type !== 'approval.requested') return;
  const asker = str(o.asker) || idOf(o.agent);
  const closed = t.closed.get(id);
  t.closed.delete(id);
  if (asker !== t.agent) return;
  const d = dayAt(t, at);
  if (!d || (closed && !closed.person)) return;
  d.approvals++;
  // Still open: it has waited until now.
  d.waitMs += Math.max(0, (closed ? closed.at : t.now) - at);
}

/** A usage record appended at `at` (one model request, or a roll-up of several). */
export function trendUsage(t: TrendState, e: unknown, at: number): void {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return;
  const o = e as Record<string, unknown>;
  if (o.type !== 'usage' || str(o.agent) !== t.agent) return;
  const d = dayAt(t, at);
  const c = o.costMicros;
  if (d && typeof c === 'number' && Number.isFinite(c) && c > 0) d.costMicros += Math.min(c, 1e12);
}
