// The demo beyond the floor (issue 33), without a browser:
// - it writes only through the public HTTP API: the demo client, run against a
//   server started without any demo flag (in process, `--model demo` only for
//   the flock), fills every app of the project `demo`, and the person's own
//   project stays empty; its modules import nothing of the server or the store;
// - `roost demo --stop` ends its sessions and agents and touches nothing else;
// - the demo model is chosen only by --demo or --model demo, and its answers
//   pass the flock's schemas (never a `code` triage: no Claude Code in a demo);
// - in shared mode `serve --demo` is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess, child } from './support/server.js';
import { until } from './support/until.js';
import { runDemo } from '../src/cli/demo.js';
import { prepareDemoProject, stopDemo } from '../src/cli/demo-apps.js';
import { call, makeUser, mintToken, sharedServer } from './support/shared.js';
import { ModelRoster, modelSettings, parseModelSpec, createProvider, DEMO_MODEL_NAME } from '../src/models/index.js';
import { DemoProvider } from '../src/models/demo.js';
import { triageRequest, TriageSchema, workRequest } from '../src/server/flock/prompts.js';
import { respondRequest, RespondSchema } from '../src/server/flock/nest-prompts.js';
import { checkToolInput } from '../src/models/common.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { emptyFlock } from '../src/core/flock.js';

const get = async (url: string): Promise<any> => (await fetch(url)).json();

function demoModels(): ModelRoster {
  const s = modelSettings({ model: 'demo' }, {});
  assert.ok(s.ok);
  return new ModelRoster(s.value);
}

