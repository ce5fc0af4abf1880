// Records what the real Codex and Gemini CLIs hand their hooks, as fixtures:
//
//   npx tsx scripts/record-vendor-hooks.ts [codex] [gemini-cli]
//
// Each CLI runs headless against its scripted model stand-in (test/support)
// with a logging hook on every event it has; the payloads are written, in the
// order they fired, to test/fixtures/<tool>-real-<version>/NN-<Event>.json,
// with the temp home and project paths rewritten to /home/dev/... so the
// fixtures do not depend on the machine. Re-run after upgrading a CLI (the
// folder name carries the version) and keep the old folder until its tests
// are moved.
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { tempDir } from '../test/support/server.js';
import { codexSetup, runCodex } from '../test/support/codex.js';
import { geminiSetup, runGemini } from '../test/support/gemini.js';
import { responsesStandin, rStep, rCall, rText, isChild, isMain, allOf, hasOutput, notR, outputs } from '../test/support/responses-standin.js';
import { geminiStandin, gStep, gCall, gText, gFirstUserIncludes, gHasResponse, gAll, gNot } from '../test/support/gemini-standin.js';

const LOGGER = `
const fs = require('node:fs');
let b = '';
process.stdin.on('data', (c) => (b += c));
process.stdin.on('end', () => {
  fs.appendFileSync(process.argv[3], JSON.stringify({ event: process.argv[2], stdin: b }) + '\\n');
  const answer = process.argv[3].replace(/\\.jsonl$/, '.answer-' + process.argv[2] + '.json');
  if (fs.existsSync(answer)) process.stdout.write(fs.readFileSync(answer, 'utf8'));
});
`;

function version(pkg: string): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

interface Scrub {
  home: string;
  project: string;
}

function scrub(text: string, s: Scrub): string {
  return text.split(s.project).join('/home/dev/shop').split(s.home).join('/home/dev');
}

function writeFixtures(dir: string, log: string, s: Scrub, start: number, label: string): number {
  let n = start;
  if (!existsSync(log)) return n;
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    if (!line) continue;
    const { event, stdin } = JSON.parse(line) as { event: string; stdin: string };
    let payload: unknown = stdin;
    try {
      payload = JSON.parse(scrub(stdin, s));
    } catch {}
    n++;
    writeFileSync(join(dir, `${String(n).padStart(2, '0')}-${event}${label ? '-' + label : ''}.json`), JSON.stringify(payload, null, 2) + '\n');
  }
  return n;
}

