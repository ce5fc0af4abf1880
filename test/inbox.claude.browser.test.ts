// The approvals inbox in a real browser, answering a real Claude Code session:
// a Bash call waits, shows up in the inbox with the agent, the tool, a readable
// digest and how long it has waited; clicking Allow lets it run, and the inbox
// empties by itself (live stream, no reload). The agent's card on the floor
// shows the same request while it waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { claudeAvailable, claudeSetup, runClaude } from './support/claude.js';
import { modelStandin, step, text, toolUse, hasResult, not, toolResults } from './support/model-standin.js';
import { PACKAGE_ROOT } from '../src/server/index.js';

test('click Allow in the inbox: the waiting Bash call runs and the inbox empties', async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)')) return;
  const roost = await inProcess();
  const browser = await launch();
  const model = await modelStandin([
    step(toolUse('Bash', { command: 'echo allowed > inbox-marker.txt', description: 'write a marker' }, 'toolu_inbox'), not(hasResult('toolu_inbox'))),
    step(text('marker written'), hasResult('toolu_inbox')),
  ]);
  try {
    const setup = claudeSetup('shop');
    execFileSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'roost.js'), 'hooks', 'install', '--project', setup.project, '--server', roost.url, '--approvals', 'Bash', '--window', '60s']);

    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/inbox');
    await page.getByTestId('inbox-empty').waitFor({ timeout: 10_000 });
    await page.getByTestId('inbox-connection').getByText('Live').waitFor({ timeout: 10_000 });

    const running = runClaude(setup, model.url, 'write the marker');
    const item = page.getByTestId('inbox-item');
    try {
      await item.waitFor({ timeout: 30_000 });
    } catch (e) {
      // Say where it stuck: the server's view, and what the CLI did.
      const pending = await (await fetch(roost.url + '/approvals')).json();
      const run = await Promise.race([running, new Promise((r) => setTimeout(() => r('still running'), 100))]);
      throw new Error(`no inbox item: server pending=${JSON.stringify(pending).slice(0, 500)}; model requests=${model.requests.length}; run=${JSON.stringify(run).slice(0, 1500)}`, { cause: e });
    }
    assert.equal(await item.count(), 1);
    assert.match(await item.getByTestId('inbox-agent').innerText(), /^shop · [0-9a-f]{8}$/);
    assert.equal(await item.getByTestId('inbox-tool').innerText(), 'Bash');
    // What it would do, from the real CLI's hook: the command and the directory it runs in.
    assert.equal(await item.getByTestId('detail-cmd').innerText(), '$ echo allowed > inbox-marker.txt');
    assert.equal(await item.getByTestId('detail-cwd').innerText(), setup.project);
    assert.match(await item.getByTestId('inbox-waiting').innerText(), /^\d+ s$/);
    assert.equal(await page.getByTestId('nav-pending').innerText(), '1', 'the nav says one approval waits');
    assert.equal(existsSync(join(setup.project, 'inbox-marker.txt')), false, 'nothing ran before the click');

    // The same request on the agent's card on the floor.
    const agentId = (await item.getAttribute('data-agent'))!;
    const floor = await browser.context.newPage();
    await floor.goto(roost.url + '/');
    await floor.getByTestId(`agent-row-${agentId}`).locator('button').first().click();
    const onCard = floor.getByTestId('agent-card').getByTestId('card-approvals');
    await onCard.waitFor({ timeout: 5_000 });
    assert.match(await onCard.innerText(), /Bash[\s\S]*\$ echo allowed > inbox-marker\.txt/);
    assert.match(await floor.getByTestId('card-status').innerText(), /^Waiting/);

    await item.getByTestId('allow').click();
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(join(setup.project, 'inbox-marker.txt'), 'utf8').trim(), 'allowed', 'the tool ran once allowed');
    assert.equal(model.requests.flatMap(toolResults).find((r) => r.tool_use_id === 'toolu_inbox')?.is_error, false);

    await page.getByTestId('inbox-empty').waitFor({ timeout: 5_000 });
    assert.equal(await page.getByTestId('inbox-item').count(), 0, 'the inbox is empty again');
    assert.equal(await page.getByTestId('inbox-count').innerText(), '0');
    assert.match(await page.getByTestId('inbox-recent').innerText(), /Allowed\s+Bash[\s\S]*by local owner/);
    // The nav's badge goes too (the shell renders the same waiting list a frame after the inbox's view).
    await page.getByTestId('nav-pending').waitFor({ state: 'detached', timeout: 5_000 });
    await onCard.waitFor({ state: 'detached', timeout: 5_000 });
    assert.deepEqual(errors, []);
  } finally {
    await model.close();
    await browser.close();
    await roost.close();
  }
});