test('the demo client fills every app of project "demo" through the public API of a server started without --demo, and leaves the default project alone', { timeout: 120_000 }, async () => {
  const server = await inProcess({ models: demoModels() });
  const stop = new AbortController();
  const complaints: string[] = [];
  const demo = runDemo({ server: server.url, rate: 10, signal: stop.signal, log: (l) => /stopped|retrying/.test(l) && complaints.push(l) });
  const d = (path: string) => get(`${server.url}${path}${path.includes('?') ? '&' : '?'}project=demo`);
  try {
    await until('floor agents', async () => (await d('/state')).agents.length >= 8, 20_000, 200);
    await until('four board sessions', async () => (await d('/fleet/default')).sessions.length === 4, 20_000, 200);
    await until('a session waiting for a person', async () => (await d('/approvals')).pending.some((a: any) => a.kind === 'fleet'), 30_000, 200);
    const work = await until('Work agents, queued and finished commands', async () => {
      const w = await d('/api/v2/snapshot');
      return w.agents.length === 3 && w.commands.length >= 3 && w.results.length >= 1 && w.conversations.some((c: any) => c.title === 'Release 2.4') ? w : null;
    }, 40_000, 300);
    assert.ok(work.spaces.length === 1, 'one demo Space');
    const usage = await until('costs and a budget', async () => {
      const u = (await d('/usage')).state;
      return u.project.costMicros > 0 && u.budget ? u : null;
    }, 20_000, 200);
    assert.ok(usage.project.costMicros <= usage.budget.limitMicros, 'the budget is not yet crossed');
    assert.ok(usage.project.costMicros >= usage.budget.limitMicros * 0.5, `near its limit: ${usage.project.costMicros} of ${usage.budget.limitMicros}`);
    await until('the flock flew a list', async () => (await d('/api/flock')).lists.length >= 1, 20_000, 200);
    await until('a nest talking', async () => {
      const m = await d('/api/nests/launch/messages');
      return Array.isArray(m) && m.some((r: any) => r.author === 'Pepper' && r.kind === 'deliver');
    }, 30_000, 300);
    await until('a call allowed by trust', async () => (await d('/approvals?recent=50')).recent.some((a: any) => a.decidedBy === 'trust'), 30_000, 300);
    // On the fleet board too: the Test runner's npm test, earned by three allows, then allowed by trust with nobody asked.
    const byTrust = await until('a board call allowed by trust', async () => (await d('/approvals?recent=100')).recent.find((a: any) => a.kind === 'fleet' && a.decidedBy === 'trust'), 40_000, 300);
    assert.equal(byTrust.actionClass, 'npm test');
    assert.equal(byTrust.trust.because.length, 3, 'the three decisions that earned it');
    const runner = (await d('/fleet/default')).sessions.find((s: any) => s.name === 'Test runner');
    assert.equal(runner.approvals.find((a: any) => a.rid === byTrust.scope.rid)?.by, 'trust', 'the board shows it allowed by trust');

    // It keeps living: every app has something new within seconds (the floor's events, the board's turns,
    // Work's conversation and results, the nest's messages, the booked usage).
    const pulse = async () => {
      const w = await d('/api/v2/snapshot');
      const m = await d('/api/nests/launch/messages');
      return {
        floor: (await d('/state')).position as number,
        board: ((await d('/fleet/default')).sessions as any[]).reduce((n, x) => n + (x.turns ?? 0), 0),
        work: JSON.stringify(w.conversations).length + w.results.length,
        nest: Array.isArray(m) ? m.length : 0,
        usage: (await d('/usage')).state.count as number,
      };
    };
    const before = await pulse();
    const grown = new Set<string>();
    await until('every app moved on', async () => {
      const now = await pulse();
      for (const k of Object.keys(now) as (keyof typeof now)[]) if (now[k] > before[k]) grown.add(k);
      return grown.size === Object.keys(now).length;
    }, 30_000, 500).catch(() => assert.fail(`in 30 s only ${[...grown].join(', ') || 'nothing'} moved on`));
  } finally {
    stop.abort();
    await demo;
  }
  try {
    assert.deepEqual(complaints, [], 'nothing the demo posted was refused');
    // The person's own (default) project: untouched by any of it.
    const def = (path: string) => get(server.url + path);
    assert.equal((await def('/state')).agents.length, 0);
    assert.equal((await def('/fleet/default')).sessions.length, 0);
    const ap = await def('/approvals');
    assert.equal(ap.pending.length + ap.recent.length, 0);
    assert.equal((await def('/usage')).state.count, 0);
    assert.equal((await def('/api/flock')).lists.length, 0);
    const w = await def('/api/v2/snapshot?project=default');
    assert.equal(w.agents.length + w.commands.length + w.conversations.filter((c: any) => c.title).length, 0);

    // `roost demo --stop`: the demo's sessions and agents end; still nothing elsewhere.
    await stopDemo({ server: server.url });
    const b = await get(server.url + '/fleet/default?project=demo');
    assert.ok(b.sessions.every((s: any) => s.endedAt > 0), 'every demo session is ended');
    const after = await get(server.url + '/api/v2/snapshot?project=demo');
    assert.ok(after.agents.every((a: any) => a.ended || a.state === 'ended'), JSON.stringify(after.agents.map((a: any) => a.state)));
    assert.equal((await def('/fleet/default')).sessions.length, 0);
  } finally {
    await server.close();
  }
});

test('the demo modules reach the server only over HTTP: no import of the server or the store', () => {
  for (const f of ['src/cli/demo.ts', 'src/cli/demo-apps.ts']) {
    const src = readFileSync(join(PACKAGE_ROOT, f), 'utf8');
    const imports = [...src.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(imports.filter((i) => /\/(server|storage)\//.test(i)), [], `${f} imports ${imports.join(', ')}`);
  }
});

test('the demo model is chosen only by --demo or --model demo, and is named "demo model"', async () => {
  const none = modelSettings({}, {});
  assert.ok(none.ok && none.value.default === null, 'nothing configured: no model at all, never the demo');
  assert.equal(new ModelRoster(none.ok ? none.value : { default: null, roles: {} }).ready, false);
  const real = modelSettings({ model: 'anthropic:claude-haiku-4-5' }, {});
  assert.ok(real.ok && real.value.default?.provider === 'anthropic');
  const both = modelSettings({ demo: true, model: 'anthropic:claude-haiku-4-5' }, {});
  assert.ok(both.ok && both.value.default?.provider === 'anthropic', 'a configured model wins over --demo');
  const envModel = modelSettings({ demo: true }, { ROOST_MODEL: 'openai:gpt-4o-mini' });
  assert.ok(envModel.ok && envModel.value.default?.provider === 'openai');
  const flag = modelSettings({ demo: true }, {});
  assert.ok(flag.ok && flag.value.default?.provider === 'demo', '--demo alone: the demo model');
  const named = modelSettings({ model: 'demo' }, {});
  assert.ok(named.ok && named.value.default?.provider === 'demo', '--model demo');
  const spec = parseModelSpec('demo');
  assert.ok(spec.ok);
  const p = createProvider(spec.value);
  assert.equal(p.label, DEMO_MODEL_NAME);
  assert.equal(p.model, 'demo model');
  assert.deepEqual(new ModelRoster(flag.ok ? flag.value : { default: null, roles: {} }).describe().map((r) => r.model), Array(7).fill('demo model'));

  // A server with no model configured: the flock has none, and a list is refused (503), never flown by the demo model.
  const server = await inProcess();
  try {
    const f = await get(server.url + '/api/flock');
    assert.ok(f.models.every((m: any) => m.model === null), JSON.stringify(f.models));
    const r = await fetch(server.url + '/api/lists', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: '- hi there', requester: 'ann' }) });
    assert.equal(r.status, 503);
  } finally {
    await server.close();
  }
});

