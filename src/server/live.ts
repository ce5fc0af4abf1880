// The one live mechanism (Server-Sent Events) of every app: a connection (one
// HTTP response) holds one or more scope subscriptions, and every scope is a
// channel: durable (a followed log stream: snapshot, ring, replay) or lossy
// (presence, roles, terminal bytes, a Space's command feed). The single-scope
// endpoints (/stream, /approvals/stream, /fleet/:thread/stream,
// /api/v2/events, ...) and the multiplexed `GET /live?s=...` are the same
// code; only the bytes of a frame differ (`Form`). The wire of the mux form is
// in src/core/live-wire.ts.
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
// - each form of a frame (single-scope bytes, mux bytes) is serialized once,
//   on first use; a flush's frames are concatenated once per form and the
//   same bytes are written to every subscription of that form;
// - per connection, whatever its number of scopes: one heartbeat, one
//   slow-consumer rule (more than `maxBufferedBytes` unsent: the connection
//   ends with an `error` frame giving the reason), one count toward the
//   per-caller limit;
// - access follows the caller: every scope is authorized on its own when it is
//   opened (its project and minimum role), re-checked when that member's role
//   changes (a scope no longer readable is closed: a `closed` frame on a mux
//   connection, the end of a single-scope one), and a revoked token, a
//   sign-out or an expired sign-in ends the whole connection.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { LIVE_PROTOCOL_VERSION, MAX_LIVE_SCOPES, SCOPE_PATTERN, parseScopeParam, splitScope } from '../core/live-wire.js';
import { roleAtLeast, type Role } from '../core/identity.js';
import { decide, type Access, type AccessChange, type Principal } from './access.js';
import { HttpError } from './http.js';

/** How a connection's frames are written: one scope's SSE (`id:`, `event:`), or the mux envelope. */
export type Form = 'single' | 'mux';

/** One event of a frame: its SSE event name and its data, one line of JSON. */
export interface Ev {
  name: string;
  data: string;
}

/** What a channel's frames need to know of it to write themselves. */
interface Head {
  epoch: string;
  /** The scope as a JSON string, ready for the mux envelope. */
  scopeJson: string;
}

/**
 * A durable frame: one log position and its events. The bytes of each form
 * are made on first use and then shared by every subscription of that form.
 * Work's frames differ by form (`mux`): the single-scope endpoint keeps the
 * contract's `*.changed` families, the mux form carries the event itself.
 */
export class Frame {
  private single: Buffer | null = null;
  private muxed: Buffer | null = null;

  constructor(
    readonly position: number,
    private head: Head,
    /** The events, or a function making them on first use (a history of thousands of frames costs only what is written). */
    private evs: readonly Ev[] | (() => readonly Ev[]) | null,
    private muxEvs: readonly Ev[] | null = null,
  ) {}

  bytes(form: Form): Buffer {
    if (form === 'single') return (this.single ??= this.build(form));
    return (this.muxed ??= this.build(form));
  }

  private build(form: Form): Buffer {
    if (typeof this.evs === 'function') this.evs = this.evs();
    const evs = (form === 'mux' && this.muxEvs) || this.evs || [];
    const { epoch, scopeJson } = this.head;
    let text = '';
    // Every message carries its own id (a resume from any of them is exact): the
    // frame's last one `<epoch>:<position>`, an earlier one `<epoch>:<position>.<k>`
    // (its index in the frame), which resumes with the rest of the frame.
    const last = evs.length - 1;
    for (let k = 0; k <= last; k++) {
      const e = evs[k];
      const id = k === last ? `${epoch}:${this.position}` : `${epoch}:${this.position}.${k}`;
      if (form === 'single') text += `id: ${id}\nevent: ${e.name}\ndata: ${e.data}\n\n`;
      else text += `data: {"s":${scopeJson},"e":"${e.name}","p":"${id}","d":${e.data}}\n\n`;
    }
    const b = Buffer.from(text);
    // Once both forms exist the events are not needed any more (a ring holds thousands of frames).
    if (this.single && form === 'mux') this.evs = this.muxEvs = null;
    else if (this.muxed && form === 'single') this.evs = this.muxEvs = null;
    return b;
  }
}

