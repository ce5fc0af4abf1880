// A search index's worker thread, one of its two lanes (sqlite-search-host.ts):
// its own connections to the index's file and to the log (read only), the
// engine (sqlite-search.ts) paced as on the loop, and the store's requests
// answered by id in the order they came.

import Database from 'better-sqlite3';
import { readFileSync, rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { pace, type FromWorker, type ToWorker, type WorkerData } from './sqlite-search-host.js';
import { SearchEngine } from './sqlite-search.js';
import { StoreError } from './types.js';

const data = workerData as WorkerData;
const port = parentPort!;
const background = data.lane === 'background';

// The background lane at the lowest priority, for its thread only (Linux's
// nice is per thread): it takes the CPU the requests leave, so a busy machine
// defers the index (measured: single-event ingest at 86% of its unindexed
// rate with it at the process's priority, 97% at 19).
if (background) {
  try {
    setPriority(19);
  } catch {
    // Not allowed here: the lane runs at the process's priority.
  }
}

/** This boot of the machine (Linux), or null where it cannot be told. */
function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}
const boot = bootId();

/**
 * The index's file, written with synchronous=OFF where the machine's boot can
 * be told: no fsync at all (its checkpoints' fsyncs made the log's own
 * fsyncs wait: single-event ingest at 82% of its unindexed rate, 97–98%
 * without them). A process that dies loses nothing of it (the OS holds what
 * it wrote); only a machine that stops can leave it torn, so the background
 * lane keeps the boot it opened it in, durably, until a clean close: opened
 * in another boot without that close, or unreadable, the file is dropped and
 * filled again from the log. Where the boot cannot be told,
 * synchronous=NORMAL (its checkpoints fsync; a lost tail is indexed again
 * from the marks).
 */
function openIndex(): Database.Database {
  const open = (): Database.Database => {
    const db = new Database(data.index);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 10000');
    db.exec('CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    return db;
  };
  if (!background) {
    const db = open();
    db.pragma(boot ? 'synchronous = OFF' : 'synchronous = NORMAL');
    return db;
  }
  let db: Database.Database | null = null;
  try {
    db = open();
    const was = (db.prepare("SELECT value FROM search_meta WHERE key = 'open'").get() as { value: string } | undefined)?.value;
    if (was && was !== boot) throw new Error('the machine stopped while it was open');
  } catch (e) {
    console.error(`roost: the search index is dropped and filled again from the log (${(e as Error).message})`);
    db?.close();
    for (const f of [data.index, `${data.index}-wal`, `${data.index}-shm`]) rmSync(f, { force: true });
    db = open();
  }
  db.pragma('synchronous = FULL');
  db.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('open', ?)").run(boot ?? '');
  db.pragma(boot ? 'synchronous = OFF' : 'synchronous = NORMAL');
  return db;
}

const log = new Database(data.log, { fileMustExist: true });
log.pragma('query_only = ON');
log.pragma('busy_timeout = 10000');
const index = openIndex();

let closed = false;
// The background lane's transactions are short (it may be descheduled holding the file's write lock).
const engine = new SearchEngine(index, log, data.epoch, background ? 256 : undefined);
const start = pace(
  engine,
  () => closed,
  (n) => {
    if (n > 0) port.postMessage({ id: 0, worked: n } satisfies FromWorker);
  },
);
if (data.followCommits) {
  engine.catchUpAll();
  start();
}

/** A clean close: the background lane makes everything durable, then takes the mark of an open file away. */
function close(): void {
  if (background) {
    index.pragma('synchronous = FULL');
    index.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('open', '')").run();
  }
  index.close();
  log.close();
}

function answer(id: number, run: () => unknown): void {
  let m: FromWorker;
  try {
    m = { id, ok: run() };
  } catch (e) {
    const kind = e instanceof StoreError ? e.kind : 'internal';
    m = { id, error: { kind, message: e instanceof Error ? e.message : String(e) } };
  }
  port.postMessage(m);
}

port.on('message', (m: ToWorker) => {
  if (closed) return;
  switch (m.t) {
    case 'ready':
      answer(m.id, () => true);
      break;
    case 'moved':
      for (const s of m.streams) engine.moved(s);
      start();
      break;
    case 'search':
      answer(m.id, () => engine.search(m.query));
      break;
    case 'rebuild':
      answer(m.id, () => engine.rebuild());
      break;
    case 'close':
      closed = true;
      answer(m.id, () => {
        close();
        return true;
      });
      port.close();
      break;
  }
});
