// Stored snapshots of the flock (docs/flock.md, "Snapshots"): a server whose
// flock log holds more than the replay ring stores snapshots of the fold
// (every `snapshotEvery` events); after a restart on the same file it starts
// from one and folds only the entries after it, and yet serves the same
// state, the same ledger, and the same list streams (every frame, its data) as before the restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { flockToJSON } from '../src/core/flock.js';
import { openSse } from './support/sse.js';

/** Every frame of a list's stream as a new reader gets it (the list so far), as comparable lines. */
async function streamOf(url: string, list_id: string): Promise<string[]> {
  const sse = await openSse(`${url}/api/events?list_id=${list_id}`);
  try {
    await sse.waitFor((f) => f.event === 'list.finished', 10_000);
    return sse.frames.map((f) => `${f.event} ${f.data}`);
  } finally {
    sse.close();
  }
}

test('a restart starts from a stored snapshot: only the entries after it are folded, and state, ledger and list streams are the same as before', { timeout: 240_000 }, async () => {
  const model = await flockModel('anthropic');
  const cfg = { models: model.roster(), flockBanterWaitMs: 500, snapshotEvery: 300 };
  const a = await inProcess(cfg);
  let b: Awaited<ReturnType<typeof inProcess>> | null = null;
  try {
    const c = flockClient(a.url);
    // A list judged by a person (its verdicts move the ledger) ...
    const judge = async (text: string): Promise<string> => {
      const id = await c.start(text, 'ann');
      const w = await c.watch(id);
      await w.next('item.triaged', () => true, 15_000);
      assert.equal((await c.verdict(`${id}-1`, 'triage', true)).status, 204);
      await w.next('item.answered', () => true, 15_000);
      assert.equal((await c.verdict(`${id}-1`, 'output', true)).status, 204);
      await w.next('list.finished', () => true, 15_000);
      w.close();
      return id;
    };
    const first = await judge('write the release notes');
    // ... then the log grows past the replay ring: the lease holder's renewals (as a long list's would) ...
    for (let i = 0; i < 13; i++) {
      const ts = new Date().toISOString();
      await a.flock.append(Array.from({ length: 100 }, () => ({ type: 'lease.claimed', node: a.flock.node, ttl_ms: 30_000, ts })));
    }
    // ... and another list after them.
    const second = await judge('write the second note');
    const head = a.flock.position;
    assert.ok(head > 1300, `the log holds ${head} flock events`);
    const lists = [first, second];
    const before = await Promise.all(lists.map((id) => streamOf(a.url, id)));
    const ledger = (await c.get('/api/trust')).body;
    await a.close();
    const state = JSON.stringify(flockToJSON(a.flock.state));

    b = await inProcess(cfg, a.dataDir);
    assert.ok(b.flock.stats.foldedAtStart > 0, 'the entries after the snapshot are folded');
    assert.ok(b.flock.stats.foldedAtStart <= 1000 + 300, `started from a snapshot: folded ${b.flock.stats.foldedAtStart} of ${b.flock.position} entries`);
    assert.ok(b.flock.stats.framesRebuilt > 0, 'the kept lists’ frames from before the snapshot were read back');
    assert.equal(b.flock.position, head + 1, 'the log as it was, and the stop’s lease release');
    assert.equal(JSON.stringify(flockToJSON(b.flock.state)), state, 'the same fold');
    assert.deepEqual((await flockClient(b.url).get('/api/trust')).body, ledger, 'the same ledger');
    const after = await Promise.all(lists.map((id) => streamOf(b!.url, id)));
    for (let i = 0; i < lists.length; i++) assert.deepEqual(after[i], before[i], `${lists[i]}: the same events, byte for byte`);
    assert.ok(after.every((f) => f.some((l) => l.startsWith('verdict ')) && f.some((l) => l.startsWith('list.finished '))));
  } finally {
    await b?.close();
    await a.close().catch(() => {});
    await model.close();
  }
});
