// The Webhooks section of /manage (docs/webhooks.md), in a real Chromium, in
// local mode (the person at the machine owns the project): add a target to a
// loopback address (private allowed), see its secret once; an agent's turn
// ends while the receiver is down and the log shows the failed attempt; the
// receiver comes up with that secret and the row turns delivered; Resend sends
// it again; axe-core finds nothing serious or critical on the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumPath } from './support/browser.js';
import { need } from './support/env.js';
import { freePort, inProcess } from './support/server.js';
import { until } from './support/until.js';
import { Receiver } from './support/webhook-receiver.js';
import { axe, axeBrowser, said } from './support/axe.js';

const HAVE = chromiumPath() !== null;

test('/manage: an owner adds a webhook, sees its secret once, the delivery log (failed attempt, then delivered) and resends one', { timeout: 120_000 }, async (t) => {
  if (!need(t, HAVE, 'chromium is not installed')) return;
  const roost = await inProcess({ webhookBackoffMs: 200 });
  const b = await axeBrowser('desktop');
  const port = await freePort();
  let rx: Receiver | null = null;
  try {
    const page = await b.context.newPage();
    await page.goto(roost.url + '/manage');
    const section = page.getByTestId('webhooks');
    await section.waitFor({ timeout: 30_000 });
    await page.getByTestId('webhook-url').fill(`http://127.0.0.1:${port}/hook`);
    await section.getByLabel('Allow a loopback or private address (local mode)').check();
    await page.getByTestId('webhook-create').click();
    const secret = await page.getByTestId('webhook-secret').inputValue({ timeout: 15_000 });
    assert.match(secret, /^whsec_/);
    await section.getByText(`http://127.0.0.1:${port}/hook`).first().waitFor({ timeout: 15_000 });
    // A turn ends (session.stopped is chosen by default) while nothing listens on the port.
    for (const status of ['working', 'done']) await fetch(roost.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'status', agent: { id: 'ann', name: 'ann' }, status, source: 'test' }) });
    const table = page.getByTestId('webhook-deliveries');
    await table.locator('tr[data-status=pending]', { hasText: 'ECONNREFUSED' }).waitFor({ timeout: 30_000 });
    // The receiver comes up with the secret the page showed.
    rx = await new Receiver(secret).start(port);
    await until('the delivery', () => rx!.got.length === 1, 30_000);
    await table.locator('tr[data-status=delivered]').waitFor({ timeout: 30_000 });
    const findings = await axe(page);
    assert.deepEqual(findings, [], said(findings));
    await table.locator('tr[data-status=delivered]').getByRole('button', { name: 'Resend' }).click();
    await until('the resend', () => rx!.got.length === 2, 30_000);
    assert.equal(rx.got[1].id, rx.got[0].id);
    assert.equal(rx.got[0].json.data.agent, 'ann');
  } finally {
    await b.close();
    await roost.close();
    await rx?.stop();
  }
});
