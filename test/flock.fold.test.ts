// The flock fold, rule by rule, with named fixtures (docs/flock.md states the
// rules these check). Properties over generated logs are in flock.property.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  FLOCK_LIMITS,
  applyFlock,
  cleanNestName,
  crowRemoveRefusal,
  nestDeleteRefusal,
  cooldownS,
  crowAvailable,
  draftAnswer,
  emptyFlock,
  flockFromJSON,
  flockLedger,
  flockTime,
  flockToJSON,
  flockTs,
  inFlight,
  isBreach,
  itemPhase,
  leaseHolder,
  listStatus,
  messageDetail,
  nestMessages,
  nestRefusal,
  nestSlug,
  nestsIndex,
  openAsks,
  outputNeedsApproval,
  overRate,
  pendingResponses,
  pickCrows,
  previewTrust,
  quarantined,
  seedFlock,
  spinRefusal,
  spunCrows,
  toFly,
  triageNeedsApproval,
  trustChangedEvent,
  trustLevel,
  unannouncedTrust,
  unfinishedLists,
  type FlockState,
} from '../src/core/flock.js';
import { parseListText, quarantineMessage } from '../src/core/flock-wire.js';
import { PERSONAS, RESERVED_NAMES, SERVICE_NAMES, WORKER_NAMES, personaRecords, relationOf } from '../src/core/personas.js';
import { flockLog, T0, type FlockLog } from './support/flock-events.js';

const phase = (s: FlockState, list: string, n: number) => itemPhase(s.lists.get(list)!.items[n - 1]);

/** Flies item n of `list` through triage (approved by a person unless `auto`) to phase `work`. */
function triage(f: FlockLog, list: string, n: number, fields: Parameters<FlockLog['triaged']>[2] = {}): void {
  assert.ok(f.apply(f.flying(list, n, 'Sentry')).length);
  const needs = fields.needs_approval ?? true;
  assert.ok(f.apply(f.triaged(list, n, { needs_approval: needs, ...fields })).length);
  assert.ok(f.apply(f.landed(list, n, 'Sentry')).length);
  assert.ok(f.apply(f.verdict(list, n, 'triage', needs ? 'approved' : 'auto')).length);
}

/** One solo item from start to an output verdict, flown by `crow`. */
function soloItem(f: FlockLog, list: string, crow: string, outcome: 'approved' | 'rejected' | 'timeout' | 'auto', task_type = 'writing'): void {
  assert.ok(f.apply(f.started(list, ['an item'])).length, 'list starts');
  triage(f, list, 1, { task_type, needs_approval: triageNeedsApproval(f.s, task_type) });
  assert.ok(f.apply(f.flying(list, 1, crow)).length);
  assert.ok(f.apply(f.landed(list, 1, crow)).length);
  const needs = outputNeedsApproval(f.s, task_type, [crow]);
  assert.equal(needs, outcome !== 'auto', 'auto exactly when the crow is trusted');
  assert.ok(f.apply(f.answered(list, 1, 'done', [crow], needs)).length);
  assert.ok(f.apply(f.verdict(list, 1, 'output', outcome)).length);
}

describe('a list, start to finish', () => {
  test('a solo item moves through triage, flight, answer and verdict; the list finishes with its tokens', () => {
    const f = flockLog();
    assert.deepEqual(f.apply(f.started('l-1', ['write the release notes'])), [{ kind: 'list', list_id: 'l-1' }]);
    assert.equal(phase(f.s, 'l-1', 1), 'triage');
    f.apply(f.flying('l-1', 1, 'Sentry'));
    assert.equal(phase(f.s, 'l-1', 1), 'triaging');
    assert.equal(inFlight(f.s).flights.length, 1, 'the Sentry is in the air');
    f.apply(f.triaged('l-1', 1));
    f.apply(f.landed('l-1', 1, 'Sentry'));
    assert.equal(phase(f.s, 'l-1', 1), 'triage_verdict');
    assert.deepEqual(listStatus(f.s, 'l-1')!.waiting.verdict, ['l-1-1']);
    f.apply(f.verdict('l-1', 1, 'triage', 'approved'));
    assert.equal(phase(f.s, 'l-1', 1), 'work');
    assert.deepEqual(toFly(f.s.lists.get('l-1')!.items[0]), { subtasks: [], crows: 1 });
    f.apply(f.flying('l-1', 1, 'Inky'));
    assert.equal(phase(f.s, 'l-1', 1), 'flying');
    f.apply(f.landed('l-1', 1, 'Inky', true, { output: 'Notes: ...', tokens: 250 }));
    assert.equal(phase(f.s, 'l-1', 1), 'answer');
    assert.deepEqual(draftAnswer(f.s.lists.get('l-1')!.items[0]), { answer: 'Notes: ...', crows: ['Inky'] });
    assert.deepEqual(f.apply(f.finished('l-1')), [], 'not finished while an item is open');
    f.apply(f.answered('l-1', 1, 'Notes: ...', ['Inky']));
    assert.equal(phase(f.s, 'l-1', 1), 'output_verdict');
    f.apply(f.verdict('l-1', 1, 'output', 'approved'));
    assert.equal(phase(f.s, 'l-1', 1), 'done');
    const st = listStatus(f.s, 'l-1')!;
    assert.equal(st.can_finish, true);
    assert.equal(st.tokens_used, 350, 'the Sentry 100 + Inky 250');
    assert.equal(st.token_budget, FLOCK_LIMITS.defaultBudget);
    assert.ok(f.apply(f.finished('l-1')).length);
    assert.equal(listStatus(f.s, 'l-1')!.finished, true);
    assert.deepEqual(unfinishedLists(f.s), []);
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Hugin')), [], 'a finished list takes nothing more');
  });

  test('list.started: ids must be <list_id>-<n> in order, 1 to 100 items, a known nest', () => {
    const f = flockLog();
    const bad = [
      f.ev('list.started', { list_id: 'l-x', requester: 'ann', items: [{ item_id: 'l-x-2', text: 'a' }] }),
      f.ev('list.started', { list_id: 'l-x', requester: 'ann', items: [] }),
      f.ev('list.started', { list_id: 'l-x', requester: 'ann', items: Array.from({ length: 101 }, (_, i) => ({ item_id: `l-x-${i + 1}`, text: 't' })) }),
      f.ev('list.started', { list_id: 'l-x', requester: 'ann', nest_id: 'nowhere', items: [{ item_id: 'l-x-1', text: 'a' }] }),
      f.ev('list.started', { list_id: 'l-x', requester: '', items: [{ item_id: 'l-x-1', text: 'a' }] }),
      f.ev('list.started', { list_id: 'l-x', requester: 'ann', items: [{ item_id: 'l-x-1', text: '   ' }] }),
      f.ev('list.started', { list_id: 'l x', requester: 'ann', items: [{ item_id: 'l x-1', text: 'a' }] }),
      f.ev('list.started', { list_id: 'l-x', requester: 'ann', token_budget: 5, items: [{ item_id: 'l-x-1', text: 'a' }] }),
      { type: 'list.started', ts: 'yesterday', list_id: 'l-x', requester: 'ann', items: [{ item_id: 'l-x-1', text: 'a' }] },
    ];
    for (const e of bad) assert.deepEqual(f.apply(e as never), [], JSON.stringify(e).slice(0, 120));
    assert.equal(f.s.lists.size, 0);
    assert.ok(f.apply(f.started('l-x', ['a', 'b'])).length);
    assert.deepEqual(f.apply(f.started('l-x', ['again'])), [], 'a list id is used once');
    const big = 'x'.repeat(FLOCK_LIMITS.itemText + 500);
    assert.ok(f.apply(f.started('l-y', [big])).length);
    assert.equal(f.s.lists.get('l-y')!.items[0].text.length, FLOCK_LIMITS.itemText, 'an oversize item is clamped');
  });

  test('a verdict is recorded once per target: a second answer, or the wrong kind, is a no-op', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    f.apply(f.flying('l-1', 1, 'Sentry'));
    assert.deepEqual(f.apply(f.verdict('l-1', 1, 'triage', 'approved')), [], 'nothing to judge before triage');
    f.apply(f.triaged('l-1', 1, { needs_approval: true }));
    f.apply(f.landed('l-1', 1, 'Sentry'));
    assert.deepEqual(f.apply(f.verdict('l-1', 1, 'triage', 'auto')), [], 'auto only when no approval was asked');
    assert.deepEqual(f.apply(f.verdict('l-1', 1, 'output', 'approved')), [], 'no output yet');
    assert.ok(f.apply(f.verdict('l-1', 1, 'triage', 'rejected')).length);
    assert.deepEqual(f.apply(f.verdict('l-1', 1, 'triage', 'approved')), [], 'the first verdict stands');
    assert.equal(phase(f.s, 'l-1', 1), 'rejected');
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Hugin')), [], 'a rejected item is not flown');
    assert.ok(f.apply(f.skipped('l-1', 1, 'rejected')).length);
    assert.equal(phase(f.s, 'l-1', 1), 'skipped');
    assert.ok(f.apply(f.finished('l-1')).length);
  });

  test('without approval needed, only `auto` is a verdict', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    f.apply(f.flying('l-1', 1, 'Sentry'));
    f.apply(f.triaged('l-1', 1, { needs_approval: false }));
    assert.deepEqual(f.apply(f.verdict('l-1', 1, 'triage', 'approved')), []);
    assert.deepEqual(f.apply(f.verdict('l-1', 1, 'triage', 'timeout')), []);
    assert.ok(f.apply(f.verdict('l-1', 1, 'triage', 'auto')).length);
    assert.equal(f.s.lists.get('l-1')!.items[0].triageVerdict!.by, '', 'nobody decided an auto verdict');
  });

  test('triage needs the Sentry in the air (or landed well); a failed Sentry means a failure skip', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a', 'b']));
    assert.deepEqual(f.apply(f.triaged('l-1', 1)), [], 'no triage without the Sentry');
    f.apply(f.flying('l-1', 1, 'Sentry'));
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Sentry')), [], 'the Sentry flies an item once');
    f.apply(f.landed('l-1', 1, 'Sentry', false));
    assert.equal(phase(f.s, 'l-1', 1), 'failed');
    assert.deepEqual(f.apply(f.triaged('l-1', 1)), [], 'no triage after a failed flight');
    assert.deepEqual(listStatus(f.s, 'l-1')!.waiting.skip, ['l-1-1']);
    // landed-then-triaged (one append, either order) is as good as triaged-then-landed
    f.apply(f.flying('l-1', 2, 'Sentry'));
    f.apply(f.landed('l-1', 2, 'Sentry'));
    assert.ok(f.apply(f.triaged('l-1', 2)).length);
  });

  test('items are skipped only when nothing of them is in the air, and never once answered', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    f.apply(f.flying('l-1', 1, 'Sentry'));
    assert.deepEqual(f.apply(f.skipped('l-1', 1, 'budget')), [], 'the Sentry is still flying');
    f.apply(f.triaged('l-1', 1));
    f.apply(f.landed('l-1', 1, 'Sentry'));
    f.apply(f.verdict('l-1', 1, 'triage', 'approved'));
    f.apply(f.flying('l-1', 1, 'Pepper'));
    f.apply(f.landed('l-1', 1, 'Pepper'));
    f.apply(f.answered('l-1', 1, 'x', ['Pepper']));
    assert.deepEqual(f.apply(f.skipped('l-1', 1, 'budget')), [], 'an answered item waits for its output verdict');
    assert.deepEqual(f.apply(f.skipped('l-1', 1, 'bored')), [], 'reasons are a closed set');
  });

  test('an item waiting for its triage verdict is not skipped: that target still gets its one verdict', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    f.apply(f.flying('l-1', 1, 'Sentry'));
    f.apply(f.triaged('l-1', 1));
    f.apply(f.landed('l-1', 1, 'Sentry'));
    assert.deepEqual(f.apply(f.skipped('l-1', 1, 'budget')), [], 'the triage verdict is pending');
    f.apply(f.verdict('l-1', 1, 'triage', 'timeout'));
    assert.ok(f.apply(f.skipped('l-1', 1, 'rejected')).length);
  });

  test('item.answered credits only crows that worked the item and came back well', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    triage(f, 'l-1', 1, { mode: 'murder' });
    f.apply(f.flying('l-1', 1, 'Hugin'));
    f.apply(f.flying('l-1', 1, 'Munin'));
    f.apply(f.flying('l-1', 1, 'Rook'));
    f.apply(f.landed('l-1', 1, 'Hugin'));
    f.apply(f.landed('l-1', 1, 'Munin', false));
    assert.equal(phase(f.s, 'l-1', 1), 'flying', 'a murder waits for all its crows');
    f.apply(f.landed('l-1', 1, 'Rook', false));
    assert.equal(phase(f.s, 'l-1', 1), 'answer', 'one good answer needs no merge');
    assert.deepEqual(f.apply(f.answered('l-1', 1, 'x', ['Munin', 'Sable'])), [], 'nobody creditable');
    assert.ok(f.apply(f.answered('l-1', 1, 'x', ['Munin', 'Hugin', 'Hugin', 'Sable'])).length);
    assert.deepEqual(f.s.lists.get('l-1')!.items[0].answer!.crows, ['Hugin']);
  });
});

