// The bridge's side of the wire: one connection to one Roost server as one
// caller, with posts that survive a dropped connection and streams followed
// with exact replay. The board (a thread's sessions) and Work (the Space's
// reports and command feed) both speak through it.
//
// Invariants:
// - posts go out one at a time, in the order they were queued, so the board
//   sees a session's spawn before its status and its turns in order, and Work
//   sees a command's `started` before its output before its `finished`; the
//   board's live frames (partial text, tool output) take their place in the
//   same queue, so one queued before a turn is relayed before the turn is
//   stored (they are never retried, and dropped when they waited too long);
// - a post is retried with the same Idempotency-Key until the server gives a
//   definitive answer (2xx or a 4xx other than 408/429): a retry after a lost
//   answer is recognised by the server and stores nothing twice;
// - a followed stream reconnects with the last `id:` it saw as Last-Event-ID,
//   so a reconnect replays exactly the frames it missed. Frames without an id
//   (lossy frames, the Work command feed) never move that id.

import { randomBytes } from 'node:crypto';

export interface ConnectionOptions {
  server: string;
  token?: string;
  /** The project of the caller, when the token does not imply it (`Roost-Project`). */
  project?: string;
  /** The label this bridge posts under (`Roost-Name`, local mode). */
  name: string;
  log: (line: string) => void;
  /**
   * How long an approval waits (ms): sent as `Roost-Approval-Window`, so the
   * server's window of the bridge's requests ends just after the bridge's own.
   */
  approvalWindowMs?: number;
}

export interface PostResult {
  status: number;
  /** The answer's JSON object (`{message, kind}` for a refusal), or null. */
  json: Record<string, unknown> | null;
}

export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

export interface FollowOptions {
  lastEventId?: () => string | undefined;
  onFrame: (f: SseFrame) => Promise<void> | void;
  onState?: (s: 'connected' | 'down', why?: string) => void;
  /** A stream silent this long is dead (heartbeats come every 15 s). */
  idleMs?: number;
  headers?: Record<string, string>;
}

/** An answer that will not change on retry (a 4xx other than 408/429). */
export class RefusedError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A lossy post older than this when its turn in the queue comes is dropped unsent. */
export const LOSSY_STALE_MS = 2000;
/** How long a lossy post may hold the queue. */
export const LOSSY_TIMEOUT_MS = 2000;

export class Connection {
  readonly server: string;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private aborts = new Set<AbortController>();
  /** Aborted by close(): posts in flight end at once (their answer counts as none). */
  private closing = new AbortController();

  constructor(private opts: ConnectionOptions) {
    this.server = opts.server.replace(/\/+$/, '');
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * This bridge process, as the holder of its approval requests
   * (`Roost-Bridge`): new each start, since a bridge that went away left
   * nobody waiting for what it asked (docs/approvals.md).
   */
  readonly process = 'p' + randomBytes(8).toString('hex');

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { 'roost-name': this.opts.name, 'roost-bridge': this.process, ...extra };
    if (this.opts.approvalWindowMs) h['roost-approval-window'] = String(this.opts.approvalWindowMs);
    // Sent as is; local mode ignores it, shared mode checks it.
    if (this.opts.token) h.authorization = `Bearer ${this.opts.token}`;
    if (this.opts.project) h['roost-project'] = this.opts.project;
    return h;
  }

