// "Start in <project>" from General Chat, in headless Chromium (local mode):
// with no agent in the project the page says so plainly; once a Space has an
// agent, the person picks it and the request is queued to it as a command
// (its chat shows the prompt, queued), and General Chat's link says where.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';

test('General Chat: "Start in" queues the request to the agent picked, or says no agent is there', { timeout: 120_000 }, async (t) => {
  if (!need(t, chromiumPath() !== null, 'chromium is not installed')) return;
  const roost = await inProcess();
  const browser = await launch();
  const post = async (path: string, body: unknown) => {
    const r = await fetch(roost.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(body) });
    const json = await r.json();
    assert.equal(r.status, 200, JSON.stringify(json));
    return json;
  };
  try {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/work');
    await page.getByTestId('chat-general').click();
    await page.getByTestId('composer').fill('Please bump the version to 0.5');
    await page.getByTestId('send').click();
    await page.getByTestId('transcript').getByText('Please bump the version to 0.5').waitFor();

    // No agent in the project: said plainly, nothing queued.
    await page.getByTestId('start-work-1').click();
    const none = page.getByTestId('start-none');
    await none.waitFor();
    assert.match(await none.innerText(), /no agent/i);
    assert.equal(await page.getByTestId('start-agent').count(), 0);

    // A Space with one agent appears (a bridge would report it): the picker offers it, live.
    const space = (await post('/api/v2/spaces', { name: 'laptop' })).id as string;
    await post('/api/v2/projects/default/spaces', { space });
    await post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [{ session: 's-1', label: 'release-bot', pane: 'pid 1', origin: 'bridge' }] });
    const agent = `${space}:s-1`;
    const pick = page.getByTestId('start-agent');
    await pick.waitFor();
    assert.deepEqual(await pick.locator('option').allInnerTexts(), ['release-bot']);
    await page.getByTestId('start-queue').click();
    await page.getByTestId('general-links').getByText('queued to release-bot').waitFor();

    // The agent's chat holds the request as a queued command, by me.
    await page.getByTestId(`agent-${agent}`).click();
    const prompt = page.getByTestId('transcript').locator('li.msg-prompt');
    await prompt.waitFor();
    assert.match(await prompt.innerText(), /Please bump the version to 0\.5/);
    assert.equal(await prompt.locator('[data-status]').getAttribute('data-status'), 'queued');
    const snap = await (await fetch(`${roost.url}/api/v2/snapshot?project=default`)).json();
    assert.deepEqual(snap.commands.map((c: any) => [c.agent, c.text, c.status]), [[agent, 'Please bump the version to 0.5', 'queued']]);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});
