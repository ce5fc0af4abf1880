// The cost panel in a real browser: the real CLIs' OTLP records posted to a
// real server show as the project's total, a daily chart, rooms, sessions
// with their helpers and models; the agent card and the room carry their
// figures; a budget set in the panel crosses 80% and 100% and says so, live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';

const FIX = join(PACKAGE_ROOT, 'test', 'fixtures', 'otlp-real');
const SID = '239f8d66-77f7-4f22-a026-b1bc2a021c13';

test('the cost panel: total, chart, rooms, a session with its helper, models; the agent card and the room; a budget crossed, live', async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)')) return;
  const roost = await inProcess();
  const browser = await launch();
  try {
    const hook = (p: Record<string, unknown>) => fetch(roost.url + '/hooks/claude-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(p) });
    await hook({ hook_event_name: 'SessionStart', session_id: SID, cwd: '/home/dev/shop', source: 'startup' });
    await hook({ hook_event_name: 'SubagentStart', session_id: SID, cwd: '/home/dev/shop', agent_id: 'a0b1c2', agent_type: 'general-purpose' });
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/cost');
    await page.getByTestId('cost-connection').getByText('Live').waitFor({ timeout: 15_000 });
    assert.match(await page.getByTestId('cost-total').innerText(), /^\$0 · 0 tokens · 0 requests/);

    // The records arrive while the panel is open: it follows the stream, no reload.
    for (const b of JSON.parse(readFileSync(join(FIX, 'claude-code-2.1.197.logs.json'), 'utf8'))) {
      assert.equal((await fetch(roost.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).status, 200);
    }
    await page.getByTestId('cost-total').getByText('$0.01').waitFor({ timeout: 10_000 });
    assert.match(await page.getByTestId('cost-total').innerText(), /\$0\.01 · 2\.1k tokens · 4 requests/);
    assert.ok(await page.locator('[data-testid=cost-chart] canvas').count(), 'uPlot drew the daily chart');
    assert.match((await page.getByTestId('cost-chart').getAttribute('aria-label')) ?? '', /2026-12-01 \$0\.01/);
    assert.match(await page.getByTestId('cost-teams').innerText(), /shop\s+\$0\.01/);
    const session = page.getByTestId(`cost-session-claude-code:${SID}`);
    assert.match(await session.innerText(), /2\.1k tokens · 4 requests/);
    assert.match(await page.getByTestId(`cost-agent-claude-code:${SID}/a0b1c2`).innerText(), /helper a0b1c2 \$0\.0053 · 825 tokens · 2 requests/);
    assert.match(await page.getByTestId('cost-models').innerText(), /claude-opus-4-8/);

    // The floor: the room's figure and the agent card's rows.
    await page.goto(roost.url + '/');
    await page.getByTestId('team-cost-shop').waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId('team-cost-shop').innerText(), '$0.01');
    await page.getByTestId(`agent-row-claude-code:${SID}`).locator('button').click();
    assert.match(await page.getByTestId('card-cost').innerText(), /^\$0\.0078 · 1\.3k tokens · 2 requests/);
    assert.match(await page.getByTestId('card-cost-session').innerText(), /^\$0\.01 · 2\.1k tokens · 4 requests/);

    // A budget set in the panel: $0.015 is 87% used, then $0.01 is over.
    await page.goto(roost.url + '/cost');
    await page.getByTestId('cost-connection').getByText('Live').waitFor({ timeout: 15_000 });
    await page.getByTestId('budget-input').fill('0.015');
    await page.getByRole('button', { name: 'Set' }).click();
    await page.getByTestId('budget-notices').getByText('80% of the budget reached').waitFor({ timeout: 10_000 }).catch(async (e) => {
      throw new Error(`${e.message}\nthe panel said: ${await page.getByTestId('cost-budget').innerText()}\nthe server: ${JSON.stringify((await (await fetch(roost.url + '/usage')).json()).state.budget)}`);
    });
    assert.equal(await page.getByTestId('budget-used').innerText(), '87%');
    await page.getByTestId('budget-input').fill('0.01');
    await page.getByRole('button', { name: 'Set' }).click();
    await page.getByTestId('budget-notices').getByText('Budget reached', { exact: true }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'cost-panel.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});
