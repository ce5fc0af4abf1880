// The floor contract (spec/floor-protocol.md), rule by rule, on the pure fold
// alone: no server, no clock. Each test folds a named fixture and checks what a
// person watching the floor would see (who sits where, in which room, with which
// status) and which animations (effects) the view is told to play.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  LIFETIMES,
  LIMITS,
  STATUSES,
  SWEEP,
  applyEvent,
  dueForSweep,
  emptyFloor,
  nextSweepAt,
  sweep,
  tidyName,
  type Effect,
  type FloorEvent,
  type FloorState,
} from '../src/core/floor.js';

const T0 = 1_700_000_000_000;

/** Folds events in order; returns the state and the effects of each event. */
function run(events: FloorEvent[], s: FloorState = emptyFloor()): { s: FloorState; fx: Effect[][] } {
  const fx = events.map((e) => applyEvent(s, e));
  return { s, fx };
}

function agent(s: FloorState, id: string) {
  const a = s.agents.get(id);
  assert.ok(a, `agent ${id} should be on the floor`);
  return a;
}

function kinds(fx: Effect[]): string[] {
  return fx.map((f) => f.kind);
}

// ---------------------------------------------------------------- fixtures
const smallest: FloorEvent = { type: 'status', agent: 'bot-1', team: 'Payments', status: 'working', activity: 'Reconciling invoices', ts: T0 };
const leadJoins: FloorEvent = { type: 'join', agent: { id: 'lead-1', role: 'lead' }, team: 'Core', ts: T0 };
const helperJoins: FloorEvent = { type: 'join', agent: 'rev-1', role: 'code-reviewer', parent: 'lead-1', ts: T0 + 1 };

