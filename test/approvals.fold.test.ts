// The approvals fold: first outcome wins, unknown ids are no-ops, windows,
// hostile input, split replays; and the digest and rule helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  applyApproval,
  approvalsFromJSON,
  approvalsToJSON,
  digestInput,
  dueToExpire,
  emptyApprovals,
  KEEP_CLOSED,
  REMEMBER_FORGOTTEN,
  needsApproval,
  nextDeadline,
  orphanedApprovals,
  pendingApprovals,
  pendingFor,
  recentApprovals,
} from '../src/core/approvals.js';

const req = (id: string, ts = 1000, extra: Record<string, unknown> = {}) => ({ type: 'approval.requested', id, kind: 'tool', asker: 'claude-code:s1', tool: 'Bash', input: '$ rm -rf build', source: 'claude-code', window: 60_000, ts, ...extra });

test('a request is pending until the first outcome; the first decision wins and never flips', () => {
  const s = emptyApprovals();
  assert.deepEqual(applyApproval(s, req('a1'), 1), [{ kind: 'requested', id: 'a1' }]);
  assert.equal(pendingApprovals(s).length, 1);
  assert.equal(pendingFor(s, 'claude-code:s1')[0].id, 'a1');
  assert.equal(s.byId.get('a1')!.deadline, 61_000);
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'a1', decision: 'deny', by: 'alice', ts: 2000 }, 2), [{ kind: 'closed', id: 'a1', status: 'denied' }]);
  // Later outcomes change nothing.
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'a1', decision: 'allow', by: 'bob', ts: 3000 }, 3), []);
  assert.deepEqual(applyApproval(s, { type: 'approval.expired', id: 'a1', ts: 99_000 }, 4), []);
  const a = s.byId.get('a1')!;
  assert.equal(a.status, 'denied');
  assert.equal(a.decidedBy, 'alice');
  assert.equal(a.decidedAt, 2000);
  assert.equal(a.closedAt, 2, 'the position of the winning event is kept');
  assert.equal(pendingApprovals(s).length, 0);
  assert.equal(recentApprovals(s)[0].id, 'a1');
});

test('outcomes for unknown ids, duplicate requests and malformed events are no-ops', () => {
  const s = emptyApprovals();
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'nope', decision: 'allow', by: 'x', ts: 1 }), []);
  assert.deepEqual(applyApproval(s, { type: 'approval.expired', id: 'nope', ts: 1 }), []);
  applyApproval(s, req('a1'));
  assert.deepEqual(applyApproval(s, req('a1', 5000, { tool: 'Write' })), [], 'ids are unique');
  assert.equal(s.byId.get('a1')!.tool, 'Bash');
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'a1', decision: 'maybe', ts: 1 }), []);
  assert.deepEqual(applyApproval(s, req('a2', 1, { asker: '' })), [], 'an asker is required');
  assert.deepEqual(applyApproval(s, req('a4', 1, { kind: 'sudo' })), [], 'an unknown kind is refused');
  assert.deepEqual(applyApproval(s, req('a3', 1, { tool: 42 })), [], 'a tool is required');
  assert.equal(s.byId.get('a1')!.status, 'pending');
});

test('windows: expiry is due at the deadline; windows are clamped; withdrawal closes a request', () => {
  const s = emptyApprovals();
  applyApproval(s, req('a1', 1000, { window: 5000 }));
  applyApproval(s, req('a2', 2000, { window: 1 }));
  applyApproval(s, req('a3', 3000, { window: 1e12 }));
  assert.equal(s.byId.get('a2')!.window, 1000, 'at least a second');
  assert.equal(s.byId.get('a3')!.window, 24 * 3600 * 1000, 'at most a day');
  assert.equal(nextDeadline(s), 3000);
  assert.deepEqual(dueToExpire(s, 2999), []);
  assert.deepEqual(dueToExpire(s, 6000), ['a1', 'a2']);
  applyApproval(s, { type: 'approval.expired', id: 'a2', ts: 3000 });
  applyApproval(s, { type: 'approval.withdrawn', id: 'a1', reason: 'the agent stopped waiting', ts: 3500 });
  assert.equal(s.byId.get('a2')!.status, 'expired');
  assert.equal(s.byId.get('a1')!.status, 'withdrawn');
  assert.equal(nextDeadline(s), 3000 + 24 * 3600 * 1000);
});

