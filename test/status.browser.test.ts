// Status a person can trust, in a real browser (issue 18, part 1): a silent
// "working" agent is drawn quiet on the canvas, not only said so in the list;
// an agent waiting on its own terminal (Claude Code's permission prompt) is
// shown as waiting in its terminal, apart from what waits for a decision
// here; the floor, the nav badge and the inbox count the same waiting list;
// and while the server is away a banner over every view says the page may be
// stale, gone again (and every view Live) once the server is back on its port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { inProcess, post } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import type { Roost } from '../src/server/index.js';
import type {} from '../web/src/floor/hook.js';

const HAVE = chromiumPath() !== null;
const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const fixture = (p: string) => JSON.parse(readFileSync(join(FIX, p), 'utf8')) as Record<string, unknown>;
type Server = Roost & { dataDir: string };

async function hook(url: string, query: string, body: unknown): Promise<Response> {
  return fetch(`${url}/hooks/claude-code${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Whether the canvas has a pixel near `hex` within `radius` CSS pixels of a page point. */
async function canvasHasColorNear(page: Page, at: { x: number; y: number }, hex: string, radius = 6): Promise<boolean> {
  return page.evaluate(
    ({ at, hex, radius }) => {
      const c = document.querySelector('canvas')!;
      const r = c.getBoundingClientRect();
      const k = c.width / r.width;
      const d = c.getContext('2d')!.getImageData(Math.round((at.x - r.left - radius) * k), Math.round((at.y - r.top - radius) * k), Math.round(2 * radius * k), Math.round(2 * radius * k)).data;
      const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - want[0]) + Math.abs(d[i + 1] - want[1]) + Math.abs(d[i + 2] - want[2]) < 30) return true;
      return false;
    },
    { at, hex, radius },
  );
}

async function ringOf(page: Page, id: string): Promise<{ x: number; y: number }> {
  const p = await page.evaluate((id) => window.__roost!.where(id, 'ring'), id);
  assert.ok(p, `${id} is on the canvas`);
  return p;
}

const WORKING = '#16a34a';
const QUIET = '#94a3b8';
const WAITING = '#f59e0b';
const TERMINAL = '#b45309';

describe('status a person can trust', () => {
  let server: Server;
  let browser: Awaited<ReturnType<typeof launch>>;

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    browser = await launch({ reducedMotion: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('an agent silent past the threshold is drawn quiet on the canvas, as the list says', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const page = await browser.context.newPage();
    // 1 s instead of the 2 min default (a setting of the browser).
    await page.addInitScript(() => localStorage.setItem('roost.floor.quietAfter', '1'));
    await page.goto(server.url + '/');
    await page.waitForFunction(() => window.__roost?.client.connection === 'live');
    await post(server.url, { type: 'join', agent: { id: 'stale', name: 'Stale' }, team: 'Quiet', status: 'working', tool: 'Bash', activity: 'npm test' });
    await page.getByTestId('agent-row-stale').waitFor();
    // Heard just now: drawn working (a green ring), if the page caught it within the second.
    const fresh = await page.evaluate(() => window.__roost!.scene.views.get('stale')?.look);
    if (fresh === 'working') assert.ok(await canvasHasColorNear(page, await ringOf(page, 'stale'), WORKING), 'a green ring while it is heard from');
    await page.locator('[data-testid=agent-row-stale][data-shown=quiet]').waitFor({ timeout: 5_000 });
    await page.waitForFunction(() => window.__roost!.scene.views.get('stale')?.look === 'quiet');
    // Let a frame paint it, then read the canvas's own pixels: the grey ring, no green one.
    await page.waitForFunction(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true)))));
    const ring = await ringOf(page, 'stale');
    assert.ok(await canvasHasColorNear(page, ring, QUIET), 'the ring is the quiet grey');
    assert.equal(await canvasHasColorNear(page, ring, WORKING), false, 'no working green left on the canvas');
    assert.match(await page.getByTestId('agent-row-stale').getByTestId('row-status').innerText(), /^Quiet, last heard \d+s ago \(was working\)$/);
    // A word from it: drawn working again.
    await post(server.url, { type: 'tool', agent: 'stale', tool: 'Edit', activity: 'again' });
    await page.waitForFunction(() => window.__roost!.scene.views.get('stale')?.look === 'working');
    await page.close();
  });

  test('waiting in its terminal is not waiting for you; the floor, the nav badge and the inbox count the same list', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const floor = await browser.context.newPage();
    await floor.goto(server.url + '/');
    await floor.waitForFunction(() => window.__roost?.client.connection === 'live');
    const inbox = await browser.context.newPage();
    await inbox.goto(server.url + '/inbox');
    await inbox.getByTestId('inbox-connection').and(inbox.locator('[data-state=live]')).waitFor();

    // Claude Code shows its own permission prompt and says so (the Notification hook): nothing to decide here.
    const note = { ...fixture('hooks-doc-examples/Notification.json'), session_id: 'term-1', cwd: '/work/shop' };
    assert.equal((await hook(server.url, '', note)).status, 200);
    // Its row in its room (it is also listed under "Needs you": someone has to go to that terminal).
    const term = floor.getByTestId('team-shop').getByTestId('agent-row-claude-code:term-1');
    await floor.locator('[data-testid=team-shop] [data-testid="agent-row-claude-code:term-1"][data-shown=terminal]').waitFor();
    assert.equal(await term.getAttribute('data-status'), 'waiting', 'the floor keeps what the agent said');
    assert.equal(await term.getByTestId('row-status').textContent(), 'Waiting in its terminal');
    await floor.locator('[data-testid=counts] [data-status=terminal][data-count="1"]').waitFor();
    assert.equal(await floor.locator('[data-testid=counts] [data-status=waiting]').getAttribute('data-count'), '0', 'nothing waits for you here');
    assert.equal(await floor.getByTestId('nav-pending').count(), 0, 'no badge');
    await floor.waitForFunction(() => window.__roost!.scene.views.get('claude-code:term-1')?.look === 'terminal');
    await floor.waitForFunction(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true)))));
    const ring = await ringOf(floor, 'claude-code:term-1');
    assert.ok(await canvasHasColorNear(floor, ring, TERMINAL), 'the canvas draws it in the terminal colour');
    assert.equal(await canvasHasColorNear(floor, ring, WAITING), false, 'not the amber of "waiting for you"');
    assert.equal(await inbox.getByTestId('inbox-count').innerText(), '0');

    // Two tool calls held for a decision here (Roost's approvals): both count, everywhere the same.
    const pre = fixture('hooks-real-2.1.197/09-PreToolUse-Bash.json');
    const ctl = new AbortController();
    const held = [1, 2].map((i) =>
      fetch(`${server.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...pre, session_id: `held-${i}`, tool_use_id: `toolu_held_${i}` }),
        signal: ctl.signal,
      }).catch(() => null),
    );
    try {
      await floor.locator('[data-testid=counts] [data-status=waiting][data-count="2"]').waitFor();
      await floor.locator('[data-testid=nav-pending]', { hasText: '2' }).waitFor();
      await inbox.locator('[data-testid=inbox-count]', { hasText: '2' }).waitFor();
      await inbox.locator('[data-testid=nav-pending]', { hasText: '2' }).waitFor();
      await floor.locator('[data-testid^=team-] [data-testid="agent-row-claude-code:held-1"][data-shown=waiting]').waitFor();
      assert.equal(await term.getAttribute('data-shown'), 'terminal', 'still in its terminal');
      assert.equal(await floor.locator('[data-testid=counts] [data-status=terminal]').getAttribute('data-count'), '1');
      // One decided from the inbox: 1 everywhere.
      await inbox.locator('[data-testid=inbox-item]').first().getByTestId('allow').click();
      await floor.locator('[data-testid=counts] [data-status=waiting][data-count="1"]').waitFor();
      await floor.locator('[data-testid=nav-pending]', { hasText: '1' }).waitFor();
      await inbox.locator('[data-testid=inbox-count]', { hasText: '1' }).waitFor();
    } finally {
      ctl.abort();
      await Promise.all(held);
    }
    // The hooks went away: withdrawn, nothing waits, no badge anywhere.
    await floor.locator('[data-testid=counts] [data-status=waiting][data-count="0"]').waitFor();
    await inbox.locator('[data-testid=inbox-count]', { hasText: '0' }).waitFor();
    // The badge is the app shell's own render of the same list: it may follow the floor's counts by a frame.
    await floor.getByTestId('nav-pending').waitFor({ state: 'detached', timeout: 5_000 });
    await inbox.getByTestId('nav-pending').waitFor({ state: 'detached', timeout: 5_000 });
    await floor.close();
    await inbox.close();
  });
});

