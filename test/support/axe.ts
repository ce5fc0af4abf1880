// axe-core in a real Chromium page, for the accessibility suites
// (a11y.browser, a11y.states.browser): its serious and critical findings
// against WCAG 2.2 A/AA and axe's best practices, and a browser context that
// lets its script in.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { chromiumPath, launch } from './browser.js';
import { need } from './env.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Finding {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function axe(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  const found = (await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    return r.violations;
  })) as Finding[];
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Findings as a person reads them in a failed assertion. */
export const said = (f: Finding[]) => f.map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`.replace(/\n/g, ' ')).join('\n  ')}`).join('\n');

export const SIZES = ['desktop', 'phone'] as const;

/**
 * A browser at a desktop size or a phone's (390x844, touch). The app's
 * content security policy forbids the inline script axe is injected as:
 * this context alone lets it in.
 */
export function axeBrowser(size: (typeof SIZES)[number]) {
  return launch(size === 'phone' ? { phone: true, reducedMotion: true, bypassCSP: true } : { viewport: { width: 1280, height: 900 }, reducedMotion: true, bypassCSP: true });
}

/** A checker that runs axe and keeps what it found under `name (size)`. */
export function checker(page: Page, size: string) {
  const failed: string[] = [];
  const seen: string[] = [];
  return {
    failed,
    seen,
    async check(name: string): Promise<void> {
      seen.push(name);
      const f = await axe(page);
      if (f.length) failed.push(`${name} (${size}):\n${said(f)}`);
    },
  };
}

/**
 * One test per size (desktop, phone): a fresh browser of that size walks the
 * pages or states `walk` visits, calling `check(name)` at each; every one of
 * `count` is checked and none has a serious or critical finding.
 * `title` ends the test's name: "on any view", "in any state".
 */
export function axeAtEverySize(title: string, count: number, walk: (page: Page, check: (name: string) => Promise<void>) => Promise<void>): void {
  for (const size of SIZES) {
    test(`axe-core: no serious or critical finding ${title} (${size})`, { timeout: 240_000 }, async (t) => {
      if (!need(t, chromiumPath() !== null, 'chromium is not installed')) return;
      const b = await axeBrowser(size);
      try {
        const page = await b.context.newPage();
        const c = checker(page, size);
        await walk(page, c.check);
        assert.equal(c.seen.length, count, `every one was checked: ${c.seen.join(', ')}`);
        assert.deepEqual(c.failed, [], c.failed.join('\n\n'));
      } finally {
        await b.close();
      }
    });
  }
}