describe('code flights', () => {
  test("a code flight keeps its board session (what the view links to), through a landing and a snapshot; a malformed board is no board", () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['fix the login redirect', 'fix the logout link']));
    triage(f, 'l-1', 1, { task_type: 'code', mode: 'murder' });
    const board = { thread: 'default', session: 'flock-0123456789abcdef0123' };
    assert.ok(f.apply(f.flying('l-1', 1, 'Hugin', { board })).length);
    assert.ok(f.apply(f.flying('l-1', 1, 'Munin', { board: { thread: 'no thread', session: 'x' } })).length, 'flown all the same');
    assert.ok(f.apply(f.flying('l-1', 1, 'Corvin', { board: 'default' })).length);
    f.apply(f.landed('l-1', 1, 'Hugin'));
    const flights = () => listStatus(f.s, 'l-1')!.items[0].flights;
    assert.deepEqual(flights().map((x) => [x.crow, x.state, x.board ?? null]), [
      ['Sentry', 'ok', null],
      ['Hugin', 'ok', board],
      ['Munin', 'flying', null],
      ['Corvin', 'flying', null],
    ]);
    assert.deepEqual(listStatus(flockFromJSON(JSON.parse(JSON.stringify(flockToJSON(f.s)))), 'l-1')!.items[0].flights[1].board, board, 'kept in a snapshot');
    assert.ok(f.apply(f.flying('l-1', 2, 'Sentry', { board })).length);
    assert.equal(listStatus(f.s, 'l-1')!.items[1].flights[0].board, undefined, "only a worker's flight is a code flight");
  });
});

describe('split and murder', () => {
  test('split: one crow per subtask, each subtask once; the answer joins them in order', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['plan the launch']));
    triage(f, 'l-1', 1, { mode: 'split', subtasks: ['copy', 'schedule', 'budget'] });
    assert.deepEqual(toFly(f.s.lists.get('l-1')!.items[0]), { subtasks: [1, 2, 3], crows: 3 });
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Pepper')), [], 'a split flight names its subtask');
    assert.ok(f.apply(f.flying('l-1', 1, 'Tansy', { subtask: 2 })).length);
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Rook', { subtask: 2 })), [], 'subtask 2 is taken');
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Rook', { subtask: 4 })), [], 'there is no subtask 4');
    f.apply(f.flying('l-1', 1, 'Rook', { subtask: 3 }));
    f.apply(f.landed('l-1', 1, 'Tansy', true, { output: 'T' }));
    f.apply(f.landed('l-1', 1, 'Rook', true, { output: 'R' }));
    assert.equal(phase(f.s, 'l-1', 1), 'work', 'subtask 1 still needs a crow');
    assert.deepEqual(toFly(f.s.lists.get('l-1')!.items[0]).subtasks, [1]);
    f.apply(f.flying('l-1', 1, 'Pepper', { subtask: 1 }));
    f.apply(f.landed('l-1', 1, 'Pepper', true, { output: 'P' }));
    assert.equal(phase(f.s, 'l-1', 1), 'answer');
    assert.deepEqual(draftAnswer(f.s.lists.get('l-1')!.items[0]), { answer: '1. copy\nP\n\n2. schedule\nT\n\n3. budget\nR', crows: ['Tansy', 'Rook', 'Pepper'] });
  });

  test('split: a failed subtask fails the item once the others land', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    triage(f, 'l-1', 1, { mode: 'split', subtasks: ['x', 'y'] });
    f.apply(f.flying('l-1', 1, 'Hugin', { subtask: 1 }));
    f.apply(f.flying('l-1', 1, 'Munin', { subtask: 2 }));
    f.apply(f.landed('l-1', 1, 'Hugin', false));
    assert.equal(phase(f.s, 'l-1', 1), 'flying');
    f.apply(f.landed('l-1', 1, 'Munin'));
    assert.equal(phase(f.s, 'l-1', 1), 'failed');
    assert.ok(f.apply(f.skipped('l-1', 1, 'failure')).length);
  });

  test('a split triage needs two subtasks at least and four at most', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    f.apply(f.flying('l-1', 1, 'Sentry'));
    assert.deepEqual(f.apply(f.triaged('l-1', 1, { mode: 'split', subtasks: ['only one'] })), []);
    assert.deepEqual(f.apply(f.triaged('l-1', 1, { mode: 'split', subtasks: ['a', 'b', 'c', 'd', 'e'] })), []);
    assert.deepEqual(f.apply(f.triaged('l-1', 1, { task_type: 'poetry' })), [], 'task types are a closed set');
    assert.ok(f.apply(f.triaged('l-1', 1, { mode: 'split', subtasks: ['a', 'b', 'c', 'd'] })).length);
  });

  test('murder: up to MurderSize crows, then the Elder merges two or more answers', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['name the product']));
    triage(f, 'l-1', 1, { mode: 'murder' });
    for (const c of ['Pepper', 'Inky', 'Hugin']) assert.ok(f.apply(f.flying('l-1', 1, c)).length);
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Rook')), [], 'MurderSize is 3');
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Elder')), [], 'the Elder waits for every crow');
    for (const c of ['Pepper', 'Inky', 'Hugin']) f.apply(f.landed('l-1', 1, c));
    assert.equal(phase(f.s, 'l-1', 1), 'merge');
    f.apply(f.flying('l-1', 1, 'Elder'));
    assert.equal(phase(f.s, 'l-1', 1), 'merging');
    assert.deepEqual(f.apply(f.flying('l-1', 1, 'Rook')), [], 'no more crows once the Elder flies');
    f.apply(f.landed('l-1', 1, 'Elder', true, { output: 'Roost', tokens: 40 }));
    assert.equal(phase(f.s, 'l-1', 1), 'answer');
    assert.deepEqual(draftAnswer(f.s.lists.get('l-1')!.items[0]), { answer: 'Roost', crows: ['Pepper', 'Inky', 'Hugin'] });
    assert.equal(listStatus(f.s, 'l-1')!.tokens_used, 100 * 4 + 40);
  });

  test('Quill and Boss do not fly list items; unknown crows never fly', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    triage(f, 'l-1', 1);
    for (const c of ['Quill', 'Boss', 'Nobody', '__proto__', 'hugin']) assert.deepEqual(f.apply(f.flying('l-1', 1, c)), [], c);
  });
});

