// Headless Chromium for the browser benches and `npm run pictures`: Debian's
// `chromium` (or ROOST_CHROMIUM), never a downloaded one, on a profile of the
// caller's, with the browser tests' flags (test/support/chromium.ts).
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath as found } from '../test/support/chromium.js';

export function chromiumPath(): string {
  const p = found();
  if (!p) throw new Error('chromium not found: apt-get install chromium, or set ROOST_CHROMIUM');
  return p;
}

/** A persistent headless context on `profile`. */
export function launchChromium(profile: string, viewport: { width: number; height: number }, opts: { reducedMotion?: boolean } = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    ...(opts.reducedMotion ? { reducedMotion: 'reduce' as const } : {}),
  });
}
