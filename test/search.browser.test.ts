// Search in the web app (issue 32; docs/search.md "In the web app"), in a real
// Chromium against a real server: a Claude Code session reported a tool call
// through its hooks and ended (the floor has forgotten it); a search typed in
// the top bar finds that tool call among another agent's moments, grouped by
// agent, the words marked, and opens its moment in that session's timeline.
// A Work command's result opens its agent's chat in Work.
// `/` focuses the box unless a text field has the focus. The agent's card
// draws its trends over 30 days. axe finds nothing serious, and the search
// works on a 390 px phone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { inProcess, post } from './support/server.js';
import { chromiumPath, closeAll, launch, livePage, type Launched } from './support/browser.js';
import { axe, said } from './support/axe.js';
import { mkdirSync } from 'node:fs';
import { need, screenshotDir } from './support/env.js';
import { until } from './support/until.js';
import { client } from './support/work-server.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';
import type {} from '../web/src/floor/hook.js';

const HAVE = chromiumPath() !== null;
const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code', 'hooks-real-2.1.197');
const hook = (name: string) => JSON.parse(readFileSync(join(FIX, name), 'utf8')) as Record<string, unknown>;
const START = hook('01-SessionStart.json');
const PRE_BASH = hook('09-PreToolUse-Bash.json');
const END = hook('12-SessionEnd.json');
// The floor's id of a Claude Code session.
const SESSION = `claude-code:${String(PRE_BASH.session_id)}`;