describe('the trust ledger', () => {
  test('three approvals in a row move a crow up one level; the change names those verdicts', () => {
    const f = flockLog();
    soloItem(f, 'l-1', 'Corvin', 'approved', 'code');
    soloItem(f, 'l-2', 'Corvin', 'approved', 'code');
    assert.equal(trustLevel(f.s, 'Corvin', 'code'), 0);
    const v = f.verdict('l-3', 1, 'output', 'approved');
    // preview what the third approval will do, before folding it
    f.apply(f.started('l-3', ['a']));
    triage(f, 'l-3', 1, { task_type: 'code' });
    f.apply(f.flying('l-3', 1, 'Corvin'));
    f.apply(f.landed('l-3', 1, 'Corvin'));
    f.apply(f.answered('l-3', 1, 'x', ['Corvin']));
    const preview = previewTrust(f.s, v);
    assert.deepEqual(preview, [
      {
        holder: 'Corvin',
        task_type: 'code',
        from: 0,
        to: 1,
        list_id: 'l-3',
        because: ['l-1', 'l-2', 'l-3'].map((l) => ({ list_id: l, item_id: `${l}-1`, target: 'output', verdict: 'approved', by: 'owner' })),
      },
    ]);
    const fx = f.apply(v);
    const change = fx.find((x) => x.kind === 'trust');
    if (change?.kind !== 'trust') throw new Error('the third approval changes trust');
    assert.deepEqual(change.change.because, preview[0].because);
    assert.equal(trustLevel(f.s, 'Corvin', 'code'), 1);
    assert.equal(trustLevel(f.s, 'Corvin', 'writing'), 0, 'trust is per task type');
    assert.equal(trustLevel(f.s, 'Hugin', 'code'), 0, 'and per crow');
    // the flock's triage calls were approved three times too
    assert.equal(trustLevel(f.s, 'flock', 'code'), 1);
  });

  test('trusted skips approval (auto); auto neither earns nor breaks a run', () => {
    const f = flockLog();
    for (let i = 1; i <= 6; i++) soloItem(f, `l-${i}`, 'Sable', 'approved', 'review');
    assert.equal(trustLevel(f.s, 'Sable', 'review'), 2, 'six approvals: trusted');
    assert.equal(trustLevel(f.s, 'flock', 'review'), 2);
    assert.equal(triageNeedsApproval(f.s, 'review'), false);
    soloItem(f, 'l-7', 'Sable', 'auto', 'review');
    assert.equal(trustLevel(f.s, 'Sable', 'review'), 2);
    const ledger = flockLedger(f.s);
    const sable = ledger.holders.find((h) => h.holder === 'Sable')!;
    assert.deepEqual({ level: sable.level, name: sable.level_name, approved: sable.approved, auto: sable.auto }, { level: 2, name: 'trusted', approved: 6, auto: 1 });
    // an output with a trusted and a stranger crow still needs approval
    assert.equal(outputNeedsApproval(f.s, 'review', ['Sable', 'Hugin']), true);
    assert.equal(outputNeedsApproval(f.s, 'review', ['Sable']), false);
  });

  test('a rejection or a timeout moves down one and ends the run; a stranger stays a stranger', () => {
    const f = flockLog();
    for (let i = 1; i <= 3; i++) soloItem(f, `l-${i}`, 'Pepper', 'approved');
    assert.equal(trustLevel(f.s, 'Pepper', 'writing'), 1);
    soloItem(f, 'l-4', 'Pepper', 'approved');
    soloItem(f, 'l-5', 'Pepper', 'approved');
    soloItem(f, 'l-6', 'Pepper', 'timeout');
    assert.equal(trustLevel(f.s, 'Pepper', 'writing'), 0, 'the timeout counts as a rejection');
    const last = f.s.history.at(-1)!;
    assert.deepEqual({ holder: last.holder, from: last.from, to: last.to, because: last.because }, {
      holder: 'Pepper',
      from: 1,
      to: 0,
      because: [{ list_id: 'l-6', item_id: 'l-6-1', target: 'output', verdict: 'timeout' }],
    });
    const peppers = () => f.s.history.filter((c) => c.holder === 'Pepper').length;
    const before = peppers();
    soloItem(f, 'l-7', 'Pepper', 'rejected');
    assert.equal(trustLevel(f.s, 'Pepper', 'writing'), 0);
    assert.equal(peppers(), before, 'no change below stranger');
    // after a rejection the run starts again from zero
    soloItem(f, 'l-8', 'Pepper', 'approved');
    soloItem(f, 'l-9', 'Pepper', 'approved');
    assert.equal(trustLevel(f.s, 'Pepper', 'writing'), 0);
    soloItem(f, 'l-10', 'Pepper', 'approved');
    assert.equal(trustLevel(f.s, 'Pepper', 'writing'), 1);
  });

  test('a rejected triage demotes the flock at that task type', () => {
    const f = flockLog();
    for (let i = 1; i <= 3; i++) soloItem(f, `l-${i}`, 'Rook', 'approved', 'data');
    assert.equal(trustLevel(f.s, 'flock', 'data'), 1);
    f.apply(f.started('l-9', ['a']));
    f.apply(f.flying('l-9', 1, 'Sentry'));
    f.apply(f.triaged('l-9', 1, { task_type: 'data' }));
    f.apply(f.landed('l-9', 1, 'Sentry'));
    const fx = f.apply(f.verdict('l-9', 1, 'triage', 'rejected'));
    assert.equal(trustLevel(f.s, 'flock', 'data'), 0);
    assert.deepEqual(
      fx.filter((x) => x.kind === 'trust').map((x) => x.kind === 'trust' && [x.change.holder, x.change.from, x.change.to]),
      [['flock', 1, 0]],
    );
  });

  test('every crow of a multi-crow answer shares its verdict', () => {
    const f = flockLog();
    for (let i = 1; i <= 3; i++) {
      const l = `l-${i}`;
      f.apply(f.started(l, ['a']));
      triage(f, l, 1, { mode: 'split', subtasks: ['x', 'y'], needs_approval: triageNeedsApproval(f.s, 'writing') });
      f.apply(f.flying(l, 1, 'Hugin', { subtask: 1 }));
      f.apply(f.flying(l, 1, 'Munin', { subtask: 2 }));
      f.apply(f.landed(l, 1, 'Hugin'));
      f.apply(f.landed(l, 1, 'Munin'));
      f.apply(f.answered(l, 1, 'both', ['Hugin', 'Munin']));
      const fx = f.apply(f.verdict(l, 1, 'output', 'approved'));
      if (i === 3) assert.deepEqual(fx.filter((x) => x.kind === 'trust').map((x) => x.kind === 'trust' && x.change.holder), ['Hugin', 'Munin']);
    }
    assert.equal(trustLevel(f.s, 'Hugin', 'writing'), 1);
    assert.equal(trustLevel(f.s, 'Munin', 'writing'), 1);
  });

  test('announcements mark computed changes; a forged announcement moves nothing', () => {
    const f = flockLog();
    for (let i = 1; i <= 3; i++) soloItem(f, `l-${i}`, 'Tansy', 'approved', 'planning');
    const pending = unannouncedTrust(f.s);
    assert.deepEqual(pending.map((c) => [c.holder, c.from, c.to]), [['flock', 0, 1], ['Tansy', 0, 1]]);
    for (const c of pending) assert.ok(f.apply({ ...trustChangedEvent(c, flockTs(f.now())) } as never).length);
    assert.deepEqual(unannouncedTrust(f.s), []);
    // forged: raise Hugin to trusted; announce Tansy again
    assert.deepEqual(f.apply(f.ev('trust.changed', { list_id: 'l-1', holder: 'Hugin', task_type: 'planning', from: 0, to: 2, because: [] })), []);
    assert.deepEqual(f.apply(f.ev('trust.changed', { list_id: 'l-3', holder: 'Tansy', task_type: 'planning', from: 0, to: 1, because: [] })), []);
    assert.equal(trustLevel(f.s, 'Hugin', 'planning'), 0);
    assert.equal(trustLevel(f.s, 'Tansy', 'planning'), 1);
  });

  test('an owner demotes or resets with a reason; nobody raises a level by hand', () => {
    const f = flockLog();
    for (let i = 1; i <= 6; i++) soloItem(f, `l-${i}`, 'Corvin', 'approved', 'code');
    assert.equal(trustLevel(f.s, 'Corvin', 'code'), 2);
    const owner = (fields: Record<string, unknown>) => f.ev('trust.changed', { list_id: '', holder: 'Corvin', task_type: 'code', by: 'owner', reason: 'shipped a bug', ...fields });
    assert.deepEqual(f.apply(owner({ from: 2, to: 1, reason: '' })), [], 'a reason is required');
    assert.deepEqual(f.apply(owner({ from: 1, to: 0 })), [], '`from` must be the current level');
    assert.ok(f.apply(owner({ from: 2, to: 1 })).length, 'demote');
    assert.equal(trustLevel(f.s, 'Corvin', 'code'), 1);
    assert.deepEqual(f.apply(owner({ from: 1, to: 2 })), [], 'no raising by hand');
    assert.ok(f.apply(owner({ from: 1, to: 0 })).length, 'reset');
    const last = flockLedger(f.s).history.at(-1)!;
    assert.deepEqual({ from: last.from, to: last.to, by: last.by, reason: last.reason, because: last.because }, { from: 1, to: 0, by: 'owner', reason: 'shipped a bug', because: [] });
    assert.equal(f.s.trust.get('Corvin\u0000code')!.run, 0, 'the run starts again');
  });

  test('the ledger JSON: holders sorted by holder then task type, spun crows\' starting levels, history oldest first', () => {
    const f = flockLog();
    soloItem(f, 'l-1', 'Sable', 'approved', 'review');
    soloItem(f, 'l-2', 'Hugin', 'rejected', 'research');
    f.apply(f.ev('crow.spun', { name: 'Nova', persona: 'Inky', trust: 'trusted', by: 'Boss' }));
    const l = flockLedger(f.s);
    assert.deepEqual(l.levels, ['stranger', 'regular', 'trusted']);
    assert.deepEqual(l.rules, { promote_after: 3, max_level: 2, demote_on: ['rejected', 'timeout'], auto_counts: false, self_counts: false });
    assert.deepEqual(l.holders.map((h) => `${h.holder}/${h.task_type}`), ['Hugin/research', 'Sable/review', 'flock/research', 'flock/review']);
    assert.deepEqual(l.starting, [{ holder: 'Nova', level: 1 }], 'a spun crow starts at regular at most');
    assert.equal(trustLevel(f.s, 'Nova', 'writing'), 1);
    assert.equal(JSON.stringify(JSON.parse(JSON.stringify(l))), JSON.stringify(l), 'plain JSON');
  });
});

