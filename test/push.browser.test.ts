// Web Push, the browser's half, in Chromium. No push service can be reached
// from here, and Chromium's own pushManager.subscribe needs one, so the
// message travels the two halves separately but whole: the server encrypts a
// real notice for a subscription of the push-service stand-in, which
// decrypts it (push.http.test.ts checks that half in depth); those decrypted
// bytes are then delivered to Roost's registered service worker through the
// DevTools protocol (`ServiceWorker.deliverPushMessage`), as Chromium's push
// client does after it decrypts a message. The worker shows the
// notification (read back with `registration.getNotifications()`), and a
// click on it opens the decision: a headless browser has no notification
// to click on, so the test dispatches the `notificationclick` event the
// browser would, with the real notification, inside the worker; the
// worker's own listener does the rest (tells the open window to go to the
// decision). Then Allow, and the agent's held call returns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { PushServiceStandin } from './support/push-service.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { CONTENT_SECURITY_POLICY } from '../src/server/edge.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197/09-PreToolUse-Bash.json'), 'utf8'));

test('a push reaches the service worker, shows a notification, and its click opens the decision, which Allow answers; the tab title carries the count', async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'sw.js')), 'the built web app (npm run build)')) return;
  const ps = await new PushServiceStandin().start();
  const roost = await inProcess();
  const browser = await launch({ viewport: { width: 390, height: 844 }, persistent: true });
  try {
    // The worker and the manifest, as the server serves them: under the app's own policy.
    const sw = await fetch(`${roost.url}/sw.js`);
    assert.equal(sw.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(sw.headers.get('cache-control'), 'no-cache');
    assert.match(sw.headers.get('content-security-policy')!, /worker-src 'self'/);
    const manifest = await fetch(`${roost.url}/manifest.webmanifest`);
    assert.equal(manifest.headers.get('content-type'), 'application/manifest+json');
    const m = await manifest.json();
    assert.equal(m.display, 'standalone');
    assert.ok(m.icons.some((i: any) => i.sizes === '512x512' && i.type === 'image/png'));
    assert.equal((await fetch(`${roost.url}${m.icons[1].src}`)).headers.get('content-type'), 'image/png');
    assert.ok(CONTENT_SECURITY_POLICY.includes("manifest-src 'self'"));

    const { context } = browser;
    await context.grantPermissions(['notifications'], { origin: roost.url });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const cdp = await context.newCDPSession(page);
    const registrations = new Map<string, string>();
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
      for (const r of e.registrations) if (!r.isDeleted) registrations.set(r.scopeURL, r.registrationId);
    });
    await cdp.send('ServiceWorker.enable');
    await page.goto(`${roost.url}/floor`);
    // The page registers the worker on load, under the real CSP; it becomes active and controls the page.
    await until('the worker active and in control', () => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state === 'activated' && navigator.serviceWorker.controller !== null), 10_000);
    assert.equal(await page.evaluate(() => document.querySelector('link[rel=manifest]')?.getAttribute('href')), '/manifest.webmanifest');
    const registrationId = registrations.get(`${roost.url}/`);
    assert.ok(registrationId, `a registration for ${roost.url}/: ${JSON.stringify([...registrations])}`);

    // The server's half: a subscription at the stand-in, an approval posted by an agent's hook.
    const { publicKey } = await (await fetch(`${roost.url}/push`)).json();
    const sub = ps.subscribe(publicKey);
    const subscribed = await fetch(`${roost.url}/push/subscriptions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(PushServiceStandin.json(sub)) });
    assert.equal(subscribed.status, 200);
    const held = fetch(`${roost.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1&team=Shop`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(PRE_BASH) });
    await ps.until((ms) => ms.length >= 1);
    const message = ps.messages[0];
    assert.equal(message.ok, true, message.error);
    const id = (message.payload as { url: string }).url.replace('/inbox/', '');

    // The tab's title counts it (the one approvals fold, live).
    await page.waitForFunction(() => document.title.startsWith('(1) '), undefined, { timeout: 10_000 });
    assert.equal(await page.title(), '(1) Roost · Floor');

    // The browser's half: the decrypted message into the worker, through the DevTools protocol.
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: roost.url, registrationId: registrationId, data: message.text! });
    const notes = await until(
      'the notification shown',
      () =>
        page.evaluate(async () => {
          const ns = await (await navigator.serviceWorker.ready).getNotifications();
          return ns.length ? ns.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as { url: string; kind: string } })) : null;
        }),
      10_000,
    );
    assert.equal(notes.length, 1);
    assert.equal(notes[0].title, (message.payload as { title: string }).title);
    assert.equal(notes[0].body, 'Allow Bash? (default)');
    assert.equal(notes[0].tag, `approval:${id}`);
    assert.deepEqual(notes[0].data, { url: `/inbox/${id}`, kind: 'approval', project: 'default' });

    // The click, as the browser dispatches it, inside the worker.
    const [worker] = context.serviceWorkers().filter((w) => w.url() === `${roost.url}/sw.js`);
    assert.ok(worker, 'the service worker is known to the browser');
    await worker.evaluate(async (tag) => {
      const g = self as unknown as { registration: { getNotifications(o: { tag: string }): Promise<unknown[]> }; dispatchEvent(e: Event): boolean };
      const [n] = await g.registration.getNotifications({ tag });
      const Ev = (self as unknown as { NotificationEvent: new (type: string, init: { notification: unknown }) => Event }).NotificationEvent;
      g.dispatchEvent(new Ev('notificationclick', { notification: n }));
    }, `approval:${id}`);
    // The open window goes to the decision, in the page.
    await page.waitForURL(`${roost.url}/inbox/${id}`, { timeout: 10_000 });
    const decision = page.getByTestId('decision');
    await decision.getByTestId('allow').waitFor({ timeout: 10_000 });
    assert.equal(await decision.getByTestId('inbox-tool').innerText(), 'Bash');
    // The notification closed with its click.
    assert.equal(await page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).length), 0);
    // The notifications section knows this device is not subscribed through the browser (the stand-in's subscription is no browser's).
    await page.getByTestId('notify-state').getByText('Off for this device').waitFor();
    assert.equal(await page.getByTestId('notify-sound').isChecked(), false, 'the sound is off by default');
    // Quiet hours, turned on in the section, are the member's, in this browser's time zone.
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    await page.getByTestId('notify-quiet-on').check();
    await until('quiet hours stored', async () => (await (await fetch(`${roost.url}/push`)).json()).quiet?.timeZone === zone, 10_000);
    await page.getByTestId('notify-quiet-start').fill('21:30');
    await until('the start changed', async () => (await (await fetch(`${roost.url}/push`)).json()).quiet?.start === '21:30', 10_000);
    assert.deepEqual((await (await fetch(`${roost.url}/push`)).json()).quiet, { timeZone: zone, start: '21:30', end: '07:00', letWaiting: true });

    await decision.getByTestId('allow').click();
    const answer = await held;
    assert.equal(answer.status, 200);
    assert.equal((await answer.json()).hookSpecificOutput.permissionDecision, 'allow');
    await decision.getByTestId('decision-outcome').getByText('Allowed').waitFor({ timeout: 10_000 });
    await page.waitForFunction(() => !document.title.startsWith('('), undefined, { timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
    await ps.close();
  }
});
