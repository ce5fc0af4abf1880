// `roost demo` against a real server: within seconds the floor has several
// teams, each with a lead at the head desk and helpers briefed by it, and the
// story moves (tools, messages, whiteboards) without the server refusing anything.
import { test } from 'node:test';
import { getEventListeners } from 'node:events';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { until } from './support/until.js';
import { runDemo } from '../src/cli/demo.js';

test('the demo fills a floor with several teams that keep moving', async () => {
  const server = await inProcess();
  try {
    const complaints: string[] = [];
    // The demo runs until its story has moved on (the floor past 30 events),
    // however slow this machine is today; 20 s is the give-up point.
    const stop = new AbortController();
    const demo = runDemo({ server: server.url, rate: 40, durationMs: 20_000, floorOnly: true, signal: stop.signal, log: (l) => l.includes('retrying') && complaints.push(l) });
    await until('the floor past 30 events', async () => ((await (await fetch(server.url + '/state?project=demo')).json()) as { position: number }).position > 30, 20_000);
    stop.abort();
    await demo;
    assert.deepEqual(complaints, [], 'every batch was accepted');
    const state = (await (await fetch(server.url + '/state?project=demo')).json()) as {
      agents: { id: string; role: string; desk: number; team: string; parent: string | null; tool: string }[];
      teams: { id: string; task: string }[];
      position: number;
    };
    assert.ok(state.teams.length >= 4, `several teams: ${state.teams.length}`);
    for (const t of state.teams) {
      const members = state.agents.filter((a) => a.team === t.id);
      const lead = members.find((a) => a.role === 'lead');
      assert.ok(lead, `${t.id} has a lead`);
      assert.equal(lead.desk, 0, `${t.id}'s lead sits at the head desk`);
      assert.ok(members.some((a) => a.parent === lead.id), `${t.id} has helpers under its lead`);
      assert.ok(t.task, `${t.id} has a task on its whiteboard`);
    }
    assert.ok(state.agents.some((a) => a.tool), 'someone is using a tool');
    assert.ok(state.position > 30, `the story moved on: ${state.position} events`);
  } finally {
    await server.close();
  }
});

test('a long demo run leaves no abort listeners behind (no MaxListenersExceededWarning)', async () => {
  const server = await inProcess();
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const stop = new AbortController();
    let most = 0;
    // Count the signal's listeners through the run: at most the one sleep in progress.
    const count = setInterval(() => (most = Math.max(most, getEventListeners(stop.signal, 'abort').length)), 5);
    // At 200 events/s for 4 s the demo sleeps hundreds of times.
    await runDemo({ server: server.url, rate: 200, durationMs: 4_000, floorOnly: true, signal: stop.signal });
    clearInterval(count);
    const pos = ((await (await fetch(server.url + '/state?project=demo')).json()) as { position: number }).position;
    assert.ok(pos > 50, `the demo ran for a while: ${pos} events`);
    assert.ok(most <= 2, `at most the sleep in progress (and the post's fetch) listen: ${most}`);
    assert.equal(getEventListeners(stop.signal, 'abort').length, 0, 'no listener left after the run');
    assert.deepEqual(warnings.filter((w) => w === 'MaxListenersExceededWarning'), []);
  } finally {
    process.off('warning', onWarning);
    await server.close();
  }
});
