// Ten tabs of Roost in one Chromium (the floor ×4, the fleet board, the
// inbox and Work ×2 each) against an in-process server: how many live
// connections the server holds for them (the hub's promise: one), how long
// until every tab says Live, and how long a new agent takes to show in the
// floor tabs: from just before its POST to its frame reaching each tab, and
// to its row in each tab's list. A headless Chromium paints the tabs it does
// not show about once a second, so the row of all but one tab waits for that
// (a person sees one tab at a time; the frame itself is there at once).
//
//   node dist/bench/tabs.js [agents]    # prints one JSON line

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';

const TABS = [
  ...Array.from({ length: 4 }, () => ({ path: '/', badge: 'connection' })),
  ...Array.from({ length: 2 }, () => ({ path: '/fleet', badge: 'board-connection' })),
  ...Array.from({ length: 2 }, () => ({ path: '/inbox', badge: 'inbox-connection' })),
  ...Array.from({ length: 2 }, () => ({ path: '/work', badge: 'work-conn' })),
];

function quantile(v: number[], q: number): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function main(): Promise<void> {
  const agents = Number(process.argv[2] ?? 20);
  const dir = mkdtempSync(join(tmpdir(), 'roost-bench-tabs-'));
  const profile = mkdtempSync(join(tmpdir(), 'roost-bench-chromium-'));
  const roost = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0 });
  const context = await launchChromium(profile, { width: 1280, height: 800 });
  try {
    const t0 = performance.now();
    const pages: Page[] = [];
    for (const tab of TABS) {
      const page = await context.newPage();
      await page.goto(roost.url + tab.path);
      pages.push(page);
    }
    for (const [i, page] of pages.entries()) await page.getByTestId(TABS[i].badge).filter({ hasText: 'Live' }).waitFor({ timeout: 30_000 });
    const liveMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 500));
    const connections = roost.live.connections;

    // Each floor tab notes when the agent's frame reaches it (a listener on
    // the hub's BroadcastChannel: every tab, the leader's too, hears every
    // frame there) and when its row appears in the list (wall clock: the same
    // machine's).
    const floors = pages.filter((_, i) => TABS[i].path === '/');
    for (const p of floors)
      await p.evaluate(() => {
        const seen: Record<string, number> = {};
        const got: Record<string, number> = {};
        (window as unknown as { __seen: Record<string, number>; __got: Record<string, number> }).__seen = seen;
        (window as unknown as { __got: Record<string, number> }).__got = got;
        new BroadcastChannel('roost-live').onmessage = (e: MessageEvent) => {
          const m = /"agent":\{"id":"(bench-\d+)"/.exec((e.data as { line?: string }).line ?? '');
          if (m) got[m[1]] ??= Date.now();
        };
        new MutationObserver(() => {
          const rows = document.querySelectorAll('[data-testid^="agent-row-bench-"]');
          for (let i = 0; i < rows.length; i++) {
            const id = rows[i].getAttribute('data-testid')!.slice('agent-row-'.length);
            seen[id] ??= Date.now();
          }
        }).observe(document.body, { childList: true, subtree: true });
      });
    const latencies: number[] = [];
    const delivered: number[] = [];
    for (let i = 0; i < agents; i++) {
      const id = `bench-${i}`;
      const posted = Date.now();
      const r = await fetch(roost.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'join', agent: { id, role: 'dev' }, team: 'Bench' }) });
      if (!r.ok) throw new Error(`POST /events: ${r.status}`);
      for (const p of floors) {
        await p.waitForFunction((id) => (window as unknown as { __seen: Record<string, number> }).__seen[id] !== undefined, id, { timeout: 10_000, polling: 20 });
        const t = await p.evaluate((id) => {
          const w = window as unknown as { __seen: Record<string, number>; __got: Record<string, number> };
          return [w.__got[id], w.__seen[id]];
        }, id);
        delivered.push(t[0] - posted);
        latencies.push(t[1] - posted);
      }
    }
    process.stdout.write(JSON.stringify({ tabs: pages.length, connections, liveMs, deliveredP50: quantile(delivered, 0.5), deliveredP99: quantile(delivered, 0.99), p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), samples: latencies.length }) + '\n');
  } finally {
    await context.close().catch(() => {});
    await roost.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