test('only the newest closed approvals are kept in memory, and their ids stay used', () => {
  const s = emptyApprovals();
  for (let i = 0; i < KEEP_CLOSED + 10; i++) {
    applyApproval(s, req('a' + i, i));
    applyApproval(s, { type: 'approval.decided', id: 'a' + i, decision: 'allow', by: 'me', ts: i });
  }
  assert.equal(s.byId.size, KEEP_CLOSED);
  assert.equal(recentApprovals(s, 1)[0].id, 'a' + (KEEP_CLOSED + 9));
  assert.deepEqual(applyApproval(s, req('a0')), [], 'a forgotten id cannot be requested again');
  const copy = approvalsFromJSON(JSON.parse(JSON.stringify(approvalsToJSON(s))));
  assert.deepEqual(approvalsToJSON(copy), approvalsToJSON(s));
});

test('the forgotten ids are bounded: past REMEMBER_FORGOTTEN the oldest are let go, in the state and in its snapshot', () => {
  const s = emptyApprovals();
  const n = KEEP_CLOSED + REMEMBER_FORGOTTEN + 25;
  for (let i = 0; i < n; i++) {
    applyApproval(s, req('a' + i, i));
    applyApproval(s, { type: 'approval.decided', id: 'a' + i, decision: 'deny', by: 'me', ts: i });
  }
  assert.equal(s.byId.size, KEEP_CLOSED);
  assert.equal(s.forgotten.size, REMEMBER_FORGOTTEN);
  assert.equal(s.forgotten.has('a24'), false, 'the oldest are let go');
  assert.equal(s.forgotten.has('a25'), true);
  assert.equal(s.forgotten.has('a' + (n - KEEP_CLOSED - 1)), true, 'the newest forgotten is remembered');
  assert.deepEqual(applyApproval(s, req('a' + (n - KEEP_CLOSED - 1))), [], 'a remembered id cannot be requested again');
  // A snapshot from before the bound, with more ids than it, loads bounded (the newest kept).
  const j = approvalsToJSON(s);
  j.forgotten = ['old-1', 'old-2', ...j.forgotten];
  const loaded = approvalsFromJSON(JSON.parse(JSON.stringify(j)));
  assert.equal(loaded.forgotten.size, REMEMBER_FORGOTTEN);
  assert.equal(loaded.forgotten.has('old-1'), false);
  assert.deepEqual([...loaded.forgotten], [...s.forgotten]);
});

test('one model for every kind: an event from before kinds folds as a tool request; fleet, verdict and ask carry their scope', () => {
  const s = emptyApprovals();
  // Stored by Roost before kinds existed: agent, agentName, app, session.
  applyApproval(s, { type: 'approval.requested', id: 'old', agent: 'claude-code:s1', agentName: 'shop · s1', app: 'floor', session: 'claude-code:s1', tool: 'Bash', input: '$ ls', source: 'claude-code', ts: 5 });
  const old = s.byId.get('old')!;
  assert.equal(old.kind, 'tool');
  assert.equal(old.asker, 'claude-code:s1');
  assert.equal(old.askerName, 'shop · s1');
  assert.deepEqual(old.scope, { session: 'claude-code:s1' });
  assert.equal(old.holder, '');
  assert.equal(pendingFor(s, 'claude-code:s1')[0].id, 'old');
  applyApproval(s, { type: 'approval.requested', id: 'oldfleet', agent: 's1', app: 'sessions', tool: 'Bash', ts: 6 });
  assert.equal(s.byId.get('oldfleet')!.kind, 'fleet');

  applyApproval(s, req('f1', 7, { kind: 'fleet', asker: 'sess-1', askerName: 'fix-login', scope: { thread: 't1', session: 'sess-1', rid: 'toolu_1', evil: 'x', __proto__: { polluted: 1 } }, holder: 'bridge:b1' }));
  const f = s.byId.get('f1')!;
  assert.deepEqual(f.scope, { thread: 't1', session: 'sess-1', rid: 'toolu_1' }, 'only the known scope keys are kept');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(f.holder, 'bridge:b1');
  assert.deepEqual(pendingFor(s, 'sess-1'), [], 'a fleet request is not a floor agent’s');
  applyApproval(s, req('v1', 8, { kind: 'verdict', asker: 'Elder', tool: 'output', input: 'the merged answer', scope: { list: 'l1', item: 'l1-1', target: 'output' } }));
  assert.equal(s.byId.get('v1')!.kind, 'verdict');
});

