// The push path's two targets (issue 18, docs/web.md "Notifications"):
// - an approval posted (an agent's hook, over HTTP) → its push message at
//   the push-service stand-in (test/support/push-service.ts: VAPID checked,
//   payload decrypted with the subscription's key), ms;
// - a click on the notification → the decision interactive (its Allow
//   button shown and enabled) on a phone profile: 390×844, touch, 4× CPU
//   slowdown (DevTools' Emulation.setCPUThrottlingRate). Two cases: the app
//   is open (the worker tells the window to go to the decision, in the
//   page), and it is not (a fresh load of the decision's page, what the
//   worker's openWindow gives).
// The message is delivered to the service worker through the DevTools
// protocol (ServiceWorker.deliverPushMessage), the click dispatched in the
// worker (headless Chromium has no notification to click): see
// test/push.browser.test.ts.
//
//   node dist/bench/push.js [rounds]    # prints one JSON line

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type CDPSession, type Page } from 'playwright-core';
import { chromiumPath } from './chromium.js';
import { SqliteStore } from '../src/storage/index.js';
import { PACKAGE_ROOT, startRoost } from '../src/server/index.js';
import { PushServiceStandin } from '../test/support/push-service.js';

const PRE_BASH = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;

/** The phone's CPU slowdown (4×; ROOST_BENCH_CPU_RATE to compare). */
const RATE = Number(process.env.ROOST_BENCH_CPU_RATE ?? 4);

/**
 * When the page had the decision's Allow and Deny in it (the app's User
 * Timing mark `roost:decision`, as wall-clock ms): read from the page, so the
 * figure holds no DevTools round trip of the measuring side. It is awaited
 * through one small DevTools evaluation (a PerformanceObserver), not
 * Playwright's locators: those inject and run their selector engine in the
 * page while it loads, on the same throttled main thread, which a phone
 * opening the decision does not pay (it cost the fresh load 250 ms and more
 * at 4×). Whether Allow is then really shown is checked after.
 */
async function decisionAt(cdp: CDPSession, tag: string, timeoutMs = 30_000): Promise<number> {
  const id = tag.replace(/^approval:/, '');
  const expression = `new Promise((ok) => {
    const want = ${JSON.stringify(id)};
    const hit = (list) => { const m = list.filter((e) => e.detail === want).pop(); if (m) ok(performance.timeOrigin + m.startTime); return !!m; };
    const o = new PerformanceObserver((l) => { if (hit(l.getEntries())) o.disconnect(); });
    o.observe({ type: 'mark', buffered: true });
  })`;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error('the page made no roost:decision mark')), timeoutMs)));
  try {
    const r = (await Promise.race([cdp.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }), late])) as { result: { value?: unknown } };
    if (typeof r.result.value !== 'number') throw new Error('the page made no roost:decision mark');
    return r.result.value;
  } finally {
    clearTimeout(timer);
  }
}

/** The app open as a person has it: the page loaded and its live connection up (the floor's badge says Live). */
async function settled(page: Page): Promise<void> {
  await page.locator('[data-testid=connection][data-state=live]').waitFor({ timeout: 30_000 });
}

