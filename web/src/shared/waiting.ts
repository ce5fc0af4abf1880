// What waits for a decision here, read from the project's one approvals fold
// through one selector (src/core/attention.ts): the floor's "Waiting for you",
// the nav badge and the inbox all count this list, so they cannot disagree.

import type { Approval } from '../../../src/core/approvals.js';
import { waitingForYou, waitingHere } from '../../../src/core/attention.js';
import { useApprovals, type ApprovalsClient } from '../live/approvals.js';
import { pageProject } from './scope.js';

export interface Waiting {
  /** The pending approvals, oldest first. */
  list: Approval[];
  /** The floor agents with something to decide here; null until the approvals are known. */
  here: Set<string> | null;
  client: ApprovalsClient;
}

/** What waits for a decision in `project` (default: the page's); the component re-renders when it changes. */
export function useWaiting(project = pageProject()): Waiting {
  const client = useApprovals(project);
  return { list: waitingForYou(client.state), here: client.ready ? waitingHere(client.state) : null, client };
}
