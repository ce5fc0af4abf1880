// When a notice is worth pushing (docs/web.md, "Notifications"): on a
// transition only, and not in a member's quiet hours. Pure: the previous
// phase and `now` are passed in; nothing here reads a clock or keeps state.
//
// An agent's floor status folds to a phase; a notice is due only when the
// phase changes into one worth telling (done, failed). A burst of events in
// the same phase (twenty Stops, a status repeated) is no transition, so it
// sends nothing more; a later change (working again, then failed) is one.

import type { NoticeKind, QuietHours } from './push.js';

/** What a person may want to hear about an agent: finished, failed, or neither (busy). */
export type AgentPhase = 'busy' | 'done' | 'failed';

/** The floor's status as a phase: `done` and `error` end something, everything else is work going on. */
export function phaseOf(status: string): AgentPhase {
  return status === 'done' ? 'done' : status === 'error' ? 'failed' : 'busy';
}

/** The notice a transition from `prev` to `next` makes: one only when the phase changes into done or failed. */
export function transitionNotice(prev: AgentPhase | undefined, next: AgentPhase): 'done' | 'failed' | null {
  if (prev === next || next === 'busy') return null;
  return next;
}

/** Kinds that mean a person is waited for: the ones quiet hours may let through. */
export const WAITING_KINDS: ReadonlySet<NoticeKind> = new Set<NoticeKind>(['approval', 'ask']);

/** Minutes since midnight at `now` in `timeZone` (an IANA name already checked), or null for an unknown zone. */
export function minutesIn(timeZone: string, now: number): number | null {
  try {
    const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(now));
    const h = Number(parts.find((p) => p.type === 'hour')?.value);
    const m = Number(parts.find((p) => p.type === 'minute')?.value);
    return Number.isFinite(h) && Number.isFinite(m) ? (h % 24) * 60 + m : null;
  } catch {
    return null;
  }
}

/** Whether `now` falls in the quiet hours: [start, end) in the member's zone; a window past midnight wraps. */
export function inQuietHours(q: QuietHours | null, now: number): boolean {
  if (!q || q.start === q.end) return false;
  const t = minutesIn(q.timeZone, now);
  if (t === null) return false;
  return q.start < q.end ? t >= q.start && t < q.end : t >= q.start || t < q.end;
}

/** Whether a notice of `kind` is pushed to a member now, given their quiet hours. */
export function quietAllows(q: QuietHours | null, kind: NoticeKind, now: number): boolean {
  if (!inQuietHours(q, now)) return true;
  return q!.letWaiting && WAITING_KINDS.has(kind);
}

/** A time zone name the runtime knows (IANA), checked with Intl. */
export function validTimeZone(tz: string): boolean {
  if (tz.length === 0 || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
