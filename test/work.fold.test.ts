// The Work fold's rules, as plain data in and state out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyWork, dueCommands, emptyWork, foldWork, mayCommand, previewWork, workFromJSON, workToJSON, type WorkState } from '../src/core/work.js';

const ann = { uid: 'ann', name: 'Ann' };
const bob = { uid: 'bob', name: 'Bob' };

/** Folds events at the next positions into a copy of `from` (the fold works in place). */
function run(events: Record<string, unknown>[], from: WorkState = emptyWork()): WorkState {
  const s = workFromJSON(workToJSON(from));
  for (const e of events) applyWork(s, e, s.rev + 1);
  return s;
}

/** What one more event would touch, leaving `s` as it is. */
function touches(s: WorkState, e: Record<string, unknown>) {
  return previewWork(s, [e])[0];
}

const base = [
  { type: 'space.contributed', space: 's1', name: "Ann's laptop", owner: ann, by: ann, at: 1 },
  { type: 'agent.observed', space: 's1', session: 'sess-a', label: 'fix-tests', pane: 'w1:p1', origin: 'bridge', at: 2 },
];

test('an agent is keyed by (space, session): moving, relabelling, ending and reviving update one chat', () => {
  let s = run(base);
  assert.deepEqual([...s.agents.keys()], ['s1:sess-a']);
  const chat = s.agents.get('s1:sess-a')!.conversation;
  s = run([{ type: 'agent.observed', space: 's1', session: 'sess-a', label: 'fix-tests', pane: 'w2:p3', at: 3 }], s);
  s = run([{ type: 'agent.observed', space: 's1', session: 'sess-a', label: 'fix-all-tests', at: 4 }], s);
  s = run([{ type: 'agent.ended', space: 's1', session: 'sess-a', reason: 'pane closed', at: 5 }], s);
  assert.equal(s.agents.get('s1:sess-a')!.state, 'ended');
  s = run([{ type: 'agent.observed', space: 's1', session: 'sess-a', at: 6 }], s);
  assert.deepEqual([...s.agents.keys()], ['s1:sess-a'], 'still one agent');
  assert.deepEqual([...s.conversations.keys()], [chat], 'still one chat');
  const texts = s.conversations.get(chat)!.messages.map((m) => m.text);
  assert.ok(texts.some((t) => t.includes('moved from w1:p1 to w2:p3')));
  assert.ok(texts.includes('ended: pane closed'));
  assert.equal(s.conversations.get(chat)!.title, 'fix-all-tests');
  assert.equal(s.agents.get('s1:sess-a')!.state, 'idle');
  // The same pane label on another session is another agent.
  s = run([{ type: 'agent.observed', space: 's1', session: 'sess-b', label: 'fix-all-tests', pane: 'w2:p3', at: 7 }], s);
  assert.equal([...s.agents.keys()].length, 2);
});