test('an ask is a yes only with its exact phrase (trimmed, any case); anything else is not a yes; a deny needs none', () => {
  const s = emptyApprovals();
  assert.deepEqual(applyApproval(s, req('q0', 1, { kind: 'ask', asker: 'Sentry', tool: 'ask_owner' })), [], 'an ask without its phrase is refused');
  applyApproval(s, req('q1', 1, { kind: 'ask', asker: 'Sentry', tool: 'ask_owner', phrase: '  Lift  The Quarantine ' }));
  assert.equal(s.byId.get('q1')!.phrase, 'lift the quarantine');
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'q1', decision: 'allow', by: 'owner', ts: 2 }), [], 'no phrase: not a yes');
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'q1', decision: 'allow', by: 'owner', phrase: 'lift quarantine', ts: 2 }), [], 'another phrase: not a yes');
  assert.equal(s.byId.get('q1')!.status, 'pending', 'and not a no either');
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'q1', decision: 'allow', by: 'owner', phrase: ' LIFT the quarantine', ts: 3 }, 9), [{ kind: 'closed', id: 'q1', status: 'allowed' }]);
  applyApproval(s, req('q2', 1, { kind: 'ask', asker: 'Quill', tool: 'ask_owner', phrase: 'ship it' }));
  assert.deepEqual(applyApproval(s, { type: 'approval.decided', id: 'q2', decision: 'deny', by: 'owner', ts: 3 }), [{ kind: 'closed', id: 'q2', status: 'denied' }]);
});

test('orphans: pending requests with a holder nobody holds; requests without one are left to their window', () => {
  const s = emptyApprovals();
  applyApproval(s, req('h1', 1, { holder: 'node:a' }));
  applyApproval(s, req('h2', 1, { holder: 'node:b' }));
  applyApproval(s, req('h3', 1));
  applyApproval(s, req('h4', 1, { holder: 'node:b' }));
  applyApproval(s, { type: 'approval.withdrawn', id: 'h4', ts: 2 });
  assert.deepEqual(orphanedApprovals(s, (a) => a.holder === 'node:a'), ['h2']);
});

const ids = fc.constantFrom('a', 'b', 'c', 'constructor', '__proto__');
const ts = fc.integer({ min: 0, max: 1e6 });
/** Valid events of every kind, so the laws are tried on real histories, not only on noise. */
const validEvent = fc.oneof(
  fc.record({
    type: fc.constant('approval.requested'),
    id: ids,
    kind: fc.constantFrom('tool', 'fleet', 'verdict', 'ask'),
    asker: fc.constantFrom('claude-code:s1', 'sess-1', 'Elder', 'Sentry'),
    tool: fc.constantFrom('Bash', 'Edit', 'output', 'ask_owner'),
    phrase: fc.constantFrom('ship it', 'Lift It'),
    scope: fc.constantFrom({}, { thread: 't', session: 's', rid: 'r' }, { list: 'l', item: 'l-1', target: 'triage' }),
    holder: fc.constantFrom('', 'node:a', 'bridge:b'),
    window: fc.integer({ min: 1000, max: 100_000 }),
    ts,
  }),
  fc.record({ type: fc.constant('approval.decided'), id: ids, decision: fc.constantFrom('allow', 'deny'), by: fc.constantFrom('ann', 'ben'), phrase: fc.constantFrom('ship it', 'no', 'lift it'), ts }),
  fc.record({ type: fc.constantFrom('approval.expired', 'approval.withdrawn'), id: ids, reason: fc.constantFrom('gone', ''), ts }),
);
const hostileEvent = fc.oneof(
  fc.record({ type: fc.constant('approval.requested'), id: fc.constantFrom('a', 'b', 'c'), agent: fc.constantFrom('x', 'y', ''), kind: fc.anything(), scope: fc.anything(), tool: fc.constantFrom('Bash', 'Edit'), window: fc.integer(), ts }),
  fc.record({ type: fc.constant('approval.decided'), id: fc.constantFrom('a', 'b', 'c', 'd'), decision: fc.constantFrom('allow', 'deny', 'x'), by: fc.string(), phrase: fc.anything(), ts }),
  fc.record({ type: fc.constantFrom('approval.expired', 'approval.withdrawn'), id: fc.constantFrom('a', 'b', 'c'), ts }),
  fc.anything(),
);
const anyEvent = fc.oneof({ weight: 3, arbitrary: validEvent }, { weight: 1, arbitrary: hostileEvent });

