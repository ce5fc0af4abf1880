// Work's copy of a project's membership follows it as it changes, on PostgreSQL
// (the case is test/support/work-members.ts).
import { test } from 'node:test';
import { PostgresStore } from '../src/storage/postgres.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { membersAcrossRestart } from './support/work-members.js';

const reachable = await pgReachable();

test('a project made while the server runs records its members as they join; a restart moves nothing and resends nothing (PostgreSQL)', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const db = freshSchema('roost_work_members');
  try {
    await membersAcrossRestart(() => PostgresStore.open(db.url));
  } finally {
    await db.drop();
  }
});
