// The storage contract on the embedded SQLite store (a temp file per run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { SEARCH_SCAN, indexPathOf } from '../src/storage/sqlite-search.js';
import type { SearchQuery } from '../src/storage/types.js';
import { LAZY_SYNC_MS } from '../src/storage/types.js';
import { tempDir } from './support/server.js';
import { until } from './support/until.js';
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
    assert.deepEqual(look.prepare("SELECT value FROM meta WHERE key = 'schema'").get(), { value: '5' }, 'schema 5: the search index moved to a file of its own');
    look.close();
  } finally {
    await s.close();
    rmSync(old, { recursive: true, force: true });
  }
});

test('sqlite: the search index keeps up by itself, in a file of its own: the log file holds none of it, and a burst is indexed without a search asking', async () => {
  const d = tempDir('roost-sqlite-index-');
  const file = join(d, 'roost.db');
  const s = new SqliteStore({ path: file });
  const total = 3_000;
  const writers = 16;
  try {
    let appended = 0;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (appended < total) {
          appended++;
          const e = { type: 'status', agent: 'a1', team: 'pay', status: 'working', activity: `ibis ${appended}` };
          await s.append('floor', [{ type: 'status', body: JSON.stringify(e), value: e }]);
        }
      }),
    );
    // Read as the index's file says, by a connection of the test's own (the file appears once its worker opened it).
    const count = (sql: string): number => {
      if (!existsSync(indexPathOf(file))) return -1;
      const look = new Database(indexPathOf(file), { readonly: true });
      try {
        return (look.prepare(sql).pluck().get() as number | null) ?? 0;
      } catch {
        return -1; // its tables not made yet
      } finally {
        look.close();
      }
    };
    await until('the index to catch up with the burst by itself', () => count('SELECT MAX(indexed) FROM search_heads') === total, 10_000);
    assert.equal(count('SELECT COUNT(*) FROM search_docs'), total);
    const log = new Database(file, { readonly: true });
    try {
      assert.deepEqual(log.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'search%'").all(), [], 'the log file holds no index');
    } finally {
      log.close();
    }
    assert.equal((await s.search({ project: 'default', q: `ibis ${total}` })).hits.length, 1);
  } finally {
    await s.close();
    rmSync(d, { recursive: true, force: true });
  }
});