test('one command at a time, FIFO in log order; results link to command and chat', () => {
  let s = run(base);
  s = run(
    [1, 2, 3].map((n) => ({ type: 'command.queued', id: `k${n}`, agent: 's1:sess-a', text: `job ${n}`, by: n === 2 ? bob : ann, at: 10 + n })),
    s,
  );
  assert.deepEqual(s.agents.get('s1:sess-a')!.queue, ['k1', 'k2', 'k3']);
  assert.deepEqual(dueCommands(s, 's1').map((c) => c.id), ['k1']);
  // Out of order start folds to nothing.
  assert.equal(touches(s, { type: 'execution.started', command: 'k2', at: 20 }).length, 0);
  s = run([{ type: 'execution.started', command: 'k1', at: 20 }], s);
  assert.equal(s.agents.get('s1:sess-a')!.state, 'working');
  assert.deepEqual(dueCommands(s, 's1'), [], 'busy agent: nothing due');
  assert.equal(touches(s, { type: 'execution.started', command: 'k2', at: 21 }).length, 0, 'one at a time');
  s = run([{ type: 'execution.blocked', command: 'k1', reason: 'Bash: rm -rf build', at: 21 }], s);
  assert.equal(s.agents.get('s1:sess-a')!.state, 'blocked');
  s = run([{ type: 'execution.resumed', command: 'k1', at: 22 }, { type: 'execution.output', command: 'k1', text: 'working on it', at: 23 }, { type: 'execution.finished', command: 'k1', status: 'done', result: 'all green', at: 24 }], s);
  const r = s.results.get('r-k1')!;
  assert.equal(r.text, 'all green');
  assert.equal(r.command, 'k1');
  assert.equal(r.conversation, s.agents.get('s1:sess-a')!.conversation);
  assert.equal(s.executions.get('x-k1')!.result, 'r-k1');
  assert.equal(s.commands.get('k1')!.status, 'done');
  assert.deepEqual(dueCommands(s, 's1').map((c) => c.id), ['k2']);
  const kinds = s.conversations.get(r.conversation)!.messages.map((m) => m.kind);
  assert.deepEqual(kinds.slice(-6), ['prompt', 'prompt', 'prompt', 'system', 'agent', 'result']);
});

test('a resume that names another approval than the one pointed at leaves the block and the pointer alone (two pending at once)', () => {
  let s = run(base);
  s = run([{ type: 'command.queued', id: 'k1', agent: 's1:sess-a', text: 'push it', by: bob, at: 10 }, { type: 'execution.started', command: 'k1', at: 11 }], s);
  const one = { project: 'alpha', thread: 'default', session: 'fix-login', rid: 'toolu_1', tool: 'Bash', digest: '$ git push' };
  const two = { ...one, rid: 'toolu_2', digest: '$ rm -rf x' };
  s = run([{ type: 'execution.blocked', command: 'k1', reason: 'needs approval: Bash $ git push', approval: one, at: 12 }, { type: 'execution.blocked', command: 'k1', reason: 'needs approval: Bash $ rm -rf x', approval: two, at: 13 }], s);
  assert.equal(s.executions.get('x-k1')!.approval?.rid, 'toolu_2');
  // The first one is decided: the second still waits, and Work still points at it.
  assert.equal(touches(s, { type: 'execution.resumed', command: 'k1', rid: 'toolu_1', at: 14 }).length, 0);
  s = run([{ type: 'execution.resumed', command: 'k1', rid: 'toolu_1', at: 14 }], s);
  assert.equal(s.executions.get('x-k1')!.state, 'blocked');
  assert.deepEqual(s.executions.get('x-k1')!.approval, two);
  assert.equal(s.agents.get('s1:sess-a')!.state, 'blocked');
  // Its own resume clears it.
  s = run([{ type: 'execution.resumed', command: 'k1', rid: 'toolu_2', at: 15 }], s);
  assert.equal(s.executions.get('x-k1')!.state, 'running');
  assert.equal(s.executions.get('x-k1')!.approval, null);
  assert.equal(s.agents.get('s1:sess-a')!.state, 'working');
});

