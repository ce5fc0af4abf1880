// The real Codex CLI (@openai/codex, its native binary), headless, against the
// scripted Responses API stand-in, with hooks written by
// `roost hooks install --tool codex`: a session with a file read, a failing
// command and a spawned subagent on the floor, with its timeline of statuses;
// and the approval Codex asks for (an escalated command) allowed and denied
// from Roost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { codexAvailable, codexSetup, runCodex, type CodexRun } from './support/codex.js';
import { responsesStandin, rStep, rCall, rText, isChild, isMain, allOf, hasOutput, notR, outputs } from './support/responses-standin.js';
import { statusTimeline, floorEvents, agentOf } from './support/timeline.js';
import { until } from './support/until.js';
import { decide, pendingOf } from './support/approvals-http.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

function install(project: string, server: string, ...extra: string[]): string {
  return execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--tool', 'codex', '--project', project, '--server', server, ...extra], { encoding: 'utf8' });
}

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

test('a Codex session: the agent in the folder’s team, its commands, the spawned subagent as its helper with its own command, statuses at each step, the end', async (t) => {
  if (!need(t, codexAvailable(), 'the Codex CLI (npm ci installs @openai/codex)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const model = await responsesStandin([
    rStep(rCall('exec_command', { cmd: 'cat README.md' }, { callId: 'call_read' }), allOf(isMain, notR(hasOutput('call_read')))),
    rStep(rCall('exec_command', { cmd: 'ls no-such-file' }, { callId: 'call_fail' }), allOf(isMain, hasOutput('call_read'), notR(hasOutput('call_fail')))),
    rStep(rCall('spawn_agent', { message: 'SUBTASK: list the files' }, { namespace: 'multi_agent_v1', callId: 'call_spawn' }), allOf(isMain, hasOutput('call_fail'), notR(hasOutput('call_spawn')))),
    rStep(rCall('exec_command', { cmd: 'ls' }, { callId: 'call_sub_ls' }), allOf(isChild, notR(hasOutput('call_sub_ls')))),
    rStep(rText('Files listed.'), allOf(isChild, hasOutput('call_sub_ls'))),
    rStep((r) => rCall('wait_agent', { targets: [JSON.parse(outputs(r).get('call_spawn') ?? '{}').agent_id ?? ''], timeout_ms: 30000 }, { namespace: 'multi_agent_v1', callId: 'call_wait' }), allOf(isMain, hasOutput('call_spawn'), notR(hasOutput('call_wait')))),
    rStep(rText('All done.'), allOf(isMain, hasOutput('call_wait'))),
  ]);
  try {
    const setup = codexSetup(model.url);
    writeFileSync(join(setup.project, 'README.md'), 'hello from the readme\n');
    const said = install(setup.project, roost.url);
    assert.match(said, /roost hooks installed for codex/);
    const run = await runCodex(setup, 'read the readme, then delegate a listing');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(model.scripted().length, 7, 'the model saw all seven scripted turns');
    assert.match(outputs(model.requests.find(hasOutput('call_read'))!).get('call_read') ?? '', /hello from the readme/, 'the file was read');

    const sid = `codex:${run.threadId}`;
    // SessionEnd's hook may still be posting when Codex exits.
    const lead = await until('the session to leave the floor', () => { const a = roost.floor.state.agents.get(sid); return a && a.leftAt !== null ? a : undefined; }, 15_000);
    assert.equal(lead.source, 'codex');
    assert.equal(roost.floor.state.teams.get(lead.team)?.name, 'shop', 'team is the project folder');
    const helper = [...roost.floor.state.agents.values()].find((a) => a.parent === sid);
    assert.ok(helper, 'the spawned subagent stands beside the session');
    assert.equal(helper.role, 'default');
    assert.equal(helper.team, lead.team);

    const events = await floorEvents(roost.store);
    const toolsOf = (id: string) => events.filter((e) => e.type === 'tool' && agentOf(e) === id).map((e) => e.activity);
    assert.deepEqual(toolsOf(sid).slice(0, 3), ['Bash: $ cat README.md', 'Bash: $ ls no-such-file', 'spawn_agent: SUBTASK: list the files']);
    assert.match(String(toolsOf(sid)[3]), /^wait_agent: /);
    assert.deepEqual(toolsOf(helper.id), ['Bash: $ ls'], 'the subagent’s command on its own desk');

    const hist = await statusTimeline(roost.store);
    // idle (start) → thinking (prompt) → working/thinking per tool (read, fail, spawn, wait) → done (Stop) → left (SessionEnd)
    assert.deepEqual(hist.get(sid), ['idle', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'done', 'left']);
    // working (started) → thinking (its task) → working (ls) → thinking → done (SubagentStop) → left with the session
    assert.deepEqual(hist.get(helper.id), ['working', 'thinking', 'working', 'thinking', 'done', 'left']);
    t.diagnostic(`codex run: ${run.ms} ms`);
  } finally {
    await model.close();
  }
});

