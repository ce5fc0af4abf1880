// Interactive Claude Code in a terminal (a pseudo-terminal from util-linux
// `script`), against the scripted model stand-in: Ctrl-C typed while a tool
// call waits for approval withdraws the request, and the agent stops showing
// "waiting", within 2 s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { claudeAvailable, claudeSetup, spawnInteractiveClaude } from './support/claude.js';
import { modelStandin } from './support/model-standin.js';
import { MARKER, built, checkLetGo, install, markerScript, pendingMarker, whenLetGo } from './support/approvals-claude.js';

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

test('interactive Claude Code in a terminal, Ctrl-C typed while a call waits: the approval is withdrawn and the agent stops waiting within 2 s', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const setup = claudeSetup('shop');
  const model = await modelStandin(markerScript('toolu_tty'));
  install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s');
  const tty = spawnInteractiveClaude(setup, model.url, 'write the marker');
  if (!tty) {
    await model.close();
    need(t, false, 'util-linux `script` (a pseudo-terminal for the interactive CLI)');
    return;
  }
  try {
    const p = await pendingMarker(roost.url, 90_000);
    const t0 = Date.now();
    tty.stdin!.write('\x03'); // the keystroke: the terminal sends SIGINT to Claude Code
    checkLetGo('interactive claude, Ctrl-C', await whenLetGo(roost, p.id, p.asker, t0));
    assert.equal(existsSync(join(setup.project, MARKER)), false, 'the call did not run');
  } finally {
    tty.kill('SIGKILL');
    await model.close();
  }
});

