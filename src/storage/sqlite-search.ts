// The embedded store's full-text index (docs/search.md): FTS5 over the
// searchable events of the log, one row per event in `search_docs` (what a
// hit shows, what the filters look at) and its words in the contentless
// `search_fts` (rowid = the doc's id). Derived from the log, never the source
// of truth: `rebuild()` drops it and fills it again from the events.
//
// Kept current after the commits, not inside the append's transaction: the
// group commit (sqlite-batch.ts) and its fsync stay exactly as they are, and
// the index, being derived, is written like a lazy append (no fsync of its
// own; the next synced commit or the lazy timer makes it durable). The commit
// listener queues a commit's entries; they are written in slices of at most
// INDEX_PACE.slice events, one transaction each: once no commit came for
// INDEX_PACE.quietMs (ingest paused), or, in the turn after a commit that
// left more than INDEX_PACE.lag waiting (ingest that does not pause), down to
// the lag. An index transaction costs about as much for one event as for a
// hundred (the pages it writes to the WAL), so slices, not a transaction per
// turn of commits; and a search first writes what waits, so it finds all
// that committed before it. What a crash loses between a commit and its
// indexing is found again from `search_heads` (per stream, the position up
// to which every event is indexed): a search first indexes whatever its
// project's streams hold past their mark, and a store that opens catches up
// every stream in the background, a chunk per turn.

import type Database from 'better-sqlite3';
import { FLEET_SEARCH_PREFIX, parseQuery, searchDocOf, searchStreamOf, snippetOf } from '../core/search-text.js';
import { SEARCH_LIMITS, StoreError, decodeSearchCursor, encodeSearchCursor, type LogEntry, type SearchPage, type SearchQuery } from './types.js';

export const SEARCH_MIGRATION = `CREATE TABLE search_docs (
     id INTEGER PRIMARY KEY,
     stream TEXT NOT NULL,
     position INTEGER NOT NULL,
     at INTEGER NOT NULL,
     project TEXT NOT NULL,
     family TEXT NOT NULL,
     kind TEXT NOT NULL,
     agent TEXT NOT NULL,
     team TEXT NOT NULL,
     text TEXT NOT NULL,
     UNIQUE (stream, position)
   );
   CREATE INDEX search_docs_at ON search_docs (project, at);
   CREATE INDEX search_docs_team ON search_docs (project, team, at);
   CREATE VIRTUAL TABLE search_fts USING fts5(words, content = '', tokenize = 'unicode61');
   CREATE TABLE search_heads (stream TEXT PRIMARY KEY, indexed INTEGER NOT NULL) WITHOUT ROWID;`;

/**
 * The index's filter columns (vendor, tool, status, decider), added to an
 * index of schema 3: the index is emptied and the catch-up at open fills it
 * again from the log, now with them.
 */
export const SEARCH_FILTERS_MIGRATION = `ALTER TABLE search_docs ADD COLUMN vendor TEXT NOT NULL DEFAULT '';
   ALTER TABLE search_docs ADD COLUMN tool TEXT NOT NULL DEFAULT '';
   ALTER TABLE search_docs ADD COLUMN status TEXT NOT NULL DEFAULT '';
   ALTER TABLE search_docs ADD COLUMN decider TEXT NOT NULL DEFAULT '';
   DELETE FROM search_docs;
   INSERT INTO search_fts (search_fts) VALUES ('delete-all');
   DELETE FROM search_heads;`;

/**
 * How the commit listener's queue is written (see the file comment): a slice
 * is one transaction (a few ms on the 2-core machine); `lag` bounds what a
 * search may find waiting and write first (tens of ms there).
 */
export const INDEX_PACE = { slice: 256, lag: 2_000, quietMs: 5 } as const;

/** The streams a project's search looks in (the inverse of searchStreamOf). */
export function projectStreams(project: string): string[] {
  const own = (f: string): string => (project === 'default' ? f : `${f}:${project}`);
  return [own('floor'), own('approvals'), own('flock'), `work:${project}`].filter((s) => searchStreamOf(s)?.project === project);
}

/** The prefix of a project's fleet threads' streams (`sessions:<thread>`, `sessions:<project>:<thread>`). */
export function fleetPrefixOf(project: string): string {
  return project === 'default' ? FLEET_SEARCH_PREFIX : `${FLEET_SEARCH_PREFIX}${project}:`;
}

/** The filters matched whole against a column of their own (a fixed list: never a caller's column name). */
export const SEARCH_FILTERS = ['vendor', 'tool', 'status', 'decider'] as const;

/** The FTS5 MATCH text of parsed terms: each a quoted phrase of plain words, all required. */
function matchOf(terms: string[][]): string {
  return terms.map((t) => `"${t.join(' ').replace(/"/g, '""')}"`).join(' AND ');
}

interface DocRow {
  stream: string;
  position: number;
  at: number;
  family: string;
  kind: string;
  agent: string;
  team: string;
  text: string;
}

