// Budget notices in the inbox, in a real browser (docs/integrations.md,
// "Budgets"): a team's day budget crossing 80% shows in the open inbox as it
// happens (the usage scope of the page's one live connection), linking to the
// Cost page; at 100% the same notice says the agents are paused and why (the
// reason budget.paused wrote); a person dismisses it and it stays dismissed
// in that browser; a raise ends the pause and the notice goes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';

const AGENT = 'claude-code:0c9d7e1a-4b2c-4d3e-9f80-a1b2c3d4e5f6';

test('the inbox shows a budget at 80% as it crosses, then the pause at 100% with its reason; each links to the Cost page and can be dismissed', async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)')) return;
  const roost = await inProcess();
  const browser = await launch();
  try {
    const put = (b: unknown) => fetch(roost.url + '/usage/budgets', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    let k = 0;
    const spend = (usd: number) => roost.usage.record([{ key: `i${++k}`, via: 'bridge', agent: AGENT, session: AGENT, team: 'backend', source: 'claude-code', model: 'claude-sonnet-4-5', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, vendorUsd: usd, ts: Date.now() }]);
    assert.equal((await put({ scope: 'team', target: 'backend', period: 'day', usd: 1 })).status, 200);

    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/inbox');
    await page.getByTestId('inbox-connection').getByText('Live').waitFor({ timeout: 15_000 });
    await page.getByTestId('inbox-empty').waitFor();
    assert.equal(await page.getByTestId('inbox-budget').count(), 0, 'no notice under 80%');

    // 80%: the notice comes to the open page, naming the budget and what it has spent.
    await spend(0.85);
    const notice = page.locator('[data-testid=inbox-budget][data-budget="team:backend:day"]');
    await notice.waitFor({ timeout: 10_000 });
    assert.equal(await notice.getAttribute('data-threshold'), '80');
    assert.match(await notice.innerText(), /80% reached\s+The budget for team backend is 80% spent \(0\.85 \$ of 1\.00 \$ today\)\./);

    // 100%: the same budget's notice says its agents are paused, with the reason the hooks give the model.
    await spend(0.2);
    await page.locator('[data-testid=inbox-budget][data-threshold="100"]').waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId('inbox-budget').count(), 1, 'one notice per budget: its last crossing');
    assert.match(await notice.innerText(), /^Paused\s+budget for team backend reached: 1\.05 \$ of 1\.00 \$ today\. Its agents’ tool calls are denied until an owner raises or lifts the budget\./);
    const paused = (await roost.store.read('usage', 0, 100_000)).map((e) => JSON.parse(e.body)).find((e) => e.type === 'budget.paused');
    assert.ok((await notice.getByTestId('inbox-budget-text').innerText()).startsWith(paused.reason), 'the reason is the one budget.paused wrote');
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'inbox-budget-paused.png'), fullPage: true });

    // The link opens the Cost page, where the budget is listed as paused.
    await notice.getByTestId('inbox-budget-cost').click();
    await page.waitForURL(/\/cost$/);
    await page.locator('[data-testid=budget-row][data-budget="team:backend:day"]').getByText('paused').waitFor({ timeout: 10_000 });

    // Another budget's crossing is a notice of its own, newest first.
    await page.goBack();
    await notice.waitFor({ timeout: 10_000 });
    assert.equal((await put({ scope: 'project', usd: 1.3 })).status, 200);
    const project = page.locator('[data-testid=inbox-budget][data-budget="project::total"]');
    await project.waitFor({ timeout: 10_000 });
    assert.match(await project.innerText(), /The budget for project default is 80% spent \(1\.05 \$ of 1\.30 \$\)/);
    assert.deepEqual(await page.getByTestId('inbox-budget').evaluateAll((els) => els.map((e) => e.getAttribute('data-budget'))), ['project::total', 'team:backend:day']);

    // Dismissed, a notice stays dismissed for this person in this browser, across a reload; the other stays.
    await notice.getByTestId('inbox-budget-dismiss').click();
    await notice.waitFor({ state: 'detached' });
    await page.reload();
    await project.waitFor({ timeout: 15_000 });
    assert.equal(await notice.count(), 0, 'the dismissed notice stays hidden');

    // A raise re-arms the budget: its notice goes.
    assert.equal((await put({ scope: 'project', usd: 10 })).status, 200);
    await project.waitFor({ state: 'detached', timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});
