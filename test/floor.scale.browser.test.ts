// A floor that scales, in a real browser: 60 agents at 1440×900 with names a
// person can read at the default zoom, a fit that fills the width, zoom by
// wheel and keys, pan by drag and keys, filters by status, team and role that
// hide the others (on the canvas and in the list), a search that finds an
// agent and brings it into view, a room focused on its own, and the floor
// zoomed far out drawn as one token per agent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { inProcess, post } from './support/server.js';
import { chromiumPath, closeAll, launch, livePage, type Launched } from './support/browser.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';
import type {} from '../web/src/floor/hook.js';

const HAVE = chromiumPath() !== null;
const TEAMS = ['Payments', 'Search', 'Checkout', 'Mobile', 'Platform', 'Docs'];
const ROLES = ['coder', 'tester', 'reviewer'];
const STATUSES = ['working', 'thinking', 'idle', 'waiting', 'done'];

/** 60 agents: 6 rooms of 10, each with a lead; names like "Payments 3". */
function sixty(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  TEAMS.forEach((t, ti) => {
    for (let i = 0; i < 10; i++) {
      const n = ti * 10 + i;
      out.push({ type: 'join', agent: { id: `${t.toLowerCase()}-${i}`, name: `${t} ${i}`, role: i === 0 ? 'lead' : ROLES[n % 3] }, team: t, status: STATUSES[n % 5], activity: `Task ${n}` });
    }
  });
  return out;
}

const camera = (page: Page) => page.evaluate(() => ({ ...window.__roost!.scene.camera, mode: window.__roost!.scene.mode }));
const hiddenOf = (page: Page) => page.evaluate(() => Object.fromEntries([...window.__roost!.scene.views.values()].map((v) => [v.id, v.hidden])));
/** Waits two animation frames (the scene draws, then the DOM follows within 250 ms). */
const settle = (page: Page) => page.waitForTimeout(320);