test('a blocked execution points at its board approval until it resumes; an old blocked event (no pointer) still folds', () => {
  let s = run(base);
  s = run([{ type: 'command.queued', id: 'k1', agent: 's1:sess-a', text: 'push it', by: bob, at: 10 }, { type: 'execution.started', command: 'k1', at: 11 }], s);
  assert.equal(s.executions.get('x-k1')!.approval, null);
  const approval = { project: 'alpha', thread: 'default', session: 'fix-login', rid: 'toolu_1', tool: 'Bash', digest: '$ git push' };
  const changes = applyWork(s, { type: 'execution.blocked', command: 'k1', reason: 'needs approval: Bash $ git push', approval, at: 12 }, s.rev + 1);
  assert.deepEqual(changes.map((c) => c.family).sort(), ['agent', 'conversation', 'execution'], 'frames name aggregates only; the pointer rides the execution');
  assert.deepEqual(s.executions.get('x-k1')!.approval, approval);
  assert.equal(s.agents.get('s1:sess-a')!.state, 'blocked');
  // The same report again (a retried post) changes nothing; another request while blocked does.
  assert.equal(touches(s, { type: 'execution.blocked', command: 'k1', reason: 'needs approval: Bash $ git push', approval, at: 13 }).length, 0);
  s = run([{ type: 'execution.resumed', command: 'k1', at: 14 }], s);
  assert.equal(s.executions.get('x-k1')!.approval, null, 'decided (either way): nothing to decide any more');
  assert.equal(s.executions.get('x-k1')!.state, 'running');
  s = run([{ type: 'execution.blocked', command: 'k1', reason: 'needs approval: Bash $ rm -rf x', approval: { ...approval, rid: 'toolu_2' }, at: 15 }], s);
  assert.equal(s.executions.get('x-k1')!.approval?.rid, 'toolu_2');
  s = run([{ type: 'execution.finished', command: 'k1', status: 'failed', result: 'stopped', at: 16 }], s);
  assert.equal(s.executions.get('x-k1')!.approval, null, 'a finished execution waits for nothing');
  // An event stored before the pointer existed, and a malformed pointer: blocked, nothing to decide from Work.
  let old = run([{ type: 'command.queued', id: 'k2', agent: 's1:sess-a', text: 'b', by: bob, at: 20 }, { type: 'execution.started', command: 'k2', at: 21 }], s);
  old = run([{ type: 'execution.blocked', command: 'k2', reason: 'needs approval: Bash $ ls', at: 22 }], old);
  assert.equal(old.executions.get('x-k2')!.state, 'blocked');
  assert.equal(old.executions.get('x-k2')!.approval, null);
  for (const bad of [{ ...approval, thread: 'no/slash' }, { ...approval, rid: 'x'.repeat(65) }, { ...approval, tool: '' }, { ...approval, project: undefined }, { ...approval, digest: 'd'.repeat(201) }, 'toolu_1', [approval]]) {
    const b = run([{ type: 'execution.resumed', command: 'k2', at: 23 }, { type: 'execution.blocked', command: 'k2', reason: 'again', approval: bad, at: 24 }], old);
    assert.equal(b.executions.get('x-k2')!.state, 'blocked', JSON.stringify(bad).slice(0, 60));
    assert.equal(b.executions.get('x-k2')!.approval, null, JSON.stringify(bad).slice(0, 60));
  }
});

test('revoking a Space cancels queued commands, keeps chats and results, and refuses new commands', () => {
  let s = run([...base.slice(1)], run(base.slice(0, 1)));
  s = run([{ type: 'command.queued', id: 'k1', agent: 's1:sess-a', text: 'a', by: ann, at: 1 }, { type: 'execution.started', command: 'k1', at: 2 }, { type: 'command.queued', id: 'k2', agent: 's1:sess-a', text: 'b', by: ann, at: 3 }], s);
  s = run([{ type: 'space.revoked', space: 's1', by: ann, at: 4 }], s);
  assert.equal(s.commands.get('k2')!.status, 'cancelled');
  assert.equal(mayCommand(s, 's1:sess-a', 'ann'), 'its Space is not contributed to this project (revoked)');
  assert.equal(touches(s, { type: 'command.queued', id: 'k3', agent: 's1:sess-a', text: 'c', by: ann, at: 5 }).length, 0);
  s = run([{ type: 'execution.finished', command: 'k1', result: 'kept', at: 6 }], s);
  assert.equal(s.results.get('r-k1')!.text, 'kept', 'a running execution still reports its result');
  assert.ok(s.conversations.get('agent:s1:sess-a')!, 'the chat stays');
  assert.deepEqual(dueCommands(s, 's1'), []);
});

