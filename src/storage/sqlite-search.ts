// The embedded store's full-text index (docs/search.md): FTS5 over the
// searchable events of the log, one row per event in `search_docs` (what a
// hit shows, what the filters look at) and its words in the contentless
// `search_fts` (rowid = the doc's id). Derived from the log, never the source
// of truth: `rebuild()` empties it and fills it again from the events.
//
// It lives in a database file of its own next to the log (`roost.search.db`
// for `roost.db`), written by a thread of its own (sqlite-indexer.ts), never
// on the request path: the appends' commits are never held by an index
// write, nor do they wait for its lock. `search_heads` holds, per stream, the
// position up to which every event is indexed; the indexer reads the log past
// those marks (its own connection, a read of what is committed) and writes
// the events it finds in batches of up to SEARCH_LIMITS.chunk events per
// transaction, several streams coalesced. A search first catches its
// project's streams up to what the log holds, so what committed before a
// search is found by it.
//
// This file is the index itself, synchronous, on two connections: `log` (the
// store's database, read only) and `ix` (the index's file; the same
// connection for an in-memory store, whose index has no thread of its own).

import type Database from 'better-sqlite3';
import { FLEET_SEARCH_PREFIX, parseQuery, searchDocOf, searchStreamOf, snippetOf } from '../core/search-text.js';
import { SEARCH_LIMITS, StoreError, decodeSearchCursor, encodeSearchCursor, type LogEntry, type SearchPage, type SearchQuery } from './types.js';

/** Schema 3 of the log's file, when the index lived in it (dropped by schema 5: SEARCH_DROP_MIGRATION). */
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

/** Schema 4 of the log's file: the index's filter columns (vendor, tool, status, decider); the index emptied. */
export const SEARCH_FILTERS_MIGRATION = `ALTER TABLE search_docs ADD COLUMN vendor TEXT NOT NULL DEFAULT '';
   ALTER TABLE search_docs ADD COLUMN tool TEXT NOT NULL DEFAULT '';
   ALTER TABLE search_docs ADD COLUMN status TEXT NOT NULL DEFAULT '';
   ALTER TABLE search_docs ADD COLUMN decider TEXT NOT NULL DEFAULT '';
   DELETE FROM search_docs;
   INSERT INTO search_fts (search_fts) VALUES ('delete-all');
   DELETE FROM search_heads;`;

/** Schema 5 of the log's file: the index moves to its own file (filled there from the log by the indexer). */
export const SEARCH_DROP_MIGRATION = `DROP TABLE IF EXISTS search_fts;
   DROP TABLE IF EXISTS search_docs;
   DROP TABLE IF EXISTS search_heads;`;

/** The index file's schema; a file of another `user_version` is emptied and made again (it is derived). */
const INDEX_VERSION = 1;
const INDEX_SCHEMA = `DROP TABLE IF EXISTS search_fts;
   DROP TABLE IF EXISTS search_docs;
   DROP TABLE IF EXISTS search_heads;
   CREATE TABLE search_docs (
     id INTEGER PRIMARY KEY,
     stream TEXT NOT NULL,
     position INTEGER NOT NULL,
     at INTEGER NOT NULL,
     project TEXT NOT NULL,
     family TEXT NOT NULL,
     kind TEXT NOT NULL,
     agent TEXT NOT NULL,
     team TEXT NOT NULL,
     vendor TEXT NOT NULL,
     tool TEXT NOT NULL,
     status TEXT NOT NULL,
     decider TEXT NOT NULL,
     text TEXT NOT NULL,
     UNIQUE (stream, position)
   );
   CREATE INDEX search_docs_at ON search_docs (project, at);
   CREATE INDEX search_docs_team ON search_docs (project, team, at);
   CREATE VIRTUAL TABLE search_fts USING fts5(words, content = '', tokenize = 'unicode61');
   CREATE TABLE search_heads (stream TEXT PRIMARY KEY, indexed INTEGER NOT NULL) WITHOUT ROWID;
   PRAGMA user_version = ${INDEX_VERSION};`;

/** The index's file for a log at `path`: `roost.db` → `roost.search.db`. */
export function indexPathOf(path: string): string {
  return path.endsWith('.db') ? `${path.slice(0, -3)}.search.db` : `${path}.search.db`;
}

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

/** A search's failure as it crosses the thread: the StoreError's kind and message. */
export interface SearchFailure {
  kind: StoreError['kind'];
  message: string;
}

