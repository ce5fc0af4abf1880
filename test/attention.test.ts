// What a person is shown (src/core/attention.ts): "waiting for you" is the
// pending approvals and nothing else, so the floor, the nav badge and the
// inbox count one list; a waiting agent without an approval of its own waits
// in its terminal; a verdict keeps its crow's desk waiting; quiet as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEvent, emptyFloor } from '../src/core/floor.js';
import { applyApproval, emptyApprovals } from '../src/core/approvals.js';
import { countShown, floorAgentOf, shownStatus, waitingForYou, waitingHere } from '../src/core/attention.js';

const T0 = 1_000_000;
const ask = (id: string, asker: string, extra: Record<string, unknown> = {}) => ({ type: 'approval.requested', id, kind: 'tool', asker, tool: 'Bash', source: 'claude-code', window: 60_000, ts: T0, ...extra });

test('waiting for you is the pending approvals; a waiting agent with none waits in its terminal', () => {
  const floor = emptyFloor();
  for (const [id, status] of [['held', 'waiting'], ['term', 'waiting'], ['busy', 'working'], ['gone', 'waiting']] as const) applyEvent(floor, { type: 'status', agent: id, team: 'T', status, ts: T0 });
  applyEvent(floor, { type: 'leave', agent: 'gone', ts: T0 });
  const ap = emptyApprovals();
  applyApproval(ap, ask('a1', 'held'));
  applyApproval(ap, ask('a2', 'held'));
  // A fleet session that is not on this floor, and a verdict asked by the crow Hugin.
  applyApproval(ap, ask('a3', 'fix-login', { kind: 'fleet', source: 'bridge' }));
  applyApproval(ap, ask('a4', 'Hugin', { kind: 'verdict', source: 'flock', tool: 'output' }));
  // Answered before the floor last heard from it (at T0): what it waits for now is at its terminal.
  applyApproval(ap, ask('a5', 'term', { ts: T0 - 2 }));
  applyApproval(ap, { type: 'approval.decided', id: 'a5', decision: 'allow', by: 'ann', ts: T0 - 1 });

  assert.deepEqual(waitingForYou(ap).map((a) => a.id), ['a1', 'a2', 'a3', 'a4']);
  assert.deepEqual([...waitingHere(ap)].sort(), ['fix-login', 'flock:Hugin', 'held']);
  assert.equal(floorAgentOf(waitingForYou(ap)[3]), 'flock:Hugin', "a verdict keeps its crow's desk waiting");
  const here = waitingHere(ap);
  const shown = (id: string) => shownStatus(floor.agents.get(id)!, T0 + 10, 120_000, here);
  assert.equal(shown('held'), 'waiting');
  assert.equal(shown('term'), 'terminal', 'its approval was decided: what it waits for now is at its terminal');
  assert.equal(shown('busy'), 'working');
  assert.equal(shownStatus(floor.agents.get('term')!, T0, 120_000, null), 'waiting', 'approvals not known yet: shown as said');
  assert.equal(shownStatus(floor.agents.get('busy')!, T0 + 120_000, 120_000, here), 'quiet');

  const c = countShown(floor, ap, T0 + 10, 120_000);
  assert.equal(c.waiting, 4, 'the count is the pending list, the same the badge and the inbox show');
  assert.equal(c.terminal, 1);
  assert.equal(c.working, 1);
  assert.equal(Object.values(c).reduce((x, y) => x + y, 0) - c.waiting, 2, 'agents on their way out are not counted');
  assert.equal(countShown(floor, null, T0, 120_000).waiting, 2, 'without approvals: the waiting agents');
  assert.equal(countShown(floor, null, T0, 120_000).terminal, 0);
});

test('the request is what makes an agent waiting, and its answer what ends it, before the floor hears of either', () => {
  const floor = emptyFloor();
  applyEvent(floor, { type: 'status', agent: 'a', team: 'T', status: 'working', ts: T0 });
  const ap = emptyApprovals();
  const shown = (now = T0 + 10) => shownStatus(floor.agents.get('a')!, now, 120_000, waitingHere(ap));
  applyApproval(ap, ask('r1', 'a', { ts: T0 + 1 }));
  assert.equal(shown(), 'waiting', 'pending here: waiting, though the floor has not said so yet');
  assert.equal(countShown(floor, ap, T0 + 10, 120_000).working, 0);
  applyEvent(floor, { type: 'tool', agent: 'a', status: 'waiting', tool: 'Bash', ts: T0 + 1 });
  assert.equal(shown(), 'waiting');
  // Decided ten minutes later; the floor's word of it has not come yet.
  applyApproval(ap, { type: 'approval.decided', id: 'r1', decision: 'allow', by: 'ann', ts: T0 + 600_000 });
  assert.equal(shown(T0 + 600_010), 'working', 'allowed: working, not waiting in its terminal, and not quiet for the wait');
  assert.equal(shown(T0 + 600_000 + 120_000), 'quiet', 'and quiet if the floor never hears of it');
  applyEvent(floor, { type: 'status', agent: 'a', status: 'waiting', ts: T0 + 600_020 });
  assert.equal(shown(T0 + 600_030), 'terminal', 'waiting again after the answer, with nothing here: its terminal');

  applyApproval(ap, ask('r2', 'a', { ts: T0 + 700_000 }));
  applyApproval(ap, { type: 'approval.decided', id: 'r2', decision: 'deny', by: 'ann', ts: T0 + 700_001 });
  assert.equal(shown(T0 + 700_002), 'thinking', 'denied: it goes on thinking');
  applyApproval(ap, ask('r3', 'a', { ts: T0 + 800_000 }));
  applyApproval(ap, { type: 'approval.withdrawn', id: 'r3', reason: 'gone', ts: T0 + 800_001 });
  assert.equal(shown(T0 + 800_002), 'idle', 'withdrawn: it stopped waiting');
});
