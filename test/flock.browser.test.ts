// The flock view in a real browser against a real server and a scripted
// model stand-in (test/support/flock-model.ts): a two-item list handed over
// in the page (after a refused one), triage waiting for a verdict, approved
// (and rejected) in the page, the crow flying and landing, the answer, the
// output approved, the trust ledger moving; an owner demoting and resetting a
// trusted holder with a reason, and setting the project's default budget, in
// the page; and the 503 without a model, saying how to connect one.
import { describe, test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need, screenshotDir } from './support/env.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import type { Roost } from '../src/server/index.js';
import { flockTs } from '../src/core/flock.js';
import { until } from './support/until.js';

const ready = (t: TestContext) =>
  need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)') && need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)');

describe('the flock view', () => {
  let model: FlockModel;
  let roost: Roost;
  before(async () => {
    model = await flockModel('anthropic', { slowMs: 2500 });
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 2000 });
  });
  after(async () => {
    await roost?.close();
    await model?.close();
  });

  test('a two-item list handed over in the page: triage waits, approved in the page, the crow flies and lands, the answer, the output approved, the ledger moves', async (t) => {
    if (!ready(t)) return;
    const browser = await launch({ viewport: { width: 1280, height: 900 }, reducedMotion: true }); // a still picture: the state is in data-state
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(roost.url + '/flock');
      await page.getByTestId('flock-connection').getByText('Live').waitFor({ timeout: 15_000 });
      await page.getByTestId('flock-ledger-empty').waitFor();

      // A list with an item of no letter or digit is refused (400), in the server's words.
      await page.getByTestId('flock-text').fill('- ???');
      await page.getByTestId('flock-requester').fill('ann');
      await page.getByTestId('flock-submit').click();
      await page.locator('[data-testid=flock-error][data-status="400"]').getByText('That list was refused.').waitFor({ timeout: 10_000 });

      await page.getByTestId('flock-text').fill('- [ ] write the release notes slow\n- [ ] review the ship checklist');
      await page.getByTestId('flock-submit').click();
      const list = page.locator('[data-testid^=flock-list-]');
      await list.waitFor({ timeout: 10_000 });
      assert.equal(await page.getByTestId('flock-error').count(), 0, 'the refusal goes with the next list');
      assert.equal(await page.getByTestId('flock-text').inputValue(), '', 'the form is cleared');
      const list_id = ((await list.getAttribute('data-testid')) ?? '').slice('flock-list-'.length);
      assert.match(list_id, /^l-[0-9a-f]{12}$/);
      assert.match(await list.innerText(), /from ann/);
      const one = `${list_id}-1`;
      const two = `${list_id}-2`;

      // Triage waits for a person: a stranger flock asks.
      const item1 = page.getByTestId(`flock-item-${one}`);
      await page.locator(`[data-testid="flock-item-${one}"][data-phase=triage_verdict]`).waitFor({ timeout: 10_000 });
      assert.match(await item1.innerText(), /solo · writing/);
      assert.match(await item1.innerText(), /Sentry/, 'the Sentry flew and landed');
      await page.locator(`[data-testid="flock-item-${two}"][data-phase=triage_verdict]`).waitFor({ timeout: 10_000 });

      // Approve item 1's triage in the page, twice at once (two requests race): the first decides,
      // the second reads "already decided". Reject item 2's.
      await page.getByTestId(`flock-verdict-${one}-triage`).getByRole('button', { name: 'Approve triage' }).evaluate((b: HTMLButtonElement) => {
        b.click();
        b.click();
      });
      await page.getByTestId(`flock-verdict-note-${one}`).getByText(/^Already decided/).waitFor({ timeout: 10_000 });
      await page.getByTestId(`flock-verdict-${two}-triage`).getByRole('button', { name: 'Reject' }).click();

      // A crow flies (the stand-in answers after 2.5 s), then lands, and the answer appears.
      const flying = page.locator(`[data-testid^="crow-${one}-"][data-state=flying]`);
      await flying.waitFor({ timeout: 10_000 });
      const crow = ((await flying.getAttribute('data-testid')) ?? '').slice(`crow-${one}-`.length);
      assert.notEqual(crow, 'Sentry');
      assert.equal(await page.locator(`[data-testid="flock-item-${one}"]`).getAttribute('data-phase'), 'flying');
      await page.locator(`[data-testid="crow-${one}-${crow}"][data-state=ok]`).waitFor({ timeout: 15_000 });
      await page.getByTestId(`flock-answer-${one}`).waitFor({ timeout: 10_000 });
      assert.match(await page.getByTestId(`flock-answer-${one}`).innerText(), new RegExp(`${crow} did: write the release notes slow`));
      await page.locator(`[data-testid="flock-item-${two}"][data-phase=skipped]`).waitFor({ timeout: 10_000 });
      assert.match(await page.getByTestId(`flock-phase-${two}`).innerText(), /skipped \(rejected\)/);
      assert.match(await item1.innerText(), /triage approved by local owner/);

      // The output waits; approve it in the page.
      await page.locator(`[data-testid="flock-item-${one}"][data-phase=output_verdict]`).waitFor({ timeout: 10_000 });
      await page.getByTestId(`flock-verdict-${one}-output`).getByRole('button', { name: 'Approve output' }).click();
      await page.locator(`[data-testid="flock-item-${one}"][data-phase=done]`).waitFor({ timeout: 10_000 });

      // The ledger: the flock judged on both triages, the crow on its output.
      await page.getByTestId(`trust-${crow}-writing`).waitFor({ timeout: 10_000 });
      assert.match(await page.getByTestId(`trust-${crow}-writing`).innerText(), new RegExp(`${crow}\\s+writing\\s+stranger\\s+1\\s+1\\s+0\\s+0`));
      assert.match(await page.getByTestId('trust-flock-writing').innerText(), /flock\s+writing\s+stranger\s+1\s+1\s+0\s+0/);
      assert.match(await page.getByTestId('trust-flock-review').innerText(), /flock\s+review\s+stranger\s+0\s+0\s+1\s+0/);
      const ledger = (await (await fetch(roost.url + '/api/trust')).json()) as { holders: unknown[] };
      assert.equal(ledger.holders.length, 3, 'the page shows the server’s ledger');

      // The budget used, and the list finishes (the banter, then list.finished).
      await page.locator(`[data-testid="flock-list-${list_id}"][data-finished=yes]`).waitFor({ timeout: 15_000 });
      assert.match(await page.getByTestId(`flock-budget-${list_id}`).innerText(), /^\d+ \/ 200k tokens$/);
      assert.notEqual(await page.getByTestId(`flock-budget-${list_id}`).innerText(), '0 / 200k tokens');

      assert.match(await page.getByTestId(`flock-answer-${one}`).innerText(), /approved by local owner/);


      await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'flock.png') }); // docs/img/flock.png with ROOST_SCREENSHOTS=docs
      // Found again by search: the item's answer is a hit that opens the lists at that item, marked and focused.
      await page.goto(roost.url + '/flock/nests');
      await page.getByTestId('flock-connection').getByText('Live').waitFor({ timeout: 15_000 });
      await page.keyboard.press('/');
      assert.equal(await page.getByTestId('top-search').evaluate((el) => el === document.activeElement), true, '/ focuses the search box');
      await page.keyboard.type('release notes slow');
      const hit = page.getByTestId('search-results').locator('[data-testid=search-hit][data-kind="item.answered"]');
      await hit.waitFor({ timeout: 10_000 }).catch(async (e: Error) => assert.fail(`${e.message}\nthe results: ${await page.getByTestId('search-results').innerText().catch(() => '(none)')}`));
      await hit.click();
      await until('the item in the URL', async () => new URL(page.url()).searchParams.get('item') === one, 5_000);
      assert.equal(new URL(page.url()).pathname, '/flock');
      const found = page.locator(`[data-testid="flock-item-${one}"][aria-current=true]`);
      await found.waitFor({ timeout: 10_000 });
      assert.equal(await found.evaluate((el) => el === document.activeElement), true, 'the item has the focus');
      assert.equal(await page.locator('[data-testid^=flock-item-][aria-current]').count(), 1, 'only that item is marked');
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });
});

