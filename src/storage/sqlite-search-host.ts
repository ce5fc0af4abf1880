// Where the embedded store's search index runs (sqlite-search.ts): on a
// worker thread with connections of its own for a store in a file, on the
// event loop for a ':memory:' store (a worker cannot open another thread's
// memory). Both hosts drive the same SearchEngine the same way (`pace`): the
// streams the commits moved are noted, and one transaction is written per
// turn while any has events past its mark.
//
// The store's side sends the worker one message per event-loop turn with the
// streams its commits moved (not their events: the worker reads those from
// the log), and a search or a rebuild as a request answered by id. Should the
// worker fail, its pending requests fail as 'unavailable' and the next one
// starts a new worker (which catches up from the marks, as at open).

import Database from 'better-sqlite3';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SearchEngine, indexPathOf } from './sqlite-search.js';
import { StoreError, type SearchPage, type SearchQuery, type StoreErrorKind } from './types.js';

/** The store's handle on its index, wherever it runs. */
export interface SearchIndex {
  /** A commit moved `stream` on, by `events`. */
  moved(stream: string, events: number): void;
  search(query: SearchQuery): Promise<SearchPage>;
  rebuild(): Promise<number>;
  /** Stops indexing (what is not indexed yet is caught up at the next open). */
  close(): Promise<void>;
}

export interface SearchIndexOptions {
  /** The store's own connection (the ':memory:' host indexes beside the log in it). */
  db: Database.Database;
  /** The log's file, or ':memory:'. */
  path: string;
  /** The log's epoch (SqliteStore.epoch). */
  epoch: string;
  /** Index after the commits and catch up every stream at open ('commit'), or only when a search asks. */
  followCommits: boolean;
}

export function openSearchIndex(o: SearchIndexOptions): SearchIndex {
  return o.path === ':memory:' ? new LoopSearchIndex(o) : new WorkerSearchIndex(o);
}

/**
 * Runs `engine.work()` once per turn (setImmediate) while it is behind, from
 * `start()` on; `worked` hears how many events each transaction read. Returns
 * `start`. Errors are logged: nothing is lost, the marks did not move, and
 * the next commit, search or open catches up.
 */
export function pace(engine: SearchEngine, stopped: () => boolean, worked: (n: number) => void = () => {}): () => void {
  let planned = false;
  const step = (): void => {
    planned = false;
    if (stopped()) return;
    try {
      worked(engine.work());
    } catch (e) {
      console.error('roost: indexing for search failed', e);
      return;
    }
    if (engine.behind) start();
  };
  const start = (): void => {
    if (planned || stopped()) return;
    planned = true;
    setImmediate(step);
  };
  return start;
}

/** A ':memory:' store's index: the engine on the event loop, its tables beside the log. */
class LoopSearchIndex implements SearchIndex {
  private engine: SearchEngine;
  private closed = false;
  private start: () => void;

  constructor(o: SearchIndexOptions) {
    this.engine = new SearchEngine(o.db, o.db, o.epoch);
    this.start = pace(this.engine, () => this.closed);
    if (o.followCommits) {
      this.engine.catchUpAll();
      this.start();
    }
  }

  moved(stream: string): void {
    this.engine.moved(stream);
    this.start();
  }

  async search(query: SearchQuery): Promise<SearchPage> {
    return this.engine.search(query);
  }

