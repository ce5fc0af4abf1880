// Live streams (Server-Sent Events) for every app: snapshot, then live frames,
// with exact replay after a reconnect.
//
// Seams, and why they hold:
// - snapshot then live: the owner folds and publishes synchronously, and a new
//   subscriber gets the snapshot at the owner's current position in the same
//   turn it is registered, so the first live frame it sees is position + 1;
// - replay then live: a subscriber that must be replayed from the log is
//   registered first and queues live frames; once the replayed frames are
//   written, the queue is drained and every frame whose position is not above
//   the last one written is dropped. No gap, no duplicate;
// - each frame is serialized once; a turn's frames are concatenated once and
//   the same bytes are written to every live subscriber.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HttpError } from './http.js';

export interface Frame {
  position: number;
  bytes: Buffer;
}

export interface LiveSource {
  /** The position the owner has folded up to. */
  position(): number;
  /** A snapshot frame of the current state (at `position()`). */
  snapshot(reset: boolean): Frame;
  /**
   * Frames after `after` up to `upTo`, rebuilt from the log, or null when the
   * position is too old to rebuild (the subscriber then gets a reset snapshot).
   */
  replay(after: number, upTo: number): Promise<Frame[] | null>;
}

export interface LiveOptions {
  epoch: string;
  heartbeatMs: number;
  /** Unsent bytes a subscriber may have queued before it is disconnected. */
  maxBufferedBytes: number;
  /** Frames kept in memory for replay without touching the log. */
  ringSize: number;
  /**
   * Frames are written in flushes: one write per subscriber per flush, of all
   * the frames published since the last one. Flushes start at least this many
   * ms apart, and at least 3× the last flush's duration apart, so writing to
   * many subscribers never takes more than about a quarter of the process
   * while a few subscribers still see frames within milliseconds.
   */
  minFlushIntervalMs: number;
}

interface Subscriber {
  /** Frames go straight to the socket: the response is unframed (no chunked encoding, ends with the connection). */
  sock: Socket;
  /** Who holds this stream, when access is enforced (see `StreamHub`). */
  owner: StreamOwner | null;
  lastSent: number;
  /** Non-null while the subscriber is being replayed from the log. */
  queue: Frame[] | null;
}

/**
 * Who holds a live stream: enough for the access layer to decide, when a role
 * changes, a member is removed, a token is revoked or a person signs out,
 * whether the stream may stay open.
 */
export interface StreamOwner {
  /** The caller, for the per-caller stream limit. */
  caller: string;
  uid: string;
  project: string;
  token?: string;
  session?: string;
}

interface Held {
  owner: StreamOwner;
  close(reason: string): void;
}

/**
 * Every live stream held by an authenticated caller, across every channel of
 * every app. The access layer claims a request (`claimStream`) when it grants
 * it; `LiveChannel.subscribe` then registers the stream here, so a change of
 * access closes exactly the streams it concerns, whatever app serves them.
 */
export class StreamHub {
  private held = new Set<Held>();
  private perCaller = new Map<string, number>();

  constructor(private maxPerCaller: number) {}

  /** Registers a stream; throws 429 when its caller holds too many already. Returns the release function. */
  add(owner: StreamOwner, close: (reason: string) => void): () => void {
    const n = this.perCaller.get(owner.caller) ?? 0;
    if (n >= this.maxPerCaller) throw new HttpError(429, 'too_many', `too many open streams: at most ${this.maxPerCaller} per caller; close one first`);
    this.perCaller.set(owner.caller, n + 1);
    const h: Held = { owner, close };
    this.held.add(h);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held.delete(h);
      const left = (this.perCaller.get(owner.caller) ?? 1) - 1;
      if (left > 0) this.perCaller.set(owner.caller, left);
      else this.perCaller.delete(owner.caller);
    };
  }

  /** Closes every stream whose owner matches, with an `error` frame giving the reason. */
  closeWhere(pred: (o: StreamOwner) => boolean, reason: string): number {
    let n = 0;
    for (const h of [...this.held]) {
      if (!pred(h.owner)) continue;
      h.close(reason);
      n++;
    }
    return n;
  }

  get size(): number {
    return this.held.size;
  }
}

// The claim rides on the request, like the access layer's grant (src/server/access.ts).
const CLAIM = Symbol('roost.claim');
type Claimed = IncomingMessage & { [CLAIM]?: { hub: StreamHub; owner: StreamOwner } };

