// The one approvals model with the real Claude Code CLI (headless, against
// the scripted model stand-in): a request whose asker goes away is withdrawn
// and the agent stops showing "waiting" within 2 s, whether Claude Code was
// interrupted (Ctrl-C, which reaches a headless run as SIGINT) or killed
// (SIGKILL). The interactive terminal's Ctrl-C is in
// approvals.tty.claude.test.ts, the hook's own denials in
// approvals.reports.claude.test.ts (one file each: a file must finish within
// the runner's timeout on a loaded machine).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { until } from './support/until.js';
import { claudeAvailable, claudeSetup, spawnClaude } from './support/claude.js';
import { modelStandin } from './support/model-standin.js';
import { MARKER, built, checkLetGo, decide, install, markerScript, pendingMarker, whenLetGo } from './support/approvals-claude.js';

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

test('Claude Code interrupted with Ctrl-C (headless: SIGINT) while a call waits: the approval is withdrawn and the agent stops waiting within 2 s', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;

  // Headless (`claude -p`): Ctrl-C in its terminal is a SIGINT to Claude Code (its hooks run in a session of their own).
  const setup = claudeSetup('shop');
  const model = await modelStandin(markerScript('toolu_int'));
  try {
    install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s');
    const run = spawnClaude(setup, model.url, 'write the marker');
    const p = await pendingMarker(roost.url);
    await until('the agent waiting on the floor', () => roost.floor.state.agents.get(p.asker)?.status === 'waiting', 10_000);
    const t0 = Date.now();
    run.proc.kill('SIGINT');
    checkLetGo('claude -p, SIGINT', await whenLetGo(roost, p.id, p.asker, t0));
    await run.done;
    assert.equal(existsSync(join(setup.project, MARKER)), false, 'the call did not run');
    assert.equal((await decide(roost.url, p.id, 'allow')).status, 409, 'nobody waits: too late to allow');
  } finally {
    await model.close();
  }
});

test('Claude Code killed with SIGKILL while a call waits: the hook notices, the approval is withdrawn and the agent stops waiting within 2 s', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const setup = claudeSetup('shop');
  const model = await modelStandin(markerScript('toolu_kill'));
  try {
    install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s');
    const run = spawnClaude(setup, model.url, 'write the marker');
    const p = await pendingMarker(roost.url);
    const t0 = Date.now();
    run.proc.kill('SIGKILL');
    checkLetGo('claude -p, SIGKILL', await whenLetGo(roost, p.id, p.asker, t0));
    assert.match(roost.approvals.state.byId.get(p.id)!.reason, /stopped waiting/);
    assert.equal(existsSync(join(setup.project, MARKER)), false);
  } finally {
    await model.close();
  }
});

