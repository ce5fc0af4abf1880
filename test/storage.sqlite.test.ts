// The storage contract on the embedded SQLite store (a temp file per run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
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

test('sqlite: lazy appends survive a SIGKILL of the process that made them, the moment they resolved (and a synced one after them is whole too)', async () => {
  const d = tempDir('roost-sqlite-lazy-');
  const file = join(d, 'roost.db');
  // A child process appends lazily (no fsync of their own), says which positions resolved, and is killed at once.
  const code = `
    const { SqliteStore } = await import(${JSON.stringify(new URL('../src/storage/sqlite.ts', import.meta.url).pathname)});
    const s = new SqliteStore({ path: ${JSON.stringify(file)} });
    let tag = 0;
    for (let round = 0; round < 40; round++) {
      const synced = round === 20;
      const r = await Promise.all([1, 2, 3].map(() => s.append('lazy', [{ type: 'note', body: JSON.stringify({ tag: ++tag }) }], { lazy: !synced })));
      process.stdout.write(r.map((x) => x.last).join(' ') + '\\n');
    }
    process.stdout.write('done\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((ok, fail) => {
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('done\n')) {
        // Killed before the sync timer (LAZY_SYNC_MS) can have run for the last rounds.
        child.kill('SIGKILL');
        ok();
      }
    });
    child.on('exit', (c, sig) => (sig === 'SIGKILL' ? ok() : fail(new Error(`child exited ${c}`))));
  });
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  const acked = out.split('\n').filter((l) => /^[0-9 ]+$/.test(l) && l).flatMap((l) => l.split(' ').map(Number));
  assert.equal(acked.length, 120);
  const s = new SqliteStore({ path: file });
  try {
    const got = (await s.read('lazy', 0)).map((e) => JSON.parse(e.body).tag as number);
    assert.deepEqual(got, Array.from({ length: 120 }, (_, i) => i + 1), 'every acknowledged lazy append is there, in order, once');
  } finally {
    await s.close();
    rmSync(d, { recursive: true, force: true });
  }
});
