// A restart mid-list (docs/flock.md, "Restart"): `roost serve --model ...` as
// a real process on a SQLite file, killed with SIGKILL while a crow is in the
// air and a verdict is pending, then started again on the same file. The new
// process takes the lease once the dead one's runs out, flies the open flight
// again, keeps the pending approval, and the list finishes with every item
// answered once and every target judged once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { child, tempDir } from './support/server.js';
import { flockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { verdictApprovalId } from '../src/server/flock/service.js';

test('a restart mid-list: the flight in the air is flown again, the pending verdict survives, nothing is answered twice', async () => {
  const model = await flockModel('anthropic', { slowMs: 2500 });
  const dataDir = tempDir('roost-flock-restart-');
  const env = { ANTHROPIC_API_KEY: 'test-key', ROOST_FLOCK_LEASE_MS: '1500', ROOST_FLOCK_BANTER_WAIT_MS: '1000' };
  const args = ['--model', model.spec];
  const a = await child({ dataDir, env, args });
  let b: Awaited<ReturnType<typeof child>> | null = null;
  try {
    let c = flockClient(a.url);
    const list_id = await c.start('slow writing one\nwriting two', 'ann');
    const [one, two] = [`${list_id}-1`, `${list_id}-2`];
    let w = await c.watch(list_id);
    await w.next('item.triaged', (d) => d.item_id === one);
    await w.next('item.triaged', (d) => d.item_id === two);
    assert.equal((await c.verdict(one, 'triage', true)).status, 204);
    assert.equal((await c.verdict(two, 'triage', true)).status, 204);
    const flying = await w.next('crow.flying', (d) => d.item_id === one && d.crow !== 'Sentry');
    const askerTwo = (await w.next('item.answered', (d) => d.item_id === two)).data.crows[0] as string;
    // Item 2's output waits for a person, item 1's crow is in the air: kill the server.
    const outTwo = verdictApprovalId('default', two, 'output');
    for (let i = 0; i < 100 && (await c.get(`/approvals/${outTwo}`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(!w.events().some((e) => e.event === 'crow.landed' && e.data.item_id === one && e.data.crow === flying.data.crow), 'still flying');
    w.close();
    await a.stop('SIGKILL');

    b = await child({ dataDir, env, args, port: a.port });
    c = flockClient(b.url);
    assert.equal((await c.get(`/approvals/${outTwo}`)).body.status, 'pending', 'the pending verdict survived');
    // On the floor (docs/flock.md, "On the floor"): the crow that asked still waits, and the new
    // driver, which folded the log again, takes it out of waiting when the verdict comes.
    const crowOnFloor = async (name: string) => ((await c.get('/state')).body.agents as { id: string; status: string }[]).find((x) => x.id === `flock:${name}`);
    // What the dead driver gathered for the floor but had not posted yet (REPORT_MS) died with it;
    // the new driver reports every crow afresh when it takes the lease (CrowsOnFloor.resync).
    for (let i = 0; i < 200 && (await crowOnFloor(askerTwo))?.status !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal((await crowOnFloor(askerTwo))?.status, 'waiting');
    w = await c.watch(list_id);
    const landed = await w.next('crow.landed', (d) => d.item_id === one && d.crow === flying.data.crow, 15_000);
    assert.equal(landed.data.ok, true);
    await w.next('item.answered', (d) => d.item_id === one);
    assert.equal((await c.verdict(two, 'output', true)).status, 204);
    assert.equal((await c.verdict(one, 'output', true)).status, 204);
    assert.equal((await c.verdict(one, 'output', true)).status, 404);
    await w.next('list.finished', () => true, 10_000);
    for (let i = 0; i < 200 && (await crowOnFloor(askerTwo))?.status !== 'done'; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal((await crowOnFloor(askerTwo))?.status, 'done', `${askerTwo} left waiting after the restart`);
    const all = w.events();
    w.close();
    const count = (pred: (e: (typeof all)[number]) => boolean) => all.filter(pred).length;
    for (const item of [one, two]) {
      assert.equal(count((e) => e.event === 'item.answered' && e.data.item_id === item), 1, `${item} answered once`);
      for (const target of ['triage', 'output']) assert.equal(count((e) => e.event === 'verdict' && e.data.item_id === item && e.data.target === target), 1, `${item} ${target} judged once`);
    }
    const flights = all.filter((e) => e.event === 'crow.flying');
    const landings = all.filter((e) => e.event === 'crow.landed');
    assert.equal(landings.length, flights.length, 'every flight landed once');
    assert.equal(new Set(landings.map((e) => `${e.data.item_id}/${e.data.crow}`)).size, landings.length);
    // The call in flight was made again by the new process.
    const asked = model.asks().filter((x) => x.tool === null && x.user.startsWith('slow writing one') && x.system.startsWith(`You are ${flying.data.crow},`));
    assert.equal(asked.length, 2, 'the flight in the air was flown again');
  } finally {
    await b?.stop();
    await a.stop();
    await model.close();
  }
});
