// What a page loads (docs/web.md, "What loads when"): the shell is one chunk
// and every view its own, so a notification's decision page fetches the
// shell and the inbox, not the floor, Work or the charts; it can be answered
// before the live stream's snapshot is in (one GET of the request); every
// chunk is served as immutable and the page itself revalidated; a view whose
// chunk is slow keeps the shell and says it is loading, and one that cannot
// be had says so with a reload. The one live connection and the nav badge
// carry on across views loaded later.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Request, Response, Route } from 'playwright-core';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';
import type {} from '../web/src/live/hub.js';

const HAVE = chromiumPath() !== null && existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html'));
const VIEWS_NOT_INBOX = /\/assets\/(FloorView|FleetView|WorkView|FlockView|CostView|ProjectsView)-/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

describe('what a page loads', () => {
  let server: Roost;
  let browser: Awaited<ReturnType<typeof launch>>;

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    browser = await launch({ phone: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test("a notification's decision page loads the shell and the inbox only, and is answered before the live stream's snapshot", async (t) => {
    if (!need(t, HAVE, 'chromium and the built web app (npm run build)')) return;
    const { approval } = await server.approvals.request({ asker: 'a1', askerName: 'Builder', source: 'test', tool: 'Bash', input: '$ npm test' });
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const asked: Request[] = [];
    const answered: Response[] = [];
    page.on('request', (r) => asked.push(r));
    page.on('response', (r) => answered.push(r));
    // The live stream is held: no snapshot reaches the page until it is let go.
    const held: Route[] = [];
    await page.route(/\/live\?/, (route) => void held.push(route));

    await page.goto(`${server.url}/inbox/${approval.id}`);
    const decision = page.getByTestId('decision');
    await decision.getByTestId('allow').waitFor({ timeout: 20_000 });
    assert.equal(await decision.getByTestId('inbox-tool').innerText(), 'Bash');
    assert.notEqual(await page.getByTestId('inbox-connection').getAttribute('data-state'), 'live', 'shown before the stream was live');
    const scripts = asked.filter((r) => r.resourceType() === 'script' || /\.(js|css)$/.test(new URL(r.url()).pathname)).map((r) => new URL(r.url()).pathname);
    assert.ok(scripts.some((p) => /\/assets\/InboxView-.*\.js$/.test(p)), `the inbox's chunk: ${scripts.join(' ')}`);
    assert.deepEqual(scripts.filter((p) => VIEWS_NOT_INBOX.test(p)), [], 'no other view is fetched');

    // Every chunk and stylesheet is immutable (hashed names); the page itself is revalidated.
    await until('the responses are in', () => answered.some((r) => /\/assets\/InboxView-/.test(r.url())), 10_000);
    for (const r of answered) {
      const path = new URL(r.url()).pathname;
      if (path.startsWith('/assets/')) {
        assert.equal(r.headers()['cache-control'], IMMUTABLE, path);
        assert.match(r.headers()['content-type'] ?? '', path.endsWith('.css') ? /^text\/css/ : /^text\/javascript/, path);
      }
    }
    const doc = answered.find((r) => r.request().resourceType() === 'document');
    assert.equal(doc?.headers()['cache-control'], 'no-cache');

    // Allow, with the stream still held: the one decide endpoint records it.
    await decision.getByTestId('allow').click();
    await until('the server has the decision', () => server.approvals.state.byId.get(approval.id)?.status === 'allowed', 10_000);
    // The stream let go: its snapshot shows the outcome, from the approvals fold.
    await page.unroute(/\/live\?/);
    for (const r of held) await r.abort().catch(() => {});
    await decision.getByTestId('decision-outcome').waitFor({ timeout: 20_000 });
    assert.match(await decision.getByTestId('decision-outcome').innerText(), /^Allowed\s+Bash\s+Builder/);
    await page.getByTestId('inbox-connection').and(page.locator('[data-state=live]')).waitFor({ timeout: 10_000 });

    // Another view, loaded now: the floor's chunk comes, the same connection carries its scope, and the badge counts on.
    const pending = await server.approvals.request({ asker: 'a2', askerName: 'Tester', source: 'test', tool: 'Bash', input: '$ ls' });
    await page.getByTestId('nav-pending').getByText('1').waitFor({ timeout: 10_000 });
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Floor/ }).click();
    await page.locator('[data-testid=connection][data-state=live]').waitFor({ timeout: 20_000 });
    assert.ok(asked.some((r) => /\/assets\/FloorView-.*\.js$/.test(r.url())), 'the floor is fetched when shown');
    await until('one connection carries the floor and the approvals', async () => {
      const s = await page.evaluate(() => window.__roostLive!.scopes);
      return s.includes('floor:default') && s.includes('approvals:default');
    }, 10_000);
    assert.equal(await page.getByTestId('nav-pending').innerText(), '1');
    await server.approvals.decide(pending.approval.id, 'deny', 'someone');
    await page.getByTestId('nav-pending').waitFor({ state: 'detached', timeout: 10_000 });
    const streams = asked.filter((r) => /\/live\?/.test(r.url()));
    // Opened for the inbox's approvals, again for its budget notices (the usage scope,
    // whose code comes a moment later), again after the held stream was let go, and
    // again when the floor's scope joined: never a second connection beside it.
    assert.ok(streams.length <= 4, `the one connection, opened at most again as scopes joined: ${streams.length}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a slow view keeps the shell and says it is loading; a view that cannot be had says so, with a reload', async (t) => {
    if (!need(t, HAVE, 'chromium and the built web app (npm run build)')) return;
    const page = await browser.context.newPage();
    await page.goto(`${server.url}/inbox`);
    await page.getByTestId('inbox-connection').and(page.locator('[data-state=live]')).waitFor({ timeout: 20_000 });
    // The cost panel's chunk held back until the loading line has been seen.
    let release: () => void = () => {};
    const released = new Promise<void>((ok) => (release = ok));
    await page.route(/\/assets\/CostView-.*\.js$/, async (route) => {
      await released;
      await route.continue();
    });
    const nav = page.getByRole('navigation', { name: 'Views' });
    await nav.getByRole('link', { name: 'Cost' }).click();
    const loading = page.getByTestId('view-loading');
    await loading.waitFor({ timeout: 10_000 });
    assert.equal(await loading.getAttribute('role'), 'status');
    assert.equal(await nav.getByRole('link', { name: 'Cost' }).getAttribute('aria-current'), 'page', 'the nav names the page being loaded');
    assert.equal(await page.getByTestId('inbox').count(), 0, 'the view left is not shown under the new page');
    release();
    await page.getByTestId('cost-view').waitFor({ timeout: 20_000 });
    assert.equal(await loading.count(), 0);

    // Work's chunk cannot be had (a new build replaced it, the server went away).
    await page.route(/\/assets\/WorkView-.*\.js$/, (route) => route.abort());
    await nav.getByRole('link', { name: 'Work' }).click();
    const failed = page.getByRole('alert').filter({ hasText: 'could not be loaded' });
    await failed.waitFor({ timeout: 10_000 });
    assert.equal(await failed.getByRole('button', { name: 'Reload' }).count(), 1);
    await page.close();
  });
});
