// What a person is shown about an agent, and what waits for them: the floor
// fold (what each agent last said) joined with the approvals fold (what waits
// for a decision). One place, so the floor's counts, the nav badge and the
// inbox cannot disagree (docs/floor.md, "What waits for you").
//
// Pure: the clock arrives as `now`; nothing here changes either state.
//
// Invariants:
// - "waiting for you" is exactly the pending approvals of the project's one
//   approvals fold (`waitingForYou`): the floor, the nav badge and the inbox
//   all count that list;
// - an agent with a pending approval of its own is waiting, whatever the floor
//   last said: the request's append is what makes it waiting, so no reader
//   sees it waiting before there is something to decide (the floor's own
//   `waiting` event comes after the request: src/server/hooks.ts);
// - an agent the floor shows `waiting` with no pending approval of its own is
//   waiting in its terminal (Claude Code's permission prompt, a question it
//   asks there): it needs its person at that terminal, nothing can be decided
//   here; while the approvals are not known yet (`here` null) it is shown as
//   said. Except when its latest approval here was answered after the floor
//   last heard from it: the wait was for that one, and the floor's word of
//   the outcome is on its way (it is appended after the decision); until it
//   comes the agent is shown as that word will say (`afterDecision`);
// - a working or thinking agent silent past the threshold is quiet
//   (`quietSince`); every other status is a statement and is shown as said.

import { quietSince, type Agent, type FloorState, type Status } from './floor.js';
import { pendingApprovals, type Approval, type ApprovalsState } from './approvals.js';

/** What a view shows for an agent: its status, or `quiet` (silent while working), or `terminal` (waiting in its own terminal). */
export type Shown = Status | 'quiet' | 'terminal';

export const SHOWN: readonly Shown[] = ['idle', 'thinking', 'working', 'quiet', 'waiting', 'terminal', 'done', 'error', 'offline'];

/** A crow stands on the floor as `flock:<crow>` (src/server/flock/floor.ts). */
export function crowAgentId(crow: string): string {
  return `flock:${crow}`;
}

/** The floor agent an approval keeps waiting: the asker, or for a verdict its crow's floor agent. */
export function floorAgentOf(a: Approval): string {
  return a.kind === 'verdict' && a.source === 'flock' ? crowAgentId(a.asker) : a.asker;
}

/** What waits for a decision here: the pending approvals, oldest first (the one list every count reads). */
export function waitingForYou(s: ApprovalsState): Approval[] {
  return pendingApprovals(s);
}

/**
 * The floor agents that have something waiting for a decision here, with
 * (`answered`) each agent's latest closed approval among those the fold
 * keeps, by its decision time.
 */
export interface Here extends ReadonlySet<string> {
  readonly answered?: ReadonlyMap<string, Approval>;
}

/** The floor agents that have something waiting for a decision here (see `Here`). */
export function waitingHere(s: ApprovalsState): Set<string> & Here {
  const out = new Set<string>();
  const answered = new Map<string, Approval>();
  for (const a of s.byId.values()) {
    const agent = floorAgentOf(a);
    if (a.status === 'pending') out.add(agent);
    else if (a.decidedAt !== null && (answered.get(agent)?.decidedAt ?? -Infinity) <= a.decidedAt) answered.set(agent, a);
  }
  return Object.assign(out, { answered });
}

/**
 * What the floor will say once it hears how a request of its agent ended (the
 * hook's outcome: src/integrations, `outcomeEvent`, `withdrawnEvent`): allowed,
 * it works; withdrawn (the agent stopped waiting), it is idle; otherwise it
 * goes on thinking.
 */
export function afterDecision(a: Approval): Status {
  return a.status === 'allowed' ? 'working' : a.status === 'withdrawn' ? 'idle' : 'thinking';
}

/**
 * What to show for `a` at `now`: `waiting` for an agent with a pending
 * approval here (`here`: `waitingHere`, null while unknown); for a waiting
 * agent with nothing to decide here, what its answered request will make it
 * (`afterDecision`) when the floor has not heard from it since, else
 * `terminal`; `quiet` for a working or thinking agent silent for
 * `quietAfterMs`; else its status.
 */
export function shownStatus(a: Agent, now: number, quietAfterMs: number, here: Here | null): Shown {
  if (a.leftAt !== null) return a.status;
  if (here?.has(a.id)) return 'waiting';
  let heard = a;
  if (a.status === 'waiting' && here !== null) {
    const last = here.answered?.get(a.id);
    if (!last || last.decidedAt === null || last.decidedAt < a.lastSeen) return 'terminal';
    // Answered as of the decision: silent since then, not since the wait began.
    heard = { ...a, status: afterDecision(last), lastSeen: last.decidedAt };
  }
  return quietSince(heard, now, quietAfterMs) !== null ? 'quiet' : heard.status;
}

/**
 * The floor's counts: agents by what they are shown as, except `waiting`,
 * which counts what waits for a decision here (`waitingForYou`), the number
 * the nav badge and the inbox show. Agents on their way out are not counted.
 */
export function countShown(floor: FloorState, approvals: ApprovalsState | null, now: number, quietAfterMs: number): Record<Shown, number> {
  const c = { idle: 0, thinking: 0, working: 0, quiet: 0, waiting: 0, terminal: 0, done: 0, error: 0, offline: 0 } as Record<Shown, number>;
  const here = approvals ? waitingHere(approvals) : null;
  for (const a of floor.agents.values()) {
    if (a.leftAt !== null) continue;
    const s = shownStatus(a, now, quietAfterMs, here);
    if (s !== 'waiting') c[s]++;
    else if (!approvals) c.waiting++;
  }
  if (approvals) c.waiting = waitingForYou(approvals).length;
  return c;
}
