// Properties of the flock fold over generated logs (fast-check).
//
// The generator is a driver: at each step it looks at the state folded so far
// and picks one of the events a correct service could append next (start a
// list, fly the Sentry, triage, judge, fly crows, land them, answer, skip,
// finish, banter, strikes, budgets, nests, messages, asks and replies, flags,
// watch scores, Jev tags, spun crows, owner demotions, the lease), with ids
// drawn from a small pool that includes `__proto__` and `constructor`. So
// the sequences reach every phase, not only the "unknown type" branch.
// Hostile events are the driver's events mutated (wrong types, prototype
// keys, replays, huge strings, other types) and arbitrary values.
//
// Laws:
// - any split of the log, with the state shipped as JSON at every cut, gives
//   the same state, the same ledger and the same effects as folding it whole;
// - every event the driver makes is accepted (the driver and the fold agree
//   on what is valid), and the trust levels equal an independent model of the
//   trust rules run over the accepted verdicts;
// - hostile events never throw, an event answered with no effects changes
//   nothing, and the invariants hold after every event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  MAX_TRUST,
  NEST_KINDS,
  PROMOTE_AFTER,
  SKIP_REASONS,
  TASK_TYPES,
  TRIAGE_MODES,
  applyFlock,
  draftAnswer,
  emptyFlock,
  flockFromJSON,
  flockLedger,
  flockToJSON,
  flockTime,
  flockTs,
  itemPhase,
  leaseHolder,
  listStatus,
  nestsIndex,
  seedFlock,
  spunCrows,
  nestRefusal,
  nestSlug,
  outputNeedsApproval,
  pendingResponses,
  pickCrows,
  previewTrust,
  spinRefusal,
  toFly,
  triageNeedsApproval,
  trustChangedEvent,
  unannouncedTrust,
  type FlockEffect,
  type FlockState,
} from '../src/core/flock.js';
import { WORKER_NAMES } from '../src/core/personas.js';
import { T0 } from './support/flock-events.js';

const RUNS = Number(process.env.ROOST_FC_RUNS ?? 100);

type Ev = Record<string, unknown> & { type: string; ts: string };

// ---------------------------------------------------------------- the driver

const LIST_IDS = ['l-1', 'l-2', '__proto__', 'constructor', 'l-3', 'toString', 'l-4', 'l-5', 'l-6', 'l-7'];
const REQUESTERS = ['ann', '__proto__', 'bob', 'constructor'];
const NEST_NAMES = ['Launch', 'Constructor', 'Proto', 'Docs'];
const SPUN = ['Nova', 'Ash', 'Birch'];

/**
 * A deterministic choice source: the generated numbers first (so shrinking
 * works on them), then a small PRNG seeded from them (so short inputs still
 * make long, varied logs).
 */
class Dice {
  private i = 0;
  private seed: number;
  constructor(private readonly xs: number[]) {
    this.seed = xs.reduce((a, x) => (Math.imul(a, 31) + x) | 0, 0x9e3779b9);
  }
  int(n: number): number {
    if (n <= 1) return 0;
    let x: number;
    if (this.i < this.xs.length) x = this.xs[this.i++];
    else {
      // mulberry32
      let t = (this.seed = (this.seed + 0x6d2b79f5) | 0);
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      x = (t ^ (t >>> 14)) >>> 0;
    }
    return x % n;
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)];
  }
  chance(pct: number): boolean {
    return this.int(100) < pct;
  }
}

type Option = () => Ev[];

/**
 * The events a correct service could append next, given the state folded so
 * far: `progress` moves lists along, `other` is everything else (picked less
 * often, so lists get far enough for trust to change).
 */