/** The bytes of a lossy frame (no `id:` line, no `p`: it never moves a cursor). */
function lossyBytes(form: Form, head: Head, name: string, data: string): Buffer {
  return Buffer.from(form === 'single' ? `event: ${name}\ndata: ${data}\n\n` : `data: {"s":${head.scopeJson},"e":"${name}","d":${data}}\n\n`);
}

function errorBytes(reason: string): string {
  return `event: error\ndata: ${JSON.stringify({ reason })}\n\n`;
}

const HEARTBEAT = Buffer.from(':\n\n');
/** Connections given their heartbeat in one turn (see `Live.tick`). */
const HEARTBEAT_SLICE = 500;
/** A single-scope stream asks its EventSource to come back after a second (a mux stream is reopened by its client). */
const RETRY = Buffer.from('retry: 1000\n\n');
/** A catch-up is written in pieces of about this size. */
const CHUNK = 64 * 1024;

/** Who may keep reading a scope: a role in a project, re-checked on every change of that member's access. */
export interface Need {
  project: string;
  min: Role;
}

/** One scope of one connection. */
export class Subscription {
  /** The last position written (durable scopes). */
  lastSent = 0;
  /** Live frames held back while a catch-up is written; null once live. */
  queue: Frame[] | null = null;
  queuedBytes = 0;
  /** The queue outgrew the buffer during a catch-up: the scope restarts from a fresh snapshot. */
  overflow = false;
  /** The app's own memory of this subscription (a Space feed's last due set). */
  memo: string | undefined;
  /** A resume from inside a frame (`<epoch>:<position>.<k>`): that frame's first `count` messages were received already. */
  partial: { position: number; count: number } | null = null;

  constructor(
    readonly conn: Connection,
    readonly channel: Channel,
    readonly need: Need | null,
  ) {}

  get who(): Principal {
    return this.conn.who;
  }

  get scope(): string {
    return this.channel.scope;
  }

  /** Ends this scope (a mux connection goes on; a single-scope one ends). */
  close(reason: string, status: number): void {
    this.conn.closeScope(this, reason, status);
  }
}

/** One SSE response and the scopes it carries. */
export class Connection {
  readonly subs = new Map<string, Subscription>();
  private ended = false;
  private drain: Promise<void> | null = null;
  private closers: (() => void)[] = [];

  constructor(
    private live: Live,
    readonly form: Form,
    readonly who: Principal,
    readonly sock: Socket,
    /** The caller key this connection counts against (null: not counted, local mode). */
    readonly caller: string | null,
  ) {}

  get open(): boolean {
    return !this.ended && !this.sock.destroyed && !this.sock.writableEnded;
  }

  /** Runs `f` once when the connection ends, however it ends. */
  onEnd(f: () => void): void {
    if (this.ended) f();
    else this.closers.push(f);
  }

  /** Writes `bytes`, unless more than the buffer is unsent already: then the connection ends as a slow consumer. */
  write(bytes: Buffer): void {
    if (!this.open || bytes.length === 0) return;
    if (this.sock.writableLength > this.live.opts.maxBufferedBytes) {
      this.slow(`slow consumer: more than ${this.live.opts.maxBufferedBytes} bytes unsent; reconnect with Last-Event-ID to resume`);
      return;
    }
    this.sock.write(bytes);
  }

  /** Writes without the slow-consumer check: a catch-up paces itself (see `paced`). */
  writePaced(bytes: Buffer): void {
    if (this.open && bytes.length) this.sock.write(bytes);
  }

  /** Whether a catch-up should wait for the reader before writing more. */
  get behind(): boolean {
    return this.sock.writableLength > this.live.opts.paceBytes;
  }

