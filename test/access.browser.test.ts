// Shared mode in a real browser: an unsigned visitor is sent to the sign-in
// page, signs in, and the app's reads, writes and live streams then work with
// the HttpOnly cookie alone; an invite link makes a new account in another
// browser.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { tempDir } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';

const exe = chromiumPath();
let srv: Roost;

before(async () => {
  const store = new SqliteStore({ path: join(tempDir(), 'roost.db') });
  await createOwner(store, 'ann', 'ann-password', 'Ann');
  srv = await startRoost(store, { port: 0 });
});
after(() => srv?.close());

test('sign in from the browser; reads, writes and streams then work; an invite link makes an account', { timeout: 60_000 }, async (t) => {
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  const b = await launch();
  try {
    const page = await b.context.newPage();
    await page.goto(srv.url + '/fleet');
    assert.equal(new URL(page.url()).pathname, '/signin', 'a visitor who is not signed in is sent to sign in');
    await page.fill('#login', 'ann');
    await page.fill('#password', 'not-the-password');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.getElementById('msg')!.textContent.length > 0);
    assert.match((await page.textContent('#msg'))!, /wrong login or password/);
    await page.fill('#password', 'ann-password');
    await Promise.all([page.waitForURL((u) => u.pathname === '/fleet'), page.click('button[type=submit]')]);

    const seen = await page.evaluate(async () => {
      const me = await (await fetch('/auth/me')).json();
      const post = await fetch('/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'status', agent: 'from-browser', status: 'working' }) });
      const snapshot = await new Promise<any>((ok, fail) => {
        const es = new EventSource('/stream');
        es.addEventListener('snapshot', (e) => {
          es.close();
          ok(JSON.parse((e).data));
        });
        setTimeout(() => fail(new Error('no snapshot')), 5000);
      });
      return { me, post: post.status, agents: snapshot.state.agents.map((a: any) => a.id), cookie: document.cookie };
    });
    assert.equal(seen.me.user.login, 'ann');
    assert.equal(seen.post, 200, "the browser's own Origin passes the check");
    assert.deepEqual(seen.agents, ['from-browser']);
    assert.ok(!seen.cookie.includes('roost_session'), 'the session cookie is HttpOnly: scripts cannot read it');

    // Ann invites a viewer; the link works in another browser.
    const inv = await page.evaluate(async () => (await fetch('/auth/invites', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'default', role: 'viewer' }) })).json());
    assert.match(inv.link, /^\/invite\//);
    const other = await launch();
    try {
      const p2 = await other.context.newPage();
      await p2.goto(srv.url + inv.link);
      // The login field's pattern is one the browser compiles (HTML patterns
      // use the v flag, where a bare "-" in a class is an error and the whole
      // pattern is silently dropped): a login with capitals and a space is refused.
      await p2.fill('#login', 'Bad Login');
      assert.equal(await p2.$eval('#login', (e) => (e as HTMLInputElement).validity.patternMismatch), true, 'the pattern refuses "Bad Login"');
      await p2.fill('#login', 'vera');
      assert.equal(await p2.$eval('#login', (e) => (e as HTMLInputElement).validity.valid), true);
      await p2.fill('#name', 'Vera');
      await p2.fill('#password', 'vera-password');
      await Promise.all([p2.waitForURL((u) => u.pathname === '/'), p2.click('button[type=submit]')]);
      const me2 = await p2.evaluate(async () => {
        const me = await (await fetch('/auth/me')).json();
        const write = await fetch('/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'status', agent: 'v', status: 'idle' }) });
        return { me, write: write.status };
      });
      assert.equal(me2.me.user.name, 'Vera');
      assert.deepEqual(me2.me.projects, [{ id: 'default', name: 'Default', role: 'viewer' }]);
      assert.equal(me2.write, 403, 'a viewer cannot post events');
      // The link works once.
      await p2.goto(srv.url + inv.link);
      await p2.fill('#login', 'vera2');
      await p2.fill('#password', 'vera-password');
      await p2.click('button[type=submit]');
      await p2.waitForFunction(() => document.getElementById('msg')!.textContent.length > 0);
      assert.match((await p2.textContent('#msg'))!, /used already/);
    } finally {
      await other.close();
    }
  } finally {
    await b.close();
  }
});