describe('agents and teams', () => {
  test('the smallest status call creates the agent and its team', () => {
    const { s, fx } = run([smallest]);
    const a = agent(s, 'bot-1');
    assert.equal(a.team, 'Payments');
    assert.equal(a.status, 'working');
    assert.equal(a.activity, 'Reconciling invoices');
    assert.deepEqual(s.teams.get('Payments')?.name, 'Payments');
    assert.deepEqual(fx[0], [
      { kind: 'enter', agent: 'bot-1', team: 'Payments' },
      { kind: 'status', agent: 'bot-1', status: 'working' },
    ]);
  });

  test('every event type creates its agent', () => {
    for (const type of ['join', 'status', 'tool', 'message', 'task', 'leave']) {
      const { s, fx } = run([{ type, agent: `a-${type}`, ts: T0 }]);
      assert.ok(s.agents.has(`a-${type}`), type);
      assert.equal(agent(s, `a-${type}`).team, 'default', type);
      assert.ok(s.teams.has('default'), type);
      assert.deepEqual(fx[0][0], { kind: 'enter', agent: `a-${type}`, team: 'default' }, type);
    }
  });

  test('agent as an object carries id, name, role and source', () => {
    const { s } = run([{ type: 'join', agent: { id: 'x1', name: 'Ada', role: 'planner', source: 'codex' }, ts: T0 }]);
    const a = agent(s, 'x1');
    assert.deepEqual([a.name, a.role, a.source], ['Ada', 'planner', 'codex']);
  });

  test('top-level name, role and source win over the agent object', () => {
    const { s } = run([{ type: 'join', agent: { id: 'x1', name: 'Ada', role: 'planner', source: 'codex' }, name: 'Grace', role: 'tester', source: 'cli', ts: T0 }]);
    const a = agent(s, 'x1');
    assert.deepEqual([a.name, a.role, a.source], ['Grace', 'tester', 'cli']);
  });

  test('a later event renames the agent and changes its source', () => {
    const { s } = run([
      { type: 'join', agent: 'x1', ts: T0 },
      { type: 'status', agent: 'x1', name: 'Ada', source: 'cursor', ts: T0 + 1 },
    ]);
    assert.equal(agent(s, 'x1').name, 'Ada');
    assert.equal(agent(s, 'x1').source, 'cursor');
  });

  test('the display name defaults to a tidied id', () => {
    const { s } = run([
      { type: 'join', agent: 'code-reviewer_2', ts: T0 },
      { type: 'join', agent: 'bot.one', ts: T0 },
      { type: 'join', agent: 'myAgent', ts: T0 },
    ]);
    assert.equal(agent(s, 'code-reviewer_2').name, 'Code Reviewer 2');
    assert.equal(agent(s, 'bot.one').name, 'Bot One');
    assert.equal(agent(s, 'myAgent').name, 'My Agent');
    assert.equal(tidyName('---'), '---', 'an id with nothing to tidy keeps itself');
  });

  test('team as an object { id, name }: the id keys the room, the name is shown', () => {
    const { s } = run([
      { type: 'join', agent: 'a', team: { id: 't1', name: 'Payments' }, ts: T0 },
      { type: 'join', agent: 'b', team: 't1', ts: T0 },
      { type: 'join', agent: 'c', team: { name: 'Search' }, ts: T0 },
    ]);
    assert.equal(agent(s, 'a').team, 't1');
    assert.equal(s.teams.get('t1')?.name, 'Payments');
    assert.equal(agent(s, 'b').team, 't1', 'a string team names the same room by id');
    assert.equal(s.teams.get('t1')?.name, 'Payments', 'a bare id does not rename the room');
    assert.equal(agent(s, 'c').team, 'Search', 'without an id, the name is the id');
  });

  test('team defaults to the parent\'s team, then "default"', () => {
    const { s } = run([leadJoins, helperJoins, { type: 'join', agent: 'orphan', parent: 'nobody', ts: T0 }]);
    assert.equal(agent(s, 'rev-1').team, 'Core');
    assert.equal(agent(s, 'rev-1').parent, 'lead-1');
    assert.equal(agent(s, 'orphan').team, 'default');
  });

  test('an agent moving to another room leaves the old room empty, which vanishes', () => {
    const { s } = run([
      { type: 'join', agent: 'a', team: 'Old', ts: T0 },
      { type: 'status', agent: 'a', team: 'New', ts: T0 + 1 },
    ]);
    assert.equal(agent(s, 'a').team, 'New');
    assert.equal(s.teams.has('Old'), false);
  });

  test('an event with no usable agent changes nothing', () => {
    const s = emptyFloor();
    for (const e of [{ type: 'status' }, { type: 'status', agent: '' }, { type: 'status', agent: '  ' }, { type: 'status', agent: 7 }, { type: 'status', agent: { name: 'x' } }]) {
      assert.deepEqual(applyEvent(s, e as FloorEvent), []);
    }
    assert.equal(s.agents.size, 0);
    assert.equal(s.rev, 0);
  });

  test('an unknown type changes nothing', () => {
    const { s, fx } = run([{ type: 'dance', agent: 'a', ts: T0 }]);
    assert.equal(s.agents.size, 0);
    assert.deepEqual(fx[0], []);
  });

  test('ids and names are clamped to the fold caps', () => {
    const long = 'x'.repeat(1000);
    const { s } = run([{ type: 'join', agent: long, name: long, ts: T0 }]);
    const a = agent(s, long.slice(0, LIMITS.id));
    assert.equal(a.name.length, LIMITS.name);
  });
});

