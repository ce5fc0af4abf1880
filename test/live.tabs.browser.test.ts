// One live connection per browser (docs/web.md, "The live hub"): ten tabs of
// Roost in one Chromium (the floor four times, the fleet board, the inbox and
// Work twice each) all load and go live over ONE connection to the server; a
// new agent shows in every floor tab within 2 s; and closing the tab that
// holds the connection hands it to another tab without a lost or a repeated
// frame in any floor tab.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { inProcess, post } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import type { Roost } from '../src/server/index.js';
import type {} from '../web/src/floor/hook.js';
import type {} from '../web/src/live/hub.js';

const HAVE = chromiumPath() !== null;

const TABS = [
  ...Array.from({ length: 4 }, () => ({ path: '/', badge: 'connection' })),
  ...Array.from({ length: 2 }, () => ({ path: '/fleet', badge: 'board-connection' })),
  ...Array.from({ length: 2 }, () => ({ path: '/inbox', badge: 'inbox-connection' })),
  ...Array.from({ length: 2 }, () => ({ path: '/work', badge: 'work-conn' })),
];

async function until(what: string, f: () => boolean | Promise<boolean>, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const floorPosition = (p: Page) => p.evaluate(() => window.__roost?.client.position ?? -1);
const floorStats = (p: Page) => p.evaluate(() => ({ ...window.__roost!.client.stats, position: window.__roost!.client.position }));
const isLeader = (p: Page) => p.evaluate(() => window.__roostLive?.leader === true);

describe('one live connection for every tab of a browser', () => {
  let server: Roost;
  let browser: Awaited<ReturnType<typeof launch>>;
  const pages: Page[] = [];
  const badgeOf = new Map<Page, string>();
  const errors: string[] = [];

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('ten tabs (floor ×4, fleet ×2, inbox ×2, Work ×2) go live on one connection; a new agent shows in every floor tab within 2 s', async (t) => {
    if (!need(t, HAVE, 'Debian’s chromium (apt-get install chromium)')) return;
    const t0 = Date.now();
    for (const tab of TABS) {
      const page = await browser.context.newPage();
      page.on('pageerror', (e) => errors.push(`${tab.path}: ${e.message}`));
      await page.goto(server.url + tab.path);
      pages.push(page);
      badgeOf.set(page, tab.badge);
    }
    for (const [i, page] of pages.entries()) await page.getByTestId(TABS[i].badge).filter({ hasText: 'Live' }).waitFor({ timeout: 15_000 });
    t.diagnostic(`all 10 tabs live ${Date.now() - t0} ms after the first was opened`);
    await until('one live connection', () => server.live.connections === 1);
    // And it stays one (no tab opened a stream of its own meanwhile).
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(server.live.connections, 1, 'the server holds one live connection for the ten tabs');
    const leaders = (await Promise.all(pages.map(isLeader))).filter(Boolean).length;
    assert.equal(leaders, 1, 'one tab holds it');

    const floors = pages.filter((_, i) => TABS[i].path === '/');
    // Each floor tab notes when the row appears (the page's own clock, the
    // machine's: a headless Chromium runs the animation frames a test would
    // poll with about once a second in the tabs it does not show).
    for (const p of floors)
      await p.evaluate(() => {
        const w = window as unknown as { __rowAt?: number };
        new MutationObserver(() => {
          if (document.querySelector('[data-testid="agent-row-tabs-new"]')) w.__rowAt ??= Date.now();
        }).observe(document.body, { childList: true, subtree: true });
      });
    const posted = Date.now();
    const r = await post(server.url, { type: 'join', agent: { id: 'tabs-new', role: 'dev' }, team: 'Tabs' });
    assert.equal(r.status, 200);
    const rowAt = (p: Page) => p.evaluate(() => (window as unknown as { __rowAt?: number }).__rowAt ?? 0);
    await until('the new agent in every floor tab', async () => (await Promise.all(floors.map(rowAt))).every((x) => x > 0), 5_000);
    const seen = (await Promise.all(floors.map(rowAt))).map((x) => x - posted);
    t.diagnostic(`the new agent showed in the 4 floor tabs after ${seen.join(', ')} ms`);
    assert.ok(Math.max(...seen) < 2_000);
    assert.deepEqual(errors, []);
  });

  test('closing the tab that holds the connection hands it over: no floor tab loses or repeats a frame', async (t) => {
    if (!need(t, HAVE, 'Debian’s chromium (apt-get install chromium)')) return;
    assert.equal(pages.length, TABS.length, 'the ten tabs of the test before');
    const floors = pages.filter((_, i) => TABS[i].path === '/');
    let n = 0;
    const postSome = async (k: number) => {
      for (let i = 0; i < k; i++, n++) {
        const r = await post(server.url, { type: 'status', agent: { id: `seq-${n % 12}`, role: 'dev' }, team: 'Seq', status: 'working', activity: `step ${n}` });
        assert.equal(r.status, 200);
      }
    };
    await postSome(10);
    await until('every floor tab at the head', async () => (await Promise.all(floors.map(floorPosition))).every((p) => p === server.floor.position));

    const leaderIndex = (await Promise.all(pages.map(isLeader))).indexOf(true);
    assert.ok(leaderIndex >= 0);
    const leader = pages[leaderIndex];
    const rest = pages.filter((p) => p !== leader);
    const restFloors = floors.filter((p) => p !== leader);
    const before = await Promise.all(restFloors.map(floorStats));
    const posBefore = server.floor.position;

    // Before, during and after the handover.
    const during = postSome(30);
    await new Promise((r) => setTimeout(r, 20));
    const closedAt = Date.now();
    await leader.close();
    await during;
    await until('a new leader', async () => (await Promise.all(rest.map(isLeader))).some(Boolean));
    t.diagnostic(`a new tab led ${Date.now() - closedAt} ms after the leader closed`);
    await postSome(10);
    await until('every floor tab at the head', async () => (await Promise.all(restFloors.map(floorPosition))).every((p) => p === server.floor.position), 10_000);

    const moved = server.floor.position - posBefore;
    assert.ok(moved >= 40, `the floor moved ${moved} positions`);
    const after = await Promise.all(restFloors.map(floorStats));
    for (const [i, a] of after.entries()) {
      const b = before[i];
      assert.equal(a.snapshots, b.snapshots, 'resumed from its cursor, not from a new snapshot');
      assert.equal(a.frames - b.frames, moved, 'every position folded exactly once: none lost, none repeated');
    }
    const dups = after.reduce((s, a, i) => s + a.duplicates - before[i].duplicates, 0);
    t.diagnostic(`${restFloors.length} floor tabs folded ${moved} frames each across the handover; ${dups} resent frames dropped`);
    const state = await restFloors[0].evaluate(() => [...window.__roost!.state.agents.values()].filter((a) => a.team === 'Seq').map((a) => `${a.id}:${a.activity}`).sort());
    assert.equal(state.length, 12);
    assert.ok(state.includes(`seq-${(n - 1) % 12}:step ${n - 1}`));

    await until('one live connection', () => server.live.connections === 1);
    assert.equal((await Promise.all(rest.map(isLeader))).filter(Boolean).length, 1, 'one tab leads');
    for (const page of rest) await page.getByTestId(badgeOf.get(page)!).filter({ hasText: 'Live' }).waitFor({ timeout: 5_000 });
    assert.deepEqual(errors, []);
  });
});
