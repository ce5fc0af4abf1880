// Rewind in a real browser (issue 32, docs/floor.md "Rewind"): the slider
// shows an agent "waiting" at a past moment although it is "done" now, while
// live frames keep arriving behind it, and "Back to live" shows it done; the
// rewound URL, shared, opens rewound; a rewound fleet board offers no way to
// decide or act.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { inProcess, post } from './support/server.js';
import { chromiumPath, closeAll, launch, livePage, type Launched } from './support/browser.js';
import { need } from './support/env.js';
import type { Roost } from '../src/server/index.js';
import type {} from '../web/src/floor/hook.js';

const HAVE = chromiumPath() !== null;

describe('rewind on the floor', () => {
  let server: Roost;
  let browser: Launched;
  let page: Page;
  let waitingAt = 0;

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    browser = await launch();
    await post(server.url, { type: 'join', agent: { id: 'ada', name: 'Ada', role: 'lead' }, team: 'Payments', status: 'working', activity: 'Planning refunds' });
    await post(server.url, { type: 'status', agent: 'ada', status: 'waiting', activity: 'Allow Bash: npm run deploy?' });
    await post(server.url, { type: 'join', agent: { id: 'otto', name: 'Otto', role: 'coder' }, team: 'Payments', status: 'working' });
    await post(server.url, { type: 'status', agent: 'ada', status: 'done', activity: 'Refunds shipped' });
    waitingAt = (await server.store.read('floor', 0)).find((e) => e.body.includes('"waiting"'))!.position;
    page = await livePage(browser, server.url);
  });
  after(() => closeAll(browser, server));

  const statusOf = (p: Page, id: string) => p.getByTestId(`agent-row-${id}`).first().getAttribute('data-status');

  test('the slider shows Ada waiting at a past moment though she is done now; Back to live shows her done', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId('agent-row-ada').first().waitFor();
    assert.equal(await statusOf(page, 'ada'), 'done');
    assert.equal(await page.getByTestId('rewind-at').innerText(), 'Live');
    // A person drags the slider back: from the keyboard, to the start, then step by step to the moment.
    const slider = page.getByTestId('rewind-slider');
    await slider.focus();
    await page.keyboard.press('Home');
    for (let i = 0; i < waitingAt; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction((p) => document.querySelector('[data-testid=rewind]')?.getAttribute('data-position') === String(p), waitingAt);
    assert.equal(await statusOf(page, 'ada'), 'waiting', 'waiting, as she was then');
    assert.equal(await page.getByTestId('agent-row-otto').count(), 0, 'Otto had not joined yet');
    assert.match(await page.getByTestId('rewind-at').innerText(), new RegExp(`event ${waitingAt} of \\d+\\), read-only`));
    assert.equal(new URL(page.url()).searchParams.get('at'), String(waitingAt), 'the moment is in the URL');
    // Live frames keep arriving behind the past: folded, not shown.
    await post(server.url, { type: 'join', agent: { id: 'eve', name: 'Eve', role: 'coder' }, team: 'Web', status: 'working' });
    await page.waitForFunction(() => window.__roost?.client.state.agents.has('eve') === true);
    assert.equal(await page.getByTestId('agent-row-eve').count(), 0, 'the past shows no Eve');
    assert.equal(await statusOf(page, 'ada'), 'waiting');
    await page.getByTestId('rewind-live').click();
    await page.getByTestId('agent-row-eve').first().waitFor();
    assert.equal(await statusOf(page, 'ada'), 'done');
    assert.equal(await page.getByTestId('rewind-at').innerText(), 'Live');
    assert.equal(new URL(page.url()).searchParams.get('at'), null);
  });

  test('a rewound URL, shared with a teammate, opens rewound (a position or a time)', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const other = await browser.context.newPage();
    try {
      await other.goto(`${server.url}/?at=${waitingAt}`);
      await other.waitForFunction((p) => document.querySelector('[data-testid=rewind]')?.getAttribute('data-position') === String(p), waitingAt);
      assert.equal(await statusOf(other, 'ada'), 'waiting');
      assert.equal(await other.getByTestId('rewind').getAttribute('data-rewound'), 'true');
      // A time: the last event at or before it.
      const at = (await server.store.read('floor', waitingAt - 1, 1))[0].at;
      await other.goto(`${server.url}/?at=${encodeURIComponent(new Date(at).toISOString())}`);
      await other.waitForFunction(() => document.querySelector('[data-testid=rewind]')?.getAttribute('data-position') !== '');
      const pos = Number(await other.getByTestId('rewind').getAttribute('data-position'));
      assert.ok(pos >= waitingAt, `position ${pos}`);
      const then = (await server.store.read('floor', 0)).filter((e) => e.position <= pos);
      assert.ok(then.every((e) => e.at <= at), 'nothing after the time');
    } finally {
      await other.close();
    }
  });

  test('a rewound fleet board shows a pending approval of the past with no way to answer it', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const send = async (ev: object) => {
      const r = await fetch(`${server.url}/fleet/t1`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID(), 'roost-name': 'Claude' }, body: JSON.stringify(ev) });
      assert.ok(r.status < 300, await r.text());
    };
    await send({ type: 'session.spawn', id: 's1', session: 'fix-refunds', flavor: 'scoped' });
    await send({ type: 'session.approval', id: 's1', rid: 'r1', state: 'pending', tool: 'Bash', digest: 'npm run deploy' });
    await send({ type: 'session.end', id: 's1', reason: 'closed' });
    const board = await browser.context.newPage();
    try {
      await board.goto(`${server.url}/fleet/t1?at=2`);
      await board.getByTestId('pending-r1').waitFor();
      assert.notEqual(await board.getByTestId('session-s1').getAttribute('data-state'), 'ended');
      const card = board.getByTestId('session-s1');
      assert.equal(await card.getByRole('button').count(), 0, 'no allow, deny, prompt or close in the past');
      assert.equal(await board.getByTestId('new-session').count(), 0);
      assert.equal(await board.locator('fieldset.rewound-past[disabled]').count(), 1);
      await board.getByTestId('rewind-live').click();
      await board.waitForFunction(() => document.querySelector('[data-testid=session-s1]')?.getAttribute('data-state') === 'ended');
    } finally {
      await board.close();
    }
  });
});