// ---------------------------------------------------------------- approvals


/** An escalated command (Codex asks before it runs), then a closing text. */
function escalated(callId: string) {
  return [
    rStep(rCall('exec_command', { cmd: 'touch made.txt', sandbox_permissions: 'require_escalated', justification: 'write a file' }, { callId }), notR(hasOutput(callId))),
    rStep(rText('finished'), hasOutput(callId)),
  ];
}

async function askAndDecide(decision: 'allow' | 'deny'): Promise<{ run: CodexRun; project: string; output: string; approval: any; sid: string }> {
  const callId = `call_${decision}`;
  const model = await responsesStandin(escalated(callId));
  try {
    const setup = codexSetup(model.url);
    install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s');
    // `--approve-for-me` is how a headless `codex exec` reaches its approval
    // prompts (plain exec never asks); the PermissionRequest hook answers first.
    const running = runCodex(setup, 'make a file', { approveForMe: true });
    let ended: CodexRun | undefined;
    void running.then((r) => (ended = r));
    const p = await until('a pending approval', async () => {
      if (ended) throw new Error(`codex ended (${ended.code}) before asking: ${ended.stderr.slice(0, 800)}`);
      return (await pendingOf(roost.url)).find((a) => a.source === 'codex' && a.input.includes('made.txt'));
    }, 60_000);
    assert.equal(p.tool, 'Bash');
    assert.match(p.input, /^\$ touch made\.txt/);
    await until('the agent waiting on the floor', () => roost.floor.state.agents.get(p.asker)?.status === 'waiting', 10_000);
    assert.equal(existsSync(join(setup.project, 'made.txt')), false);
    const d = await decide(roost.url, p.id, decision, 'alice');
    assert.equal(d.status, 200);
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    const req = model.requests.find(hasOutput(callId));
    assert.ok(req, 'the model got the command’s outcome');
    return { run, project: setup.project, output: outputs(req).get(callId) ?? '', approval: d.json.approval, sid: p.asker };
  } finally {
    await model.close();
  }
}

test('Codex asks before an escalated command: denied in Roost it does not run and the model reads why; allowed it runs', async (t) => {
  if (!need(t, codexAvailable(), 'the Codex CLI (npm ci installs @openai/codex)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;

  const denied = await askAndDecide('deny');
  assert.equal(denied.approval.status, 'denied');
  assert.equal(existsSync(join(denied.project, 'made.txt')), false, 'the denied command did not run');
  assert.match(denied.output, /Denied in Roost by alice/);
  const hist = await statusTimeline(roost.store);
  // … working (PreToolUse) → waiting (the approval) → thinking (Denied) … → done → left
  const h = hist.get(denied.sid)!;
  assert.deepEqual(h.slice(h.indexOf('waiting') - 1), ['working', 'waiting', 'thinking', 'done', 'left']);

  const allowed = await askAndDecide('allow');
  assert.equal(allowed.approval.status, 'allowed');
  assert.equal(existsSync(join(allowed.project, 'made.txt')), true, 'the allowed command ran');
  assert.doesNotMatch(allowed.output, /Denied|Rejected/);
  const h2 = (await statusTimeline(roost.store)).get(allowed.sid)!;
  assert.deepEqual(h2.slice(h2.indexOf('waiting') - 1), ['working', 'waiting', 'working', 'thinking', 'done', 'left']);
});
