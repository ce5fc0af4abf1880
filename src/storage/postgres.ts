// The scale-out store: one PostgreSQL database shared by several Roost nodes.
//
// Positions. Every stream has a row in `streams(stream, head)`. A write moves
// the heads of the streams it touches (locking their rows, in sorted order, so
// two nodes never wait on each other in a cycle), inserts the events at
// positions counted from the locked heads, and commits. The row lock is held
// until commit, so writers of one stream on any node are serialized: positions
// are gap-free, and a reader never sees position n+1 committed without n.
//
// Group commit. `append` only queues. One flush writes every queued request and
// commits once; flushes are pipelined: while one is in flight, the appends of
// later turns queue for the next. The fast path is one autocommit statement
// for the whole batch (plus a key lookup when keys are given), so the lock is
// held for as short a time as a commit allows; if it fails, the batch is redone
// in a transaction with one savepoint per request, so one bad request is
// rejected alone.
//
// Idempotency. A key is unique in its namespace (`idempotency` primary key
// (scope, scoped, key): the stream, or a caller's scope; see AppendOptions). A
// key already committed is found before anything is written and judged
// (judgeKey: a duplicate, or a conflict); a key being written at the same
// moment by another node makes our insert wait for that node's commit and then
// conflict, the statement fails as a whole, and the batch is redone, this time
// finding the winner's row and judging against it.
//
// Wake-ups. After commit (never inside the transaction) the node sends
// `NOTIFY <channel>, '<stream>:<head>'`. A dedicated LISTEN connection turns
// other nodes' notifications into `listener(stream, head, null)`; the listener
// reads what it missed by position. NOTIFY is only a hint: when the LISTEN
// connection drops, it is reopened with backoff and every stream's current head
// is announced, so whatever was committed meanwhile is read, nothing skipped;
// the heads are also read every few seconds, for a NOTIFY lost with its node.
//
// Broadcast (lossy, between nodes: see BroadcastListener in types.ts). A
// second channel, `roost_broadcast[_<schema>]`, heard on the same LISTEN
// connection (so it reconnects with it). A payload is
// `<node>:<seq> <topic>\n<payload>`: `node` names this store instance and lets
// it drop its own messages (they come back to its LISTEN connection); `seq`
// keeps two equal messages of one flush from being merged (PostgreSQL delivers
// a repeated payload of one transaction once). One NOTIFY statement is in
// flight at a time, carrying everything queued meanwhile in order, so a node's
// messages arrive in the order it sent them. Nothing is resent after a drop:
// senders repeat what matters.

import pg from 'pg';
import { PgSearch } from './pg-search.js';
import { PgBroadcast } from './postgres-broadcast.js';
import { randomUUID } from 'node:crypto';
import { RETRYABLE, ident, isConnectionError, isKeyRace, migrate, parseUrl, redact, storeError } from './postgres-setup.js';
import {
  StoreError,
  checkBroadcast,
  type AppendOptions,
  type AppendResult,
  type BroadcastListener,
  type CommitListener,
  type EventStore,
  type LogEntry,
  type NewEvent,
  type SearchPage,
  type SearchQuery,
  type Snapshot,
  judgeKey,
} from './types.js';