  async rebuild(): Promise<number> {
    return this.engine.rebuild();
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** What a worker is told (see sqlite-search-worker.ts). */
export type ToWorker =
  | { t: 'ready'; id: number }
  | { t: 'moved'; streams: string[] }
  | { t: 'search'; id: number; query: SearchQuery }
  | { t: 'rebuild'; id: number }
  | { t: 'close'; id: number };

/** What it answers: a request's answer by id, or (`id` 0) the events a transaction of `work()` indexed, read or not. */
export type FromWorker = { id: number; ok: unknown } | { id: number; error: { kind: StoreErrorKind; message: string } } | { id: 0; worked: number };

export interface WorkerData {
  log: string;
  index: string;
  epoch: string;
  /** 'background': the commits' indexing, at the lowest priority; 'foreground': searches, rebuilds, and a lag past LAG_CAP. */
  lane: 'background' | 'foreground';
  followCommits: boolean;
}

/**
 * Events committed and not yet indexed past which the foreground lane
 * indexes too: how much a busy machine may defer (and a search then write
 * first, at the requests' priority: about 13 µs per event here).
 */
export const LAG_CAP = 20_000;

// The worker's entry, run from a string so that the compiled server and the
// tests (TypeScript under tsx, which a worker does not inherit) start it alike.
const BOOT = `const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import('tsx/esm/api')).register();
  await import(workerData.entry);
})().catch((e) => { setImmediate(() => { throw e; }); });`;

// Compiled, the worker's file beside this one. Under tsx (the tests), the
// TypeScript file, which costs the worker about half a second of CPU to load
// through tsx: `npm test` builds dist/ first and, when that build is newer
// than every source file, names its compiled worker in ROOST_SEARCH_WORKER
// (scripts/test.mjs), which is then run instead.
const OWN = import.meta.url;
const ENTRY = OWN.endsWith('.ts')
  ? process.env.ROOST_SEARCH_WORKER
    ? pathToFileURL(process.env.ROOST_SEARCH_WORKER).href
    : new URL('./sqlite-search-worker.ts', OWN).href
  : new URL('./sqlite-search-worker.js', OWN).href;

/** One worker thread and its requests. */
class Lane {
  private worker: Worker | null = null;
  private nextId = 1;
  private waiting = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();

  constructor(
    private data: WorkerData,
    /** What its transactions indexed (FromWorker `worked`). */
    private worked: (n: number) => void,
  ) {}

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(BOOT, { eval: true, workerData: { ...this.data, tsx: ENTRY.endsWith('.ts'), entry: ENTRY } });
    w.unref();
    w.on('message', (m: FromWorker) => {
      if ('worked' in m) return this.worked(m.worked);
      const p = this.waiting.get(m.id);
      if (!p) return;
      this.waiting.delete(m.id);
      if (this.waiting.size === 0) w.unref();
      if ('error' in m) p.fail(new StoreError(m.error.kind, m.error.message));
      else p.ok(m.ok);
    });
    const gone = (why: string): void => {
      if (this.worker !== w) return;
      this.worker = null;
      for (const p of this.waiting.values()) p.fail(new StoreError('unavailable', `search index: ${why}`));
      this.waiting.clear();
    };
    w.on('error', (e) => {
      console.error('roost: a search index worker failed', e);
      gone(e.message);
    });
    w.on('exit', (code) => gone(`its worker exited (${code})`));
    this.worker = w;
    return w;
  }

  tell(m: ToWorker): void {
    this.ensure().postMessage(m);
  }

  ask<T>(m: (id: number) => ToWorker): Promise<T> {
    const id = this.nextId++;
    const w = this.ensure();
    return new Promise<T>((ok, fail) => {
      // Held while a request waits (a script awaiting a search does not exit under it), not otherwise.
      if (this.waiting.size === 0) w.ref();
      this.waiting.set(id, { ok: ok as (v: unknown) => void, fail });
      w.postMessage(m(id));
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    if (!w) return;
    try {
      await this.ask((id) => ({ t: 'close', id }));
    } catch {
      // Gone already: nothing to close.
    }
    this.worker = null;
    await w.terminate();
  }
}

/**
 * A store in a file: two worker threads on the index's file. The background
 * lane indexes what the commits moved at the lowest priority (Linux's nice
 * 19, for that thread only), so it takes only the CPU the requests leave; the
 * foreground lane, at the process's priority, answers searches (catching
 * their project's streams up first) and rebuilds, and indexes beside the
 * background lane while more than LAG_CAP events wait. The foreground lane
 * starts after the background one opened the file (which may drop it, see
 * sqlite-search-worker.ts).
 */
class WorkerSearchIndex implements SearchIndex {
  private background: Lane;
  private foreground: Lane;
  /** The background lane has opened the index's file. */
  private ready: Promise<void>;
  /** The streams moved this turn, sent once at its end. */
  private moves = new Set<string>();
  private sending = false;
  /** Events committed on indexed streams and not reported indexed yet (a trigger, not an account: may drift, kept ≥ 0). */
  private lag = 0;
  private closed = false;

  constructor(o: SearchIndexOptions) {
    const data = { log: o.path, index: indexPathOf(o.path), epoch: o.epoch, followCommits: o.followCommits };
    const worked = (n: number): void => {
      this.lag = Math.max(0, this.lag - n);
    };
    this.background = new Lane({ ...data, lane: 'background' }, worked);
    this.foreground = new Lane({ ...data, lane: 'foreground', followCommits: false }, worked);
    this.ready = this.background.ask<boolean>((id) => ({ t: 'ready', id })).then(
      () => {},
      () => {},
    );
  }

  moved(stream: string, events: number): void {
    if (this.closed) return;
    this.lag += events;
    this.moves.add(stream);
    if (this.sending) return;
    this.sending = true;
    setImmediate(this.send);
  }

  private send = (): void => {
    this.sending = false;
    if (this.closed || this.moves.size === 0) return;
    const m: ToWorker = { t: 'moved', streams: [...this.moves] };
    this.moves.clear();
    this.background.tell(m);
    if (this.lag > LAG_CAP) {
      void this.ready.then(() => {
        if (!this.closed) this.foreground.tell(m);
      });
    }
  };

  async search(query: SearchQuery): Promise<SearchPage> {
    await this.ready;
    return this.foreground.ask((id) => ({ t: 'search', id, query }));
  }

  async rebuild(): Promise<number> {
    await this.ready;
    return this.foreground.ask((id) => ({ t: 'rebuild', id }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.send();
    this.closed = true;
    await this.ready;
    await this.foreground.close();
    await this.background.close();
  }
}
