// Accessibility of every view (issue 18, part 8), in a real Chromium with data
// in each view (agents, a held call, a Work conversation, a flock list), at a
// desktop size and on a phone: axe-core finds nothing serious or critical
// (contrast is WCAG 2.2 AA, names, roles, labels) on any view (a nest, the
// decision page and the states beyond a view's first look are
// a11y.states.browser's, /manage with members a11y.manage.browser's); the
// keyboard focus shows a ring; Escape closes the agent card and the
// new-conversation form and gives the focus back to where it was.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { axeAtEverySize } from './support/axe.js';
import { openView, seededViews, VIEWS, type Seeded } from './support/views.js';

const HAVE = chromiumPath() !== null;

describe('accessibility of every view', () => {
  let s: Seeded;
  before(async () => {
    if (HAVE) s = await seededViews();
  });
  after(async () => {
    await s?.close();
  });

  /** Every view; `check(name)` runs axe on what shows. */
  async function walk(page: Page, check: (name: string) => Promise<void>): Promise<void> {
    const url = s.roost.url;
    for (const v of VIEWS) {
      await openView(page, url, v);
      await page.waitForTimeout(300); // what arrives with the snapshot settles
      await check(v.name);
    }
  }

  axeAtEverySize('on any view', VIEWS.length, walk);

  test('the keyboard focus shows a ring on every kind of control', { timeout: 120_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const b = await launch({ viewport: { width: 1280, height: 900 }, reducedMotion: true });
    try {
      const page = await b.context.newPage();
      const ring = async (where: string, selector: string) => {
        const el = page.locator(selector).first();
        await el.focus();
        const got = await el.evaluate((e) => {
          const cs = getComputedStyle(e);
          return { visible: e.matches(':focus-visible'), style: cs.outlineStyle, width: parseFloat(cs.outlineWidth), color: cs.outlineColor };
        });
        assert.ok(got.visible, `${where}: ${selector} matches :focus-visible`);
        assert.ok(got.style !== 'none' && got.width >= 2, `${where}: ${selector} shows a ring (${JSON.stringify(got)})`);
      };
      for (const v of VIEWS) {
        await openView(page, s.roost.url, v);
        await page.keyboard.press('Tab'); // a keyboard user: the skip link
        await ring(v.name, '.skip');
        await ring(v.name, 'nav[aria-label="Views"] a');
        if (await page.locator('main button:visible:not(:disabled), main select:visible').count()) await ring(v.name, 'main button:visible:not(:disabled), main select:visible');
        const fields = page.locator('main input:visible, main textarea:visible');
        if (await fields.count()) await ring(v.name, 'main input:visible, main textarea:visible');
      }
    } finally {
      await b.close();
    }
  });

  test('Escape closes the agent card and the new-conversation form, and the focus goes back where it was', { timeout: 120_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const b = await launch({ viewport: { width: 1280, height: 900 }, reducedMotion: true });
    try {
      const page = await b.context.newPage();
      await openView(page, s.roost.url, VIEWS[0]);
      const row = page.getByTestId('agent-row-ada').locator('button');
      await row.focus();
      await page.keyboard.press('Enter');
      await page.getByTestId('agent-card').waitFor();
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'agent-card', 'the card takes the focus');
      await page.keyboard.press('Escape');
      await page.getByTestId('agent-card').waitFor({ state: 'detached' });
      assert.equal(await row.evaluate((e) => e === document.activeElement), true, 'the focus is back on the row that opened the card');

      await openView(page, s.roost.url, VIEWS.find((v) => v.name === 'work')!);
      const plus = page.getByTestId('new-conversation');
      await plus.focus();
      await page.keyboard.press('Enter');
      await page.getByTestId('new-conversation-title').waitFor();
      assert.equal(await page.getByTestId('new-conversation-title').evaluate((e) => e === document.activeElement), true, 'the title field takes the focus');
      await page.keyboard.press('Escape');
      await page.getByTestId('new-conversation-title').waitFor({ state: 'detached' });
      assert.equal(await plus.evaluate((e) => e === document.activeElement), true, 'the focus is back on the +');
    } finally {
      await b.close();
    }
  });
});
