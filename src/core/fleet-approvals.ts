// A fleet board's approval requests as the one approvals fold holds them: a
// pure join of the board (src/core/fleet.ts: the contract's request, its
// `rid`, `tool` and `digest`) with the approvals fold (src/core/approvals.ts:
// the request's state and who decided it). Every Roost reader of a board
// request's fate reads it here (the board's cards, Work's box, the server's
// check of Work's pointer), never from the board's own copy.
//
// Why the board keeps a copy at all: the contract (spec/agents-fold.vectors.json)
// makes a decision a `session.approval` event that folds onto the board, and
// the bridge obeys it there. The server writes that event once per outcome,
// from the approvals fold (src/server/fleet: the echo); it is the contract's
// wire form of the outcome, not a second place to decide or to read it from.
// The copy is read only as history, for a request the approvals fold no
// longer holds (it keeps the newest KEEP_CLOSED closed requests) or never held
// (asked before the one model), and for the past (a rewound board).
//
// Pure: no clock, no I/O; the join returns the board's own object when the
// two agree, so a view memoized on it re-renders only when something changed.

import type { Approval as OneApproval, ApprovalsState } from './approvals.js';
import { FLEET_NO_DECISION, type Approval as BoardApproval, type Session } from './fleet.js';

/** The key of a board request in a thread: its session and rid. */
function keyOf(session: string, rid: string): string {
  return `${session}\n${rid}`;
}

/** The fleet approvals of one board thread in a project's approvals, by session and rid. */
export type FleetIndex = ReadonlyMap<string, OneApproval>;

/**
 * The approvals of kind `fleet` of one board thread, keyed by session and
 * rid. The server names each with an id derived from the board's stream, the
 * session and the rid (`fleetApprovalId`): one request per key, and no other
 * caller can ask one of kind fleet.
 */
export function fleetIndex(s: ApprovalsState, thread: string): FleetIndex {
  const out = new Map<string, OneApproval>();
  for (const a of s.byId.values()) {
    const { thread: t, session, rid } = a.scope;
    if (a.kind === 'fleet' && t === thread && session && rid) out.set(keyOf(session, rid), a);
  }
  return out;
}

/** The approval of request `rid` of board session `session`, when the approvals fold holds it. */
export function fleetApprovalIn(index: FleetIndex, session: string, rid: string): OneApproval | undefined {
  return index.get(keyOf(session, rid));
}

/** One request's approval without an index (a single look-up: a click, Work's box). */
export function fleetApprovalOf(s: ApprovalsState, thread: string, session: string, rid: string): OneApproval | undefined {
  for (const a of s.byId.values()) if (a.kind === 'fleet' && a.scope.thread === thread && a.scope.session === session && a.scope.rid === rid) return a;
  return undefined;
}

/**
 * A board request as the approvals fold holds it, in the contract's words:
 * pending while its approval is; `allowed` or `denied` once it is closed
 * (expired and withdrawn read as denied: unanswered is a no), by the decider,
 * `trust`, or FLEET_NO_DECISION when nobody decided. Once the board has the
 * outcome (the server's echo of this same approval), the board's words name
 * it (the bridge's own window denial is named by the bridge there). Without
 * an approval (history the fold let go, a request from before the one
 * model), the board's request as it is.
 */
export function boardView(request: BoardApproval, one: OneApproval | undefined): BoardApproval {
  if (!one) return request;
  if (one.status === 'pending') return request.state === 'pending' ? request : { ...request, state: 'pending', by: '' };
  const state = one.status === 'allowed' ? 'allowed' : 'denied';
  if (request.state === state) return request;
  const by = one.status === 'allowed' || one.status === 'denied' ? one.decidedBy : FLEET_NO_DECISION;
  return { ...request, state, by };
}

/** A session's requests, each as the approvals fold holds it (the same array when none changed). */
export function sessionApprovals(s: Session, index: FleetIndex): BoardApproval[] {
  const list = Array.isArray(s.approvals) ? s.approvals : [];
  let out: BoardApproval[] | null = null;
  for (let i = 0; i < list.length; i++) {
    const v = boardView(list[i], index.get(keyOf(s.id, list[i].rid)));
    if (v !== list[i]) (out ??= list.slice())[i] = v;
  }
  return out ?? list;
}