  /**
   * Resolves when the reader has taken what was written ('drain'), or the
   * connection ended. A reader that takes nothing for `stallMs` is cut: it is
   * gone, not slow.
   */
  drained(): Promise<void> {
    if (!this.open || !this.behind) return Promise.resolve();
    this.drain ??= new Promise<void>((ok) => {
      const done = () => {
        clearTimeout(timer);
        this.sock.off('drain', done);
        this.sock.off('close', done);
        this.drain = null;
        ok();
      };
      const timer = setTimeout(() => {
        done();
        this.slow(`slow consumer: nothing read for ${Math.round(this.live.opts.stallMs / 1000)} s; reconnect with Last-Event-ID to resume`);
      }, this.live.opts.stallMs);
      timer.unref();
      this.sock.on('drain', done);
      this.sock.on('close', done);
    });
    return this.drain;
  }

  private slow(reason: string): void {
    this.live.stats.slowDisconnects++;
    for (const s of this.subs.values()) s.channel.stats.slowDisconnects++;
    this.end(reason);
  }

  /** Ends the connection with an `error` frame giving the reason. */
  end(reason: string): void {
    if (this.ended) return;
    const sock = this.sock;
    if (!sock.destroyed && !sock.writableEnded) {
      sock.end(errorBytes(reason));
      // A peer that reads nothing would keep the socket forever: cut it.
      setTimeout(() => sock.destroy(), 1000).unref();
    }
    this.finish();
  }

  /** The response closed (either side): every scope lets go, once. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    for (const s of this.subs.values()) s.channel.remove(s);
    this.subs.clear();
    this.live.forget(this);
    for (const f of this.closers.splice(0)) f();
  }

  /** Ends one scope: a `closed` frame on a mux connection (the others go on); the end of a single-scope one. */
  closeScope(sub: Subscription, reason: string, status: number): void {
    if (this.subs.get(sub.scope) !== sub) return;
    if (this.form === 'single') return this.end(reason);
    this.subs.delete(sub.scope);
    sub.channel.remove(sub);
    this.write(Buffer.from(`data: {"s":${sub.channel.head.scopeJson},"e":"closed","d":${JSON.stringify({ reason, status })}}\n\n`));
  }

  /** The `closed` frame of a scope that was never opened (malformed, unknown, not readable). */
  refuse(scope: string, err: HttpError): void {
    this.write(Buffer.from(`data: {"s":${JSON.stringify(scope)},"e":"closed","d":${JSON.stringify({ reason: err.message, status: err.status })}}\n\n`));
  }
}

/** Counters for /health, the tests and the bench. */
export interface ChannelStats {
  slowDisconnects: number;
  replays: number;
  resets: number;
}

/**
 * A scope's channel: its subscriptions, and its lossy frames (sent to the
 * subscriptions that are live now, never kept, never replayed).
 */
export abstract class Channel {
  readonly subs = new Set<Subscription>();
  readonly head: Head;
  readonly stats: ChannelStats = { slowDisconnects: 0, replays: 0, resets: 0 };
  /** Hooks of the app: a subscription opened (after its first frames), or let go. */
  opened: ((sub: Subscription) => void) | null = null;
  closed: ((sub: Subscription) => void) | null = null;

  constructor(
    readonly scope: string,
    epoch: string,
  ) {
    this.head = { epoch, scopeJson: JSON.stringify(scope) };
  }

  get subscriberCount(): number {
    return this.subs.size;
  }

  /** Starts a subscription: its first frames (from `cursor`, for a durable scope). */
  abstract start(sub: Subscription, cursor: string | null): void | Promise<void>;

  remove(sub: Subscription): void {
    if (this.subs.delete(sub)) this.closed?.(sub);
  }

  /** A lossy frame to every subscription that is live now (not catching up); returns how many got it. */
  broadcast(name: string, data: string, only?: (sub: Subscription) => boolean): number {
    let single: Buffer | null = null;
    let mux: Buffer | null = null;
    let n = 0;
    for (const s of this.subs) {
      if (s.queue || (only && !only(s))) continue;
      const bytes = s.conn.form === 'single' ? (single ??= lossyBytes('single', this.head, name, data)) : (mux ??= lossyBytes('mux', this.head, name, data));
      s.conn.write(bytes);
      n++;
    }
    return n;
  }

  /** A lossy frame to one subscription. */
  send(sub: Subscription, name: string, data: string): void {
    if (!sub.queue) sub.conn.write(lossyBytes(sub.conn.form, this.head, name, data));
  }

