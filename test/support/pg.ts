// PostgreSQL for tests: the server on this machine (or ROOST_TEST_PG), and a
// fresh schema per test file so parallel runs never see each other's rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env.ROOST_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

/** True when PostgreSQL answers. */
export async function pgReachable(url = PG_URL): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * A new schema name, and the URL that selects it; `drop()` removes it and everything in it.
 * The URL caps each node's pool at `pool` connections (`?pool=N`; null: the
 * store's default of 10): a test node needs few, and the test files that run
 * side by side share the server's 100 connections.
 */
export function freshSchema(prefix = 'roost_test', pool: number | null = 4): { schema: string; url: string; drop(): Promise<void> } {
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}${pool === null ? '' : `&pool=${pool}`}`;
  return {
    schema,
    url,
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      try {
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await c.end().catch(() => {});
      }
    },
  };
}

/** Runs one SQL statement on a connection of its own (for tests that poke at the database). */
export async function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: PG_URL });
  try {
    await c.connect();
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}
