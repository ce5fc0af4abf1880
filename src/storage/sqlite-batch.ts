// The SQLite store's writing half: one group-commit batch in one transaction.
// It holds the positions (the heads) of every stream it has written, so it
// must be the only writer of its database.
//
// One batch = one transaction = one fsync. The fast path writes every request
// without savepoints and puts the rows of all its requests in as few
// multi-row INSERTs as it can (one statement call per up to INSERT_CHUNK rows,
// across requests). Should anything fail, the batch is rolled back and written
// again with a savepoint per request, so a bad request sinks only itself.

import type Database from 'better-sqlite3';
import { StoreError, judgeKey, type AppendResult } from './types.js';

/** One append as the writer sees it. */
export interface WriteRequest {
  stream: string;
  /** Server time of the append, ms (stored with its events). */
  at: number;
  key: string | undefined;
  /** With `key` only (see AppendOptions). */
  fingerprint: string | undefined;
  scope: string | undefined;
  events: { type: string; body: string }[];
}

export type WriteOutcome = AppendResult | { error: unknown };

/** A stored key's row, as judgeKey reads it. */
interface KeyRow {
  stream: string;
  first: number;
  last: number;
  fingerprint: string | null;
  answer: string | null;
}

/**
 * Where a key lives (see the idempotency table in sqlite.ts): its namespace and
 * whether that is a caller's scope (1) or the stream itself (0).
 */
export function keyPlace(stream: string, scope: string | undefined, key: string): [string, number, string] {
  return scope === undefined ? [stream, 0, key] : [scope, 1, key];
}

/** Rows per multi-row INSERT. */
export const INSERT_CHUNK = 40;
const SNAPSHOTS_KEPT = 4;

export class BatchWriter {
  private heads = new Map<string, number>();
  /**
   * The heads the batch being written moved, each with its value before the
   * batch (undefined: not known then), to put back if the batch rolls back:
   * the cost of a batch stays its own size, not the number of streams.
   */
  private moved = new Map<string, number | undefined>();
  private inserts = new Map<number, Database.Statement>();
  private headStmt: Database.Statement;
  private idemGet: Database.Statement;
  private idemPut: Database.Statement;
  private answerPut: Database.Statement;
  private snapPut: Database.Statement;
  private snapPrune: Database.Statement;
  /** Rows of the fast path not inserted yet: stream, position, type, body, at. */
  private rows: unknown[] = [];
  private fast: Database.Transaction<(batch: WriteRequest[], out: WriteOutcome[]) => void>;
  private careful: Database.Transaction<(batch: WriteRequest[], out: WriteOutcome[]) => void>;
  private one: Database.Transaction<(p: WriteRequest) => WriteOutcome>;

