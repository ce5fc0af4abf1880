// Headless Chromium for browser tests: Debian's `chromium` (or ROOST_CHROMIUM),
// driven by playwright-core: one browser per test file, a new context per
// launch(). Never downloads a browser.
import { rmSync } from 'node:fs';
import { after } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './server.js';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.js';
import type {} from '../../web/src/floor/hook.js';

export { CHROMIUM_ARGS, chromiumPath };

/**
 * One headless Chromium per test file (per process), launched by the first
 * `launch()` and closed after the file's last test: each `launch()` is a new
 * context in it, as separate as a fresh profile (its own cookies, storage and
 * cache), so two people in one test are two contexts. Starting Chromium is the
 * costly part (about a second of CPU), so a file pays it once, not per test or
 * per screen size. `persistent: true` gives a context of its own browser on a
 * temp profile instead: Chromium offers push messaging only there.
 *
 * `bypassCSP`: for a test that polls with string predicates (Playwright
 * evaluates those with eval, which the app's content security policy
 * forbids); every other test runs the app under its real policy.
 * `phone`: a 390x844 touch screen (`hasTouch`, `isMobile`, 3x pixels), unless `viewport` says another size.
 */
export const PHONE = { width: 390, height: 844 };
let shared: Promise<Browser> | null = null;
// Registered on the file's root test when a test file imports this helper: after its last test.
after(async () => {
  const b = shared;
  shared = null;
  if (b) await (await b).close().catch(() => {});
});

export async function launch(
  opts: { reducedMotion?: boolean; viewport?: { width: number; height: number }; bypassCSP?: boolean; phone?: boolean; persistent?: boolean } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const exe = chromiumPath();
  if (!exe) throw new Error('chromium not found');
  const options = {
    viewport: opts.viewport ?? (opts.phone ? PHONE : { width: 1440, height: 900 }),
    ...(opts.phone ? { hasTouch: true, isMobile: true, deviceScaleFactor: 3 } : {}),
    reducedMotion: opts.reducedMotion ? ('reduce' as const) : ('no-preference' as const),
    bypassCSP: opts.bypassCSP ?? false,
  };
  if (opts.persistent) {
    const profile = tempDir('roost-chromium-');
    const context = await chromium.launchPersistentContext(profile, { executablePath: exe, headless: true, args: CHROMIUM_ARGS, ...options });
    return {
      context,
      async close() {
        await context.close().catch(() => {});
        rmSync(profile, { recursive: true, force: true });
      },
    };
  }
  shared ??= chromium.launch({ executablePath: exe, headless: true, args: CHROMIUM_ARGS });
  let browser: Browser;
  try {
    browser = await shared;
  } catch (e) {
    shared = null;
    throw e;
  }
  const context = await browser.newContext(options);
  return {
    context,
    async close() {
      await context.close().catch(() => {});
    },
  };
}

/** What `launch()` gives: a context and the way to close it. */
export type Launched = Awaited<ReturnType<typeof launch>>;

/**
 * A new page of the web app at `url + path`, once its live connection is up:
 * the first step of every floor test (before it, the page shows a snapshot
 * that nothing updates).
 */
export async function livePage(browser: Launched, url: string, path = '/'): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(url + path);
  await page.waitForFunction(() => window.__roost?.client.connection === 'live');
  return page;
}

/** Closes what a test file's before() opened, in order; what it never opened (no Chromium here) is passed over. */
export async function closeAll(...open: ({ close(): Promise<unknown> } | undefined)[]): Promise<void> {
  for (const o of open) await o?.close();
}

export type { Browser };
