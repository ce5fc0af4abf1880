// The embedded store: one SQLite file, WAL, synchronous=FULL, group commit.
//
// Group commit: `append` only queues. The first append of an event-loop turn
// schedules one flush (setImmediate); the flush writes every queued request in
// one transaction, commits once (one fsync), and only then resolves the requests
// and calls the commit listeners. If the batch fails, it is written again with a
// savepoint per request, so one bad request cannot sink the others.

import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  StoreError,
  type AppendOptions,
  type AppendResult,
  type CommitListener,
  type EventStore,
  type LogEntry,
  type NewEvent,
  type Snapshot,
} from './types.js';

interface Pending {
  stream: string;
  events: NewEvent[];
  key: string | undefined;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

const SNAPSHOTS_KEPT = 4;
/** Rows per multi-row INSERT in an append of many events. */
const INSERT_CHUNK = 40;

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
];

export interface SqliteOptions {
  /** File path, or ':memory:' for tests that need no durability. */
  path: string;
}

export class SqliteStore implements EventStore {
  readonly kind = 'sqlite';
  readonly capabilities = { crossNodeWakeups: false };
  readonly epoch: string;
  private db: Database.Database;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private heads = new Map<string, number>();
  private listeners = new Set<CommitListener>();
  private closed = false;
  private stmts: {
    insert: Database.Statement;
    insertChunk: Database.Statement;
    head: Database.Statement;
    read: Database.Statement;
    idemGet: Database.Statement;
    idemPut: Database.Statement;
    snapPut: Database.Statement;
    snapGet: Database.Statement;
    snapPrune: Database.Statement;
  };

