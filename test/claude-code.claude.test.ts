// The real Claude Code CLI, headless, against the scripted model stand-in,
// with hooks written by `roost hooks install`: sessions and their subagents on
// the floor, and tool calls that wait for a person's decision.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess, freePort } from './support/server.js';
import { claudeAvailable, claudeSetup, runClaude } from './support/claude.js';
import { until } from './support/until.js';
import { statusTimeline } from './support/timeline.js';
import { decide, pendingOf } from './support/approvals-http.js';
import { endReporter, spoolOf, spooled } from './support/hook-spool.js';
import { modelStandin, step, text, toolUse, hasResult, firstUserIncludes, and, not, toolResults} from './support/model-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

function install(project: string, server: string, ...extra: string[]): string {
  return execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', project, '--server', server, ...extra], { encoding: 'utf8' });
}


let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

test('a session that starts a subagent: the session and its helper on the floor, the helper’s tool on its desk, statuses to the end', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const setup = claudeSetup('shop');
  install(setup.project, roost.url);
  const model = await modelStandin([
    step(toolUse('Agent', { description: 'review cart', prompt: 'SUBTASK: review cart.ts and run a check', subagent_type: 'general-purpose' }, 'toolu_agent'), not(firstUserIncludes('SUBTASK'))),
    step(toolUse('Bash', { command: 'echo sub-hello', description: 'sub says hello' }, 'toolu_sub_bash'), and(firstUserIncludes('SUBTASK'), not(hasResult('toolu_sub_bash')))),
    step(text('sub done'), hasResult('toolu_sub_bash')),
    step(text('All done.'), hasResult('toolu_agent')),
  ]);
  try {
    const run = await runClaude(setup, model.url, 'review the cart');
    assert.equal(run.code, 0, run.stderr);
    const sid = run.messages.find((m) => m.type === 'system' && m.subtype === 'init')?.session_id;
    assert.ok(sid, 'the CLI reported its session id');
    assert.equal(model.scripted().length, 4, 'the model saw all four scripted turns');

    const session = `claude-code:${sid}`;
    const st = roost.floor.state;
    const lead = st.agents.get(session);
    assert.ok(lead, 'the session stands on the floor');
    assert.equal(lead.source, 'claude-code');
    assert.equal(st.teams.get(lead.team)?.name, 'shop', 'team is the project folder');
    const helpers = [...st.agents.values()].filter((a) => a.parent === session);
    assert.equal(helpers.length, 1, 'one helper beside the session');
    const helper = helpers[0];
    assert.equal(helper.role, 'general-purpose');
    assert.equal(helper.team, lead.team, 'the helper sits in the session’s room');
    assert.notEqual(helper.desk, lead.desk);

    // The helper's Bash ran on the helper's desk, not the session's.
    const events = (await roost.store.read('floor', 0, 10_000)).map((e) => JSON.parse(e.body));
    const bashOn = events.filter((e) => e.type === 'tool' && e.tool === 'Bash').map((e) => (typeof e.agent === 'string' ? e.agent : e.agent.id));
    assert.deepEqual(bashOn, [helper.id]);
    assert.equal(helper.tool, 'Bash');
    assert.equal(lead.tool, 'Agent');

    const hist = await statusTimeline(roost.store);
    // idle (SessionStart) → thinking (prompt) → working (Agent tool) → thinking (result) → done (Stop) → left (SessionEnd)
    assert.deepEqual(hist.get(session), ['idle', 'thinking', 'working', 'thinking', 'done', 'left']);
    // working (started, Bash) → thinking (Bash result) → done (SubagentStop) → left with the session
    assert.deepEqual(hist.get(helper.id), ['working', 'thinking', 'done', 'left']);
    assert.equal(lead.status, 'offline');
  } finally {
    await model.close();
  }
});

// ---------------------------------------------------------------- approvals

const MARKER = 'approved-marker.txt';

function markerScript(id: string) {
  return [step(toolUse('Bash', { command: `echo yes > ${MARKER}`, description: 'write a marker' }, id), not(hasResult(id))), step(text('finished'), hasResult(id))];
}

/** The first pending Bash approval; fails with what the CLI did if it ends without one. */
async function pendingBash(url: string, running: Promise<{ code: number | null; messages: any[]; stderr: string }>): Promise<any> {
  let ended: { code: number | null; messages: any[]; stderr: string } | null = null;
  void running.then((r) => (ended = r));
  return until('a pending approval', async () => {
    const p = (await pendingOf(url)).find((a) => a.tool === 'Bash' && a.input.includes(MARKER));
    if (p) return p;
    if (ended) throw new Error(`the CLI ended (${ended.code}) before asking: ${JSON.stringify(ended.messages.filter((m) => m.type === 'user' || m.type === 'result')).slice(0, 1500)} ${ended.stderr.slice(0, 500)}`);
    return undefined;
  }, 30_000);
}