/** Marks a request as held by `owner`: if it becomes a live stream, `hub` tracks it. */
export function claimStream(req: IncomingMessage, hub: StreamHub, owner: StreamOwner): void {
  (req as Claimed)[CLAIM] = { hub, owner };
}

export function sseFrame(epoch: string, position: number, event: string, data: string): Buffer {
  return Buffer.from(`id: ${epoch}:${position}\nevent: ${event}\ndata: ${data}\n\n`);
}

const HEARTBEAT = Buffer.from(':\n\n');

export class LiveChannel {
  private subs = new Set<Subscriber>();
  private ring: (Frame | undefined)[];
  private ringStart = 0; // index of the oldest frame
  private ringLen = 0;
  private pending: Frame[] = [];
  private flushScheduled = false;
  private nextFlushAt = 0;
  private heartbeat: NodeJS.Timeout;
  /** Counters for /health and the bench. */
  readonly stats = { slowDisconnects: 0, replays: 0, resets: 0 };

  constructor(
    private source: LiveSource,
    private opts: LiveOptions,
  ) {
    this.ring = new Array(opts.ringSize);
    this.heartbeat = setInterval(() => {
      for (const s of this.subs) this.write(s, HEARTBEAT);
    }, opts.heartbeatMs);
    this.heartbeat.unref();
  }

  get subscriberCount(): number {
    return this.subs.size;
  }