test('hand-started agents are trusted local: read-only to teammates unless the Space owner makes them callable', () => {
  let s = run([base[0], { type: 'agent.observed', space: 's1', session: 'h1', origin: 'hook', at: 2 }]);
  const a = s.agents.get('s1:h1')!;
  assert.equal(a.trustedLocal, true);
  assert.match(mayCommand(s, a.id, 'bob') ?? '', /trusted local/);
  assert.equal(mayCommand(s, a.id, 'ann'), null, 'the Space owner may');
  assert.equal(touches(s, { type: 'command.queued', id: 'k1', agent: a.id, text: 'x', by: bob, at: 3 }).length, 0);
  s = run([{ type: 'agent.callable', agent: a.id, callable: true, by: ann, at: 4 }], s);
  assert.equal(mayCommand(s, a.id, 'bob'), null);
});

test('General Chat: a link holds only the request; the private side gets only the link', () => {
  const priv = run([
    { type: 'message.posted', conversation: 'general', text: 'my salary is secret', by: ann, at: 1 },
    { type: 'message.posted', conversation: 'general', text: 'please fix the login bug', by: ann, at: 2 },
    { type: 'conversation.linked', side: 'private', project: 'alpha', target: 'c-1', title: 'login bug', by: ann, at: 3 },
  ]);
  const proj = run([{ type: 'conversation.linked', side: 'project', project: 'alpha', target: 'c-1', title: 'login bug', request: 'please fix the login bug', by: ann, at: 3 }]);
  assert.deepEqual(priv.conversations.get('general')!.links, [{ project: 'alpha', conversation: 'c-1', title: 'login bug', at: 3 }]);
  assert.equal(priv.conversations.get('general')!.messages.length, 2);
  assert.deepEqual(proj.conversations.get('c-1')!.messages.map((m) => m.text), ['please fix the login bug']);
  assert.ok(!JSON.stringify(proj).includes('salary'));
});

test('messages get server sequence numbers in log order', () => {
  const s = run([
    { type: 'conversation.created', id: 'c-1', title: 'room', by: ann, at: 1 },
    { type: 'message.posted', conversation: 'c-1', text: 'one', by: ann, at: 5 },
    { type: 'message.posted', conversation: 'c-1', text: 'two', by: bob, at: 2 },
  ]);
  assert.deepEqual(s.conversations.get('c-1')!.messages.map((m) => [m.seq, m.text]), [[1, 'one'], [2, 'two']]);
});

test('hostile events never throw and fold to nothing; a stale position is ignored', () => {
  const s = run(base);
  fc.assert(
    fc.property(fc.anything(), fc.integer({ min: -5, max: 100 }), (ev, pos) => {
      const before = JSON.stringify(workToJSON(s));
      const changes = touches(s, ev as Record<string, unknown>);
      assert.equal(JSON.stringify(workToJSON(s)), before, 'a preview leaves the state as it was');
      if (pos <= s.rev) assert.deepEqual(previewWork(s, [ev], pos), [[]]);
      assert.ok(Array.isArray(changes));
    }),
    { numRuns: 500 },
  );
  for (const ev of [
    { type: 'agent.observed', space: 'nope', session: 'x' },
    { type: 'command.queued', id: 'k', agent: 's1:sess-a', text: 'x'.repeat(30_000), by: ann },
    { type: 'command.queued', id: 'bad id!', agent: 's1:sess-a', text: 'x', by: ann },
    { type: 'message.posted', conversation: 'agent:s1:sess-a', text: 'x', by: ann },
    { type: 'space.contributed', space: 's1', name: 'x', owner: ann, by: ann },
    { type: 'execution.finished', command: 'nope' },
  ])
    assert.equal(touches(s, ev).length, 0, JSON.stringify(ev).slice(0, 80));
});