function quantile(v: number[], q: number): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const dir = mkdtempSync(join(tmpdir(), 'roost-bench-push-'));
  const profile = mkdtempSync(join(tmpdir(), 'roost-bench-chromium-'));
  const ps = await new PushServiceStandin().start();
  const roost = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0 });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 3,
    isMobile: true,
    hasTouch: true,
  });
  const pushMs: number[] = [];
  const clickMs: number[] = [];
  const coldMs: number[] = [];
  try {
    await context.grantPermissions(['notifications'], { origin: roost.url });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const registrations = new Map<string, string>();
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
      for (const r of e.registrations) if (!r.isDeleted) registrations.set(r.scopeURL, r.registrationId);
    });
    await cdp.send('ServiceWorker.enable');
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: RATE });
    await page.goto(roost.url + '/');
    for (let i = 0; i < 200 && !(await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state === 'activated' && navigator.serviceWorker.controller !== null)); i++) await new Promise((r) => setTimeout(r, 50));
    await settled(page);
    const registrationId = registrations.get(`${roost.url}/`);
    if (!registrationId) throw new Error('the service worker did not register');
    const worker = context.serviceWorkers().find((w) => w.url() === `${roost.url}/sw.js`);
    if (!worker) throw new Error('the service worker is not known to the browser');

    const { publicKey } = (await (await fetch(`${roost.url}/push`)).json()) as { publicKey: string };
    const sub = ps.subscribe(publicKey);
    await fetch(`${roost.url}/push/subscriptions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(PushServiceStandin.json(sub)) });

    for (let round = 0; round < rounds; round++) {
      // A distinct tool call each round: a new request, a new notice.
      const body = { ...PRE_BASH, tool_use_id: `toolu_bench_${round}`, session_id: `bench-session-${round}` };
      const before = ps.messages.length;
      const t0 = Date.now();
      const held = fetch(`${roost.url}/hooks/claude-code?approvals=Bash&window=120000&hold=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await ps.until((m) => m.length > before, 10_000);
      const message = ps.messages[before];
      if (!message.ok) throw new Error(`the stand-in refused the push: ${message.error}`);
      pushMs.push(message.at - t0);
      const url = (message.payload as { url: string }).url;
      const tag = (message.payload as { tag: string }).tag;

      // The app is open (on the floor): push, notification, click → the decision in the page.
      await cdp.send('ServiceWorker.deliverPushMessage', { origin: roost.url, registrationId, data: message.text! });
      let shown = 0;
      for (let i = 0; i < 2400 && shown === 0; i++) {
        shown = await worker.evaluate(async (t) => (await (self as unknown as { registration: ServiceWorkerRegistration }).registration.getNotifications({ tag: t })).length, tag);
        if (shown === 0) await new Promise((r) => setTimeout(r, 25));
      }
      if (shown === 0) throw new Error('the worker showed no notification');
      // The click's time is the worker's, taken as it dispatches (the same wall clock as the page's).
      const t1 = await worker.evaluate(async (t) => {
        const g = self as unknown as { registration: ServiceWorkerRegistration; NotificationEvent: new (type: string, init: { notification: Notification }) => Event };
        const [n] = await g.registration.getNotifications({ tag: t });
        const at = Date.now();
        self.dispatchEvent(new g.NotificationEvent('notificationclick', { notification: n }));
        return at;
      }, tag);
      clickMs.push((await decisionAt(cdp, tag)) - t1);
      await page.getByTestId('decision').getByTestId('allow').waitFor({ state: 'visible', timeout: 30_000 });

      // The app is not open: the decision's page loaded fresh.
      const cold = await context.newPage();
      const ccdp = await context.newCDPSession(cold);
      await ccdp.send('Emulation.setCPUThrottlingRate', { rate: RATE });
      const t2 = Date.now();
      await cold.goto(roost.url + url, { waitUntil: 'commit' });
      coldMs.push((await decisionAt(ccdp, tag)) - t2);
      const callow = cold.getByTestId('decision').getByTestId('allow');
      await callow.waitFor({ state: 'visible', timeout: 30_000 });
      await callow.click();
      await held;
      await cold.close();
      await page.goto(roost.url + '/');
      await settled(page);
    }
    process.stdout.write(
      JSON.stringify({
        pushP50: quantile(pushMs, 0.5),
        pushMax: Math.max(...pushMs),
        clickP50: quantile(clickMs, 0.5),
        clickMax: Math.max(...clickMs),
        coldP50: quantile(coldMs, 0.5),
        coldMax: Math.max(...coldMs),
        rounds,
      }) + '\n',
    );
  } finally {
    await context.close().catch(() => {});
    await roost.close();
    await ps.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
