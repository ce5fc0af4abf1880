// A durable scope's channel: frames with positions, a ring for replay, flushes
// (the log streams of every app: the floor, approvals, a fleet board, Work,
// a flock list or nest).
//
// Seams, and why they hold:
// - snapshot then live: the owner folds and publishes synchronously, and a new
//   subscription gets the snapshot at the owner's current position in the
//   same turn it is registered, so the first live frame it sees is position + 1;
// - replay then live: a subscription that is replayed (from the ring or the
//   log) or is sent a large snapshot is registered first and queues its live
//   frames; the catch-up is written at the reader's pace (at most `paceBytes`
//   unread, then it awaits 'drain'), then the queue is drained the same way,
//   and every frame whose position is not above the last one written is
//   dropped. No gap, no duplicate, and a reader that is merely slow is never
//   cut for a backlog the server chose to send; a queue that grows past
//   `maxBufferedBytes` meanwhile is dropped for a fresh snapshot (reset);
// - a flush's frames are concatenated once per form and the same bytes are
//   written to every subscription of that form (frame.ts says why).

import { Channel, type ConnectionHost, type Subscription } from './connection.js';
import { Frame, type Ev, type Form } from './frame.js';

/** A catch-up is written in pieces of about this size. */
const CHUNK = 64 * 1024;

export interface LiveSource {
  /** The position the owner has folded up to. */
  position(): number;
  /** A snapshot frame of the current state (at `position()`). */
  snapshot(reset: boolean): Frame;
  /**
   * A scope whose new reader gets its history rather than a state (a list's
   * events, a nest's records): the frames up to `upTo`, each at its own
   * position, so every message carries its own id. Written at the reader's
   * pace, like a replay; used instead of `snapshot`.
   */
  history?(upTo: number): Frame[];
  /**
   * Frames after `after` up to `upTo`, rebuilt from the log, or null when the
   * position is too old to rebuild (the subscriber then gets a reset snapshot).
   */
  replay(after: number, upTo: number): Promise<Frame[] | null>;
  /** Reads the log up to its head (a cursor another node acknowledged a moment ago is ahead of this one). */
  catchUp?(): Promise<void>;
}

export interface ChannelOptions {
  /** Frames kept in memory for replay without touching the log. */
  ringSize: number;
  /**
   * Frames are written in flushes: one write per subscription per flush, of
   * all the frames published since the last one. Flushes start at least this
   * many ms apart, and at least 3× the last flush's duration apart, so writing
   * to many subscribers never takes more than about a quarter of the process
   * while a few subscribers still see frames within milliseconds.
   */
  minFlushIntervalMs: number;
}

/** A durable scope's channel: frames with positions, a ring for replay, flushes. */
export class LiveChannel extends Channel {
  private ring: (Frame | undefined)[];
  private ringStart = 0; // index of the oldest frame
  private ringLen = 0;
  private pending: Frame[] = [];
  private flushScheduled = false;
  private nextFlushAt = 0;
  private stopped = false;

  constructor(
    scope: string,
    epoch: string,
    private source: LiveSource,
    private opts: ChannelOptions & { live: ConnectionHost },
  ) {
    super(scope, epoch);
    this.ring = new Array(opts.ringSize);
  }

  /** A frame of this channel at `position` (`mux`: its events in the mux form, when they differ). */
  frame(position: number, evs: readonly Ev[] | (() => readonly Ev[]), mux?: readonly Ev[]): Frame {
    return new Frame(position, this.head, evs, mux ?? null);
  }

