// The PostgreSQL store's lossy broadcast between nodes (postgres.ts's file
// comment, "Broadcast"): what this node sends, one NOTIFY statement in flight
// at a time, and what it hears from the others on its LISTEN connection.

import type pg from 'pg';
import type { BroadcastListener } from './types.js';

/** Broadcasts queued while one NOTIFY is in flight, at most (beyond it the oldest are dropped: the channel is lossy). */
const BROADCAST_QUEUE_MAX = 1000;

export class PgBroadcast {
  private seq = 0;
  private outbox: string[] = [];
  private sending: Promise<void> | null = null;
  private listeners = new Set<BroadcastListener>();

  constructor(
    private pool: pg.Pool,
    private channel: string,
    /** This instance, as other nodes' listeners know it (`from`). */
    private node: string,
    private stats: { broadcastsDropped: number },
  ) {}

  /** Queues a message (checked by the store); sent in order, what queues meanwhile in one statement. */
  send(topic: string, payload: string): void {
    if (this.outbox.length >= BROADCAST_QUEUE_MAX) {
      this.outbox.shift();
      this.stats.broadcastsDropped++;
    }
    this.outbox.push(`${this.node}:${++this.seq} ${topic}\n${payload}`);
    if (this.sending) return;
    this.sending = (async () => {
      while (this.outbox.length) {
        const batch = this.outbox;
        this.outbox = [];
        await this.pool
          .query('SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS u(p, o) ORDER BY o', [this.channel, batch])
          .catch((e) => {
            this.stats.broadcastsDropped += batch.length;
            console.error('roost: broadcast failed (lossy; senders repeat what matters):', (e as Error).message);
          });
      }
      this.sending = null;
    })();
  }

  /** Waits until what was sent so far has left. */
  async settled(): Promise<void> {
    while (this.sending) await this.sending;
  }

  on(listener: BroadcastListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A notification on the broadcast channel: another node's message to the listeners, ours dropped. */
  heard(raw: string): void {
    const sp = raw.indexOf(' ');
    const nl = raw.indexOf('\n', sp + 1);
    if (sp <= 0 || nl < 0) return;
    const colon = raw.lastIndexOf(':', sp);
    if (colon <= 0) return;
    const from = raw.slice(0, colon);
    if (from === this.node) return;
    const topic = raw.slice(sp + 1, nl);
    const payload = raw.slice(nl + 1);
    for (const l of this.listeners) {
      try {
        l(topic, payload, from);
      } catch (e) {
        console.error('roost: broadcast listener failed', e);
      }
    }
  }
}