test("a code flight says it is a Claude Code session and links to its board", async (t) => {
  if (!ready(t)) return;
  // No model: nothing drives the list; its events are appended as the service writes a code flight's.
  const roost = await inProcess({ models: null });
  const browser = await launch({ reducedMotion: true });
  try {
    const list_id = 'l-c0de00000001';
    const item_id = `${list_id}-1`;
    const ts = flockTs(Date.now());
    const board = { thread: 'default', session: 'flock-0123456789abcdef0123' };
    await roost.flock.append([
      { type: 'list.started', list_id, requester: 'ann', nest_id: 'todo', items: [{ item_id, text: 'fix the login redirect' }], ts },
      { type: 'crow.flying', list_id, item_id, crow: 'Sentry', borrowed: false, ts },
      { type: 'item.triaged', list_id, item_id, mode: 'solo', task_type: 'code', subtasks: [], reason: 'a change to the repository', needs_approval: false, ts },
      { type: 'crow.landed', list_id, item_id, crow: 'Sentry', ok: true, tokens: 120, ts },
      { type: 'verdict', list_id, item_id, target: 'triage', verdict: 'auto', ts },
      { type: 'crow.flying', list_id, item_id, crow: 'Hugin', borrowed: false, board, ts },
    ]);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/flock');
    const crow = page.locator(`[data-testid="crow-${item_id}-Hugin"][data-state=flying]`);
    await crow.waitFor({ timeout: 15_000 });
    const link = page.getByTestId(`crow-board-${item_id}-Hugin`);
    assert.equal(await link.innerText(), 'Claude Code session on board default');
    assert.equal(await page.getByTestId(`crow-board-${item_id}-Sentry`).count(), 0, "the Sentry's flight is a model's");
    await link.click();
    await page.getByTestId('board').waitFor({ timeout: 10_000 });
    assert.equal(new URL(page.url()).pathname, '/fleet/default');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});

test('without a model the page says the command that connects one (copy, and a link to the demo), and a list is refused 503', async (t) => {
  if (!ready(t)) return;
  const roost = await inProcess({ models: null });
  const browser = await launch();
  try {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/flock');
    await page.getByTestId('flock-no-model').waitFor({ timeout: 15_000 });
    // The one command that connects one, with its copy button, and the same view in the demo project.
    const first = page.getByTestId('first-step-flock');
    assert.equal(await first.getByTestId('first-step-command').innerText(), 'npx roost serve --model anthropic:claude-haiku-4-5');
    assert.equal(await first.getByTestId('first-step-copy').count(), 1);
    const demo = new URL((await first.getByTestId('first-step-demo').getAttribute('href'))!, roost.url);
    assert.deepEqual([demo.pathname, demo.searchParams.get('project')], ['/flock', 'demo']);
    await page.getByTestId('flock-text').fill('write the notes');
    await page.getByTestId('flock-requester').fill('ann');
    await page.getByTestId('flock-submit').click();
    const err = page.locator('[data-testid=flock-error][data-status="503"]');
    await err.waitFor({ timeout: 10_000 });
    assert.match(await err.innerText(), /roost serve --model/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
  }
});

test('an owner demotes and resets a trust holder with a reason, and sets the project budget, in the page', async (t) => {
  if (!ready(t)) return;
  const model = await flockModel('anthropic');
  const roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 1000 });
  const browser = await launch({ viewport: { width: 1280, height: 900 }, reducedMotion: true });
  try {
    // Six approved triages at writing make the flock trusted there (three in a row per level).
    const c = flockClient(roost.url);
    const list_id = await c.start(Array.from({ length: 6 }, (_, i) => `write note ${i + 1}`).join('\n'), 'ann');
    const w = await c.watch(list_id);
    for (let n = 1; n <= 6; n++) {
      await w.next('item.triaged', (d) => d.item_id === `${list_id}-${n}`, 15_000);
      assert.equal((await c.verdict(`${list_id}-${n}`, 'triage', true)).status, 204);
    }
    w.close();
    const level = async () => ((await c.get('/api/trust')).body.holders as { holder: string; task_type: string; level: number }[]).find((h) => h.holder === 'flock' && h.task_type === 'writing')?.level;
    for (let i = 0; i < 200 && (await level()) !== 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await level(), 2, 'the flock is trusted at writing');

    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/flock');
    await page.getByTestId('flock-connection').getByText('Live').waitFor({ timeout: 15_000 });
    const row = page.getByTestId('trust-flock-writing');
    await row.getByText('trusted').waitFor({ timeout: 10_000 });

    // Demote: a reason is required (said in the page, nothing sent), then given and logged.
    await page.getByTestId('trust-demote-flock-writing').click();
    assert.match(await page.getByTestId('trust-change').innerText(), /Demote flock at writing: trusted → regular/);
    await page.getByTestId('trust-confirm').click();
    await page.getByTestId('trust-error').getByText(/reason/).waitFor();
    assert.equal(await level(), 2, 'nothing changed without a reason');
    await page.getByTestId('trust-reason').fill('too eager on release notes');
    await page.getByTestId('trust-confirm').click();
    await row.getByText('regular').waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId('trust-change').count(), 0, 'the form closes');
    await page.getByTestId('flock-history').getByText('flock (writing) trusted → regular by local owner: too eager on release notes').waitFor({ timeout: 10_000 });
    assert.equal(await level(), 1);

    // Reset: to stranger, and a stranger has nothing left to demote.
    await page.getByTestId('trust-reset-flock-writing').click();
    assert.match(await page.getByTestId('trust-change').innerText(), /Reset flock at writing: regular → stranger/);
    await page.getByTestId('trust-reason').fill('start over');
    await page.getByTestId('trust-confirm').click();
    await row.getByText('stranger').waitFor({ timeout: 10_000 });
    await page.getByTestId('flock-history').getByText('flock (writing) regular → stranger by local owner: start over').waitFor({ timeout: 10_000 });
    assert.equal(await level(), 0);
    assert.equal(await page.getByTestId('trust-demote-flock-writing').count(), 0);
    const history = (await c.get('/api/trust')).body.history as { by?: string; reason?: string; from: number; to: number }[];
    assert.deepEqual(history.filter((h) => h.by).map((h) => [h.from, h.to, h.by, h.reason]), [
      [2, 1, 'local owner', 'too eager on release notes'],
      [1, 0, 'local owner', 'start over'],
    ]);

    // The project budget: shown, refused out of range in the page, set, and used by the next list.
    const budget = page.getByTestId('flock-default-budget');
    assert.equal(await budget.innerText(), 'Default budget 200,000 tokens a list');
    await page.getByTestId('flock-budget-edit').click();
    await page.getByTestId('flock-budget-input').fill('500');
    await page.getByTestId('flock-budget-save').click();
    await page.getByTestId('flock-budget-error').getByText(/from 1,000 to/).waitFor();
    await page.getByTestId('flock-budget-input').fill('50,000');
    await page.getByTestId('flock-budget-save').click();
    await budget.getByText('Default budget 50,000 tokens a list').waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId('flock-budget-form').count(), 0);
    assert.equal((await c.get('/api/flock')).body.token_budget, 50_000);
    const next = await c.start('write one more note', 'bob');
    const w2 = await c.watch(next);
    assert.equal((await w2.next('list.started')).data.token_budget, 50_000, 'a new list gets the project budget');
    w2.close();
    // Its budget is the project's (what it has used by then depends on how fast the Sentry's call landed).
    await page.locator(`[data-testid="flock-budget-${next}"]`).getByText(/^[\d.,]+k? \/ 50k tokens$/).waitFor({ timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
    await model.close();
  }
});

