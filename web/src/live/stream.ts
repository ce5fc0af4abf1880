// One live stream of the server (SSE), as every folded view of the app
// follows it: the floor, the fleet board, the approvals. What is the same for
// all of them lives here; what a frame means stays with each client's fold.
//
// Invariants:
// - one EventSource at a time; events of one that was replaced or closed are
//   ignored, so a late callback can never touch the state of a newer stream;
// - the browser's own reconnects (EventSource CONNECTING) resend
//   Last-Event-ID by themselves; when the stream is over (the server's own
//   `event: error`: a slow consumer, a shutdown; or the browser gave up, e.g.
//   a 5xx during a restart) a new EventSource is opened after a backoff
//   (0.5 s doubling to 5 s, or to what `maxRetryMs` says). A fresh
//   EventSource does not know the last id, so `url()` is asked again each
//   time and must carry it (`withLastEventId`);
// - frames are handed over with their data parsed, in arrival order; a frame
//   whose data is not JSON is dropped. Which frames fold (position order, at
//   most once) each client says with `advance`, when it applies them.

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

/** `path` resuming after `lastEventId` (none when it is ''). */
export function withLastEventId(path: string, lastEventId: string): string {
  return lastEventId ? `${path}${path.includes('?') ? '&' : '?'}lastEventId=${encodeURIComponent(lastEventId)}` : path;
}

export interface StreamOptions {
  /** The URL of the next EventSource, carrying the id to resume after. */
  url: () => string;
  /**
   * Handlers by frame name (`snapshot`, `event`, …): the parsed data and the
   * stream's last event id (the frame's own; for a frame without one, like a
   * lossy `live` frame, the one before; '' before any).
   */
  frames: Record<string, (data: any, id: string) => void>;
  /** The connection opened (first connect, or any reconnect). */
  onOpen?: () => void;
  /** The connection state changed. */
  onConnection?: (c: Connection) => void;
  /** A new EventSource is about to open after the last one ended (for counters). */
  onReopen?: () => void;
  /** Awaited before such a reopen: e.g. asking why the stream was refused (an EventSource hides the status). */
  beforeReopen?: () => Promise<unknown>;
  /** The longest backoff between reopens, asked at each failure (default 5 s). */
  maxRetryMs?: () => number;
}

/** How long a replaying stream must be quiet before it counts as caught up. */
const QUIET_MS = 400;

export class LiveStream {
  private state: Connection = 'connecting';
  private es: EventSource | null = null;
  private quietTimer = 0;
  private retryTimer = 0;
  private retryMs = 500;
  private closed = false;
  /** Counts starts and stops, so a reopen that awaited across a stop (and a new start) opens nothing. */
  private generation = 0;

  constructor(private readonly o: StreamOptions) {}

  start(): void {
    this.generation++;
    this.closed = false;
    this.open();
  }

  stop(): void {
    this.generation++;
    this.closed = true;
    this.es?.close();
    this.es = null;
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
   * `replaying` stream is caught up, and so is a `reconnecting` one that the
   * browser reopened by itself (its replay may have been empty).
   */
  armQuiet(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = window.setTimeout(() => {
      if (this.connection === 'replaying' || (this.connection === 'reconnecting' && this.es?.readyState === EventSource.OPEN)) this.setConnection('live');
    }, QUIET_MS);
  }

  private open(): void {
    const es = new EventSource(this.o.url());
    this.es = es;
    es.onopen = () => {
      this.retryMs = 500;
      this.o.onOpen?.();
    };
    for (const [name, handle] of Object.entries(this.o.frames)) {
      es.addEventListener(name, (e) => {
        if (es !== this.es) return;
        const m = e;
        let data: unknown;
        try {
          data = JSON.parse(m.data as string);
        } catch {
          return;
        }
        handle(data, m.lastEventId);
      });
    }
    es.addEventListener('error', (e) => {
      if (es !== this.es) return;
      // The server's own `event: error` carries data; the browser's
      // connection errors do not. Either way that stream is over.
      if (e instanceof MessageEvent) {
        this.reopenSoon();
        return;
      }
      this.setConnection('reconnecting');
      // CONNECTING: the browser retries by itself, resending Last-Event-ID.
      // CLOSED: it gave up; we open a new one.
      if (es.readyState === EventSource.CLOSED) this.reopenSoon();
    });
  }

  private reopenSoon(): void {
    this.es?.close();
    this.es = null;
    this.setConnection('reconnecting');
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    const generation = this.generation;
    this.retryTimer = window.setTimeout(async () => {
      this.o.onReopen?.();
      if (this.o.beforeReopen) await this.o.beforeReopen();
      if (!this.closed && generation === this.generation) this.open();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, this.o.maxRetryMs?.() ?? 5_000);
  }
}
