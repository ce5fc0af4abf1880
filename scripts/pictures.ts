// `npm run pictures`: the README's pictures, taken from the demo so they are
// current. Starts `roost serve --demo` on a free port in a temporary data
// folder (never the person's own), lets the story run for a while, and
// screenshots each app of the demo project with Debian's chromium (through
// playwright-core, the flags of the browser tests) into docs/img/demo-*.png.
//
//   npm run pictures                # build first (npm run build), then this
//   ROOST_CHROMIUM=/path/to/chromium npm run pictures

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../bench/chromium.js';
import { freePort, waitHealthy } from '../test/support/up.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'docs', 'img');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const data = mkdtempSync(join(tmpdir(), 'roost-pictures-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [join(ROOT, 'bin', 'roost.js'), 'serve', '--demo', '--port', String(port), '--data', data], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  const profile = mkdtempSync(join(tmpdir(), 'roost-pictures-chromium-'));
  try {
    await waitHealthy(url, server, { timeoutMs: 60_000, everyMs: 100, log: () => log });
    // Let the story develop: sessions waiting for a person, lists flown, Work commands done.
    console.log(`pictures: the demo runs at ${url}; waiting 25 s for its story`);
    await sleep(25_000);
    const context = await launchChromium(profile, { width: 1280, height: 800 }, { reducedMotion: true });
    const page = await context.newPage();
    const shot = async (name: string, path: string, ready: (p: typeof page) => Promise<unknown>) => {
      await page.goto(`${url}${path}${path.includes('?') ? '&' : '?'}project=demo`);
      await ready(page);
      await sleep(800);
      const file = join(OUT, `demo-${name}.png`);
      await page.screenshot({ path: file });
      console.log(`pictures: docs/img/demo-${name}.png (${Math.round(statSync(file).size / 1024)} KB)`);
    };
    await shot('floor', '/', (p) => p.locator('[data-testid^="agent-row-"]').first().waitFor());
    await shot('fleet', '/fleet', (p) => p.getByTestId('chat-line').first().waitFor());
    await shot('work', '/work', async (p) => {
      await p.getByText('Docs writer').first().click();
      await p.getByTestId('transcript').waitFor();
    });
    await shot('flock', '/flock', (p) => p.getByTestId('flock-lists').locator('li, article').first().waitFor());
    await shot('nest', '/flock/nests/launch', (p) => p.getByTestId('nest-chat').getByText('Refunds that fit every invoice').first().waitFor());
    await shot('cost', '/cost', (p) => p.getByTestId('cost-budget').waitFor());
    await shot('approvals', '/inbox', (p) => p.getByTestId('inbox-item').first().waitFor());
    await context.close();
  } finally {
    server.kill('SIGTERM');
    rmSync(profile, { recursive: true, force: true });
    await sleep(500);
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
