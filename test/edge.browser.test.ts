// Clickjacking, in a real Chromium: a page on another origin frames the
// approvals inbox. Before the edge sent `frame-ancestors 'none'` and
// `X-Frame-Options: DENY`, the framed inbox loaded and its Allow button
// decided (this test failed first); now the frame never shows the app, and
// the approval stays pending.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import type { Roost } from '../src/server/index.js';

const exe = chromiumPath();
let srv: Roost;
let evil: Server;
let evilUrl = '';

before(async () => {
  srv = await inProcess();
  // Another origin (another port): a page that frames our inbox, as a clickjacker's would.
  evil = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>win a prize</title><iframe id="f" src="${srv.url}/inbox" width="1000" height="700"></iframe>`);
  });
  await new Promise<void>((ok) => evil.listen(0, '127.0.0.1', ok));
  evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/`;
});
after(async () => {
  await srv?.close();
  evil?.close();
});

test("a page on another origin cannot frame the inbox: the frame stays empty and nothing can be allowed through it", { timeout: 60_000 }, async (t) => {
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  const { approval: pending } = await srv.approvals.request({ asker: 'a1', askerName: 'builder', source: 'test', tool: 'Bash', input: '$ rm -rf /' });
  const b = await launch();
  try {
    // The inbox itself shows the request with its Allow button (so the check below can see one if it is there).
    const own = await b.context.newPage();
    await own.goto(srv.url + '/inbox');
    await own.getByTestId('allow').first().waitFor({ timeout: 15_000 });
    await own.close();

    const page = await b.context.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors|X-Frame-Options|refused to display/i.test(m.text())) blocked.push(m.text());
    });
    await page.goto(evilUrl);
    await page.locator('#f').waitFor();
    // Give the frame every chance to load and render the app.
    await page.waitForTimeout(2500);
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      assert.equal(await f.locator('[data-testid="allow"]').count(), 0, `the framed page shows no Allow button (frame at ${f.url()})`);
      const app = await f.evaluate(() => document.getElementById('app')?.childElementCount ?? 0).catch(() => 0);
      assert.equal(app, 0, `the app did not render inside the frame (${f.url()})`);
    }
    assert.ok(blocked.length > 0, 'Chromium says it refused to display the page in a frame');
    assert.equal(srv.approvals.state.byId.get(pending.id)?.status, 'pending', 'nothing was decided');
  } finally {
    await b.close();
  }
});
