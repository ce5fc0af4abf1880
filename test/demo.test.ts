// `roost demo` against a real server: within seconds the floor has several
// teams, each with a lead at the head desk and helpers briefed by it, and the
// story moves (tools, messages, whiteboards) without the server refusing anything.
import { test } from 'node:test';
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
    const demo = runDemo({ server: server.url, rate: 40, durationMs: 20_000, signal: stop.signal, log: (l) => l.includes('retrying') && complaints.push(l) });
    await until('the floor past 30 events', async () => ((await (await fetch(server.url + '/state')).json()) as { position: number }).position > 30, 20_000);
    stop.abort();
    await demo;
    assert.deepEqual(complaints, [], 'every batch was accepted');
    const state = (await (await fetch(server.url + '/state')).json()) as {
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
