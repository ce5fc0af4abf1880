// Headless Chromium for browser tests: Debian's `chromium` (or ROOST_CHROMIUM),
// driven by playwright-core, with a fresh profile. Never downloads a browser.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { tempDir } from './server.js';

export function chromiumPath(): string | null {
  if (process.env.ROOST_CHROMIUM) return process.env.ROOST_CHROMIUM;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A persistent context on a temp profile (Chromium wants --user-data-dir for that). */
/**
 * `bypassCSP`: for a test that polls with string predicates (Playwright
 * evaluates those with eval, which the app's content security policy
 * forbids); every other test runs the app under its real policy.
 */
/** `phone`: a 390x844 touch screen (`hasTouch`, `isMobile`, 3x pixels), unless `viewport` says another size. */
export const PHONE = { width: 390, height: 844 };
export async function launch(opts: { reducedMotion?: boolean; viewport?: { width: number; height: number }; bypassCSP?: boolean; phone?: boolean } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const exe = chromiumPath();
  if (!exe) throw new Error('chromium not found');
  const profile = tempDir('roost-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: exe,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: opts.viewport ?? (opts.phone ? PHONE : { width: 1440, height: 900 }),
    ...(opts.phone ? { hasTouch: true, isMobile: true, deviceScaleFactor: 3 } : {}),
    reducedMotion: opts.reducedMotion ? 'reduce' : 'no-preference',
    bypassCSP: opts.bypassCSP ?? false,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export type { Browser };
