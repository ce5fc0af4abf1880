// Every write to the floor's stream goes through the floor's service
// (FloorService.post), so a hook and an agent's question meet the same checks
// and caps as POST /events (issue 35, "mechanisms that are still half one").
// Here: a floor at its agent cap (LIMITS.agents) refuses a new agent's hook
// with the floor's own 409, and nothing of it reaches the floor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import { LIMITS } from '../src/core/floor.js';
import { MAX_NEW_AGENTS_PER_BATCH } from '../src/core/floor-wire.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code', 'hooks-real-2.1.197');
const START = JSON.parse(readFileSync(join(FIX, '01-SessionStart.json'), 'utf8')) as Record<string, unknown>;

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('a hook meets the floor’s caps: on a full floor a new session’s hook is refused (409) and no agent is added', async () => {
  const roost = await inProcess();
  try {
    // Fill the floor to its cap the way clients do, a batch at a time.
    for (let n = 0; n < LIMITS.agents; n += MAX_NEW_AGENTS_PER_BATCH) {
      const batch = Array.from({ length: Math.min(MAX_NEW_AGENTS_PER_BATCH, LIMITS.agents - n) }, (_, i) => ({ type: 'join', agent: `filler-${n + i}` }));
      const r = await post(`${roost.url}/events`, batch);
      assert.equal(r.status, 200, await r.text());
    }
    assert.equal(roost.floor.state.agents.size, LIMITS.agents);
    // One more agent by POST /events: the floor's refusal.
    const direct = await post(`${roost.url}/events`, { type: 'join', agent: 'one-too-many' });
    assert.equal(direct.status, 409);
    // The same through a hook (a new Claude Code session): the same refusal, not a write past the cap.
    const hook = await post(`${roost.url}/hooks/claude-code`, { ...START, session_id: 'over-the-cap-session' });
    const said = await hook.text();
    assert.equal(hook.status, 409, said);
    assert.match((JSON.parse(said) as { message: string }).message, /the floor holds at most/);
    assert.equal(roost.floor.state.agents.size, LIMITS.agents);
    assert.ok(![...roost.floor.state.agents.keys()].some((k) => k.includes('over-the-cap')), 'the hook’s agent is not on the floor');
  } finally {
    await roost.close();
  }
});
