// A scope of the browser's one live connection folded by one of the shared
// folds (src/core), the very code the server folds with: the approvals and
// usage clients are this with their fold plugged in. Nothing here interprets
// an event itself.
//
// Invariants:
// - the state is built only by the fold's `fromJSON` (snapshots) and `apply`
//   (events), in position order, at most once per position;
// - one client per tab and scope, shared by every component that shows it;
//   the scope is read while at least one component listens;
// - listeners hear about changes at most once per animation frame.

import { useEffect, useState } from 'preact/hooks';
import { LiveStream, advance, type Connection } from './stream.js';

/** A shared fold as a scope client needs it. */
export interface ScopeFold<S, J> {
  empty(): S;
  /** The state of a snapshot frame's `state`. */
  fromJSON(j: J): S;
  /** Folds one event at its position, in place. */
  apply(state: S, event: unknown, position: number): void;
}

export class FoldedScope<S, J = unknown> {
  state: S;
  epoch = '';
  position = 0;
  private listeners = new Set<() => void>();
  private scheduled = false;
  private readonly stream: LiveStream;

  constructor(scope: string, fold: ScopeFold<S, J>) {
    this.state = fold.empty();
    this.stream = new LiveStream({
      scope,
      cursor: () => (this.epoch ? `${this.epoch}:${this.position}` : ''),
      frames: {
        snapshot: (d: { epoch: string; position: number; state: J }) => {
          this.state = fold.fromJSON(d.state);
          this.epoch = d.epoch;
          this.position = d.position;
          this.stream.setConnection('live');
          this.changed();
        },
        event: (d: { event: unknown }, key) => {
          const id = advance(this, key);
          if (!id) return;
          fold.apply(this.state, d.event, id.position);
          this.stream.setConnection('live');
          this.changed();
        },
      },
      onConnection: () => this.changed(),
    });
  }

  get connection(): Connection {
    return this.stream.connection;
  }

  /** Whether a snapshot has arrived (before it, the state is empty, not known to be empty). */
  get ready(): boolean {
    return this.epoch !== '';
  }

  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    if (this.listeners.size === 1) this.stream.start();
    return () => {
      this.listeners.delete(f);
      if (this.listeners.size === 0) this.stream.stop();
    };
  }

  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const f of this.listeners) f();
    });
  }
}

/** `client`, listened to by the calling component: it re-renders when the state changes. */
export function useFolded<C extends FoldedScope<any, any>>(client: C): C {
  const [, tick] = useState(0);
  useEffect(() => client.subscribe(() => tick((n) => n + 1)), [client]);
  return client;
}
