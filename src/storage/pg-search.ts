// PostgreSQL's full-text index (docs/search.md): one row per searchable event
// in `search_docs`, its words in a tsvector column under a GIN index. Derived
// from the log, never the source of truth: `rebuild()` empties it and fills
// it again from the events.
//
// The tsvector and the tsquery are built here from the words of
// src/core/search-text.ts (the same words SQLite's FTS5 indexes), as quoted
// lexemes with their positions, never by PostgreSQL's parser (which would keep
// `a/b.ts` as one token, where FTS5 sees three words) and never from a
// caller's text: both stores then match alike.
//
// Kept current right after each commit of this node, not inside the append's
// transaction: the append path (its one round trip, its retries) stays as it
// is, and a failed or lost index write costs nothing that cannot be redone.
// `search_heads` holds, per stream, the position up to which every event is
// indexed; a search first indexes whatever its project's streams hold past
// their mark (other nodes' commits not indexed yet, a crash's gap), and every
// write is idempotent (ON CONFLICT DO NOTHING, marks only move up over runs
// without a gap), so several nodes may index the same events.

import pg from 'pg';
import { parseQuery, searchDocOf, searchStreamOf } from '../core/search-text.js';
import { SEARCH_FILTERS, fleetPrefixOf, projectStreams } from './sqlite-search.js';
import { SEARCH_LIMITS, StoreError, decodeSearchCursor, searchPage, type LogEntry, type SearchPage, type SearchQuery } from './types.js';

export const PG_SEARCH_MIGRATION = `CREATE TABLE search_docs (
     stream text NOT NULL,
     position bigint NOT NULL,
     at bigint NOT NULL,
     project text NOT NULL,
     family text NOT NULL,
     kind text NOT NULL,
     agent text NOT NULL,
     team text NOT NULL,
     text text NOT NULL,
     words tsvector NOT NULL,
     PRIMARY KEY (stream, position)
   );
   CREATE INDEX search_docs_words ON search_docs USING gin (words);
   CREATE INDEX search_docs_at ON search_docs (project, at);
   CREATE INDEX search_docs_team ON search_docs (project, team, at);
   CREATE TABLE search_heads (stream text PRIMARY KEY, indexed bigint NOT NULL);`;

/** The index's filter columns (as SQLite's: sqlite-search.ts SEARCH_FILTERS_MIGRATION); emptied, refilled from the log at open. */
export const PG_SEARCH_FILTERS_MIGRATION = `ALTER TABLE search_docs ADD COLUMN vendor text NOT NULL DEFAULT '',
     ADD COLUMN tool text NOT NULL DEFAULT '', ADD COLUMN status text NOT NULL DEFAULT '', ADD COLUMN decider text NOT NULL DEFAULT '';
   TRUNCATE search_docs, search_heads;`;

/** This node refreshes the planner's statistics once it indexed this many events, then at each doubling (see `indexed`). */
const ANALYZE_FIRST = 10_000;

/** Tries of one index write of this node's commits before it is left to the next search's catch-up. */
const WRITE_TRIES = 3;

/** This node's commits waiting for their index write, at most (a few batches of SEARCH_LIMITS.chunk). */
const PENDING_MAX = 10 * SEARCH_LIMITS.chunk;

/** PostgreSQL's highest lexeme position. */
const POS_MAX = 16383;

/** A tsvector literal of space-separated words: each quoted, with its positions (1-based). */
export function tsvectorOf(words: string): string {
  const at = new Map<string, number[]>();
  let i = 0;
  for (const w of words.split(' ')) {
    if (!w) continue;
    i = Math.min(i + 1, POS_MAX);
    const l = at.get(w);
    if (l) l.push(i);
    else at.set(w, [i]);
  }
  return [...at].map(([w, ps]) => `'${w.replace(/'/g, "''").replace(/\\/g, '\\\\')}':${ps.join(',')}`).join(' ');
}

