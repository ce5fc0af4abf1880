// Which Chromium, and with which flags: Debian's `chromium` (or ROOST_CHROMIUM),
// never a downloaded one. One copy for the browser tests (support/browser.ts),
// the browser benches (bench/chromium.ts) and `npm run pictures`; it imports
// nothing of playwright or node:test, so anything may load it.
import { execFileSync } from 'node:child_process';

/** The Chromium to drive, or null when there is none (a browser test then says so and skips). */
export function chromiumPath(): string | null {
  if (process.env.ROOST_CHROMIUM) return process.env.ROOST_CHROMIUM;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** The flags every headless launch takes: no sandbox (containers), no GPU, and nothing that reaches out to the network on its own. */
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
