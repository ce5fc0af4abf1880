// The webhooks fold (src/core/webhooks.ts): queues per target in order, an
// attempt counted once, the 24 h window, resend to the end of the queue, a
// removed target's pending deliveries failed, the lease's first claim wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyWebhooks, foldWebhooks, queueHeads, retryAt, webhookLeaseHolder, webhooksView } from '../src/core/webhooks.js';

const target = { id: 'wh1', project: 'p', url: 'https://x.example/', kinds: ['work.finished'], secret: 'sixteen-chars-or-more', by: 'ann' };

test('deliveries queue per target in order; an attempt is counted once; success, retry and giving up', () => {
  const s = emptyWebhooks();
  assert.ok(foldWebhooks(s, 'target.added', target, 1000));
  for (const id of ['d1', 'd2', 'd3']) assert.ok(foldWebhooks(s, 'delivery.enqueued', { id, target: 'wh1', kind: 'work.finished', body: '{}' }, 2000));
  assert.equal(foldWebhooks(s, 'delivery.enqueued', { id: 'd1', target: 'wh1', kind: 'work.finished', body: '{}' }, 2000), false, 'an id once');
  assert.deepEqual(queueHeads(s).map((d) => d.id), ['d1']);
  assert.ok(foldWebhooks(s, 'delivery.attempted', { id: 'd1', attempt: 1, ok: false, status: 503, error: 'answered 503', retry_at: 5000 }, 3000));
  assert.equal(foldWebhooks(s, 'delivery.attempted', { id: 'd1', attempt: 1, ok: true, status: 200 }, 3001), false, 'the same attempt reported twice counts once');
  assert.equal(s.deliveries.get('d1')!.nextAt, 5000);
  assert.ok(foldWebhooks(s, 'delivery.attempted', { id: 'd1', attempt: 2, ok: true, status: 204 }, 5000));
  assert.deepEqual(queueHeads(s).map((d) => d.id), ['d2']);
  assert.ok(foldWebhooks(s, 'delivery.attempted', { id: 'd2', attempt: 1, ok: false, error: 'ECONNREFUSED', retry_at: null }, 6000));
  assert.equal(s.deliveries.get('d2')!.status, 'failed');
  // Resent: pending again, at the end of the queue, its 24 h counted anew.
  assert.ok(foldWebhooks(s, 'delivery.resent', { id: 'd2', by: 'ann' }, 7000));
  assert.deepEqual(s.queues.get('wh1'), ['d3', 'd2']);
  assert.equal(s.deliveries.get('d2')!.attempts, 0);
  assert.equal(s.deliveries.get('d2')!.since, 7000);
  const view = webhooksView(s, 'p');
  assert.equal(view.targets[0].pending, 2);
  assert.equal('secret' in view.targets[0], false);
  assert.deepEqual(webhooksView(s, 'other'), { targets: [], deliveries: [] });
  // Removing the target fails what waits.
  assert.ok(foldWebhooks(s, 'target.removed', { id: 'wh1', by: 'ann' }, 8000));
  assert.equal(s.deliveries.get('d3')!.status, 'failed');
  assert.equal(s.deliveries.get('d3')!.lastError, 'the target was removed');
  assert.equal(queueHeads(s).length, 0);
});

test('retryAt doubles from the base, at most an hour apart, and gives up after the window', () => {
  const d = { since: 0 };
  const day = 24 * 3_600_000;
  assert.equal(retryAt(d, 1, 0, 10_000, day), 10_000);
  assert.equal(retryAt(d, 2, 0, 10_000, day), 20_000);
  assert.equal(retryAt(d, 20, 0, 10_000, day), 3_600_000);
  assert.equal(retryAt(d, 30, day - 1000, 10_000, day), null);
});

test('the lease: the first claim wins while it runs; its holder renews; a release or the end of its time frees it', () => {
  const s = emptyWebhooks();
  assert.ok(foldWebhooks(s, 'lease.claimed', { node: 'a', ttl_ms: 1000 }, 0));
  assert.equal(foldWebhooks(s, 'lease.claimed', { node: 'b', ttl_ms: 1000 }, 500), false);
  assert.equal(webhookLeaseHolder(s, 900), 'a');
  assert.ok(foldWebhooks(s, 'lease.claimed', { node: 'a', ttl_ms: 1000 }, 900));
  assert.equal(webhookLeaseHolder(s, 1500), 'a');
  assert.equal(webhookLeaseHolder(s, 1900), '');
  assert.ok(foldWebhooks(s, 'lease.claimed', { node: 'b', ttl_ms: 1000 }, 2000));
  assert.equal(foldWebhooks(s, 'lease.released', { node: 'a' }, 2100), false);
  assert.ok(foldWebhooks(s, 'lease.released', { node: 'b' }, 2200));
  assert.equal(webhookLeaseHolder(s, 2300), '');
});