describe('a floor that scales', () => {
  let server: Roost;
  let browser: Launched;
  let page: Page;

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    browser = await launch({ viewport: { width: 1440, height: 900 } });
    const r = await post(server.url, sixty());
    assert.equal(r.status, 200);
    page = await livePage(browser, server.url);
    await page.waitForFunction(() => window.__roost!.state.agents.size === 60);
    await page.getByTestId('agent-row-docs-9').waitFor();
    await settle(page);
  });
  after(() => closeAll(browser, server));

  test('60 agents at 1440×900: names are readable at the default zoom, and the fit fills the width', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const m = await page.evaluate(() => {
      const s = window.__roost!.scene;
      const c = document.querySelector('canvas')!.getBoundingClientRect();
      let right = 0;
      let left = Infinity;
      for (const r of s.rooms.values()) {
        right = Math.max(right, s.camera.offX + (r.x + r.w) * s.camera.scale);
        left = Math.min(left, s.camera.offX + r.x * s.camera.scale);
      }
      return { px: s.namePx(), mode: s.mode, width: c.width, left, right, rooms: s.rooms.size };
    });
    assert.equal(m.mode, 'fit');
    assert.equal(m.rooms, 6);
    assert.ok(m.px >= 11, `a name tag is ${m.px.toFixed(1)} px high at the default zoom (at least 11)`);
    assert.ok(m.right - m.left >= m.width - 120, `the rooms span ${Math.round(m.right - m.left)} of ${m.width} px`);
    mkdirSync(screenshotDir(PACKAGE_ROOT), { recursive: true });
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'floor-60.png') });
  });

  test('the wheel and the keys zoom; a drag and Shift+arrows pan; 0 fits again', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const c0 = await camera(page);
    const box = (await page.getByTestId('floor-canvas').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -400);
    await page.waitForFunction((s) => window.__roost!.scene.scale > s * 1.2, c0.scale);
    const c1 = await camera(page);
    assert.equal(c1.mode, 'free');
    await settle(page);
    assert.equal(await page.getByTestId('zoom-level').innerText(), `${Math.round(c1.scale * 100)}%`);

    await page.getByTestId('floor-canvas').focus();
    await page.keyboard.press('-');
    await page.keyboard.press('-');
    const c2 = await camera(page);
    assert.ok(Math.abs(c2.scale - c1.scale / 1.5625) < 1e-6, `two "-" zoom out by 1.25 twice (${c1.scale} → ${c2.scale})`);
    await page.keyboard.press('+');
    assert.ok(Math.abs((await camera(page)).scale - c2.scale * 1.25) < 1e-6);

    // A drag moves the floor with the pointer, and is not a click (no card opens).
    const before = await page.evaluate(() => window.__roost!.where('search-2'));
    await page.mouse.move(box.x + 300, box.y + 300);
    await page.mouse.down();
    await page.mouse.move(box.x + 340, box.y + 280, { steps: 4 });
    await page.mouse.move(box.x + 380, box.y + 260, { steps: 4 });
    await page.mouse.up();
    await settle(page);
    const after = await page.evaluate(() => window.__roost!.where('search-2'));
    assert.ok(Math.abs(after!.x - before!.x - 80) < 2 && Math.abs(after!.y - before!.y + 40) < 2, `dragged by (80, -40): moved by (${after!.x - before!.x}, ${after!.y - before!.y})`);
    assert.equal(await page.getByTestId('agent-card').count(), 0, 'a drag opens no card');

    await page.getByTestId('floor-canvas').focus();
    const c3 = await camera(page);
    await page.keyboard.press('Shift+ArrowDown');
    const c4 = await camera(page);
    assert.ok(c4.offY < c3.offY, 'Shift+Down shows what is below');

    await page.keyboard.press('0');
    await settle(page);
    const c5 = await camera(page);
    assert.equal(c5.mode, 'fit');
    assert.ok(Math.abs(c5.scale - c0.scale) < 1e-6 && Math.abs(c5.offX - c0.offX) < 1e-6, 'back to the default view');
  });

  test('filters by status, team and role hide the others on the canvas and in the list', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const all = await page.evaluate(() => [...window.__roost!.state.agents.values()].map((a) => ({ id: a.id, status: a.status, team: a.team, role: a.role })));

    await page.getByTestId('filter-status').selectOption('waiting');
    await settle(page);
    let hidden = await hiddenOf(page);
    for (const a of all) assert.equal(hidden[a.id], a.status !== 'waiting', `${a.id} (${a.status}) with the filter "waiting"`);
    assert.equal(await page.locator('[data-testid^=agent-row-]').count(), all.filter((a) => a.status === 'waiting').length * 2, 'the list shows only them (under "Needs you" and in their rooms)');
    assert.equal(await page.getByTestId('filter-shown').innerText(), `${all.filter((a) => a.status === 'waiting').length} of 60 shown`);
    // A hidden agent cannot be clicked.
    const idle = all.find((a) => a.status === 'idle')!;
    const hit = await page.evaluate((id) => {
      const s = window.__roost!.scene;
      const p = s.screenOf(id)!;
      return s.hit(p.x, p.y, window.__roost!.state);
    }, idle.id);
    assert.notEqual(hit, idle.id);

    await page.getByTestId('filter-status').selectOption('');
    await page.getByTestId('filter-team').selectOption('Checkout');
    await settle(page);
    hidden = await hiddenOf(page);
    for (const a of all) assert.equal(hidden[a.id], a.team !== 'Checkout', `${a.id} with the filter "Checkout"`);
    assert.deepEqual(await page.evaluate(() => [...window.__roost!.scene.rooms.keys()]), ['Checkout'], 'only its room is laid out');
    assert.equal(await page.locator('.list section.team').count(), 1);

    await page.getByTestId('filter-role').selectOption('tester');
    await settle(page);
    hidden = await hiddenOf(page);
    for (const a of all) assert.equal(hidden[a.id], !(a.team === 'Checkout' && a.role === 'tester'), `${a.id} with Checkout and tester`);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await settle(page);
    hidden = await hiddenOf(page);
    assert.ok(Object.values(hidden).every((h) => !h), 'every agent shows again');
    assert.equal(await page.evaluate(() => window.__roost!.scene.rooms.size), 6);
  });

  test('search finds an agent by name: its card opens and the floor brings it into view', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId('floor-search').fill('docs 7');
    await page.getByTestId('hit-docs-7').waitFor();
    await page.getByTestId('floor-search').press('Enter');
    const card = page.getByTestId('agent-card');
    await card.waitFor();
    assert.equal(await card.getByTestId('card-name').innerText(), 'Docs 7');
    await settle(page);
    const p = await page.evaluate(() => window.__roost!.scene.screenOf('docs-7'));
    const ext = await page.evaluate(() => window.__roost!.scene.extent);
    assert.ok(p && p.x > 0 && p.x < ext.cssW && p.y > 0 && p.y < ext.cssH, `Docs 7 is on screen (${JSON.stringify(p)})`);
    assert.ok((await page.evaluate(() => window.__roost!.scene.namePx())) >= 11, 'and readable');
    await page.getByRole('button', { name: 'Close card' }).click();
  });

  test('focusing a team fits its room to the canvas', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId('focus-team').selectOption('Mobile');
    await settle(page);
    const m = await page.evaluate(() => {
      const s = window.__roost!.scene;
      const r = s.rooms.get('Mobile')!;
      const c = s.camera;
      return { x0: c.offX + r.x * c.scale, y0: c.offY + r.y * c.scale, x1: c.offX + (r.x + r.w) * c.scale, y1: c.offY + (r.y + r.h) * c.scale, ...s.extent, px: s.namePx() };
    });
    assert.ok(m.x0 >= 0 && m.y0 >= 0 && m.x1 <= m.cssW && m.y1 <= m.cssH, 'the whole room is on screen');
    assert.ok(m.x1 - m.x0 > 0.7 * m.cssW || m.y1 - m.y0 > 0.7 * m.cssH, 'and fills it');
    assert.ok(m.px > 12);
    await page.keyboard.press('0');
  });

  test('zoomed far out, each agent is a token of its colour, repainted in part as in full', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    // Out until every room is on screen: names would be about 2 px.
    await page.evaluate(() => {
      const s = window.__roost!.scene;
      const e = s.extent;
      s.zoomBy(Math.min((e.cssW - 32) / e.worldW, (e.cssH - 32) / e.worldH) / s.scale, 0, 0);
    });
    await page.waitForFunction(() => window.__roost!.scene.compact);
    assert.ok((await page.evaluate(() => window.__roost!.scene.namePx())) < 6, 'names too small to read');
    // A token is the colour of its status: an agent that failed shows red at its seat.
    await post(server.url, { type: 'status', agent: 'docs-3', status: 'error', activity: 'Broken link' });
    await page.waitForFunction(() => window.__roost!.state.agents.get('docs-3')?.status === 'error');
    const red = await page.waitForFunction(
      () => {
        const s = window.__roost!.scene;
        const p = s.screenOf('docs-3')!;
        const c = document.querySelector('canvas')!;
        const k = c.width / c.getBoundingClientRect().width;
        const d = c.getContext('2d')!.getImageData(Math.round(p.x * k), Math.round(p.y * k), 1, 1).data;
        // STATUS_COLOR.error, #dc2626.
        return Math.abs(d[0] - 0xdc) < 24 && Math.abs(d[1] - 0x26) < 24 && Math.abs(d[2] - 0x26) < 24;
      },
      null,
      { timeout: 10_000 },
    );
    assert.ok(await red.jsonValue());
    // Changes repaint only their cells; that must look exactly like painting it all.
    for (let i = 0; i < 4; i++) {
      await post(server.url, [
        { type: 'status', agent: `search-${i + 1}`, status: (['waiting', 'working', 'idle', 'error'] as const)[i] },
        { type: 'tool', agent: `payments-${i + 2}`, tool: 'Edit', activity: `Step ${i}` },
      ]);
      await page.waitForTimeout(60);
    }
    await page.waitForFunction(() => [...window.__roost!.scene.views.values()].every((v) => v.phase === 'seated'));
    await page.waitForTimeout(200);
    // Changes repaint only their cells; that must look like painting it all. (Far out, a box's
    // clip takes in a device pixel around it: anti-aliased edges there may differ by a shade in
    // a few pixels. A token left stale would differ in hundreds: a disc of its colour.)
    const draws = await page.evaluate(() => {
      const c = document.querySelector('canvas')!;
      (window as unknown as { __partial: Uint8ClampedArray }).__partial = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      return window.__roost!.scene.counters.draws;
    });
    await page.evaluate(() => window.__roost!.scene.markDirty());
    await page.waitForFunction((n) => window.__roost!.scene.counters.draws > n, draws);
    const differ = await page.evaluate(() => {
      const c = document.querySelector('canvas')!;
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      const p = (window as unknown as { __partial: Uint8ClampedArray }).__partial;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - p[i]) + Math.abs(d[i + 1] - p[i + 1]) + Math.abs(d[i + 2] - p[i + 2]) > 0) n++;
      return n;
    });
    assert.ok(differ < 100, `a partly repainted floor looks like the fully painted one (${differ} pixels differ)`);
    await page.getByTestId('floor-canvas').focus();
    await page.keyboard.press('0');
    await page.waitForFunction(() => !window.__roost!.scene.compact);
  });
});