  constructor(opts: SqliteOptions) {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    try {
      this.db = new Database(opts.path);
    } catch (cause) {
      throw new StoreError(`cannot open SQLite database at ${opts.path}`, { cause });
    }
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.epoch = this.loadEpoch();
    this.stmts = {
      insert: this.db.prepare('INSERT INTO events (stream, position, type, body, at) VALUES (?, ?, ?, ?, ?)'),
      insertChunk: this.db.prepare(
        'INSERT INTO events (stream, position, type, body, at) VALUES ' + new Array(INSERT_CHUNK).fill('(?, ?, ?, ?, ?)').join(', '),
      ),
      head: this.db.prepare('SELECT COALESCE(MAX(position), 0) AS head FROM events WHERE stream = ?'),
      read: this.db.prepare('SELECT stream, position, type, body, at FROM events WHERE stream = ? AND position > ? ORDER BY position LIMIT ?'),
      idemGet: this.db.prepare('SELECT stream, first, last FROM idempotency WHERE key = ?'),
      idemPut: this.db.prepare('INSERT INTO idempotency (key, stream, first, last, at) VALUES (?, ?, ?, ?, ?)'),
      snapPut: this.db.prepare('INSERT OR REPLACE INTO snapshots (stream, position, state, at) VALUES (?, ?, ?, ?)'),
      snapGet: this.db.prepare('SELECT position, state FROM snapshots WHERE stream = ? AND position <= ? ORDER BY position DESC LIMIT 1'),
      snapPrune: this.db.prepare(
        'DELETE FROM snapshots WHERE stream = ? AND position < (SELECT MIN(position) FROM (SELECT position FROM snapshots WHERE stream = ? ORDER BY position DESC LIMIT ?))',
      ),
    };
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
    if (this.closed) return Promise.reject(new StoreError('store is closed'));
    if (events.length === 0) return Promise.reject(new StoreError('append needs at least one event'));
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, events, key: opts.idempotencyKey, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private headOf(stream: string): number {
    let h = this.heads.get(stream);
    if (h === undefined) {
      h = (this.stmts.head.get(stream) as { head: number }).head;
      this.heads.set(stream, h);
    }
    return h;
  }

  /** Writes every queued append in one transaction; see the file comment. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const at = Date.now();
    const outcomes: ({ ok: true; result: AppendResult; entries: LogEntry[] | null } | { ok: false; error: unknown })[] = [];
    const savedHeads = new Map(this.heads);
    const write = (p: Pending): { result: AppendResult; entries: LogEntry[] | null } => {
      if (p.key !== undefined) {
        const prior = this.stmts.idemGet.get(p.key) as { first: number; last: number } | undefined;
        if (prior) return { result: { first: prior.first, last: prior.last, duplicate: true }, entries: null };
      }
      const first = this.headOf(p.stream) + 1;
      const entries: LogEntry[] = new Array(p.events.length);
      // Rows go in INSERT_CHUNK at a time (one statement call per chunk, not per row).
      let i = 0;
      for (; i + INSERT_CHUNK <= p.events.length; i += INSERT_CHUNK) {
        const params: unknown[] = new Array(INSERT_CHUNK * 5);
        for (let j = 0; j < INSERT_CHUNK; j++) {
          const ev = p.events[i + j];
          const o = j * 5;
          params[o] = p.stream;
          params[o + 1] = first + i + j;
          params[o + 2] = ev.type;
          params[o + 3] = ev.body;
          params[o + 4] = at;
        }
        this.stmts.insertChunk.run(params);
      }
      for (; i < p.events.length; i++) {
        const ev = p.events[i];
        this.stmts.insert.run(p.stream, first + i, ev.type, ev.body, at);
      }
      for (let k = 0; k < p.events.length; k++) {
        const ev = p.events[k];
        entries[k] = { stream: p.stream, position: first + k, type: ev.type, body: ev.body, at, value: ev.value };
      }
      const last = first + p.events.length - 1;
      if (p.key !== undefined) this.stmts.idemPut.run(p.key, p.stream, first, last, at);
      this.heads.set(p.stream, last);
      return { result: { first, last, duplicate: false }, entries };
    };
    // Fast path: the whole batch in one transaction with no savepoints (two
    // statements fewer per request). Should anything fail, the batch is rolled
    // back and written again with a savepoint per request, so that only the
    // failing request is refused.
    const fast = this.db.transaction(() => {
      for (const p of batch) outcomes.push({ ok: true, ...write(p) });
    });
    const one = this.db.transaction(write);
    const careful = this.db.transaction(() => {
      for (const p of batch) {
        const headBefore = this.heads.get(p.stream);
        try {
          // Nested transaction = savepoint: a failing request rolls back alone.
          outcomes.push({ ok: true, ...one(p) });
        } catch (error) {
          if (headBefore === undefined) this.heads.delete(p.stream);
          else this.heads.set(p.stream, headBefore);
          outcomes.push({ ok: false, error: new StoreError('append failed', { cause: error }) });
        }
      }
    });
    try {
      try {
        fast.immediate();
      } catch {
        this.heads = new Map(savedHeads);
        outcomes.length = 0;
        careful.immediate();
      }
    } catch (error) {
      this.heads = savedHeads;
      for (const p of batch) p.reject(new StoreError('append failed', { cause: error }));
      return;
    }
    // Committed: answer the requests, then wake the listeners, in order.
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if (o.ok) batch[i].resolve(o.result);
      else batch[i].reject(o.error);
    }
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if (o.ok && o.entries) for (const l of this.listeners) l(batch[i].stream, o.result.last, o.entries);
    }
  }

  async read(stream: string, after: number, limit = 10_000): Promise<LogEntry[]> {
    return this.stmts.read.all(stream, after, limit) as LogEntry[];
  }

  async head(stream: string): Promise<number> {
    return this.headOf(stream);
  }

  async putSnapshot(stream: string, position: number, state: string): Promise<void> {
    this.db.transaction(() => {
      this.stmts.snapPut.run(stream, position, state, Date.now());
      this.stmts.snapPrune.run(stream, stream, SNAPSHOTS_KEPT);
    })();
  }

  async getSnapshot(stream: string, atOrBefore = Number.MAX_SAFE_INTEGER): Promise<Snapshot | null> {
    return (this.stmts.snapGet.get(stream, atOrBefore) as Snapshot | undefined) ?? null;
  }

  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let queued appends land before closing.
    if (this.queue.length) this.flush();
    this.closed = true;
    this.db.close();
  }
}