  /** Ends the connections holding this channel (its service stops; a test cuts them): clients resume by replay. */
  closeAll(reason: string): void {
    for (const s of [...this.subs]) s.conn.end(reason);
  }

  stop(): void {
    this.closeAll('server is shutting down');
  }
}

/** A lossy scope's channel: nothing kept, nothing replayed; `opened` sends a new subscription its first frames. */
export class LossyChannel extends Channel {
  start(sub: Subscription): void {
    this.subs.add(sub);
    this.opened?.(sub);
  }
}

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
    private opts: ChannelOptions & { live: Live },
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

export interface LiveConfig {
  epoch: string;
  /** A comment line on every connection this often, ms. */
  heartbeatMs: number;
  /** Unsent bytes a connection may have before it is cut as a slow consumer. */
  maxBufferedBytes: number;
  /** A catch-up writes at most this much ahead of the reader, then awaits 'drain' (default 256 KiB, at most a quarter of the buffer). */
  paceBytes: number;
  /** A catch-up whose reader takes nothing for this long is cut (default 60 s). */
  stallMs: number;
  /** Open connections per person, across all of their sign-ins and tokens (shared mode); a mux connection counts once. */
  perCaller: number;
  /**
   * Open connections in this process, everyone together: one more is a 503
   * with `Retry-After`, so the process keeps file descriptors for everything
   * else (a request, the log) instead of hanging when they run out.
   */
  maxConnections: number;
}

/**
 * A scope an app serves. `need` says what a caller must hold to read a key
 * (checked when the scope opens and again whenever that member's access
 * changes), or null when `open` checks the caller itself and only the loss
 * of the caller's identity ends it (a private stream, a Space's own feed).
 */
export interface ScopeSpec {
  /** The project and minimum role for `key`; throws HttpError 400 when the key is malformed. */
  need(key: string, who: Principal): Need | null;
  /** The channel of `key` for a caller that `need` allows; throws HttpError (404 unknown, 403 not theirs). Its `scope` must be `<app>:<key>` as asked. */
  open(key: string, who: Principal): Channel | Promise<Channel>;
}

interface Target {
  scope: string;
  channel: Channel;
  need: Need | null;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
};

/** The connections of one server, the scopes its apps declare, and the rules every connection keeps. */
export class Live {
  private specs = new Map<string, ScopeSpec>();
  private conns = new Set<Connection>();
  private perCaller = new Map<string, number>();
  private timer: NodeJS.Timeout;
  private unaccess: () => void;
  readonly stats = { slowDisconnects: 0, refusedFull: 0 };
  readonly opts: LiveConfig;

  constructor(
    private access: Access,
    opts: Partial<LiveConfig> & { epoch: string },
  ) {
    const max = opts.maxBufferedBytes ?? 4 * 1024 * 1024;
    // A catch-up keeps well under the slow-consumer limit, so the connection's other frames still fit.
    this.opts = { heartbeatMs: 15_000, maxBufferedBytes: max, paceBytes: Math.min(256 * 1024, Math.floor(max / 4)), stallMs: 60_000, perCaller: 32, maxConnections: 10_000, ...opts };
    // One heartbeat for every connection; a sign-in that expired ends its connections at the next one.
    this.timer = setInterval(() => this.tick(), this.opts.heartbeatMs);
    this.timer.unref();
    this.unaccess = access.onChange((c) => this.changed(c));
  }

  /** Declares an app's scopes: `<app>:<key>` (or the bare `<app>`) is served by `spec`. */
  declare(app: string, spec: ScopeSpec): this {
    if (this.specs.has(app)) throw new Error(`live scope "${app}" is declared twice`);
    this.specs.set(app, spec);
    return this;
  }

  get connections(): number {
    return this.conns.size;
  }

  /** The channel options of a durable channel of this server. */
  channelOptions(o: ChannelOptions): ChannelOptions & { live: Live } {
    return { ...o, live: this };
  }

