// A person's decision on an approval, from any view: one endpoint for every
// kind (`POST /approvals/:id/decision`, docs/approvals.md). The server records
// who decided and the first decision in the log wins: a later one is a 409
// that says who was first. Nothing changes on the page until the outcome
// comes back on the stream, for everyone at once.

import type { Approval } from '../../../../src/core/approvals.js';
import { postJson, type Answer } from '../api.js';
import { nameHeaders } from '../me.js';
import { fleetPath, inProject } from '../scope.js';

/**
 * Any approval by its id (a hook's, a fleet board session's, a verdict, an
 * ask), in the page's project or the one given. `phrase`: an ask (a nest's
 * ask_owner) is approved by typing its phrase, anything else the server
 * records as a no; `remember: 'session'` makes an allow a rule for the rest
 * of the agent's session (docs/approvals.md).
 */
export function decideApproval(id: string, decision: 'allow' | 'deny', project?: string, opts: { phrase?: string; remember?: 'session' } = {}): Promise<Answer> {
  // Local mode: the name this browser goes by labels the decider (shared mode: the server takes the signed-in person's).
  const by = nameHeaders()['roost-name'];
  const { phrase, remember } = opts;
  return postJson(inProject(`/approvals/${encodeURIComponent(id)}/decision`, project), {
    decision,
    ...(by ? { by } : {}),
    ...(phrase !== undefined ? { phrase } : {}),
    ...(remember ? { remember } : {}),
  });
}

/**
 * A fleet board session's request, named by where it lives (`{thread,
 * session, rid}`: the board's card and Work's blocked execution know it so),
 * decided through the one endpoint by its approval's id: `approval`, the
 * request as the page's approvals fold holds it (the approvals scope of the
 * live connection: `fleetApprovalIn`), looked up by the caller, never fetched. A request
 * the approvals do not hold (asked before they were one model) is decided by
 * the board's own post, an alias the server sends through the same decide.
 */
export function decideFleet(thread: string, session: string, rid: string, allow: boolean, approval: Approval | undefined, project?: string): Promise<Answer> {
  if (approval) return decideApproval(approval.id, allow ? 'allow' : 'deny', project);
  return postJson(inProject(fleetPath(thread), project), { type: 'session.approval', id: session, rid, state: allow ? 'allowed' : 'denied' }, nameHeaders());
}

/** One item of a decision in bulk: 200 decided by it, 409 someone (or the window) was first, 403 the caller's own, 404 unknown. */
export interface BulkResult {
  id: string;
  status: number;
  message?: string;
}

/**
 * Many requests allowed or denied in one action (`POST /approvals/decisions`,
 * at most 200 ids): the server sends each through the one decide path, first
 * decision wins, and answers per item. `reason` is every item's note (on a
 * deny, the reason the agent's model reads).
 */
export function decideMany(ids: string[], decision: 'allow' | 'deny', reason?: string, project?: string): Promise<Answer<{ decided: number; results: BulkResult[] }>> {
  const by = nameHeaders()['roost-name'];
  return postJson(inProject('/approvals/decisions', project), { ids, decision, ...(reason ? { reason } : {}), ...(by ? { by } : {}) });
}