describe('an outage, seen from every view', () => {
  test('the server stops: a banner on every view; back on the same port: the banner goes and every view says Live', { timeout: 90_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    let server = await inProcess();
    const port = Number(new URL(server.url).port);
    const browser = await launch();
    try {
      const views = [
        { path: '/', badge: 'connection' },
        { path: '/inbox', badge: 'inbox-connection' },
        { path: '/cost', badge: 'cost-connection' },
      ];
      const pages: Page[] = [];
      for (const v of views) {
        const p = await browser.context.newPage();
        await p.goto(server.url + v.path);
        await p.locator(`[data-testid=${v.badge}][data-state=live]`).waitFor({ timeout: 10_000 });
        assert.equal(await p.getByTestId('outage').count(), 0, `${v.path}: no banner while live`);
        pages.push(p);
      }
      await server.close();
      for (const [i, p] of pages.entries()) {
        await p.getByTestId('outage').waitFor({ timeout: 10_000 });
        assert.match(await p.getByTestId('outage').innerText(), /may be out of date/);
        await p.locator(`[data-testid=${views[i].badge}][data-state=reconnecting]`).waitFor();
      }
      server = await inProcess({ port }, server.dataDir);
      for (const [i, p] of pages.entries()) {
        await p.getByTestId('outage').waitFor({ state: 'detached', timeout: 15_000 });
        await p.locator(`[data-testid=${views[i].badge}][data-state=live]`).waitFor({ timeout: 5_000 });
      }
      // Live means live: a new agent reaches the floor.
      await post(server.url, { type: 'join', agent: 'after-outage', status: 'idle' });
      await pages[0].getByTestId('agent-row-after-outage').waitFor();
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
