// The Cost page in a real browser (issue 31, point 2): a model with no price
// shows as "unpriced" with its tokens, never as $0, in its row and in the
// total; a priced model beside it shows its dollars; one model is one row
// whatever suffix its records carry; a record refused as implausible is
// counted on the page, not booked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';

const SID = 'c057c057-0000-4000-8000-000000000031';

function record(seq: number, model: string, input: number, output: number): unknown {
  const s = (key: string, v: string) => ({ key, value: { stringValue: v } });
  return {
    timeUnixNano: String(Date.now() * 1e6),
    attributes: [s('session.id', SID), s('event.name', 'api_request'), s('event.timestamp', new Date().toISOString()), { key: 'event.sequence', value: { intValue: seq } }, s('model', model), s('input_tokens', String(input)), s('output_tokens', String(output))],
  };
}

test('the Cost page: an unpriced model is "unpriced" with its tokens, never $0; one model one row', async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)')) return;
  const roost = await inProcess();
  const browser = await launch();
  try {
    await fetch(roost.url + '/hooks/claude-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hook_event_name: 'SessionStart', session_id: SID, cwd: '/home/dev/shop', source: 'startup' }) });
    const body = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: [record(1, 'acme-coder-9', 1200, 34), record(2, 'claude-sonnet-4-5', 1000, 100), record(3, 'claude-sonnet-4-5[1m]', 1000, 100)] }] }] };
    assert.equal((await fetch(roost.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status, 200);

    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/cost');
    await page.getByTestId('cost-connection').getByText('Live').waitFor({ timeout: 15_000 });
    const models = page.getByTestId('cost-models');
    await models.getByText('acme-coder-9').waitFor({ timeout: 10_000 });
    const acme = models.locator('tbody tr', { hasText: 'acme-coder-9' });
    assert.equal(await acme.getByTestId('cost-cell').innerText(), 'unpriced');
    assert.match(await acme.innerText(), /1\.2k\s+34/, 'its tokens are shown');
    const sonnet = models.locator('tbody tr', { hasText: 'claude-sonnet-4-5' });
    assert.equal(await sonnet.count(), 1, 'the [1m] suffix makes no second row');
    // 2 × (1000 × $3 + 100 × $15) per million = $0.009.
    assert.equal(await sonnet.getByTestId('cost-cell').innerText(), '$0.0090');
    const total = await page.getByTestId('cost-total').innerText();
    assert.match(total, /^\$0\.0090 \+ unpriced · /, total);
    assert.doesNotMatch(await models.innerText(), /\$0\b(?!\.)/, 'no row reads $0');

    // A record no real model could make is refused, and the page says so, live.
    const huge = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: [record(9, 'claude-sonnet-4-5', 2e9, 0)] }] }] };
    assert.equal((await fetch(roost.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(huge) })).status, 200);
    await page.getByTestId('cost-refused').waitFor({ timeout: 10_000 });
    assert.match(await page.getByTestId('cost-refused').innerText(), /1 record refused as implausible, not booked \(2000\.0M tokens claimed; tokens per record: 1\)/);
    assert.equal(await sonnet.getByTestId('cost-cell').innerText(), '$0.0090', 'nothing of it booked');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});
