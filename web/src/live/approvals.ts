// The browser's side of the approvals stream: the scope
// `approvals:<project>` of the browser's one live connection (stream.ts), folded by the shared approvals fold
// (src/core/approvals.ts), the very code the server folds with. Nothing here
// interprets an event itself.
//
// Invariants:
// - the state is built only by `approvalsFromJSON` (snapshots) and
//   `applyApproval` (events), in position order, at most once per position;
// - a decision a person makes here is a POST whose answer only says whether it
//   was accepted; what it changed arrives on the stream like everyone's.
// - one client per tab, shared by every component that shows approvals
//   (the inbox, the agent card, the nav badge).

import { useEffect, useState } from 'preact/hooks';
import { applyApproval, approvalsFromJSON, emptyApprovals, type ApprovalsJSON, type ApprovalsState } from '../../../src/core/approvals.js';
import { LiveStream, advance } from './stream.js';

/** The inbox's connection: live from the first frame of a stream on; it never says `replaying`. */
export type Connection = 'connecting' | 'live' | 'reconnecting';

export class ApprovalsClient {
  state: ApprovalsState = emptyApprovals();
  epoch = '';
  position = 0;
  private listeners = new Set<() => void>();
  private scheduled = false;
  private readonly stream: LiveStream;

  constructor(project = 'default') {
    this.stream = new LiveStream({
      scope: `approvals:${project}`,
      cursor: () => (this.epoch ? `${this.epoch}:${this.position}` : ''),
      frames: {
        snapshot: (d: { epoch: string; position: number; state: ApprovalsJSON }) => {
          this.state = approvalsFromJSON(d.state);
          this.epoch = d.epoch;
          this.position = d.position;
          this.stream.setConnection('live');
          this.changed();
        },
        event: (d: { event: unknown }, key) => {
          const id = advance(this, key);
          if (!id) return;
          applyApproval(this.state, d.event, id.position);
          this.stream.setConnection('live');
          this.changed();
        },
      },
      onConnection: () => this.changed(),
    });
  }

  get connection(): Connection {
    return this.stream.connection as Connection; // setConnection('replaying') is never called here
  }

  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    if (this.listeners.size === 1) this.stream.start();
    return () => {
      this.listeners.delete(f);
      if (this.listeners.size === 0) this.stream.stop();
    };
  }

  /** Listeners hear about changes at most once per animation frame. */
  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const f of this.listeners) f();
    });
  }
}

let shared: ApprovalsClient | null = null;

/** The tab's approvals client; the component re-renders when the state changes. */
export function useApprovals(): ApprovalsClient {
  shared ??= new ApprovalsClient();
  const client = shared;
  const [, tick] = useState(0);
  useEffect(() => client.subscribe(() => tick((n) => n + 1)), [client]);
  return client;
}
