// Properties of the Work fold over generated event sequences: valid events of
// all fifteen types about a few colliding ids (some of them Object.prototype
// keys), with hostile ones mixed in. Laws: folding a prefix, shipping the
// state as JSON, then folding the rest equals folding all; a preview changes
// nothing and says what folding would; hostile events never throw; and the
// fold's invariants hold after every event. The fold has no catch-all, so a
// bug that throws fails these properties instead of folding to nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyWork, emptyWork, previewWork, workFromJSON, workToJSON, WORK_LIMITS, type WorkChange, type WorkState } from '../src/core/work.js';

const RUNS = Number(process.env.ROOST_FC_RUNS ?? 300);
const T0 = 1_700_000_000_000;

// ---------------------------------------------------------------- generators

const ann = { uid: 'ann', name: 'Ann' };
const bob = { uid: 'bob', name: 'Bob' };
const person = fc.constantFrom(ann, bob);
const space = fc.constantFrom('s1', '__proto__');
const session = fc.constantFrom('a', 'b', 'constructor');
const agent = fc.oneof(fc.tuple(space, session).map(([sp, se]) => `${sp}:${se}`), fc.constant('toString'));
const conversation = fc.constantFrom('general', 'c-1', 'constructor', 'agent:s1:a', 'hasOwnProperty');
const command = fc.constantFrom('k1', 'k2', 'k3', '__proto__', 'valueOf');
const text = fc.oneof(fc.constantFrom('fix it', 'done', 'a\nb'), fc.string({ minLength: 1, maxLength: 12 }));
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const approval = fc.record({ project: fc.constant('alpha'), thread: fc.constantFrom('default', 't2'), session: fc.constant('fix-login'), rid: fc.constantFrom('r1', 'r2'), tool: fc.constant('Bash'), digest: fc.constantFrom('$ ls', '') });

const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** One valid event of each of the fifteen types (the server stamps `by` and `at`; `at` is set in order below). */
const valid: fc.Arbitrary<Record<string, unknown>> = fc
  .oneof(
    fc.record({ type: fc.constant('conversation.created'), id: conversation, title: text, by: person }),
    fc.record({ type: fc.constant('message.posted'), conversation, text, by: person }),
    fc.record({ type: fc.constant('conversation.linked'), side: fc.constantFrom('private', 'project'), project: fc.constant('alpha'), target: conversation, title: text, request: opt(text), by: person }),
    fc.record({ type: fc.constant('space.contributed'), space, name: fc.constantFrom("Ann's laptop", 'Box'), owner: fc.constant(ann), by: person }),
    fc.record({ type: fc.constant('space.revoked'), space, by: person }),
    fc.record({ type: fc.constant('agent.observed'), space, session, label: opt(text), pane: opt(fc.constantFrom('w1:p1', 'w2:p3')), cwd: opt(fc.constant('/src')), origin: opt(fc.constantFrom('bridge', 'hook', 'manual')), mode: opt(fc.constantFrom('plan', 'acceptEdits')), state: opt(fc.constantFrom('idle', 'working', 'blocked')) }),
    fc.record({ type: fc.constant('agent.ended'), space, session, reason: opt(fc.constantFrom('pane closed', '')) }),
    fc.record({ type: fc.constant('agent.callable'), agent, callable: fc.boolean(), by: person }),
    fc.record({ type: fc.constant('command.queued'), id: command, agent, text, by: person }),
    fc.record({ type: fc.constant('command.cancelled'), command, by: person }),
    fc.record({ type: fc.constant('execution.started'), command }),
    fc.record({ type: fc.constant('execution.blocked'), command, reason: opt(text), approval: opt(approval) }),
    fc.record({ type: fc.constant('execution.resumed'), command, rid: opt(fc.constantFrom('r1', 'r2')) }),
    fc.record({ type: fc.constant('execution.output'), command, text }),
    fc.record({ type: fc.constant('execution.finished'), command, status: fc.constantFrom('done', 'failed'), result: opt(text) }),
  )
  .map((e) => defined(e as Record<string, unknown>));