function options(s: FlockState, d: Dice, ts: () => string): { progress: Option[]; other: Option[] } {
  const ev = (type: string, fields: Record<string, unknown>): Ev => ({ type, ts: ts(), ...fields });
  const out: Option[] = [];
  const progress: Option[] = [];
  const unused = LIST_IDS.filter((l) => !s.lists.has(l) && !s.forgottenLists.has(l));
  if (unused.length && s.lists.size < 6)
    progress.push(() => {
      const list_id = d.pick(unused);
      const n = 1 + d.int(3);
      const nest_id = d.pick([...s.nests.keys()]);
      return [
        ev('list.started', {
          list_id,
          requester: d.pick(REQUESTERS),
          nest_id,
          items: Array.from({ length: n }, (_, i) => ({ item_id: `${list_id}-${i + 1}`, text: d.pick(['write it', 'fix it', 'count it', '__proto__']) })),
          ...(d.chance(20) ? { token_budget: 5_000 + d.int(10_000) } : {}),
        }),
      ];
    });
  const verdictWith = (e: Ev): Ev[] => {
    // Usually the verdict and its announcements in one append, as the service does; sometimes announced later.
    if (d.chance(20)) return [e];
    return [e, ...previewTrust(s, e).map((c) => trustChangedEvent(c, e.ts) as Ev)];
  };
  for (const list of s.lists.values()) {
    if (list.finished) continue;
    const L = list.list_id;
    for (const it of list.items) {
      const I = it.item_id;
      const base = { list_id: L, item_id: I };
      switch (itemPhase(it)) {
        case 'triage':
          progress.push(() => [ev('crow.flying', { ...base, crow: 'Sentry', borrowed: false })]);
          break;
        case 'triaging':
          progress.push(() => {
            const mode = d.pick(TRIAGE_MODES);
            // two task types mostly, so runs of approvals happen; now and then any of them
            const task_type = d.chance(80) ? d.pick(['code', 'writing'] as const) : d.pick(TASK_TYPES);
            const subtasks = mode === 'split' ? Array.from({ length: 2 + d.int(2) }, (_, i) => `part ${i + 1}`) : [];
            const tri = ev('item.triaged', { ...base, mode, task_type, subtasks, reason: 'because', needs_approval: triageNeedsApproval(s, task_type) });
            const landed = ev('crow.landed', { ...base, crow: 'Sentry', ok: true, tokens: d.int(500) });
            return d.chance(50) ? [tri, landed] : [landed, tri];
          });
          progress.push(() => [ev('crow.landed', { ...base, crow: 'Sentry', ok: false, tokens: 0, error: 'timeout' })]);
          break;
        case 'triage_verdict':
          progress.push(() => verdictWith(ev('verdict', { ...base, target: 'triage', verdict: it.triage!.needs_approval ? d.pick(['approved', 'approved', 'rejected', 'timeout']) : 'auto', by: d.chance(25) ? list.requester : 'owner' })));
          break;
        case 'rejected':
        case 'failed':
          progress.push(() => [ev('item.skipped', { ...base, reason: d.pick(SKIP_REASONS) })]);
          break;
        case 'work': {
          const want = toFly(it);
          const picks = pickCrows(s, list.nest_id, want.crows, [...it.flights.keys()]);
          if (picks.length)
            progress.push(() => {
              const k = it.triage!.mode === 'split' ? 1 : 1 + d.int(picks.length);
              return picks.slice(0, k).map((p, i) => ev('crow.flying', { ...base, crow: p.crow, borrowed: p.borrowed, ...(it.triage!.mode === 'split' ? { subtask: want.subtasks[i] } : {}) }));
            });
          progress.push(() => [ev('item.skipped', { ...base, reason: 'budget' })]);
          break;
        }
        case 'flying':
        case 'merging':
          for (const f of it.flights.values())
            if (f.state === 'flying')
              progress.push(() => [ev('crow.landed', { ...base, crow: f.crow, ok: d.chance(80), tokens: d.int(2000), output: `${f.crow} says`, error: 'boom' })]);
          break;
        case 'merge':
          progress.push(() => [ev('crow.flying', { ...base, crow: 'Elder', borrowed: false })]);
          break;
        case 'answer':
          progress.push(() => {
            const a = draftAnswer(it);
            return [ev('item.answered', { ...base, answer: a.answer || 'answer', crows: a.crows, needs_approval: outputNeedsApproval(s, it.triage!.task_type, a.crows) })];
          });
          break;
        case 'output_verdict':
          progress.push(() => verdictWith(ev('verdict', { ...base, target: 'output', verdict: it.answer!.needs_approval ? d.pick(['approved', 'approved', 'approved', 'rejected', 'timeout']) : 'auto', by: d.chance(25) ? list.requester : 'owner' })));
          break;
      }
    }
    if (list.banter.started < 2)
      progress.push(() => [ev('banter.started', { list_id: L, item_id: d.pick(list.items).item_id, crow: d.pick(WORKER_NAMES.slice(0, 4)), to: d.pick(WORKER_NAMES.slice(4)) })]);
    for (const b of list.banter.open)
      progress.push(() =>
        d.chance(70)
          ? [ev('crow.banter', { list_id: L, item_id: b.item_id, crow: b.crow, to: b.to, text: 'a line', tokens: d.int(100) })]
          : [ev('banter.dropped', { list_id: L, item_id: b.item_id, crow: b.crow, tokens: d.int(100), reason: 'late' })],
      );
    if (list.items.every((i) => i.skipped || i.outputVerdict) && list.banter.open.length === 0) progress.push(() => [ev('list.finished', { list_id: L, tokens_used: list.tokens_used, token_budget: list.token_budget })]);
    if (d.chance(10)) out.push(() => [ev('list.budget', { list_id: L, token_budget: 1_000 + d.int(100_000), by: 'owner' })]);
    out.push(() => [ev('requester.pranked', { list_id: L, message: 'slow down', cooldown_s: 60 })]);
  }
  const pending = unannouncedTrust(s);
  if (pending.length) progress.push(() => [trustChangedEvent(pending[0], ts()) as Ev]);
  const raised = [...s.trust.values()].filter((e) => e.level > 0);
  if (raised.length)
    out.push(() => {
      const e = d.pick(raised);
      return [ev('trust.changed', { list_id: '', holder: e.holder, task_type: e.task_type, from: e.level, to: d.chance(50) ? 0 : e.level - 1, by: 'owner', reason: 'spot check' })];
    });
  out.push(() => [ev('requester.strike', { requester: d.pick(REQUESTERS), reason: d.pick(['rate', 'empty', 'garbage']) })]);
  if (d.chance(10)) {
    const b = 1_000 + d.int(500_000);
    if (b !== s.budget.project) out.push(() => [ev('budget.set', { token_budget: b, by: 'owner' })]);
  }
  // nests
  const freeNames = NEST_NAMES.filter((n) => nestRefusal(s, n, ['Pepper']) === '');
  if (freeNames.length)
    out.push(() => {
      const name = d.pick(freeNames);
      const crows = [...new Set([d.pick(WORKER_NAMES), d.pick(WORKER_NAMES)])];
      return [ev('nest.created', { nest_id: nestSlug(name), name, crows, by: 'owner' })];
    });
  for (const nest of s.nests.values()) {
    const N = nest.nest_id;
    const msg = (fields: Record<string, unknown>) =>
      ev('nest.message', { nest_id: N, msg_id: `${N}-${nest.count + 1}`, to: '', refers_to: '', tagged_by: d.pick(['jev', 'header', 'default']), mode: '', mode_tagged_by: '', invited: 0, approval_phrase: '', text: 'words', ...fields });
    const recs = [...nest.messages.values()];
    const members = [...nest.core, ...nest.invited].filter((c) => !s.quarantine.has(c));
    if (N === 'todo') members.push(...WORKER_NAMES.filter((c) => !s.quarantine.has(c)));
    out.push(() => [msg({ author: 'owner', kind: d.pick(['say', 'request', 'request']), ...(d.chance(50) ? { mode: 'conspiracy', mode_tagged_by: 'jev', invited: 2 } : {}) })]);
    out.push(() => [msg({ author: d.pick(['Quill', 'Sentry']), kind: 'ask_owner', approval_phrase: 'Yes Please', window_ms: 60_000 })]);
    if (members.length && recs.length)
      out.push(() => [msg({ author: d.pick(members), kind: d.pick(['claim', 'deliver', 'decline', 'say', 'refer']), refers_to: d.pick(recs).msg_id })]);
    const asks = recs.filter((r) => r.kind === 'ask_owner' && !r.decision);
    if (asks.length) out.push(() => [msg({ author: 'owner', kind: 'say', text: d.pick(['yes please', 'no', '  YES PLEASE ']), refers_to: d.pick(asks).msg_id })]);
    const crowMsgs = recs.filter((r) => WORKER_NAMES.includes(r.author) && !nest.flags.has(`${r.author}\u0000${r.msg_id}`));
    if (crowMsgs.length)
      out.push(() => {
        const r = d.pick(crowMsgs);
        return [msg({ author: 'Sentry', kind: 'flag', to: r.author, refers_to: r.msg_id, text: 'breach' })];
      });
    const unwatched = recs.filter((r) => !r.watch && WORKER_NAMES.includes(r.author));
    if (unwatched.length)
      out.push(() => {
        const r = d.pick(unwatched);
        return [ev('watch', { nest_id: N, msg_id: r.msg_id, crow: r.author, scores: { answers_request: d.int(11) / 10, states_fact_without_source: d.int(11) / 10, contradicts_earlier: d.int(11) / 10 }, band: 0.8 })];
      });
    const untagged = recs.filter((r) => !r.jev.kind);
    if (untagged.length) out.push(() => [ev('jev.tag', { nest_id: N, msg_id: d.pick(untagged).msg_id, question: 'kind', probs: { say: 0.2, request: 0.8 }, band: 0.8, source: 'embedded' })]);
    for (const p of pendingResponses(s, N)) {
      const picks = pickCrows(s, N, 1, [...p.sent]);
      if (picks.length) out.push(() => [ev('nest.flying', { nest_id: N, msg_id: p.msg_id, crow: picks[0].crow })]);
    }
    for (const f of nest.flights.values())
      if (f.state === 'flying') out.push(() => [ev('nest.landed', { nest_id: N, msg_id: f.msg_id, crow: f.crow, ok: d.chance(70), tokens: d.int(300) })]);
  }
  for (const q of s.quarantine.keys()) out.push(() => [ev('quarantine.lifted', { crow: q, by: 'owner' })]);
  const spinnable = SPUN.filter((n) => spinRefusal(s, n, 'Inky') === '');
  if (spinnable.length) out.push(() => [ev('crow.spun', { name: d.pick(spinnable), persona: d.pick(WORKER_NAMES), trust: d.pick(['stranger', 'regular', 'trusted']), by: 'Boss' })]);
  // a claim by the holder (a renewal) or, when nobody holds a live lease, by anyone
  const holder = leaseHolder(s, flockTime(ts())!);
  out.push(() => [ev('lease.claimed', { node: holder || d.pick(['a', 'b']), ttl_ms: 30_000 })]);
  if (holder) out.push(() => [ev('lease.released', { node: holder })]);
  return { progress, other: out };
}