export class SearchIndex {
  private marks = new Map<string, number>();
  /** Streams with events that may lie past their marks (from commits, and every indexed stream at the start). */
  private dirty = new Set<string>();
  private insDoc: Database.Statement;
  private insFts: Database.Statement;
  private putMark: Database.Statement;
  private readEvents: Database.Statement;
  private headOf: Database.Statement;
  private nextStream: Database.Statement;
  private queries = new Map<string, Database.Statement>();
  private indexTx: Database.Transaction<(entries: LogEntry[]) => number>;

  constructor(
    log: Database.Database,
    private ix: Database.Database,
  ) {
    // In one write transaction: two stores opening the same files never both make it.
    ix.transaction(() => {
      if (ix.pragma('user_version', { simple: true }) !== INDEX_VERSION) ix.exec(INDEX_SCHEMA);
    }).immediate();
    this.insDoc = ix.prepare('INSERT OR IGNORE INTO search_docs (stream, position, at, project, family, kind, agent, team, vendor, tool, status, decider, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.insFts = ix.prepare('INSERT INTO search_fts (rowid, words) VALUES (?, ?)');
    // Never down: another store on the same files may have indexed further.
    this.putMark = ix.prepare('INSERT INTO search_heads (stream, indexed) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET indexed = MAX(indexed, excluded.indexed)');
    this.readEvents = log.prepare('SELECT stream, position, type, body, at FROM events WHERE stream = ? AND position > ? ORDER BY position LIMIT ?');
    this.headOf = log.prepare('SELECT COALESCE(MAX(position), 0) AS head FROM events WHERE stream = ?');
    this.nextStream = log.prepare('SELECT stream FROM events WHERE stream > ? ORDER BY stream LIMIT 1');
    this.loadMarks();
    this.indexTx = ix.transaction((entries: LogEntry[]) => {
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

  private loadMarks(): void {
    this.marks.clear();
    for (const r of this.ix.prepare('SELECT stream, indexed FROM search_heads').all() as { stream: string; indexed: number }[]) this.marks.set(r.stream, r.indexed);
  }

  /** Streams that took commits: indexed by the next steps. */
  touched(streams: Iterable<string>): void {
    for (const s of streams) if (searchStreamOf(s)) this.dirty.add(s);
  }

  /** Every indexed stream of the log, to be caught up by the next steps (a store's start: what a crash or an older log left). */
  touchAll(): void {
    for (let s = ''; ; ) {
      const r = this.nextStream.get(s) as { stream: string } | undefined;
      if (!r) break;
      s = r.stream;
      if (searchStreamOf(s)) this.dirty.add(s);
    }
  }

  /** Whether a step has work. */
  get behind(): boolean {
    return this.dirty.size > 0;
  }

  /**
   * One batch: the events past their marks of the streams that took commits,
   * up to SEARCH_LIMITS.chunk in all, in one transaction. A stream whose
   * events all fit leaves the set; the rest wait for the next step.
   */
  step(): number {
    const batch: LogEntry[] = [];
    for (const stream of this.dirty) {
      const room = SEARCH_LIMITS.chunk - batch.length;
      if (room <= 0) break;
      const rows = this.readEvents.all(stream, this.marks.get(stream) ?? 0, room) as LogEntry[];
      for (const r of rows) batch.push(r);
      if (rows.length < room) this.dirty.delete(stream);
    }
    return batch.length ? this.indexTx(batch) : 0;
  }

  /** Indexes `stream` past its mark, up to its head now, a chunk per transaction. */
  private catchUp(stream: string): void {
    const head = (this.headOf.get(stream) as { head: number }).head;
    while ((this.marks.get(stream) ?? 0) < head) {
      const rows = this.readEvents.all(stream, this.marks.get(stream) ?? 0, SEARCH_LIMITS.chunk) as LogEntry[];
      if (rows.length === 0) break;
      this.indexTx(rows);
    }
  }

  /** Empties the index and fills it again from the log; the events indexed. */
  rebuild(): number {
    this.ix.exec("DELETE FROM search_docs; INSERT INTO search_fts (search_fts) VALUES ('delete-all'); DELETE FROM search_heads;");
    this.marks.clear();
    this.dirty.clear();
    this.touchAll();
    let n = 0;
    while (this.dirty.size) n += this.step();
    return n;
  }

  search(query: SearchQuery): SearchPage {
    const terms = parseQuery(query.q);
    const limit = Math.max(1, Math.min(SEARCH_LIMITS.maxPage, Math.floor(query.limit ?? SEARCH_LIMITS.page)));
    const cursor = decodeSearchCursor(query.cursor);
    if (terms.length === 0) return { hits: [], next: null };
    // Whatever committed before this search is found by it.
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
      stmt = this.ix.prepare(sql);
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