async function recordCodex(): Promise<void> {
  const dir = join(PACKAGE_ROOT, 'test', 'fixtures', `codex-real-${version('@openai/codex')}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const events = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'SubagentStart', 'SubagentStop', 'Stop', 'SessionEnd'];
  const work = tempDir('roost-record-');
  writeFileSync(join(work, 'logger.cjs'), LOGGER);
  let n = 0;

  // 1. A session: read a file with the shell, a failing command, a subagent that runs a command.
  {
    const model = await responsesStandin([
      rStep(rCall('exec_command', { cmd: 'cat README.md' }, { callId: 'call_read' }), allOf(isMain, notR(hasOutput('call_read')))),
      rStep(rCall('exec_command', { cmd: 'ls no-such-file' }, { callId: 'call_fail' }), allOf(isMain, hasOutput('call_read'), notR(hasOutput('call_fail')))),
      rStep(rCall('spawn_agent', { message: 'SUBTASK: list the files' }, { namespace: 'multi_agent_v1', callId: 'call_spawn' }), allOf(isMain, hasOutput('call_fail'), notR(hasOutput('call_spawn')))),
      rStep(rCall('exec_command', { cmd: 'ls' }, { callId: 'call_sub_ls' }), allOf(isChild, notR(hasOutput('call_sub_ls')))),
      rStep(rText('Files listed.'), allOf(isChild, hasOutput('call_sub_ls'))),
      rStep((r) => rCall('wait_agent', { targets: [JSON.parse(outputs(r).get('call_spawn') ?? '{}').agent_id ?? ''], timeout_ms: 30000 }, { namespace: 'multi_agent_v1', callId: 'call_wait' }), allOf(isMain, hasOutput('call_spawn'), notR(hasOutput('call_wait')))),
      rStep(rText('All done.'), allOf(isMain, hasOutput('call_wait'))),
    ]);
    const setup = codexSetup(model.url);
    writeFileSync(join(setup.project, 'README.md'), 'hello\n');
    const log = join(work, 'codex-session.jsonl');
    const hooks: Record<string, unknown[]> = {};
    for (const e of events) hooks[e] = [{ hooks: [{ type: 'command', command: `node ${join(work, 'logger.cjs')} ${e} ${log}`, timeout: e === 'SessionEnd' ? 3 : 10 }] }];
    mkdirSync(join(setup.project, '.codex'), { recursive: true });
    writeFileSync(join(setup.project, '.codex', 'hooks.json'), JSON.stringify({ hooks }, null, 2));
    const run = await runCodex(setup, 'read the readme, then delegate a listing');
    console.log(`codex session: exit ${run.code} in ${run.ms} ms, ${model.requests.length} model requests`);
    n = writeFixtures(dir, log, { home: setup.home, project: setup.project }, n, '');
    await model.close();
  }

  // 2. A command that needs approval (Codex asks at PermissionRequest), denied by the hook.
  {
    const model = await responsesStandin([
      rStep(rCall('exec_command', { cmd: 'touch made.txt', sandbox_permissions: 'require_escalated', justification: 'write a file' }, { callId: 'call_touch' }), notR(hasOutput('call_touch'))),
      rStep(rText('It was denied.'), hasOutput('call_touch')),
    ]);
    const setup = codexSetup(model.url);
    const log = join(work, 'codex-permission.jsonl');
    const hooks: Record<string, unknown[]> = {};
    for (const e of ['PreToolUse', 'PermissionRequest', 'PostToolUse']) hooks[e] = [{ hooks: [{ type: 'command', command: `node ${join(work, 'logger.cjs')} ${e} ${log}`, timeout: 10 }] }];
    writeFileSync(log.replace(/\.jsonl$/, '.answer-PermissionRequest.json'), JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied in Roost by alice' } } }));
    mkdirSync(join(setup.project, '.codex'), { recursive: true });
    writeFileSync(join(setup.project, '.codex', 'hooks.json'), JSON.stringify({ hooks }, null, 2));
    const run = await runCodex(setup, 'make a file', { approveForMe: true });
    console.log(`codex permission: exit ${run.code} in ${run.ms} ms`);
    n = writeFixtures(dir, log, { home: setup.home, project: setup.project }, n, 'denied');
    await model.close();
  }
  console.log(`wrote ${n} fixtures to ${dir}`);
}

async function recordGemini(): Promise<void> {
  const dir = join(PACKAGE_ROOT, 'test', 'fixtures', `gemini-cli-real-${version('@google/gemini-cli')}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // BeforeModel, AfterModel and BeforeToolSelection carry the whole request and
  // response (megabytes over a session) and Roost does not install them: left out.
  const events = ['SessionStart', 'SessionEnd', 'BeforeAgent', 'AfterAgent', 'BeforeTool', 'AfterTool', 'Notification', 'PreCompress'];
  const work = tempDir('roost-record-');
  writeFileSync(join(work, 'logger.cjs'), LOGGER);
  let n = 0;
  const settings = (log: string, extra: Record<string, unknown> = {}) => {
    const hooks: Record<string, unknown[]> = {};
    for (const e of events) hooks[e] = [{ hooks: [{ type: 'command', command: `node ${join(work, 'logger.cjs')} ${e} ${log}`, timeout: 10000 }] }];
    return JSON.stringify({ hooks, ...extra }, null, 2);
  };

  // 1. A session: a file read, a shell command, a failing command, a delegated task (invoke_agent).
  {
    const sub = 'SUBTASK: read README.md';
    const model = await geminiStandin([
      gStep(gCall('read_file', { file_path: 'README.md' }), gAll(gNot(gFirstUserIncludes(sub)), gNot(gHasResponse('read_file')))),
      gStep(gCall('run_shell_command', { command: 'echo hi > out.txt', description: 'write a file' }), gAll(gNot(gFirstUserIncludes(sub)), gHasResponse('read_file'), gNot(gHasResponse('run_shell_command')))),
      gStep(gCall('run_shell_command', { command: 'ls no-such-file', description: 'fails' }), gAll(gNot(gFirstUserIncludes(sub)), gHasResponse('run_shell_command'), gNot(gHasResponse('invoke_agent')))),
      gStep(gCall('invoke_agent', { agent_name: 'generalist', prompt: sub }), gAll(gNot(gFirstUserIncludes(sub)), gNot(gHasResponse('invoke_agent')))),
      gStep(gCall('read_file', { file_path: 'README.md' }), gAll(gFirstUserIncludes(sub), gNot(gHasResponse('read_file')))),
      gStep(gCall('complete_task', { result: { response: 'It says hello.' } }), gAll(gFirstUserIncludes(sub), gHasResponse('read_file'))),
      gStep(gText('All done.'), gAll(gNot(gFirstUserIncludes(sub)), gHasResponse('invoke_agent'))),
    ]);
    const setup = geminiSetup();
    writeFileSync(join(setup.project, 'README.md'), 'hello\n');
    mkdirSync(join(setup.project, '.gemini'), { recursive: true });
    const log = join(work, 'gemini-session.jsonl');
    writeFileSync(join(setup.project, '.gemini', 'settings.json'), settings(log));
    const run = await runGemini(setup, model.url, 'read the readme, write a file, delegate');
    console.log(`gemini session: exit ${run.code} in ${run.ms} ms, ${model.requests.length} model requests`);
    n = writeFixtures(dir, log, { home: setup.home, project: setup.project }, n, '');
    await model.close();
  }

  // 2. A shell command the BeforeTool hook denies.
  {
    const model = await geminiStandin([
      gStep(gCall('run_shell_command', { command: 'echo hi > out.txt', description: 'write a file' }), gNot(gHasResponse('run_shell_command'))),
      gStep(gText('It was blocked.'), gHasResponse('run_shell_command')),
    ]);
    const setup = geminiSetup();
    mkdirSync(join(setup.project, '.gemini'), { recursive: true });
    const log = join(work, 'gemini-denied.jsonl');
    writeFileSync(join(setup.project, '.gemini', 'settings.json'), settings(log));
    writeFileSync(log.replace(/\.jsonl$/, '.answer-BeforeTool.json'), JSON.stringify({ decision: 'deny', reason: 'Denied in Roost by alice' }));
    const run = await runGemini(setup, model.url, 'write a file');
    console.log(`gemini denied: exit ${run.code} in ${run.ms} ms`);
    n = writeFixtures(dir, log, { home: setup.home, project: setup.project }, n, 'denied');
    await model.close();
  }
  console.log(`wrote ${n} fixtures to ${dir}`);
}

const which = process.argv.slice(2);
if (which.length === 0 || which.includes('codex')) await recordCodex();
if (which.length === 0 || which.includes('gemini-cli')) await recordGemini();
