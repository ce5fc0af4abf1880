// The PostgreSQL store (postgres.ts) before its first append: the URL it is
// given (Roost's own `schema` and `pool` parameters), its schema and its
// migrations (run by one node at a time, across every node), and what a
// driver's error means to the store (its StoreError kind, whether a retry
// may fix it).

import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { PG_SEARCH_FILTERS_MIGRATION, PG_SEARCH_MIGRATION } from './pg-search.js';
import { StoreError, type StoreErrorKind } from './types.js';

const MIGRATIONS = [
  `CREATE TABLE streams (
     stream text PRIMARY KEY,
     head bigint NOT NULL
   );
   CREATE TABLE events (
     stream text NOT NULL,
     position bigint NOT NULL,
     type text NOT NULL,
     body text NOT NULL,
     at bigint NOT NULL,
     PRIMARY KEY (stream, position)
   );
   CREATE TABLE idempotency (
     key text PRIMARY KEY,
     stream text NOT NULL,
     first bigint NOT NULL,
     last bigint NOT NULL,
     at bigint NOT NULL
   );
   CREATE TABLE snapshots (
     stream text NOT NULL,
     position bigint NOT NULL,
     state text NOT NULL,
     at bigint NOT NULL,
     PRIMARY KEY (stream, position)
   );`,
  // Lets one statement fail as a whole on a condition (see fastWrite).
  `CREATE FUNCTION roost_assert(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql AS $$
   BEGIN
     IF NOT ok THEN RAISE EXCEPTION '%', message; END IF;
     RETURN ok;
   END $$;`,
  // 3: keys scoped in the store, as in SQLite's migration 2 (see sqlite.ts):
  // namespace (scope, scoped), fingerprint, the first answer; an old key loses
  // its hand-made `<stream>:` prefix. Every node of the old version must be
  // stopped first (they would write keys into the old shape).
  `CREATE TABLE idempotency_scoped (
     scope text NOT NULL,
     scoped smallint NOT NULL,
     key text NOT NULL,
     stream text NOT NULL,
     first bigint NOT NULL,
     last bigint NOT NULL,
     at bigint NOT NULL,
     fingerprint text,
     answer text,
     PRIMARY KEY (scope, scoped, key)
   );
   INSERT INTO idempotency_scoped (scope, scoped, key, stream, first, last, at)
     SELECT stream, 0,
            CASE WHEN length(key) > length(stream) + 1 AND left(key, length(stream) + 1) = stream || ':'
                 THEN substr(key, length(stream) + 2) ELSE key END,
            stream, first, last, at
     FROM idempotency ORDER BY at, stream, first
   ON CONFLICT DO NOTHING;
   DROP TABLE idempotency;
   ALTER TABLE idempotency_scoped RENAME TO idempotency;
   ALTER INDEX idempotency_scoped_pkey RENAME TO idempotency_pkey;`,
  // 4: the full-text index, derived from the log (pg-search.ts); filled by the catch-up at open.
  PG_SEARCH_MIGRATION,
  // 5: the index's vendor, tool, status and decider; emptied, refilled from the log by the catch-up at open.
  PG_SEARCH_FILTERS_MIGRATION,
];

/** Another node committed one of the batch's keys after we looked: the batch is redone (and then finds it). */
export function isKeyRace(e: unknown): boolean {
  return e instanceof Error && e.message.includes('roost: key race');
}

export const RETRYABLE = new Set(['40P01', '40001']); // deadlock, serialization failure

export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P') || code === 'ECONNREFUSED' || code === 'ECONNRESET')) return true;
  const msg = e instanceof Error ? e.message : '';
  return /Connection terminated|ECONNRESET|ECONNREFUSED|not queryable|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(msg);
}

/** A driver error's kind: what a retry later may fix ('unavailable'), what the caller sent, or neither. */
export function kindOf(e: unknown): StoreErrorKind {
  if (e instanceof StoreError) return e.kind;
  const code = (e as { code?: string } | null)?.code ?? '';
  // Lost or refused connections, too many connections, disk full, shutting down; deadlocks past the retries.
  if (isConnectionError(e) || code.startsWith('53') || RETRYABLE.has(code)) return 'unavailable';
  // A value PostgreSQL cannot hold (a bad byte sequence, a string too long, a NOT NULL violated).
  if (code.startsWith('22') || code === '23502' || e instanceof TypeError) return 'bad_input';
  return 'internal';
}

export function storeError(what: string, e: unknown): StoreError {
  return e instanceof StoreError ? e : new StoreError(kindOf(e), `${what}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

/** Brings `schema` up to MIGRATIONS, one node at a time across every node; the store's epoch. */
export async function migrate(pool: pg.Pool, schema: string): Promise<string> {
  const c = await pool.connect();
  try {
    // One migrator at a time per schema, across every node: the others wait here
    // and then find the schema up to date.
    await c.query('SELECT pg_advisory_lock(hashtext($1))', [`roost-migrate:${schema}`]);
    try {
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      await c.query('CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL)');
      const row = await c.query<{ value: string }>("SELECT value FROM meta WHERE key = 'schema'");
      let version = row.rows.length ? Number(row.rows[0].value) : 0;
      await c.query('BEGIN');
      try {
        for (; version < MIGRATIONS.length; version++) await c.query(MIGRATIONS[version]);
        await c.query(
          "INSERT INTO meta (key, value) VALUES ('schema', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
          [String(version)],
        );
        await c.query("INSERT INTO meta (key, value) VALUES ('epoch', $1) ON CONFLICT (key) DO NOTHING", [randomUUID().slice(0, 8)]);
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      }
      const epoch = await c.query<{ value: string }>("SELECT value FROM meta WHERE key = 'epoch'");
      return epoch.rows[0].value;
    } finally {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [`roost-migrate:${schema}`]);
    }
  } finally {
    c.release();
  }
}

/** Splits Roost's own `schema` parameter off the URL; the rest goes to the driver as is. */
export function parseUrl(raw: string): { config: pg.ClientConfig; schema: string; pool?: number } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new StoreError('bad_input', 'the database URL is not a valid URL (expected postgres://user@host:port/database)');
  }
  const schema = url.searchParams.get('schema') ?? 'public';
  // Lower case only: the name goes unquoted into search_path, which folds case.
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(schema)) throw new StoreError('bad_input', `schema "${schema}" must be lower-case letters, digits and _ (at most 41)`);
  url.searchParams.delete('schema');
  // `?pool=N` (1 to 100): the pool's size on this node, for deployments (and tests) that share max_connections.
  const poolRaw = url.searchParams.get('pool');
  url.searchParams.delete('pool');
  const pool = poolRaw === null ? undefined : Number(poolRaw);
  if (pool !== undefined && !(Number.isInteger(pool) && pool >= 1 && pool <= 100)) throw new StoreError('bad_input', `pool "${poolRaw}" must be a whole number from 1 to 100`);
  // Set at connection start, on every pooled connection: Roost's tables first on
  // the search path; and a transaction left open by a node that hangs mid-way
  // (holding a stream's lock) is ended by the server instead of stalling every node.
  return {
    config: { connectionString: url.toString(), options: `-c search_path=${schema} -c idle_in_transaction_session_timeout=30000` },
    schema,
    ...(pool === undefined ? {} : { pool }),
  };
}

export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function redact(raw: string): string {
  return raw.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
