// The embedded store's search index thread (sqlite-indexer.ts starts it and
// says what it does): two connections, the log's file read only and the
// index's own file, and the index (sqlite-search.ts) between them.

import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { FromIndexer, IndexerData, ToIndexer } from './sqlite-indexer.js';
import { SearchIndex } from './sqlite-search.js';
import { StoreError } from './types.js';

const data = workerData as IndexerData;
const port = parentPort!;
const log = new Database(data.log, { fileMustExist: true });
log.pragma('busy_timeout = 5000');
const ix = new Database(data.ix);
// Derived data: a machine's crash may lose the last batches (the marks with them, in the same commits), never the file.
ix.pragma('journal_mode = WAL');
ix.pragma('synchronous = NORMAL');
ix.pragma('busy_timeout = 5000');
const index = new SearchIndex(log, ix);
if (data.backfill) index.touchAll();

let timer: NodeJS.Timeout | null = null;
let closed = false;

function schedule(ms: number): void {
  if (timer || closed) return;
  timer = setTimeout(step, ms);
}

/** One batch, then the next (other messages come in between) until caught up. */
function step(): void {
  timer = null;
  try {
    index.step();
  } catch (e) {
    // The marks did not move: the next commit of those streams, or a search, catches up.
    console.error('roost: indexing for search failed', e);
    return;
  }
  if (index.behind) schedule(0);
}

function failure(e: unknown): { kind: StoreError['kind']; message: string } {
  return e instanceof StoreError ? { kind: e.kind, message: e.message } : { kind: 'internal', message: `search failed: ${(e as Error)?.message ?? String(e)}` };
}

port.on('message', (m: ToIndexer) => {
  if (closed) return;
  switch (m.t) {
    case 'touched':
      index.touched(m.streams);
      schedule(data.delayMs);
      return;
    case 'search':
    case 'rebuild': {
      let answer: FromIndexer;
      try {
        answer = { id: m.id, ok: m.t === 'search' ? index.search(m.query) : index.rebuild() };
      } catch (e) {
        answer = { id: m.id, fail: failure(e) };
      }
      port.postMessage(answer);
      return;
    }
    case 'close':
      closed = true;
      if (timer) clearTimeout(timer);
      ix.close();
      log.close();
      port.close();
      return;
  }
});

if (index.behind) schedule(0);