test('replaying any prefix then the rest gives the same state', () => {
  const events = [
    ...base,
    { type: 'command.queued', id: 'k1', agent: 's1:sess-a', text: 'a', by: ann, at: 3 },
    { type: 'command.queued', id: 'k2', agent: 's1:sess-a', text: 'b', by: bob, at: 4 },
    { type: 'execution.started', command: 'k1', at: 5 },
    { type: 'execution.blocked', command: 'k1', reason: 'needs approval', approval: { project: 'alpha', thread: 't', session: 's', rid: 'r1', tool: 'Bash', digest: '$ ls' }, at: 5 },
    { type: 'execution.resumed', command: 'k1', at: 5 },
    { type: 'execution.finished', command: 'k1', result: 'ok', at: 6 },
    { type: 'agent.ended', space: 's1', session: 'sess-a', at: 7 },
  ].map((event, i) => ({ position: i + 1, event }));
  const all = foldWork(emptyWork(), events);
  for (let k = 0; k <= events.length; k++) {
    const shipped = workFromJSON(JSON.parse(JSON.stringify(workToJSON(foldWork(emptyWork(), events.slice(0, k))))));
    assert.deepEqual(foldWork(shipped, events.slice(k)), all);
  }
  assert.equal(all.commands.get('k2')!.status, 'cancelled', 'an ended agent cancels what waits for it');
});

test('ids that are Object.prototype keys are ids like any other: they fold, and nothing reaches Object.prototype', () => {
  const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
  const events: Record<string, unknown>[] = [{ type: 'space.contributed', space: '__proto__', name: 'Proto laptop', owner: ann, by: ann, at: 1 }];
  for (const n of names) {
    events.push({ type: 'conversation.created', id: n, title: `room ${n}`, by: ann, at: 2 });
    events.push({ type: 'message.posted', conversation: n, text: `hello ${n}`, by: bob, at: 3 });
    events.push({ type: 'agent.observed', space: '__proto__', session: n, label: n, at: 4 });
    events.push({ type: 'command.queued', id: n, agent: `__proto__:${n}`, text: `run ${n}`, by: ann, at: 5 });
  }
  events.push({ type: 'execution.started', command: 'constructor', at: 6 }, { type: 'execution.finished', command: 'constructor', result: 'ok', at: 7 });
  // An event that names one that does not exist folds to nothing.
  const s = run(events);
  for (const n of names) {
    assert.equal(s.conversations.get(n)!.title, `room ${n}`);
    assert.deepEqual(s.conversations.get(n)!.messages.map((m) => m.text), [`hello ${n}`]);
    assert.equal(s.agents.get(`__proto__:${n}`)!.label, n);
    assert.ok(s.commands.has(n));
  }
  assert.equal(s.results.get('r-constructor')!.text, 'ok');
  assert.equal(touches(s, { type: 'message.posted', conversation: 'isPrototypeOf', text: 'x', by: ann }).length, 0);
  assert.equal(mayCommand(s, 'toString', 'ann'), 'no such agent');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(typeof ({} as Record<string, unknown>).constructor, 'function', 'Object.prototype untouched');
  // And it ships as JSON and back unchanged.
  assert.deepEqual(workToJSON(workFromJSON(JSON.parse(JSON.stringify(workToJSON(s))))), workToJSON(s));
});

test('the fold is linear: 100,000 messages in one conversation are appended to the one list, never copied', () => {
  const s = run([{ type: 'conversation.created', id: 'c-1', title: 'room', by: ann, at: 1 }]);
  const list = s.conversations.get('c-1')!.messages;
  for (let i = 0; i < 100_000; i++) applyWork(s, { type: 'message.posted', conversation: 'c-1', text: `message ${i}`, by: ann, at: i }, s.rev + 1);
  // 16,000 took 5.8 s when every message copied the list. The rate, and the last tenth's
  // time over the first (1 = linear), are measured by `npm run bench -- work-fold`.
  assert.equal(s.conversations.get('c-1')!.messages, list, 'the same list, appended in place');
  assert.equal(list.length, 100_000);
  assert.equal(list[99_999].seq, 100_000);
});