describe('roles and desks', () => {
  test('a lead gets the head desk (desk 0) even when it arrives last', () => {
    const { s } = run([
      { type: 'join', agent: 'w1', team: 'T', ts: T0 },
      { type: 'join', agent: 'w2', team: 'T', ts: T0 },
      { type: 'join', agent: 'boss', role: 'Lead', team: 'T', ts: T0 },
    ]);
    assert.equal(agent(s, 'boss').desk, 0);
    assert.deepEqual([agent(s, 'w1').desk, agent(s, 'w2').desk], [1, 2]);
  });

  test('others never sit at desk 0, even in an empty room', () => {
    const { s } = run([{ type: 'join', agent: 'w1', role: 'coder', team: 'T', ts: T0 }]);
    assert.equal(agent(s, 'w1').desk, 1);
  });

  test('a second lead in the same room gets an ordinary desk', () => {
    const { s } = run([
      { type: 'join', agent: 'l1', role: 'lead', team: 'T', ts: T0 },
      { type: 'join', agent: 'l2', role: 'lead', team: 'T', ts: T0 },
    ]);
    assert.equal(agent(s, 'l1').desk, 0);
    assert.equal(agent(s, 'l2').desk, 1);
  });

  test('desks are numbered per room, and a freed desk is reused', () => {
    const { s } = run([
      { type: 'join', agent: 'a', team: 'T', ts: T0 },
      { type: 'join', agent: 'b', team: 'T', ts: T0 },
      { type: 'join', agent: 'c', team: 'U', ts: T0 },
      { type: 'leave', agent: 'a', ts: T0 },
    ]);
    assert.equal(agent(s, 'c').desk, 1, 'rooms number their desks independently');
    sweep(s, T0 + LIFETIMES.afterLeave);
    run([{ type: 'join', agent: 'd', team: 'T', ts: T0 + 7000 }], s);
    assert.equal(agent(s, 'd').desk, 1);
  });

  test('promoted to lead takes the head desk; demoted gives it up', () => {
    const { s } = run([
      { type: 'join', agent: 'a', team: 'T', ts: T0 },
      { type: 'join', agent: 'b', team: 'T', ts: T0 },
      { type: 'status', agent: 'b', role: 'lead', ts: T0 + 1 },
    ]);
    assert.equal(agent(s, 'b').desk, 0);
    run([{ type: 'status', agent: 'b', role: 'coder', ts: T0 + 2 }], s);
    assert.notEqual(agent(s, 'b').desk, 0);
    assert.notEqual(agent(s, 'b').desk, agent(s, 'a').desk);
  });
});

describe('statuses, activity, tools', () => {
  test('each of the seven statuses is taken; anything else is ignored', () => {
    const s = emptyFloor();
    for (const status of STATUSES) {
      const fx = applyEvent(s, { type: 'status', agent: 'a', status, ts: T0 });
      assert.equal(agent(s, 'a').status, status);
      if (status !== 'idle') assert.ok(fx.some((f) => f.kind === 'status'), status);
    }
    applyEvent(s, { type: 'status', agent: 'a', status: 'sleeping', ts: T0 });
    applyEvent(s, { type: 'status', agent: 'a', status: 'WORKING', ts: T0 });
    assert.equal(agent(s, 'a').status, 'offline');
  });

  test('a new agent starts idle', () => {
    const { s } = run([{ type: 'join', agent: 'a', ts: T0 }]);
    assert.equal(agent(s, 'a').status, 'idle');
  });

  test('activity is capped at 280 characters; an empty activity clears it', () => {
    const { s } = run([{ type: 'status', agent: 'a', activity: 'y'.repeat(1000), ts: T0 }]);
    assert.equal(agent(s, 'a').activity.length, 280);
    run([{ type: 'status', agent: 'a', activity: '', ts: T0 }], s);
    assert.equal(agent(s, 'a').activity, '');
  });

  test('a status event without activity keeps the activity', () => {
    const { s } = run([
      { type: 'status', agent: 'a', activity: 'Reading', ts: T0 },
      { type: 'status', agent: 'a', status: 'thinking', ts: T0 },
    ]);
    assert.equal(agent(s, 'a').activity, 'Reading');
  });

  test('tool sets working unless a status is given', () => {
    const { s, fx } = run([
      { type: 'tool', agent: 'a', tool: 'Read', activity: 'Reading cart.ts', ts: T0 },
    ]);
    assert.equal(agent(s, 'a').status, 'working');
    assert.equal(agent(s, 'a').tool, 'Read');
    assert.deepEqual(fx[0].at(-1), { kind: 'status', agent: 'a', status: 'working' });
    run([{ type: 'tool', agent: 'a', tool: 'Bash', status: 'waiting', ts: T0 }], s);
    assert.equal(agent(s, 'a').status, 'waiting');
    assert.equal(agent(s, 'a').tool, 'Bash');
    run([{ type: 'tool', agent: 'a', status: 'bogus', ts: T0 }], s);
    assert.equal(agent(s, 'a').status, 'working', 'an invalid status falls back to working');
  });

  test('a status that does not change plays no status effect', () => {
    const { fx } = run([
      { type: 'status', agent: 'a', status: 'working', ts: T0 },
      { type: 'status', agent: 'a', status: 'working', ts: T0 },
    ]);
    assert.deepEqual(fx[1], []);
  });
});

