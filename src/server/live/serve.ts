// The connections of one server (`Live`): the scopes its apps declare, the
// endpoints that open a connection (a single-scope one, `serve`, and the
// multiplexed `GET /live?s=...`, `serveMux`), and the rules every connection
// keeps.
//
// - per connection, whatever its number of scopes: one heartbeat, one
//   slow-consumer rule (connection.ts), one count toward the per-caller limit;
// - access follows the caller: every scope is authorized on its own when it is
//   opened (its project and minimum role), re-checked when that member's role
//   changes (a scope no longer readable is closed: a `closed` frame on a mux
//   connection, the end of a single-scope one), and a revoked token, a
//   sign-out or an expired sign-in ends the whole connection.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIVE_PROTOCOL_VERSION, MAX_LIVE_SCOPES, SCOPE_PATTERN, parseScopeParam, splitScope } from '../../core/live-wire.js';
import { roleAtLeast } from '../../core/identity.js';
import { decide, type Access, type AccessChange, type Principal } from '../access.js';
import { HttpError } from '../http.js';
import { Connection, Subscription, type Channel, type Need } from './connection.js';
import type { ChannelOptions } from './durable.js';
import type { Form } from './frame.js';

const HEARTBEAT = Buffer.from(':\n\n');
/** Connections given their heartbeat in one turn (see `Live.tick`). */
const HEARTBEAT_SLICE = 500;
/** A single-scope stream asks its EventSource to come back after a second (a mux stream is reopened by its client). */
const RETRY = Buffer.from('retry: 1000\n\n');

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