/** A tsquery literal of parsed terms: every term required, a phrase's words adjacent. */
function tsqueryOf(terms: string[][]): string {
  const q = (w: string): string => `'${w.replace(/'/g, "''").replace(/\\/g, '\\\\')}'`;
  return terms.map((t) => (t.length === 1 ? q(t[0]) : `(${t.map(q).join(' <-> ')})`)).join(' & ');
}

/** `streams s` rows that are the named streams (`list`, a text[] parameter) or fleet threads under `fleet` (a text parameter, or null). */
const STREAMS_OF = (list: string, fleet: string): string =>
  `s.stream = ANY(${list}::text[]) OR (${fleet}::text IS NOT NULL AND left(s.stream, length(${fleet})) = ${fleet} AND strpos(substr(s.stream, length(${fleet}) + 1), ':') = 0)`;

interface DocRow {
  stream: string;
  position: string;
  at: string;
  family: string;
  kind: string;
  agent: string;
  team: string;
  text: string;
}

type Query = <R extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>;

export class PgSearch {
  private pending: LogEntry[] = [];
  private writing: Promise<void> | null = null;

  /**
   * Searches run on a pool of their own whose sessions are read-only with a
   * statement timeout (SEARCH_LIMITS.statementMs): one round trip per search,
   * never a write, never longer than the timeout.
   */
  private pool: pg.Pool;