describe('messages', () => {
  test('a paper plane to each recipient (string or array), speech over the sender', () => {
    const { s, fx } = run([
      { type: 'join', agent: 'a', team: 'T', ts: T0 },
      { type: 'join', agent: 'b', team: 'T', ts: T0 },
      { type: 'message', agent: 'a', to: 'b', text: 'hi', ts: T0 + 1 },
      { type: 'message', agent: 'a', to: ['b', 'c'], text: 'all', ts: T0 + 2 },
    ]);
    assert.deepEqual(fx[2], [
      { kind: 'plane', from: 'a', to: 'b', text: 'hi' },
      { kind: 'speech', agent: 'a', text: 'hi' },
    ]);
    assert.deepEqual(fx[3], [
      { kind: 'plane', from: 'a', to: 'b', text: 'all' },
      { kind: 'enter', agent: 'c', team: 'T' },
      { kind: 'plane', from: 'a', to: 'c', text: 'all' },
      { kind: 'speech', agent: 'a', text: 'all' },
    ]);
    assert.equal(agent(s, 'a').said, 'all');
  });

  test('unknown recipients are created in the sender\'s team', () => {
    const { s } = run([{ type: 'message', agent: 'a', team: 'Ops', to: ['ghost-1'], text: 'x', ts: T0 }]);
    assert.equal(agent(s, 'ghost-1').team, 'Ops');
    assert.equal(agent(s, 'ghost-1').name, 'Ghost 1');
  });

  test('without "to" the message goes to the parent', () => {
    const { fx } = run([leadJoins, helperJoins, { type: 'message', agent: 'rev-1', text: 'done reviewing', ts: T0 + 2 }]);
    assert.deepEqual(fx[2][0], { kind: 'plane', from: 'rev-1', to: 'lead-1', text: 'done reviewing' });
  });

  test('without "to" and without a parent there is no plane, only speech', () => {
    const { fx } = run([{ type: 'message', agent: 'a', text: 'hello', ts: T0 }]);
    assert.deepEqual(kinds(fx[0]), ['enter', 'speech']);
  });

  test('duplicate recipients get one plane; the sender never sends to itself', () => {
    const { fx } = run([{ type: 'message', agent: 'a', to: ['b', 'b', 'a'], text: '', ts: T0 }]);
    assert.deepEqual(fx[0].filter((f) => f.kind === 'plane'), [{ kind: 'plane', from: 'a', to: 'b', text: '' }]);
  });

  test('a message text is clamped to the text cap', () => {
    const { s } = run([{ type: 'message', agent: 'a', to: 'b', text: 'z'.repeat(5000), ts: T0 }]);
    assert.equal(agent(s, 'a').said.length, LIMITS.text);
  });
});

describe('task, leave, reset', () => {
  test('task writes on the team whiteboard', () => {
    const { s, fx } = run([{ type: 'task', agent: 'a', team: 'T', task: 'Ship v2', ts: T0 }]);
    assert.equal(s.teams.get('T')?.task, 'Ship v2');
    assert.equal(s.teams.get('T')?.taskAt, T0);
    assert.deepEqual(fx[0].at(-1), { kind: 'whiteboard', team: 'T', task: 'Ship v2' });
    const again = applyEvent(s, { type: 'task', agent: 'a', task: 'Ship v2', ts: T0 + 1 });
    assert.deepEqual(again, [], 'the same task again plays nothing');
  });

  test('leave: the agent walks out and is still shown until swept', () => {
    const { s, fx } = run([{ type: 'join', agent: 'a', ts: T0 }, { type: 'leave', agent: 'a', ts: T0 + 10 }]);
    assert.deepEqual(fx[1], [{ kind: 'exit', agent: 'a' }]);
    assert.equal(agent(s, 'a').leftAt, T0 + 10);
  });

  test('an agent that comes back before being forgotten walks in again', () => {
    const { s, fx } = run([
      { type: 'join', agent: 'a', ts: T0 },
      { type: 'leave', agent: 'a', ts: T0 + 1 },
      { type: 'status', agent: 'a', status: 'working', ts: T0 + 2 },
    ]);
    assert.deepEqual(kinds(fx[2]), ['enter', 'status']);
    assert.equal(agent(s, 'a').leftAt, null);
    assert.deepEqual(sweep(s, T0 + 1 + LIFETIMES.afterLeave), []);
  });

  test('reset clears the whole floor and needs no agent', () => {
    const { s, fx } = run([smallest, leadJoins, helperJoins, { type: 'reset' }]);
    assert.deepEqual(fx[3], [{ kind: 'reset' }]);
    assert.equal(s.agents.size, 0);
    assert.equal(s.teams.size, 0);
    assert.equal(s.hints.size, 0);
    assert.deepEqual(applyEvent(s, { type: 'reset' }), [], 'resetting an empty floor plays nothing');
  });
});

