// The browser's side of the usage roll-up: the scope `usage:<project>` of the
// browser's one live connection, folded by the shared usage fold
// (src/core/usage.ts) through FoldedScope (folded.ts). One client per tab,
// shared by everything that shows tokens and cost (the cost panel, agent
// cards, the rooms in the floor's list).

import { applyUsage, emptyUsage, usageFromJSON, type UsageJSON, type UsageState } from '../../../src/core/usage.js';
import { FoldedScope, useFolded } from './folded.js';

export type UsageClient = FoldedScope<UsageState, UsageJSON>;

export function usageClient(project = 'default'): UsageClient {
  return new FoldedScope(`usage:${project}`, { empty: emptyUsage, fromJSON: usageFromJSON, apply: (s, e) => applyUsage(s, e) });
}

let shared: UsageClient | null = null;

/** The tab's usage client; the component re-renders when the state changes. */
export function useUsage(): UsageClient {
  return useFolded((shared ??= usageClient()));
}