interface Generated {
  events: Ev[];
  /** True for events the driver made (valid); false for hostile ones. */
  valid: boolean[];
}

/** Builds a log of `steps` driver choices, folding as it goes; `hostile` decides which steps get a hostile event too. */
function generate(xs: number[], steps: number, hostile: ((e: Ev, log: Ev[], d: Dice) => unknown)[] | null): Generated {
  const d = new Dice(xs);
  const s = emptyFlock();
  let t = T0;
  const ts = () => flockTs(t);
  const events: Ev[] = [];
  const valid: boolean[] = [];
  for (let i = 0; i < steps; i++) {
    t += d.pick([0, 1, 1000, 1000, 20_000, 90_000, 11 * 60_000]);
    const { progress, other } = options(s, d, ts);
    const batch = (progress.length && d.chance(75) ? d.pick(progress) : d.pick(other.length ? other : progress))();
    for (const e of batch) {
      applyFlock(s, e, events.length + 1);
      events.push(e);
      valid.push(true);
      if (hostile && d.chance(35)) {
        const h = d.pick(hostile)(e, events, d) as Ev;
        applyFlock(s, h, events.length + 1);
        events.push(h);
        valid.push(false);
      }
    }
  }
  return { events, valid };
}

// ---------------------------------------------------------------- hostile mutations

