// Work's copy of a project's membership follows it as it changes, on SQLite
// (the case is test/support/work-members.ts; work.members.pg.test.ts runs it on PostgreSQL).
import { test } from 'node:test';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { tempDir } from './support/server.js';
import { membersAcrossRestart } from './support/work-members.js';

test('a project made while the server runs records its members as they join; a restart moves nothing and resends nothing', async () => {
  const path = join(tempDir(), 'roost.db');
  await membersAcrossRestart(async () => new SqliteStore({ path }));
});