test("the demo model's answers pass the flock's schemas, and it never triages an item as code", async () => {
  const m = new DemoProvider({ delayMs: () => 0 });
  const s = emptyFlock();
  for (const text of ['Fix the login redirect in the code', 'Write a changelog entry and review the docs', 'Ideas for naming the plan tiers', 'Plan the beta']) {
    const out = await m.call(triageRequest(s, { item_id: 'l-1-1', text } as any));
    assert.ok(out.ok && out.kind === 'tool', JSON.stringify(out));
    assert.ok(checkToolInput(TriageSchema, out.input).ok);
    assert.notEqual(out.input.task_type, 'code', text);
    assert.equal(out.model, 'demo model');
  }
  const rec = { nest_id: 'launch', msg_id: 'launch-1', n: 1, kind: 'request', author: 'owner', to: 'Pepper', text: 'Pepper, please draft three taglines' } as any;
  const out = await m.call(respondRequest(s, 'launch', rec, 'Pepper', 0, 0));
  assert.ok(out.ok && out.kind === 'tool' && checkToolInput(RespondSchema, out.input).ok);
  assert.match(String(out.input.text), /Refunds that fit every invoice/);
  // A split item: each crow answers its own part, so the two answers differ.
  const split = { item_id: 'l-1-2', text: 'Research how other shops word refund emails and compare two options', triage: { mode: 'split', task_type: 'research', subtasks: ['Research how other shops word refund emails', 'compare two options'], reason: 'two parts' } } as any;
  const said: string[] = [];
  for (const n of [1, 2]) {
    const p = await m.call(workRequest(s, split, 'Munin', n));
    assert.ok(p.ok && p.kind === 'text', JSON.stringify(p));
    said.push(p.text);
  }
  assert.match(said[0], /^Most shops lead with the amount/, 'the first part: the known answer about refund emails');
  assert.match(said[1], /compare two options/);
  assert.notEqual(said[0], said[1]);
  const text = await m.call({ system: 'You are Pepper', messages: [{ role: 'user', content: 'say hi' }], maxTokens: 100 });
  assert.ok(text.ok && text.kind === 'text' && text.text.length > 0 && text.usage.estimated);
});

test('serve --demo in shared mode is refused: only an owner asks for the demo, as a client', async () => {
  await assert.rejects(child({ args: ['--demo', '--shared'] }), /refusing --demo in shared mode/);
});

test('shared mode: the demo client runs only for an owner of the project "demo"', async () => {
  const srv = await sharedServer();
  try {
    assert.equal((await call(srv.url, srv.owner, 'POST', '/projects', { id: 'demo', name: 'Demo' })).status, 201);
    const bob = await makeUser(srv, 'bob', 'demo', 'editor');
    const editor = await mintToken(srv, bob, 'demo', 'editor');
    const owner = await mintToken(srv, srv.owner, 'demo', 'owner');
    await assert.rejects(prepareDemoProject({ server: srv.url }), /did not say who we are \(401\)/, 'nobody signed in');
    await assert.rejects(prepareDemoProject({ server: srv.url, token: editor.token }), /refusing the demo in shared mode: only an owner of the project "demo"/);
    await prepareDemoProject({ server: srv.url, token: owner.token });
  } finally {
    await srv.close();
  }
});
