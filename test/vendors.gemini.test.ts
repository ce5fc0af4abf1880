// The real Gemini CLI (@google/gemini-cli), headless, against the scripted
// Gemini API stand-in, with hooks written by `roost hooks install --tool
// gemini-cli`: a session with a file read, a shell command, a failing command
// and a delegated task (invoke_agent) on the floor with its timeline of
// statuses; and a shell command allowed and denied from Roost at BeforeTool.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { geminiAvailable, geminiSetup, runGemini, type GeminiRun } from './support/gemini.js';
import { geminiStandin, gStep, gCall, gText, gFirstUserIncludes, gHasResponse, gAll, gNot, gResponses } from './support/gemini-standin.js';
import { statusTimeline, floorEvents, agentOf } from './support/timeline.js';
import { until } from './support/until.js';
import { decide, pendingOf } from './support/approvals-http.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

function install(project: string, server: string, ...extra: string[]): string {
  return execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--tool', 'gemini-cli', '--project', project, '--server', server, ...extra], { encoding: 'utf8' });
}

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

const SUB = 'SUBTASK: read README.md';

test('a Gemini CLI session: the agent in the folder’s team, its tools, the delegated task as a helper with its own calls, statuses at each step, the end', async (t) => {
  if (!need(t, geminiAvailable(), 'the Gemini CLI (npm ci installs @google/gemini-cli)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const main = gNot(gFirstUserIncludes(SUB));
  const sub = gFirstUserIncludes(SUB);
  const model = await geminiStandin([
    gStep(gCall('read_file', { file_path: 'README.md' }), gAll(main, gNot(gHasResponse('read_file')))),
    gStep(gCall('run_shell_command', { command: 'ls no-such-file', description: 'fails' }), gAll(main, gHasResponse('read_file'), gNot(gHasResponse('run_shell_command')))),
    gStep(gCall('invoke_agent', { agent_name: 'generalist', prompt: SUB }), gAll(main, gHasResponse('run_shell_command'), gNot(gHasResponse('invoke_agent')))),
    gStep(gCall('read_file', { file_path: 'README.md' }), gAll(sub, gNot(gHasResponse('read_file')))),
    gStep(gCall('complete_task', { result: { response: 'It says hello.' } }), gAll(sub, gHasResponse('read_file'))),
    gStep(gText('All done.'), gAll(main, gHasResponse('invoke_agent'))),
  ]);
  try {
    const setup = geminiSetup('shop');
    writeFileSync(join(setup.project, 'README.md'), 'hello from the readme\n');
    assert.match(install(setup.project, roost.url), /roost hooks installed for gemini-cli/);
    const run = await runGemini(setup, model.url, 'read the readme, then delegate');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(model.scripted().length, 6, 'the model saw all six scripted turns');
    assert.match(JSON.stringify(gResponses(model.requests.find(gHasResponse('read_file'))!)), /hello from the readme/, 'the file was read');

    const sid = `gemini:${run.sessionId}`;
    const lead = await until('the session to leave the floor', () => { const a = roost.floor.state.agents.get(sid); return a && a.leftAt !== null ? a : undefined; }, 15_000);
    assert.equal(lead.source, 'gemini-cli');
    assert.equal(roost.floor.state.teams.get(lead.team)?.name, 'shop');
    const helper = [...roost.floor.state.agents.values()].find((a) => a.parent === sid);
    assert.ok(helper, 'the delegated task stands beside the session');
    assert.equal(helper.role, 'generalist');

    const events = await floorEvents(roost.store);
    const toolsOf = (id: string) => events.filter((e) => e.type === 'tool' && agentOf(e) === id).map((e) => e.activity);
    assert.deepEqual(toolsOf(sid), ['read_file: read README.md', 'run_shell_command: $ ls no-such-file', `invoke_agent: generalist: ${SUB}`]);
    assert.deepEqual(toolsOf(helper.id), ['read_file: read README.md', 'complete_task: result: {"response":"It says hello."}'], 'the subagent’s calls on its desk');
    assert.ok(events.some((e) => e.activity === 'Failed: run_shell_command: $ ls no-such-file · exit code 2'));

    const hist = await statusTimeline(roost.store);
    assert.deepEqual(hist.get(sid), ['idle', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'done', 'left']);
    assert.deepEqual(hist.get(helper.id), ['working', 'thinking', 'working', 'thinking', 'done', 'left']);
    t.diagnostic(`gemini run: ${run.ms} ms`);
  } finally {
    await model.close();
  }
});

// ---------------------------------------------------------------- approvals


async function askAndDecide(decision: 'allow' | 'deny') {
  const model = await geminiStandin([
    gStep(gCall('run_shell_command', { command: 'echo yes > made.txt', description: 'write a file' }), gNot(gHasResponse('run_shell_command'))),
    gStep(gText('finished'), gHasResponse('run_shell_command')),
  ]);
  try {
    const setup = geminiSetup('shop');
    install(setup.project, roost.url, '--approvals', 'run_shell_command', '--window', '90s');
    const running = runGemini(setup, model.url, 'make a file');
    let ended: GeminiRun | undefined;
    void running.then((r) => (ended = r));
    const p = await until('a pending approval', async () => {
      if (ended) throw new Error(`gemini ended (${ended.code}) before asking: ${ended.stderr.slice(0, 800)}`);
      return (await pendingOf(roost.url)).find((a) => a.source === 'gemini-cli' && a.input.includes('made.txt'));
    }, 90_000);
    assert.equal(p.tool, 'run_shell_command');
    assert.equal(p.input, '$ echo yes > made.txt');
    await until('the agent waiting on the floor', () => roost.floor.state.agents.get(p.asker)?.status === 'waiting', 10_000);
    const d = await decide(roost.url, p.id, decision, 'alice');
    assert.equal(d.status, 200);
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    const answer = gResponses(model.requests.find(gHasResponse('run_shell_command'))!).find((r) => r.name === 'run_shell_command');
    return { project: setup.project, answer: JSON.stringify(answer?.response ?? {}), sid: p.asker as string };
  } finally {
    await model.close();
  }
}

test('with approvals on, a Gemini CLI shell command waits at BeforeTool: denied it does not run and the model reads why; allowed it runs', async (t) => {
  if (!need(t, geminiAvailable(), 'the Gemini CLI (npm ci installs @google/gemini-cli)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const denied = await askAndDecide('deny');
  assert.equal(existsSync(join(denied.project, 'made.txt')), false, 'the denied command did not run');
  assert.match(denied.answer, /Tool execution blocked: Denied in Roost by alice/);
  let h = (await statusTimeline(roost.store)).get(denied.sid)!;
  assert.deepEqual(h, ['idle', 'thinking', 'waiting', 'thinking', 'done', 'left']);

  const allowed = await askAndDecide('allow');
  assert.equal(readFileSync(join(allowed.project, 'made.txt'), 'utf8').trim(), 'yes', 'the allowed command ran');
  h = (await statusTimeline(roost.store)).get(allowed.sid)!;
  assert.deepEqual(h, ['idle', 'thinking', 'waiting', 'working', 'thinking', 'done', 'left']);
});
