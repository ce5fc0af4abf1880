// One live connection (one SSE response), the subscription of each scope it
// carries, and the channel every subscription belongs to (a lossy one here;
// the durable one, with positions and replay, is durable.ts).
//
// Per connection, whatever its number of scopes: one slow-consumer rule (more
// than `maxBufferedBytes` unsent: the connection ends with an `error` frame
// giving the reason), and a catch-up that paces itself instead (`writePaced`,
// `drained`). A scope ends on its own on a mux connection (a `closed` frame)
// and ends a single-scope one.

import type { Socket } from 'node:net';
import type { Role } from '../../core/identity.js';
import type { Principal } from '../access.js';
import type { HttpError } from '../http.js';
import { errorBytes, lossyBytes, type Form, type Frame, type Head } from './frame.js';

/** What a connection needs of the server that holds it (`Live`, serve.ts). */
export interface ConnectionHost {
  readonly opts: { readonly maxBufferedBytes: number; readonly paceBytes: number; readonly stallMs: number };
  readonly stats: { slowDisconnects: number };
  /** The connection ended: it no longer counts. */
  forget(conn: Connection): void;
}

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
    private live: ConnectionHost,
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
