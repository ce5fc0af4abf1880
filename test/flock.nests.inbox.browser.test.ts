// A nest's ask_owner in the approvals inbox, in a real browser against a real
// server (no model: asks need none): the ask shows its phrase and a box to
// type it; Approve stays off until something is typed; a wrong reply in the
// nest leaves it open there and in the inbox; a wrong phrase in the inbox is a
// rejection (and the nest reads rejected); the right phrase approves it (the
// owner's reply lands in the nest, the nest reads approved); the outcomes and
// their decider show under Recent.
import { describe, test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';

const ready = (t: TestContext) =>
  need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)') && need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)');

describe('a nest ask in the inbox', () => {
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    roost = await inProcess({ models: null });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost?.close();
  });

  test('approved by typing its phrase; a wrong phrase rejects another', async (t) => {
    if (!ready(t)) return;
    const ask = async (phrase: string) => (await c.post('/api/nests/todo/messages', { author: 'Quill', kind: 'ask_owner', text: `Shall I ${phrase}?`, approval_phrase: phrase })).body.msg_id as string;
    const first = await ask('Publish the draft');
    const second = await ask('delete the branch');
    const resolved = async (msg_id: string) => ((await c.get('/api/nests/todo/messages')).body as { msg_id: string; resolved: string }[]).find((r) => r.msg_id === msg_id)!.resolved;
    const browser = await launch({ viewport: { width: 1200, height: 900 }, reducedMotion: true });
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(roost.url + '/inbox');
      const items = page.locator('[data-testid=inbox-item][data-kind=ask]');
      await items.nth(1).waitFor({ timeout: 15_000 });
      const one = items.filter({ hasText: 'Shall I Publish the draft?' });
      const two = items.filter({ hasText: 'Shall I delete the branch?' });
      assert.equal(await one.getByTestId('inbox-phrase').innerText(), 'publish the draft');
      assert.ok(await one.getByTestId('allow').isDisabled(), 'Approve needs the phrase typed');
      assert.equal(await one.getByTestId('allow').innerText(), 'Approve');

      // A wrong reply in the nest is not a yes: the ask stays open, in the nest and in the inbox.
      assert.equal((await c.post('/api/nests/todo/messages', { author: 'owner', text: 'hmm, not sure', refers_to: first })).status, 201);
      assert.equal(await resolved(first), '');
      // (The reply's follow-ups, the approval's decision among them, run before its 201.)
      const pending = (await c.get('/approvals')).body.pending as { scope: { msg?: string } }[];
      assert.ok(pending.some((a) => a.scope.msg === first), 'the approval is still pending');
      assert.equal(await one.count(), 1, 'still in the inbox');
      assert.ok(await one.getByTestId('allow').isVisible());

      // A wrong phrase is a no.
      await two.getByTestId('phrase').fill('delete the branches');
      await two.getByTestId('allow').click();
      await two.waitFor({ state: 'detached', timeout: 10_000 });
      assert.equal(await resolved(second), 'rejected');

      // The phrase, typed in another case and with Enter.
      await one.getByTestId('phrase').fill('  PUBLISH the draft ');
      await one.getByTestId('phrase').press('Enter');
      await one.waitFor({ state: 'detached', timeout: 10_000 });
      const recent = page.getByTestId('inbox-recent');
      await recent.getByText('Allowed').waitFor({ timeout: 10_000 });
      await recent.getByText('Denied').waitFor();
      for (let i = 0; i < 50 && (await resolved(first)) !== 'approved'; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await resolved(first), 'approved', "the owner's reply was posted into the nest");
      assert.equal(await page.getByTestId('inbox-count').innerText(), '0');
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });
});