describe('requesters, budgets and banter', () => {
  test('three strikes within ten minutes start a 60 s cooldown; each further one doubles it', () => {
    const f = flockLog();
    const strike = (reason = 'empty') => f.apply(f.ev('requester.strike', { requester: 'mallory', reason }));
    strike();
    strike('garbage');
    assert.equal(cooldownS(f.s, 'mallory', f.now()), 0);
    strike('rate');
    assert.equal(cooldownS(f.s, 'mallory', f.now()), 60);
    assert.equal(cooldownS(f.s, 'mallory', f.now() + 59_500), 1);
    assert.equal(cooldownS(f.s, 'mallory', f.now() + 60_000), 0);
    strike();
    assert.equal(cooldownS(f.s, 'mallory', f.now()), 120);
    assert.equal(cooldownS(f.s, 'alice', f.now()), 0, 'per requester');
    assert.deepEqual(f.apply(f.ev('requester.strike', { requester: 'mallory', reason: 'rude' })), [], 'strike reasons are a closed set');
    f.tick(11 * 60_000);
    strike();
    assert.equal(cooldownS(f.s, 'mallory', f.now()), 0, 'old strikes fall out of the window');
  });

  test('a sixth list within a minute is over the rate', () => {
    const f = flockLog(T0, 5_000);
    for (let i = 1; i <= 5; i++) {
      assert.equal(overRate(f.s, 'ann', f.now(), 'list'), false);
      f.apply(f.started(`l-${i}`, ['a']));
    }
    assert.equal(overRate(f.s, 'ann', f.now(), 'list'), true);
    assert.equal(overRate(f.s, 'ann', f.now() + 60_000, 'list'), false);
    assert.equal(overRate(f.s, 'bob', f.now(), 'list'), false);
  });

  test('requester.pranked is recorded on a flying list and nowhere else', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    assert.ok(f.apply(f.ev('requester.pranked', { list_id: 'l-1', message: 'slow down', cooldown_s: 60 })).length);
    assert.deepEqual(f.apply(f.ev('requester.pranked', { list_id: 'l-2', message: 'x', cooldown_s: 60 })), []);
    assert.equal(listStatus(f.s, 'l-1')!.pranks, 1);
  });

  test('budgets: the project default, per list at start and later; tokens from flights and banter', () => {
    const f = flockLog();
    assert.ok(f.apply(f.ev('budget.set', { token_budget: 50_000, by: 'owner' })).length);
    assert.deepEqual(f.apply(f.ev('budget.set', { token_budget: 10, by: 'owner' })), [], 'below the minimum');
    f.apply(f.started('l-1', ['a']));
    f.apply(f.started('l-2', ['a'], { token_budget: 9_000 }));
    assert.equal(listStatus(f.s, 'l-1')!.token_budget, 50_000);
    assert.equal(listStatus(f.s, 'l-2')!.token_budget, 9_000);
    assert.ok(f.apply(f.ev('list.budget', { list_id: 'l-2', token_budget: 20_000, by: 'owner' })).length);
    assert.equal(listStatus(f.s, 'l-2')!.token_budget, 20_000);
    f.apply(f.flying('l-1', 1, 'Sentry'));
    f.apply(f.landed('l-1', 1, 'Sentry', true, { tokens: 1234.9 }));
    assert.equal(listStatus(f.s, 'l-1')!.tokens_used, 1234);
    f.apply(f.ev('crow.banter', { list_id: 'l-1', item_id: 'l-1-1', crow: 'Hugin', to: 'Munin', text: 'Did you write that down?', tokens: 66 }));
    assert.equal(listStatus(f.s, 'l-1')!.tokens_used, 1300);
  });

  test('banter: at most two per list, started and then spoken or dropped; the list waits for it', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    const start = (crow: string, to: string) => f.apply(f.ev('banter.started', { list_id: 'l-1', item_id: 'l-1-1', crow, to }));
    assert.ok(start('Pepper', 'Inky').length);
    assert.ok(start('Sable', 'Corvin').length);
    assert.deepEqual(start('Rook', 'Tansy'), [], 'two per list');
    assert.deepEqual(f.apply(f.ev('crow.banter', { list_id: 'l-1', item_id: 'l-1-1', crow: 'Rook', to: 'Tansy', text: 'hm' })), [], 'no third line');
    assert.equal(inFlight(f.s).banter.length, 2);
    assert.ok(f.apply(f.ev('crow.banter', { list_id: 'l-1', item_id: 'l-1-1', crow: 'Pepper', to: 'Inky', text: 'Shorter.\nMuch shorter.', tokens: 30 })).length);
    f.apply(f.flying('l-1', 1, 'Sentry'));
    f.apply(f.landed('l-1', 1, 'Sentry', false));
    f.apply(f.skipped('l-1', 1, 'failure'));
    assert.equal(listStatus(f.s, 'l-1')!.can_finish, false, 'banter still in the air');
    assert.deepEqual(f.apply(f.finished('l-1')), []);
    assert.ok(f.apply(f.ev('banter.dropped', { list_id: 'l-1', item_id: 'l-1-1', crow: 'Sable', tokens: 12, reason: 'late' })).length);
    assert.ok(f.apply(f.finished('l-1')).length);
    const l = listStatus(f.s, 'l-1')!;
    assert.deepEqual(l.banter, { started: 2, lines: 1, open: 0 });
    assert.equal(l.tokens_used, 30 + 100 + 12);
  });

  test('banter with itself, or from a stranger, is no banter', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a']));
    for (const [crow, to] of [['Hugin', 'Hugin'], ['Nobody', 'Hugin'], ['Hugin', 'owner']])
      assert.deepEqual(f.apply(f.ev('crow.banter', { list_id: 'l-1', item_id: 'l-1-1', crow, to, text: 'hey' })), []);
  });
});

describe('restart', () => {
  test('what a restart must redo: flights with no landing, banter with no line', () => {
    const f = flockLog();
    f.apply(f.started('l-1', ['a', 'b']));
    f.apply(f.flying('l-1', 1, 'Sentry'));
    triage(f, 'l-1', 2);
    f.apply(f.flying('l-1', 2, 'Corvin'));
    f.apply(f.ev('banter.started', { list_id: 'l-1', item_id: 'l-1-2', crow: 'Corvin', to: 'Sable' }));
    f.apply(f.ev('nest.message', { nest_id: 'todo', msg_id: 'todo-1', kind: 'request', author: 'owner', text: 'anyone?', to: '', refers_to: '', tagged_by: 'jev' }));
    f.apply(f.ev('nest.flying', { nest_id: 'todo', msg_id: 'todo-1', crow: 'Quill' }));
    const shipped = flockFromJSON(JSON.parse(JSON.stringify(flockToJSON(f.s))));
    const r = inFlight(shipped);
    assert.deepEqual(r.flights.map((x) => [x.item_id, x.crow, x.role]), [['l-1-1', 'Sentry', 'triage'], ['l-1-2', 'Corvin', 'work']]);
    assert.deepEqual(r.nestFlights.map((x) => [x.msg_id, x.crow]), [['todo-1', 'Quill']]);
    assert.deepEqual(r.banter.map((x) => [x.item_id, x.crow, x.to]), [['l-1-2', 'Corvin', 'Sable']]);
    assert.deepEqual(unfinishedLists(shipped), ['l-1']);
  });

  /** Lists l-0 … l-(n-1), one item each, skipped on a failed triage and finished, in turn. */
  function finishLists(f: ReturnType<typeof flockLog>, n: number): void {
    for (let i = 0; i < n; i++) {
      const l = `l-${i}`;
      f.apply(f.started(l, ['a']));
      f.apply(f.flying(l, 1, 'Sentry'));
      f.apply(f.landed(l, 1, 'Sentry', false));
      f.apply(f.skipped(l, 1, 'failure'));
      f.apply(f.finished(l));
    }
  }

  test('finished lists past the cap are forgotten, and their ids stay used', () => {
    const f = flockLog();
    finishLists(f, FLOCK_LIMITS.keepFinishedLists + 1);
    assert.equal(f.s.lists.size, FLOCK_LIMITS.keepFinishedLists);
    assert.equal(listStatus(f.s, 'l-0'), undefined);
    assert.deepEqual(f.apply(f.started('l-0', ['again'])), [], 'a forgotten id is still used');
  });

  test('the ids of forgotten lists are remembered up to a bound, oldest let go first: the state does not grow with every list ever run', () => {
    const f = flockLog();
    finishLists(f, FLOCK_LIMITS.keepFinishedLists + FLOCK_LIMITS.rememberForgottenLists + 3);
    assert.equal(f.s.lists.size, FLOCK_LIMITS.keepFinishedLists);
    assert.equal(f.s.forgottenLists.size, FLOCK_LIMITS.rememberForgottenLists);
    // The three oldest are let go; the next one is still remembered as used.
    assert.equal(f.s.forgottenLists.has('l-2'), false);
    assert.deepEqual(f.apply(f.started('l-3', ['again'])), [], 'a remembered id is still used');
    // The snapshot holds the bound too, and comes back with it.
    const shipped = flockFromJSON(JSON.parse(JSON.stringify(flockToJSON(f.s))));
    assert.equal(shipped.forgottenLists.size, FLOCK_LIMITS.rememberForgottenLists);
  });
});