  /** Publishes a frame; it is written to subscribers at the end of this turn. */
  publish(frame: Frame): void {
    if (this.opts.ringSize > 0) {
      const cap = this.opts.ringSize;
      if (this.ringLen < cap) {
        this.ring[(this.ringStart + this.ringLen) % cap] = frame;
        this.ringLen++;
      } else {
        this.ring[this.ringStart] = frame;
        this.ringStart = (this.ringStart + 1) % cap;
      }
    }
    this.pending.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      const wait = this.nextFlushAt - performance.now();
      if (wait > 0) setTimeout(this.flush, wait);
      else setImmediate(this.flush);
    }
  }

  /**
   * Writes a lossy frame (no `id:` line, so a reader's Last-Event-ID is
   * untouched) to every subscriber that is live now. Never kept, never
   * replayed: a subscriber being replayed or reconnecting misses it.
   */
  broadcast(bytes: Buffer): void {
    for (const s of this.subs) if (!s.queue) this.write(s, bytes);
  }

  /** Forgets the in-memory frames (after a reset of the log's meaning, or for tests). */
  clearRing(): void {
    this.ringLen = 0;
    this.ringStart = 0;
    this.ring.fill(undefined);
  }

  private flush = (): void => {
    this.flushScheduled = false;
    const started = performance.now();
    const frames = this.pending;
    this.pending = [];
    if (frames.length === 0 || this.subs.size === 0) return;
    this.writeFrames(frames);
    const took = performance.now() - started;
    this.nextFlushAt = started + Math.max(this.opts.minFlushIntervalMs, 3 * took);
  };

  private writeFrames(frames: Frame[]): void {
    const first = frames[0].position;
    const last = frames[frames.length - 1].position;
    const all = frames.length === 1 ? frames[0].bytes : Buffer.concat(frames.map((f) => f.bytes));
    for (const s of this.subs) {
      if (s.queue) {
        for (const f of frames) s.queue.push(f);
      } else if (s.lastSent < first) {
        this.write(s, all);
        s.lastSent = last;
      } else {
        for (const f of frames) this.send(s, f);
      }
    }
  }

  private send(s: Subscriber, f: Frame): void {
    if (f.position <= s.lastSent) return;
    this.write(s, f.bytes);
    s.lastSent = f.position;
  }

  private write(s: Subscriber, bytes: Buffer): void {
    if (s.sock.destroyed || s.sock.writableEnded) return;
    if (s.sock.writableLength > this.opts.maxBufferedBytes) {
      this.disconnect(s, `slow consumer: more than ${this.opts.maxBufferedBytes} bytes unsent; reconnect with Last-Event-ID to resume`);
      return;
    }
    s.sock.write(bytes);
  }

  private disconnect(s: Subscriber, reason: string): void {
    this.stats.slowDisconnects++;
    this.end(s, reason);
  }

  /** Ends one stream with an `error` frame giving the reason (slow consumer, access revoked). */
  private end(s: Subscriber, reason: string): void {
    this.subs.delete(s);
    const sock = s.sock;
    if (sock.destroyed || sock.writableEnded) return;
    sock.end(`event: error\ndata: ${JSON.stringify({ reason })}\n\n`);
    // A peer that reads nothing would keep the socket forever: cut it.
    setTimeout(() => sock.destroy(), 1000).unref();
  }

  /** Closes every stream (on shutdown, or when access is revoked). */
  closeAll(reason: string): void {
    for (const s of this.subs) s.sock.end(`event: error\ndata: ${JSON.stringify({ reason })}\n\n`);
    this.subs.clear();
  }

  stop(): void {
    clearInterval(this.heartbeat);
    this.closeAll('server is shutting down');
  }

  /** Parses `epoch:position`; null when absent. */
  static parseId(raw: string | null | undefined): { epoch: string; position: number } | 'invalid' | null {
    if (raw === null || raw === undefined || raw === '') return null;
    const m = /^([A-Za-z0-9_-]{1,64}):(\d{1,15})$/.exec(raw.trim());
    if (!m) return 'invalid';
    return { epoch: m[1], position: Number(m[2]) };
  }

  /** Serves one SSE subscriber; `lastEventId` from the header or the query. */
  subscribe(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const raw = (req.headers['last-event-id'] as string | undefined) ?? url.searchParams.get('lastEventId');
    const id = LiveChannel.parseId(raw);
    // A stream granted by the access layer is registered with its hub before
    // anything is written, so the per-caller limit can still answer 429.
    const claim = (req as Claimed)[CLAIM];
    let release: (() => void) | null = null;
    let s: Subscriber | null = null;
    if (claim) release = claim.hub.add(claim.owner, (reason) => s && this.end(s, reason));
    // No chunked framing: the stream ends with its connection, so frames can be
    // written to the socket as they are, the same bytes for every subscriber.
    res.useChunkedEncodingByDefault = false;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 1000\n\n');
    const head = this.source.position();
    const sock = req.socket;
    s = { sock, lastSent: head, queue: null, owner: claim?.owner ?? null };
    sock.setNoDelay(true);
    const sub = s;
    res.on('close', () => {
      this.subs.delete(sub);
      release?.();
    });
    this.start(sub, id, head);
  }

  private start(s: Subscriber, id: ReturnType<typeof LiveChannel.parseId>, head: number): void {
    const sock = s.sock;

    if (id === null) {
      this.startWithSnapshot(s, false);
      return;
    }
    if (id === 'invalid' || id.epoch !== this.opts.epoch || id.position > head) {
      this.startWithSnapshot(s, true);
      return;
    }
    this.stats.replays++;
    const ringFirst = this.ringLen ? this.ring[this.ringStart]!.position : head + 1;
    if (id.position >= ringFirst - 1) {
      // Replay from memory, synchronously: nothing can be published in between.
      s.lastSent = id.position;
      const cap = this.opts.ringSize;
      const chunks: Buffer[] = [];
      for (let i = 0; i < this.ringLen; i++) {
        const f = this.ring[(this.ringStart + i) % cap]!;
        if (f.position > id.position) chunks.push(f.bytes);
      }
      if (chunks.length) sock.write(Buffer.concat(chunks));
      s.lastSent = head;
      // Frames of this turn not yet flushed are in the ring already; skip them in flush.
      this.subs.add(s);
      return;
    }
    // Replay from the log; queue live frames meanwhile.
    s.lastSent = id.position;
    s.queue = [];
    this.subs.add(s);
    this.source.replay(id.position, head).then(
      (frames) => {
        if (sock.destroyed || !this.subs.has(s)) return;
        const queued = s.queue!;
        s.queue = null;
        if (frames === null) {
          this.subs.delete(s);
          this.startWithSnapshot(s, true);
          return;
        }
        for (const f of frames) this.send(s, f);
        for (const f of queued) this.send(s, f);
      },
      (err) => {
        console.error('roost: replay failed', err);
        this.subs.delete(s);
        sock.destroy();
      },
    );
  }

  private startWithSnapshot(s: Subscriber, reset: boolean): void {
    if (reset) this.stats.resets++;
    const snap = this.source.snapshot(reset);
    s.sock.write(snap.bytes);
    s.lastSent = snap.position;
    this.subs.add(s);
  }
}