test('sqlite: an index left in the log file by schema 4 is dropped at open, and its own file is filled from the log and filters by tool', async () => {
  const old = tempDir('roost-sqlite-search4-');
  const file = join(old, 'roost.db');
  const first = new SqliteStore({ path: file });
  await first.append('floor', [{ type: 'tool', body: JSON.stringify({ type: 'tool', agent: 'a1', tool: 'Bash', activity: 'ibis deploy' }) }]);
  await first.close();
  // What schema 4 left: the index's tables in the log's file, and no index file.
  const db = new Database(file);
  db.exec(`CREATE TABLE search_docs (id INTEGER PRIMARY KEY, stream TEXT NOT NULL, position INTEGER NOT NULL, text TEXT NOT NULL);
    CREATE VIRTUAL TABLE search_fts USING fts5(words, content = '', tokenize = 'unicode61');
    CREATE TABLE search_heads (stream TEXT PRIMARY KEY, indexed INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO search_heads VALUES ('floor', 1);
    UPDATE meta SET value = '4' WHERE key = 'schema';`);
  db.close();
  for (const f of [indexPathOf(file), `${indexPathOf(file)}-wal`, `${indexPathOf(file)}-shm`]) rmSync(f, { force: true });
  const s = new SqliteStore({ path: file });
  try {
    const found = await s.search({ project: 'default', q: 'ibis', tool: 'Bash' });
    assert.deepEqual(
      found.hits.map((h) => `${h.stream}#${h.position}`),
      ['floor#1'],
    );
    assert.deepEqual((await s.search({ project: 'default', q: 'ibis', tool: 'Edit' })).hits, []);
    const look = new Database(file, { readonly: true });
    assert.deepEqual(look.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'search%'").all(), []);
    look.close();
  } finally {
    await s.close();
    rmSync(old, { recursive: true, force: true });
  }
});

test('sqlite: an index file built from another log (its epoch) is emptied and refilled from this one', async () => {
  const d = tempDir('roost-sqlite-other-');
  const a = join(d, 'a', 'roost.db');
  const b = join(d, 'b', 'roost.db');
  try {
    for (const [file, word] of [[a, 'heron'], [b, 'egret']] as const) {
      const s = new SqliteStore({ path: file });
      await s.append('floor', [{ type: 'status', body: JSON.stringify({ type: 'status', agent: 'a1', status: 'working', activity: `${word} nest` }) }]);
      assert.equal((await s.search({ project: 'default', q: word })).hits.length, 1);
      await s.close();
    }
    // b's log, with a's index beside it.
    rmSync(indexPathOf(b), { force: true });
    writeFileSync(indexPathOf(b), readFileSync(indexPathOf(a)));
    const s = new SqliteStore({ path: b });
    try {
      assert.deepEqual((await s.search({ project: 'default', q: 'heron' })).hits, [], "nothing of a's log");
      assert.equal((await s.search({ project: 'default', q: 'egret' })).hits.length, 1);
    } finally {
      await s.close();
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('sqlite: an index file left open when the machine stopped (another boot) is dropped and filled again; one left open by a process that died in this boot is kept', async () => {
  const d = tempDir('roost-sqlite-boot-');
  const file = join(d, 'roost.db');
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  try {
    const s0 = new SqliteStore({ path: file });
    await s0.append('floor', [{ type: 'status', body: JSON.stringify({ type: 'status', agent: 'a1', status: 'working', activity: 'heron nest' }) }]);
    assert.equal((await s0.search({ project: 'default', q: 'heron' })).hits.length, 1);
    await s0.close();
    for (const [left, kept] of [[boot, true], ['another-boot', false]] as const) {
      // What a torn file would hold: a doc no event made, and the boot it was left open in.
      const db = new Database(indexPathOf(file));
      const id = db.prepare("INSERT INTO search_docs (stream, position, at, project, family, kind, agent, team, vendor, tool, status, decider, text) VALUES ('floor', ?, 0, 'default', 'floor', 'status', 'ghost', '', '', '', '', '', 'phantom')").run(kept ? 998 : 999).lastInsertRowid;
      db.prepare('INSERT INTO search_fts (rowid, words) VALUES (?, ?)').run(id, 'phantom');
      db.prepare("INSERT OR REPLACE INTO search_meta (key, value) VALUES ('open', ?)").run(left);
      db.close();
      const s = new SqliteStore({ path: file });
      try {
        assert.equal((await s.search({ project: 'default', q: 'phantom' })).hits.length, kept ? 1 : 0, kept ? 'kept: the OS held what the process wrote' : 'dropped: the machine stopped with it open');
        assert.equal((await s.search({ project: 'default', q: 'heron' })).hits.length, 1, 'the log is found either way');
      } finally {
        await s.close();
      }
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('sqlite: a search walks the matches newest doc first and stops early, and its pages are exactly those of the plan over every match (docs indexed out of time order across streams)', async () => {
  // Indexed only when a search asks: its catch-up takes the floor whole, then the approvals, so ids do not follow `at`.
  const s = new SqliteStore({ path: ':memory:', searchIndex: 'search' });
  const words = ['heron', 'egret', 'ibis', 'stork', 'crane'];
  const teams = ['pay', 'web', 'ops'];
  let seed = 9;
  const rnd = (k: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), Math.floor((seed / 0x80000000) * k));
  try {
    for (let batch = 0; batch < 20; batch++) {
      for (const stream of ['floor', 'approvals', 'floor:other']) {
        const evs = Array.from({ length: 1 + rnd(60) }, () => {
          const e = { type: 'message', agent: `a${rnd(4)}`, team: teams[rnd(3)], text: `${words[rnd(5)]} ${words[rnd(5)]} nest` };
          return { type: 'message', body: JSON.stringify(e) };
        });
        await s.append(stream, evs);
      }
      if (batch % 7 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    const queries: Record<string, unknown>[] = [{ q: 'nest' }, { q: 'heron' }, { q: 'heron egret' }, { q: 'nest', team: 'pay' }, { q: 'stork', agent: 'a1' }, { q: 'crane', limit: 7 }, { q: 'nest', limit: 1 }, { q: 'nest', kind: 'message', team: 'ops', limit: 13 }];
    const pages = async (q: Record<string, unknown>): Promise<string[]> => {
      const out: string[] = [];
      let cursor: string | undefined;
      // The first 25 pages (every page, for most of these queries).
      for (let i = 0; i < 25; i++) {
        const p = await s.search({ project: 'default', ...q, cursor } as SearchQuery);
        out.push(p.hits.map((h) => `${h.at}/${h.stream}#${h.position}:${h.snippet}`).join(' ') + `|${p.next === null}`);
        if (!p.next) break;
        cursor = p.next;
      }
      return out;
    };
    for (const q of queries) {
      SEARCH_SCAN.max = 0;
      const planned = await pages(q);
      SEARCH_SCAN.max = 5_000;
      const walked = await pages(q);
      assert.deepEqual(walked, planned, JSON.stringify(q));
      assert.ok(planned.length > 1 || (q.q as string) === 'nest', `${JSON.stringify(q)}: more than one page`);
    }
  } finally {
    SEARCH_SCAN.max = 5_000;
    await s.close();
  }
});

test('sqlite: sync() and the lazy timer make lazy appends durable with an fdatasync of the WAL, off the event loop, not a synced commit; a lazy append after a sync starts keeps its own timer', async () => {
  const d = tempDir('roost-sqlite-sync-');
  const file = join(d, 'roost.db');
  const s = new SqliteStore({ path: file });
  const look = new Database(file, { readonly: true });
  const syncedRow = () => (look.prepare("SELECT value FROM meta WHERE key = 'synced'").get() as { value: string } | undefined)?.value;
  try {
    await s.append('sync', [{ type: 'note', body: '{"tag":1}' }]);
    const before = syncedRow();
    for (let i = 2; i <= 5; i++) await s.append('sync', [{ type: 'note', body: JSON.stringify({ tag: i }) }], { lazy: true });
    await s.sync();
    const synced = s.syncStats.datasyncs;
    assert.ok(synced >= 1, 'sync() ran an fdatasync');
    await new Promise((r) => setTimeout(r, LAZY_SYNC_MS * 3));
    assert.equal(s.syncStats.datasyncs, synced, 'the fdatasync covered every lazy commit: the timer had nothing to do');
    // A sync covers what came before it only: a lazy commit once it runs is still the timer's.
    const covering = s.sync();
    await s.append('sync', [{ type: 'note', body: '{"tag":6}' }], { lazy: true });
    await covering;
    const after = s.syncStats.datasyncs;
    await until("the timer's fdatasync for the lazy commit after the sync began", () => s.syncStats.datasyncs > after, LAZY_SYNC_MS * 20);
    assert.equal(syncedRow(), before, 'no synced row was written: every sync was an fdatasync');
    assert.equal(s.syncStats.syncedRows, 0);
    assert.deepEqual((await s.read('sync', 0)).map((e) => JSON.parse(e.body).tag as number), [1, 2, 3, 4, 5, 6]);
  } finally {
    look.close();
    await s.close();
    rmSync(d, { recursive: true, force: true });
  }
});

test('sqlite: a lazy batch, and a snapshot, commit with synchronous=NORMAL (no fsync of their own), the first one included; a synced batch with FULL', async () => {
  const d = tempDir('roost-sqlite-mode-');
  const s = new SqliteStore({ path: join(d, 'roost.db') });
  // The connection's own setting, as SQLite reads it for the next commit (1 = NORMAL, 2 = FULL).
  const mode = () => (s as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true });
  try {
    assert.equal(mode(), 2, 'a new store is FULL');
    for (const [lazy, want] of [
      [true, 1],
      [true, 1],
      [false, 2],
      [true, 1],
      [false, 2],
    ] as const) {
      await s.append('mode', [{ type: 'note', body: '{}' }], { lazy });
      assert.equal(mode(), want, `after a ${lazy ? 'lazy' : 'synced'} append`);
    }
    // A snapshot is written like a lazy append, and made durable the same way.
    await s.putSnapshot('mode', 1, '{}');
    assert.equal(mode(), 1, 'a snapshot is written NORMAL');
    const synced = s.syncStats.datasyncs;
    await s.sync();
    assert.equal(s.syncStats.datasyncs, synced + 1, 'sync() covers the snapshot');
    assert.equal((await s.getSnapshot('mode'))?.state, '{}');
  } finally {
    await s.close();
    rmSync(d, { recursive: true, force: true });
  }
});

test('sqlite: group commit gathers synced appends while they keep coming, turn after turn; lazy ones are committed at once', async () => {
  const d = tempDir('roost-sqlite-gather-');
  // A long window, so a loaded machine cannot end the gathering early: the test is about turns, not time.
  const s = new SqliteStore({ path: join(d, 'roost.db'), gatherMs: 10_000 });
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  tick();
  const heardIn = new Map<string, number>();
  s.onCommit((stream) => heardIn.set(stream, turn));
  try {
    // Four synced appends in four turns, each while the one before still waits: one commit.
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < 4; i++) {
      appends.push(s.append(`synced-${i}`, [{ type: 'note', body: '{}' }]));
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(heardIn.size, 0, 'nothing committed while appends kept coming');
    await Promise.all(appends);
    assert.equal(new Set(heardIn.values()).size, 1, `one commit for all four: ${JSON.stringify([...heardIn])}`);
    // A lazy append alone does not wait: it is committed in the turn it was scheduled for.
    let done = false;
    const lazy = s.append('lazy', [{ type: 'note', body: '{}' }], { lazy: true }).then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(done, true, 'a lazy append is committed at once');
    await lazy;
  } finally {
    ticking = false;
    await s.close();
    rmSync(d, { recursive: true, force: true });
  }
});

test('sqlite: under steady writing the WAL is checkpointed by the worker thread and restarted, so it stays small (the worker catching up in the pauses, or the main connection finishing for it once the WAL is `finishFrames` long); the fallback waits while the worker answers; with the worker never asked, the main connection still checkpoints', async () => {
  type Stats = { passes: number; caughtUp: number; finished: number; fallbacks: number };
  const worker = { passEvery: 16, restartFrames: 200, finishFrames: 800 };
  // Unrestarted, these 3,000 commits leave a WAL of about 39 MB; restarted every ~200-800
  // frames it stays a few MB, more when the machine is busy and the passes lag.
  const small = 10_000_000;
  // Writing without a pause, the WAL grows by whatever is written while one of the worker's
  // passes (and its catch-up passes, each with the database file's fsync) runs on the other
  // core: 5.5-8.5 MB with two more copies of this file and a busy loop beside it, 17 MB once in
  // CI (2026-12-03, a pass starved by the suite's other processes). Under 30 MB the WAL was
  // restarted within the first three quarters of the commits; the stats say by whom.
  const restarted = 30_000_000;
  for (const [label, checkpoints, pauseMs, walLimit, check] of [
    // Writing without a pause: the worker rarely catches up, so the main connection finishes (or it does).
    ['worker', worker, 0, restarted, (st: Stats) => st.passes > 0 && st.finished + st.caughtUp > 0 && st.fallbacks === 0],
    // Writing with pauses, as the flock's steps are: the worker catches up by itself.
    ['worker, pauses', worker, 15, small, (st: Stats) => st.passes > 0 && st.caughtUp > 0 && st.fallbacks === 0],
    // A worker that answers holds the fallback off, however many commits there are.
    ['worker, fallback held off', { ...worker, fallbackCommits: 400 }, 15, small, (st: Stats) => st.passes > 0 && st.fallbacks === 0],
    // Short of `finishFrames`, a pass that did not catch up leaves the WAL to the next pass.
    ['worker, never finishing', { ...worker, finishFrames: 1e9 }, 0, Infinity, (st: Stats) => st.passes > 0 && st.finished === 0 && st.fallbacks === 0],
    ['fallback', { passEvery: 1e9, fallbackCommits: 100 }, 0, small, (st: Stats) => st.passes === 0 && st.fallbacks > 0],
  ] as const) {
    const d = tempDir('roost-sqlite-ckpt-');
    const file = join(d, 'roost.db');
    const s = new SqliteStore({ path: file, checkpoints });
    try {
      const body = JSON.stringify({ pad: 'x'.repeat(600) });
      // 3,000 commits one after the other (each its own transaction), lazily as the flock's steps are.
      for (let i = 0; i < 3000; i++) {
        await s.append(`ckpt-${i % 7}`, [{ type: 'note', body }], { lazy: i % 5 !== 0 });
        // The worker's answers arrive between commits, as they do in a server.
        if (i % 50 === 0) await new Promise((r) => (pauseMs ? setTimeout(r, pauseMs) : setImmediate(r)));
      }
      const wal = statSync(`${file}-wal`).size;
      assert.ok(wal < walLimit, `${label}: the WAL stays small (${wal} bytes)`);
      const st = s.checkpointStats!;
      assert.ok(check(st), `${label}: ${JSON.stringify(st)}`);
      let n = 0;
      for (let k = 0; k < 7; k++) n += (await s.read(`ckpt-${k}`, 0)).length;
      assert.equal(n, 3000);
    } finally {
      await s.close();
      rmSync(d, { recursive: true, force: true });
    }
  }
});

test('sqlite: a commit does no checkpoint work: the main connection\'s automatic checkpoint is off, and every page copied into the database file was copied by the worker thread', async () => {
  // Why the worker exists (src/storage/sqlite-checkpoint.ts): SQLite's own checkpoint runs inside the
  // commit that crosses its threshold, on the event loop. Here the main connection may not
  // checkpoint at all (no finishing, no fallback), so the file can only grow by the worker's passes.
  const d = tempDir('roost-sqlite-offloop-');
  const file = join(d, 'roost.db');
  const s = new SqliteStore({ path: file, checkpoints: { passEvery: 16, restartFrames: 200, finishFrames: 1e9, fallbackCommits: 1e9 } });
  const main = (s as unknown as { db: Database.Database }).db;
  try {
    assert.equal(main.pragma('wal_autocheckpoint', { simple: true }), 0, "the main connection's automatic checkpoint is off");
    const before = statSync(file).size;
    const body = JSON.stringify({ pad: 'x'.repeat(600) });
    for (let i = 0; i < 1500; i++) {
      await s.append(`offloop-${i % 5}`, [{ type: 'note', body }], { lazy: i % 5 !== 0 });
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 10));
    }
    await until('the worker copied pages into the database file', () => statSync(file).size > before + 500_000, 20_000);
    const st = s.checkpointStats!;
    assert.ok(st.passes > 0, `the worker passed: ${JSON.stringify(st)}`);
    assert.equal(st.finished + st.fallbacks, 0, `the main connection checkpointed nothing itself: ${JSON.stringify(st)}`);
    assert.equal(main.pragma('wal_autocheckpoint', { simple: true }), 0, 'still off after the writes');
  } finally {
    await s.close();
    rmSync(d, { recursive: true, force: true });
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
