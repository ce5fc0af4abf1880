// The browser's side of the usage stream: the scope `usage:<project>` of
// the browser's one live connection (stream.ts), folded by the shared usage fold
// (src/core/usage.ts), the very code the server folds with. One client
// per tab, shared by everything that shows tokens and cost (the cost panel,
// agent cards, the rooms in the floor's list).
import { useEffect, useState } from 'preact/hooks';
import { applyUsage, emptyUsage, usageFromJSON, type UsageJSON, type UsageState } from '../../../src/core/usage.js';
import { LiveStream, advance, type Connection } from './stream.js';

export class UsageClient {
  state: UsageState = emptyUsage();
  epoch = '';
  position = 0;
  private listeners = new Set<() => void>();
  private scheduled = false;
  private readonly stream: LiveStream;

  constructor(project = 'default') {
    this.stream = new LiveStream({
      scope: `usage:${project}`,
      cursor: () => (this.epoch ? `${this.epoch}:${this.position}` : ''),
      frames: {
        snapshot: (d: { epoch: string; position: number; state: UsageJSON }) => {
          this.state = usageFromJSON(d.state);
          this.epoch = d.epoch;
          this.position = d.position;
          this.stream.setConnection('live');
          this.changed();
        },
        event: (d: { event: unknown }, key) => {
          if (!advance(this, key)) return;
          applyUsage(this.state, d.event);
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

let shared: UsageClient | null = null;

/** The tab's usage client; the component re-renders when the state changes. */
export function useUsage(): UsageClient {
  shared ??= new UsageClient();
  const client = shared;
  const [, tick] = useState(0);
  useEffect(() => client.subscribe(() => tick((n) => n + 1)), [client]);
  return client;
}
