// Identity on the server: the log's `identity` stream (accounts, sign-ins,
// tokens, projects, memberships) folded by the pure src/core/identity.ts on
// every node. A change made on one node reaches the others through the
// store's commit wake-up, and the fold's change list closes the streams it
// concerns there too (see access.ts beside this file).

import {
  IDENTITY_STREAM,
  applyIdentity,
  emptyIdentity,
  type IdentityChange,
  type IdentityState,
} from '../../core/identity.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import { StreamFollower } from '../follower.js';
import type { RequestKey } from '../keys.js';

/** A stored identity event as the handlers see it. */
type Stored = Record<string, unknown> & { type: string; ts: number };

export class IdentityService {
  state: IdentityState = emptyIdentity();
  private changeListeners = new Set<(c: IdentityChange) => void>();
  private follower: StreamFollower;

  constructor(private store: EventStore) {
    this.follower = new StreamFollower(store, IDENTITY_STREAM, { apply: (e) => this.applyEntry(e) });
  }

  get position(): number {
    return this.follower.position;
  }

  async start(): Promise<void> {
    this.follower.listen();
    await this.follower.catchUp();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  onChange(l: (c: IdentityChange) => void): () => void {
    this.changeListeners.add(l);
    return () => this.changeListeners.delete(l);
  }

  /** Folds one entry (the follower calls it in position order) and tells the change listeners. */
  private applyEntry(entry: LogEntry): void {
    let event: unknown = null;
    try {
      event = JSON.parse(entry.body);
    } catch {}
    const changes = applyIdentity(this.state, event);
    for (const c of changes) for (const l of this.changeListeners) l(c);
  }

  private folded(position: number): Promise<void> {
    return this.follower.folded(position);
  }

  /**
   * Appends events (stamped with the server's time) and waits until this node
   * has folded them. With a key already used, nothing is stored and the events
   * of the first request are returned, so the caller answers what it answered then.
   */
  async append(events: Record<string, unknown>[], key?: RequestKey | null): Promise<{ events: Stored[]; duplicate: boolean }> {
    const ts = Date.now();
    const bodies = events.map((e) => ({ ...e, ts }) as Stored);
    const toStore = bodies.map((b) => ({ type: b.type, body: JSON.stringify(b) }));
    const r = await (key ? key.append(this.store, IDENTITY_STREAM, toStore) : this.store.append(IDENTITY_STREAM, toStore));
    await this.folded(r.last);
    if (!r.duplicate) return { events: bodies, duplicate: false };
    const entries = await this.store.read(IDENTITY_STREAM, r.first - 1, r.last - r.first + 1);
    return { events: entries.map((e) => JSON.parse(e.body) as Stored), duplicate: true };
  }
}
