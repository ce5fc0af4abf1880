// The real Claude Code CLI exporting OpenTelemetry to a real `roost serve`:
// `roost hooks install` writes the hooks and the telemetry variables, Claude
// Code runs a session with two sub-agents against the model stand-in, and the
// tokens and cost on the floor's roll-up equal what the stand-in reported, to
// the token, for the main agent and each sub-agent separately; the session's
// cost is the sum of the three (issue 31, "cost you can believe").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { child } from './support/server.js';
import { claudeAvailable, claudeSetup, runClaude } from './support/claude.js';
import { until } from './support/until.js';
import { costOf, modelName, priceOf, PRICE_TABLE_DATE } from '../src/core/usage.js';
import { modelStandin, step, text, toolUse, hasResult, firstUserIncludes, and, not, type Usage } from './support/model-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

test('Claude Code’s OTLP export: the session’s and its two sub-agents’ tokens and cost, each to the token; the session costs the sum of the three', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const server = await child();
  const subA = firstUserIncludes('SUBTASK A');
  const subB = firstUserIncludes('SUBTASK B');
  const sub = (r: Parameters<typeof subA>[0]) => subA(r) || subB(r);
  const usages: Partial<Usage>[] = [
    { input_tokens: 120, output_tokens: 12, cache_read_input_tokens: 0, cache_creation_input_tokens: 40 },
    { input_tokens: 300, output_tokens: 30, cache_read_input_tokens: 50, cache_creation_input_tokens: 5 },
    { input_tokens: 400, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    { input_tokens: 150, output_tokens: 15, cache_read_input_tokens: 70, cache_creation_input_tokens: 0 },
    { input_tokens: 250, output_tokens: 25, cache_read_input_tokens: 0, cache_creation_input_tokens: 9 },
    { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 200, cache_creation_input_tokens: 0 },
  ];
  // Two sub-agents, one after the other (issue 31: a session's cost is its own and its sub-agents' calls).
  const model = await modelStandin([
    step({ ...toolUse('Agent', { description: 'check', prompt: 'SUBTASK A: run a check', subagent_type: 'general-purpose' }, 'toolu_agent'), usage: usages[0] }, and(not(sub), not(hasResult('toolu_agent')))),
    step({ ...toolUse('Bash', { command: 'echo sub', description: 'sub' }, 'toolu_sub'), usage: usages[1] }, and(subA, not(hasResult('toolu_sub')))),
    step({ ...text('sub done'), usage: usages[2] }, and(subA, hasResult('toolu_sub'))),
    step({ ...toolUse('Agent', { description: 'look', prompt: 'SUBTASK B: look around', subagent_type: 'general-purpose' }, 'toolu_agent2'), usage: usages[3] }, and(not(sub), hasResult('toolu_agent'), not(hasResult('toolu_agent2')))),
    step({ ...text('looked'), usage: usages[4] }, subB),
    step({ ...text('All done.'), usage: usages[5] }, and(not(sub), hasResult('toolu_agent2'))),
  ]);
  try {
    const setup = claudeSetup('shop');
    const said = execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', setup.project, '--server', server.url], { encoding: 'utf8' });
    assert.match(said, /telemetry: on/);
    const settings = JSON.parse(readFileSync(join(setup.project, '.claude', 'settings.json'), 'utf8'));
    assert.equal(settings.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, `${server.url}/v1/logs`);
    const run = await runClaude(setup, model.url, 'check it', { timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr);
    const sid = run.messages.find((m) => m.type === 'system' && m.subtype === 'init')?.session_id;
    assert.ok(sid);
    const result = run.messages.find((m) => m.type === 'result');

    // What the stand-in reported, request by request, split by whose conversation it was.
    const zero = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 });
    // And what the dated price table makes of each request's tokens (the model the CLI asked for), per conversation.
    const table = { main: 0, a: 0, b: 0 };
    const expected = { main: zero(), a: zero(), b: zero() };
    for (const r of model.requests) {
      const u = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(r.step >= 0 ? usages[r.step] : {}) };
      const who = subA(r) ? expected.a : subB(r) ? expected.b : expected.main;
      who.input += u.input_tokens;
      who.output += u.output_tokens;
      who.cacheRead += u.cache_read_input_tokens;
      who.cacheWrite += u.cache_creation_input_tokens;
      who.requests++;
      const p = priceOf(String(r.body?.model ?? ''));
      assert.ok(p, `the dated table prices ${r.body?.model}`);
      table[subA(r) ? 'a' : subB(r) ? 'b' : 'main'] += costOf(String(r.body.model), { input: u.input_tokens, output: u.output_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens }).costMicros;
    }
    const session = `claude-code:${sid}`;
    const state = await until(
      'the exported usage of every request',
      async () => {
        const s = (await (await fetch(server.url + '/usage')).json()).state;
        return s.project.requests === model.requests.length ? s : undefined;
      },
      30_000,
      200,
    );
    const agents = new Map<string, any>(state.agents.map((a: any) => [a.id, a]));
    const lead = agents.get(session);
    assert.ok(lead, 'the session has its usage');
    const helpers = state.agents.filter((a: any) => a.parent === session);
    assert.equal(helpers.length, 2, `each sub-agent has its own: ${JSON.stringify(state.agents.map((a: any) => [a.id, a.role, a.own.requests]))}; steps ${model.requests.map((r) => r.step).join(',')}`);
    const pick = (x: any) => ({ input: x.input, output: x.output, cacheRead: x.cacheRead, cacheWrite: x.cacheWrite, requests: x.requests });
    assert.deepEqual(pick(lead.own), expected.main, 'the main agent’s tokens, to the token');
    // Which helper is which: by their tokens (each sub-agent's requests were its own).
    const got = helpers.map((h: any) => pick(h.own)).sort((x: any, y: any) => x.input - y.input);
    assert.deepEqual(got, [expected.a, expected.b].sort((x, y) => x.input - y.input), 'each sub-agent’s tokens, to the token');
    assert.equal(lead.team, 'shop');
    // The helpers are the ones the hooks put on the floor (their agent ids), not a guess.
    for (const h of helpers) assert.match(h.id, new RegExp(`^${session}/[0-9a-f]+$`));
    // Cost: Claude Code's own per-request figures; the session's is the sum of the three, and equals its result's total (rounded per request to a micro-dollar).
    const total = lead.own.costMicros + helpers[0].own.costMicros + helpers[1].own.costMicros;
    const rolled = new Map<string, any>(state.sessions).get(session);
    assert.equal(rolled.costMicros, total, 'the session’s cost is its own and its two sub-agents’');
    assert.equal(rolled.requests, model.requests.length);
    assert.ok(Math.abs(total - Math.round(result.total_cost_usd * 1_000_000)) <= model.requests.length, `${total} µ$ vs ${result.total_cost_usd} USD`);
    assert.ok(helpers.every((h: any) => h.own.costMicros > 0) && lead.own.costMicros > 0);
    // Each of the three, and so their sum, is what the dated price table (${PRICE_TABLE_DATE}) makes of the stand-in's tokens (within a micro-dollar a request: Claude Code rounds its figures).
    const close = (got: number, want: number, n: number, who: string) => assert.ok(Math.abs(got - want) <= n, `${who}: ${got} µ$ booked, ${want} µ$ by the table of ${PRICE_TABLE_DATE}`);
    close(lead.own.costMicros, table.main, expected.main.requests, 'the session');
    const byTable = [table.a, table.b].sort((x, y) => x - y);
    const helperCosts = helpers.map((h: any) => h.own.costMicros).sort((x: number, y: number) => x - y);
    close(helperCosts[0], byTable[0], Math.max(expected.a.requests, expected.b.requests), 'a sub-agent');
    close(helperCosts[1], byTable[1], Math.max(expected.a.requests, expected.b.requests), 'the other sub-agent');
    close(rolled.costMicros, table.main + table.a + table.b, model.requests.length, 'the session with its sub-agents');
    // One model is one row of the breakdown, whatever name the export gave it.
    const names = state.models.map(([m]: [string]) => m);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(names.sort(), [...new Set(model.requests.map((r) => modelName(String(r.body.model))))].sort());
    t.diagnostic(`claude run ${run.ms} ms; ${model.requests.length} requests; cost ${total} µ$`);
  } finally {
    await model.close();
    await server.stop();
  }
});
