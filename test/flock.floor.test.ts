// The flock's crows on the project's floor (docs/flock.md, "On the floor"),
// over real HTTP against the scripted model stand-in: a list flies and its
// crows show on GET /state in the nest's room, working while they fly,
// waiting while a verdict they asked for waits, done once it is decided.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import type { Roost } from '../src/server/index.js';

interface FloorAgent {
  id: string;
  name: string;
  role: string;
  source: string;
  team: string;
  parent: string | null;
  status: string;
  activity: string;
  tool: string;
}

describe('crows on the floor', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    model = await flockModel('anthropic', { slowMs: 3000 });
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 2000 });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost.close();
    await model.close();
  });

  const state = async (): Promise<{ agents: FloorAgent[]; teams: { id: string; name: string }[] }> => (await c.get('/state')).body;
  /** Polls /state until the crow's agent matches; resolves with it and the floor. */
  async function crow(name: string, ok: (a: FloorAgent) => boolean, what: string): Promise<{ a: FloorAgent; s: Awaited<ReturnType<typeof state>> }> {
    const end = Date.now() + 10_000;
    let last: FloorAgent | undefined;
    for (;;) {
      const s = await state();
      last = s.agents.find((x) => x.id === `flock:${name}`);
      if (last && ok(last)) return { a: last, s };
      if (Date.now() > end) assert.fail(`${name} never ${what}; last seen ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  test('a list flies: Sentry waits for triage, the crow works, waits for its output, and is done once decided', async () => {
    const list_id = await c.start('slow write the release notes', 'ann');
    const item = `${list_id}-1`;
    const w = await c.watch(list_id);

    // The Sentry triaged and asked: waiting, the way a held tool approval shows.
    const sentry = await crow('Sentry', (a) => a.status === 'waiting', 'waited for the triage verdict');
    assert.equal(sentry.a.team, 'flock:todo');
    assert.equal(sentry.s.teams.find((t) => t.id === 'flock:todo')?.name, 'flock · todo');
    assert.equal(sentry.a.source, 'flock');
    assert.equal(sentry.a.role, 'service');
    assert.equal(sentry.a.name, 'Sentry');
    assert.equal(sentry.a.parent, 'flock');
    assert.equal(sentry.a.tool, 'triage');
    assert.match(sentry.a.activity, new RegExp(`^Waiting for approval: the triage of ${item}`));

    // Decided: the Sentry leaves waiting; a worker flies the item (working, the item named).
    assert.equal((await c.verdict(item, 'triage', true)).status, 204);
    const flying = await w.next('crow.flying', (d) => d.item_id === item && d.crow !== 'Sentry');
    const name = flying.data.crow as string;
    const worker = await crow(name, (a) => a.status === 'working', 'worked');
    assert.equal(worker.a.team, 'flock:todo');
    assert.equal(worker.a.role, 'worker');
    assert.match(worker.a.activity, new RegExp(`Flying ${item}: slow write the release notes`));
    const s2 = worker.s.agents.find((x) => x.id === 'flock:Sentry');
    assert.equal(s2?.status, 'done', 'the Sentry is no longer waiting once its triage was decided');

    // Landed with an answer that needs a verdict: the crow that asked waits.
    await w.next('item.answered', (d) => d.item_id === item, 15_000);
    const waiting = await crow(name, (a) => a.status === 'waiting', 'waited for the output verdict');
    assert.equal(waiting.a.tool, 'output');
    assert.match(waiting.a.activity, new RegExp(`the output of ${item}`));

    assert.equal((await c.verdict(item, 'output', true)).status, 204);
    const done = await crow(name, (a) => a.status === 'done', 'was done');
    assert.match(done.a.activity, /approved/);
    await w.next('list.finished');
    w.close();

    // One agent per crow, whatever the number of flights: a second list brings no second Sentry.
    const list2 = await c.start('slow write the changelog', 'ann');
    await crow('Sentry', (a) => a.status === 'waiting' && a.activity.includes(`${list2}-1`), 'waited for the second triage');
    const s = await state();
    assert.equal(s.agents.filter((x) => x.name === 'Sentry').length, 1);
    assert.equal(new Set(s.agents.map((x) => x.id)).size, s.agents.length);
    // A rejected triage also takes it out of waiting.
    assert.equal((await c.verdict(`${list2}-1`, 'triage', false)).status, 204);
    const after = await crow('Sentry', (a) => a.status === 'done', 'left waiting after a rejection');
    assert.match(after.a.activity, /rejected/);
  });
});