export class SqliteSearch {
  private marks = new Map<string, number>();
  private pending: LogEntry[] = [];
  /** When the last commit was queued (performance.now()), and the timer or turn that writes the queue next. */
  private lastCommit = 0;
  private timer: NodeJS.Timeout | null = null;
  private turn = false;
  private closed = false;
  private backfill: string[] | null = null;
  private insDoc: Database.Statement;
  private insFts: Database.Statement;
  private putMark: Database.Statement;
  private readEvents: Database.Statement;
  private headOf: Database.Statement;
  private nextStream: Database.Statement;
  private queries = new Map<string, Database.Statement>();
  private indexTx: Database.Transaction<(entries: LogEntry[]) => number>;

  constructor(
    private db: Database.Database,
    /** Called before and after each index write (the store's lazy commit: no fsync of its own). */
    private around: { before: () => void; after: () => void },
  ) {
    this.insDoc = db.prepare('INSERT OR IGNORE INTO search_docs (stream, position, at, project, family, kind, agent, team, vendor, tool, status, decider, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.insFts = db.prepare('INSERT INTO search_fts (rowid, words) VALUES (?, ?)');
    this.putMark = db.prepare('INSERT INTO search_heads (stream, indexed) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET indexed = excluded.indexed');
    this.readEvents = db.prepare('SELECT stream, position, type, body, at FROM events WHERE stream = ? AND position > ? ORDER BY position LIMIT ?');
    this.headOf = db.prepare('SELECT COALESCE(MAX(position), 0) AS head FROM events WHERE stream = ?');
    this.nextStream = db.prepare('SELECT stream FROM events WHERE stream > ? ORDER BY stream LIMIT 1');
    for (const r of db.prepare('SELECT stream, indexed FROM search_heads').all() as { stream: string; indexed: number }[]) this.marks.set(r.stream, r.indexed);
    this.indexTx = db.transaction((entries: LogEntry[]) => {
      let n = 0;
      const last = new Map<string, [number, number]>();
      for (const e of entries) {
        const doc = searchDocOf(e.stream, e.type, e.value ?? e.body);
        if (doc) {
          const r = this.insDoc.run(e.stream, e.position, e.at, doc.project, doc.family, doc.kind, doc.agent, doc.team, doc.vendor, doc.tool, doc.status, doc.decider, doc.text);
          if (r.changes === 1) {
            this.insFts.run(r.lastInsertRowid, doc.words);
            n++;
          }
        }
        const span = last.get(e.stream);
        if (span) span[1] = e.position;
        else last.set(e.stream, [e.position, e.position]);
      }
      // A stream's mark moves only over a run that starts at or before it (no gap left behind).
      for (const [stream, [first, lastPos]] of last) {
        const mark = this.marks.get(stream) ?? 0;
        if (first <= mark + 1 && lastPos > mark) {
          this.putMark.run(stream, lastPos);
          this.marks.set(stream, lastPos);
        }
      }
      return n;
    });
  }

  /** Writes one batch of entries (one transaction, written lazily). */
  private write(entries: LogEntry[]): number {
    if (entries.length === 0) return 0;
    this.around.before();
    try {
      return this.indexTx(entries);
    } finally {
      this.around.after();
    }
  }

  /** The commit listener: a commit's entries, written once the commits pause (see the file comment). */
  committed(entries: LogEntry[]): void {
    if (this.closed || searchStreamOf(entries[0].stream) === null) return;
    for (const e of entries) this.pending.push(e);
    this.lastCommit = performance.now();
    this.schedule();
  }

  /** Plans the next slices: at once (the next turn) past the lag, else when the commits will have paused. */
  private schedule(): void {
    if (this.timer || this.turn || this.pending.length === 0 || this.closed) return;
    if (this.pending.length > INDEX_PACE.lag) {
      this.turn = true;
      setImmediate(this.step);
      return;
    }
    const wait = INDEX_PACE.quietMs - (performance.now() - this.lastCommit);
    this.timer = setTimeout(this.step, Math.max(1, Math.ceil(wait)));
    this.timer.unref?.();
  }

  private step = (): void => {
    this.timer = null;
    this.turn = false;
    if (this.closed) return;
    try {
      // Past the lag, down to it (however large the commits were); else one slice if the commits paused.
      while (this.pending.length > INDEX_PACE.lag) this.write(this.pending.splice(0, INDEX_PACE.slice));
      if (this.pending.length > 0 && performance.now() - this.lastCommit >= INDEX_PACE.quietMs) this.write(this.pending.splice(0, INDEX_PACE.slice));
    } catch (e) {
      // Nothing lost: the marks did not move, the next search or open catches up.
      console.error('roost: indexing for search failed', e);
    }
    this.schedule();
  };

  /** Writes what waits and stops the pacing (the store closes). */
  close(): void {
    try {
      this.drain();
    } finally {
      this.closed = true;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** Indexes what the commit listener queued. */
  drain(): void {
    const batch = this.pending;
    this.pending = [];
    for (let i = 0; i < batch.length; i += SEARCH_LIMITS.chunk) this.write(batch.slice(i, i + SEARCH_LIMITS.chunk));
  }

  /** Indexes `stream` past its mark, up to `max` events (all when omitted); true when it is caught up. */
  private catchUp(stream: string, max = Infinity): boolean {
    const head = (this.headOf.get(stream) as { head: number }).head;
    let done = 0;
    while ((this.marks.get(stream) ?? 0) < head && done < max) {
      const mark = this.marks.get(stream) ?? 0;
      const rows = this.readEvents.all(stream, mark, SEARCH_LIMITS.chunk) as LogEntry[];
      if (rows.length === 0) break;
      this.write(rows);
      done += rows.length;
    }
    return (this.marks.get(stream) ?? 0) >= head;
  }

  /** Starts the background catch-up of every indexed stream (at open): one chunk per event-loop turn. */
  startBackfill(closed: () => boolean): void {
    const streams: string[] = [];
    let s = '';
    for (;;) {
      const r = this.nextStream.get(s) as { stream: string } | undefined;
      if (!r) break;
      s = r.stream;
      if (searchStreamOf(s)) streams.push(s);
    }
    this.backfill = streams;
    const step = (): void => {
      if (closed() || !this.backfill?.length) return;
      try {
        if (this.catchUp(this.backfill[0], SEARCH_LIMITS.chunk)) this.backfill.shift();
      } catch (e) {
        console.error('roost: indexing for search failed', e);
        return;
      }
      setImmediate(step).unref?.();
    };
    setImmediate(step).unref?.();
  }

  rebuild(): number {
    this.drain();
    this.around.before();
    try {
      this.db.transaction(() => {
        this.db.exec("DELETE FROM search_docs; INSERT INTO search_fts (search_fts) VALUES ('delete-all'); DELETE FROM search_heads;");
      })();
    } finally {
      this.around.after();
    }
    this.marks.clear();
    let n = 0;
    let s = '';
    for (;;) {
      const r = this.nextStream.get(s) as { stream: string } | undefined;
      if (!r) break;
      s = r.stream;
      if (!searchStreamOf(s)) continue;
      const before = (this.db.prepare('SELECT COUNT(*) AS n FROM search_docs WHERE stream = ?').get(s) as { n: number }).n;
      this.catchUp(s);
      n += (this.db.prepare('SELECT COUNT(*) AS n FROM search_docs WHERE stream = ?').get(s) as { n: number }).n - before;
    }
    return n;
  }

  search(query: SearchQuery): SearchPage {
    const terms = parseQuery(query.q);
    const limit = Math.max(1, Math.min(SEARCH_LIMITS.maxPage, Math.floor(query.limit ?? SEARCH_LIMITS.page)));
    const cursor = decodeSearchCursor(query.cursor);
    if (terms.length === 0) return { hits: [], next: null };
    // Whatever committed before this search is found by it.
    this.drain();
    for (const s of projectStreams(query.project)) this.catchUp(s);
    // And its fleet threads' streams, however many (one index seek each).
    const prefix = fleetPrefixOf(query.project);
    for (let s = prefix; ; ) {
      const r = this.nextStream.get(s) as { stream: string } | undefined;
      if (!r || !r.stream.startsWith(prefix)) break;
      s = r.stream;
      if (searchStreamOf(s)?.project === query.project) this.catchUp(s);
    }
    const where = ['d.id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?)', 'd.project = ?'];
    const args: unknown[] = [matchOf(terms), query.project];
    if (query.team !== undefined) (where.push('d.team = ?'), args.push(query.team));
    if (query.agent !== undefined) (where.push('d.agent = ?'), args.push(query.agent));
    if (query.kind !== undefined) (where.push('d.kind = ?'), args.push(query.kind));
    for (const f of SEARCH_FILTERS) if (query[f] !== undefined) (where.push(`d.${f} = ?`), args.push(query[f]));
    if (query.from !== undefined) (where.push('d.at >= ?'), args.push(query.from));
    if (query.to !== undefined) (where.push('d.at < ?'), args.push(query.to));
    if (cursor) (where.push('(d.at, d.stream, d.position) < (?, ?, ?)'), args.push(...cursor));
    const sql = `SELECT d.stream, d.position, d.at, d.family, d.kind, d.agent, d.team, d.text FROM search_docs d WHERE ${where.join(' AND ')} ORDER BY d.at DESC, d.stream DESC, d.position DESC LIMIT ?`;
    args.push(limit + 1);
    let stmt = this.queries.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.queries.set(sql, stmt);
    }
    let rows: DocRow[];
    try {
      rows = stmt.all(...args) as DocRow[];
    } catch (e) {
      throw new StoreError('internal', `search failed: ${(e as Error).message}`, { cause: e });
    }
    const more = rows.length > limit;
    const hits = rows.slice(0, limit).map((r) => ({
      stream: r.stream,
      position: r.position,
      at: r.at,
      family: r.family,
      kind: r.kind,
      agent: r.agent,
      team: r.team,
      snippet: snippetOf(r.text, terms),
    }));
    return { hits, next: more ? encodeSearchCursor(hits[hits.length - 1]) : null };
  }
}