describe('subagent hints', () => {
  const hinted = (key: string | undefined, type: string, extra: Partial<FloorEvent> = {}): FloorEvent => ({
    type: 'tool',
    agent: 'lead-1',
    subagent: key === undefined ? { type } : { key, type },
    tool: 'Read',
    activity: `work of ${key}`,
    ts: T0 + 10,
    ...extra,
  });

  test('binds to the oldest unbound helper of that role under the agent', () => {
    const { s, fx } = run([
      leadJoins,
      { type: 'join', agent: 'rev-a', role: 'code-reviewer', parent: 'lead-1', ts: T0 + 1 },
      { type: 'join', agent: 'rev-b', role: 'code-reviewer', parent: 'lead-1', ts: T0 + 2 },
      { type: 'join', agent: 'test-a', role: 'tester', parent: 'lead-1', ts: T0 + 3 },
      hinted('ag_9', 'code-reviewer'),
      hinted('ag_7', 'code-reviewer'),
    ]);
    assert.equal(agent(s, 'rev-a').activity, 'work of ag_9');
    assert.equal(agent(s, 'rev-a').tool, 'Read');
    assert.equal(agent(s, 'rev-a').status, 'working');
    assert.equal(agent(s, 'rev-b').activity, 'work of ag_7', 'the next key binds the next oldest unbound helper');
    assert.equal(agent(s, 'lead-1').activity, '', 'the parent itself is untouched');
    assert.equal(agent(s, 'lead-1').status, 'idle');
    assert.ok(!fx[4].some((f) => f.kind === 'enter'), 'no new desk while a helper is free');
  });

  test('remembers the key: later events land on the same desk', () => {
    const { s } = run([
      leadJoins,
      { type: 'join', agent: 'rev-a', role: 'code-reviewer', parent: 'lead-1', ts: T0 + 1 },
      { type: 'join', agent: 'rev-b', role: 'code-reviewer', parent: 'lead-1', ts: T0 + 2 },
      hinted('ag_9', 'code-reviewer'),
      hinted('ag_7', 'code-reviewer'),
      hinted('ag_9', 'code-reviewer', { type: 'status', status: 'done', activity: 'LGTM' }),
    ]);
    assert.equal(agent(s, 'rev-a').status, 'done');
    assert.equal(agent(s, 'rev-a').activity, 'LGTM');
    assert.equal(agent(s, 'rev-b').status, 'working');
  });

  test('with no such helper it opens a new desk beside the parent, briefed by it', () => {
    const { s, fx } = run([leadJoins, hinted('ag_9', 'code-reviewer')]);
    const id = 'lead-1/code-reviewer-ag_9';
    const h = agent(s, id);
    assert.deepEqual([h.parent, h.role, h.team, h.name], ['lead-1', 'code-reviewer', 'Core', 'Code Reviewer']);
    assert.notEqual(h.desk, 0);
    assert.deepEqual(fx[1], [
      { kind: 'enter', agent: id, team: 'Core' },
      { kind: 'brief', from: 'lead-1', to: id },
      { kind: 'status', agent: id, status: 'working' },
    ]);
    // the same key later: the same desk, no new one
    const again = applyEvent(s, hinted('ag_9', 'code-reviewer', { activity: 'more' }));
    assert.ok(!again.some((f) => f.kind === 'enter'));
    assert.equal(agent(s, id).activity, 'more');
    assert.equal(s.agents.size, 2);
  });

  test('a hint without a key opens "parent/type" and then reuses the oldest helper of that type', () => {
    const { s } = run([leadJoins, hinted(undefined, 'planner'), hinted(undefined, 'planner', { activity: 'again' })]);
    assert.equal(s.agents.size, 2);
    assert.equal(agent(s, 'lead-1/planner').activity, 'again');
  });

  test('a hint does not bind a helper of another parent or another role', () => {
    const { s } = run([
      leadJoins,
      { type: 'join', agent: 'other-lead', ts: T0 },
      { type: 'join', agent: 'rev-x', role: 'code-reviewer', parent: 'other-lead', ts: T0 + 1 },
      { type: 'join', agent: 'tester', role: 'tester', parent: 'lead-1', ts: T0 + 1 },
      hinted('k1', 'code-reviewer'),
    ]);
    assert.ok(s.agents.has('lead-1/code-reviewer-k1'));
    assert.equal(agent(s, 'rev-x').activity, '');
    assert.equal(agent(s, 'tester').activity, '');
  });

  test('a leave with a hint walks the helper out, not the parent', () => {
    const { s } = run([
      leadJoins,
      hinted('ag_1', 'code-reviewer'),
      { type: 'leave', agent: 'lead-1', subagent: { key: 'ag_1', type: 'code-reviewer' }, ts: T0 + 20 },
    ]);
    assert.equal(agent(s, 'lead-1').leftAt, null);
    assert.equal(agent(s, 'lead-1/code-reviewer-ag_1').leftAt, T0 + 20);
  });

  test('a helper swept away frees its key: the next hint with that key opens a fresh desk', () => {
    const { s } = run([leadJoins, hinted('k', 'planner'), hinted('k', 'planner', { type: 'status', status: 'done', ts: T0 + 20 })]);
    assert.deepEqual(sweep(s, T0 + 20 + LIFETIMES.helperAfterDone), ['lead-1/planner-k']);
    assert.equal(s.hints.size, 0);
    run([hinted('k', 'planner', { ts: T0 + 60_000 })], s);
    assert.equal(agent(s, 'lead-1/planner-k').status, 'working');
  });
});

