// One scope of the live connection (hub.ts), as every folded view of the
// app follows it: the floor, the fleet board, the approvals, the usage. What
// is the same for all of them lives here; what a frame means stays with each
// client's fold.
//
// Invariants:
// - a client subscribes to one scope of the tab's hub; the hub carries it on
//   the browser's one connection (opened by whichever tab leads) and hands
//   its frames over with their data parsed, in arrival order, with the
//   frame's position as the id (for a frame without one, like a lossy `live`
//   frame, the id of the one before; '' before any). Which frames fold
//   (position order, at most once) each client says with `advance`, when it
//   applies them: a reopened connection may resend what a tab has seen;
// - the hub asks `cursor()` whenever it (re)opens: the client's last frame,
//   so a reopen resumes exactly; '' asks for a snapshot;
// - when the connection is lost the client hears `reconnecting`, and
//   `onOpen` once it is back; a scope the server closes (403, 404, ...) is
//   asked for again after a backoff (0.5 s doubling to 5 s, or to what
//   `maxRetryMs` says).

import type { ClosedData } from '../../../src/core/live-wire.js';
import { liveHub, type Hub, type HubState, type HubSub } from './hub.js';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'replaying';

export interface FrameId {
  epoch: string;
  position: number;
}

function parseId(id: string): FrameId | null {
  const m = /^(.+):(\d+)$/.exec(id);
  return m ? { epoch: m[1], position: Number(m[2]) } : null;
}

/**
 * Position order, at most once. `at` is the last frame a client applied; a
 * frame at or below it in the same epoch is a duplicate (an overlapping
 * replay) and must not fold. Returns the frame's id and moves `at` to it when
 * the frame is to be applied; null when it is a duplicate or has no id.
 * `stats` (optional) counts both.
 */
export function advance(at: FrameId, frameId: string, stats?: { frames: number; duplicates: number }): FrameId | null {
  const id = parseId(frameId);
  if (!id) return null;
  if (id.epoch === at.epoch && id.position <= at.position) {
    if (stats) stats.duplicates++;
    return null;
  }
  at.epoch = id.epoch;
  at.position = id.position;
  if (stats) stats.frames++;
  return id;
}

export interface StreamOptions {
  /** The scope (src/core/live-wire.ts), e.g. `floor:default`. */
  scope: string;
  /** The last frame the client holds (`<epoch>:<position>`), or '' for a snapshot. */
  cursor: () => string;
  /**
   * Handlers by frame name (`snapshot`, `event`, …): the parsed data and the
   * frame's id (its position; for a frame without one, the one before).
   */
  frames: Record<string, (data: any, id: string) => void>;
  /** The connection opened (first connect, or any reconnect). */
  onOpen?: () => void;
  /** The connection state changed. */
  onConnection?: (c: Connection) => void;
  /** The connection was lost and will be reopened, or the scope is asked for again (for counters). */
  onReopen?: () => void;
  /** Run when the scope is refused or the connection lost: e.g. asking the server why (an EventSource hides the status). */
  beforeReopen?: () => Promise<unknown>;
  /** The server closed the scope (its reason and status). */
  onClosed?: (d: ClosedData) => void;
  /** The longest backoff before a closed scope is asked for again, asked at each closing (default 5 s). */
  maxRetryMs?: () => number;
}

/** How long a replaying stream must be quiet before it counts as caught up. */
const QUIET_MS = 400;

export class LiveStream {
  private state: Connection = 'connecting';
  private quietTimer = 0;
  private retryTimer = 0;
  private retryMs = 500;
  private unsubscribe: (() => void) | null = null;
  private lastId = '';
  private stopped = true;
  private readonly sub: HubSub;

  constructor(
    private readonly o: StreamOptions,
    private readonly hub: () => Hub = liveHub,
  ) {
    this.sub = {
      scope: o.scope,
      cursor: () => o.cursor(),
      frame: (name, data, p) => {
        if (p) this.lastId = p;
        const handle = o.frames[name];
        if (handle) handle(data, p ?? this.lastId);
      },
      closed: (d) => this.onClosed(d),
      state: (s) => this.onHub(s),
    };
  }

  start(): void {
    this.stopped = false;
    this.unsubscribe?.();
    const hub = this.hub();
    this.unsubscribe = hub.subscribe(this.sub);
    if (hub.state === 'live') this.opened();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    clearTimeout(this.retryTimer);
    clearTimeout(this.quietTimer);
  }

  get connection(): Connection {
    return this.state;
  }

  /** The client says what it knows better: `live` on a snapshot, `replaying` while catching up. */
  setConnection(c: Connection): void {
    if (this.state === c) return;
    this.state = c;
    this.o.onConnection?.(c);
  }

  /**
   * (Re)starts the quiet timer: once nothing arrived for a moment, a
   * `replaying` stream is caught up, and so is a `reconnecting` one whose
   * connection is back (its replay may have been empty).
   */
  armQuiet(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = window.setTimeout(() => {
      if (this.connection === 'replaying' || (this.connection === 'reconnecting' && this.hub().state === 'live')) this.setConnection('live');
    }, QUIET_MS);
  }

  private opened(): void {
    this.retryMs = 500;
    if (this.o.onOpen) this.o.onOpen();
    else this.armQuiet();
  }

  private onHub(s: HubState): void {
    if (!this.unsubscribe) return;
    if (s === 'live') {
      this.opened();
      return;
    }
    if (s === 'reconnecting' && this.state !== 'reconnecting') {
      this.setConnection('reconnecting');
      this.o.onReopen?.();
      void this.o.beforeReopen?.();
    }
  }

  private onClosed(d: ClosedData): void {
    if (!this.unsubscribe) return;
    this.unsubscribe();
    this.unsubscribe = null;
    this.setConnection('reconnecting');
    this.o.onClosed?.(d);
    clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(async () => {
      this.o.onReopen?.();
      if (this.o.beforeReopen) await this.o.beforeReopen();
      if (this.unsubscribe || this.stopped) return;
      this.start();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, this.o.maxRetryMs?.() ?? 5_000);
  }
}
