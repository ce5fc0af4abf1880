// Makes the flock trusted at a task type, the way the contract says it is
// earned: six approved triages in a row (the word steers the stand-in model's
// task type); shared by the flock's contract suites.
import assert from 'node:assert/strict';
import type { FlockClient } from './flock-client.js';
import { until } from './until.js';

export async function trustFlock(c: FlockClient, task: string, timeoutMs = 20_000): Promise<void> {
  const list_id = await c.start(Array.from({ length: 6 }, (_, i) => `${task} warm-up ${i + 1}`).join('\n'), `warm-${task}`);
  const w = await c.watch(list_id);
  try {
    for (let n = 1; n <= 6; n++) {
      const t = await w.next('item.triaged', (d) => d.item_id === `${list_id}-${n}`, timeoutMs);
      if (t.data.needs_approval) assert.equal((await c.verdict(`${list_id}-${n}`, 'triage', true)).status, 204);
    }
    await until(
      `the flock trusted at ${task}`,
      async () => ((await c.get('/api/trust')).body.holders as Record<string, unknown>[]).some((h) => h.holder === 'flock' && h.task_type === task && h.level === 2),
      timeoutMs,
    );
    // Every warm-up item answered: none of their crows is still in the air when the caller's own list asks for
    // crows (on a busy machine a crow kept flying a warm-up item was skipped by every pick of a burst).
    for (let n = 1; n <= 6; n++) await w.next('item.answered', (d) => d.item_id === `${list_id}-${n}`, timeoutMs);
  } finally {
    w.close();
  }
}