describe('lifetimes: a pure sweep at now', () => {
  test('gone 6 s after leaving, not a millisecond before', () => {
    const { s } = run([{ type: 'join', agent: 'a', team: 'T', ts: T0 }, { type: 'leave', agent: 'a', ts: T0 + 100 }]);
    assert.deepEqual(sweep(s, T0 + 100 + LIFETIMES.afterLeave - 1), []);
    assert.ok(s.agents.has('a'));
    assert.equal(nextSweepAt(s), T0 + 100 + 6000);
    assert.deepEqual(sweep(s, T0 + 100 + 6000), ['a']);
    assert.equal(s.agents.has('a'), false);
    assert.equal(s.teams.has('T'), false, 'the empty room vanishes with its last agent');
  });

  test('helpers go 45 s after done; agents without a parent stay', () => {
    const { s } = run([
      leadJoins,
      helperJoins,
      { type: 'status', agent: 'rev-1', status: 'done', ts: T0 + 1000 },
      { type: 'status', agent: 'lead-1', status: 'done', ts: T0 + 1000 },
    ]);
    assert.deepEqual(dueForSweep(s, T0 + 1000 + 44_999), []);
    assert.deepEqual(sweep(s, T0 + 1000 + 45_000), ['rev-1']);
    assert.ok(s.agents.has('lead-1'), 'a lead that is done stays until silent');
    assert.ok(s.teams.has('Core'), 'a room with an agent left stays');
  });

  test('a helper that gets busy again after done is not swept at 45 s', () => {
    const { s } = run([leadJoins, helperJoins, { type: 'status', agent: 'rev-1', status: 'done', ts: T0 + 1000 }, { type: 'tool', agent: 'rev-1', tool: 'Read', ts: T0 + 2000 }]);
    assert.deepEqual(sweep(s, T0 + 1000 + 45_000), []);
  });

  test('anything silent for 2 hours is forgotten; any event keeps it', () => {
    const { s } = run([
      { type: 'join', agent: 'quiet', team: 'T', ts: T0 },
      { type: 'join', agent: 'chatty', team: 'T', ts: T0 },
      { type: 'status', agent: 'chatty', ts: T0 + 60_000 },
    ]);
    assert.deepEqual(sweep(s, T0 + LIFETIMES.silent - 1), []);
    assert.deepEqual(sweep(s, T0 + LIFETIMES.silent), ['quiet']);
    assert.deepEqual(sweep(s, T0 + 60_000 + LIFETIMES.silent), ['chatty']);
    assert.equal(s.teams.size, 0);
  });

  test('a sweep is pure: dueForSweep changes nothing, an early sweep changes nothing', () => {
    const { s } = run([{ type: 'leave', agent: 'a', ts: T0 }]);
    const rev = s.rev;
    assert.deepEqual(dueForSweep(s, T0 + 10_000), ['a']);
    assert.ok(s.agents.has('a'));
    assert.deepEqual(sweep(s, T0), []);
    assert.equal(s.rev, rev);
  });

  test('the internal sweep event removes what is due at its ts and plays a remove effect', () => {
    const { s } = run([{ type: 'leave', agent: 'a', ts: T0 }, { type: 'join', agent: 'b', ts: T0 }]);
    assert.deepEqual(applyEvent(s, { type: SWEEP, ts: T0 + 1 }), []);
    assert.deepEqual(applyEvent(s, { type: SWEEP, ts: T0 + 6000 }), [{ kind: 'remove', agents: ['a'] }]);
    assert.deepEqual([...s.agents.keys()], ['b']);
  });

  test('nextSweepAt is the earliest due time, null on an empty floor', () => {
    assert.equal(nextSweepAt(emptyFloor()), null);
    const { s } = run([leadJoins, helperJoins, { type: 'status', agent: 'rev-1', status: 'done', ts: T0 + 5 }]);
    assert.equal(nextSweepAt(s), T0 + 5 + LIFETIMES.helperAfterDone);
  });
});

