// Accessibility of /manage with members (issue 18, part 8), in shared mode
// (members come with accounts), in a real Chromium at a desktop size and on a
// phone: axe-core finds nothing serious or critical with the members, their
// role pickers and Remove buttons, and an invite link shown.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromiumPath } from './support/browser.js';
import { need } from './support/env.js';
import { tempDir } from './support/server.js';
import { axeBrowser, checker, SIZES } from './support/axe.js';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';

const HAVE = chromiumPath() !== null;

describe('accessibility of /manage with members (shared mode)', () => {
  test('axe-core: no serious or critical finding on /manage with members, an invite link shown (desktop and phone)', { timeout: 120_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const store = new SqliteStore({ path: join(tempDir(), 'roost.db') });
    await createOwner(store, 'ann', 'ann-password', 'Ann');
    const srv = await startRoost(store, { port: 0 });
    try {
      const failed: string[] = [];
      for (const size of SIZES) {
        const b = await axeBrowser(size);
        try {
          const page = await b.context.newPage();
          await page.goto(srv.url + '/signin');
          await page.fill('#login', 'ann');
          await page.fill('#password', 'ann-password');
          await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('button[type=submit]')]);
          if (size === 'desktop') {
            const made = await page.evaluate(async () => (await fetch('/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'vera', name: 'Vera', password: 'vera-password', project: 'default', role: 'viewer' }) })).status);
            assert.equal(made, 201);
          }
          await page.goto(srv.url + '/manage');
          await page.locator('[data-testid="member-vera"][data-role=viewer]').waitFor({ timeout: 15_000 });
          const c = checker(page, size);
          await c.check('/manage with members');
          await page.getByTestId('invite-make').click();
          await page.getByTestId('invite-link').waitFor();
          await c.check('/manage with an invite link');
          failed.push(...c.failed);
        } finally {
          await b.close();
        }
      }
      assert.deepEqual(failed, [], failed.join('\n\n'));
    } finally {
      await srv.close();
    }
  });
});
