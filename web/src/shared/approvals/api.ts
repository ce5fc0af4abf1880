// A person's decision on an approval, from any view. The server records who
// decided and the first decision in the log wins: a later one is a 409 that
// says who was first. Nothing changes on the page until the outcome comes
// back on the stream, for everyone at once.

import { postJson, type Answer } from '../api.js';
import { nameHeaders } from '../me.js';
import { fleetPath, inProject } from '../scope.js';

/** A hook approval (an agent's tool call held by its hook): `POST /approvals/:id/decision`. */
export function decideHook(id: string, decision: 'allow' | 'deny'): Promise<Answer> {
  return postJson(`/approvals/${encodeURIComponent(id)}/decision`, { decision });
}

/**
 * A fleet board session's approval: the board's `session.approval` post, the
 * one path for the fleet view, the approvals inbox and the Work view (which
 * names the board's project, since its page has no `?project=`). The server
 * checks the role (editor).
 */
export function decideFleet(thread: string, session: string, rid: string, allow: boolean, project?: string): Promise<Answer> {
  return postJson(inProject(fleetPath(thread), project), { type: 'session.approval', id: session, rid, state: allow ? 'allowed' : 'denied' }, nameHeaders());
}
