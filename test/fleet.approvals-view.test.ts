// The board's requests as the one approvals fold holds them
// (src/core/fleet-approvals.ts): the join every Roost reader of a request's
// fate uses (the board's cards, Work's box, the server's check of Work's
// pointer). Pure: both folds fed by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyApproval, emptyApprovals } from '../src/core/approvals.js';
import { emptySessions, foldSessions, FLEET_NO_DECISION } from '../src/core/fleet.js';
import { boardView, fleetApprovalOf, fleetIndex, sessionApprovals } from '../src/core/fleet-approvals.js';

const board = () =>
  foldSessions(emptySessions(), [
    { type: 'session.spawn', id: 's1', session: 'fix-login', ts: 1 },
    { type: 'session.approval', id: 's1', rid: 'r1', tool: 'Bash', digest: 'git push', state: 'pending', ts: 2 },
    { type: 'session.approval', id: 's1', rid: 'r2', tool: 'Edit', digest: 'src/a.ts', state: 'pending', ts: 3 },
    { type: 'session.approval', id: 's1', rid: 'old', tool: 'Read', digest: 'x', state: 'pending', ts: 4 },
    { type: 'session.approval', id: 's1', rid: 'old', state: 'allowed', name: 'Ana', ts: 5 },
  ]);

function approvals(thread = 't') {
  const s = emptyApprovals();
  for (const [id, rid] of [['fl_1', 'r1'], ['fl_2', 'r2']]) {
    applyApproval(s, { type: 'approval.requested', id, kind: 'fleet', asker: 's1', scope: { thread, session: 's1', rid }, tool: 'Bash', input: 'git push', ts: 10 });
  }
  // Another thread's request with the same session and rid is not this board's.
  applyApproval(s, { type: 'approval.requested', id: 'fl_x', kind: 'fleet', asker: 's1', scope: { thread: 'other', session: 's1', rid: 'r2' }, tool: 'Bash', ts: 10 });
  return s;
}

test('a request pending in the approvals is pending on the card, the very objects of the board (nothing re-renders)', () => {
  const b = board();
  const s = b.sessions[0];
  assert.equal(sessionApprovals(s, fleetIndex(approvals(), 't')), s.approvals);
});

test('an outcome in the approvals is the card\'s at once, before the board\'s echo; expiry and withdrawal read as denied by nobody', () => {
  const s = board().sessions[0];
  const a = approvals();
  applyApproval(a, { type: 'approval.decided', id: 'fl_1', decision: 'allow', by: 'Bob', ts: 11 });
  applyApproval(a, { type: 'approval.expired', id: 'fl_2', ts: 12 });
  applyApproval(a, { type: 'approval.withdrawn', id: 'fl_x', ts: 12 });
  const view = sessionApprovals(s, fleetIndex(a, 't'));
  assert.deepEqual(
    view.map((x) => [x.rid, x.state, x.by]),
    [
      ['r1', 'allowed', 'Bob'],
      ['r2', 'denied', FLEET_NO_DECISION],
      ['old', 'allowed', 'Ana'], // history the approvals do not hold: the board's own
    ],
  );
  assert.equal(view[2], s.approvals[2]);
  assert.deepEqual([view[0].tool, view[0].digest], ['Bash', 'git push'], 'the request itself is the board\'s (the contract\'s)');
});

test('once the board holds the outcome, its words name it (the bridge\'s own window denial is named by the bridge)', () => {
  const req = { rid: 'r2', tool: 'Edit', digest: '', state: 'denied' as const, by: 'Claude' };
  const a = approvals();
  applyApproval(a, { type: 'approval.withdrawn', id: 'fl_2', ts: 12 });
  assert.equal(boardView(req, a.byId.get('fl_2')), req);
  // A pending approval is pending whatever the board's copy says: the approvals fold decides.
  const p = approvals();
  assert.deepEqual(boardView(req, p.byId.get('fl_2')), { ...req, state: 'pending', by: '' });
});

test('one look-up finds a request\'s approval by its board scope, in its thread only', () => {
  const a = approvals();
  assert.equal(fleetApprovalOf(a, 't', 's1', 'r2')?.id, 'fl_2');
  assert.equal(fleetApprovalOf(a, 'other', 's1', 'r2')?.id, 'fl_x');
  assert.equal(fleetApprovalOf(a, 't', 's1', 'nope'), undefined);
});
