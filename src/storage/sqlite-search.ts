// The embedded store's full-text index (docs/search.md): FTS5 over the
// searchable events of the log, one row per event in `search_docs` (what a
// hit shows, what the filters look at) and its words in the contentless
// `search_fts` (rowid = the doc's id). Derived from the log, never the source
// of truth: `rebuild()` empties it and fills it again from the events.
//
// The index lives in a file of its own beside the log (`roost.search.db` by
// `roost.db`), written by a worker thread with its own connections
// (sqlite-search-host.ts): the log's commits, their fsyncs and the event loop
// pay nothing for it but a message per turn naming the streams that moved.
// The worker reads those streams' new events from the log (a WAL reader
// never waits for the writer) and indexes them in transactions of up to
// SEARCH_LIMITS.chunk events, as many as have come since its last one; its
// file is synchronous=NORMAL (derived: a lost tail is indexed again).
// `search_heads` holds, per stream, the position up to which every event is
// indexed, in the same transactions as the docs, so the index and its marks
// never disagree: after a crash, or whatever happened to the index file, the
// marks say where to go on from. A search first catches up its project's
// streams from their marks to the log's heads (the same catch-up), so it
// finds every event committed before it; a store that opens catches up every
// stream in the background. `search_meta` names the log the index was built
// from (its epoch): an index file of another log is emptied and refilled.

import type Database from 'better-sqlite3';
import { FLEET_SEARCH_PREFIX, parseQuery, searchDocOf, searchStreamOf, type SearchDoc } from '../core/search-text.js';
import { SEARCH_LIMITS, StoreError, decodeSearchCursor, searchPage, type LogEntry, type SearchPage, type SearchQuery } from './types.js';

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

/** What the filters and the order look at, of a doc. */
type DocKey = Pick<SearchDoc, 'project' | 'kind' | 'agent' | 'team' | (typeof SEARCH_FILTERS)[number]> & { stream: string; position: number; at: number };

