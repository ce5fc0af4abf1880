// The browser's side of the floor stream: one EventSource, the shared fold,
// and a queue drained once per animation frame.
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

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'replaying';

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

function parseId(id: string): { epoch: string; position: number } | null {
  const m = /^(.+):(\d+)$/.exec(id);
  return m ? { epoch: m[1], position: Number(m[2]) } : null;
}

/** An event older than this when it arrives is history (a replay): folded, not animated. */
const ANIMATE_WITHIN_MS = 5_000;

export class FloorClient {
  state: FloorState = emptyFloor();
  connection: Connection = 'connecting';
  epoch = '';
  position = 0;
  readonly stats: FloorStats = { snapshots: 0, resets: 0, frames: 0, duplicates: 0, reconnects: 0 };
  /** Called (at most once per animation frame) when the connection state changes. */
  onConnection: (c: Connection) => void = () => {};

  private es: EventSource | null = null;
  private queue: Queued[] = [];
  private hadSnapshot = false;
  private quietTimer = 0;
  private retryTimer = 0;
  private retryMs = 500;
  private closed = false;

  constructor(private base = '') {}

  /** The last frame applied. */
  get lastEventId(): string {
    return this.epoch ? `${this.epoch}:${this.position}` : '';
  }

  /** The last frame received (queued frames are applied before any frame of a new stream). */
  private lastReceived = '';

  start(): void {
    this.closed = false;
    this.open();
  }

  stop(): void {
    this.closed = true;
    this.es?.close();
    this.es = null;
    clearTimeout(this.retryTimer);
    clearTimeout(this.quietTimer);
  }

  private setConnection(c: Connection): void {
    if (this.connection === c) return;
    this.connection = c;
    this.onConnection(c);
  }

  private open(): void {
    const last = this.lastReceived || this.lastEventId;
    // A fresh EventSource does not know our last id; the query carries it.
    const url = `${this.base}/stream${last ? `?lastEventId=${encodeURIComponent(last)}` : ''}`;
    const es = new EventSource(url);
    this.es = es;
    es.onopen = () => {
      this.retryMs = 500;
      if (this.hadSnapshot) this.setConnection('replaying');
      this.armQuiet();
    };
    es.addEventListener('snapshot', (e) => this.push('snapshot', e as MessageEvent));
    es.addEventListener('event', (e) => this.push('event', e as MessageEvent));
    es.addEventListener('removed', (e) => this.push('removed', e as MessageEvent));
    es.addEventListener('error', (e) => {
      if (es !== this.es) return;
      // The server's own `event: error` (slow consumer, shutdown) carries data;
      // the browser's connection errors do not. Either way the stream is over.
      if (e instanceof MessageEvent) {
        this.reopenSoon();
        return;
      }
      this.setConnection('reconnecting');
      // CONNECTING: the browser retries by itself, resending Last-Event-ID.
      // CLOSED: it gave up (e.g. a 5xx during a restart); we open a new one.
      if (es.readyState === EventSource.CLOSED) this.reopenSoon();
    });
  }

  private reopenSoon(): void {
    this.es?.close();
    this.es = null;
    this.setConnection('reconnecting');
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => {
      this.stats.reconnects++;
      this.open();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 5_000);
  }

  /** 'replaying' ends once the stream has been quiet briefly or caught up with now. */
  private armQuiet(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = window.setTimeout(() => {
      if (this.connection === 'replaying' || (this.connection === 'reconnecting' && this.es?.readyState === EventSource.OPEN)) this.setConnection('live');
    }, 400);
  }

  private push(kind: Queued['kind'], e: MessageEvent): void {
    let data: unknown;
    try {
      data = JSON.parse(e.data as string);
    } catch {
      return;
    }
    this.queue.push({ kind, id: e.lastEventId, data } as Queued);
    if (e.lastEventId) this.lastReceived = e.lastEventId;
    if (this.connection === 'replaying') this.armQuiet();
  }

  /** Folds everything queued since the last call. Call once per animation frame. */
  drain(now = Date.now()): Drained {
    const out: Drained = { effects: [], events: [], replaced: false, changed: false };
    if (this.queue.length === 0) return out;
    const q = this.queue;
    this.queue = [];
    for (const f of q) {
      const id = parseId(f.id);
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
        this.setConnection('live');
        continue;
      }
      if (!id) continue;
      if (id.epoch === this.epoch && id.position <= this.position) {
        this.stats.duplicates++;
        continue;
      }
      this.epoch = id.epoch;
      this.position = id.position;
      this.stats.frames++;
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
      if (last && typeof last.ts === 'number' && now - last.ts < 2_000) this.setConnection('live');
    }
    return out;
  }
}
