// The storage layer's public surface.
export type { AppendOptions, AppendResult, BroadcastListener, CommitListener, EventStore, LogEntry, NewEvent, Snapshot, StoreCapabilities, StoreErrorKind } from './types.js';
export { BROADCAST_MAX_BYTES, KEY_CONFLICT, StoreError } from './types.js';
export { SqliteStore } from './sqlite.js';

import { join } from 'node:path';
import { SqliteStore } from './sqlite.js';
import type { EventStore } from './types.js';

/**
 * Opens the store named by `db`: a `postgres://` URL for several nodes, or
 * nothing for the embedded SQLite file under `dataDir`.
 */
export async function openStore(opts: { db?: string; dataDir: string }): Promise<EventStore> {
  if (opts.db && /^postgres(ql)?:\/\//.test(opts.db)) {
    const { PostgresStore } = await import('./postgres.js');
    return PostgresStore.open(opts.db);
  }
  if (opts.db && opts.db !== 'sqlite') throw new Error(`unknown database "${opts.db}": use a postgres:// URL, or leave it out for SQLite`);
  // ROOST_SEARCH_INDEX=search: the index is written only when a search asks (SqliteOptions.searchIndex; the ingest bench's comparison).
  return new SqliteStore({ path: join(opts.dataDir, 'roost.db'), searchIndex: process.env.ROOST_SEARCH_INDEX === 'search' ? 'search' : 'commit' });
}