/** Anything at all where an event is expected, and right types with wrong values. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ withNullPrototype: true, withBoxedValues: true, maxDepth: 3 }),
  fc.record(
    {
      type: fc.oneof(fc.constantFrom('message.posted', 'command.queued', 'agent.observed', 'execution.blocked', 'space.revoked', 'toString', '__proto__'), fc.anything({ maxDepth: 1 })),
      id: fc.oneof(command, fc.anything({ maxDepth: 1 }), fc.constant('x'.repeat(200)), fc.constant('bad id!')),
      conversation: fc.oneof(conversation, fc.anything({ maxDepth: 1 })),
      agent: fc.oneof(agent, fc.anything({ maxDepth: 1 })),
      space: fc.oneof(space, fc.anything({ maxDepth: 1 })),
      session: fc.oneof(session, fc.anything({ maxDepth: 1 })),
      command: fc.oneof(command, fc.anything({ maxDepth: 1 })),
      text: fc.oneof(text, fc.anything({ maxDepth: 1 }), fc.constant('x'.repeat(WORK_LIMITS.text + 1))),
      by: fc.oneof(person, fc.anything({ maxDepth: 2 }), fc.constant({ uid: 'x'.repeat(500), name: 'X' })),
      owner: fc.anything({ maxDepth: 2 }),
      approval: fc.oneof(approval, fc.anything({ maxDepth: 2 })),
      at: fc.oneof(fc.double(), fc.anything({ maxDepth: 1 })),
      callable: fc.anything({ maxDepth: 1 }),
      side: fc.anything({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom(
    '{"type":"conversation.created","id":"__proto__","title":"x","by":{"uid":"ann","name":"Ann","__proto__":{"polluted":1}}}',
    '{"__proto__":{"type":"message.posted"},"type":"message.posted","conversation":"constructor","text":"x","by":{"uid":"a","name":"A"}}',
    '{"type":"agent.observed","space":"__proto__","session":"__proto__","label":"x"}',
  ).map((t) => JSON.parse(t)),
);

/** Stamps increasing `at` onto events (hostile ones keep whatever they carry). */
function timeline(events: unknown[]): unknown[] {
  return events.map((e, i) => (e && typeof e === 'object' && !Array.isArray(e) && !('at' in e) ? { ...e, at: T0 + i * 1000 } : e));
}

/**
 * A story: events chosen against the state folded so far, so sequences reach
 * deep states (commands queued, started, blocked on an approval, finished,
 * cancelled, revoked) instead of stopping at "no such agent". Each step is a
 * pair of numbers (what to do, which one), so fast-check shrinks a failing
 * story to a shorter one that still makes sense.
 */
