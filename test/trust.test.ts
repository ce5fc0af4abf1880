// The one trust ledger's rules (src/core/trust.ts), on a book of its own:
// the flock's crows and the coding agents' teams are judged by these alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_TRUST,
  PROMOTE_AFTER,
  announce,
  earnedBy,
  entryOf,
  judge,
  levelOf,
  ownerLowers,
  recordChange,
  trustKey,
  type LedgerChange,
  type LedgerEntry,
  type TrustBook,
  type TrustRef,
} from '../src/core/trust.js';

type Book = TrustBook<LedgerEntry, LedgerChange>;
const book = (): Book => ({ trust: new Map(), history: [], changes: 0 });

/** Folds one decision into the book as a fold does; returns the change, if any. */
function decide(b: Book, holder: string, kind: string, ref: TrustRef, self = false): LedgerChange | undefined {
  const j = judge(entryOf(b, holder, kind), ref, self);
  b.trust.set(trustKey(holder, kind), j.next);
  if (j.to === j.from) return undefined;
  return recordChange<LedgerChange>(b, { holder, task_type: kind, from: j.from, to: j.to, because: j.because, by: '', reason: '', ts: 't', at: 0, position: null, announced: false }, 10);
}

const yes = (by: string): TrustRef => ({ verdict: 'approved', by });

test('three approvals in a row by somebody else move a holder up one level, to trusted at most; the change names them and who decided', () => {
  const b = book();
  assert.equal(decide(b, 'team-a', 'npm test', yes('ann')), undefined);
  assert.equal(decide(b, 'team-a', 'npm test', yes('bob')), undefined);
  const up = decide(b, 'team-a', 'npm test', yes('ann'))!;
  assert.deepEqual([up.from, up.to], [0, 1]);
  assert.deepEqual(earnedBy(up), ['ann', 'bob']);
  assert.equal(up.because.length, PROMOTE_AFTER);
  for (let i = 0; i < 3; i++) decide(b, 'team-a', 'npm test', yes('ann'));
  assert.equal(levelOf(b, 'team-a', 'npm test'), MAX_TRUST);
  for (let i = 0; i < 6; i++) assert.equal(decide(b, 'team-a', 'npm test', yes('ann')), undefined, 'never above trusted');
  assert.equal(levelOf(b, 'team-a', 'git push'), 0, 'per kind');
  assert.equal(levelOf(b, 'team-b', 'npm test'), 0, 'per holder');
});

test('a rejection or a timeout moves it down one level and ends the run; auto and a self-approval change nothing', () => {
  const b = book();
  for (let i = 0; i < 6; i++) decide(b, 'h', 'k', yes('ann'));
  assert.equal(levelOf(b, 'h', 'k'), 2);
  assert.deepEqual(decide(b, 'h', 'k', { verdict: 'rejected', by: 'ann' })?.to, 1);
  assert.deepEqual(decide(b, 'h', 'k', { verdict: 'timeout' })?.to, 0);
  assert.equal(decide(b, 'h', 'k', { verdict: 'timeout' }), undefined, 'a stranger stays a stranger');
  decide(b, 'h', 'k', yes('ann'));
  decide(b, 'h', 'k', yes('ann'));
  decide(b, 'h', 'k', { verdict: 'auto' });
  decide(b, 'h', 'k', yes('me'), true);
  assert.equal(levelOf(b, 'h', 'k'), 0);
  const e = entryOf(b, 'h', 'k');
  assert.deepEqual([e.run, e.auto, e.self], [2, 1, 1], 'auto and self leave the run where it was');
  assert.deepEqual(decide(b, 'h', 'k', yes('ann'))?.to, 1);
});

test('an owner lowers a level (never raises it) from the level it has now; announcements never move a level', () => {
  const b = book();
  for (let i = 0; i < 6; i++) decide(b, 'h', 'k', yes('ann'));
  assert.equal(ownerLowers(b, 'h', 'k', 2, 2), false);
  assert.equal(ownerLowers(b, 'h', 'k', 1, 0), false, 'not its level now');
  assert.equal(ownerLowers(b, 'h', 'k', 2, 0), true);
  assert.equal(levelOf(b, 'h', 'k'), 0);
  assert.equal(ownerLowers(b, 'h', 'k', 0, 1), false);
  const first = b.history[0];
  assert.equal(announce(b, (c) => c.from === 0 && c.to === 1), first);
  assert.equal(first.announced, true);
  assert.equal(announce(b, (c) => c.from === 0 && c.to === 1), undefined, 'once');
  assert.equal(levelOf(b, 'h', 'k'), 0);
});

test('the history is bounded (oldest tenth dropped at once); ids keep counting', () => {
  const b = book();
  for (let i = 0; i < 40; i++) {
    decide(b, 'h', 'k', yes('a'));
    decide(b, 'h', 'k', yes('a'));
    decide(b, 'h', 'k', yes('a'));
    decide(b, 'h', 'k', { verdict: 'rejected', by: 'a' });
  }
  assert.ok(b.history.length <= 10);
  assert.equal(b.history.at(-1)!.id, 80);
});