test('the nest chosen when handing over; banter under its item; the prank on the flying list; the cooldown and its time left before trying (issue 36, point 10)', async (t) => {
  if (!ready(t)) return;
  const model = await flockModel('openai');
  const roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 5000 });
  const browser = await launch({ viewport: { width: 1280, height: 900 }, reducedMotion: true });
  try {
    const c = flockClient(roost.url);
    assert.equal((await c.post('/api/nests', { name: 'Desk', crows: ['Pepper', 'Inky'] })).status, 201);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(roost.url + '/flock');
    await page.getByTestId('flock-connection').getByText('Live').waitFor({ timeout: 15_000 });

    // The nest is chosen in the form: the list flies in Desk, its crow from Desk's core.
    await page.getByTestId('flock-nest').locator('option[value=desk]').waitFor({ state: 'attached', timeout: 10_000 });
    await page.getByTestId('flock-text').fill('write the desk notes');
    await page.getByTestId('flock-requester').fill('ann');
    await page.getByTestId('flock-nest').selectOption('desk');
    await page.getByTestId('flock-submit').click();
    const card = page.locator('[data-testid^=flock-list-]');
    await card.waitFor({ timeout: 10_000 });
    const list_id = ((await card.getAttribute('data-testid')) ?? '').slice('flock-list-'.length);
    assert.match(await page.getByTestId(`flock-from-${list_id}`).innerText(), /from ann · in desk/);
    const item = `${list_id}-1`;
    await page.getByTestId(`flock-verdict-${item}-triage`).getByRole('button', { name: 'Approve triage' }).click({ timeout: 10_000 });
    await page.getByTestId(`flock-verdict-${item}-output`).getByRole('button', { name: 'Approve output' }).click({ timeout: 15_000 });
    // Banter: the line shows under the item it was spoken about.
    const banter = page.getByTestId(`flock-banter-${item}`);
    await banter.waitFor({ timeout: 15_000 });
    assert.match(await banter.innerText(), /^(Pepper|Inky) to \S+: .*not bad, for a crow\./);
    await page.locator(`[data-testid="flock-list-${list_id}"][data-finished=yes]`).waitFor({ timeout: 15_000 });

    // A list of ann's still flying (its triage waits), then three bad lists: the third strike starts a cooldown and pranks it.
    const flying = await c.start('write the second note', 'ann');
    await page.getByTestId(`flock-list-${flying}`).waitFor({ timeout: 10_000 });
    assert.equal(await page.getByTestId(`flock-prank-${flying}`).count(), 0);
    assert.equal((await c.list('!!! ???', 'ann')).status, 400);
    assert.equal((await c.list('- \n* \n', 'ann')).status, 400);
    assert.equal((await c.list('???', 'ann')).status, 429);
    const prank = page.getByTestId(`flock-prank-${flying}`);
    await prank.waitFor({ timeout: 10_000 });
    assert.match(await prank.innerText(), /^Pranked\. ann sent too many lists .*\(cooldown 60 s\)$/);
    assert.equal(await page.getByTestId(`flock-prank-${list_id}`).count(), 0, 'the finished list is not pranked');

    // Before trying again, the form says ann is cooling down and for how long; the time left counts down.
    const cool = page.getByTestId('flock-cooldown');
    await cool.waitFor({ timeout: 10_000 });
    assert.match(await cool.innerText(), /^ann is cooling down after too many strikes: new lists are refused for \d+ s more\.$/);
    const left = Number(await cool.getAttribute('data-left'));
    assert.ok(left > 0 && left <= 60, `time left: ${left}`);
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid=flock-cooldown]')?.getAttribute('data-left')) < n, left, { timeout: 5000 });
    // Another requester has no cooldown.
    await page.getByTestId('flock-requester').fill('bea');
    await cool.waitFor({ state: 'detached', timeout: 5000 });
    await page.getByTestId('flock-requester').fill('ann');
    await cool.waitFor({ timeout: 5000 });
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'flock-pranked.png') });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await roost.close();
    await model.close();
  }
});
