// The embedded store: one SQLite file, WAL, synchronous=FULL, group commit.
//
// Group commit: `append` only queues. The first append of an event-loop turn
// schedules one flush (setImmediate); the flush writes every queued request in
// one transaction and commits once (one fsync), and only then answers the
// requests and (a microtask later, in the same turn) calls the commit
// listeners, in order. Gathering: while the queue holds an append that is
// not lazy (its commit pays an fsync), the flush waits one more turn as long
// as the last turn brought more appends, for at most `gatherMs` (1 ms by
// default) after the first: under many writers one fsync then serves more of
// them (single-event ingest at 64 connections: 42 → 58 requests per commit),
// and a lone append waits one turn of an idle loop. A queue of lazy appends
// only is flushed at once (its commit does not fsync). How a batch is written
// (multi-row inserts across requests, a savepoint per request only when the
// batch fails): src/storage/sqlite-batch.ts.
//
// Lazy appends (AppendOptions.lazy): a batch of only lazy requests commits
// with synchronous=NORMAL: its WAL frames are written (so a SIGKILL of this
// process loses nothing) but not fsynced. The next synced commit fsyncs the
// WAL and with it every frame before it; when none comes within LAZY_SYNC_MS,
// a timer makes them durable the way `sync()` does, so a crash of the machine
// loses at most that much of what was lazy. A batch with any synced request
// is synced. `sync()` makes the lazy commits so far durable without blocking
// the event loop: one `fdatasync` of the WAL file at a time on libuv's pool
// (a file's fsync covers the frames every descriptor wrote), its waiters
// answered when it returns, later ones by the next; should it fail, one synced
// row (of `meta`) on the loop. The lazy commits count up (`lazyGen`); a synced
// commit, a synced row or a finished `fdatasync` moves what is known durable
// (`durableGen`) up to the count it covers.
//
// Checkpoints: not in the commits. A worker thread with its own connection
// copies the WAL into the database file, and the main connection only
// finishes each round between commits (sqlite-checkpoint.ts).
//
// Broadcast: SQLite is one process, so there is no other node to reach.
// `broadcast` checks its arguments like every backend and sends nothing; no
// broadcast listener is ever called (the sender's own never are, on any backend).

import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { fdatasync, mkdirSync, openSync, closeSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BatchWriter, configure, type WriteOutcome, type WriteRequest } from './sqlite-batch.js';
import { CHECKPOINT_DEFAULTS, Checkpointer, type CheckpointOptions } from './sqlite-checkpoint.js';
import { openSearchIndex, type SearchIndex } from './sqlite-search-host.js';
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
  type StoreErrorKind,
  LAZY_SYNC_MS,
} from './types.js';