/** Whether a doc passes a query's filters (as the plan's WHERE does) and comes after its cursor. */
function keeps(d: DocKey, q: SearchQuery, after: { at: number; stream: string; position: number } | null): boolean {
  if (d.project !== q.project) return false;
  if (q.team !== undefined && d.team !== q.team) return false;
  if (q.agent !== undefined && d.agent !== q.agent) return false;
  if (q.kind !== undefined && d.kind !== q.kind) return false;
  for (const f of SEARCH_FILTERS) if (q[f] !== undefined && d[f] !== q[f]) return false;
  if (q.from !== undefined && !(d.at >= q.from)) return false;
  if (q.to !== undefined && !(d.at < q.to)) return false;
  return after === null || newer(d, after) > 0;
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

/** The index's own tables (in its file; beside the log in a ':memory:' store). */
const INDEX_TABLES = `CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE IF NOT EXISTS search_docs (
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
   CREATE INDEX IF NOT EXISTS search_docs_at ON search_docs (project, at);
   CREATE INDEX IF NOT EXISTS search_docs_team ON search_docs (project, team, at);
   CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(words, content = '', tokenize = 'unicode61');
   CREATE TABLE IF NOT EXISTS search_heads (stream TEXT PRIMARY KEY, indexed INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE IF NOT EXISTS search_ceil (block INTEGER PRIMARY KEY, at INTEGER NOT NULL);`;

/** The index's layout; a file of another is emptied and filled again from the log. */
const INDEX_VERSION = '2';

/** Docs per block of \`search_ceil\`: for each block, the newest \`at\` of every doc up to its end. */
const CEIL_BLOCK = 1024;

/**
 * Matches a search walks newest doc first (FTS5's rowid order, see search())
 * before it leaves the page to the planner's plan over every match.
 */
export const SEARCH_SCAN = { max: 5_000 };

const EMPTY = "DELETE FROM search_docs; INSERT INTO search_fts (search_fts) VALUES ('delete-all'); DELETE FROM search_heads; DELETE FROM search_ceil;";

/** The order of hits, newest first: `at`, then stream (bytes, as SQLite compares TEXT), then position, all descending. */
function newer(a: { at: number; stream: string; position: number }, b: { at: number; stream: string; position: number }): number {
  return b.at - a.at || Buffer.compare(Buffer.from(b.stream), Buffer.from(a.stream)) || b.position - a.position;
}

/** The index file of a log file: `roost.search.db` beside `roost.db`. */
export function indexPathOf(logPath: string): string {
  return logPath.endsWith('.db') ? `${logPath.slice(0, -3)}.search.db` : `${logPath}.search.db`;
}

/**
 * The index over one log: `index` holds its tables, `log` is read for the
 * events (the same connection in a ':memory:' store, two otherwise). Every
 * call is synchronous: a host (sqlite-search-host.ts) runs it off the event
 * loop, on a worker thread, or on it for a ':memory:' store.
 */
export class SearchEngine {
  /** Streams with events past their mark, as the commits said (or the catch-up at open). */
  private dirty = new Set<string>();
  private insDoc: Database.Statement;
  private insFts: Database.Statement;
  private putMark: Database.Statement;
  private readEvents: Database.Statement;
  private headOf: Database.Statement;
  private nextStream: Database.Statement;
  private queries = new Map<string, Database.Statement>();
  private indexTx: (entries: LogEntry[]) => number;
  private getMark: Database.Statement;
  private ceilAt: Database.Statement;
  private putCeil: Database.Statement;
  private matchDesc: Database.Statement;
  private docKey: Database.Statement;
  private docRow: Database.Statement;

  constructor(
    private index: Database.Database,
    log: Database.Database,
    /** The log's epoch: an index built from another log is emptied. */
    epoch: string,
    /** Events per transaction of `work()`. */
    private chunk: number = SEARCH_LIMITS.chunk,
  ) {
    index.exec(INDEX_TABLES);
    const meta = (key: string): string | undefined => (index.prepare('SELECT value FROM search_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
    if (meta('log') !== epoch || meta('version') !== INDEX_VERSION) {
      index.transaction(() => {
        index.exec(EMPTY);
        index.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('log', ?), ('version', ?)").run(epoch, INDEX_VERSION);
      }).immediate();
    }
    this.insDoc = index.prepare('INSERT OR IGNORE INTO search_docs (stream, position, at, project, family, kind, agent, team, vendor, tool, status, decider, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.insFts = index.prepare('INSERT INTO search_fts (rowid, words) VALUES (?, ?)');
    this.putMark = index.prepare('INSERT INTO search_heads (stream, indexed) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET indexed = excluded.indexed');
    this.readEvents = log.prepare('SELECT stream, position, type, body, at FROM events WHERE stream = ? AND position > ? ORDER BY position LIMIT ?');
    this.headOf = log.prepare('SELECT COALESCE(MAX(position), 0) AS head FROM events WHERE stream = ?');
    this.nextStream = log.prepare('SELECT stream FROM events WHERE stream > ? ORDER BY stream LIMIT 1');
    this.getMark = index.prepare('SELECT indexed FROM search_heads WHERE stream = ?').pluck();
    this.ceilAt = index.prepare('SELECT at FROM search_ceil WHERE block <= ? ORDER BY block DESC LIMIT 1').pluck();
    this.putCeil = index.prepare('INSERT INTO search_ceil (block, at) VALUES (?, ?) ON CONFLICT (block) DO UPDATE SET at = MAX(at, excluded.at)');
    this.matchDesc = index.prepare('SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC').pluck();
    this.docKey = index.prepare('SELECT id, stream, position, at, project, kind, agent, team, vendor, tool, status, decider FROM search_docs WHERE id = ?');
    this.docRow = index.prepare('SELECT stream, position, at, family, kind, agent, team, text FROM search_docs WHERE id = ?');
    // A mark past its stream's head: the log is not the one this was built from, whatever its epoch says.
    const marks = index.prepare('SELECT stream, indexed FROM search_heads').all() as { stream: string; indexed: number }[];
    if (marks.some((r) => r.indexed > (this.headOf.get(r.stream) as { head: number }).head)) index.exec(EMPTY);
    const indexTx = index.transaction((entries: LogEntry[]) => {
      let n = 0;
      let ceilBlock = -1;
      let ceil = -Infinity;
      const last = new Map<string, [number, number]>();
      for (const e of entries) {
        const doc = searchDocOf(e.stream, e.type, e.body);
        if (doc) {
          const r = this.insDoc.run(e.stream, e.position, e.at, doc.project, doc.family, doc.kind, doc.agent, doc.team, doc.vendor, doc.tool, doc.status, doc.decider, doc.text);
          if (r.changes === 1) {
            this.insFts.run(r.lastInsertRowid, doc.words);
            n++;
            // Ids only grow: the doc's block is the newest, and its ceiling the newest `at` up to it.
            const block = Math.floor(Number(r.lastInsertRowid) / CEIL_BLOCK);
            if (block !== ceilBlock) {
              if (ceilBlock >= 0) this.putCeil.run(ceilBlock, ceil);
              ceilBlock = block;
              ceil = Math.max(ceil, (this.ceilAt.get(block) as number | undefined) ?? -Infinity);
            }
            ceil = Math.max(ceil, e.at);
          }
        }
        const span = last.get(e.stream);
        if (span) span[1] = e.position;
        else last.set(e.stream, [e.position, e.position]);
      }
      if (ceilBlock >= 0) this.putCeil.run(ceilBlock, ceil);
      // A stream's mark moves only over a run that starts at or before it (no gap left behind).
      for (const [stream, [first, lastPos]] of last) {
        const mark = this.markOf(stream);
        if (first <= mark + 1 && lastPos > mark) this.putMark.run(stream, lastPos);
      }
      return n;
    });
    // Immediate: another connection (the other lane, sqlite-search-host.ts) may write too; the marks are read inside.
    this.indexTx = (entries) => indexTx.immediate(entries);
  }

  /** Where `stream` is indexed up to, as the file says now (another connection may have moved it). */
  private markOf(stream: string): number {
    return (this.getMark.get(stream) as number | undefined) ?? 0;
  }

  /** A commit moved `stream` on: index it at the next `work()`. */
  moved(stream: string): void {
    if (searchStreamOf(stream)) this.dirty.add(stream);
  }

  /** Every indexed stream of the log is caught up from its mark by the next `work()`s (at open). */
  catchUpAll(): void {
    for (const s of this.indexedStreams()) this.dirty.add(s);
  }

  /** The log's streams that are indexed, one index seek each. */
  private *indexedStreams(): Generator<string> {
    for (let s = ''; ; ) {
      const r = this.nextStream.get(s) as { stream: string } | undefined;
      if (!r) return;
      s = r.stream;
      if (searchStreamOf(s)) yield s;
    }
  }

  /** Whether a moved stream still has events past its mark (as far as `work()` knows). */
  get behind(): boolean {
    return this.dirty.size > 0;
  }

  /** One transaction: the moved streams' events past their marks, up to `chunk` of them; how many it read. */
  work(): number {
    if (this.dirty.size === 0) return 0;
    const batch: LogEntry[] = [];
    for (const stream of this.dirty) {
      const rows = this.readEvents.all(stream, this.markOf(stream), this.chunk - batch.length) as LogEntry[];
      for (const r of rows) batch.push(r);
      if (batch.length >= this.chunk) break;
      this.dirty.delete(stream);
    }
    this.indexTx(batch);
    return batch.length;
  }

  /** Indexes `stream` past its mark, all of it; how many docs it wrote. */
  private catchUp(stream: string): number {
    let n = 0;
    for (;;) {
      const rows = this.readEvents.all(stream, this.markOf(stream), SEARCH_LIMITS.chunk) as LogEntry[];
      if (rows.length === 0) return n;
      n += this.indexTx(rows);
      if (rows.length < SEARCH_LIMITS.chunk) return n;
    }
  }

  rebuild(): number {
    this.index.transaction(() => this.index.exec(EMPTY)).immediate();
    this.dirty.clear();
    let n = 0;
    for (const s of this.indexedStreams()) n += this.catchUp(s);
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
    const rows = this.scan(matchOf(terms), query, limit, cursor) ?? this.plan(terms, query, limit, cursor);
    return searchPage(rows, limit, terms);
  }

  /**
   * The page (limit + 1 rows) by walking the matches newest doc first (FTS5
   * reads them in rowid order, lazily): each is checked against the filters,
   * the best limit + 1 kept, and the walk stops once no doc left can be newer
   * than the last of them: doc ids grow as docs are indexed, not exactly as
   * `at` does (streams are caught up apart), so `search_ceil` keeps, per
   * block of ids, the newest `at` of every doc up to its end. A common word
   * stops after a few hundred matches where the plan below reads every match
   * of every word; past SEARCH_SCAN.max matches (filters that keep few of
   * them) it gives up (null) and the plan answers.
   */
  private scan(match: string, q: SearchQuery, limit: number, cursor: [number, string, number] | null): DocRow[] | null {
    const want = limit + 1;
    const best: (DocKey & { id: number })[] = [];
    const after = cursor ? { at: cursor[0], stream: cursor[1], position: cursor[2] } : null;
    let seen = 0;
    let block = -1;
    let ceil = Infinity;
    try {
      for (const id of this.matchDesc.iterate(match) as IterableIterator<number>) {
        if (best.length === want) {
          const b = Math.floor(id / CEIL_BLOCK);
          if (b !== block) {
            block = b;
            ceil = (this.ceilAt.get(b) as number | undefined) ?? Infinity;
          }
          // Every doc from here on is at or before `ceil`: none can come before the last kept.
          if (ceil < best[want - 1].at) break;
        }
        if (++seen > SEARCH_SCAN.max) return null;
        const d = this.docKey.get(id) as (DocKey & { id: number }) | undefined;
        if (!d || !keeps(d, q, after)) continue;
        if (best.length === want && newer(d, best[want - 1]) >= 0) continue;
        let i = best.length;
        while (i > 0 && newer(d, best[i - 1]) < 0) i--;
        best.splice(i, 0, d);
        if (best.length > want) best.pop();
      }
    } catch (e) {
      throw new StoreError('internal', `search failed: ${(e as Error).message}`, { cause: e });
    }
    return best.map((d) => this.docRow.get(d.id) as DocRow);
  }

  /** The page by the planner: every match of the words, the filters, newest first. */
  private plan(terms: string[][], query: SearchQuery, limit: number, cursor: [number, string, number] | null): DocRow[] {
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
      stmt = this.index.prepare(sql);
      this.queries.set(sql, stmt);
    }
    try {
      return stmt.all(...args) as DocRow[];
    } catch (e) {
      throw new StoreError('internal', `search failed: ${(e as Error).message}`, { cause: e });
    }
  }
}
