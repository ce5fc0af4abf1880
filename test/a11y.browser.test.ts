// Accessibility of every view (issue 18, part 8), in a real Chromium with data
// in each view (agents, a held call, a Work conversation, a flock list), at a
// desktop size and on a phone: axe-core finds nothing serious or critical
// (contrast is WCAG 2.2 AA, names, roles, labels); the keyboard focus shows a
// ring; Escape closes the agent card and the new-conversation form and gives
// the focus back to where it was.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { openView, seededViews, VIEWS, type Seeded } from './support/views.js';

const HAVE = chromiumPath() !== null;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Finding {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** axe-core's serious and critical findings on the page as it is now. */
async function axe(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  const found = (await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    return r.violations;
  })) as Finding[];
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

const said = (f: Finding[]) => f.map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`.replace(/\n/g, ' ')).join('\n  ')}`).join('\n');

describe('accessibility of every view', () => {
  let s: Seeded;
  before(async () => {
    if (HAVE) s = await seededViews();
  });
  after(async () => {
    await s?.close();
  });

  for (const size of ['desktop', 'phone'] as const) {
    test(`axe-core: no serious or critical finding on any view (${size})`, { timeout: 240_000 }, async (t) => {
      if (!need(t, HAVE, 'chromium is not installed')) return;
      // The app's content security policy forbids the inline script axe is injected as: this context alone lets it in.
      const b = await launch(size === 'phone' ? { phone: true, reducedMotion: true, bypassCSP: true } : { viewport: { width: 1280, height: 900 }, reducedMotion: true, bypassCSP: true });
      try {
        const page = await b.context.newPage();
        const failed: string[] = [];
        for (const v of VIEWS) {
          await openView(page, s.roost.url, v);
          await page.waitForTimeout(300); // what arrives with the snapshot settles
          const f = await axe(page);
          if (f.length) failed.push(`${v.name} (${size}):\n${said(f)}`);
        }
        // The agent card, open over the floor.
        await openView(page, s.roost.url, VIEWS[0]);
        await page.getByTestId('agent-row-ada').click();
        await page.getByTestId('agent-card').waitFor();
        const f = await axe(page);
        if (f.length) failed.push(`agent card (${size}):\n${said(f)}`);
        assert.deepEqual(failed, [], failed.join('\n\n'));
      } finally {
        await b.close();
      }
    });
  }

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
