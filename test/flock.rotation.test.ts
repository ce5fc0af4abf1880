// Which crows a pick takes does not depend on the order in which concurrent
// steps were appended: two items' flights folded A-then-B or B-then-A leave
// the same next pick (a burst of solo items in todo flies every crow).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyFlock, pickCrows, TODO_NEST } from '../src/core/flock.js';
import { rotated } from '../src/core/flock/crows.js';
import { WORKER_NAMES } from '../src/core/personas.js';

function after(order: readonly string[]): string[] {
  const s = emptyFlock();
  const todo = s.nests.get(TODO_NEST)!;
  for (const crow of order) rotated(todo, crow);
  return pickCrows(s, TODO_NEST, WORKER_NAMES.length).map((p) => p.crow);
}

test('a pick takes the crows that flew least first, whatever order their flights were folded in', () => {
  const [a, b] = WORKER_NAMES;
  const idle = WORKER_NAMES.filter((n) => n !== a && n !== b).sort();
  for (const order of [[a, b], [b, a]]) {
    // The last-picked pointer differs (a or b), but neither is picked again before every idle crow has flown.
    const pick = after(order);
    assert.deepEqual(pick.slice(0, idle.length).sort(), idle, `after ${order.join(', ')}: the crows that have not flown come first`);
    assert.deepEqual(pick.slice(-2).sort(), [a, b].sort());
  }
  // Twelve picks one after another, each folded before the next, fly every crow, none more than twice.
  const s = emptyFlock();
  const todo = s.nests.get(TODO_NEST)!;
  const flew = new Map<string, number>();
  for (let i = 0; i < 12; i++) {
    const [p] = pickCrows(s, TODO_NEST, 1);
    rotated(todo, p.crow);
    flew.set(p.crow, (flew.get(p.crow) ?? 0) + 1);
  }
  assert.deepEqual([...flew.keys()].sort(), [...WORKER_NAMES].sort());
  assert.ok(Math.max(...flew.values()) <= 2, JSON.stringify([...flew]));
});

test('a crow that has not flown in the round yet (one just back from quarantine, say) takes one turn, not every pick', () => {
  const s = emptyFlock();
  const todo = s.nests.get(TODO_NEST)!;
  const [first, ...rest] = WORKER_NAMES;
  // Every crow but the first flies, three rounds over: each repeat starts a new round.
  for (let round = 0; round < 3; round++) for (const c of rest) rotated(todo, c);
  assert.deepEqual([...todo.round].sort(), [...rest].sort());
  // The first has not flown this round: it goes first; once it has, the round is whole and comes round.
  assert.equal(pickCrows(s, TODO_NEST, 1)[0].crow, first);
  rotated(todo, first);
  const next = pickCrows(s, TODO_NEST, WORKER_NAMES.length).map((p) => p.crow);
  assert.equal(next.indexOf(first), WORKER_NAMES.length - 1, `the first, just flown, goes last: ${next.join(', ')}`);
});
