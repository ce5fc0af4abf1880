// The flock view's live client: the scope `flock:<project>` of the browser's
// one live connection, folded by the shared flock fold (src/core/flock.ts)
// through FoldedScope (folded.ts): a snapshot is `flockFromJSON`, each event
// `applyFlock` at its position. The whole-flock scope carries every event
// (trust included), so the view reads lists (`listStatus`) and the ledger
// (`flockLedger`) off this fold rather than folding each list's contract
// stream, which cannot see trust (docs/flock.md).

import { applyFlock, emptyFlock, flockFromJSON, type FlockState } from '../../../src/core/flock.js';
import { FoldedScope, useFolded } from './folded.js';

export type FlockClient = FoldedScope<FlockState>;

export function flockClient(project = 'default'): FlockClient {
  return new FoldedScope(`flock:${project}`, { empty: emptyFlock, fromJSON: flockFromJSON, apply: (s, e, p) => void applyFlock(s, e, p) });
}

const clients = new Map<string, FlockClient>();

/** The tab's flock client of `project`; the component re-renders when the fold changes. */
export function useFlock(project = 'default'): FlockClient {
  let c = clients.get(project);
  if (!c) clients.set(project, (c = flockClient(project)));
  return useFolded(c);
}
