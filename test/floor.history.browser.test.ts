// History in a real browser: an agent's timeline opened from its card shows
// its statuses, tools and the approval it asked for with who decided it, each
// with a time; it pages back and searches; the pulse chart draws events per
// minute per team and counts what arrives while it is open.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { inProcess, post } from './support/server.js';
import { chromiumPath, closeAll, launch, livePage, type Launched } from './support/browser.js';
import { mkdirSync } from 'node:fs';
import { need, screenshotDir } from './support/env.js';
import { until } from './support/until.js';
import { decide, pendingOf } from './support/approvals-http.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';
import type {} from '../web/src/floor/hook.js';

const HAVE = chromiumPath() !== null;
const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197/09-PreToolUse-Bash.json'), 'utf8'));

describe('history on the floor', () => {
  let server: Roost;
  let browser: Launched;
  let page: Page;
  let asker = '';

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    browser = await launch();
    await post(server.url, [
      { type: 'join', agent: { id: 'ada', name: 'Ada', role: 'lead' }, team: 'Payments', status: 'thinking', activity: 'Planning refunds' },
      { type: 'join', agent: { id: 'otto', name: 'Otto', role: 'coder' }, team: 'Payments', parent: 'ada', status: 'working' },
    ]);
    const tools: Record<string, unknown>[] = [];
    for (let i = 0; i < 80; i++) tools.push({ type: 'tool', agent: 'otto', tool: i % 2 ? 'Edit' : 'Read', activity: `refunds step ${i}` });
    await post(server.url, tools);
    await post(server.url, { type: 'message', agent: 'ada', to: 'otto', text: 'How are the refunds?' });
    // A tool call held for a decision, denied by alice.
    const held = fetch(`${server.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1&team=Payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(PRE_BASH) });
    const [p] = await until('the held call pending', async () => {
      const l = await pendingOf(server.url);
      return l.length ? l : undefined;
    }, 10_000);
    asker = p.asker;
    assert.equal((await decide(server.url, p.id, 'deny', 'alice')).status, 200);
    await held;
    page = await livePage(browser, server.url);
  });
  after(() => closeAll(browser, server));

  test("the timeline opened from an agent's card: statuses, tools and an approval with its decider, with times", async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId(`agent-row-${asker}`).locator('button').click();
    await page.getByTestId('card-history').click();
    const tl = page.getByTestId('timeline');
    await tl.waitFor();
    const approval = tl.locator('[data-kind=approval]');
    await approval.waitFor();
    assert.match(await approval.innerText(), /asked to run\s+Bash/);
    assert.match(await approval.getByTestId('approval-outcome').innerText(), /^denied by alice at \d\d:\d\d:\d\d/);
    assert.ok((await tl.locator('[data-kind=status]').count()) >= 1, 'its statuses (waiting, then what the denial said)');
    assert.match(await tl.locator('[data-kind=status]').first().innerText(), /Status: /);
    for (const time of await tl.locator('time').all()) assert.match(await time.innerText(), /\d\d:\d\d:\d\d$/);
    await page.getByRole('button', { name: 'Close history' }).click();
    assert.equal(await tl.count(), 0);
  });

  test('the timeline pages back to the beginning and searches', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId('agent-row-otto').first().locator('button').click();
    await page.getByTestId('card-history').click();
    const tl = page.getByTestId('timeline');
    const items = tl.getByTestId('timeline-item');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=timeline-item]').length === 50);
    assert.match(await items.first().innerText(), /From Ada\s+How are the refunds\?/);
    assert.match(await items.nth(1).innerText(), /Tool\s+Edit refunds step 79/);
    await tl.getByTestId('timeline-older').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=timeline-item]').length === 82);
    assert.match(await items.last().innerText(), /Joined/);
    assert.equal(await tl.getByTestId('timeline-older').count(), 0);
    assert.match(await tl.innerText(), /The beginning of its history/);

    await tl.getByTestId('timeline-search').fill('step 7');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=timeline-item]').length === 11);
    const texts = await items.allInnerTexts();
    assert.ok(texts.every((x) => /refunds step 7\d?$/.test(x.trim())), texts.join(' | '));
    await page.getByRole('button', { name: 'Close history' }).click();
  });

  test('the pulse chart draws events per minute per team, and counts what arrives', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId('pulse-toggle').click();
    const pulse = page.getByTestId('pulse');
    await pulse.locator('.uplot canvas').waitFor();
    const total = async () => Number(/^(\d+) events/.exec(await pulse.getByTestId('pulse-total').innerText())?.[1] ?? NaN);
    await page.waitForFunction(() => /^\d+ events/.test(document.querySelector('[data-testid=pulse-total]')?.textContent ?? ''));
    const n0 = await total();
    assert.ok(n0 >= 85, `the server counted the events of the last hour (${n0})`);
    assert.match(await pulse.locator('.u-legend').innerText(), /Payments/);
    // Drawn: the plot's canvas has coloured pixels of the first line (#2563eb).
    const blue = await pulse.locator('.uplot canvas').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x25) + Math.abs(d[i + 1] - 0x63) + Math.abs(d[i + 2] - 0xeb) < 60) n++;
      return n;
    });
    assert.ok(blue > 20, `the line is drawn (${blue} px)`);
    await post(server.url, [{ type: 'join', agent: 'zed', team: 'Search' }, { type: 'tool', agent: 'zed', tool: 'Grep' }]);
    await page.waitForFunction((n) => Number(/^(\d+)/.exec(document.querySelector('[data-testid=pulse-total]')?.textContent ?? '')?.[1]) >= n + 2, n0, { timeout: 10_000 });
    assert.match(await pulse.locator('.u-legend').innerText(), /Search/);
    // The picture in docs/web.md: the pulse, and a timeline beside it.
    await page.getByTestId('agent-row-otto').first().locator('button').click();
    await page.getByTestId('card-history').click();
    await page.getByTestId('timeline-item').first().waitFor();
    mkdirSync(screenshotDir(PACKAGE_ROOT), { recursive: true });
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'floor-history.png') });
  });
});
