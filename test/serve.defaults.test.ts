// `roost serve` with no environment set runs with the documented defaults:
// an unset variable must not turn an interval into "as often as possible"
// (a heartbeat every millisecond to every subscriber) or switch snapshots off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { child, post, tempDir } from './support/server.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { openSse } from './support/sse.js';
import { FLOOR_REWIND_EVERY } from '../src/server/rewind.js';

test('serve without environment: heartbeats are 15 s apart, and a restart starts from a snapshot', async () => {
  const env: Record<string, string> = {};
  for (const k of ['ROOST_HEARTBEAT_MS', 'ROOST_SWEEP_MS', 'ROOST_SNAPSHOT_EVERY']) env[k] = '';
  const server = await child({ env });
  try {
    const sse = await openSse(server.url + '/stream');
    await sse.waitFor((f) => f.event === 'snapshot');
    await new Promise((r) => setTimeout(r, 400));
    sse.close();
    assert.equal(sse.comments <= 1, true, `no heartbeat storm: ${sse.comments} comments in 400 ms`);
    // 10,000 events (the default snapshot interval; the floor keeps one every
    // FLOOR_REWIND_EVERY for rewinding), then a restart: the floor is the same and
    // was restored from a snapshot (its position is the stream's head).
    for (let i = 0; i < 50; i++) {
      const batch = Array.from({ length: 200 }, (_, j) => ({ type: 'status', agent: `a${j % 20}`, activity: `n=${i * 200 + j}` }));
      assert.equal((await post(server.url, batch)).status, 200);
    }
    const before = await (await fetch(server.url + '/state')).json();
    await server.stop();
    const db = new Database(join(server.dataDir, 'roost.db'), { readonly: true });
    const snaps = db.prepare("SELECT position FROM snapshots WHERE stream = 'floor'").all() as { position: number }[];
    db.close();
    const every = FLOOR_REWIND_EVERY;
    assert.deepEqual(snaps.map((s) => s.position).sort((a, b) => a - b), Array.from({ length: 10_000 / every }, (_, i) => (i + 1) * every), `the floor keeps a snapshot every ${every} events`);
    const again = await child({ env, dataDir: server.dataDir, port: server.port });
    try {
      const after = await (await fetch(again.url + '/state')).json();
      assert.equal(after.position, 10_000);
      assert.deepEqual(after.agents.map((a: { activity: string }) => a.activity).sort(), before.agents.map((a: { activity: string }) => a.activity).sort());
    } finally {
      await again.stop();
    }
  } finally {
    await server.stop();
  }
});

test('serve with a setting that is not a whole number (or too small): refuses to start and names it', () => {
  for (const [name, value] of [
    ['ROOST_PRESENCE_EXPIRE_MS', 'abc'],
    ['ROOST_HEARTBEAT_MS', '0'],
    ['ROOST_SNAPSHOT_EVERY', '2.5'],
  ]) {
    const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'roost.js'), 'serve', '--port', '0', '--data', tempDir()], {
      env: { ...process.env, [name]: value },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.notEqual(r.status, 0, `${name}=${value} must not start`);
    assert.match(r.stderr, new RegExp(`${name} must be a whole number`), r.stderr);
  }
});
