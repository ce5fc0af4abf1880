// Budgets in a real browser: a team's day budget spent pauses its agent; the
// agent card on the floor says paused and why; the Cost page lists the
// budgets with what each has spent and which is paused; the owner raises the
// budget there and the agent's next tool call runs; a new budget added from
// the page is listed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';

const SID = '5f0e0c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6';
const AGENT = `claude-code:${SID}`;

test('the Cost page lists the budgets, shows the paused one, and a raise there lets the next tool call run; the agent card says paused and why', async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)')) return;
  const roost = await inProcess();
  const browser = await launch();
  try {
    const hook = async (p: Record<string, unknown>) => (await fetch(roost.url + '/hooks/claude-code?team=backend', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: SID, cwd: '/home/dev/api', ...p }) })).json();
    const put = (b: unknown) => fetch(roost.url + '/usage/budgets', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    await hook({ hook_event_name: 'SessionStart', source: 'startup' });
    assert.equal((await put({ scope: 'team', target: 'backend', period: 'day', usd: 1 })).status, 200);
    assert.equal((await put({ scope: 'project', usd: 100 })).status, 200);
    await roost.usage.record([{ key: 'b1', via: 'bridge', agent: AGENT, session: AGENT, team: 'backend', source: 'claude-code', model: 'claude-sonnet-4-5', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, vendorUsd: 1.05, ts: Date.now() }]);
    const denied: any = await hook({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'make deploy' } });
    assert.equal(denied.hookSpecificOutput.permissionDecision, 'deny');

    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // The floor: the agent's card says it is paused, and why.
    await page.goto(roost.url + '/');
    await page.getByTestId(`agent-row-${AGENT}`).locator('button').click();
    await page.getByTestId('card-paused').waitFor({ timeout: 10_000 });
    assert.match(await page.getByTestId('card-paused').innerText(), /^budget for team backend reached: 1\.05 \$ of 1\.00 \$ today/);

    // The Cost page: both budgets, the team's paused.
    await page.goto(roost.url + '/cost');
    await page.getByTestId('cost-connection').getByText('Live').waitFor({ timeout: 15_000 });
    const team = page.locator('[data-testid=budget-row][data-budget="team:backend:day"]');
    await team.waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId('budget-row').count(), 2);
    assert.match(await team.innerText(), /team backend · per day \(UTC\)\s+1\.05 \$ of 1\.00 \$\s+paused/);
    assert.match(await page.locator('[data-testid=budget-row][data-budget="project::total"]').innerText(), /project default\s+1\.05 \$ of 100\.00 \$\s+ok/);

    // The owner raises it from the page: the pause ends at once, and the next call runs.
    await team.getByTestId('budget-raise-input').fill('5');
    await team.getByTestId('budget-raise').click();
    await page.waitForFunction(() => !document.querySelector('[data-budget="team:backend:day"]')?.classList.contains('paused'), undefined, { timeout: 10_000 });
    assert.match(await team.innerText(), /1\.05 \$ of 5\.00 \$\s+ok/);
    assert.deepEqual(await hook({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'make deploy' } }), {});

    // A new budget from the page: an agent's, in tokens, in total.
    await page.getByTestId('budget-scope').selectOption('agent');
    await page.getByTestId('budget-target').fill(AGENT);
    await page.getByTestId('budget-period').selectOption('total');
    await page.getByTestId('budget-unit').selectOption('tokens');
    await page.getByTestId('budget-amount').fill('500000');
    await page.getByTestId('budget-add').click();
    const mine = page.locator(`[data-testid=budget-row][data-budget="agent:${AGENT}:total"]`);
    await mine.waitFor({ timeout: 10_000 });
    assert.match(await mine.innerText(), /110 tokens of 500,000 tokens\s+ok/);
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'cost-budgets.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});