test('with approvals on, a Bash call waits: deny blocks it and the model reads why; allow lets it run', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;

  // Deny.
  {
    const setup = claudeSetup('shop');
    const model = await modelStandin(markerScript('toolu_deny'));
    try {
      install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s');
      const running = runClaude(setup, model.url, 'write the marker');
      const p = await pendingBash(roost.url, running);
      assert.equal(p.source, 'claude-code');
      assert.match(p.input, /^\$ echo yes > approved-marker\.txt/);
      // The agent waits on the floor meanwhile.
      await until('the agent waiting on the floor', () => roost.floor.state.agents.get(p.asker)?.status === 'waiting', 10_000);
      assert.equal(existsSync(join(setup.project, MARKER)), false);
      const d = await decide(roost.url, p.id, 'deny', 'alice');
      assert.equal(d.status, 200);
      assert.equal(d.json.approval.status, 'denied');
      assert.equal(d.json.approval.decidedBy, 'alice');
      const again = await decide(roost.url, p.id, 'allow');
      assert.equal(again.status, 409, 'the first decision wins');
      const { code } = await running;
      assert.equal(code, 0);
      assert.equal(existsSync(join(setup.project, MARKER)), false, 'the denied command did not run');
      const results = model.requests.flatMap(toolResults).filter((r) => r.tool_use_id === 'toolu_deny');
      assert.ok(results.length >= 1, 'the model got a tool result');
      assert.equal(results[0].is_error, true);
      assert.match(results[0].content, /Denied in Roost by alice/);
    } finally {
      await model.close();
    }
  }

  // Allow.
  {
    const setup = claudeSetup('shop');
    const model = await modelStandin(markerScript('toolu_allow'));
    try {
      install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s');
      const running = runClaude(setup, model.url, 'write the marker');
      const p = await pendingBash(roost.url, running);
      const d = await decide(roost.url, p.id, 'allow');
      assert.equal(d.status, 200);
      assert.equal(d.json.approval.decidedBy, 'local owner', 'local mode decides as the local owner');
      const { code } = await running;
      assert.equal(code, 0);
      assert.equal(readFileSync(join(setup.project, MARKER), 'utf8').trim(), 'yes', 'the allowed command ran');
      const results = model.requests.flatMap(toolResults).filter((r) => r.tool_use_id === 'toolu_allow');
      assert.equal(results[0].is_error, false);
    } finally {
      await model.close();
    }
  }
});

test('with approvals on, no answer within the window denies the call; an unreachable server denies it too', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;

  // Nobody answers within 2 s.
  {
    const setup = claudeSetup('shop');
    const model = await modelStandin(markerScript('toolu_late'));
    try {
      install(setup.project, roost.url, '--approvals', 'Bash', '--window', '2s');
      const t0 = Date.now();
      const { code } = await runClaude(setup, model.url, 'write the marker');
      assert.equal(code, 0);
      assert.ok(Date.now() - t0 >= 2000, 'the call waited for the window');
      assert.equal(existsSync(join(setup.project, MARKER)), false);
      const r = model.requests.flatMap(toolResults).find((x) => x.tool_use_id === 'toolu_late');
      assert.ok(r);
      assert.match(r.content, /No decision in Roost within 2s: denied/);
      const recent = ((await (await fetch(roost.url + '/approvals')).json())).recent;
      assert.equal(recent.find((a: any) => a.input.includes(MARKER) && a.status === 'expired')?.tool, 'Bash');
    } finally {
      await model.close();
    }
  }

  // The server is not there.
  {
    const setup = claudeSetup('shop');
    const model = await modelStandin(markerScript('toolu_down'));
    try {
      const dead = `http://127.0.0.1:${await freePort()}`;
      install(setup.project, dead, '--approvals', 'Bash', '--window', '60s');
      const t0 = Date.now();
      const { code } = await runClaude(setup, model.url, 'write the marker');
      assert.equal(code, 0);
      assert.ok(Date.now() - t0 < 20_000, 'an unreachable server does not hold the agent');
      assert.equal(existsSync(join(setup.project, MARKER)), false, 'no server, no approval, no run');
      const r = model.requests.flatMap(toolResults).find((x) => x.tool_use_id === 'toolu_down');
      assert.ok(r);
      assert.equal(r.is_error, true);
      assert.match(r.content, /could not be reached.*denied because approvals are required/);
      assert.equal(spooled(spoolOf(setup.home)).length, 1, 'the denial waits to be reported to Roost');
    } finally {
      endReporter(spoolOf(setup.home));
      await model.close();
    }
  }
});

