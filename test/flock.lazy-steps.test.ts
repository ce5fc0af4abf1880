// Why the flock's steps are lazy appends (src/server/flock/streams.ts `step`, docs/flock.md "Lazy steps"):
// an item's steps cannot share a commit, and with an fsync each the fsyncs were 73% of an item's time.
// A real server drives a list: every step of the driver (each append to the flock's stream without an
// idempotency key) is lazy, and the list's 202 answers only once `sync()` made its start durable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import type { AppendOptions, NewEvent } from '../src/storage/types.js';
import { startRoost } from '../src/server/index.js';
import { flockStream } from '../src/server/flock/settings.js';
import { tempDir } from './support/server.js';
// The benches' model that answers at once (no network).
import { approveVerdicts, instantRoster } from '../bench/flock-setup.js';

test("a list's driver steps are lazy appends (no fsync of their own), and its 202 waits for sync()", { timeout: 120_000 }, async () => {
  const dir = tempDir('roost-flock-lazy-');
  const store = new SqliteStore({ path: join(dir, 'roost.db') });
  const seen: { stream: string; lazy: boolean; keyed: boolean; types: string[] }[] = [];
  const append = store.append.bind(store);
  store.append = (stream: string, events: NewEvent[], opts?: AppendOptions) => {
    seen.push({ stream, lazy: opts?.lazy === true, keyed: opts?.idempotencyKey !== undefined, types: events.map((e) => e.type) });
    return append(stream, events, opts);
  };
  /** Appends seen when each sync() was asked for, and when it resolved. */
  const syncs: { asked: number; done: number }[] = [];
  const sync = store.sync.bind(store);
  store.sync = async () => {
    const s = { asked: seen.length, done: -1 };
    syncs.push(s);
    await sync();
    s.done = seen.length;
  };
  const roost = await startRoost(store, { port: 0, models: instantRoster(), flockBanterWaitMs: 500 });
  approveVerdicts(roost, 'test');
  try {
    const text = Array.from({ length: 6 }, (_, i) => `write note ${i + 1}`).join('\n');
    const r = await fetch(`${roost.url}/api/lists`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, requester: 'ann' }) });
    assert.equal(r.status, 202);
    const { list_id } = (await r.json()) as { list_id: string };
    const started = seen.findIndex((a) => a.types.includes('list.started'));
    assert.ok(started >= 0, 'list.started was appended');
    assert.equal(seen[started].lazy, true, 'the list starts with a lazy append');
    assert.ok(
      syncs.some((s) => s.asked > started && s.done >= 0),
      `the 202 came after a sync() asked for after the list.started append had resolved: ${JSON.stringify(syncs)}`,
    );
    await roost.flock.finished(list_id);
    // From the list's start on; the lease's claims are not the driver's steps (a lease is never lazy).
    const flock = seen.slice(started).filter((a) => a.stream === flockStream('default') && !a.types.some((t) => t.startsWith('lease.')));
    const steps = flock.filter((a) => !a.keyed);
    assert.ok(steps.length >= 12, `the driver stepped (${steps.length} steps)`);
    const synced = steps.filter((a) => !a.lazy);
    assert.deepEqual(synced, [], 'no step of the driver was a synced append');
    assert.ok(roost.flock.state.lists.get(list_id)!.items.every((i) => i.outputVerdict), 'every item answered');
  } finally {
    await roost.close();
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
});
