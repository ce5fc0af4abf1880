// Who writes the embedded store's search index (sqlite-search.ts), and when:
// a thread of its own (sqlite-index-worker.ts), off the request path.
//
// The store tells it which streams took commits: a set of stream names,
// posted once per event-loop turn at most (one message, whatever the number
// of commits). The thread waits INDEX_DELAY_MS after the first such message,
// so that a batch gathers what came meanwhile, then indexes what the log
// holds past the streams' marks, up to SEARCH_LIMITS.chunk events per
// transaction, a transaction after another until it is caught up. So an event
// is in the index about INDEX_DELAY_MS after its commit, and a search, sent to
// the same thread, first catches its project's streams up to the log: what
// committed before a search is found by it. Searches run on that thread too
// (the event loop only waits for the answer), and so does `rebuild()`.
//
// The thread starts with the store's first commit of an indexed stream or its
// first search (a short-lived store, a CLI command, never pays for it), and
// first catches up every indexed stream of the log: what a crash lost between
// a commit and its indexing, or a log from before the index. Should it fail,
// the searches waiting are refused ('unavailable') and the next one starts a
// new thread (the marks say where to go on).
//
// An in-memory store (':memory:', no file another connection could open) has
// no thread: the same index, in its own connection, on the event loop.

import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import { searchStreamOf } from '../core/search-text.js';
import { SearchIndex, indexPathOf, type SearchFailure } from './sqlite-search.js';
import { StoreError, type LogEntry, type SearchPage, type SearchQuery } from './types.js';

/** How long the indexer lets commits gather before it indexes them (ms): the bound on how late the index is, past a batch's own time. */
export const INDEX_DELAY_MS = 50;

/** What the store sends its index thread. */
export type ToIndexer = { t: 'touched'; streams: string[] } | { t: 'search'; id: number; query: SearchQuery } | { t: 'rebuild'; id: number } | { t: 'close' };
/** What the thread answers a search or a rebuild. */
export type FromIndexer = { id: number; ok: SearchPage | number } | { id: number; fail: SearchFailure };

/** What the thread is given at its start. */
export interface IndexerData {
  log: string;
  ix: string;
  delayMs: number;
  /** Catch every indexed stream up at the start. */
  backfill: boolean;
}

// The thread's entry: plain JavaScript run from a string (eval), which imports
// the worker module: dist's .js, or (tests, under tsx) the .ts source with
// tsx's loader registered in the thread first.
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();
`;

export class SqliteIndexer {
  private worker: Worker | null = null;
  /** An in-memory store's index, on the event loop (no thread). */
  private local: SearchIndex | null = null;
  private localTimer: NodeJS.Timeout | null = null;
  private touched = new Set<string>();
  private posting = false;
  private waiting = new Map<number, { resolve: (v: SearchPage | number) => void; reject: (e: unknown) => void }>();
  private nextId = 1;
  private closed = false;

  constructor(
    private db: Database.Database,
    private path: string,
    /** 'commit': commits are indexed as they come; 'search': only a search indexes (SqliteOptions.searchIndex). */
    private mode: 'commit' | 'search',
  ) {}

  /** The commit listener: notes the stream; one message per turn at most. */
  committed(entries: LogEntry[]): void {
    if (this.mode === 'search' || this.closed) return;
    const stream = entries[0].stream;
    if (searchStreamOf(stream) === null) return;
    this.touched.add(stream);
    if (!this.posting) {
      this.posting = true;
      setImmediate(this.post);
    }
  }

  private post = (): void => {
    this.posting = false;
    if (this.closed || this.touched.size === 0) return;
    const streams = [...this.touched];
    this.touched.clear();
    if (this.path === ':memory:') {
      const ix = this.inMemory();
      ix.touched(streams);
      this.localTimer ??= setTimeout(this.localStep, INDEX_DELAY_MS).unref();
      return;
    }
    this.started().postMessage({ t: 'touched', streams } satisfies ToIndexer);
  };

  private inMemory(): SearchIndex {
    if (!this.local) {
      this.local = new SearchIndex(this.db, this.db);
      if (this.mode === 'commit') this.local.touchAll();
    }
    return this.local;
  }

  private localStep = (): void => {
    this.localTimer = null;
    if (this.closed || !this.local) return;
    try {
      this.local.step();
    } catch (e) {
      console.error('roost: indexing for search failed', e);
      return;
    }
    if (this.local.behind) this.localTimer = setTimeout(this.localStep, 0).unref();
  };

  private started(): Worker {
    if (this.worker) return this.worker;
    const ts = import.meta.url.endsWith('.ts');
    const entry = new URL(ts ? './sqlite-index-worker.ts' : './sqlite-index-worker.js', import.meta.url).href;
    const tsx = ts ? import.meta.resolve('tsx/esm/api') : null;
    const workerData: IndexerData & { entry: string; tsx: string | null } = {
      log: this.path,
      ix: indexPathOf(this.path),
      delayMs: INDEX_DELAY_MS,
      backfill: this.mode === 'commit',
      entry,
      tsx,
    };
    const w = new Worker(BOOT, { eval: true, workerData });
    w.on('message', (m: FromIndexer) => this.answered(m));
    w.on('error', (e) => {
      console.error('roost: the search index thread failed', e);
      this.lost(w);
    });
    w.on('exit', () => this.lost(w));
    // An open store never keeps a process alive; a search waiting for an answer does (see request()).
    w.unref();
    this.worker = w;
    return w;
  }

  /** The thread is gone: what waited for it is refused; the next use starts another. */
  private lost(w: Worker): void {
    if (this.worker !== w) return;
    this.worker = null;
    const e = this.closed ? new StoreError('closed', 'store is closed') : new StoreError('unavailable', 'the search index is not available');
    for (const p of this.waiting.values()) p.reject(e);
    this.waiting.clear();
  }

  private answered(m: FromIndexer): void {
    const p = this.waiting.get(m.id);
    if (!p) return;
    this.waiting.delete(m.id);
    if (this.waiting.size === 0) this.worker?.unref();
    if ('ok' in m) p.resolve(m.ok);
    else p.reject(new StoreError(m.fail.kind, m.fail.message));
  }

  private request(m: { t: 'search'; query: SearchQuery } | { t: 'rebuild' }): Promise<SearchPage | number> {
    if (this.closed) return Promise.reject(new StoreError('closed', 'store is closed'));
    if (this.path === ':memory:') {
      try {
        const ix = this.inMemory();
        return Promise.resolve(m.t === 'search' ? ix.search(m.query) : ix.rebuild());
      } catch (e) {
        return Promise.reject(e instanceof StoreError ? e : new StoreError('internal', `search failed: ${(e as Error).message}`, { cause: e }));
      }
    }
    const w = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) w.ref();
      this.waiting.set(id, { resolve, reject });
      w.postMessage({ ...m, id } satisfies ToIndexer);
    });
  }

  search(query: SearchQuery): Promise<SearchPage> {
    return this.request({ t: 'search', query }) as Promise<SearchPage>;
  }

  rebuild(): Promise<number> {
    return this.request({ t: 'rebuild' }) as Promise<number>;
  }

  /** Stops the thread (its connections closed first, so the store's is the last to close). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.localTimer) clearTimeout(this.localTimer);
    const w = this.worker;
    if (!w) return;
    w.ref();
    await new Promise<void>((done) => {
      w.once('exit', () => done());
      w.postMessage({ t: 'close' } satisfies ToIndexer);
      setTimeout(() => void w.terminate().then(() => done()), 5000).unref();
    });
  }
}
