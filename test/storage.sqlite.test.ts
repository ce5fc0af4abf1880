// The storage contract on the embedded SQLite store (a temp file per run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { tempDir } from './support/server.js';
import { LEGACY_KEYS, checkLegacyKeys, storageContract } from './storage.contract.js';

const dir = tempDir('roost-sqlite-contract-');
const path = join(dir, 'roost.db');

storageContract(
  'sqlite',
  async () => new SqliteStore({ path }),
  async () => rmSync(dir, { recursive: true, force: true }),
);

test('sqlite: a database of schema 1 (global keys, prefixed by hand) opens, and its keys move into their streams', async () => {
  const old = tempDir('roost-sqlite-legacy-');
  const file = join(old, 'roost.db');
  // Schema 1 as it shipped.
  const db = new Database(file);
  db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('schema', '1'), ('epoch', 'legacy1');
    CREATE TABLE events (stream TEXT NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (stream, position)) WITHOUT ROWID;
    CREATE TABLE idempotency (key TEXT PRIMARY KEY, stream TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE snapshots (stream TEXT NOT NULL, position INTEGER NOT NULL, state TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (stream, position)) WITHOUT ROWID;`);
  const put = db.prepare('INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, 0)');
  for (const k of LEGACY_KEYS) {
    for (let p = 1; p <= k.last; p++) put.run(k.stream, p, 'note', JSON.stringify({ tag: 'old' }));
    db.prepare('INSERT INTO idempotency VALUES (?, ?, ?, ?, 0)').run(k.key, k.stream, k.first, k.last);
  }
  db.close();
  const s = new SqliteStore({ path: file });
  try {
    assert.equal(s.epoch, 'legacy1', 'the epoch survives (live clients keep their cursors)');
    await checkLegacyKeys(s);
    const look = new Database(file, { readonly: true });
    assert.deepEqual(look.prepare("SELECT value FROM meta WHERE key = 'schema'").get(), { value: '2' });
    look.close();
  } finally {
    await s.close();
    rmSync(old, { recursive: true, force: true });
  }
});