interface Pending extends WriteRequest {
  events: NewEvent[];
  lazy: boolean;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

const MIGRATIONS = [
  `CREATE TABLE events (
     stream TEXT NOT NULL,
     position INTEGER NOT NULL,
     type TEXT NOT NULL,
     body TEXT NOT NULL,
     at INTEGER NOT NULL,
     PRIMARY KEY (stream, position)
   ) WITHOUT ROWID;
   CREATE TABLE idempotency (
     key TEXT PRIMARY KEY,
     stream TEXT NOT NULL,
     first INTEGER NOT NULL,
     last INTEGER NOT NULL,
     at INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE snapshots (
     stream TEXT NOT NULL,
     position INTEGER NOT NULL,
     state TEXT NOT NULL,
     at INTEGER NOT NULL,
     PRIMARY KEY (stream, position)
   ) WITHOUT ROWID;`,
  // 2: keys scoped in the store. A key lives in a namespace: `scope` is the
  // stream (scoped = 0) or a caller's scope (scoped = 1), so the two kinds never
  // meet. `fingerprint` tells a retry from a different request with the same
  // key; `answer` is the first request's answer, kept by the service
  // (EventStore.keepAnswer). Before this, keys were global and each caller
  // prefixed its own by hand, most of them with `<stream>:`; such a key moves
  // into its stream's namespace without that prefix, so a request sent before
  // the upgrade and retried after it is still recognised. A key of another
  // shape keeps its text in its stream's namespace (no new key has that shape
  // in practice: it is simply never matched again). No two old keys can meet
  // (they were unique as a whole); should two meet after the prefix is cut, the
  // older is kept.
  `CREATE TABLE idempotency_scoped (
     scope TEXT NOT NULL,
     scoped INTEGER NOT NULL,
     key TEXT NOT NULL,
     stream TEXT NOT NULL,
     first INTEGER NOT NULL,
     last INTEGER NOT NULL,
     at INTEGER NOT NULL,
     fingerprint TEXT,
     answer TEXT,
     PRIMARY KEY (scope, scoped, key)
   ) WITHOUT ROWID;
   INSERT OR IGNORE INTO idempotency_scoped (scope, scoped, key, stream, first, last, at)
     SELECT stream, 0,
            CASE WHEN length(key) > length(stream) + 1 AND substr(key, 1, length(stream) + 1) = stream || ':'
                 THEN substr(key, length(stream) + 2) ELSE key END,
            stream, first, last, at
     FROM idempotency ORDER BY at, stream, first;
   DROP TABLE idempotency;
   ALTER TABLE idempotency_scoped RENAME TO idempotency;`,
  // 3 and 4 put the full-text index in this file; it has a file of its own now (sqlite-search.ts).
  'SELECT 1',
  'SELECT 1',
  // 5: what 3 and 4 made here goes; the index's own file is filled from the log at open.
  `DROP TABLE IF EXISTS search_fts;
   DROP TABLE IF EXISTS search_docs;
   DROP TABLE IF EXISTS search_heads;`,
];

/** A driver error's kind: what a retry later may fix ('unavailable'), what the caller sent, or neither. */
function kindOf(e: unknown): StoreErrorKind {
  if (e instanceof StoreError) return e.kind;
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL|CORRUPT|NOTADB)/.test(code)) return 'unavailable';
  if (/^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code) || e instanceof TypeError) return 'bad_input';
  return 'internal';
}

