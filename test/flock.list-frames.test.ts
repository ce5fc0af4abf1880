// A list's frames (src/server/flock/list-frames.ts): what its stream replays
// is the same before and after the finished list is packed into one buffer,
// and over HTTP a finished list's stream still replays every event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
