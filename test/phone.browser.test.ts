// Roost on a phone (issue 18, part 3), in a real Chromium at 390x844 with
// touch (hasTouch, isMobile): every view with data in it keeps the whole nav on
// screen and nothing wider than the screen; the approvals inbox is one tap
// away from every view; Allow and Deny are at least 44x44 CSS px; Work's
// transcript keeps its height and its composer the full width, its text box
// (General Chat's too) all of it, Send under it; the floor puts
// who needs you above the rooms, and two fingers zoom the rooms.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CDPSession, Page } from 'playwright-core';
import { chromiumPath, launch, PHONE } from './support/browser.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { openView, seededViews, VIEWS, type Seeded } from './support/views.js';

const HAVE = chromiumPath() !== null;

async function boxOf(page: Page, selector: string) {
  const b = await page.locator(selector).first().boundingBox();
  assert.ok(b, `${selector} is laid out`);
  return b;
}

/** Two fingers on the canvas moving apart by `spread` px each (the browser's own touch events, through the DevTools protocol). */
async function pinchOut(cdp: CDPSession, at: { x: number; y: number }, spread: number): Promise<void> {
  const touch = (d: number) => [
    { x: at.x - 20 - d, y: at.y, id: 1 },
    { x: at.x + 20 + d, y: at.y, id: 2 },
  ];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: touch(0) });
  for (let i = 1; i <= 8; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: touch((spread * i) / 8) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

describe('Roost on a phone (390x844, touch)', () => {
  let s: Seeded;
  let browser: Awaited<ReturnType<typeof launch>>;
  let page: Page;
  before(async () => {
    if (!HAVE) return;
    s = await seededViews();
    browser = await launch({ phone: true, reducedMotion: true });
    page = await browser.context.newPage();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test('every view: the whole nav on screen, nothing wider than the screen, the inbox one tap away', { timeout: 180_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    for (const v of VIEWS) {
      await openView(page, s.roost.url, v);
      const width = await page.evaluate(() => document.scrollingElement!.scrollWidth);
      assert.ok(width <= PHONE.width, `${v.name}: the page is ${width} px wide on a ${PHONE.width} px screen`);
      const links = page.locator('nav[aria-label="Views"] a');
      assert.ok((await links.count()) >= 6, 'the nav has every view');
      for (const a of await links.all()) {
        const b = await a.boundingBox();
        assert.ok(b && b.x >= 0 && b.x + b.width <= PHONE.width && b.y + b.height <= PHONE.height, `${v.name}: nav item ${await a.textContent()} is on screen (${JSON.stringify(b)})`);
        assert.ok(b.height >= 44, `${v.name}: nav item ${await a.textContent()} is ${b.height} px high`);
      }
      // One tap to the inbox, and the waiting call is there to answer.
      await links.filter({ hasText: 'Approvals' }).tap();
      await page.getByTestId('inbox-item').first().waitFor({ timeout: 10_000 });
      assert.equal(new URL(page.url()).pathname, '/inbox', `${v.name}: the Approvals tap opens the inbox`);
    }
  });

  test('the inbox: Allow and Deny at least 44x44, under the question, on screen', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await openView(page, s.roost.url, VIEWS.find((v) => v.name === 'inbox')!);
    const item = page.getByTestId('inbox-item').filter({ hasText: 'npm run migrate' });
    for (const name of ['allow', 'deny']) {
      const b = await item.getByTestId(name).boundingBox();
      assert.ok(b, `${name} is laid out`);
      assert.ok(b.height >= 44 && b.width >= 44, `${name} is ${b.width}x${b.height}`);
      assert.ok(b.x >= 0 && b.x + b.width <= PHONE.width, `${name} is within the screen`);
    }
    // The command reads as a line, not a letter a line (the answer no longer squeezes it).
    const cmd = await item.locator('[data-testid="detail-cmd"]').boundingBox();
    assert.ok(cmd && cmd.width >= PHONE.width * 0.7, `the command is ${cmd?.width} px wide`);
  });

  test('Work: the transcript keeps its height, the composer is full width', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await openView(page, s.roost.url, VIEWS.find((v) => v.name === 'work')!);
    const composer = await boxOf(page, '.work .composer');
    assert.ok(composer.width >= PHONE.width * 0.9, `the composer is ${composer.width} px wide`);
    const box = await boxOf(page, '.work .composer textarea');
    assert.ok(box.width >= PHONE.width * 0.6, `the text box is ${box.width} px wide`);
    const transcript = await boxOf(page, '[data-testid="transcript"]');
    assert.ok(transcript.width >= PHONE.width * 0.9, `the transcript is ${transcript.width} px wide`);
    const pane = await boxOf(page, '.work .transcript-pane');
    assert.ok(pane.height >= 300, `the transcript pane is ${pane.height} px high`);
    // Typing and sending by touch.
    await page.locator('.work .composer textarea').tap();
    await page.locator('.work .composer textarea').fill('Sent from a phone.');
    await page.getByTestId('send').tap();
    await page.getByTestId('transcript').getByText('Sent from a phone.').waitFor({ timeout: 10_000 });
  });

  test('Work and General Chat: the text box takes the full width, the Send button under it', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await openView(page, s.roost.url, VIEWS.find((v) => v.name === 'work')!);
    const check = async (where: string) => {
      const box = await boxOf(page, '.work .composer textarea');
      const send = await boxOf(page, '.work .composer [data-testid="send"]');
      // The composer's own padding is all that is left beside it (10 px a side).
      assert.ok(box.width >= PHONE.width - 24, `${where}: the text box is ${box.width} px wide on a ${PHONE.width} px screen`);
      assert.ok(send.y >= box.y + box.height - 1, `${where}: Send (y ${send.y}) is under the text box (y ${box.y}, ${box.height} px high), not beside it`);
      assert.ok(send.x + send.width <= PHONE.width, `${where}: Send is on screen`);
      t.diagnostic(`${where}: the text box is ${box.width} px wide`);
    };
    await check('a Work conversation');
    await page.getByTestId('chat-general').tap();
    await page.getByTestId('transcript-title').filter({ hasText: 'General Chat' }).waitFor();
    await check('General Chat');
  });

  test('the floor: who needs you above the rooms, and two fingers zoom them', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await openView(page, s.roost.url, VIEWS.find((v) => v.name === 'floor')!);
    const needs = await boxOf(page, 'section[aria-label="Needs you"]');
    const canvas = await boxOf(page, '.floor canvas');
    assert.ok(needs.y < canvas.y, `"Needs you" (y ${needs.y}) comes before the rooms (y ${canvas.y})`);
    assert.ok(needs.y + 40 < PHONE.height, 'and is on the first screen');
    assert.ok(canvas.height >= 240, `the rooms have ${canvas.height} px`);
    const zoom = async () => parseInt((await page.getByTestId('zoom-level').textContent()) ?? '0', 10);
    const before = await zoom();
    const cdp = await browser.context.newCDPSession(page);
    await pinchOut(cdp, { x: canvas.x + canvas.width / 2, y: canvas.y + canvas.height / 2 }, 60);
    await page.waitForFunction((b) => parseInt(document.querySelector('[data-testid="zoom-level"]')?.textContent ?? '0', 10) > b, before, { timeout: 5_000 });
    assert.ok((await zoom()) > before, 'a pinch out zooms in');
  });

  test('pictures of five views on a phone and on a desktop (docs/img with ROOST_SCREENSHOTS=docs)', { timeout: 180_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const dir = screenshotDir(PACKAGE_ROOT);
    mkdirSync(dir, { recursive: true });
    const desk = await launch({ viewport: { width: 1440, height: 900 }, reducedMotion: true });
    try {
      const wide = await desk.context.newPage();
      for (const v of VIEWS.filter((x) => ['floor', 'inbox', 'work', 'fleet', 'flock'].includes(x.name))) {
        for (const [size, p] of [['phone', page], ['desktop', wide]] as const) {
          await openView(p, s.roost.url, v);
          await p.waitForTimeout(400);
          await p.screenshot({ path: join(dir, `${size}-${v.name}.png`), scale: 'css' });
        }
      }
    } finally {
      await desk.close();
    }
  });
});
