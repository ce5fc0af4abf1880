// The end-to-end for budgets, with the real Claude Code CLI against
// the model stand-in and a real `roost serve`: a team's per-day budget (in
// tokens) is reached mid-session by the session's own usage, as Claude Code
// exports it; the next Bash call is denied by Roost's hook with the budget's
// reason, and the stand-in model receives that reason as the tool result;
// the floor shows the agent paused and why; the owner raises the budget and
// the next Bash call runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { child } from './support/server.js';
import { claudeAvailable, claudeSetup, runClaude } from './support/claude.js';
import { until } from './support/until.js';
import { modelStandin, step, text, toolUse, toolResults, hasResult, askedWithBash, and, not, type RecordedRequest } from './support/model-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

test("a team's day budget reached mid-session: the next Bash call is denied with the reason the model sees, the floor shows paused; a raise lets the next call run", async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const server = await child();
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(server.url + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, json: (await r.json()) };
  };
  const seen: { paused?: any; floorCard?: any; deniedResult?: string } = {};
  const bash = askedWithBash('BUDGET-RUN');
  const model = await modelStandin([
    // The first request of the turn: a Bash call, with a usage that alone goes past the team's 1,000 tokens a day.
    step({ ...toolUse('Bash', { command: 'echo one', description: 'one' }, 'toolu_one'), usage: { input_tokens: 1500, output_tokens: 20 } }, and(bash, not(hasResult('toolu_one')))),
    // Its result in: the next Bash call, answered once Claude Code's own export of that usage has paused the team.
    step(
      () => ({
        ...toolUse('Bash', { command: 'echo two', description: 'two' }, 'toolu_two'),
        until: until(
          'the team paused by the exported usage',
          async () => {
            const b = (await api('GET', '/usage/budgets')).json.budgets.find((x: any) => x.key === 'team:shop:day');
            return b?.pausedNow ? (seen.paused = b) : undefined;
          },
          60_000,
          200,
        ),
      }),
      and(hasResult('toolu_one'), not(hasResult('toolu_two'))),
    ),
    // The denied call's result reached the model: note it and the floor, then the owner raises the budget.
    step(
      (req: RecordedRequest) => {
        seen.deniedResult = toolResults(req).find((r) => r.tool_use_id === 'toolu_two')?.content;
        return {
          ...toolUse('Bash', { command: 'echo three', description: 'three' }, 'toolu_three'),
          until: (async () => {
            seen.floorCard = ((await api('GET', '/state')).json.agents as any[]).find((a) => a.source === 'claude-code' && a.parent === null);
            const raised = await api('PUT', '/usage/budgets', { scope: 'team', target: 'shop', period: 'day', tokens: 1_000_000 });
            assert.equal(raised.status, 200);
          })(),
        };
      },
      and(hasResult('toolu_two'), not(hasResult('toolu_three'))),
    ),
    step(text('All done.'), hasResult('toolu_three')),
  ]);
  try {
    const setup = claudeSetup('shop');
    const said = execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', setup.project, '--server', server.url], { encoding: 'utf8' });
    assert.match(said, /telemetry: on/);
    const set = await api('PUT', '/usage/budgets', { scope: 'team', target: 'shop', period: 'day', tokens: 1000 });
    assert.equal(set.status, 200, JSON.stringify(set.json));
    const run = await runClaude(setup, model.url, 'BUDGET-RUN: run the three commands', { timeoutMs: 150_000, args: ['--allowedTools', 'Bash'] });
    assert.equal(run.code, 0, run.stderr);

    // The model saw the budget's reason as the denied call's result.
    assert.ok(seen.deniedResult, 'the stand-in received a result for the denied call');
    assert.match(seen.deniedResult, /budget for team shop reached: [\d,]+ tokens of 1,000 tokens today/);
    assert.ok(seen.paused.spent >= 1000, `spent ${seen.paused.spent}`);
    // The floor showed the agent paused, and why.
    assert.match(seen.floorCard?.activity ?? '', /^Paused: budget for team shop reached: [\d,]+ tokens of 1,000 tokens today/);
    // After the raise the next call ran: its result is the command's output, not a denial.
    const three = toolResults(model.requests.find((r) => hasResult('toolu_three')(r))!).find((r) => r.tool_use_id === 'toolu_three')!;
    assert.equal(three.is_error, false);
    assert.match(three.content, /three/);
    const one = toolResults(model.requests.find((r) => hasResult('toolu_one')(r))!).find((r) => r.tool_use_id === 'toolu_one')!;
    assert.match(one.content, /one/, 'the call before the budget was reached ran');
    // The crossing, the pause and the lift are events of the usage stream.
    const b = (await api('GET', '/usage/budgets')).json.budgets.find((x: any) => x.key === 'team:shop:day');
    assert.equal(b.pausedNow, false);
    assert.equal(b.version, 2);
    t.diagnostic(`claude run ${run.ms} ms; ${model.requests.length} requests; denied with: ${seen.deniedResult}`);
  } finally {
    await model.close();
    await server.stop();
  }
});