interface Pending {
  stream: string;
  events: NewEvent[];
  key: string | undefined;
  /** With `key` only (see AppendOptions). */
  fingerprint: string | undefined;
  scope: string | undefined;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

type Outcome = { ok: true; result: AppendResult; entries: LogEntry[] | null } | { ok: false; error: unknown };

/** A stored key (see judgeKey). */
interface KeyRow {
  stream: string;
  first: number;
  last: number;
  fingerprint: string | null;
  answer: string | null;
}

const keyRow = (row: { stream: string; first: string; last: string; fingerprint: string | null; answer: string | null }): KeyRow => ({
  stream: row.stream,
  first: Number(row.first),
  last: Number(row.last),
  fingerprint: row.fingerprint,
  answer: row.answer,
});

/** Where a key lives: its namespace, and whether that is a caller's scope (1) or the stream (0). */
function keyPlace(stream: string, scope: string | undefined, key: string): [string, number, string] {
  return scope === undefined ? [stream, 0, key] : [scope, 1, key];
}

/** One string per key place, for the maps of a batch (PostgreSQL text holds no NUL, so NUL separates). */
function keyId(p: { stream: string; scope: string | undefined; key: string }): string {
  return p.scope === undefined ? `0\0${p.stream}\0${p.key}` : `1\0${p.scope}\0${p.key}`;
}

const outcomeOf = (judged: AppendResult | StoreError): Outcome => (judged instanceof StoreError ? { ok: false, error: judged } : { ok: true, result: judged, entries: null });

const SNAPSHOTS_KEPT = 4;
const DEFAULT_CHANNEL = 'roost_commits';
const BROADCAST_CHANNEL = 'roost_broadcast';

export interface PostgresOptions {
  /** postgres:// URL. `?schema=name` keeps Roost's tables in that schema (created if missing). */
  url: string;
  /** Connections for reads and writes (the LISTEN connection comes on top). */
  poolSize?: number;
  /**
   * How often the heads are read as a safety net, ms (0: never). A NOTIFY can be
   * lost without the LISTEN connection dropping: a node that dies between its
   * commit and its NOTIFY. Without this, other nodes would learn of that commit
   * only with the stream's next one.
   */
  pollEveryMs?: number;
}

export class PostgresStore implements EventStore {
  readonly kind = 'postgres';
  readonly capabilities = { crossNodeWakeups: true, crossNodeBroadcast: true };
  epoch = '';
  readonly schema: string;
  readonly channel: string;
  /** The lossy broadcast channel (see the file comment). */
  readonly broadcastChannel: string;
  /** This instance, as other nodes' broadcast listeners know it (`from`). */
  readonly node = randomUUID().replace(/-/g, '').slice(0, 12);
  private bus: PgBroadcast;
  private pool: pg.Pool;
  private config: pg.ClientConfig;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private flushing: Promise<void> | null = null;
  /** Heads committed here and not yet sent to the other nodes. */
  private unsent = new Map<string, number>();
  private notifying: Promise<void> | null = null;
  private listeners = new Set<CommitListener>();
  /** The highest head per stream already announced to the listeners by this node. */
  private announced = new Map<string, number>();
  private listenClient: pg.Client | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectDelay = 100;
  private pollTimer: NodeJS.Timeout | null = null;
  private readonly pollEveryMs: number;
  private closed = false;
  /** Counters for tests and /health. */
  readonly stats = { flushes: 0, carefulFlushes: 0, retries: 0, listenReconnects: 0, broadcastsDropped: 0 };

  private constructor(opts: PostgresOptions) {
    const { config, schema, pool } = parseUrl(opts.url);
    this.schema = schema;
    this.channel = schema === 'public' ? DEFAULT_CHANNEL : `${DEFAULT_CHANNEL}_${schema}`;
    this.broadcastChannel = schema === 'public' ? BROADCAST_CHANNEL : `${BROADCAST_CHANNEL}_${schema}`;
    this.config = config;
    this.pollEveryMs = opts.pollEveryMs ?? 5_000;
    this.pool = new pg.Pool({ ...config, max: opts.poolSize ?? pool ?? 10, application_name: `roost:${schema}` });
    // An idle pooled connection that dies must not crash the process; the pool replaces it.
    this.pool.on('error', (e) => console.error('roost: postgres connection lost (pool):', e.message));
    this.bus = new PgBroadcast(this.pool, this.broadcastChannel, this.node, this.stats);
    // This node's commits are indexed right after they commit (see pg-search.ts),
    // handed over by flush itself: not as a commit listener, whom `announce`
    // skips once the heads poll or a NOTIFY read the head first.
    this.searchIndex = new PgSearch(config, (text, values) => this.q(text, values));
  }

  private searchIndex: PgSearch;

  async search(query: SearchQuery): Promise<SearchPage> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    return this.searchIndex.search(query);
  }