describe('search in the web app', () => {
  let server: Roost;
  let browser: Launched;
  let page: Page;

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    // A past Claude Code session: it ran a command about refunds, then ended.
    const send = async (p: Record<string, unknown>) => {
      const r = await fetch(`${server.url}/hooks/claude-code?team=Payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(p) });
      assert.ok(r.status < 300, `${p.hook_event_name}: ${r.status}`);
    };
    await send(START);
    await send({ ...PRE_BASH, tool_input: { command: 'node scripts/reconcile.js payments/refund.ts', description: 'reconcile the refund ledger' } });
    await send(END);
    // Another agent, on the floor now, talking about refunds too.
    await post(server.url, [
      { type: 'join', agent: { id: 'ada', name: 'Ada', role: 'lead' }, team: 'Payments', status: 'working', activity: 'Planning refund checks' },
      { type: 'tool', agent: 'ada', tool: 'Read', activity: 'Reading payments/refund.ts' },
      { type: 'message', agent: 'ada', to: 'otto', text: 'the refund ledger needs a reconcile pass' },
    ]);
    // The session has left the floor: its history is only in the log.
    await until('the ended session forgotten by the floor', async () => {
      const s = (await (await fetch(`${server.url}/state`)).json()) as { agents: { id: string }[] };
      return s.agents.some((a) => a.id === 'ada') && !s.agents.some((a) => a.id === SESSION);
    }, 20_000, 200);
    mkdirSync(screenshotDir(PACKAGE_ROOT), { recursive: true });
    browser = await launch({ bypassCSP: true });
    page = await livePage(browser, server.url);
  });
  after(() => closeAll(browser, server));

  test('/ focuses the search box, unless the focus is in a text field', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const box = page.getByTestId('top-search');
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'top-search');
    assert.equal(await box.inputValue(), '', 'the / is not typed into it');
    // In a text field, / is a character.
    await page.keyboard.type('ab/c');
    assert.equal(await box.inputValue(), 'ab/c');
    await box.fill('');
    await page.keyboard.press('Escape');
  });

  test("a search typed in the top bar finds a past session's tool call and opens its moment in the timeline", async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.keyboard.press('/');
    await page.keyboard.type('reconcile refund');
    const results = page.getByTestId('search-results');
    const groups = results.getByTestId('search-group');
    await until('two agents in the results', async () => (await groups.count()) === 2, 10_000);
    assert.deepEqual(await groups.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-agent'))).then((a) => a.sort()), ['ada', SESSION].sort(), 'grouped by agent');
    const past = results.locator(`[data-testid=search-group][data-agent="${SESSION}"]`);
    const hit = past.locator('[data-testid=search-hit][data-kind=tool]');
    await hit.waitFor();
    assert.match(await hit.innerText(), /reconcile/);
    // The words are marked, as elements (never HTML from the server).
    assert.deepEqual((await hit.locator('mark').allInnerTexts()).map((m) => m.toLowerCase()).sort().slice(0, 2), ['reconcile', 'refund']);
    assert.equal(await results.getByRole('alert').count(), 0);
    const f = await axe(page);
    assert.deepEqual(f, [], said(f));

    await hit.click();
    await until('the moment in the URL', async () => /[?&]timeline=/.test(await page.evaluate(() => location.search)), 5_000);
    const url = new URL(page.url());
    assert.equal(url.pathname, '/');
    assert.equal(url.searchParams.get('timeline'), SESSION);
    assert.match(url.searchParams.get('from') ?? '', /^f:\d+$/);
    assert.equal(await results.count(), 0, 'the results close');
    const tl = page.getByTestId('timeline');
    await tl.waitFor();
    assert.match(await tl.locator('h2').innerText(), new RegExp(`History · ${SESSION}`));
    const moment = tl.locator('[data-moment=true]');
    await moment.waitFor();
    assert.equal(await moment.getAttribute('data-key'), url.searchParams.get('from'));
    assert.equal(await moment.getAttribute('data-kind'), 'tool');
    assert.match(await moment.innerText(), /Tool\s+Bash/);
    assert.match(await moment.innerText(), /reconcile/);
    assert.equal(await tl.getByTestId('timeline-item').first().getAttribute('data-moment'), 'true', 'the timeline opens at the moment, older below');
    // The session began before it: its start is below the moment.
    assert.ok((await tl.getByTestId('timeline-item').count()) >= 2);
    await page.getByRole('button', { name: 'Close history' }).click();
    assert.equal(await tl.count(), 0);
    assert.equal(new URL(page.url()).searchParams.get('timeline'), null, 'closing forgets the moment');
  });

  test("filters narrow what is found, and More pages on", async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const box = page.getByTestId('top-search');
    await box.fill('refund');
    const results = page.getByTestId('search-results');
    const hits = results.getByTestId('search-hit');
    await until('hits of both agents', async () => (await results.getByTestId('search-group').count()) === 2, 10_000);
    await results.getByTestId('search-filters-toggle').click();
    await results.getByTestId('search-agent').fill('ada');
    await results.getByTestId('search-agent').press('Tab');
    await until('only Ada', async () => (await results.getByTestId('search-group').count()) === 1 && (await results.getByTestId('search-group').getAttribute('data-agent')) === 'ada', 10_000);
    await results.getByTestId('search-kind').selectOption('message');
    await until('only her message', async () => (await hits.count()) === 1 && (await hits.getAttribute('data-kind')) === 'message', 10_000);
    await results.getByRole('button', { name: 'Clear filters' }).click();
    // Paging: many moments, 20 at a time.
    const batch: Record<string, unknown>[] = [];
    for (let i = 0; i < 30; i++) batch.push({ type: 'tool', agent: 'ada', tool: 'Edit', activity: `zebrafix step ${i}` });
    await post(server.url, batch);
    await box.fill('zebrafix');
    await until('a first page', async () => (await hits.count()) === 20, 10_000);
    await results.getByTestId('search-more').click();
    await until('the rest', async () => (await hits.count()) === 30, 10_000);
    assert.equal(await results.getByTestId('search-more').count(), 0);
    await box.press('Escape');
    assert.equal(await results.count(), 0);
  });

  test("a Work command's result found in the top bar opens the agent's chat in Work, where it shows", async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    // A Space's agent ran a command and reported its result, as a bridge does.
    const me = client(server.url, null);
    const space = (await me.post('/api/v2/spaces', { name: 'lap' })).json.id;
    assert.equal((await me.post('/api/v2/projects/default/spaces', { space })).status, 200);
    assert.equal((await me.post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [{ session: 'w1', origin: 'bridge' }] })).status, 200);
    const agent = `${space}:w1`;
    const cmd = (await me.post('/api/v2/commands', { project: 'default', agent, text: 'audit the wombat ledger' })).json.id;
    for (const body of [{ event: 'started' }, { event: 'finished', status: 'failed', result: 'Wombat ledger: 3 entries unbalanced' }]) {
      assert.equal((await me.post(`/api/v2/spaces/${space}/executions`, { command: cmd, ...body })).status, 200);
    }
    await page.keyboard.press('/');
    await page.keyboard.type('wombat unbalanced');
    const results = page.getByTestId('search-results');
    const hit = results.locator(`[data-testid=search-group][data-agent="${agent}"] [data-testid=search-hit][data-kind="execution.finished"]`);
    await hit.waitFor({ timeout: 10_000 });
    assert.match(await results.locator(`[data-testid=search-group][data-agent="${agent}"]`).innerText(), /Work/, "under the Work agent, in Work");
    await hit.click();
    await until('Work opened', async () => new URL(page.url()).pathname === '/work', 10_000);
    assert.equal(new URL(page.url()).searchParams.get('conversation'), `agent:${agent}`);
    const line = page.getByTestId('transcript').locator('[data-kind=result]');
    await line.waitFor({ timeout: 10_000 });
    assert.match(await line.innerText(), /Wombat ledger: 3 entries unbalanced/);
    await page.goto(server.url + '/');
  });

  test("the agent's card draws its trends over 30 days", async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    await page.getByTestId('agent-row-ada').locator('button').click();
    const trends = page.getByTestId('agent-card').getByTestId('card-trends');
    await trends.locator('.uplot canvas').waitFor();
    assert.match(await trends.getByTestId('trends-total').innerText(), /^31 tool calls, 0 approvals waited for \(0 min\), 0 failures, \$0/);
    // Drawn: the tool calls' line (#2563eb) has pixels on the plot.
    const blue = await trends.locator('.uplot canvas').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x25) + Math.abs(d[i + 1] - 0x63) + Math.abs(d[i + 2] - 0xeb) < 60) n++;
      return n;
    });
    assert.ok(blue > 5, `the line is drawn (${blue} px)`);
    await page.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'floor-trends.png') });
    const f = await axe(page);
    assert.deepEqual(f, [], said(f));
    await page.keyboard.press('Escape');
  });

  test('on a 390 px phone: the box fits the top bar, the results fit the screen and open the moment', async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const phone = await launch({ phone: true, bypassCSP: true });
    try {
      const p = await phone.context.newPage();
      await p.goto(server.url + '/');
      const box = p.getByTestId('top-search');
      await box.fill('reconcile');
      const results = p.getByTestId('search-results');
      const hit = results.locator(`[data-testid=search-group][data-agent="${SESSION}"] [data-testid=search-hit]`).first();
      await hit.waitFor({ timeout: 10_000 });
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `no sideways scroll (${width} px)`);
      const r = (await results.boundingBox())!;
      assert.ok(r.x >= 0 && r.x + r.width <= 390, `the results fit (${r.x}..${r.x + r.width})`);
      const f = await axe(p);
      assert.deepEqual(f, [], said(f));
      // The picture in docs/search.md.
      await p.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'search-phone.png') });
      await hit.tap();
      await p.getByTestId('timeline').locator('[data-moment=true]').waitFor({ timeout: 10_000 });
    } finally {
      await phone.close();
    }
  });
});