const WEIRD: unknown[] = ['__proto__', 'constructor', 'toString', '', ' ', null, -1, 1.5, 1e308, true, {}, [], ['__proto__'], { __proto__: { polluted: 1 } }, 'x'.repeat(100_000), 'Sentry', 'Elder', 'owner'];

const mutations: ((e: Ev, log: Ev[], d: Dice) => unknown)[] = [
  // a field set to something strange
  (e, _log, d) => {
    const keys = Object.keys(e);
    return { ...e, [d.pick(keys)]: d.pick(WEIRD) };
  },
  // a field removed
  (e, _log, d) => {
    const c: Record<string, unknown> = { ...e };
    delete c[d.pick(Object.keys(e).filter((k) => k !== 'type'))];
    return c;
  },
  // a replay of an earlier event (a duplicate append)
  (_e, log, d) => d.pick(log),
  // the same payload under another type
  (e, _log, d) => ({ ...e, type: d.pick(['verdict', 'item.answered', 'crow.flying', 'list.finished', 'trust.changed', 'nest.message', 'item.skipped', 'crow.spun', 'toString', '__proto__']) }),
  // a JSON-parsed body with `__proto__` as an own key
  (e) => JSON.parse(JSON.stringify(e).replace(/^\{/, '{"__proto__":{"polluted":true,"type":"list.started"},')),
  // a bad time
  (e, _log, d) => ({ ...e, ts: d.pick([undefined, 0, 'now', '2026-02-30T25:00:00Z', e.ts + 'x']) }),
  // a forged trust change raising someone
  (e) => ({ type: 'trust.changed', ts: e.ts, list_id: '', holder: d0(WORKER_NAMES), task_type: 'code', from: 0, to: 2, because: [] }),
  // a hostile item list
  (e) => ({ type: 'list.started', ts: e.ts, list_id: 'l-9', requester: 'x', items: Array.from({ length: 5000 }, (_, i) => ({ item_id: `l-9-${i + 1}`, text: 'x' })) }),
  (e) => ({ type: 'nest.message', ts: e.ts, nest_id: 'todo', msg_id: 'todo-1', kind: 'flag', author: 'Sentry', to: '__proto__', refers_to: '__proto__', text: 'x', tagged_by: 'jev' }),
];

function d0<T>(a: readonly T[]): T {
  return a[0];
}

const anything = fc.anything({ withNullPrototype: true, withSparseArray: true, withBoxedValues: true, maxDepth: 3 });

// ---------------------------------------------------------------- checks

const wire = (s: FlockState) => JSON.stringify(flockToJSON(s));

function checkInvariants(s: FlockState): void {
  let flying = 0;
  const busy = new Map<string, number>();
  const count = (crow: string) => busy.set(crow, (busy.get(crow) ?? 0) + 1);
  for (const [lid, list] of s.lists) {
    assert.equal(list.list_id, lid);
    list.items.forEach((it, i) => {
      assert.equal(it.item_id, `${lid}-${i + 1}`);
      let air = 0;
      for (const f of it.flights.values())
        if (f.state === 'flying') {
          air++;
          count(f.crow);
        }
      flying += air;
      if (it.answer || it.skipped) assert.equal(air, 0, 'closed items have nothing in the air');
      assert.ok(!(it.answer && it.skipped), 'answered or skipped, not both');
      if (it.outputVerdict) assert.ok(it.answer);
      if (it.triageVerdict) assert.ok(it.triage);
    });
    if (list.finished) assert.ok(list.items.every((i) => i.skipped || i.outputVerdict));
    assert.ok(list.banter.started <= 2 && list.banter.lines <= list.banter.started);
    assert.ok(Number.isInteger(list.tokens_used) && list.tokens_used >= 0);
  }
  for (const nest of s.nests.values())
    for (const f of nest.flights.values())
      if (f.state === 'flying') {
        flying++;
        count(f.crow);
      }
  assert.equal(s.airborne.size, flying, 'airborne counts every open flight');
  assert.deepEqual([...s.busy].sort(), [...busy].sort(), 'busy counts open flights per crow');
  for (const e of s.trust.values()) assert.ok(e.level >= 0 && e.level <= MAX_TRUST);
  assert.ok(s.spun.size <= 8);
  assert.ok(s.nests.size <= 21);
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
}

/** The trust rules, written again from docs/flock.md, over the accepted verdicts and owner actions of a log. */
function modelTrust(events: Ev[]): Map<string, number> {
  const level = new Map<string, number>();
  const run = new Map<string, number>();
  const spunBase = new Map<string, number>();
  const task = new Map<string, string>();
  const crows = new Map<string, string[]>();
  const requesters = new Map<string, string>();
  const s = emptyFlock();
  for (const [i, e] of events.entries()) {
    const fx = applyFlock(s, e, i + 1);
    if (!fx.length) continue;
    if (e.type === 'crow.spun') spunBase.set(e.name as string, e.trust === 'stranger' ? 0 : 1);
    if (e.type === 'item.triaged') task.set(e.item_id as string, e.task_type as string);
    if (e.type === 'item.answered') crows.set(e.item_id as string, e.crows as string[]);
    if (e.type === 'list.started') requesters.set(e.list_id as string, e.requester as string);
    const k = (h: string, t: string) => `${h}/${t}`;
    const lv = (h: string, t: string) => level.get(k(h, t)) ?? spunBase.get(h) ?? 0;
    if (e.type === 'trust.changed' && e.by) {
      level.set(k(e.holder as string, e.task_type as string), e.to as number);
      run.set(k(e.holder as string, e.task_type as string), 0);
    }
    if (e.type !== 'verdict') continue;
    const t = task.get(e.item_id as string)!;
    const holders = e.target === 'triage' ? ['flock'] : crows.get(e.item_id as string)!;
    for (const h of holders) {
      const key = k(h, t);
      // A yes from the one who handed the list over earns nothing.
      if (e.verdict === 'approved' && e.by === requesters.get(e.list_id as string)) continue;
      if (e.verdict === 'approved') {
        const r = (run.get(key) ?? 0) + 1;
        if (r >= PROMOTE_AFTER && lv(h, t) < MAX_TRUST) {
          level.set(key, lv(h, t) + 1);
          run.set(key, 0);
        } else {
          run.set(key, r);
          level.set(key, lv(h, t));
        }
      } else if (e.verdict === 'rejected' || e.verdict === 'timeout') {
        level.set(key, Math.max(0, lv(h, t) - 1));
        run.set(key, 0);
      }
    }
  }
  return level;
}

const choices = fc.array(fc.nat({ max: 1_000_000 }), { minLength: 1, maxLength: 400 });

// ---------------------------------------------------------------- properties

test('every event the driver makes is accepted, and the ledger equals an independent model of the trust rules', () => {
  fc.assert(
    fc.property(choices, fc.integer({ min: 1, max: 150 }), (xs, steps) => {
      const { events } = generate(xs, steps, null);
      const s = emptyFlock();
      for (const [i, e] of events.entries()) {
        const fx = applyFlock(s, e, i + 1);
        assert.ok(fx.length > 0, `driver event ${i} (${e.type}) was refused: ${JSON.stringify(e).slice(0, 300)}`);
        checkInvariants(s);
      }
      const model = modelTrust(events);
      for (const [key, lv] of model) {
        const [holder, task] = key.split('/');
        const e = s.trust.get(`${holder}\u0000${task}`);
        assert.equal(e?.level ?? 0, lv, `trust of ${key}`);
      }
    }),
    { numRuns: RUNS },
  );
});

test('the driver reaches every phase and every event type (so the laws are not vacuous)', () => {
  const seen = new Set<string>();
  const phases = new Set<string>();
  fc.assert(
    fc.property(choices, (xs) => {
      const { events } = generate(xs, 150, null);
      const s = emptyFlock();
      for (const e of events) {
        applyFlock(s, e);
        seen.add(e.type + (e.type === 'trust.changed' ? (e.by ? ':owner' : ':announce') : ''));
        for (const l of s.lists.values()) for (const it of l.items) phases.add(itemPhase(it));
      }
    }),
    // A fixed seed: this checks what the generator reaches, and 60 random runs once missed
    // `trust.changed:announce` in CI (the laws' tests above keep their random seeds).
    { numRuns: 60, seed: 20261206 },
  );
  const types = [
    'list.started', 'item.triaged', 'crow.flying', 'crow.landed', 'item.answered', 'verdict', 'trust.changed:announce', 'trust.changed:owner',
    'item.skipped', 'requester.pranked', 'list.finished', 'crow.banter', 'banter.started', 'banter.dropped', 'requester.strike',
    'nest.created', 'nest.message', 'nest.flying', 'nest.landed', 'jev.tag', 'watch', 'quarantine.lifted', 'crow.spun', 'lease.claimed', 'lease.released', 'budget.set', 'list.budget',
  ];
  for (const t of types) assert.ok(seen.has(t), `generated ${t}`);
  for (const p of ['triage', 'triaging', 'triage_verdict', 'rejected', 'work', 'flying', 'merge', 'merging', 'answer', 'output_verdict', 'done', 'skipped', 'failed']) assert.ok(phases.has(p), `reached ${p}`);
  assert.ok(NEST_KINDS.length > 0);
});

test('any split of the log (state shipped as JSON at every cut) gives the same state, ledger and effects', () => {
  fc.assert(
    fc.property(choices, fc.integer({ min: 1, max: 120 }), fc.array(fc.nat(), { maxLength: 4 }), (xs, steps, cuts) => {
      const { events } = generate(xs, steps, mutations);
      const whole = emptyFlock();
      const fxWhole: FlockEffect[][] = events.map((e, i) => applyFlock(whole, e, i + 1));
      const points = [...new Set(cuts.map((c) => c % (events.length + 1)))].sort((a, b) => a - b);
      let s = emptyFlock();
      const fxParts: FlockEffect[][] = [];
      let at = 0;
      for (const p of [...points, events.length]) {
        for (; at < p; at++) fxParts.push(applyFlock(s, events[at], at + 1));
        s = flockFromJSON(JSON.parse(JSON.stringify(flockToJSON(s))));
      }
      assert.equal(wire(s), wire(whole));
      assert.deepEqual(flockLedger(s), flockLedger(whole));
      assert.equal(JSON.stringify(fxParts), JSON.stringify(fxWhole), 'the rest plays the same effects');
    }),
    { numRuns: RUNS },
  );
});

test('hostile events never throw, a refused event changes nothing, and the invariants hold', () => {
  fc.assert(
    fc.property(choices, fc.integer({ min: 1, max: 100 }), fc.array(anything, { maxLength: 10 }), (xs, steps, junk) => {
      const { events } = generate(xs, steps, mutations);
      const all: unknown[] = [...events];
      // sprinkle arbitrary values through the log
      junk.forEach((j, i) => all.splice((i * 7) % (all.length + 1), 0, j));
      const s = emptyFlock();
      for (const [i, e] of all.entries()) {
        const before = wire(s);
        const fx = applyFlock(s, e, i + 1);
        assert.ok(Array.isArray(fx));
        if (fx.length === 0) assert.equal(wire(s), before, `a refused event changed the state: ${JSON.stringify(e)?.slice(0, 200)}`);
        checkInvariants(s);
      }
      checkInvariants(flockFromJSON(JSON.parse(JSON.stringify(flockToJSON(s)))));
    }),
    { numRuns: RUNS },
  );
});

/** The contract's list events: what a list's SSE stream carries. */
const LIST_STREAM = new Set(['list.started', 'item.triaged', 'crow.flying', 'crow.landed', 'item.answered', 'verdict', 'trust.changed', 'item.skipped', 'requester.pranked', 'list.finished', 'crow.banter']);

test('a browser folding one list\'s stream, seeded from GET /api/nests and /api/crows, sees the list as the server does', () => {
  fc.assert(
    fc.property(choices, fc.integer({ min: 1, max: 150 }), (xs, steps) => {
      const { events } = generate(xs, steps, null);
      const full = emptyFlock();
      events.forEach((e, i) => applyFlock(full, e, i + 1));
      for (const L of full.lists.keys()) {
        const mine = events.filter((e) => e.list_id === L && LIST_STREAM.has(e.type));
        const view = emptyFlock();
        seedFlock(view, { nests: nestsIndex(full).nests, crows: spunCrows(full) });
        for (const e of mine) {
          const fx = applyFlock(view, JSON.parse(JSON.stringify(e)));
          // Trust announcements need verdicts of other lists: the browser reads the ledger from GET /api/trust.
          if (e.type !== 'trust.changed') assert.ok(fx.length > 0, `the browser refused ${e.type} of ${L}`);
        }
        const a = listStatus(view, L)!;
        const b = listStatus(full, L)!;
        // Dropped banter's tokens, budget changes and banter reservations are internal facts.
        const dropped = events.filter((e) => e.type === 'banter.dropped' && e.list_id === L).reduce((n, e) => n + (e.tokens as number), 0);
        assert.deepEqual(a.items, b.items, `items of ${L}`);
        assert.equal(a.tokens_used, b.tokens_used - dropped);
        assert.deepEqual([a.finished, a.pranks, a.nest_id, a.requester], [b.finished, b.pranks, b.nest_id, b.requester]);
      }
    }),
    { numRuns: Math.ceil(RUNS / 2) },
  );
});
