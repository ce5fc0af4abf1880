// The real Claude Code CLI using `roost mcp` as `roost hooks install --mcp`
// registers it: the model stand-in calls mcp__roost__report_status, and the
// session's own agent on the floor (the one its hooks put there) shows it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { claudeAvailable, claudeSetup, runClaude } from './support/claude.js';
import { statusTimeline, floorEvents, agentOf } from './support/timeline.js';
import { modelStandin, step, text, toolUse, hasResult, and, not, toolResults, type RecordedRequest } from './support/model-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

test('Claude Code loads the roost MCP server install registered, and its report_status changes the session’s status on the floor', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const setup = claudeSetup('shop');
  const said = execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', setup.project, '--server', roost.url, '--mcp', '--no-telemetry'], { encoding: 'utf8' });
  assert.match(said, /mcp: roost registered/);
  // Claude Code applies a project's permission rules (here `mcp__roost`) only
  // in a folder the person has trusted (the dialog of the first interactive
  // run): that answer, as ~/.claude.json keeps it. Untrusted, the call is
  // refused in -p mode ("you haven't granted it yet").
  writeFileSync(join(setup.home, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, projects: { [setup.project]: { hasTrustDialogAccepted: true } } }));
  // In -p mode Claude Code may call the model before the server has connected
  // (`roost mcp` is a node process start): the tool then answers "still
  // connecting, call WaitForMcpServers", and the model does, as a model would.
  const report = (id: string) => toolUse('mcp__roost__report_status', { status: 'waiting', activity: 'waiting for the cart review' }, id);
  const failed = (id: string) => (req: RecordedRequest) => toolResults(req).some((r) => r.tool_use_id === id && r.is_error);
  const model = await modelStandin([
    step(report('toolu_mcp'), not(hasResult('toolu_mcp'))),
    step(toolUse('WaitForMcpServers', {}, 'toolu_wait'), and(failed('toolu_mcp'), not(hasResult('toolu_wait')))),
    step(report('toolu_mcp2'), and(hasResult('toolu_wait'), not(hasResult('toolu_mcp2')))),
    step(text('Reported.'), (req) => (hasResult('toolu_mcp')(req) && !failed('toolu_mcp')(req)) || hasResult('toolu_mcp2')(req)),
  ]);
  try {
    const run = await runClaude(setup, model.url, 'tell the floor you are waiting');
    assert.equal(run.code, 0, run.stderr);
    const init = run.messages.find((m) => m.type === 'system' && m.subtype === 'init');
    const sid = init?.session_id;
    assert.ok(sid, 'the CLI reported its session id');
    assert.ok(
      (init.mcp_servers ?? []).some((s: any) => s.name === 'roost' && s.status !== 'failed'),
      `the roost server is loaded without a prompt: ${JSON.stringify(init.mcp_servers)}`,
    );
    const results = model.requests.flatMap(toolResults);
    const result = results.find((r) => r.tool_use_id === 'toolu_mcp' && !r.is_error) ?? results.find((r) => r.tool_use_id === 'toolu_mcp2');
    assert.ok(result, 'the model got the tool’s result');
    assert.equal(result.is_error, false, result.content);
    assert.match(result.content, /status: waiting · waiting for the cart review/);

    const session = `claude-code:${sid}`;
    const mine = (await floorEvents(roost.store)).filter((e) => e.type === 'status' && agentOf(e) === session && e.activity === 'waiting for the cart review');
    assert.equal(mine.length, 1, 'the MCP server reported on the session’s own desk');
    assert.equal(roost.floor.state.agents.get(session)?.name !== session, true, 'the hooks’ name for the session is kept');
    const hist = await statusTimeline(roost.store);
    // idle (SessionStart) → thinking (prompt) → [working → thinking: a call before the server connected, and the wait]
    // → working (the MCP tool) → waiting (report_status) → thinking (result) → done → left
    const h = hist.get(session) ?? [];
    assert.deepEqual(h.slice(0, 2), ['idle', 'thinking'], h.join(' → '));
    assert.deepEqual(h.slice(-5), ['working', 'waiting', 'thinking', 'done', 'left'], h.join(' → '));
    assert.equal([...roost.floor.state.agents.keys()].some((id) => id.startsWith('mcp:')), false, 'no second desk for the MCP server');
  } finally {
    await model.close();
  }
});