describe('nests', () => {
  test('create: the id is the slug of the name, unique; 1 to 8 roster crows; at most 20, todo counted', () => {
    const f = flockLog();
    assert.equal(nestSlug('  Launch Copy!! v2 '), 'launch-copy-v2');
    assert.ok(f.apply(f.ev('nest.created', { nest_id: 'launch-copy', name: 'Launch copy', crows: ['Pepper', 'Inky'], by: 'owner' })).length);
    assert.equal(nestRefusal(f.s, 'launch  COPY', ['Pepper']), 'taken');
    assert.equal(nestRefusal(f.s, 'todo', ['Pepper']), 'taken');
    assert.equal(nestRefusal(f.s, 'x'.repeat(41), ['Pepper']), 'bad name');
    assert.equal(nestRefusal(f.s, '!!!', ['Pepper']), 'bad name');
    assert.equal(nestRefusal(f.s, 'ok', []), 'bad crows');
    assert.equal(nestRefusal(f.s, 'ok', ['Pepper', 'Pepper']), 'bad crows');
    assert.equal(nestRefusal(f.s, 'ok', ['Quill']), 'bad crows', 'service roles are never members');
    assert.equal(nestRefusal(f.s, 'ok', ['Pepper']), '');
    assert.deepEqual(f.apply(f.ev('nest.created', { nest_id: 'wrong-slug', name: 'Right slug', crows: ['Pepper'] })), []);
    assert.deepEqual(f.apply(f.ev('nest.created', { nest_id: 'launch-copy', name: 'Launch copy', crows: ['Rook'] })), []);
    for (let i = 2; i <= 19; i++) assert.ok(f.apply(f.ev('nest.created', { nest_id: `n${i}`, name: `n${i}`, crows: ['Rook'] })).length, `n${i}`);
    assert.equal(nestRefusal(f.s, 'one more', ['Rook']), 'too many nests');
    assert.deepEqual(f.apply(f.ev('nest.created', { nest_id: 'n20', name: 'n20', crows: ['Rook'] })), []);
    const idx = nestsIndex(f.s);
    assert.deepEqual(idx.roster, WORKER_NAMES);
    assert.equal(idx.nests.length, 20);
    assert.deepEqual(idx.nests[0], { nest_id: 'todo', name: 'todo', crows: [] });
    assert.deepEqual(idx.nests[1], { nest_id: 'launch-copy', name: 'Launch copy', crows: ['Pepper', 'Inky'] });
  });

  test('messages are numbered <nest_id>-<n> from 1; kinds and authors follow the guardrails', () => {
    const f = flockLog();
    f.apply(f.ev('nest.created', { nest_id: 'launch', name: 'Launch', crows: ['Pepper', 'Inky'] }));
    assert.deepEqual(f.apply(f.message('launch', 2, {})), [], 'msg_id must be the next number');
    assert.ok(f.apply(f.message('launch', 1, { text: '  hello  ' })).length);
    assert.equal(nestMessages(f.s, 'launch', f.now())![0].text, 'hello');
    const refused = [
      { author: 'Rook', text: 'not a member' },
      { author: 'Pepper', kind: 'ask_owner', approval_phrase: 'yes' },
      { author: 'Pepper', kind: 'nudge' },
      { author: 'Pepper', kind: 'flag', to: 'Inky', refers_to: 'launch-1' },
      { author: 'owner', kind: 'nudge' },
      { author: 'Quill', kind: 'flag', to: 'Inky', refers_to: 'launch-1' },
      { author: 'owner', text: '   ' },
      { author: 'owner', refers_to: 'launch-99' },
      { author: 'owner', kind: 'shout' },
      { author: 'owner', tagged_by: 'guess' },
      { author: 'stranger' },
    ];
    for (const r of refused) assert.deepEqual(f.apply(f.message('launch', 2, r)), [], JSON.stringify(r));
    assert.ok(f.apply(f.message('launch', 2, { author: 'Pepper', kind: 'claim', refers_to: 'launch-1', tagged_by: 'header' })).length);
    assert.ok(f.apply(f.message('launch', 3, { author: 'harness', kind: 'nudge', to: 'Pepper', refers_to: 'launch-2' })).length);
    assert.ok(f.apply(f.message('launch', 4, { author: 'Quill', kind: 'ask_owner', approval_phrase: 'Ship It', to: 'owner' })).length);
    assert.ok(f.apply(f.message('launch', 5, { author: 'Boss', kind: 'say', text: 'noted' })).length, 'service roles post in every nest');
    assert.ok(f.apply(f.message('launch', 6, { author: 'owner', kind: 'request', text: 'ideas?', mode: 'conspiracy', mode_tagged_by: 'jev' })).length);
    const recs = nestMessages(f.s, 'launch', f.now())!;
    assert.deepEqual(recs.map((r) => r.msg_id), ['launch-1', 'launch-2', 'launch-3', 'launch-4', 'launch-5', 'launch-6']);
    assert.deepEqual(recs[5], {
      nest_id: 'launch',
      ts: recs[5].ts,
      msg_id: 'launch-6',
      kind: 'request',
      author: 'owner',
      text: 'ideas?',
      to: '',
      refers_to: '',
      tagged_by: 'default',
      mode: 'conspiracy',
      mode_tagged_by: 'jev',
      invited: 3,
      approval_phrase: '',
      resolved: '',
    });
    assert.equal(recs[0].mode, '', 'mode is on requests only');
    assert.equal(nestMessages(f.s, 'nowhere', f.now()), undefined);
  });

  test('ask_owner: the exact phrase approves; any other owner reply leaves it open; the window passing (or an inbox no) rejects', () => {
    const f = flockLog();
    const ask = (n: number, extra: Record<string, unknown> = {}) => f.apply(f.message('todo', n, { author: 'Sentry', kind: 'ask_owner', text: 'Lift the quarantine?', approval_phrase: 'Lift Hugin', ...extra }));
    ask(1);
    assert.equal(nestMessages(f.s, 'todo', f.now())![0].resolved, '', 'a fresh ask is open');
    assert.deepEqual(openAsks(f.s, f.now()).map((a) => a.msg_id), ['todo-1']);
    f.apply(f.message('todo', 2, { author: 'owner', text: '  LIFT hugin ', refers_to: 'todo-1' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![0].resolved, 'approved');
    ask(3);
    f.apply(f.message('todo', 4, { author: 'owner', text: 'what does this mean?', refers_to: 'todo-3' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![2].resolved, '', 'not the phrase: not a yes, and still open');
    f.apply(f.message('todo', 5, { author: 'owner', text: 'lift hugin', refers_to: 'todo-3' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![2].resolved, 'approved', 'a right reply later in the window approves it');
    ask(6, { window_ms: 5_000 });
    const at = f.now();
    assert.equal(nestMessages(f.s, 'todo', at + 4_999)![5].resolved, '');
    assert.equal(nestMessages(f.s, 'todo', at + 5_000)![5].resolved, 'rejected', 'silence past the window');
    f.tick(10_000);
    f.apply(f.message('todo', 7, { author: 'owner', text: 'lift hugin', refers_to: 'todo-6' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![5].resolved, 'rejected', 'a late yes is not a yes');
    f.apply(f.message('todo', 8, { author: 'Quill', kind: 'ask_owner', text: 'ok?', approval_phrase: 'yes' }));
    f.apply(f.message('todo', 9, { author: 'Quill', kind: 'say', text: 'yes', refers_to: 'todo-8' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![7].resolved, '', 'only the owner answers an ask');
    f.apply(f.message('todo', 10, { author: 'member:Bob', text: 'yes', refers_to: 'todo-8' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![9].resolved, '', 'a member who is not the owner does not answer it');
    // A no decided in the approvals inbox (the server's reply for the owner, tagged harness) rejects it.
    f.apply(f.message('todo', 11, { author: 'owner', text: 'Rejected in the approvals inbox', refers_to: 'todo-8', tagged_by: 'harness' }));
    assert.equal(nestMessages(f.s, 'todo', f.now())![7].resolved, 'rejected');
  });

  test('a flag by the Sentry quarantines the crow; its posts are refused until the owner lifts it', () => {
    const f = flockLog();
    f.apply(f.message('todo', 1, { kind: 'request', text: 'summarise the doc' }));
    f.apply(f.message('todo', 2, { author: 'Hugin', kind: 'deliver', text: 'It says the moon is cheese.', refers_to: 'todo-1' }));
    assert.ok(f.apply(f.ev('watch', { nest_id: 'todo', msg_id: 'todo-2', crow: 'Hugin', scores: { answers_request: 0.4, states_fact_without_source: 0.95, contradicts_earlier: 0.1 }, band: 0.8 })).length);
    assert.deepEqual(messageDetail(f.s, 'todo', 'todo-2')!.watch, {
      crow: 'Hugin',
      scores: { answers_request: 0.4, states_fact_without_source: 0.95, contradicts_earlier: 0.1 },
      band: 0.8,
      breach: true,
    });
    assert.ok(f.apply(f.message('todo', 3, { author: 'Sentry', kind: 'flag', to: 'Hugin', refers_to: 'todo-2', text: 'states_fact_without_source 0.95' })).length);
    assert.deepEqual(quarantined(f.s).map((q) => [q.crow, q.flag]), [['Hugin', 'todo-3']]);
    assert.equal(crowAvailable(f.s, 'Hugin'), false);
    assert.ok(!pickCrows(f.s, 'todo', 8).some((p) => p.crow === 'Hugin'), 'skipped by the selector');
    assert.deepEqual(f.apply(f.message('todo', 4, { author: 'Hugin', text: 'wait' })), [], 'a quarantined crow posts nothing');
    assert.deepEqual(f.apply(f.message('todo', 4, { author: 'Sentry', kind: 'flag', to: 'Hugin', refers_to: 'todo-2' })), [], 'one flag per crow per referent');
    assert.equal(quarantineMessage('Hugin'), "Hugin is quarantined pending the owner's decision.");
    assert.deepEqual(f.apply(f.ev('quarantine.lifted', { crow: 'Hugin' })), [], 'lifting names who decided');
    assert.ok(f.apply(f.ev('quarantine.lifted', { crow: 'Hugin', by: 'owner', ask: 'todo-5' })).length);
    assert.deepEqual(quarantined(f.s), []);
    assert.ok(f.apply(f.message('todo', 4, { author: 'Hugin', text: 'thanks' })).length);
  });

  test('the watchdog band rule', () => {
    const s = (a: number, f: number, c: number) => ({ answers_request: a, states_fact_without_source: f, contradicts_earlier: c });
    assert.equal(isBreach(s(0.9, 0.1, 0.1), 0.8), false);
    assert.equal(isBreach(s(0.9, 0.8, 0.1), 0.8), true, 'at the band');
    assert.equal(isBreach(s(0.9, 0.1, 0.85), 0.8), true);
    assert.equal(isBreach(s(0.2, 0.1, 0.1), 0.8), true, 'answers_request at or below 1 - band');
    assert.equal(isBreach(s(0.21, 0.1, 0.1), 0.8), false);
  });

  test('Jev tags are kept with their probabilities, once per question', () => {
    const f = flockLog();
    f.apply(f.message('todo', 1, { kind: 'request', text: 'can someone check this?', tagged_by: 'jev' }));
    const tag = (question: string, probs: unknown) => f.apply(f.ev('jev.tag', { nest_id: 'todo', msg_id: 'todo-1', question, probs, band: 0.8, source: 'embedded' }));
    assert.deepEqual(tag('kind', { shout: 1 }), [], 'no known label');
    assert.ok(tag('kind', { request: 0.91, say: 0.07, claim: 0.02, __proto__: 0.5, bogus: 2 }).length);
    assert.deepEqual(tag('kind', { say: 1 }), [], 'once per question');
    assert.ok(tag('mode', { solo: 0.6, conspiracy: 0.3, split: 0.1 }).length);
    const d = messageDetail(f.s, 'todo', 'todo-1')!;
    assert.deepEqual(d.jev.kind, { probs: { request: 0.91, say: 0.07, claim: 0.02 }, band: 0.8, source: 'embedded' });
    assert.equal(d.jev.mode!.probs.solo, 0.6);
  });

  test('crows are picked core-first rotating, then borrowed rotating; todo borrows nothing', () => {
    const f = flockLog();
    f.apply(f.ev('nest.created', { nest_id: 'launch', name: 'Launch', crows: ['Pepper', 'Inky'] }));
    assert.deepEqual(pickCrows(f.s, 'launch', 3), [
      { crow: 'Pepper', borrowed: false },
      { crow: 'Inky', borrowed: false },
      { crow: 'Hugin', borrowed: true },
    ]);
    f.apply(f.started('l-1', ['a', 'b'], { nest_id: 'launch' }));
    triage(f, 'l-1', 1, { mode: 'murder' });
    f.apply(f.flying('l-1', 1, 'Pepper'));
    assert.deepEqual(pickCrows(f.s, 'launch', 2, ['Pepper']).map((p) => p.crow), ['Inky', 'Hugin'], 'the core rotates from after Pepper');
    f.apply(f.flying('l-1', 1, 'Hugin', { borrowed: false }));
    assert.equal(f.s.lists.get('l-1')!.items[0].flights.get('Hugin')!.borrowed, true, '`borrowed` is computed, not taken from the event');
    assert.deepEqual(pickCrows(f.s, 'launch', 4, ['Pepper', 'Hugin']).map((p) => p.crow), ['Inky', 'Munin', 'Corvin', 'Sable'], 'borrowing rotates from after Hugin');
    assert.deepEqual(pickCrows(f.s, 'todo', 2), [
      { crow: 'Hugin', borrowed: false },
      { crow: 'Munin', borrowed: false },
    ]);
    // a crow at its flight cap is skipped
    for (let i = 0; i < FLOCK_LIMITS.crowFlights; i++) {
      const l = `c-${i}`;
      f.apply(f.started(l, ['a'], { nest_id: 'launch' }));
      triage(f, l, 1);
      f.apply(f.flying(l, 1, 'Inky'));
    }
    assert.equal(crowAvailable(f.s, 'Inky'), false);
    assert.ok(!pickCrows(f.s, 'launch', 8).some((p) => p.crow === 'Inky'));
  });

  test('picks not folded yet (pending) count as in the air and advance the rotation: picks from one state spread over the flock', () => {
    const f = flockLog();
    f.apply(f.ev('nest.created', { nest_id: 'launch', name: 'Launch', crows: ['Pepper', 'Inky'] }));
    // todo: each pick after the last rotates on, as if the ones before had flown.
    const pending: { crow: string; nest_id: string }[] = [];
    for (let i = 0; i < 12; i++) pending.push({ crow: pickCrows(f.s, 'todo', 1, [], pending)[0].crow, nest_id: 'todo' });
    assert.deepEqual(pending.map((p) => p.crow), [...WORKER_NAMES, ...WORKER_NAMES.slice(0, 4)]);
    // A nest: the core rotates and fills to its cap (4 each) before anything is borrowed.
    const inNest: { crow: string; nest_id: string }[] = [];
    const got: { crow: string; borrowed: boolean }[] = [];
    for (let i = 0; i < 10; i++) {
      const p = pickCrows(f.s, 'launch', 1, [], inNest)[0];
      got.push(p);
      inNest.push({ crow: p.crow, nest_id: 'launch' });
    }
    assert.deepEqual(got.slice(0, 8).map((p) => p.crow), ['Pepper', 'Inky', 'Pepper', 'Inky', 'Pepper', 'Inky', 'Pepper', 'Inky']);
    assert.ok(got.slice(0, 8).every((p) => !p.borrowed));
    assert.deepEqual(got.slice(8), [{ crow: 'Hugin', borrowed: true }, { crow: 'Munin', borrowed: true }]);
    // Another nest's pending flights take places in the flock, not its rotation.
    assert.equal(pickCrows(f.s, 'todo', 1, [], inNest)[0].crow, 'Hugin');
    assert.equal(pickCrows(f.s, 'todo', 8, [], inNest).length, 6, 'Pepper and Inky are at their cap');
  });

  test('nest flights: must-respond counts responders and crows in the air; borrowed crows become members', () => {
    const f = flockLog();
    f.apply(f.ev('nest.created', { nest_id: 'launch', name: 'Launch', crows: ['Pepper'] }));
    f.apply(f.message('launch', 1, { kind: 'request', text: 'tagline?', mode: 'conspiracy', mode_tagged_by: 'jev', invited: 2 }));
    f.apply(f.message('launch', 2, { kind: 'say', text: 'just chatting' }));
    assert.deepEqual(pendingResponses(f.s, 'launch').map((p) => [p.msg_id, p.needed]), [['launch-1', 2]]);
    assert.deepEqual(f.apply(f.message('launch', 3, { author: 'Rook', kind: 'claim', refers_to: 'launch-1' })), [], 'Rook is no member yet');
    f.apply(f.ev('nest.flying', { nest_id: 'launch', msg_id: 'launch-1', crow: 'Pepper' }));
    f.apply(f.ev('nest.flying', { nest_id: 'launch', msg_id: 'launch-1', crow: 'Rook' }));
    assert.equal(f.s.nests.get('launch')!.flights.get('launch-1\u0000Rook')!.borrowed, true);
    assert.deepEqual(pendingResponses(f.s, 'launch'), [], 'two crows in the air');
    assert.ok(f.apply(f.message('launch', 3, { author: 'Rook', kind: 'claim', refers_to: 'launch-1' })).length, 'invited: now a member');
    f.apply(f.ev('nest.landed', { nest_id: 'launch', msg_id: 'launch-1', crow: 'Rook', ok: true, tokens: 50 }));
    f.apply(f.ev('nest.landed', { nest_id: 'launch', msg_id: 'launch-1', crow: 'Pepper', ok: false, tokens: 0, error: 'timeout' }));
    const p = pendingResponses(f.s, 'launch');
    assert.deepEqual(p.map((x) => [x.msg_id, x.responders, x.flying, x.sent]), [['launch-1', ['Rook'], [], ['Pepper', 'Rook']]], 'Pepper failed: one more response wanted');
    assert.equal(f.s.nests.get('launch')!.tokens, 50);
    f.apply(f.message('launch', 4, { kind: 'request', text: 'Quill, a summary', to: 'Quill' }));
    f.apply(f.message('launch', 5, { author: 'Quill', kind: 'deliver', text: 'here', refers_to: 'launch-4' }));
    assert.ok(!pendingResponses(f.s, 'launch').some((x) => x.msg_id === 'launch-4'), 'a service role responds with any message');
  });

  test('spun crows: at most 8, names unique against personas and the registry, trust clamped to regular', () => {
    const f = flockLog();
    const spin = (name: unknown, persona: unknown = 'Inky', trust: unknown = 'stranger') => f.apply(f.ev('crow.spun', { name, persona, trust, by: 'Boss', nest_id: 'todo' }));
    assert.equal(spinRefusal(f.s, 'hugin', 'Inky'), 'name taken');
    assert.equal(spinRefusal(f.s, 'Owner', 'Inky'), 'name taken');
    assert.equal(spinRefusal(f.s, 'Nova', 'Quill'), 'persona unknown');
    assert.equal(spinRefusal(f.s, '  Nova', 'Inky'), 'bad name');
    assert.deepEqual(spin('hugin'), []);
    assert.ok(spin('Nova', 'Pepper', 'trusted').length);
    assert.deepEqual(spin('NOVA'), [], 'taken in the registry, ignoring case');
    for (const n of ['Ash', 'Birch', 'Cedar', 'Dune', 'Elm', 'Fern', 'Gale']) assert.ok(spin(n).length, n);
    assert.equal(spinRefusal(f.s, 'Hazel', 'Inky'), 'cap reached');
    assert.deepEqual(spin('Hazel'), []);
    const reg = spunCrows(f.s);
    assert.equal(reg.length, 8);
    assert.deepEqual(reg.map((c) => c.name), ['Ash', 'Birch', 'Cedar', 'Dune', 'Elm', 'Fern', 'Gale', 'Nova']);
    assert.deepEqual(reg.at(-1), { name: 'Nova', persona: 'Pepper', trust: 'regular' });
    // a spun crow is an ordinary crow: it flies, and comes last in rotation from outside the core
    assert.equal(pickCrows(f.s, 'todo', 16).at(-1)!.crow, 'Nova');
  });

  test('MaxSpunCrows is the cap the spin-up carries (a setting): a lower one refuses sooner, a higher one admits more, up to maxSpunCap', () => {
    const f = flockLog();
    const spin = (name: string, cap?: number) => f.apply(f.ev('crow.spun', { name, persona: 'Inky', trust: 'regular', by: 'Boss', ...(cap === undefined ? {} : { cap }) }));
    assert.ok(spin('Ash', 2).length);
    assert.ok(spin('Birch', 2).length);
    assert.equal(spinRefusal(f.s, 'Cedar', 'Inky', 2), 'cap reached');
    assert.deepEqual(spin('Cedar', 2), []);
    for (const n of ['Cedar', 'Dune', 'Elm', 'Fern', 'Gale', 'Hazel', 'Iris', 'Juniper']) assert.ok(spin(n, 10).length, n);
    assert.equal(f.s.spun.size, 10);
    assert.deepEqual(spin('Kale', 10), []);
    assert.deepEqual(spin('Kale'), [], 'no cap on the event: the default (8)');
    assert.equal(spinRefusal(f.s, 'Kale', 'Inky', 1000), '', 'above maxSpunCap counts as maxSpunCap');
    assert.equal(spunCrows(f.s).find((c) => c.name === 'Ash')!.trust, 'regular');
  });

  test('nest.dropped: a request to the Boss is dropped only while the flock is saturated, and then wants no crow', () => {
    const f = flockLog();
    f.apply(f.message('todo', 1, { kind: 'request', to: 'Boss', text: 'Boss, spin Nova on Inky.', tagged_by: 'jev' }));
    f.apply(f.message('todo', 2, { kind: 'request', to: 'Quill', text: 'Quill, a summary', tagged_by: 'jev' }));
    const drop = (msg_id: string, crow = 'Boss') => f.apply(f.ev('nest.dropped', { nest_id: 'todo', msg_id, crow, reason: 'saturated' }));
    assert.deepEqual(drop('todo-1'), [], 'the flock has room: refused');
    // 64 flights in the air (nest flights: 4 per worker, 16 per service role).
    for (let i = 0; i < 64; i++) {
      f.apply(f.message('todo', 3 + i, { kind: 'request', text: `job ${i}`, tagged_by: 'jev' }));
      f.apply(f.ev('nest.flying', { nest_id: 'todo', msg_id: `todo-${3 + i}`, crow: i < 32 ? WORKER_NAMES[i % 8] : ['Quill', 'Elder', 'Sentry', 'Boss'][i % 4] }));
    }
    assert.equal(f.s.airborne.size, 64);
    assert.deepEqual(drop('todo-2', 'Quill'), [], 'only the Boss');
    assert.deepEqual(drop('todo-2'), [], 'only a request to the Boss');
    assert.ok(drop('todo-1').length);
    assert.ok(!pendingResponses(f.s, 'todo').some((p) => p.msg_id === 'todo-1'), 'it wants no crow, ever');
    assert.deepEqual(drop('todo-1'), [], 'once');
  });
});

describe('a list\'s stream alone (the browser)', () => {
  test('seeded with the public nests and crows, a list-only fold accepts what the server accepted', () => {
    const server = flockLog();
    server.apply(server.ev('nest.created', { nest_id: 'launch', name: 'Launch', crows: ['Pepper'] }));
    server.apply(server.ev('crow.spun', { name: 'Nova', persona: 'Inky', trust: 'regular', by: 'Boss' }));
    const list = [
      server.started('l-1', ['name it'], { nest_id: 'launch', token_budget: 50_000 }),
      server.flying('l-1', 1, 'Sentry'),
      server.triaged('l-1', 1),
      server.landed('l-1', 1, 'Sentry'),
      server.verdict('l-1', 1, 'triage', 'approved'),
      server.flying('l-1', 1, 'Nova', { borrowed: true }),
    ];
    for (const e of list) assert.ok(server.apply(e).length);
    const bare = emptyFlock();
    assert.deepEqual(applyFlock(bare, list[0]), [], 'without context the nest is unknown');
    const view = emptyFlock();
    assert.equal(seedFlock(view, { nests: nestsIndex(server.s).nests, crows: spunCrows(server.s) }), 2, 'launch and Nova (todo is known already)');
    assert.equal(seedFlock(view, { nests: [{ nest_id: 'x y', name: 'x', crows: [] }, 'junk'], crows: [{ name: 'Hugin', persona: 'Inky' }] }), 0, 'bad or taken entries are skipped');
    for (const e of list) assert.ok(applyFlock(view, e).length, e.type);
    assert.deepEqual(listStatus(view, 'l-1')!.items, listStatus(server.s, 'l-1')!.items);
    assert.equal(view.lists.get('l-1')!.items[0].flights.get('Nova')!.borrowed, true);
  });
});

describe('prototype ids and hostile shapes', () => {
  test('ids such as __proto__ and constructor fold as ordinary ids', () => {
    const f = flockLog();
    for (const l of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      assert.ok(f.apply(f.started(l, ['a'], { requester: l })).length, l);
      triage(f, l, 1);
    }
    assert.ok(f.apply(f.ev('nest.created', { nest_id: 'constructor', name: 'Constructor', crows: ['Rook'] })).length);
    f.apply(f.ev('requester.strike', { requester: '__proto__', reason: 'empty' }));
    assert.equal(f.s.lists.size, 4);
    assert.equal(listStatus(f.s, '__proto__')!.items[0].item_id, '__proto__-1');
    assert.equal(({} as Record<string, unknown>).requester, undefined);
    assert.equal(listStatus(f.s, 'valueOf'), undefined);
    assert.equal(cooldownS(f.s, 'toString', f.now()), 0);
    assert.equal(trustLevel(f.s, '__proto__', 'code'), 0);
    const shipped = flockFromJSON(JSON.parse(JSON.stringify(flockToJSON(f.s))));
    assert.deepEqual(flockToJSON(shipped), flockToJSON(f.s));
  });

  test('non-objects and wrong field types are ignored outright', () => {
    const s = emptyFlock();
    const before = JSON.stringify(flockToJSON(s));
    for (const e of [null, undefined, 0, 'list.started', [], [{ type: 'list.started' }], true, { type: 'list.started' }, { type: 'nope', ts: flockTs(T0) }])
      assert.deepEqual(applyFlock(s, e), []);
    assert.equal(JSON.stringify(flockToJSON(s)), before);
  });

  test('RFC 3339 times only', () => {
    assert.equal(flockTime('2026-12-01T09:00:00Z'), T0);
    assert.equal(flockTime('2026-12-01T09:00:00.250Z'), T0 + 250);
    assert.equal(flockTime('2026-12-01T10:30:00+01:30'), T0);
    assert.equal(flockTime('2026-12-01T07:00:00-02:00'), T0);
    for (const bad of [
      '2026-12-01',
      '2026-12-01 09:00:00Z',
      'Tue, 01 Dec 2026 09:00:00 GMT',
      '2026-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-12-01T09:00:00.Z',
      '2026-12-01T09:00:00+0100',
      '2026-12-01T09:00:00Zjunk',
      1_700_000_000_000,
      '',
      '2026-12-01T09:00:00Z'.padEnd(50, '0'),
    ])
      assert.equal(flockTime(bad), undefined, String(bad));
    assert.equal(flockTime('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
    // the same instant as the engine's own ISO form, across four centuries and before 1970
    for (let ms = -2e12; ms < 4e12; ms += 7_777_777_777) assert.equal(flockTime(new Date(ms).toISOString()), ms);
  });

  test('the lease: a claim wins when nobody holds a live one; the holder renews; release frees it', () => {
    const f = flockLog();
    assert.ok(f.apply(f.ev('lease.claimed', { node: 'a', ttl_ms: 30_000 })).length);
    assert.deepEqual(f.apply(f.ev('lease.claimed', { node: 'b', ttl_ms: 30_000 })), [], 'a holds it');
    assert.equal(leaseHolder(f.s, f.now()), 'a');
    assert.ok(f.apply(f.ev('lease.claimed', { node: 'a', ttl_ms: 30_000 })).length, 'renewal');
    f.tick(30_000);
    assert.equal(leaseHolder(f.s, f.now()), '');
    assert.ok(f.apply(f.ev('lease.claimed', { node: 'b', ttl_ms: 30_000 })).length, 'expired: b takes over');
    assert.deepEqual(f.apply(f.ev('lease.released', { node: 'a' })), []);
    assert.ok(f.apply(f.ev('lease.released', { node: 'b' })).length);
    assert.equal(leaseHolder(f.s, f.now()), '');
  });
});

describe('list text at the edge', () => {
  test('one item per line: bullets, numbers and checkboxes stripped, blank lines and rules skipped', () => {
    const r = parseListText('# not a heading rule\n- write the notes\n* [ ] fix the build\n\n  3. [x] ship it  \n---\n• tidy\n(2) review\n+ [] plan\na) name it\n[ ] bare box\r\nA. Smith to call\n-\n7.\nplain line');
    assert.deepEqual(r, { ok: true, items: ['# not a heading rule', 'write the notes', 'fix the build', 'ship it', 'tidy', 'review', 'plan', 'name it', 'bare box', 'A. Smith to call', 'plain line'] });
  });

  test('empty and garbage lists are refused with the strike they earn', () => {
    assert.deepEqual(parseListText('\n \n- \n---\n'), { ok: false, strike: 'empty', message: 'the list has no items: write one task per line' });
    const g = parseListText('fine\n!!!???');
    assert.equal(g.ok, false);
    assert.equal(!g.ok && g.strike, 'garbage');
    assert.match(!g.ok ? g.message : '', /line 2/);
    assert.equal(parseListText(Array.from({ length: 101 }, (_, i) => `task ${i}`).join('\n')).ok, false);
    assert.equal(parseListText(Array.from({ length: 100 }, (_, i) => `task ${i}`).join('\n')).ok, true);
    assert.equal(parseListText('x'.repeat(2001)).ok, false);
    assert.equal(parseListText(' ' + 'x'.repeat(2000) + ' ').ok, true, '2,000 after trimming');
  });
});

describe('personas', () => {
  test('eight workers and four service roles, each with name, epithet, strength and backstory; names unique and unreserved', () => {
    assert.equal(WORKER_NAMES.length, 8);
    assert.deepEqual(SERVICE_NAMES, ['Sentry', 'Elder', 'Quill', 'Boss']);
    const recs = personaRecords();
    assert.equal(recs.length, 12);
    for (const r of recs) {
      assert.deepEqual(Object.keys(r), ['name', 'epithet', 'strength', 'backstory']);
      for (const v of Object.values(r)) assert.ok(v.length > 3);
    }
    const lower = PERSONAS.map((p) => p.name.toLowerCase());
    assert.equal(new Set(lower).size, lower.length);
    for (const r of RESERVED_NAMES) assert.ok(!lower.includes(r.toLowerCase()));
    assert.match(relationOf('Corvin', 'Sable'), /Sable reviews/);
    assert.equal(relationOf('Sable', 'Corvin'), relationOf('Corvin', 'Sable'));
    assert.ok(relationOf('Hugin', 'Boss').length > 0);
  });
});

describe('the trust ledger: who may earn it', () => {
  test("an approval by the list's requester earns nothing (no level, no run); another member's does", () => {
    const f = flockLog();
    for (const l of ['l-1', 'l-2', 'l-3', 'l-4']) {
      assert.ok(f.apply(f.started(l, ['a'], { requester: 'bob' })).length);
      assert.ok(f.apply(f.flying(l, 1, 'Sentry')).length);
      assert.ok(f.apply(f.triaged(l, 1, { needs_approval: true, task_type: 'code' })).length);
      assert.ok(f.apply(f.landed(l, 1, 'Sentry')).length);
    }
    for (const l of ['l-1', 'l-2', 'l-3']) assert.ok(f.apply(f.verdict(l, 1, 'triage', 'approved', 'bob')).length, 'the verdict itself is taken');
    const l = flockLedger(f.s);
    const flock = l.holders.find((h) => h.holder === 'flock' && h.task_type === 'code')!;
    assert.equal(trustLevel(f.s, 'flock', 'code'), 0);
    assert.deepEqual([flock.run, flock.approved], [0, 0]);
    assert.deepEqual(l.history, []);
    // Somebody else's approval starts a run.
    assert.ok(f.apply(f.verdict('l-4', 1, 'triage', 'approved', 'carl')).length);
    assert.equal(flockLedger(f.s).holders.find((h) => h.holder === 'flock')!.run, 1);
  });
});

describe('people in nests and the owner\'s direct actions', () => {
  test('members post as member:<name>; the rate is the person\'s (`by`), not the label\'s', () => {
    const f = flockLog();
    assert.ok(f.apply(f.message('todo', 1, { author: 'member:Bob', text: 'hi', by: 'Bob' })).length, 'a member of the project posts');
    assert.deepEqual(f.apply(f.message('todo', 2, { author: 'Bob', text: 'hi' })), [], 'a bare name is nobody');
    assert.deepEqual(f.apply(f.message('todo', 2, { author: 'member:Bob', kind: 'ask_owner', text: 'ok?', approval_phrase: 'ok' })), [], 'a member parks no ask');
    for (let n = 2; n <= FLOCK_LIMITS.postsPerMinute + 1; n++) f.apply(f.message('todo', n, { author: 'owner', text: `post ${n}`, by: 'Ann' }));
    assert.ok(overRate(f.s, 'Ann', f.now(), 'post'));
    assert.ok(!overRate(f.s, 'Bob', f.now(), 'post'));
    assert.ok(!overRate(f.s, 'owner', f.now(), 'post'), 'the label "owner" is nobody\'s rate');
  });

  test('one cleaning of a nest name for the edge and the fold', () => {
    assert.equal(cleanNestName('  q\u0001r  '), 'qr');
    assert.equal(cleanNestName('tab\there\nand  there'), 'tab here and there');
    assert.equal(cleanNestName('\u0001'), undefined);
    assert.equal(cleanNestName('x'.repeat(41)), undefined);
    const f = flockLog();
    assert.equal(nestRefusal(f.s, 'q\u0001r', ['Hugin']), '');
    assert.ok(f.apply(f.ev('nest.created', { nest_id: nestSlug(cleanNestName('q\u0001r')!), name: 'q\u0001r', crows: ['Hugin'] })).length);
    assert.equal(f.s.nests.get('qr')!.name, 'qr');
  });

  test('rename, delete, remove a spun crow, lift: each one event, refused when it cannot apply', () => {
    const f = flockLog();
    assert.ok(f.apply(f.ev('nest.created', { nest_id: 'room', name: 'Room', crows: ['Hugin'] })).length);
    assert.ok(f.apply(f.message('room', 1, { author: 'owner', text: 'keep me' })).length);
    assert.deepEqual(f.apply(f.ev('nest.renamed', { nest_id: 'room', name: 'New name' })), [], 'by whom is required');
    assert.ok(f.apply(f.ev('nest.renamed', { nest_id: 'room', name: ' New   name ', by: 'Ann' })).length);
    assert.equal(f.s.nests.get('room')!.name, 'New name');
    assert.deepEqual(f.apply(f.ev('nest.renamed', { nest_id: 'todo', name: 'Other', by: 'Ann' })), []);
    // Busy: a crow in the air for it.
    assert.ok(f.apply(f.ev('nest.flying', { nest_id: 'room', msg_id: 'room-1', crow: 'Hugin' })).length);
    assert.equal(nestDeleteRefusal(f.s, 'room'), 'busy');
    assert.deepEqual(f.apply(f.ev('nest.deleted', { nest_id: 'room', by: 'Ann' })), []);
    assert.ok(f.apply(f.ev('nest.landed', { nest_id: 'room', msg_id: 'room-1', crow: 'Hugin', ok: true, tokens: 1 })).length);
    assert.ok(f.apply(f.ev('nest.deleted', { nest_id: 'room', by: 'Ann' })).length);
    assert.ok(!f.s.nests.has('room'));
    assert.equal(nestRefusal(f.s, 'Room', ['Hugin']), 'taken', 'a deleted id stays its old messages\'');
    assert.deepEqual(f.apply(f.ev('nest.created', { nest_id: 'room', name: 'Room', crows: ['Hugin'] })), []);
    assert.deepEqual(f.apply(f.ev('nest.deleted', { nest_id: 'todo', by: 'Ann' })), []);
    // A snapshot keeps the reserved ids.
    assert.ok(flockFromJSON(flockToJSON(f.s)).goneNests.has('room'));
    // A spun crow removed: gone, its trust with it; a persona crow is not removable.
    assert.ok(f.apply(f.ev('crow.spun', { name: 'Wren', persona: 'Pepper', trust: 'regular', by: 'Boss' })).length);
    assert.equal(crowRemoveRefusal(f.s, 'Pepper'), 'unknown');
    assert.ok(f.apply(f.ev('crow.removed', { name: 'Wren', by: 'Ann', reason: 'test' })).length);
    assert.ok(!f.s.spun.has('Wren'));
    assert.equal(trustLevel(f.s, 'Wren', 'writing'), 0);
    assert.deepEqual(f.apply(f.ev('crow.removed', { name: 'Wren', by: 'Ann', reason: 'again' })), []);
  });
});