/** A failed append's error: the store's own as it is, a driver's wrapped with its kind. */
function appendError(e: unknown): StoreError {
  return e instanceof StoreError ? e : new StoreError(kindOf(e), `append failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

export interface SqliteOptions {
  /** File path, or ':memory:' for tests that need no durability. */
  path: string;
  /** How the WAL is checkpointed (sqlite-checkpoint.ts); the defaults suit a server. */
  checkpoints?: Partial<CheckpointOptions>;
  /** How long (ms) a flush with an append that is not lazy may wait for more appends (see the file comment); 1 by default. */
  gatherMs?: number;
  /**
   * 'commit' (the default): the search index is kept current right after each
   * commit. 'search': only a search indexes, catching up its project's
   * streams first (the same catch-up), so ingest pays nothing for the index:
   * bench/ingest-index.ts compares the two (`ROOST_SEARCH_INDEX=search`).
   */
  searchIndex?: 'commit' | 'search';
}

export class SqliteStore implements EventStore {
  readonly kind = 'sqlite';
  readonly capabilities = { crossNodeWakeups: false, crossNodeBroadcast: false };
  readonly epoch: string;
  private db: Database.Database;
  private writer: BatchWriter;
  private queue: Pending[] = [];
  private flushScheduled = false;
  /** Gathering (see the file comment): whether the queue holds an append that is not lazy, when its first came, its length at the last turn. */
  private queueSynced = false;
  private queuedAt = 0;
  private queueSeen = 0;
  private readonly gatherMs: number;
  private listeners = new Set<CommitListener>();
  private closed = false;
  /** What the connection's `synchronous` is now: FULL (configure() leaves it so) or NORMAL (see synchronous()). */
  private full = true;
  /** Lazy commits not yet fsynced: the timer that syncs them. */
  private syncTimer: NodeJS.Timeout | null = null;
  /** Lazy commits so far, and how many of them are known durable (see the file comment). */
  private lazyGen = 0;
  private durableGen = 0;
  private syncWaiters: { gen: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  /** The `fdatasync` in flight, if any (resolves when it returned, whatever it answered). */
  private datasyncing: Promise<void> | null = null;
  /** The WAL file, opened read-only for its fsyncs (null until the first; none for ':memory:'). */
  private walFd: number | null = null;
  private readonly walPath: string | null;
  /** WAL checkpoints on a worker thread (sqlite-checkpoint.ts); none for ':memory:'. */
  private checkpoints: Checkpointer | null = null;
  /** The checkpointer's counters (tests and benches). */
  get checkpointStats(): Checkpointer['stats'] | null {
    return this.checkpoints?.stats ?? null;
  }
  private stmts: {
    read: Database.Statement;
    snapGet: Database.Statement;
    synced: Database.Statement;
  };

  constructor(opts: SqliteOptions) {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    this.walPath = opts.path === ':memory:' ? null : `${opts.path}-wal`;
    this.gatherMs = opts.gatherMs ?? 1;
    try {
      this.db = new Database(opts.path);
    } catch (cause) {
      throw new StoreError('unavailable', `cannot open SQLite database at ${opts.path}`, { cause });
    }
    configure(this.db);
    this.migrate();
    this.epoch = this.loadEpoch();
    this.stmts = {
      read: this.db.prepare('SELECT stream, position, type, body, at FROM events WHERE stream = ? AND position > ? ORDER BY position LIMIT ?'),
      snapGet: this.db.prepare('SELECT position, state FROM snapshots WHERE stream = ? AND position <= ? ORDER BY position DESC LIMIT 1'),
      synced: this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('synced', ?)"),
    };
    this.writer = new BatchWriter(this.db);
    if (opts.path !== ':memory:') this.checkpoints = new Checkpointer(this.db, opts.path, { ...CHECKPOINT_DEFAULTS, ...opts.checkpoints });
    // The search index: a file of its own, written by worker threads (sqlite-search.ts, sqlite-search-host.ts).
    this.searchIndex = openSearchIndex({ db: this.db, path: opts.path, epoch: this.epoch, followCommits: opts.searchIndex !== 'search' });
    if (opts.searchIndex !== 'search') this.listeners.add((stream, _head, entries) => this.searchIndex.moved(stream, entries?.length ?? 1));
  }

  private searchIndex: SearchIndex;

  async search(query: SearchQuery): Promise<SearchPage> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    return this.searchIndex.search(query);
  }

  async rebuildSearch(): Promise<number> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    return this.searchIndex.rebuild();
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined;
    let version = row ? Number(row.value) : 0;
    const tx = this.db.transaction(() => {
      for (; version < MIGRATIONS.length; version++) this.db.exec(MIGRATIONS[version]);
      this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)").run(String(version));
    });
    tx.immediate();
  }

  private loadEpoch(): string {
    const tx = this.db.transaction(() => {
      const row = this.db.prepare("SELECT value FROM meta WHERE key = 'epoch'").get() as { value: string } | undefined;
      if (row) return row.value;
      const epoch = randomUUID().slice(0, 8);
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('epoch', ?)").run(epoch);
      return epoch;
    });
    return tx.immediate();
  }

  append(stream: string, events: NewEvent[], opts: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreError('closed', 'store is closed'));
    if (events.length === 0) return Promise.reject(new StoreError('bad_input', 'append needs at least one event'));
    const key = opts.idempotencyKey;
    const lazy = opts.lazy === true && key === undefined;
    return new Promise((resolve, reject) => {
      this.queue.push({
        stream,
        at: 0,
        events,
        key,
        fingerprint: key === undefined ? undefined : opts.fingerprint,
        scope: key === undefined ? undefined : opts.scope,
        lazy,
        resolve,
        reject,
      });
      if (!lazy) this.queueSynced = true;
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.queuedAt = performance.now();
        this.queueSeen = 0;
        setImmediate(this.turn);
      }
    });
  }

  /** The scheduled flush's turn: flushes, or waits one more turn while a synced queue still grows (see the file comment). */
  private turn = (): void => {
    if (this.queueSynced && this.queue.length > this.queueSeen && performance.now() - this.queuedAt < this.gatherMs) {
      this.queueSeen = this.queue.length;
      setImmediate(this.turn);
      return;
    }
    this.flush();
  };

  /** Writes every queued append in one transaction; see the file comment. */
  private flush(): void {
    this.flushScheduled = false;
    this.queueSynced = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const at = Date.now();
    let lazy = true;
    for (const p of batch) {
      p.at = at;
      if (!p.lazy) lazy = false;
    }
    let outcomes: WriteOutcome[];
    try {
      // Measured: with an fsync per flock step, fsyncs were 73% of an item's time (docs/flock.md, "Lazy steps").
      this.synchronous(!lazy);
      outcomes = this.writer.write(batch);
    } catch (error) {
      const e = appendError(error);
      for (const p of batch) p.reject(e);
      return;
    }
    if (!lazy) this.durable(this.lazyGen);
    else this.lazyCommitted();
    // Committed: answer the requests, then (a microtask later, still in this
    // turn) wake the listeners, in order. The answers go first: they are what
    // the callers wait for, and the folding can follow them.
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if ('error' in o) batch[i].reject(appendError(o.error));
      else batch[i].resolve(o);
    }
    if (this.listeners.size > 0) queueMicrotask(() => this.deliver(batch, outcomes));
    this.checkpoints?.committed();
  }

  /**
   * The connection's `synchronous` for the next write: FULL (its commit
   * fsyncs the WAL) or NORMAL (a lazy batch: no fsync). Set only when it
   * changes, so a run of lazy batches (the flock's flights) or of synced ones
   * (ingest) pays for no pragma. A checkpoint syncs the same in both modes.
   *
   * Through `db.pragma`, compiled each time: SQLite applies this pragma when
   * it compiles the statement, not when it runs, so a statement prepared
   * once takes effect only from its second run on (it expires itself and is
   * compiled again): the first lazy batch of a store was synced.
   */
  private synchronous(full: boolean): void {
    if (full === this.full) return;
    this.db.pragma(full ? 'synchronous = FULL' : 'synchronous = NORMAL');
    this.full = full;
  }

  private clearSync(): void {
    if (!this.syncTimer) return;
    clearTimeout(this.syncTimer);
    this.syncTimer = null;
  }

  /** The lazy commits up to `gen` are durable: answers the waiters it covers; none left undurable, no timer. */
  private durable(gen: number): void {
    if (gen > this.durableGen) this.durableGen = gen;
    if (this.durableGen >= this.lazyGen) this.clearSync();
    if (this.syncWaiters.length === 0) return;
    const still = [];
    for (const w of this.syncWaiters) {
      if (w.gen <= this.durableGen) w.resolve();
      else still.push(w);
    }
    this.syncWaiters = still;
  }

  /**
   * The timer's sync of the lazy commits so far: the same `fdatasync` of the
   * WAL as `sync()`, off the event loop (a synced commit here was an fsync on
   * the loop every LAZY_SYNC_MS under steady lazy writing); a synced commit
   * only when that fails.
   */
  private syncNow = (): void => {
    this.syncTimer = null;
    if (!this.closed) this.sync().catch(() => undefined);
  };

  /** How the store made its lazy commits durable so far (tests): fdatasyncs of the WAL, and synced rows on the loop. */
  readonly syncStats = { datasyncs: 0, syncedRows: 0 };

  /** One synced row of `meta`, on the event loop; false when it failed (logged). */
  private syncRow(): boolean {
    const gen = this.lazyGen;
    try {
      this.synchronous(true);
      this.stmts.synced.run(String(Date.now()));
      this.syncStats.syncedRows++;
      this.durable(gen);
      return true;
    } catch (e) {
      console.error('roost: syncing lazy appends failed', e);
      return false;
    }
  }

  sync(): Promise<void> {
    if (this.closed) return Promise.reject(new StoreError('closed', 'store is closed'));
    const gen = this.lazyGen;
    if (this.durableGen >= gen || this.walPath === null) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.syncWaiters.push({ gen, resolve, reject });
      this.datasync();
    });
  }

  /** Starts an `fdatasync` of the WAL for the waiters, unless one is in flight (its end starts the next). */
  private datasync(): void {
    if (this.datasyncing || this.syncWaiters.length === 0) return;
    const gen = this.lazyGen;
    let fd: number;
    try {
      fd = this.walFd ??= openSync(this.walPath!, 'r');
    } catch {
      // No WAL file to open (it exists from the first commit on): the synced row, on the loop.
      this.syncedOrFailed();
      return;
    }
    this.datasyncing = new Promise((done) =>
      fdatasync(fd, (err) => {
        this.datasyncing = null;
        done();
        if (err) this.syncedOrFailed();
        else {
          this.syncStats.datasyncs++;
          this.durable(gen);
        }
        if (!this.closed) this.datasync();
      }),
    );
  }

  /** The fallback: a synced commit on the loop, or the waiters refused when even that fails. */
  private syncedOrFailed(): void {
    if (!this.closed && this.syncRow()) return;
    const e = new StoreError('unavailable', 'syncing the log to disk failed');
    for (const w of this.syncWaiters) w.reject(e);
    this.syncWaiters = [];
  }

  /** Calls the commit listeners with the entries of a committed batch, in position order. */
  private deliver(batch: Pending[], outcomes: WriteOutcome[]): void {
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if ('error' in o || o.duplicate) continue;
      const p = batch[i];
      const entries: LogEntry[] = new Array(p.events.length);
      for (let k = 0; k < p.events.length; k++) {
        const ev = p.events[k];
        entries[k] = { stream: p.stream, position: o.first + k, type: ev.type, body: ev.body, at: p.at, value: ev.value };
      }
      for (const l of this.listeners) {
        try {
          l(p.stream, o.last, entries);
        } catch (e) {
          console.error('roost: commit listener failed', e);
        }
      }
    }
  }

  async findKey(stream: string, opts: AppendOptions & { idempotencyKey: string }): Promise<AppendResult | null> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    return this.writer.findKey(stream, opts.idempotencyKey, opts.fingerprint, opts.scope);
  }

  async keepAnswer(stream: string, opts: AppendOptions & { idempotencyKey: string }, answer: string): Promise<boolean> {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    try {
      this.synchronous(true);
      return this.writer.keepAnswer(stream, opts.idempotencyKey, opts.scope, answer);
    } catch (e) {
      throw new StoreError(kindOf(e), `keeping an answer failed: ${(e as Error).message}`, { cause: e });
    }
  }

  async read(stream: string, after: number, limit = 10_000): Promise<LogEntry[]> {
    return this.stmts.read.all(stream, after, limit) as LogEntry[];
  }

  async head(stream: string): Promise<number> {
    return this.writer.head(stream);
  }

  /**
   * Lazily, like a lazy append (see EventStore.putSnapshot): no fsync on the
   * event loop for what can be folded again. The flock's snapshot (~600 KB
   * with its 500 kept lists) took 15 ms to write synced.
   */
  async putSnapshot(stream: string, position: number, state: string, opts?: { history?: boolean }): Promise<void> {
    this.synchronous(false);
    this.writer.snapshot(stream, position, state, opts?.history === true);
    this.lazyCommitted();
  }

  /** A commit without an fsync: the lazy timer (or the next sync) makes it durable. */
  private lazyCommitted(): void {
    this.lazyGen++;
    this.syncTimer ??= setTimeout(this.syncNow, LAZY_SYNC_MS).unref();
  }

  async getSnapshot(stream: string, atOrBefore = Number.MAX_SAFE_INTEGER): Promise<Snapshot | null> {
    return (this.stmts.snapGet.get(stream, atOrBefore) as Snapshot | undefined) ?? null;
  }

  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One process: nobody else to tell (see the file comment). */
  broadcast(topic: string, payload: string): void {
    checkBroadcast(topic, payload);
  }

  onBroadcast(_listener: BroadcastListener): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Let queued appends land, and their listeners hear of them, before closing.
    if (this.queue.length) this.flush();
    await Promise.resolve();
    await this.searchIndex.close();
    if (this.syncTimer) {
      this.clearSync();
      this.syncRow();
    }
    await this.checkpoints?.close();
    // An fdatasync in flight still uses the descriptor.
    if (this.datasyncing) await this.datasyncing;
    if (this.walFd !== null) closeSync(this.walFd);
    this.walFd = null;
    this.db.close();
    // Closing checkpoints the WAL into the file and syncs it: nothing is left undurable.
    this.durable(this.lazyGen);
  }
}
