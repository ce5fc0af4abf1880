// What a member's browser posts to the fleet board. Every write is a POST
// whose answer only says whether it was accepted: what it changed arrives
// like everyone else's changes, on the thread's stream, folded by the shared
// fold. The page never applies its own writes locally (no optimistic copy):
// the board and the chat a member sees are the ones everybody sees.
//
// Identity: the server stamps `name`, `uid` and `ts` from the transport (the
// tab's label in local mode, the signed-in account in shared mode:
// ../shared/me.ts). Decisions on approvals are ../shared/approvals/api.ts.

import { SESSION_ID_PATTERN, type SessionFlavor } from '../../../src/core/fleet.js';
import { postJson, randomKey, type Answer } from '../shared/api.js';
import { nameHeaders } from '../shared/me.js';
import { fleetPath, inProject } from '../shared/scope.js';

/**
 * A new session id from its human name: readable in URLs and logs, unique by
 * a random tail, always inside the id pattern.
 */
export function newSessionId(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const id = `${slug || 'session'}-${randomKey(3)}`;
  return SESSION_ID_PATTERN.test(id) ? id : `session-${randomKey(6)}`;
}

/** Posts one durable session event as this member (prompt, close), on the page's project's board. */
function postSessionEvent(thread: string, event: Record<string, unknown>): Promise<Answer> {
  return postJson(inProject(fleetPath(thread)), event, nameHeaders());
}

export function prompt(thread: string, id: string, text: string): Promise<Answer> {
  return postSessionEvent(thread, { type: 'session.prompt', id, text });
}

/** Closing is a member's `session.end`: the board shows it closed at once, and the bridge ends the process and removes a scoped worktree. */
export function close(thread: string, id: string): Promise<Answer> {
  return postSessionEvent(thread, { type: 'session.end', id, reason: 'closed' });
}

export interface StartRequest {
  id: string;
  session: string;
  flavor: SessionFlavor;
  root: string;
}

/**
 * Asks the thread's workstation bridge to start a session. The board shows it
 * once the bridge has started the process and posted `session.spawn` with
 * this id.
 */
export function requestStart(thread: string, req: StartRequest): Promise<Answer> {
  const body: Record<string, unknown> = { type: 'request.start', id: req.id, session: req.session, flavor: req.flavor };
  if (req.root) body.root = req.root;
  return postJson(inProject(fleetPath(thread, '/requests')), body, nameHeaders());
}
