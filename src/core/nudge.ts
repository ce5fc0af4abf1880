// The nest's expectation tracker (spec/flock-events.md, the `nudge` kind;
// issue 36 point 4; docs/flock.md, "Nudges"): which crows owe a response
// past its expectation, so the harness hands each one `nudge`.
//
// Two expectations, both `expectMs` long (a setting, default 10 minutes):
// - a crow that claimed a request delivers on it within `expectMs` of its claim;
// - a crow a request is addressed to (`to`) claims, delivers or declines it
//   within `expectMs` of the request.
// A crow that missed one gets at most one nudge per request (a `nudge` from
// the harness, `to` the crow, `refers_to` the request, already in the nest
// counts). A quarantined crow is not nudged (it may not post).
//
// Pure: no clock (time arrives as `now`, and as each record's `at`), no I/O.
// Costs time linear in the nest's kept messages (at most FLOCK_LIMITS.keepMessages).

import { isWorkerCrow, type FlockState } from './flock.js';

export interface DueNudge {
  nest_id: string;
  /** The request's msg_id. */
  request: string;
  crow: string;
  /** `undelivered`: claimed, not delivered; `unanswered`: addressed, neither claimed nor declined. */
  why: 'undelivered' | 'unanswered';
  /** When the expectation started (the claim's or the request's time) and when it ran out (ms since epoch). */
  since: number;
  due: number;
}

/** The nudges due at `now`, and when the next one falls due (null: none is pending). */
export function expectations(s: FlockState, now: number, expectMs: number): { due: DueNudge[]; next: number | null } {
  const due: DueNudge[] = [];
  let next: number | null = null;
  for (const nest of s.nests.values()) {
    const claimed = new Map<string, number>();
    const delivered = new Set<string>();
    const answered = new Set<string>();
    const declined = new Set<string>();
    const nudged = new Set<string>();
    const requests: { msg_id: string; to: string; at: number }[] = [];
    for (const m of nest.messages.values()) {
      if (m.kind === 'request') {
        requests.push({ msg_id: m.msg_id, to: m.to, at: m.at });
        continue;
      }
      if (!m.refers_to || nest.messages.get(m.refers_to)?.kind !== 'request') continue;
      const key = `${m.refers_to}\u0000${m.kind === 'nudge' ? m.to : m.author}`;
      if (m.kind === 'nudge' && m.author === 'harness') nudged.add(key);
      else if (m.kind === 'claim') {
        if (!claimed.has(key)) claimed.set(key, m.at);
        answered.add(key);
      } else if (m.kind === 'deliver') {
        delivered.add(key);
        answered.add(key);
      } else if (m.kind === 'decline') {
        declined.add(key);
        answered.add(key);
      }
    }
    const consider = (request: string, crow: string, why: DueNudge['why'], since: number) => {
      const key = `${request}\u0000${crow}`;
      if (nudged.has(key) || !isWorkerCrow(s, crow) || s.quarantine.has(crow)) return;
      const at = since + expectMs;
      if (at <= now) due.push({ nest_id: nest.nest_id, request, crow, why, since, due: at });
      else if (next === null || at < next) next = at;
    };
    for (const [key, at] of claimed) {
      // Delivered, or declined after all (a decline counts as responding): nothing is owed.
      if (delivered.has(key) || declined.has(key)) continue;
      const [request, crow] = key.split('\u0000');
      consider(request, crow, 'undelivered', at);
    }
    for (const r of requests) if (r.to && !answered.has(`${r.msg_id}\u0000${r.to}`)) consider(r.msg_id, r.to, 'unanswered', r.at);
  }
  return { due, next };
}
