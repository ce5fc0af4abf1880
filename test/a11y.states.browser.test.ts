// Accessibility beyond a view's first look (issue 18, part 8), in a real
// Chromium at a desktop size and on a phone: axe-core finds nothing serious or
// critical on a nest of the flock, the decision page a notification opens, a
// long Write folded and unfolded beside an Edit's diff, the agent card and its
// timeline open over the floor (dialogs), a quiet agent on the floor, and the
// outage banner. One seeded server (test/support/views.ts), one browser per
// size, every state on one page.
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumPath } from './support/browser.js';
import { axeAtEverySize } from './support/axe.js';
import { NEST, openView, seededViews, VIEWS, type Seeded } from './support/views.js';

const HAVE = chromiumPath() !== null;

describe('accessibility of every state', () => {
  let s: Seeded;
  before(async () => {
    if (HAVE) s = await seededViews({ more: true });
  });
  after(async () => {
    await s?.close();
  });

  /** The states, in order on one page; `check(name)` runs axe on what shows. */
  async function walk(page: Page, check: (name: string) => Promise<void>): Promise<void> {
    const url = s.roost.url;
    // A nest: its rail, its chat, its crows.
    await page.goto(`${url}/flock/nests/${NEST.id}`);
    await page.locator(`[data-testid=nest-chat][data-nest=${NEST.id}]`).waitFor({ timeout: 15_000 });
    await page.getByText(NEST.text).first().waitFor({ timeout: 15_000 });
    await check('nest');
    // The decision page a notification opens.
    await page.goto(`${url}/inbox/${encodeURIComponent(s.decision)}`);
    await page.getByTestId('decision').getByTestId('allow').first().waitFor({ timeout: 15_000 });
    await check('decision page');
    // The inbox with a long Write folded and an Edit's diff, then the Write unfolded.
    await page.goto(url + '/inbox');
    const content = page.getByTestId('detail-content');
    await content.waitFor({ timeout: 15_000 });
    await page.getByTestId('detail-diff').waitFor();
    await check('inbox, a long Write folded');
    await content.locator('summary').click();
    await content.getByText('note 60:').waitFor();
    await check('inbox, a long Write unfolded');
    // The agent card, and its timeline, open over the floor (dialogs).
    await openView(page, url, VIEWS[0]);
    await page.getByTestId('agent-row-ada').click();
    await page.getByTestId('agent-card').waitFor();
    await check('agent card');
    await page.getByTestId('card-history').click();
    await page.getByTestId('timeline-item').first().waitFor({ timeout: 15_000 });
    await check('agent timeline');
    await page.keyboard.press('Escape');
    // A quiet agent (a 1 s threshold instead of 2 minutes: a setting of the browser).
    await page.evaluate(() => localStorage.setItem('roost.floor.quietAfter', '1'));
    await openView(page, url, VIEWS[0]);
    await page.locator('[data-testid=agent-row-ada][data-shown=quiet]').waitFor({ timeout: 10_000 });
    await check('floor with a quiet agent');
    await page.evaluate(() => localStorage.removeItem('roost.floor.quietAfter'));
    // The outage banner: the connection cut, and every reopening refused until the route is lifted.
    await openView(page, url, VIEWS[0]);
    // Live first: a connection still opening when the server closes them all would open after it, and stay.
    await page.waitForFunction(() => window.__roost?.client.connection === 'live', undefined, { timeout: 15_000 });
    await page.route('**/live?**', (r) => r.abort());
    try {
      s.roost.floor.channel.closeAll('test: an outage');
      await page.getByTestId('outage').waitFor({ timeout: 10_000 });
      await check('floor during an outage');
    } finally {
      await page.unroute('**/live?**');
    }
  }

  axeAtEverySize('in any state', 8, walk);
});