const story: fc.Arbitrary<Record<string, unknown>[]> = fc.array(fc.tuple(fc.nat(13), fc.nat(1_000_000)), { maxLength: 60, size: 'max' }).map((steps) => {
  const s = emptyWork();
  const out: Record<string, unknown>[] = [];
  const pick = <T>(xs: T[], r: number): T | undefined => (xs.length ? xs[r % xs.length] : undefined);
  const spaces = ['s1', '__proto__'];
  const sessions = ['a', 'b', 'constructor'];
  let n = 0;
  // Most stories start where work can happen: a contributed Space with a bridge agent on it.
  if (steps.length && steps[0][1] % 5 !== 0)
    steps = [[0, 0], [1, 0], [0, 1], [2, 5], ...steps] as [number, number][];
  for (const [what, r] of steps) {
    const agents = [...s.agents.values()];
    const live = agents.filter((a) => a.state !== 'ended');
    const running = [...s.executions.values()].filter((x) => x.state === 'running' || x.state === 'blocked');
    const queued = [...s.commands.values()].filter((c) => c.status === 'queued');
    const by = r % 4 === 0 ? bob : ann;
    let e: Record<string, unknown>;
    switch (what) {
      case 0:
        e = { type: 'space.contributed', space: pick(spaces, r), name: 'Box', owner: ann, by };
        break;
      case 1:
      case 2:
        e = { type: 'agent.observed', space: pick(spaces, r), session: pick(sessions, r >> 2), origin: pick(['bridge', 'hook'], r >> 4), label: r % 5 ? undefined : `label ${r % 3}`, pane: r % 3 ? undefined : `w${r % 2}:p1` };
        break;
      case 3:
      case 4:
        e = { type: 'command.queued', id: `k${n++}`, agent: pick(live, r)?.id ?? 'toString', text: `job ${r % 10}`, by };
        break;
      case 5:
      case 6: {
        const heads = live.filter((a) => !a.running && a.queue.length).map((a) => a.queue[0]);
        e = { type: 'execution.started', command: pick(heads, r) ?? pick(queued, r)?.id ?? 'k0' };
        break;
      }
      case 7:
        e = { type: 'execution.blocked', command: pick(running, r)?.command ?? 'k0', reason: 'needs approval', approval: r % 2 ? { project: 'alpha', thread: 'default', session: 'fix', rid: `r${r % 3}`, tool: 'Bash', digest: '$ ls' } : undefined };
        break;
      case 8:
        e = { type: 'execution.resumed', command: pick(running, r)?.command ?? 'k0', rid: r % 3 ? `r${r % 3}` : undefined };
        break;
      case 9:
        e = { type: 'execution.output', command: pick(running, r)?.command ?? 'k0', text: `step ${r % 7}` };
        break;
      case 10:
        e = { type: 'execution.finished', command: pick(running, r)?.command ?? 'k0', status: r % 3 ? 'done' : 'failed', result: `result ${r % 5}` };
        break;
      case 11:
        e = r % 2 ? { type: 'command.cancelled', command: pick(queued, r)?.id ?? 'k0', by } : { type: 'agent.callable', agent: pick(agents, r)?.id ?? 'toString', callable: r % 4 < 2, by: ann };
        break;
      case 12:
        e = r % 3 ? { type: 'agent.ended', space: pick(spaces, r), session: pick(sessions, r >> 2), reason: 'pane closed' } : { type: 'space.revoked', space: pick(spaces, r), by: ann };
        break;
      default:
        e = r % 2 ? { type: 'message.posted', conversation: pick(['general', ...s.conversations.keys()], r), text: `hi ${r % 9}`, by } : { type: 'conversation.created', id: pick(['c-1', 'constructor', 'hasOwnProperty'], r), title: 'room', by };
    }
    e = { ...defined(e), at: T0 + out.length * 1000 };
    applyWork(s, e, out.length + 1);
    out.push(e);
  }
  return out;
});

const sequence = fc
  .oneof(
    { weight: 2, arbitrary: fc.array(fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: hostile }), { maxLength: 80, size: 'max' }) },
    { weight: 3, arbitrary: fc.tuple(story, fc.array(fc.tuple(fc.nat(), hostile), { maxLength: 8 })).map(([events, extra]) => {
      // Hostile events slipped in anywhere.
      const out: unknown[] = [...events];
      for (const [at, h] of extra) out.splice(out.length ? at % (out.length + 1) : 0, 0, h);
      return out;
    }) },
  )
  .map(timeline);

// ---------------------------------------------------------------- checks

function fold(events: unknown[], s: WorkState = emptyWork(), first = s.rev + 1): { s: WorkState; changes: WorkChange[][] } {
  const changes = events.map((e, i) => applyWork(s, e, first + i));
  return { s, changes };
}

const wire = (s: WorkState) => JSON.stringify(workToJSON(s));

/** The Work fold's invariants (src/core/work.ts, docs/work.md). */
function checkInvariants(s: WorkState): void {
  let indexed = 0;
  for (const [sp, ids] of s.agentsBySpace) {
    for (const id of ids) assert.equal(s.agents.get(id)?.space, sp, 'the Space index names agents of that Space');
    indexed += ids.size;
  }
  assert.equal(indexed, s.agents.size, 'every agent is indexed once');
  const busy = new Map<string, string>();
  for (const x of s.executions.values()) {
    assert.equal(x.id, `x-${x.command}`);
    assert.equal(x.result === null, x.state === 'running' || x.state === 'blocked', 'an execution has a result exactly when it ended');
    if (x.result !== null) assert.equal(s.results.get(x.result)?.execution, x.id, 'its result links back');
    if (x.approval !== null) assert.equal(x.state, 'blocked', 'only a blocked execution points at an approval');
    if (x.state === 'running' || x.state === 'blocked') {
      assert.ok(!busy.has(x.agent), 'one running execution per agent');
      busy.set(x.agent, x.id);
    }
  }
  for (const [id, a] of s.agents) {
    assert.equal(a.id, id);
    assert.equal(id, `${a.space}:${a.session}`, 'an agent is keyed by (space, session)');
    const chat = s.conversations.get(a.conversation);
    assert.ok(chat && chat.kind === 'agent' && chat.agent === id, 'each agent has its chat');
    assert.ok(a.queue.length <= WORK_LIMITS.queue);
    assert.equal(new Set(a.queue).size, a.queue.length);
    let last = -Infinity;
    for (const k of a.queue) {
      const c = s.commands.get(k);
      assert.ok(c && c.status === 'queued' && c.agent === id, 'the queue holds its own queued commands');
      assert.ok(c.position > last, 'in log order');
      last = c.position;
    }
    assert.equal(a.running, busy.get(id) ?? null, 'the agent names the execution it runs');
    if (a.state === 'ended') assert.deepEqual([a.queue.length, a.running], [0, null], 'an ended agent waits for nothing');
  }
  for (const c of s.commands.values()) {
    if (c.status === 'queued') assert.ok(s.agents.get(c.agent)?.queue.includes(c.id), 'a queued command is in its agent’s queue');
    if (c.status === 'running') assert.equal(s.agents.get(c.agent)?.running, `x-${c.id}`);
  }
  for (const conv of s.conversations.values()) conv.messages.forEach((m, i) => assert.equal(m.seq, i + 1, 'messages are numbered in order'));
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
}