  async rebuildSearch(): Promise<number> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    return this.searchIndex.rebuild();
  }

  /** Connects, runs the migrations (once, even when several nodes start together) and starts listening. */
  static async open(url: string, opts: Omit<PostgresOptions, 'url'> = {}): Promise<PostgresStore> {
    const store = new PostgresStore({ url, ...opts });
    try {
      await store.migrate();
      await store.listen();
      store.startPolling();
      // Events stored before this version (or lost to a crash between a commit and its indexing).
      store.searchIndex.backfill().catch((e) => {
        if (!store.closed) console.error('roost: indexing for search failed:', (e as Error).message);
      });
    } catch (cause) {
      await store.searchIndex.close();
      await store.pool.end().catch(() => {});
      throw new StoreError(cause instanceof StoreError ? cause.kind : 'unavailable', `cannot open PostgreSQL store at ${redact(url)}: ${(cause as Error).message}`, { cause });
    }
    return store;
  }

  private async migrate(): Promise<void> {
    this.epoch = await migrate(this.pool, this.schema);
  }

  // ------------------------------------------------------------ appends

  /** Every commit here is synced already (a lazy one too: see below). */
  sync(): Promise<void> {
    return this.closed ? Promise.reject(new StoreError('closed', 'store is closed')) : Promise.resolve();
  }

  /** Every append is synced here, a lazy one too (AppendOptions.lazy allows it): the commit is the database server's. */
  append(stream: string, events: NewEvent[], opts: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreError('closed', 'store is closed'));
    if (events.length === 0) return Promise.reject(new StoreError('bad_input', 'append needs at least one event'));
    const key = opts.idempotencyKey;
    const fingerprint = key === undefined ? undefined : opts.fingerprint;
    const scope = key === undefined ? undefined : opts.scope;
    // Stream names and keys go into SQL text as quoted literals (see begin); PostgreSQL text holds no NUL.
    if (stream.includes('\0') || (key !== undefined && hasNul(key, fingerprint, scope))) {
      return Promise.reject(new StoreError('bad_input', 'stream names, keys, scopes and fingerprints cannot contain NUL'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, events, key, fingerprint, scope, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    // While a flush is in flight, the queue waits for it; it then flushes again at once.
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
        if (this.queue.length) this.scheduleFlush();
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.stats.flushes++;
    let outcomes: Outcome[];
    try {
      outcomes = await this.writeBatch(batch);
    } catch (cause) {
      // Nothing of the batch is acknowledged (a lost COMMIT reply counts as not
      // acknowledged: a retry with the same idempotency key is then safe).
      const e = storeError('append failed', cause);
      for (const p of batch) p.reject(e);
      return;
    }
    // Committed: answer the requests, then wake this node's listeners in order,
    // then the other nodes (outside the transaction, and without holding up the next flush).
    const heads = new Map<string, number>();
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if (o.ok) batch[i].resolve(o.result);
      else batch[i].reject(o.error);
    }
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if (!o.ok || !o.entries) continue;
      const stream = batch[i].stream;
      heads.set(stream, o.result.last);
      // Every committed entry, in commit order, whatever the listeners heard already.
      if (!this.closed && o.entries.length) this.searchIndex.committed(o.entries);
      this.announce(stream, o.result.last, o.entries);
    }
    if (heads.size) this.notify(heads);
  }

  /**
   * Tells the other nodes, after the commit and outside its transaction. One
   * NOTIFY statement is in flight at a time; heads committed meanwhile are
   * merged (only the newest head per stream matters) and sent next.
   */
  private notify(heads: Map<string, number>): void {
    for (const [s, h] of heads) if (h > (this.unsent.get(s) ?? 0)) this.unsent.set(s, h);
    if (this.notifying) return;
    this.notifying = (async () => {
      while (this.unsent.size) {
        const payloads = [...this.unsent].map(([s, h]) => `${s}:${h}`);
        this.unsent.clear();
        await this.pool
          .query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [this.channel, payloads])
          .catch((e) => console.error('roost: NOTIFY failed (other nodes catch up on their next wake-up):', e.message));
      }
      this.notifying = null;
    })();
  }

  /** Writes the batch, redoing it on races and deadlocks, and per request after a failure. */
  private async writeBatch(batch: Pending[]): Promise<Outcome[]> {
    let careful = false;
    for (let tries = 0; ; tries++) {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        if (!careful) return await this.fastWrite(client, batch);
        const outcomes = await this.carefulTx(client, batch);
        await client.query('COMMIT');
        return outcomes;
      } catch (e) {
        // The fast path is one autocommit statement: a failure there left nothing to roll back.
        if (careful) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
        else if (isConnectionError(e)) broken = e as Error;
        if (isConnectionError(e) || tries >= 8) throw e;
        this.stats.retries++;
        if (isKeyRace(e) || RETRYABLE.has((e as { code?: string }).code ?? '')) continue;
        if (careful || batch.length === 1) throw e;
        // One of the requests is bad: redo with a savepoint per request.
        careful = true;
        this.stats.carefulFlushes++;
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * Opens the transaction, locks the batch's streams (in sorted order) and looks
   * up the keys already committed, in one round trip: a simple-protocol query
   * with the names quoted as literals (escapeLiteral), since it cannot take parameters.
   */
  private async begin(client: pg.PoolClient, batch: Pending[]): Promise<{ heads: Map<string, number>; prior: Map<string, KeyRow> }> {
    const streams = [...new Set(batch.map((p) => p.stream))].sort();
    const keyed = batch.filter((p): p is Pending & { key: string } => p.key !== undefined);
    let text =
      'BEGIN; INSERT INTO streams AS s (stream, head) VALUES ' +
      streams.map((st) => `(${client.escapeLiteral(st)}, 0)`).join(', ') +
      ' ON CONFLICT (stream) DO UPDATE SET head = s.head RETURNING stream, head';
    if (keyed.length) {
      const places = keyed.map((p) => {
        const [ns, scoped, key] = keyPlace(p.stream, p.scope, p.key);
        return `(${client.escapeLiteral(ns)}, ${scoped}, ${client.escapeLiteral(key)})`;
      });
      text += `; SELECT scope, scoped, key, stream, first, last, fingerprint, answer FROM idempotency WHERE (scope, scoped, key) IN (${places.join(', ')})`;
    }
    const results = (await client.query(text)) as unknown as pg.QueryResult[];
    const heads = new Map<string, number>(results[1].rows.map((row) => [row.stream as string, Number(row.head)]));
    const prior = new Map<string, KeyRow>();
    if (keyed.length) for (const row of results[2].rows) prior.set(rowId(row), keyRow(row));
    return { heads, prior };
  }

  /** The prior rows of the batch's keys, by keyId. */
  private async priorKeys(client: pg.PoolClient, batch: Pending[]): Promise<Map<string, KeyRow>> {
    const prior = new Map<string, KeyRow>();
    const ns: string[] = [];
    const scoped: number[] = [];
    const keys: string[] = [];
    for (const p of batch) {
      if (p.key === undefined) continue;
      const place = keyPlace(p.stream, p.scope, p.key);
      ns.push(place[0]);
      scoped.push(place[1]);
      keys.push(place[2]);
    }
    if (keys.length === 0) return prior;
    const r = await client.query(
      `SELECT i.scope, i.scoped, i.key, i.stream, i.first, i.last, i.fingerprint, i.answer
         FROM idempotency i JOIN unnest($1::text[], $2::smallint[], $3::text[]) AS u(s, d, k) ON i.scope = u.s AND i.scoped = u.d AND i.key = u.k`,
      [ns, scoped, keys],
    );
    for (const row of r.rows) prior.set(rowId(row), keyRow(row));
    return prior;
  }

  /**
   * The whole batch as one autocommit statement, so a stream's row lock is held
   * only while that statement runs and commits: it moves the heads (locking the
   * rows, in sorted order), inserts the events and keys at positions counted
   * from the locked heads, and fails as a whole if another node committed one of
   * the keys meanwhile. Throws if any request is bad (the batch is then redone
   * per request).
   */
  private async fastWrite(client: pg.PoolClient, batch: Pending[]): Promise<Outcome[]> {
    const at = Date.now();
    const prior = await this.priorKeys(client, batch);
    // Plan: positions relative to each stream's head (1, 2, ...), fixed once the heads are known.
    const count = new Map<string, number>();
    const plans: ({ done: AppendResult | StoreError } | { dupOf: number } | { stream: string; rel: number; n: number })[] = [];
    /** The batch's own keys: keyId -> the index of the request that writes it. */
    const ownKey = new Map<string, number>();
    const ev = { stream: [] as string[], rel: [] as number[], type: [] as string[], body: [] as string[] };
    const k = {
      ns: [] as string[],
      scoped: [] as number[],
      key: [] as string[],
      stream: [] as string[],
      first: [] as number[],
      last: [] as number[],
      fingerprint: [] as (string | null)[],
    };
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i];
      const id = p.key !== undefined ? keyId(p as Pending & { key: string }) : undefined;
      const row = id !== undefined ? prior.get(id) : undefined;
      if (row) {
        plans.push({ done: judgeKey(row, p.stream, p.fingerprint) });
        continue;
      }
      const owner = id !== undefined ? ownKey.get(id) : undefined;
      if (owner !== undefined) {
        // Written earlier in this batch: judged like a committed key (its positions are known below).
        const o = batch[owner];
        const judged = judgeKey({ stream: o.stream, first: 0, last: 0, fingerprint: o.fingerprint ?? null, answer: null }, p.stream, p.fingerprint);
        plans.push(judged instanceof StoreError ? { done: judged } : { dupOf: owner });
        continue;
      }
      const rel = (count.get(p.stream) ?? 0) + 1;
      count.set(p.stream, rel + p.events.length - 1);
      for (let j = 0; j < p.events.length; j++) {
        ev.stream.push(p.stream);
        ev.rel.push(rel + j);
        ev.type.push(p.events[j].type);
        ev.body.push(p.events[j].body);
      }
      if (id !== undefined) {
        ownKey.set(id, i);
        const [ns, scoped, key] = keyPlace(p.stream, p.scope, p.key!);
        k.ns.push(ns);
        k.scoped.push(scoped);
        k.key.push(key);
        k.stream.push(p.stream);
        k.first.push(rel);
        k.last.push(rel + p.events.length - 1);
        k.fingerprint.push(p.fingerprint ?? null);
      }
      plans.push({ stream: p.stream, rel, n: p.events.length });
    }
    const base = new Map<string, number>();
    if (count.size) {
      const streams = [...count.keys()].sort();
      // Named: prepared once per connection, so each flush skips parsing and planning.
      const r = await client.query<{ stream: string; base: string }>({
        name: 'roost_append',
        text: `WITH c AS (
           SELECT * FROM unnest($1::text[], $2::bigint[]) AS c(stream, n)
         ), h AS (
           INSERT INTO streams AS s (stream, head) SELECT stream, n FROM c ORDER BY stream
           ON CONFLICT (stream) DO UPDATE SET head = s.head + EXCLUDED.head
           RETURNING stream, head
         ), b AS (
           SELECT h.stream, h.head - c.n AS base FROM h JOIN c USING (stream)
         ), e AS (
           INSERT INTO events (stream, position, type, body, at)
             SELECT u.s, b.base + u.r, u.t, u.b, $7 FROM unnest($3::text[], $4::bigint[], $5::text[], $6::text[]) AS u(s, r, t, b) JOIN b ON b.stream = u.s
         ), k AS (
           INSERT INTO idempotency (scope, scoped, key, stream, first, last, at, fingerprint)
             SELECT u.ns, u.d, u.k, u.s, b.base + u.f, b.base + u.l, $7, u.fp
               FROM unnest($8::text[], $9::smallint[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::text[]) AS u(ns, d, k, s, f, l, fp)
               JOIN b ON b.stream = u.s
           ON CONFLICT (scope, scoped, key) DO NOTHING
           RETURNING 1
         )
         SELECT b.stream, b.base FROM b WHERE roost_assert((SELECT count(*) FROM k) = $15, 'roost: key race')`,
        values: [
          streams,
          streams.map((st) => count.get(st)!),
          ev.stream,
          ev.rel,
          ev.type,
          ev.body,
          at,
          k.ns,
          k.scoped,
          k.key,
          k.stream,
          k.first,
          k.last,
          k.fingerprint,
          k.key.length,
        ],
      });
      for (const row of r.rows) base.set(row.stream, Number(row.base));
    }
    const outcomes: Outcome[] = [];
    for (let i = 0; i < batch.length; i++) {
      const plan = plans[i];
      if ('done' in plan) outcomes.push(outcomeOf(plan.done));
      else if ('dupOf' in plan) {
        const o = outcomes[plan.dupOf] as { result: AppendResult };
        outcomes.push({ ok: true, result: { ...o.result, duplicate: true }, entries: null });
      } else {
        const first = base.get(plan.stream)! + plan.rel;
        const p = batch[i];
        const entries = p.events.map((e, j) => ({ stream: p.stream, position: first + j, type: e.type, body: e.body, at }));
        outcomes.push({ ok: true, result: { first, last: first + plan.n - 1, duplicate: false }, entries });
      }
    }
    return outcomes;
  }

  /** One savepoint per request: a bad request is rejected alone, the others commit. */
  private async carefulTx(client: pg.PoolClient, batch: Pending[]): Promise<Outcome[]> {
    const at = Date.now();
    const { heads, prior } = await this.begin(client, batch);
    const outcomes: Outcome[] = [];
    const changed = new Set<string>();
    for (const p of batch) {
      const id = p.key !== undefined ? keyId(p as Pending & { key: string }) : undefined;
      const row = id !== undefined ? prior.get(id) : undefined;
      if (row) {
        outcomes.push(outcomeOf(judgeKey(row, p.stream, p.fingerprint)));
        continue;
      }
      const first = heads.get(p.stream)! + 1;
      const last = first + p.events.length - 1;
      await client.query('SAVEPOINT r');
      try {
        if (id !== undefined) {
          const place = keyPlace(p.stream, p.scope, p.key!);
          const k = await client.query(
            'INSERT INTO idempotency (scope, scoped, key, stream, first, last, at, fingerprint) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (scope, scoped, key) DO NOTHING RETURNING 1',
            [...place, p.stream, first, last, at, p.fingerprint ?? null],
          );
          if (k.rowCount === 0) {
            // Another node committed this key while we waited: judge against its row.
            await client.query('ROLLBACK TO SAVEPOINT r');
            const w = await client.query('SELECT stream, first, last, fingerprint, answer FROM idempotency WHERE scope = $1 AND scoped = $2 AND key = $3', place);
            const won = keyRow(w.rows[0]);
            prior.set(id, won);
            outcomes.push(outcomeOf(judgeKey(won, p.stream, p.fingerprint)));
            continue;
          }
        }
        await client.query(
          `INSERT INTO events (stream, position, type, body, at)
             SELECT $1, $2::bigint + o - 1, t, b, $5 FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(t, b, o)`,
          [p.stream, first, p.events.map((e) => e.type), p.events.map((e) => e.body), at],
        );
        await client.query('RELEASE SAVEPOINT r');
      } catch (error) {
        // A lost connection or a deadlock is the batch's problem, not this request's: redo it all.
        if (isConnectionError(error) || RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
        await client.query('ROLLBACK TO SAVEPOINT r');
        outcomes.push({ ok: false, error: storeError('append failed', error) });
        continue;
      }
      heads.set(p.stream, last);
      changed.add(p.stream);
      const entries = p.events.map((e, i) => ({ stream: p.stream, position: first + i, type: e.type, body: e.body, at }));
      if (id !== undefined) prior.set(id, { stream: p.stream, first, last, fingerprint: p.fingerprint ?? null, answer: null });
      outcomes.push({ ok: true, result: { first, last, duplicate: false }, entries });
    }
    if (changed.size) {
      const streams = [...changed];
      await client.query('UPDATE streams AS st SET head = u.h FROM unnest($1::text[], $2::bigint[]) AS u(s, h) WHERE st.stream = u.s', [
        streams,
        streams.map((s) => heads.get(s)!),
      ]);
    }
    return outcomes;
  }

  // ------------------------------------------------------------ keys

  async findKey(stream: string, opts: AppendOptions & { idempotencyKey: string }): Promise<AppendResult | null> {
    const key = opts.idempotencyKey;
    if (hasNul(stream, key, opts.fingerprint, opts.scope)) return null; // no such key can have been stored
    const r = await this.q<{ stream: string; first: string; last: string; fingerprint: string | null; answer: string | null }>(
      'SELECT stream, first, last, fingerprint, answer FROM idempotency WHERE scope = $1 AND scoped = $2 AND key = $3',
      keyPlace(stream, opts.scope, key),
    );
    if (r.rows.length === 0) return null;
    const judged = judgeKey(keyRow(r.rows[0]), stream, opts.fingerprint);
    if (judged instanceof StoreError) throw judged;
    return judged;
  }

  async keepAnswer(stream: string, opts: AppendOptions & { idempotencyKey: string }, answer: string): Promise<boolean> {
    if (hasNul(stream, opts.idempotencyKey, opts.scope)) return false;
    if (answer.includes('\0')) throw new StoreError('bad_input', 'an answer cannot contain NUL');
    const place = keyPlace(stream, opts.scope, opts.idempotencyKey);
    // Kept if none was; either way, true when the key is this stream's and has an answer now.
    const r = await this.q<{ n: string }>(
      `WITH u AS (
         UPDATE idempotency SET answer = $4 WHERE scope = $1 AND scoped = $2 AND key = $3 AND stream = $5 AND answer IS NULL RETURNING 1
       )
       SELECT (SELECT count(*) FROM u) + (SELECT count(*) FROM idempotency WHERE scope = $1 AND scoped = $2 AND key = $3 AND stream = $5 AND answer IS NOT NULL) AS n`,
      [...place, answer, stream],
    );
    return Number(r.rows[0].n) > 0;
  }

  // ------------------------------------------------------------ reads

  async read(stream: string, after: number, limit = 10_000): Promise<LogEntry[]> {
    const r = await this.q<{ stream: string; position: string; type: string; body: string; at: string }>(
      'SELECT stream, position, type, body, at FROM events WHERE stream = $1 AND position > $2 ORDER BY position LIMIT $3',
      [stream, after, limit],
      'roost_read',
    );
    return r.rows.map((row) => ({ stream: row.stream, position: Number(row.position), type: row.type, body: row.body, at: Number(row.at) }));
  }

  async head(stream: string): Promise<number> {
    const r = await this.q<{ head: string }>('SELECT head FROM streams WHERE stream = $1', [stream], 'roost_head');
    return r.rows.length ? Number(r.rows[0].head) : 0;
  }

  async putSnapshot(stream: string, position: number, state: string, opts?: { history?: boolean }): Promise<void> {
    await this.q(
      'INSERT INTO snapshots (stream, position, state, at) VALUES ($1, $2, $3, $4) ON CONFLICT (stream, position) DO UPDATE SET state = EXCLUDED.state, at = EXCLUDED.at',
      [stream, position, state, Date.now()],
    );
    // Keeps the newest few (the one just written among them, unless newer ones exist); history is kept for good.
    if (opts?.history === true) return;
    await this.q(
      `DELETE FROM snapshots WHERE stream = $1 AND position <
         (SELECT min(position) FROM (SELECT position FROM snapshots WHERE stream = $1 ORDER BY position DESC LIMIT $2) AS t)`,
      [stream, SNAPSHOTS_KEPT],
    );
  }

  async getSnapshot(stream: string, atOrBefore = Number.MAX_SAFE_INTEGER): Promise<Snapshot | null> {
    const r = await this.q<{ position: string; state: string }>(
      'SELECT position, state FROM snapshots WHERE stream = $1 AND position <= $2 ORDER BY position DESC LIMIT 1',
      [stream, atOrBefore],
    );
    return r.rows.length ? { position: Number(r.rows[0].position), state: r.rows[0].state } : null;
  }

  /** A read or snapshot query on the pool; `name` prepares it once per connection (for the frequent ones). */
  private async q<R extends pg.QueryResultRow>(text: string, values: unknown[], name?: string): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    try {
      return await this.pool.query<R>({ text, values, name });
    } catch (cause) {
      throw storeError('query failed', cause);
    }
  }

  // ------------------------------------------------------------ wake-ups

  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls the listeners unless they already heard of this head (or a later one) from this node. */
  private announce(stream: string, head: number, entries: LogEntry[] | null): void {
    // A closed store calls no one: its listeners' owners are gone or going.
    if (this.closed || head <= (this.announced.get(stream) ?? 0)) return;
    this.announced.set(stream, head);
    for (const l of this.listeners) {
      try {
        l(stream, head, entries);
      } catch (e) {
        console.error('roost: commit listener failed', e);
      }
    }
  }

  private async listen(): Promise<void> {
    const c = new pg.Client({ ...this.config, application_name: `roost-listen:${this.schema}`, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    let lost = false;
    const onLost = (e?: Error) => {
      if (lost) return;
      lost = true;
      if (this.listenClient === c) this.listenClient = null;
      c.end().catch(() => {});
      if (this.closed) return;
      console.error(`roost: lost the LISTEN connection${e ? ` (${e.message})` : ''}; reconnecting`);
      this.scheduleReconnect();
    };
    c.on('error', onLost);
    c.on('end', () => onLost());
    c.on('notification', (msg) => {
      if (msg.channel === this.broadcastChannel) return void (this.closed || this.bus.heard(msg.payload ?? ''));
      if (msg.channel !== this.channel || !msg.payload) return;
      const i = msg.payload.lastIndexOf(':');
      const head = Number(msg.payload.slice(i + 1));
      if (i <= 0 || !Number.isSafeInteger(head)) return;
      this.announce(msg.payload.slice(0, i), head, null);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${ident(this.channel)}; LISTEN ${ident(this.broadcastChannel)}`);
    } catch (e) {
      lost = true;
      c.end().catch(() => {});
      throw e;
    }
    if (this.closed) {
      lost = true;
      await c.end().catch(() => {});
      return;
    }
    this.listenClient = c;
  }

  // ------------------------------------------------------------ broadcast

  broadcast(topic: string, payload: string): void {
    checkBroadcast(topic, payload);
    if (!this.closed) this.bus.send(topic, payload);
  }

  onBroadcast(listener: BroadcastListener): () => void {
    return this.bus.on(listener);
  }

  /** Announces every stream's committed head; the listeners read whatever they have not folded. */
  private async announceHeads(): Promise<void> {
    const r = await this.pool.query<{ stream: string; head: string }>('SELECT stream, head FROM streams WHERE head > 0');
    for (const row of r.rows) this.announce(row.stream, Number(row.head), null);
  }

  private startPolling(): void {
    if (this.pollEveryMs <= 0) return;
    let busy = false;
    this.pollTimer = setInterval(() => {
      if (busy || this.closed) return;
      busy = true;
      this.announceHeads()
        .catch((e) => console.error('roost: reading the heads failed:', (e as Error).message))
        .finally(() => (busy = false));
    }, this.pollEveryMs);
    this.pollTimer.unref();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.closed) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, 5_000);
    this.reconnectTimer = setTimeout(() => void this.reconnect(), delay);
    this.reconnectTimer.unref?.();
  }

  private async reconnect(): Promise<void> {
      this.reconnectTimer = null;
      if (this.closed) return;
      try {
        await this.listen();
        this.reconnectDelay = 100;
        this.stats.listenReconnects++;
        // Listening again; whatever was committed while we were deaf shows in the
        // heads read now, and anything later arrives as a notification.
        await this.announceHeads();
      } catch (e) {
        console.error('roost: LISTEN reconnect failed:', (e as Error).message);
        if (this.listenClient) return; // listening, only the catch-up read failed: the next wake-up reads anyway
        this.scheduleReconnect();
      }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let queued appends land before closing.
    while (this.flushing || this.queue.length || this.flushScheduled) {
      if (this.flushing) await this.flushing;
      else await new Promise((r) => setImmediate(r));
    }
    if (this.notifying) await this.notifying;
    await this.searchIndex.settled();
    // What was broadcast before close (a node's goodbye) leaves before the pool ends.
    await this.bus.settled();
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    const c = this.listenClient;
    this.listenClient = null;
    await c?.end().catch(() => {});
    await this.searchIndex.close();
    await this.pool.end();
  }

  /** The backend pid of the LISTEN connection (for tests that cut it). */
  get listenerPid(): number | null {
    return (this.listenClient as unknown as { processID?: number } | null)?.processID ?? null;
  }
}

/** True when one of the strings holds a NUL (PostgreSQL text cannot). */
function hasNul(...values: (string | undefined)[]): boolean {
  for (const v of values) if (v !== undefined && v.includes('\0')) return true;
  return false;
}

/** keyId of a row read back from the idempotency table. */
function rowId(row: { scope: string; scoped: number | string; key: string }): string {
  return `${Number(row.scoped)}\0${row.scope}\0${row.key}`;
}