  /** Publishes a frame; it is written to subscriptions at the next flush. */
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
    if (this.subs.size === 0) return;
    this.pending.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      const wait = this.nextFlushAt - performance.now();
      if (wait > 0) setTimeout(this.flush, wait);
      else setImmediate(this.flush);
    }
  }

  /** Forgets the in-memory frames (after a reset of the log's meaning, or for tests). */
  clearRing(): void {
    this.ringLen = 0;
    this.ringStart = 0;
    this.ring.fill(undefined);
  }

  override stop(): void {
    this.stopped = true;
    super.stop();
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
    // One concatenation per form, made only if a subscription of that form is live.
    let single: Buffer | null = null;
    let mux: Buffer | null = null;
    const all = (form: Form) => (frames.length === 1 ? frames[0].bytes(form) : Buffer.concat(frames.map((f) => f.bytes(form))));
    const max = this.opts.live.opts.maxBufferedBytes;
    for (const s of this.subs) {
      if (s.queue) {
        // Catching up: hold the frames; a queue larger than the buffer is dropped for a reset snapshot.
        for (const f of frames) {
          s.queue.push(f);
          s.queuedBytes += f.bytes(s.conn.form).length;
        }
        if (s.queuedBytes > max) {
          s.overflow = true;
          s.queue.length = 0;
          s.queuedBytes = 0;
        }
      } else if (s.lastSent < first) {
        s.conn.write(s.conn.form === 'single' ? (single ??= all('single')) : (mux ??= all('mux')));
        s.lastSent = last;
      } else {
        for (const f of frames) {
          if (f.position <= s.lastSent) continue;
          s.conn.write(f.bytes(s.conn.form));
          s.lastSent = f.position;
        }
      }
    }
  }

  /** Parses `epoch:position` or `epoch:position.k` (the k+1 first messages of that frame); null when absent. */
  static parseId(raw: string | null | undefined): { epoch: string; position: number; part?: number } | 'invalid' | null {
    if (raw === null || raw === undefined || raw === '') return null;
    const m = /^([A-Za-z0-9_-]{1,64}):(\d{1,15})(?:\.(\d{1,6}))?$/.exec(raw.trim());
    if (!m) return 'invalid';
    return m[3] === undefined ? { epoch: m[1], position: Number(m[2]) } : { epoch: m[1], position: Number(m[2]), part: Number(m[3]) };
  }

  /** A frame's bytes for `sub`: without the messages it received already when it resumed from inside this frame. */
  private bytesFor(sub: Subscription, f: Frame): Buffer {
    const b = f.bytes(sub.conn.form);
    const p = sub.partial;
    if (!p) return b;
    sub.partial = null;
    if (f.position !== p.position) return b;
    // Messages end with a blank line, and a message's data is one line of JSON: skip `count` of them.
    let at = 0;
    for (let i = 0; i < p.count && at >= 0; i++) {
      const end = b.indexOf('\n\n', at);
      at = end < 0 ? -1 : end + 2;
    }
    return at < 0 ? Buffer.alloc(0) : b.subarray(at);
  }

  async start(sub: Subscription, cursor: string | null): Promise<void> {
    const id = LiveChannel.parseId(cursor);
    // With several nodes, a client may resume here with an id this node has
    // not folded yet (another node acknowledged it a moment ago). Read the log
    // up to it first, so the client is resumed, not reset.
    if (id && id !== 'invalid' && id.epoch === this.head.epoch && id.position > this.source.position() && this.source.catchUp) {
      await this.source.catchUp();
    }
    if (!sub.conn.open || this.stopped) return;
    // From here to the registration, nothing is awaited: the snapshot or the
    // ring is taken in the turn the subscription starts hearing frames.
    const head = this.source.position();
    if (id === null) return this.startWithSnapshot(sub, false);
    if (id === 'invalid' || id.epoch !== this.head.epoch || id.position > head) return this.startWithSnapshot(sub, true);
    this.stats.replays++;
    const ringFirst = this.ringLen ? this.ring[this.ringStart]!.position : head + 1;
    if (id.part !== undefined) {
      // From inside a frame: that frame again, less the messages received.
      id.position--;
      sub.partial = { position: id.position + 1, count: id.part + 1 };
    }
    sub.lastSent = id.position;
    if (id.position >= ringFirst - 1) {
      const cap = this.opts.ringSize;
      const frames: Frame[] = [];
      for (let i = 0; i < this.ringLen; i++) {
        const f = this.ring[(this.ringStart + i) % cap]!;
        if (f.position > id.position) frames.push(f);
      }
      this.subs.add(sub);
      // Frames of this turn not yet flushed are in the ring already: the flush skips them (lastSent).
      this.catchUp(sub, frames);
      this.opened?.(sub);
      return;
    }
    // Replay from the log; live frames queue meanwhile.
    sub.queue = [];
    this.subs.add(sub);
    this.opened?.(sub);
    let frames: Frame[] | null;
    try {
      frames = await this.source.replay(id.position, head);
    } catch (err) {
      console.error('roost: replay failed', err);
      sub.conn.end('the replay failed; reconnect to try again');
      return;
    }
    if (!sub.conn.open || !this.subs.has(sub)) return;
    if (frames === null) {
      sub.overflow = true; // too old to rebuild: a reset snapshot, then the queue
      frames = [];
    }
    void this.paced(sub, frames);
  }

  private startWithSnapshot(sub: Subscription, reset: boolean): void {
    if (reset) this.stats.resets++;
    if (this.source.history) {
      // The history, frame by frame, at the reader's pace; live frames queue meanwhile.
      const frames = this.source.history(this.source.position());
      sub.lastSent = -1;
      sub.queue = [];
      this.subs.add(sub);
      this.opened?.(sub);
      void this.paced(sub, frames);
      return;
    }
    const snap = this.source.snapshot(reset);
    sub.lastSent = snap.position;
    this.subs.add(sub);
    sub.conn.writePaced(snap.bytes(sub.conn.form));
    // A large snapshot is a catch-up too: live frames wait until the reader has it.
    if (sub.conn.behind) {
      sub.queue = [];
      void this.paced(sub, []);
    }
    this.opened?.(sub);
  }

  /** Writes replayed frames: at once when they are small and the reader keeps up, else paced. */
  private catchUp(sub: Subscription, frames: Frame[]): void {
    const form = sub.conn.form;
    if (sub.partial) {
      sub.queue = [];
      void this.paced(sub, frames);
      return;
    }
    let size = 0;
    for (const f of frames) {
      size += f.bytes(form).length;
      if (size > this.opts.live.opts.paceBytes) break;
    }
    if (size <= this.opts.live.opts.paceBytes && !sub.conn.behind) {
      if (frames.length) {
        sub.conn.writePaced(frames.length === 1 ? frames[0].bytes(form) : Buffer.concat(frames.map((f) => f.bytes(form))));
        sub.lastSent = frames[frames.length - 1].position;
      }
      return;
    }
    sub.queue = [];
    void this.paced(sub, frames);
  }

  /**
   * The paced catch-up: writes `frames` a piece at a time, waiting for the
   * reader whenever more than `paceBytes` are unread; then the frames queued
   * meanwhile, the same way, until none is left and the subscription is live.
   * If the queue outgrew the buffer (or the replay could not be rebuilt), the
   * scope restarts from a fresh snapshot marked reset (a scope with a history
   * goes on from its history instead: nothing is lost).
   */
  private async paced(sub: Subscription, frames: Frame[]): Promise<void> {
    const conn = sub.conn;
    const form = conn.form;
    const gone = () => !conn.open || !this.subs.has(sub);
    let list = frames;
    for (;;) {
      let chunk: Buffer[] = [];
      let size = 0;
      for (const f of list) {
        if (sub.overflow) break;
        if (f.position <= sub.lastSent) continue;
        const b = this.bytesFor(sub, f);
        sub.lastSent = f.position;
        if (b.length === 0) continue;
        chunk.push(b);
        size += b.length;
        if (size >= CHUNK) {
          conn.writePaced(chunk.length === 1 ? chunk[0] : Buffer.concat(chunk));
          chunk = [];
          size = 0;
          // A reader that keeps up still lets the process answer others between pieces.
          if (conn.behind) await conn.drained();
          else await new Promise<void>((ok) => setImmediate(ok));
          if (gone()) return;
        }
      }
      if (chunk.length) conn.writePaced(chunk.length === 1 ? chunk[0] : Buffer.concat(chunk));
      if (sub.overflow && this.source.history) {
        // A history holds every frame: go on from the last one written, no reset.
        sub.overflow = false;
        sub.queue = [];
        sub.queuedBytes = 0;
        list = this.source.history(this.source.position());
        continue;
      }
      if (sub.overflow) {
        sub.overflow = false;
        sub.queue = [];
        sub.queuedBytes = 0;
        this.stats.resets++;
        const snap = this.source.snapshot(true);
        sub.lastSent = snap.position;
        conn.writePaced(snap.bytes(form));
      }
      if (conn.behind) await conn.drained();
      if (gone()) return;
      const q = sub.queue!;
      if (q.length === 0 && !sub.overflow) {
        sub.queue = null;
        sub.queuedBytes = 0;
        return;
      }
      list = q;
      sub.queue = [];
      sub.queuedBytes = 0;
    }
  }
}
