// The browser's side of the approvals: the scope `approvals:<project>` of the
// browser's one live connection, folded by the shared approvals fold
// (src/core/approvals.ts) through FoldedScope (folded.ts). One client per tab
// and project, shared by every component that shows approvals (the inbox, the
// agent card, the floor's counts, the nav badge); a project's scope is read
// while a component of it listens. A decision a person makes is a POST whose answer only says
// whether it was accepted; what it changed arrives on the stream like
// everyone's.

import { applyApproval, approvalsFromJSON, emptyApprovals, type ApprovalsJSON, type ApprovalsState } from '../../../src/core/approvals.js';
import { FoldedScope, useFolded } from './folded.js';

export type ApprovalsClient = FoldedScope<ApprovalsState, ApprovalsJSON>;

export function approvalsClient(project = 'default'): ApprovalsClient {
  return new FoldedScope(`approvals:${project}`, { empty: emptyApprovals, fromJSON: approvalsFromJSON, apply: applyApproval });
}

const clients = new Map<string, ApprovalsClient>();

/** The tab's approvals client of `project`, made on first use. */
export function approvalsOf(project = 'default'): ApprovalsClient {
  let c = clients.get(project);
  if (!c) clients.set(project, (c = approvalsClient(project)));
  return c;
}

/** The tab's approvals client of `project`; the component re-renders when the state changes. */
export function useApprovals(project = 'default'): ApprovalsClient {
  return useFolded(approvalsOf(project));
}
