// A spent budget's deny for Codex and Gemini CLI (docs/integrations.md,
// "Budgets"): each CLI's recorded tool-gate payload, posted to a server whose
// project budget is spent, is answered in that CLI's own deny shape with the
// budget's reason in the field its model reads; and the real CLIs (against
// their scripted model stand-ins, hooks from `roost hooks install`) hand that
// reason to the model as the blocked call's result, and the command does not run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { codexAvailable, codexSetup, runCodex } from './support/codex.js';
import { responsesStandin, rStep, rCall, rText, hasOutput, notR, outputs } from './support/responses-standin.js';
import { geminiAvailable, geminiSetup, runGemini } from './support/gemini.js';
import { geminiStandin, gStep, gCall, gText, gHasResponse, gNot, gResponses } from './support/gemini-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));
const FIX = join(PACKAGE_ROOT, 'test', 'fixtures');
const fixture = (dir: string, f: string) => JSON.parse(readFileSync(join(FIX, dir, f), 'utf8')) as Record<string, unknown>;

/** What the model must read: the reason, with how the pause ends. */
const REASON = /budget for project default reached: 1\.50 \$ of 1\.00 \$\. Roost paused this agent until an owner raises or lifts the budget \(the Cost page\)\./;

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
  const r = await fetch(roost.url + '/usage/budgets', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scope: 'project', usd: 1 }) });
  assert.equal(r.status, 200, await r.text());
  // The project's budget is spent by someone else's session: it covers every agent of the project.
  await roost.usage.record([{ key: 'spent-1', via: 'bridge', agent: 'claude-code:other', session: 'claude-code:other', team: 'backend', source: 'claude-code', model: 'claude-sonnet-4-5', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, vendorUsd: 1.5, ts: Date.now() }]);
});
after(async () => {
  await roost?.close();
});

async function hook(tool: string, payload: unknown): Promise<any> {
  const r = await fetch(`${roost.url}/hooks/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  assert.equal(r.status, 200);
  return r.json();
}

test('recorded payloads: Codex PreToolUse and PermissionRequest, Gemini CLI BeforeTool are denied in each CLI’s own shape, with the budget’s reason where its model reads it', async () => {
  // Codex 0.171.0 PreToolUse: deny with a non-empty permissionDecisionReason ("Command blocked by PreToolUse hook: <reason>").
  const pre = await hook('codex', fixture('codex-real-0.171.0', '18-PreToolUse-denied.json'));
  assert.deepEqual(Object.keys(pre), ['hookSpecificOutput']);
  assert.deepEqual(Object.keys(pre.hookSpecificOutput).sort(), ['hookEventName', 'permissionDecision', 'permissionDecisionReason']);
  assert.equal(pre.hookSpecificOutput.hookEventName, 'PreToolUse');
  assert.equal(pre.hookSpecificOutput.permissionDecision, 'deny');
  assert.match(pre.hookSpecificOutput.permissionDecisionReason, REASON);
  // Codex 0.171.0 PermissionRequest: decision.behavior deny, its message the denial the model reads; no other keys.
  const ask = await hook('codex', fixture('codex-real-0.171.0', '19-PermissionRequest-denied.json'));
  assert.deepEqual(Object.keys(ask), ['hookSpecificOutput']);
  assert.equal(ask.hookSpecificOutput.hookEventName, 'PermissionRequest');
  assert.deepEqual(Object.keys(ask.hookSpecificOutput.decision).sort(), ['behavior', 'message']);
  assert.equal(ask.hookSpecificOutput.decision.behavior, 'deny');
  assert.match(ask.hookSpecificOutput.decision.message, REASON);
  // Gemini CLI 0.61.0 BeforeTool: { decision: 'deny', reason } ("Tool execution blocked: <reason>").
  const before = await hook('gemini-cli', fixture('gemini-cli-real-0.61.0', '26-BeforeTool-denied.json'));
  assert.deepEqual(Object.keys(before).sort(), ['decision', 'reason']);
  assert.equal(before.decision, 'deny');
  assert.match(before.reason, REASON);
  // What is not a tool gate is not answered with a decision (Codex reads none there).
  assert.deepEqual(await hook('codex', fixture('codex-real-0.171.0', '04-PostToolUse.json')), {});
  assert.deepEqual(await hook('gemini-cli', fixture('gemini-cli-real-0.61.0', '05-AfterTool.json')), {});
});

test('the real Codex CLI: a command of an agent whose budget is spent is blocked, and the model reads the budget’s reason', async (t) => {
  if (!need(t, codexAvailable(), 'the Codex CLI (npm ci installs @openai/codex)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const model = await responsesStandin([
    rStep(rCall('exec_command', { cmd: 'touch made.txt' }, { callId: 'call_spent' }), notR(hasOutput('call_spent'))),
    rStep(rText('stopped'), hasOutput('call_spent')),
  ]);
  try {
    const setup = codexSetup(model.url);
    execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--tool', 'codex', '--project', setup.project, '--server', roost.url], { encoding: 'utf8' });
    const run = await runCodex(setup, 'make a file');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(existsSync(join(setup.project, 'made.txt')), false, 'the blocked command did not run');
    const req = model.requests.find(hasOutput('call_spent'));
    assert.ok(req, 'the model got the blocked call’s outcome');
    assert.match(outputs(req).get('call_spent') ?? '', REASON);
  } finally {
    await model.close();
  }
});

test('the real Gemini CLI: a shell command of an agent whose budget is spent is blocked at BeforeTool, and the model reads the budget’s reason', async (t) => {
  if (!need(t, geminiAvailable(), 'the Gemini CLI (npm ci installs @google/gemini-cli)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const model = await geminiStandin([
    gStep(gCall('run_shell_command', { command: 'echo yes > made.txt', description: 'write a file' }), gNot(gHasResponse('run_shell_command'))),
    gStep(gText('stopped'), gHasResponse('run_shell_command')),
  ]);
  try {
    const setup = geminiSetup('shop');
    execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--tool', 'gemini-cli', '--project', setup.project, '--server', roost.url], { encoding: 'utf8' });
    const run = await runGemini(setup, model.url, 'make a file');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(existsSync(join(setup.project, 'made.txt')), false, 'the blocked command did not run');
    const req = model.requests.find(gHasResponse('run_shell_command'));
    assert.ok(req, 'the model got the blocked call’s outcome');
    const answer = JSON.stringify(gResponses(req).find((r) => r.name === 'run_shell_command')?.response ?? {});
    assert.match(answer, /Tool execution blocked: budget for project default reached/);
    assert.match(answer, /Roost paused this agent until an owner raises or lifts the budget/);
  } finally {
    await model.close();
  }
});