test('an agent has at most 1,000 commands waiting; more fold to nothing and the server is told why', () => {
  let s = run(base);
  s = run(Array.from({ length: 1000 }, (_, i) => ({ type: 'command.queued', id: `k${i}`, agent: 's1:sess-a', text: 'x', by: ann, at: 10 + i })), s);
  assert.equal(s.agents.get('s1:sess-a')!.queue.length, 1000);
  assert.equal(touches(s, { type: 'command.queued', id: 'k-more', agent: 's1:sess-a', text: 'x', by: ann, at: 2000 }).length, 0);
  assert.match(mayCommand(s, 's1:sess-a', 'ann') ?? '', /already has 1000 commands waiting/);
});

test('previewWork says what a sequence would touch, in order, and leaves the state exactly as it was', () => {
  const s = run(base);
  const before = JSON.stringify(workToJSON(s));
  const seq = [
    { type: 'command.queued', id: 'k1', agent: 's1:sess-a', text: 'a', by: ann, at: 3 },
    { type: 'command.queued', id: 'k1', agent: 's1:sess-a', text: 'again', by: ann, at: 4 },
    { type: 'execution.started', command: 'k1', at: 5 },
    { type: 'agent.observed', space: 's1', session: 'sess-new', at: 6 },
    { type: 'message.posted', conversation: 'general', text: 'hi', by: ann, at: 7 },
  ];
  const preview = previewWork(s, seq);
  assert.equal(JSON.stringify(workToJSON(s)), before);
  assert.deepEqual(dueCommands(s, 's1'), []);
  const applied = run([], s);
  const real = seq.map((e) => applyWork(applied, e, applied.rev + 1));
  assert.deepEqual(preview, real);
  assert.deepEqual(preview[1], [], 'the second queue of one id is a no-op within the preview too');
  assert.equal(s.agentsBySpace.get('s1')!.size, 1, 'the index is restored too');
});

test('a bug in the fold shows: nothing catches what the fold throws', () => {
  const s = run(base);
  // Not an input the server could store (JSON has no getters): it stands for a fold step that throws.
  const event = { type: 'message.posted', conversation: 'general', by: ann, get text(): string { throw new Error('a bug in a fold step'); } };
  assert.throws(() => applyWork(s, event, s.rev + 1), /a bug in a fold step/);
});

test('member.changed: the project says who may do what at each position; a removal deletes, a no-op touches nothing, a preview leaves no trace', () => {
  const s = run([
    { type: 'member.changed', uid: 'ann', name: 'Ann', role: 'owner', by: { uid: 'roost', name: 'Roost' }, at: 1 },
    { type: 'member.changed', uid: 'bob', name: 'Bob', role: 'editor', by: ann, at: 2 },
  ]);
  assert.deepEqual([...s.members.values()].map((m) => [m.uid, m.role, m.by.name, m.rev]), [['ann', 'owner', 'Roost', 1], ['bob', 'editor', 'Ann', 2]]);
  assert.deepEqual(touches(s, { type: 'member.changed', uid: 'bob', name: 'Bob', role: 'editor', by: ann, at: 3 }), [], 'the same role again');
  assert.deepEqual(touches(s, { type: 'member.changed', uid: 'bob', name: 'Bob', role: null, by: ann, at: 3 }), [{ family: 'project', id: 'member:bob' }]);
  assert.equal(s.members.get('bob')!.role, 'editor', 'previewing changed nothing');
  for (const bad of [{ uid: 'bob', name: 'Bob', role: 'admin', by: ann }, { uid: 'bob', name: 'Bob', role: 'viewer' }, { uid: 'bad id!', name: 'x', role: 'viewer', by: ann }, { uid: 'bob', role: 'viewer', by: ann }])
    assert.deepEqual(touches(s, { type: 'member.changed', ...bad, at: 3 }), [], JSON.stringify(bad));
  const gone = run([{ type: 'member.changed', uid: 'bob', name: 'Bob', role: null, by: ann, at: 3 }], s);
  assert.deepEqual([...gone.members.keys()], ['ann']);
  assert.deepEqual(workToJSON(workFromJSON(workToJSON(gone))), workToJSON(gone), 'members ship with the state');
});