// ---------------------------------------------------------------- properties

test('folding a prefix, shipping the state as JSON, then folding the rest equals folding all (and plays the same changes)', () => {
  fc.assert(
    fc.property(sequence, fc.nat(), (events, cut) => {
      const k = events.length ? cut % (events.length + 1) : 0;
      const whole = fold(events);
      const head = fold(events.slice(0, k));
      const shipped = workFromJSON(JSON.parse(JSON.stringify(workToJSON(head.s))));
      const rest = fold(events.slice(k), shipped, k + 1);
      assert.equal(wire(rest.s), wire(whole.s));
      assert.deepEqual(rest.s, whole.s, 'the index too');
      assert.deepEqual(rest.changes, whole.changes.slice(k));
    }),
    { numRuns: RUNS },
  );
});

test('valid and hostile events never throw and keep the invariants after every event', () => {
  let changed = 0;
  let finished = 0;
  let blocked = 0;
  fc.assert(
    fc.property(sequence, (events) => {
      const s = emptyWork();
      events.forEach((e, i) => {
        if (applyWork(s, e, i + 1).length) changed++;
        checkInvariants(s);
      });
      if (s.results.size) finished++;
      if ([...s.executions.values()].some((x) => x.approval !== null)) blocked++;
    }),
    { numRuns: RUNS },
  );
  // The generators reach deep states, so the properties are not vacuous.
  assert.ok(changed > RUNS * 5, `events that change the state (${changed})`);
  assert.ok(finished > RUNS / 10, `runs that finish a command (${finished})`);
  assert.ok(blocked > 0, `runs that block on an approval (${blocked})`);
});

test('a preview says what folding would touch and leaves the state (and its index) exactly as it was', () => {
  fc.assert(
    fc.property(sequence, fc.nat(), (events, cut) => {
      const k = events.length ? cut % (events.length + 1) : 0;
      const { s } = fold(events.slice(0, k));
      const before = wire(s);
      const index = JSON.stringify([...s.agentsBySpace].map(([sp, ids]) => [sp, [...ids]]));
      const preview = previewWork(s, events.slice(k), k + 1);
      assert.equal(wire(s), before);
      assert.equal(JSON.stringify([...s.agentsBySpace].map(([sp, ids]) => [sp, [...ids]])), index);
      assert.deepEqual(preview, fold(events.slice(k), s, k + 1).changes);
    }),
    { numRuns: RUNS },
  );
});

test('ids that are Object.prototype keys fold as ordinary ids whatever the sequence', () => {
  fc.assert(
    fc.property(sequence, (events) => {
      const { s } = fold(events);
      for (const table of [s.spaces, s.conversations, s.agents, s.commands, s.executions, s.results]) {
        for (const [id, v] of table) assert.equal((v as { id: string }).id, id);
        assert.equal(table.get('isPrototypeOf'), undefined);
      }
      assert.equal(typeof ({} as Record<string, unknown>).constructor, 'function');
    }),
    { numRuns: Math.max(50, RUNS / 3) },
  );
});
