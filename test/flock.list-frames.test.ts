// A list's frames (src/server/flock/list-frames.ts): what its stream replays
// is the same before and after the finished list is packed into one buffer,
// and over HTTP a finished list's stream still replays every event. Why lists
// are packed, tested: their bytes leave V8's heap, and a real server packs a
// list when it finishes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { inProcess } from './support/server.js';
// The benches' model that answers at once (no network).
import { approveVerdicts, instantRoster } from '../bench/flock-setup.js';
import { ListFrames, type ListFrame } from '../src/server/flock/list-frames.js';

const frame = (position: number, name: string, data: object): ListFrame => ({ position, ev: { name, data: JSON.stringify(data) } });

const FRAMES: ListFrame[] = [
  frame(3, 'list.started', { list_id: 'l-1', items: [{ item_id: 'l-1-1', text: 'write the note: naïve café, 日本語, 🐦‍⬛' }] }),
  frame(4, 'crow.flying', { list_id: 'l-1', item_id: 'l-1-1', crow: 'Sentry' }),
  frame(9, 'crow.landed', { list_id: 'l-1', item_id: 'l-1-1', crow: 'Sentry', ok: true, output: '' }),
  frame(12, 'item.answered', { list_id: 'l-1', item_id: 'l-1-1', answer: 'done — «ok» ✓' }),
  frame(20, 'list.finished', { list_id: 'l-1', tokens_used: 45 }),
];

function filled(): ListFrames {
  const f = new ListFrames();
  for (const x of FRAMES) f.push(x.position, x.ev);
  return f;
}

const windows: [number, number][] = [
  [-Infinity, Infinity],
  [0, 20],
  [3, 12],
  [4, 4],
  [8, 9],
  [20, 30],
  [-1, 2],
];

test('a packed list replays the same frames as the running one, for every window, non-ASCII text included', () => {
  const running = filled();
  const packed = filled();
  packed.pack();
  for (const [after, upTo] of windows) {
    assert.deepEqual(packed.between(after, upTo), running.between(after, upTo), `window (${after}, ${upTo}]`);
  }
  assert.deepEqual(
    packed.between(-Infinity, Infinity).map((f) => f.position),
    FRAMES.map((f) => f.position),
  );
  assert.equal(packed.length, FRAMES.length);
  assert.equal(packed.first, 3);
  assert.equal(new ListFrames().first, Infinity);
  assert.equal(
    packed.findLast('crow.flying', (d) => (JSON.parse(d) as { crow: string }).crow === 'Sentry')?.data,
    FRAMES[1].ev.data,
  );
  assert.equal(packed.findLast('crow.flying', () => false), null);
});

test('a frame after the pack, and older frames put before it, keep the position order', () => {
  const f = filled();
  f.pack();
  f.push(25, { name: 'verdict', data: '{"verdict":"approved"}' });
  f.pack();
  f.prepend([frame(1, 'list.started', { list_id: 'l-1' })]);
  assert.deepEqual(
    f.between(-Infinity, Infinity).map((x) => [x.position, x.ev.name]),
    [[1, 'list.started'], ...FRAMES.map((x) => [x.position, x.ev.name]), [25, 'verdict']],
  );
  assert.equal(f.length, FRAMES.length + 2);
  assert.equal(f.first, 1);
});

test('a frame of a name outside the contract is kept as it is (the list is not packed)', () => {
  const f = filled();
  f.push(30, { name: 'not.a.list.event', data: '{}' });
  f.pack();
  assert.equal(f.between(29, 30)[0].ev.name, 'not.a.list.event');
});

test("a packed list's bytes live outside V8's heap: 1,000 finished lists of 10 frames of 1 KB leave the heap about as small as with none (running, they are all in it)", () => {
  // Why lists are packed (list-frames.ts): a finished list's frames outlived every young-generation
  // collection and were copied by it, half of what each scavenge copied under a steady flow of lists.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage();
  };
  const base = heap();
  const lists: ListFrames[] = [];
  let bytes = 0;
  for (let l = 0; l < 1000; l++) {
    const f = new ListFrames();
    for (let k = 0; k < 10; k++) {
      const data = JSON.stringify({ list_id: `l-${l}`, item_id: `l-${l}-${k}`, output: `${l}:${k} `.padEnd(1000, 'x') });
      bytes += data.length;
      f.push(l * 10 + k, { name: 'crow.landed', data });
    }
    lists.push(f);
  }
  const running = heap();
  for (const f of lists) f.pack();
  const packed = heap();
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  assert.ok(running.heapUsed - base.heapUsed > bytes * 0.9, `running lists are on the heap: ${mb(running.heapUsed - base.heapUsed)} for ${mb(bytes)} of data`);
  assert.ok(packed.heapUsed - base.heapUsed < bytes / 10, `packed lists are not: ${mb(packed.heapUsed - base.heapUsed)} on the heap for ${mb(bytes)} of data`);
  assert.ok(packed.arrayBuffers - base.arrayBuffers > bytes, `their bytes are in buffers: ${mb(packed.arrayBuffers - base.arrayBuffers)}`);
  assert.equal(lists[999].between(-Infinity, Infinity).length, 10);
});

test("a real server packs a list's frames when it finishes (the frames its stream replays, first to last)", { timeout: 120_000 }, async () => {
  const roost = await inProcess({ models: instantRoster(), flockBanterWaitMs: 500 });
  approveVerdicts(roost, 'test');
  try {
    const r = await fetch(`${roost.url}/api/lists`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'write note 1\nwrite note 2', requester: 'ann' }) });
    assert.equal(r.status, 202);
    const { list_id } = (await r.json()) as { list_id: string };
    const frames = (roost.flock as unknown as { listFrames: Map<string, ListFrames> }).listFrames.get(list_id)!;
    assert.equal((frames as unknown as { packed: Buffer | null }).packed, null, 'running: an array of frames');
    await roost.flock.finished(list_id);
    assert.ok((frames as unknown as { packed: Buffer | null }).packed instanceof Buffer, 'finished: packed into one buffer');
    const all = frames.between(-Infinity, Infinity);
    assert.equal(all[0].ev.name, 'list.started');
    assert.equal(all[all.length - 1].ev.name, 'list.finished');
  } finally {
    await roost.close();
  }
});