describe('effects per event', () => {
  test('join with a parent: enter, then the parent briefs it', () => {
    const { fx } = run([leadJoins, helperJoins]);
    assert.deepEqual(fx[0], [{ kind: 'enter', agent: 'lead-1', team: 'Core' }]);
    assert.deepEqual(fx[1], [
      { kind: 'enter', agent: 'rev-1', team: 'Core' },
      { kind: 'brief', from: 'lead-1', to: 'rev-1' },
    ]);
  });

  test('joining again plays no second walk-in and no second briefing', () => {
    const { fx } = run([leadJoins, helperJoins, helperJoins]);
    assert.deepEqual(fx[2], []);
  });

  test('join with a parent that is not on the floor: no briefing', () => {
    const { fx } = run([{ type: 'join', agent: 'x', parent: 'missing', ts: T0 }]);
    assert.deepEqual(kinds(fx[0]), ['enter']);
  });

  test('status, tool, task, leave, remove and reset effects', () => {
    const { s, fx } = run([
      { type: 'status', agent: 'a', status: 'thinking', ts: T0 },
      { type: 'tool', agent: 'a', tool: 'Edit', ts: T0 },
      { type: 'task', agent: 'a', task: 'Fix bug', ts: T0 },
      { type: 'leave', agent: 'a', ts: T0 },
      { type: SWEEP, ts: T0 + 6000 },
      { type: 'join', agent: 'b', ts: T0 + 6000 },
      { type: 'reset' },
    ]);
    assert.deepEqual(fx.map(kinds), [
      ['enter', 'status'],
      ['status'],
      ['whiteboard'],
      ['exit'],
      ['remove'],
      ['enter'],
      ['reset'],
    ]);
    assert.equal(s.agents.size, 0);
  });

  test('every changing event bumps the floor revision and stamps the agent', () => {
    const { s } = run([{ type: 'join', agent: 'a', ts: T0 }, { type: 'status', agent: 'b', ts: T0 }]);
    assert.equal(s.rev, 2);
    assert.equal(agent(s, 'a').rev, 1);
    assert.equal(agent(s, 'b').rev, 2);
  });
});