  constructor(private db: Database.Database) {
    this.headStmt = db.prepare('SELECT COALESCE(MAX(position), 0) AS head FROM events WHERE stream = ?');
    this.idemGet = db.prepare('SELECT stream, first, last, fingerprint, answer FROM idempotency WHERE scope = ? AND scoped = ? AND key = ?');
    this.idemPut = db.prepare('INSERT INTO idempotency (scope, scoped, key, stream, first, last, at, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    this.answerPut = db.prepare('UPDATE idempotency SET answer = ? WHERE scope = ? AND scoped = ? AND key = ? AND stream = ? AND answer IS NULL');
    this.snapPut = db.prepare('INSERT OR REPLACE INTO snapshots (stream, position, state, at) VALUES (?, ?, ?, ?)');
    this.snapPrune = db.prepare(
      'DELETE FROM snapshots WHERE stream = ? AND position < (SELECT MIN(position) FROM (SELECT position FROM snapshots WHERE stream = ? ORDER BY position DESC LIMIT ?))',
    );
    this.fast = db.transaction((batch: WriteRequest[], out: WriteOutcome[]) => {
      for (const p of batch) out.push(this.writeOne(p, true));
      this.insertRows(this.rows.length / 5);
    });
    this.one = db.transaction((p: WriteRequest) => this.writeOne(p, false));
    this.careful = db.transaction((batch: WriteRequest[], out: WriteOutcome[]) => {
      for (const p of batch) {
        const before = this.heads.get(p.stream);
        try {
          out.push(this.one(p)); // nested transaction = a savepoint of its own
        } catch (e) {
          this.setHead(p.stream, before);
          this.rows = [];
          out.push({ error: e });
        }
      }
    });
  }

  private setHead(stream: string, head: number | undefined): void {
    if (head === undefined) this.heads.delete(stream);
    else this.heads.set(stream, head);
  }

  /** The stream's last position. */
  head(stream: string): number {
    let h = this.heads.get(stream);
    if (h === undefined) {
      h = (this.headStmt.get(stream) as { head: number }).head;
      this.heads.set(stream, h);
    }
    return h;
  }

  /** A prepared INSERT of `n` rows (made once per size). */
  private insertOf(n: number): Database.Statement {
    let s = this.inserts.get(n);
    if (!s) {
      s = this.db.prepare('INSERT INTO events (stream, position, type, body, at) VALUES ' + new Array(n).fill('(?, ?, ?, ?, ?)').join(', '));
      this.inserts.set(n, s);
    }
    return s;
  }

  /** Inserts the first `n` buffered rows (n ≤ INSERT_CHUNK) and drops them from the buffer. */
  private insertRows(n: number): void {
    if (n === 0) return;
    const params = n * 5 === this.rows.length ? this.rows : this.rows.slice(0, n * 5);
    this.insertOf(n).run(params);
    this.rows = n * 5 === this.rows.length ? [] : this.rows.slice(n * 5);
  }

  private writeOne(p: WriteRequest, buffered: boolean): WriteOutcome {
    const at = p.at;
    // A key seen before (committed, or earlier in this batch: its row is already
    // in) is a duplicate or a conflict, and writes nothing.
    if (p.key !== undefined) {
      const prior = this.idemGet.get(...keyPlace(p.stream, p.scope, p.key)) as KeyRow | undefined;
      if (prior) {
        const judged = judgeKey(prior, p.stream, p.fingerprint);
        return judged instanceof StoreError ? { error: judged } : judged;
      }
    }
    const first = this.head(p.stream) + 1;
    const n = p.events.length;
    for (let i = 0; i < n; i++) {
      this.rows.push(p.stream, first + i, p.events[i].type, p.events[i].body, at);
      if (this.rows.length === INSERT_CHUNK * 5) this.insertRows(INSERT_CHUNK);
    }
    if (!buffered) while (this.rows.length) this.insertRows(Math.min(INSERT_CHUNK, this.rows.length / 5));
    const last = first + n - 1;
    if (p.key !== undefined) this.idemPut.run(...keyPlace(p.stream, p.scope, p.key), p.stream, first, last, at, p.fingerprint ?? null);
    if (!this.moved.has(p.stream)) this.moved.set(p.stream, this.heads.get(p.stream));
    this.heads.set(p.stream, last);
    return { first, last, duplicate: false };
  }

  /**
   * Writes and commits a batch; one outcome per request, in order. Throws only
   * when nothing could be committed (then no request was stored).
   */
  write(batch: WriteRequest[]): WriteOutcome[] {
    const out: WriteOutcome[] = [];
    this.moved.clear();
    try {
      this.fast.immediate(batch, out);
      return out;
    } catch {
      this.putBack();
      out.length = 0;
    }
    try {
      this.careful.immediate(batch, out);
      return out;
    } catch (e) {
      this.putBack();
      throw e;
    }
  }

  /** A rolled-back batch: the heads it moved are what they were before it. */
  private putBack(): void {
    for (const [stream, head] of this.moved) this.setHead(stream, head);
    this.moved.clear();
    this.rows = [];
  }

  /** What a keyed append would answer for its key (see EventStore.findKey); committed keys only. */
  findKey(stream: string, key: string, fingerprint: string | undefined, scope: string | undefined): AppendResult | null {
    const prior = this.idemGet.get(...keyPlace(stream, scope, key)) as KeyRow | undefined;
    if (!prior) return null;
    const judged = judgeKey(prior, stream, fingerprint);
    if (judged instanceof StoreError) throw judged;
    return judged;
  }

  /** Keeps the first answer of a committed key (see EventStore.keepAnswer). */
  keepAnswer(stream: string, key: string, scope: string | undefined, answer: string): boolean {
    const [ns, scoped] = keyPlace(stream, scope, key);
    if (this.answerPut.run(answer, ns, scoped, key, stream).changes === 1) return true;
    const prior = this.idemGet.get(ns, scoped, key) as KeyRow | undefined;
    return prior !== undefined && prior.stream === stream;
  }

  /** Stores a snapshot; keeps only the newest few of the stream unless `history` (kept for good, for rewinds). */
  snapshot(stream: string, position: number, state: string, history = false): void {
    this.db.transaction(() => {
      this.snapPut.run(stream, position, state, Date.now());
      if (!history) this.snapPrune.run(stream, stream, SNAPSHOTS_KEPT);
    })();
  }
}

/** The settings of Roost's connection. */
export function configure(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
}
