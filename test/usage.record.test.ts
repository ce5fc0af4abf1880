// Usage reported in-process (the hook point for the flock and the bridge):
// into the same fold as OTLP, a repeated key counted once, and a session's
// usage from one source only.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { providerUsage } from '../src/server/usage.js';
import { inProcess } from './support/server.js';

const roost = await inProcess();
after(() => roost.close());

test('a provider call’s usage lands once on its agent, priced by the table; another source for the same session is skipped', async () => {
  const call = { key: 'list-1:item-1:crow-a', agent: 'flock:crow-a', team: 'flock', model: 'claude-sonnet-4-5', usage: { input: 1000, output: 200, cacheRead: 0, cacheWrite: 0 }, ts: Date.parse('2026-12-01T12:00:00Z') };
  assert.deepEqual(await roost.usage.record([providerUsage(call)]), { accepted: 1, skipped: 0 });
  assert.deepEqual(await roost.usage.record([providerUsage(call)]), { accepted: 0, skipped: 1 }, 'the same call again counts once');
  const a = roost.usage.state.agents.get('flock:crow-a')!;
  assert.equal(a.own.input, 1000);
  assert.equal(a.own.output, 200);
  assert.equal(a.own.requests, 1);
  assert.ok(a.own.costMicros > 0, 'priced by the table');
  assert.equal(roost.usage.state.days.get('2026-12-01')?.requests, 1);
  // The provider's own figure wins over the table.
  const before = a.own.costMicros;
  await roost.usage.record([providerUsage({ ...call, key: 'list-1:item-2:crow-a', costUsd: 0.5 })]);
  assert.equal(roost.usage.state.agents.get('flock:crow-a')!.own.costMicros, before + 500_000);
  const events = (await roost.store.read('usage', 0, 1000)).map((e) => JSON.parse(e.body));
  assert.equal(events.at(-1).costMicros, 500_000);
  assert.equal(events.at(-1).costFrom, 'vendor');
  // This session's usage comes from the flock: a transcript report for it is skipped.
  const r = await roost.usage.record([{ ...providerUsage({ ...call, key: 'x' }), via: 'transcript' }]);
  assert.deepEqual(r, { accepted: 0, skipped: 1 });
});

test('one call of many reports (a long transcript) counts each key once, a key repeated within the call included', async () => {
  const n = 20_000;
  const reports = Array.from({ length: n }, (_, i) =>
    providerUsage({ key: `big:${i % (n / 2)}`, agent: 'flock:crow-big', team: 'flock', model: 'claude-sonnet-4-5', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }, ts: Date.parse('2026-12-01T12:00:00Z') }),
  );
  // Every key twice: the second of each is skipped within the same call (a set of the call's keys, not a scan of what it gathered).
  assert.deepEqual(await roost.usage.record(reports), { accepted: n / 2, skipped: n / 2 });
  assert.equal(roost.usage.state.agents.get('flock:crow-big')!.own.requests, n / 2);
  assert.deepEqual(await roost.usage.record(reports.slice(0, 10)), { accepted: 0, skipped: 10 }, 'and once more in a later call');
});