  /** A scope asked for by `who`, authorized and opened; throws HttpError. */
  async resolve(scope: string, who: Principal): Promise<Target> {
    if (!SCOPE_PATTERN.test(scope)) throw new HttpError(400, 'bad_request', `"${scope.slice(0, 80)}" is not a scope (<app>:<key>)`);
    const { app, key } = splitScope(scope);
    const spec = this.specs.get(app);
    if (!spec) throw new HttpError(404, 'not_found', `no such live scope: "${app}"`);
    const need = spec.need(key, who);
    if (need) decide(who, this.access.roleIn(who, need.project), need.project, need.min);
    const channel = await spec.open(key, who);
    // The mux bytes of a frame carry its channel's scope: it must be the one asked for.
    if (channel.scope !== scope) throw new Error(`live scope "${scope}" opened the channel of "${channel.scope}"`);
    return { scope, channel, need };
  }

  /**
   * Serves a single-scope endpoint: `scopes` (one durable scope, and lossy
   * ones riding along, e.g. Work's events stream) on one connection in their
   * own SSE form, resuming from Last-Event-ID (header, or `?lastEventId=` on a
   * first connect). A scope that cannot be read throws before anything is
   * written, so the caller gets its status.
   */
  async serve(req: IncomingMessage, res: ServerResponse, url: URL, who: Principal, scopes: string[]): Promise<Connection> {
    const cursor = (req.headers['last-event-id'] as string | undefined) ?? url.searchParams.get('lastEventId');
    const targets: Target[] = [];
    for (const s of scopes) targets.push(await this.resolve(s, who));
    const conn = this.connect(req, res, 'single', who);
    conn.write(RETRY);
    for (const t of targets) await this.subscribe(conn, t, cursor);
    return conn;
  }

  /**
   * `GET /live?s=<scope>[@<epoch>:<position>]&s=...`: many scopes on one
   * connection, in the mux form (src/core/live-wire.ts). The request is
   * refused (400) only when its list is malformed: no scope, more than
   * MAX_LIVE_SCOPES, one named twice; a scope that cannot be read gets a
   * `closed` frame and the others go on.
   */
  async serveMux(req: IncomingMessage, res: ServerResponse, url: URL, who: Principal): Promise<void> {
    const asked = url.searchParams.getAll('s');
    if (asked.length === 0) throw new HttpError(400, 'bad_request', 'name at least one scope: /live?s=<app>:<key>[@<epoch>:<position>]');
    if (asked.length > MAX_LIVE_SCOPES) throw new HttpError(400, 'bad_request', `a connection carries at most ${MAX_LIVE_SCOPES} scopes, got ${asked.length}`);
    const wanted = new Map<string, string | null>();
    const bad: string[] = [];
    for (const v of asked) {
      const p = parseScopeParam(v);
      const scope = p ? p.scope : v.split('@')[0];
      if (wanted.has(scope) || bad.includes(scope)) throw new HttpError(400, 'bad_request', `scope "${scope.slice(0, 80)}" is named twice`);
      if (p) wanted.set(scope, p.cursor);
      else bad.push(scope);
    }
    const conn = this.connect(req, res, 'mux', who);
    conn.write(Buffer.from(`data: {"s":"","e":"hello","d":${JSON.stringify({ protocol: LIVE_PROTOCOL_VERSION, epoch: this.opts.epoch })}}\n\n`));
    for (const scope of bad) conn.refuse(scope.slice(0, 300), new HttpError(400, 'bad_request', `"${scope.slice(0, 80)}" is not a scope (<app>:<key>[@<epoch>:<position>])`));
    // Each scope on its own: one that is slow to open (a board read from the log) holds back no other.
    await Promise.all(
      [...wanted].map(async ([scope, cursor]) => {
        let t: Target;
        try {
          t = await this.resolve(scope, who);
        } catch (e) {
          if (!(e instanceof HttpError)) console.error(`roost: opening live scope ${scope} failed`, e);
          if (conn.open) conn.refuse(scope, e instanceof HttpError ? e : new HttpError(500, 'internal', 'internal error'));
          return;
        }
        await this.subscribe(conn, t, cursor);
      }),
    );
  }

