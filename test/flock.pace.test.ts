// The flock driver's pace (src/server/flock/pace.ts, docs/flock.md "Pacing"):
// its steps are background work. With the process's requests holding the
// event loop full, steps wait and go at the floor; the flock never stops; once
// the requests stop (or leave room) every waiting step goes. The pacer is
// driven here by scripted signals (the loop's utilisation, the requests seen);
// then a real server finishes a list while requests keep its loop busy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pacer, processSignals, type PaceSettings, type PaceSignals } from '../src/server/flock/pace.js';
import { flockRoutes } from '../src/server/flock/routes.js';
import { inProcess } from './support/server.js';
// The benches' model that answers at once (no network): the same stand-in for the same question.
import { approveVerdicts, instantRoster } from '../bench/flock-setup.js';

const SETTINGS: PaceSettings = { windowMs: 10, busy: 0.9, room: 0.75, requests: 2, floor: 1, frontAt: 8 };

/** Signals a test sets: the utilisation and the requests each look sees. */
function scripted(): PaceSignals & { load: { u: number; r: number } } {
  const load = { u: 0, r: 0 };
  return { load, now: () => performance.now(), utilisation: () => load.u, requests: () => load.r };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asks for `n` turns; counts those granted so far. */
function ask(p: Pacer, n: number): { granted: () => number; all: Promise<void> } {
  let granted = 0;
  const waits: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const t = p.turn();
    if (!t) granted++;
    else waits.push(t.then(() => void granted++));
  }
  return { granted: () => granted, all: Promise.all(waits).then(() => {}) };
}

async function until(ok: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`never ${what}`);
    await sleep(5);
  }
}

test('no other requests: every step goes at once, however full the loop', async () => {
  const s = scripted();
  const p = new Pacer(s, SETTINGS);
  s.load.u = 1;
  for (let round = 0; round < 5; round++) {
    assert.equal(ask(p, 20).granted(), 20);
    await sleep(12);
  }
  assert.equal(p.inBack, false);
  p.stop();
});

test('requests with a full loop: steps wait and go at the floor, the flock never stops; when the requests stop, all go', async () => {
  const s = scripted();
  const p = new Pacer(s, SETTINGS);
  s.load.u = 0.99;
  s.load.r = 50;
  await sleep(12);
  const a = ask(p, 40);
  assert.ok(a.granted() < 40, 'some steps wait');
  assert.equal(p.inBack, true);
  // The floor: one step per tick while the loop stays full.
  await until(() => a.granted() >= 3, 'moved at the floor');
  assert.ok(a.granted() < 40, 'not all at once while the requests hold the loop full');
  // The requests stop: every waiting step goes.
  s.load.r = 0;
  await a.all;
  assert.equal(a.granted(), 40);
  assert.equal(p.inBack, false);
  p.stop();
});

test('requests with room left: the allowance doubles until the pace is front again', async () => {
  const s = scripted();
  const p = new Pacer(s, SETTINGS);
  s.load.u = 0.95;
  s.load.r = 50;
  await sleep(12);
  const a = ask(p, 200);
  assert.equal(p.inBack, true);
  s.load.u = 0.5;
  await a.all;
  assert.equal(p.inBack, false);
  p.stop();
});

test('a stop grants every waiting step', async () => {
  const s = scripted();
  const p = new Pacer(s, SETTINGS);
  s.load.u = 1;
  s.load.r = 50;
  await sleep(12);
  const a = ask(p, 30);
  assert.ok(a.granted() < 30);
  p.stop();
  await a.all;
  assert.equal(p.turn(), undefined);
});

test('a real server: a list handed over while requests keep the loop busy finishes, and the flock yielded meanwhile', { timeout: 180_000 }, async () => {
  const roost = await inProcess({ models: instantRoster(), flockBanterWaitMs: 500 });
  approveVerdicts(roost, 'test');
  let on = true;
  let served = 0;
  const body = JSON.stringify({ type: 'status', agent: 'load-1', team: 'load', status: 'working', activity: 'busy' });
  const hammer = async () => {
    while (on) {
      const r = await fetch(`${roost.url}/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await r.arrayBuffer();
      if (r.ok) served++;
    }
  };
  const load = Array.from({ length: 24 }, hammer);
  try {
    await until(() => served > 200, 'served the load', 30_000);
    const text = Array.from({ length: 12 }, (_, i) => `write note ${i + 1}`).join('\n');
    const r = await fetch(`${roost.url}/api/lists`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, requester: 'ann' }) });
    assert.equal(r.status, 202);
    const { list_id } = (await r.json()) as { list_id: string };
    const finished = roost.flock.finished(list_id);
    let done = false;
    void finished.then(() => (done = true));
    await until(() => done, 'finished the list under load', 150_000);
    assert.ok(on, 'finished while the requests went on');
    assert.ok(roost.flock.pace.stats.waited > 0, 'the flock yielded to the requests');
    const st = roost.flock.state.lists.get(list_id)!;
    assert.equal(st.items.filter((i) => i.outputVerdict).length, 12, 'every item answered');
  } finally {
    on = false;
    await Promise.all(load);
    await roost.close();
  }
});

test("every route of the flock's table is marked the flock's own, and a real server's requests count for the pacer but those routes' (a path sharing their first segment counts)", async () => {
  // The table only (its handlers are not called here).
  const table = flockRoutes(null as never, null as never, null as never, null as never);
  assert.ok(table.length > 10);
  for (const r of table) assert.equal(r.flock, true, `${r.method} ${r.path} is marked flock: true (Route.flock)`);
  const roost = await inProcess();
  const signals = processSignals();
  /** Sends one request and says how many requests the pacer heard for it. */
  const counted = async (method: string, path: string): Promise<number> => {
    signals.requests();
    const r = await fetch(roost.url + path, { method });
    await r.body?.cancel();
    return signals.requests();
  };
  try {
    for (const r of table) {
      const path = r.path.replace(/:[a-z_]+/g, 'x');
      for (const target of [path, `${path}?project=default&list_id=l-1`]) {
        assert.equal(await counted(r.method, target), 0, `${r.method} ${target} is the flock's own: not counted`);
      }
    }
    // Not the flock's: the floor's ingest, the agents' trust (under /api/trust, as the flock's ledger is), a page, another app's route.
    for (const [method, path] of [
      ['POST', '/events'],
      ['PUT', '/api/trust/agents'],
      ['GET', '/api/trust/x/history'],
      ['GET', '/'],
      ['GET', '/api/approvals'],
      ['POST', '/api/lists/x'],
      ['GET', '/api/nests/x/y/z'],
    ] as const) {
      assert.equal(await counted(method, path), 1, `${method} ${path} is counted`);
    }
  } finally {
    await roost.close();
  }
});
