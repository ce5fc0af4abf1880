// The browser's side of the floor stream: the scope `floor:<project>` of the
// browser's one live connection (stream.ts, hub.ts: reconnects, backoff,
// connection state), the shared fold, and
// a queue drained once per animation frame.
//
// Invariants:
// - the state is only ever built by `floorFromJSON` (snapshots) and
//   `applyEvent` (event and removed frames), the very functions the server
//   folds with; nothing here interprets an event on its own;
// - frames are applied in position order, at most once: a frame whose
//   position is not above the last applied one (same epoch) is counted as a
//   duplicate and dropped, so a replay that overlaps cannot fold twice;
// - incoming frames are only queued by the network callbacks; the fold and
//   the drawing happen in `drain`, called from requestAnimationFrame, so 200
//   frames arriving in one frame cost one redraw, not 200.

import { applyEvent, emptyFloor, floorFromJSON, type Effect, type FloorEvent, type FloorJSON, type FloorState } from '../../../src/core/floor.js';
import { LiveStream, advance, type Connection } from './stream.js';

export type { Connection };

type Queued =
  | { kind: 'snapshot'; id: string; data: { epoch: string; position: number; reset: boolean; state: FloorJSON } }
  | { kind: 'event'; id: string; data: { event: FloorEvent } }
  | { kind: 'removed'; id: string; data: { agents: string[]; ts: number | null } };

/** What one drain did, for the view: effects to animate and whether the state was replaced. */
export interface Drained {
  effects: Effect[];
  /** Events folded in this drain (the bench measures POST → drawn with them). */
  events: FloorEvent[];
  replaced: boolean;
  changed: boolean;
}

export interface FloorStats {
  snapshots: number;
  resets: number;
  frames: number;
  duplicates: number;
  reconnects: number;
}

/** An event older than this when it arrives is history (a replay): folded, not animated. */
const ANIMATE_WITHIN_MS = 5_000;

export class FloorClient {
  state: FloorState = emptyFloor();
  epoch = '';
  position = 0;
  readonly stats: FloorStats = { snapshots: 0, resets: 0, frames: 0, duplicates: 0, reconnects: 0 };
  /** Called (at most once per animation frame) when the connection state changes. */
  onConnection: (c: Connection) => void = () => {};

  private queue: Queued[] = [];
  private hadSnapshot = false;
  /** The last frame received (queued frames are applied before any frame of a new stream). */
  private lastReceived = '';
  private readonly stream: LiveStream;

  constructor(readonly project = 'default') {
    const queue = (kind: Queued['kind']) => (data: unknown, id: string) => {
      this.queue.push({ kind, id, data } as Queued);
      if (id) this.lastReceived = id;
      if (this.connection === 'replaying') this.stream.armQuiet();
    };
    this.stream = new LiveStream({
      scope: `floor:${project}`,
      cursor: () => this.lastReceived || this.lastEventId,
      frames: { snapshot: queue('snapshot'), event: queue('event'), removed: queue('removed') },
      onOpen: () => {
        if (this.hadSnapshot) this.stream.setConnection('replaying');
        this.stream.armQuiet();
      },
      onConnection: (c) => this.onConnection(c),
      onReopen: () => this.stats.reconnects++,
    });
  }

  get connection(): Connection {
    return this.stream.connection;
  }

  /** The last frame applied. */
  get lastEventId(): string {
    return this.epoch ? `${this.epoch}:${this.position}` : '';
  }

  start(): void {
    this.stream.start();
  }

  stop(): void {
    this.stream.stop();
  }

  /** Folds everything queued since the last call. Call once per animation frame. */
  drain(now = Date.now()): Drained {
    const out: Drained = { effects: [], events: [], replaced: false, changed: false };
    if (this.queue.length === 0) return out;
    const q = this.queue;
    this.queue = [];
    for (const f of q) {
      if (f.kind === 'snapshot') {
        const d = f.data;
        this.state = floorFromJSON(d.state);
        this.epoch = d.epoch;
        this.position = d.position;
        this.hadSnapshot = true;
        this.stats.snapshots++;
        if (d.reset) this.stats.resets++;
        out.replaced = true;
        out.changed = true;
        out.effects.length = 0;
        this.stream.setConnection('live');
        continue;
      }
      if (!advance(this, f.id, this.stats)) continue;
      out.changed = true;
      if (f.kind === 'event') {
        const ev = f.data.event;
        const fx = applyEvent(this.state, ev);
        out.events.push(ev);
        const ts = typeof ev.ts === 'number' ? ev.ts : now;
        if (now - ts < ANIMATE_WITHIN_MS) for (const x of fx) out.effects.push(x);
        else for (const x of fx) if (x.kind === 'reset') out.effects.push(x);
      } else {
        const fx = applyEvent(this.state, { type: 'sweep', ts: f.data.ts ?? now });
        for (const x of fx) out.effects.push(x);
      }
    }
    if (this.connection === 'replaying') {
      const last = out.events[out.events.length - 1];
      if (last && typeof last.ts === 'number' && now - last.ts < 2_000) this.stream.setConnection('live');
    }
    return out;
  }
}