  private async subscribe(conn: Connection, t: Target, cursor: string | null): Promise<void> {
    if (!conn.open) return;
    const sub = new Subscription(conn, t.channel, t.need);
    conn.subs.set(t.scope, sub);
    await t.channel.start(sub, cursor);
  }

  /** The caller a connection counts against: the person (all of their sign-ins and tokens); local mode's owner is not limited. */
  private callerOf(who: Principal): string | null {
    if (who.kind === 'local') return null;
    return 'user:' + who.uid;
  }

  /** Opens a connection: 429 when its caller holds too many already; then the headers. */
  private connect(req: IncomingMessage, res: ServerResponse, form: Form, who: Principal): Connection {
    if (this.conns.size >= this.opts.maxConnections) {
      this.stats.refusedFull++;
      // The refused socket is let go at once, not kept alive: descriptors are what is short.
      res.setHeader('connection', 'close');
      throw new HttpError(503, 'unavailable', `this server holds ${this.conns.size} live connections, its most (${this.opts.maxConnections}); try again shortly`, { retryAfterS: 5 });
    }
    const caller = this.callerOf(who);
    if (caller) {
      const n = this.perCaller.get(caller) ?? 0;
      if (n >= this.opts.perCaller) throw new HttpError(429, 'too_many', `too many open streams: at most ${this.opts.perCaller} per person (all of your sign-ins and tokens); close one first`);
      this.perCaller.set(caller, n + 1);
    }
    const conn = new Connection(this, form, who, req.socket, caller);
    this.conns.add(conn);
    // No chunked framing: the stream ends with its connection, so frames are
    // written to the socket as they are, the same bytes for every subscriber.
    res.useChunkedEncodingByDefault = false;
    res.writeHead(200, SSE_HEADERS);
    // The headers go out now: every frame after them is written to the socket itself.
    res.flushHeaders();
    req.socket.setNoDelay(true);
    res.on('close', () => conn.finish());
    return conn;
  }

  /** A connection ended: it no longer counts. */
  forget(conn: Connection): void {
    if (!this.conns.delete(conn) || !conn.caller) return;
    const left = (this.perCaller.get(conn.caller) ?? 1) - 1;
    if (left > 0) this.perCaller.set(conn.caller, left);
    else this.perCaller.delete(conn.caller);
  }

  /**
   * The heartbeat, in slices of HEARTBEAT_SLICE connections, one slice per
   * turn: 10,000 connections' writes at once would hold the process for tens
   * of ms, and every live frame (a flush) would wait behind them.
   */
  private tick(): void {
    const all = [...this.conns];
    const slice = (from: number): void => {
      const to = Math.min(all.length, from + HEARTBEAT_SLICE);
      for (let i = from; i < to; i++) {
        const c = all[i];
        if (c.who.session) {
          const lost = this.access.lost(c.who);
          if (lost) {
            c.end(lost);
            continue;
          }
        }
        c.write(HEARTBEAT);
      }
      if (to < all.length) setImmediate(slice, to);
    };
    slice(0);
  }

  /** Access changed: re-check the scopes of that member, or end the connections of a lost token or sign-in. */
  private changed(c: AccessChange): void {
    for (const conn of [...this.conns]) {
      const who = conn.who;
      if (c.kind === 'member') {
        if (who.uid !== c.uid) continue;
        for (const sub of [...conn.subs.values()]) {
          if (sub.need?.project !== c.project) continue;
          const role = this.access.roleIn(who, c.project);
          if (role === null) sub.close(`you are no longer a member of project "${c.project}"`, 403);
          else if (!roleAtLeast(role, sub.need.min)) sub.close(`this needs the ${sub.need.min} role in project "${c.project}"; you are ${role === 'viewer' ? 'a' : 'an'} ${role}`, 403);
        }
      } else if ((c.kind === 'token' && who.token === c.token) || (c.kind === 'login' && who.session === c.session)) {
        const lost = this.access.lost(who);
        if (lost) conn.end(lost);
      }
    }
  }

  /** Ends every connection (the server stops). */
  stop(): void {
    clearInterval(this.timer);
    this.unaccess();
    for (const c of [...this.conns]) c.end('server is shutting down');
  }
}