test('property: hostile events never throw; a closed approval never changes; split folds agree', () => {
  fc.assert(
    fc.property(fc.array(anyEvent, { maxLength: 40 }), fc.nat(), (events, cut) => {
      const s = emptyApprovals();
      const closedAs = new Map<string, string>();
      events.forEach((e, i) => {
        applyApproval(s, e, i + 1);
        for (const a of s.byId.values()) {
          if (a.status === 'pending') continue;
          const was = closedAs.get(a.id);
          if (was) assert.equal(`${a.status}|${a.decidedBy}|${a.closedAt}`, was);
          else closedAs.set(a.id, `${a.status}|${a.decidedBy}|${a.closedAt}`);
          if (a.kind === 'ask' && a.status === 'allowed') assert.ok(['ship it', 'lift it'].includes(a.phrase), 'an ask allowed only with its phrase');
        }
      });
      assert.equal(({} as Record<string, unknown>).kind, undefined, 'nothing reached Object.prototype');
      const k = events.length ? cut % (events.length + 1) : 0;
      const t = emptyApprovals();
      events.slice(0, k).forEach((e, i) => applyApproval(t, e, i + 1));
      const u = approvalsFromJSON(JSON.parse(JSON.stringify(approvalsToJSON(t))));
      events.slice(k).forEach((e, i) => applyApproval(u, e, k + i + 1));
      assert.deepEqual(approvalsToJSON(u), approvalsToJSON(s));
    }),
    { numRuns: 500 },
  );
});

test('digests are short and readable; rules use Claude Code’s matcher syntax and fail safe', () => {
  assert.equal(digestInput('Bash', { command: 'npm test', description: 'Run test suite', timeout: 120000 }), '$ npm test');
  assert.equal(digestInput('Write', { file_path: '/p/a.txt', content: 'hello' }), 'write /p/a.txt (5 chars)');
  assert.equal(digestInput('Edit', { file_path: '/p/a.ts', old_string: 'let  x\n= 1', new_string: 'y' }), 'edit /p/a.ts: "let x = 1"');
  assert.equal(digestInput('mcp__db__query', { sql: 'select 1', limit: 5 }), 'sql: select 1, limit: 5');
  assert.ok(digestInput('Bash', { command: 'x'.repeat(100_000) }).length <= 400);
  assert.equal(needsApproval('Bash', 'Bash'), true);
  assert.equal(needsApproval('Bash', 'BashOutput'), false, 'whole-name match');
  assert.equal(needsApproval('Edit|Write', 'Write'), true);
  assert.equal(needsApproval('mcp__.*', 'mcp__github__create_issue'), true);
  assert.equal(needsApproval('mcp__.*', 'Read'), false);
  assert.equal(needsApproval('all', 'Read'), true);
  assert.equal(needsApproval('', 'Bash'), false);
  assert.equal(needsApproval(undefined, 'Bash'), false);
  assert.equal(needsApproval('(unclosed', 'Read'), true, 'a broken rule asks rather than lets through');
});