  constructor(
    config: pg.ClientConfig,
    private q: Query,
  ) {
    const options = `${config.options ?? ''} -c statement_timeout=${SEARCH_LIMITS.statementMs} -c default_transaction_read_only=on`.trim();
    this.pool = new pg.Pool({ ...config, options, max: 2, application_name: 'roost-search' });
    this.pool.on('error', (e) => console.error('roost: postgres connection lost (search pool):', e.message));
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => {});
  }

  /** The commit listener (this node's commits): indexed right after, in order. */
  committed(entries: LogEntry[]): void {
    if (searchStreamOf(entries[0].stream) === null) return;
    // Bounded: past PENDING_MAX (the database slower than the appends) a commit is
    // left to the next search's catch-up, whose streams' marks stop below it.
    if (this.pending.length + entries.length > PENDING_MAX) return;
    for (const e of entries) this.pending.push(e);
    if (!this.writing) this.writing = this.drainLoop();
  }

  private async drainLoop(): Promise<void> {
    try {
      let failures = 0;
      while (this.pending.length) {
        const batch = this.pending.splice(0, SEARCH_LIMITS.chunk);
        try {
          await this.write(batch);
          failures = 0;
          await this.indexed(batch.length);
        } catch (e) {
          // A batch left out stalls its streams' marks below it (they move only
          // over runs without a gap), and the next search then re-reads the log
          // from there: tried again, in order, a few times before giving up
          // (nothing is lost then either: the next search catches up).
          if (++failures <= WRITE_TRIES) {
            this.pending.unshift(...batch);
            await new Promise((r) => setTimeout(r, 100 * 2 ** failures));
            continue;
          }
          failures = 0;
          console.error('roost: indexing for search failed:', (e as Error).message);
        }
      }
    } finally {
      this.writing = null;
    }
  }

  /** Waits for this node's queued index writes. */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Indexes entries (in position order per stream) and moves the marks over runs that start at or before them. */
  private async write(entries: LogEntry[]): Promise<void> {
    const cols: unknown[][] = Array.from({ length: 14 }, () => []);
    const spans = new Map<string, [number, number]>();
    for (const e of entries) {
      const doc = searchDocOf(e.stream, e.type, e.value ?? e.body);
      if (doc) {
        const row = [e.stream, e.position, e.at, doc.project, doc.family, doc.kind, doc.agent, doc.team, doc.vendor, doc.tool, doc.status, doc.decider, doc.text, tsvectorOf(doc.words)];
        for (let k = 0; k < row.length; k++) cols[k].push(row[k]);
      }
      const s = spans.get(e.stream);
      if (s) s[1] = e.position;
      else spans.set(e.stream, [e.position, e.position]);
    }
    const ss = [...spans.keys()];
    const fs = ss.map((s) => spans.get(s)![0]);
    const ls = ss.map((s) => spans.get(s)![1]);
    // One statement: the docs, then the marks (a mark moves only over a run starting at or before it).
    await this.q(
      `WITH d AS (
         INSERT INTO search_docs (stream, position, at, project, family, kind, agent, team, vendor, tool, status, decider, text, words)
         SELECT s, p, a, pr, f, k, ag, t, v, tl, st, dc, x, w::tsvector
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
           AS u(s, p, a, pr, f, k, ag, t, v, tl, st, dc, x, w)
         ON CONFLICT DO NOTHING RETURNING 1
       ), up AS (
         UPDATE search_heads h SET indexed = u.l
         FROM unnest($15::text[], $16::bigint[], $17::bigint[]) AS u(s, f, l)
         WHERE h.stream = u.s AND h.indexed >= u.f - 1 AND h.indexed < u.l
         RETURNING 1
       )
       INSERT INTO search_heads (stream, indexed)
       SELECT s, l FROM unnest($15::text[], $16::bigint[], $17::bigint[]) AS u(s, f, l) WHERE f = 1
       ON CONFLICT (stream) DO NOTHING`,
      [...cols, ss, fs, ls],
    );
  }

  /**
   * Counts what this node indexed and refreshes the planner's statistics of
   * `search_docs` each time the count doubles (from ANALYZE_FIRST on), not
   * relying on autovacuum (which may be off, or late): with no or stale
   * statistics, on a million rows, the planner sorted every match of a word
   * (seconds, past the statement timeout) instead of walking the newest
   * first and stopping at a page (under a millisecond).
   */
  private async indexed(n: number): Promise<void> {
    this.sinceAnalyze += n;
    if (this.sinceAnalyze < Math.max(ANALYZE_FIRST, this.analyzedRows)) return;
    this.analyzedRows += this.sinceAnalyze;
    this.sinceAnalyze = 0;
    await this.q('ANALYZE search_docs', []).catch((e: Error) => console.error('roost: ANALYZE search_docs failed:', e.message));
  }

  private sinceAnalyze = 0;
  private analyzedRows = 0;

  /**
   * Indexes `streams` past their marks, and the fleet threads whose streams
   * are `<fleet><thread>` (`fleet`: a project's prefix of them, see
   * fleetPrefixOf), however many.
   */
  private async catchUp(streams: string[], fleet: string | null = null): Promise<number> {
    let indexed = 0;
    for (let round = 0; ; round++) {
      const r = await this.q<{ stream: string; head: string; indexed: string }>(
        `SELECT s.stream, s.head, COALESCE(h.indexed, 0) AS indexed FROM streams s LEFT JOIN search_heads h ON h.stream = s.stream
         WHERE (${STREAMS_OF('$1', '$2')}) AND s.head > COALESCE(h.indexed, 0)`,
        [streams, fleet],
      );
      if (r.rows.length === 0) return indexed;
      for (const row of r.rows) {
        const e = await this.q<{ stream: string; position: string; type: string; body: string; at: string }>(
          'SELECT stream, position, type, body, at FROM events WHERE stream = $1 AND position > $2 ORDER BY position LIMIT $3',
          [row.stream, row.indexed, SEARCH_LIMITS.chunk],
        );
        await this.write(e.rows.map((x) => ({ stream: x.stream, position: Number(x.position), type: x.type, body: x.body, at: Number(x.at) })));
        indexed += e.rows.length;
        await this.indexed(e.rows.length);
      }
      if (round > 100_000) throw new StoreError('internal', 'the search index does not catch up');
    }
  }

  async rebuild(): Promise<number> {
    await this.settled();
    await this.q('TRUNCATE search_docs, search_heads', []);
    const r = await this.q<{ stream: string }>('SELECT stream FROM streams', []);
    const streams = r.rows.map((x) => x.stream).filter((s) => searchStreamOf(s) !== null);
    await this.catchUp(streams);
    const n = await this.q<{ n: string }>('SELECT COUNT(*) AS n FROM search_docs', []);
    return Number(n.rows[0].n);
  }

  /** Catches up every indexed stream (at open, in the background). */
  async backfill(): Promise<void> {
    const r = await this.q<{ stream: string }>('SELECT stream FROM streams', []);
    await this.catchUp(r.rows.map((x) => x.stream).filter((s) => searchStreamOf(s) !== null));
  }

  async search(query: SearchQuery): Promise<SearchPage> {
    const terms = parseQuery(query.q);
    const limit = Math.max(1, Math.min(SEARCH_LIMITS.maxPage, Math.floor(query.limit ?? SEARCH_LIMITS.page)));
    const cursor = decodeSearchCursor(query.cursor);
    if (terms.length === 0) return { hits: [], next: null };
    await this.settled();
    const streams = projectStreams(query.project);
    const fleet = fleetPrefixOf(query.project);
    const where = ['d.words @@ $1::tsquery', 'd.project = $2'];
    const args: unknown[] = [tsqueryOf(terms), query.project, streams, fleet];
    const arg = (v: unknown): string => {
      args.push(v);
      return `$${args.length}`;
    };
    if (query.team !== undefined) where.push(`d.team = ${arg(query.team)}`);
    if (query.agent !== undefined) where.push(`d.agent = ${arg(query.agent)}`);
    if (query.kind !== undefined) where.push(`d.kind = ${arg(query.kind)}`);
    for (const f of SEARCH_FILTERS) if (query[f] !== undefined) where.push(`d.${f} = ${arg(query[f])}`);
    if (query.from !== undefined) where.push(`d.at >= ${arg(query.from)}`);
    if (query.to !== undefined) where.push(`d.at < ${arg(query.to)}`);
    // Streams order by their bytes ("C"), as SQLite's do.
    if (cursor) where.push(`(d.at, d.stream COLLATE "C", d.position) < (${arg(cursor[0])}, ${arg(cursor[1])}::text COLLATE "C", ${arg(cursor[2])})`);
    // One round trip when the index is current: the page, and (in the same
    // snapshot) whether any of the project's streams holds events past its
    // mark (another node's commit not indexed yet, a crash's gap). Only then
    // is the project caught up and the page read again: what committed before
    // this search is found by it.
    const sql = `WITH stale AS (
        SELECT EXISTS (SELECT 1 FROM streams s LEFT JOIN search_heads h ON h.stream = s.stream
          WHERE (${STREAMS_OF('$3', '$4')}) AND s.head > COALESCE(h.indexed, 0)) AS stale
      )
      SELECT stale.stale, m.* FROM stale LEFT JOIN LATERAL (
        SELECT d.stream, d.position, d.at, d.family, d.kind, d.agent, d.team, d.text FROM search_docs d WHERE ${where.join(' AND ')}
        ORDER BY d.at DESC, d.stream COLLATE "C" DESC, d.position DESC LIMIT ${arg(limit + 1)}
      ) m ON true`;
    let rows: DocRow[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      let got: (DocRow & { stale: boolean })[];
      // Bounded: the search pool's sessions cancel a statement past SEARCH_LIMITS.statementMs.
      try {
        got = (await this.pool.query<DocRow & { stale: boolean }>(sql, args)).rows;
      } catch (e) {
        const code = (e as { code?: string }).code;
        throw new StoreError(code === '57014' || code === 'ECONNREFUSED' || code?.startsWith('08') ? 'unavailable' : 'internal', `search failed: ${(e as Error).message}`, { cause: e });
      }
      rows = got.filter((r) => r.stream !== null);
      if (attempt > 0 || !got[0]?.stale) break;
      await this.catchUp(streams, fleet);
    }
    return searchPage(rows, limit, terms);
  }
}