describe('subagent hints on join', () => {
  test('a join with a hint opens the helper desk once, with one briefing', () => {
    const { s, fx } = run([leadJoins, { type: 'join', agent: 'lead-1', subagent: { key: 'k9', type: 'planner' }, ts: T0 + 1 }]);
    assert.deepEqual(fx[1], [
      { kind: 'enter', agent: 'lead-1/planner-k9', team: 'Core' },
      { kind: 'brief', from: 'lead-1', to: 'lead-1/planner-k9' },
    ]);
    assert.equal(s.agents.size, 2);
  });
});

describe('smaller decisions (docs/floor.md)', () => {
  test('an explicit empty "to" sends no plane, not even to the parent', () => {
    const { fx } = run([leadJoins, helperJoins, { type: 'message', agent: 'rev-1', to: [], text: 'note to self', ts: T0 + 2 }]);
    assert.deepEqual(kinds(fx[2]), ['speech']);
  });

  test('an empty task clears the whiteboard', () => {
    const { s, fx } = run([{ type: 'task', agent: 'a', team: 'T', task: 'Ship', ts: T0 }, { type: 'task', agent: 'a', task: '', ts: T0 + 1 }]);
    assert.equal(s.teams.get('T')?.task, '');
    assert.deepEqual(fx[1], [{ kind: 'whiteboard', team: 'T', task: '' }]);
  });

  test('a new helper desk whose id is taken gets a prime appended', () => {
    const { s } = run([
      leadJoins,
      { type: 'join', agent: 'lead-1/planner-k', team: 'Elsewhere', ts: T0 },
      { type: 'tool', agent: 'lead-1', subagent: { key: 'k', type: 'planner' }, tool: 'Read', ts: T0 + 1 },
    ]);
    assert.equal(agent(s, "lead-1/planner-k'").parent, 'lead-1');
    assert.equal(agent(s, 'lead-1/planner-k').parent, null);
  });

  test('a removed parent takes its hint bindings with it', () => {
    const { s } = run([leadJoins, { type: 'tool', agent: 'lead-1', subagent: { key: 'k', type: 'planner' }, ts: T0 }, { type: 'leave', agent: 'lead-1', ts: T0 }]);
    assert.equal(s.hints.size, 1);
    sweep(s, T0 + LIFETIMES.afterLeave);
    assert.equal(s.hints.size, 0);
    assert.ok(s.agents.has('lead-1/planner-k'), 'the helper itself stays until its own lifetime ends');
  });
});

describe('caps: the fold clamps what the edge let through', () => {
  test('every string is clamped to its cap in the state', () => {
    const big = (c: string) => c.repeat(70_000);
    const { s } = run([
      { type: 'task', agent: { id: big('i'), name: big('n'), role: big('r'), source: big('s') }, team: { id: big('t'), name: big('m') }, task: big('w'), activity: big('a'), ts: T0 },
      { type: 'tool', agent: big('i'), tool: big('o'), ts: T0 },
      { type: 'message', agent: big('i'), to: Array.from({ length: 60 }, (_, i) => `r${i}`), text: big('x'), ts: T0 },
    ]);
    const a = agent(s, 'i'.repeat(LIMITS.id));
    assert.deepEqual(
      [a.name.length, a.role.length, a.source.length, a.activity.length, a.tool.length, a.said.length, a.team.length],
      [LIMITS.name, LIMITS.role, LIMITS.source, LIMITS.activity, LIMITS.tool, LIMITS.text, LIMITS.id],
    );
    const t = s.teams.get(a.team)!;
    assert.deepEqual([t.name.length, t.task.length], [LIMITS.teamName, LIMITS.task]);
    assert.equal(s.agents.size, 1 + LIMITS.recipients, 'at most 50 recipients per message');
  });
});