  /** One attempt; throws on a network error. `path` is from the server's root. */
  async postOnce(path: string, body: unknown, key?: string, timeoutMs = 15_000): Promise<PostResult> {
    const headers = this.headers({ 'content-type': 'application/json' });
    if (key) headers['idempotency-key'] = key;
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), this.closing.signal]);
    const r = await fetch(this.server + path, { method: 'POST', headers, body: JSON.stringify(body), signal });
    const text = await r.text();
    let json: Record<string, unknown> | null = null;
    try {
      const j: unknown = JSON.parse(text);
      if (typeof j === 'object' && j !== null && !Array.isArray(j)) json = j as Record<string, unknown>;
    } catch {}
    return { status: r.status, json };
  }

  /**
   * Queues a post behind the earlier ones and retries it until the server
   * answers definitively. Resolves with that answer (status 0 once the
   * connection is closed).
   */
  post(path: string, body: unknown, key?: string): Promise<PostResult> {
    const run = async (): Promise<PostResult> => {
      let wait = 200;
      for (;;) {
        if (this.closed) return { status: 0, json: null };
        try {
          const r = await this.postOnce(path, body, key);
          if (r.status < 500 && r.status !== 408 && r.status !== 429) {
            if (r.status >= 400) this.opts.log(`post ${(Array.isArray(body) ? body[0] : (body as { type?: string; event?: string }))?.type ?? path} refused: ${r.status} ${r.json?.message ?? ''}`);
            return r;
          }
        } catch {
          // The server is away: try again with the same key.
        }
        if (this.closed) return { status: 0, json: null };
        await this.pause(wait);
        wait = Math.min(wait * 2, 2000);
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /**
   * Queues a lossy post (a live frame) in order with the durable ones, so a
   * frame queued before a post reaches the server before it: one attempt, no
   * retry, answered in at most `LOSSY_TIMEOUT_MS`, and dropped unsent when it
   * waited in the queue longer than `LOSSY_STALE_MS` (the server was away, and
   * a late live frame says nothing true any more). Resolves with the answer,
   * status 0 when dropped or failed; never rejects.
   */
  postLossy(path: string, body: unknown): Promise<PostResult> {
    const queued = Date.now();
    const run = async (): Promise<PostResult> => {
      if (this.closed || Date.now() - queued > LOSSY_STALE_MS) return { status: 0, json: null };
      return this.postOnce(path, body, undefined, LOSSY_TIMEOUT_MS).catch(() => ({ status: 0, json: null }));
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Waits until every queued post has been answered. */
  drain(): Promise<unknown> {
    return this.queue;
  }

  /** A GET retried while the server is away; a definitive refusal throws RefusedError. */
  async getJson(path: string): Promise<unknown> {
    let wait = 200;
    for (;;) {
      try {
        const r = await fetch(this.server + path, { headers: this.headers(), signal: AbortSignal.any([AbortSignal.timeout(15_000), this.closing.signal]) });
        if (r.ok) return (await r.json()) as unknown;
        if (r.status < 500 && r.status !== 408 && r.status !== 429) throw new RefusedError(r.status, `the server answered ${r.status}: ${await r.text()}`);
      } catch (e) {
        if (e instanceof RefusedError) throw e;
      }
      if (this.closed) throw new Error('closed');
      await this.pause(wait);
      wait = Math.min(wait * 2, 2000);
    }
  }

  /**
   * Follows an SSE stream until closed, reconnecting (with the last id it saw,
   * when asked to track one). `onFrame` is called for every frame in order and
   * awaited, so the handler may do async work before the next frame.
   */
  async follow(path: string, opts: FollowOptions): Promise<void> {
    let wait = 200;
    while (!this.closed) {
      const ac = new AbortController();
      this.aborts.add(ac);
      let idle: NodeJS.Timeout | null = null;
      const bump = () => {
        if (idle) clearTimeout(idle);
        if (opts.idleMs !== 0) idle = setTimeout(() => ac.abort(new Error('the stream went silent')), opts.idleMs ?? 40_000);
      };
      try {
        const last = opts.lastEventId?.();
        const headers = this.headers({ accept: 'text/event-stream', ...opts.headers });
        if (last) headers['last-event-id'] = last;
        bump();
        const res = await fetch(this.server + path, { headers, signal: ac.signal });
        if (!res.ok || !res.body) throw new Error(`the stream answered ${res.status}`);
        opts.onState?.('connected');
        wait = 200;
        const decoder = new TextDecoder();
        let buf = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          bump();
          buf += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const f: SseFrame = { event: 'message', data: '' };
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('id:')) f.id = line.slice(3).trim();
              else if (line.startsWith('event:')) f.event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
            }
            if (!data.length) continue;
            f.data = data.join('\n');
            await opts.onFrame(f);
          }
        }
        opts.onState?.('down', 'the server ended the stream');
      } catch (e) {
        if (this.closed) break;
        opts.onState?.('down', (e as Error).message);
      } finally {
        if (idle) clearTimeout(idle);
        this.aborts.delete(ac);
      }
      await this.pause(wait);
      wait = Math.min(wait * 2, 2000);
    }
  }

  /** A backoff pause, cut short by close(). */
  private pause(ms: number): Promise<void> {
    const signal = this.closing.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((ok) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        ok();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener('abort', done);
    });
  }

  /** Stops everything at once: streams end, posts in flight or waiting to be retried resolve with status 0. */
  close(): void {
    this.closed = true;
    this.closing.abort();
    for (const ac of this.aborts) ac.abort();
  }
}

/** One board thread's sessions over a connection (docs/bridge.md). */
export class BoardClient {
  readonly base: string;

  constructor(
    readonly conn: Connection,
    thread: string,
  ) {
    this.base = `/fleet/${encodeURIComponent(thread)}`;
  }

  post(path: string, body: unknown, key: string): Promise<PostResult> {
    return this.conn.post(this.base + path, body, key);
  }

  postOnce(path: string, body: unknown, key?: string): Promise<PostResult> {
    return this.conn.postOnce(this.base + path, body, key);
  }

  /** A live frame, in order with the thread's durable posts (Connection.postLossy). */
  postLossy(path: string, body: unknown): Promise<PostResult> {
    return this.conn.postLossy(this.base + path, body);
  }

  getBoard(): Promise<unknown> {
    return this.conn.getJson(this.base);
  }

  /** The thread's stream; `Roost-Client: bridge` lets members see a bridge follows it. */
  follow(opts: FollowOptions): Promise<void> {
    return this.conn.follow(this.base + '/stream', { ...opts, headers: { 'roost-client': 'bridge', ...opts.headers } });
  }
}
