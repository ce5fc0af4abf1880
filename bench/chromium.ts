// Headless Chromium for the browser benches: Debian's `chromium` (or
// ROOST_CHROMIUM), never a downloaded one, on a profile of the caller's.
import { execFileSync } from 'node:child_process';
import { chromium, type BrowserContext } from 'playwright-core';

export function chromiumPath(): string {
  if (process.env.ROOST_CHROMIUM) return process.env.ROOST_CHROMIUM;
  const p = execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser || true'], { encoding: 'utf8' }).trim();
  if (!p) throw new Error('chromium not found: apt-get install chromium, or set ROOST_CHROMIUM');
  return p;
}

/** A persistent headless context on `profile`. */
export function launchChromium(profile: string, viewport: { width: number; height: number }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
  });
}
