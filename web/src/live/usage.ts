// The browser's side of the usage roll-up: the scope `usage:<project>` of the
// browser's one live connection, folded by the shared usage fold
// (src/core/usage.ts) through FoldedScope (folded.ts). One client per tab
// and project, shared by everything that shows tokens and cost (the cost panel, agent
// cards, the rooms in the floor's list).

import { applyUsage, emptyUsage, usageFromJSON, type UsageJSON, type UsageState } from '../../../src/core/usage.js';
import { FoldedScope, useFolded } from './folded.js';

export type UsageClient = FoldedScope<UsageState, UsageJSON>;

export function usageClient(project = 'default'): UsageClient {
  return new FoldedScope(`usage:${project}`, { empty: emptyUsage, fromJSON: usageFromJSON, apply: (s, e) => applyUsage(s, e) });
}

const clients = new Map<string, UsageClient>();

/** The tab's usage client of `project`; the component re-renders when the state changes. */
export function useUsage(project = 'default'): UsageClient {
  let c = clients.get(project);
  if (!c) clients.set(project, (c = usageClient(project)));
  return useFolded(c);
}