test('with approvals off, hooks pointing at a server that is not there do not hold the agent up', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const script = () => [step(toolUse('Bash', { command: 'echo fine', description: 'a harmless call' }, 'toolu_fast'), not(hasResult('toolu_fast'))), step(text('ok'), hasResult('toolu_fast'))];
  // Baseline: the same session with no hooks at all.
  const plain = claudeSetup('plain');
  const m1 = await modelStandin(script());
  const base = await runClaude(plain, m1.url, 'go', { args: ['--allowedTools', 'Bash'] });
  await m1.close();
  const hooked = claudeSetup('hooked');
  install(hooked.project, `http://127.0.0.1:${await freePort()}`);
  const m2 = await modelStandin(script());
  const run = await runClaude(hooked, m2.url, 'go', { args: ['--allowedTools', 'Bash'] });
  await m2.close();
  assert.equal(run.code, 0);
  const r = m2.requests.flatMap(toolResults).find((x) => x.tool_use_id === 'toolu_fast');
  assert.equal(r?.content, 'fine', 'the tool ran: an unreachable server blocks nothing when approvals are off');
  console.log(`# session with no hooks: ${base.ms} ms; with Roost's hooks and no server: ${run.ms} ms`);
  // One hook held until its 5 s timeout would already cost more than this; what remains is process starts on a busy machine.
  assert.ok(run.ms < base.ms + 4000, `hooks to a missing server cost ${run.ms - base.ms} ms`);
});

test('--command-only (Claude Code before http hooks): the same floor and the same approvals through the command hook alone', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const setup = claudeSetup('legacy');
  const out = install(setup.project, roost.url, '--command-only', '--approvals', 'Bash', '--window', '60s');
  assert.match(out, /approvals: Bash/);
  const settings = JSON.parse(readFileSync(join(setup.project, '.claude', 'settings.json'), 'utf8'));
  assert.ok(Object.values(settings.hooks).flat().every((g: any) => g.hooks.every((h: any) => h.type === 'command')), 'no http hook at all');
  const model = await modelStandin(markerScript('toolu_legacy'));
  try {
    const running = runClaude(setup, model.url, 'write the marker');
    const p = await pendingBash(roost.url, running);
    await until('the agent waiting on the floor', () => roost.floor.state.agents.get(p.asker)?.status === 'waiting', 10_000);
    assert.equal((await decide(roost.url, p.id, 'allow')).status, 200);
    const { code } = await running;
    assert.equal(code, 0);
    assert.equal(existsSync(join(setup.project, MARKER)), true);
    const events = (await roost.store.read('floor', 0, 10_000)).map((e) => JSON.parse(e.body)).filter((e) => (typeof e.agent === 'string' ? e.agent : e.agent?.id) === p.asker);
    // Reported once each (no double report from two hooks), in order.
    assert.deepEqual(
      events.map((e) => `${e.type}:${e.status ?? ''}`),
      ['join:idle', 'status:thinking', 'tool:waiting', 'tool:working', 'status:thinking', 'status:done', 'leave:offline'],
    );
  } finally {
    await model.close();
  }
});

test('a background subagent still running when the session stops: the session is not done until the helper is', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const setup = claudeSetup('bg');
  install(setup.project, roost.url);
  const model = await modelStandin([
    step(toolUse('Agent', { description: 'slow check', prompt: 'SUBTASK: slow check', subagent_type: 'general-purpose', run_in_background: true }, 'toolu_bg'), not(firstUserIncludes('SUBTASK'))),
    // The helper's first turn is slow, so the session's turn ends while it runs.
    step({ ...toolUse('Bash', { command: 'echo bg-done', description: 'slow' }, 'toolu_bg_sub'), delayMs: 3000 }, and(firstUserIncludes('SUBTASK'), not(hasResult('toolu_bg_sub')))),
    step(text('sub finished'), hasResult('toolu_bg_sub')),
    step(text('Started it in the background.'), and(hasResult('toolu_bg'), not(firstUserIncludes('SUBTASK')))),
  ]);
  try {
    const run = await runClaude(setup, model.url, 'check slowly');
    assert.equal(run.code, 0, run.stderr);
    const sid = run.messages.find((m) => m.type === 'system' && m.subtype === 'init')?.session_id;
    const session = `claude-code:${sid}`;
    const events = (await roost.store.read('floor', 0, 10_000)).map((e) => JSON.parse(e.body));
    const who = (e: any) => (typeof e.agent === 'string' ? e.agent : e.agent?.id);
    const helper = events.find((e) => e.type === 'join' && e.parent === session)?.agent.id;
    assert.ok(helper, 'the background subagent is a helper of the session');
    const waiting = events.findIndex((e) => who(e) === session && e.status === 'working' && String(e.activity).startsWith('Waiting for background work: 1 helper'));
    const helperDone = events.findIndex((e) => who(e) === helper && e.status === 'done');
    const sessionDone = events.findIndex((e) => who(e) === session && e.status === 'done');
    assert.ok(waiting >= 0, 'the Stop left the session working, waiting for its helper');
    assert.ok(helperDone > waiting, 'the helper finished after the session’s turn ended');
    assert.ok(sessionDone > helperDone, 'the session was done only once its helper was');
    assert.equal(events[sessionDone].activity, 'Finished (background work done)');
  } finally {
    await model.close();
  }
});
