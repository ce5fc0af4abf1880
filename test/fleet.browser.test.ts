// The fleet board in real browsers: two members (Ana and Bob, two browser
// profiles, each with the name typed in the board's bar) look at the same
// thread. A session is started from Ana's composer; the test plays the
// workstation bridge by posting its events over HTTP (spawn, status, turn,
// approval, result, end), and asserts what each member sees: the same cards,
// the same counts, the same chat in the same order; an approval answered from
// one card is decided on the other, and a later decision changes nothing.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { freePort, inProcess, tempDir } from './support/server.js';
import { until } from './support/until.js';
import { chromiumPath, launch } from './support/browser.js';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT, startRoost, type Roost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { SqliteStore } from '../src/storage/index.js';

// window.__roostFleet, as the page declares it (types only).
import type {} from '../web/src/live/useFleet.js';

const HAVE = chromiumPath() !== null;
const WHY = 'chromium is not installed (apt-get install chromium, or set ROOST_CHROMIUM)';
type Server = Roost & { dataDir: string };
type Browser = Awaited<ReturnType<typeof launch>>;

/** Posts session events as the bridge does (its transport name: Claude). */
async function bridge(url: string, thread: string, events: unknown, key?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'roost-name': 'Claude' };
  if (key) headers['idempotency-key'] = key;
  const r = await fetch(`${url}/fleet/${thread}`, { method: 'POST', headers, body: JSON.stringify(events) });
  return { status: r.status, json: await r.json() };
}

async function openBoard(b: Browser, url: string, thread: string, name: string): Promise<Page> {
  const page = await b.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  (page as Page & { errors?: string[] }).errors = errors;
  await page.goto(`${url}/fleet/${thread}`);
  await page.getByLabel('Your name').fill(name);
  await page.waitForFunction((t) => window.__roostFleet?.[t]?.connection === 'live', thread, { timeout: 10_000 });
  return page;
}

const card = (page: Page, id: string) => page.getByTestId(`session-${id}`);

/** The chat as a member sees it: one "author: text" per line, in order. */
async function chatOf(page: Page): Promise<string[]> {
  return page.getByTestId('chat-line').evaluateAll((els) =>
    els.map((el) => `${el.querySelector('.who')?.textContent ?? ''}: ${el.querySelector('.text')?.textContent ?? ''}`),
  );
}

async function waitChat(page: Page, n: number): Promise<string[]> {
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chat-line"]').length >= n, n, { timeout: 5_000 });
  return chatOf(page);
}

async function expectText(page: Page, testid: string, id: string, text: string | RegExp): Promise<void> {
  const el = card(page, id).getByTestId(testid);
  await el.waitFor({ state: 'attached' });
  const deadline = Date.now() + 5_000;
  for (;;) {
    const got = (await el.textContent()) ?? '';
    if (typeof text === 'string' ? got === text : text.test(got)) return;
    if (Date.now() > deadline) assert.fail(`${testid} of ${id}: expected ${text}, got "${got}"`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the fleet board in the browser', () => {
  let server: Server;
  let anaB: Browser;
  let bobB: Browser;
  let ana: Page;
  let bob: Page;
  const thread = 'default';

  before(async () => {
    if (!HAVE) return;
    server = await inProcess();
    [anaB, bobB] = await Promise.all([launch({ viewport: { width: 1280, height: 800 } }), launch({ viewport: { width: 1280, height: 800 } })]);
  });
  after(async () => {
    await anaB?.close();
    await bobB?.close();
    await server?.close();
  });

  test('two members start, prompt, approve and close one session, and see the same board and chat', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    [ana, bob] = await Promise.all([openBoard(anaB, server.url, thread, 'Ana'), openBoard(bobB, server.url, thread, 'Bob')]);
    await ana.getByTestId('board-empty').waitFor();
    await bob.getByTestId('board-empty').waitFor();

    // Ana starts a session from the composer, from the keyboard.
    await ana.getByRole('button', { name: 'New session' }).focus();
    await ana.keyboard.press('Enter');
    await ana.getByLabel('Name', { exact: true }).fill('fix-login');
    await ana.getByLabel(/^Plain/).check();
    await ana.getByLabel(/^Scoped/).check();
    await ana.getByLabel('Root', { exact: true }).fill('messenger');
    const answered = ana.waitForResponse((r) => r.url().endsWith(`/fleet/${thread}/requests`) && r.request().method() === 'POST');
    await ana.getByLabel('Root', { exact: true }).press('Enter');
    const res = await answered;
    assert.equal(res.status(), 200);
    const sent = res.request().postDataJSON() as { type: string; id: string; session: string; flavor: string; root: string };
    assert.equal(sent.type, 'request.start');
    assert.equal(sent.session, 'fix-login');
    assert.equal(sent.flavor, 'scoped');
    assert.equal(sent.root, 'messenger');
    const id = ((await res.json()) as { id: string }).id;
    assert.equal(id, sent.id);
    // The form closes and the keyboard is back on its button.
    await ana.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'new-session');

    // Both see the request waiting for the bridge (it is on the thread's stream), named by who asked.
    for (const p of [ana, bob]) await p.getByTestId(`starting-${id}`).getByText('Ana asked to start “fix-login”').waitFor();
    // No bridge follows this thread in this test (the test plays it): the request says it waits for one.
    await ana.getByTestId(`starting-${id}`).getByText('No bridge follows this thread yet').waitFor();

    // The bridge spawns it and says what it does.
    assert.equal((await bridge(server.url, thread, [
      { type: 'session.spawn', id, session: 'fix-login', flavor: 'scoped', root: 'messenger', worktree: `.roost-worktrees/${id}`, by: 'Ana' },
      { type: 'session.status', id, state: 'running', activity: 'Reading src/login.ts' },
    ])).status, 200);
    for (const p of [ana, bob]) {
      await expectText(p, 'session-state', id, 'Running');
      await expectText(p, 'session-activity', id, 'Reading src/login.ts');
      assert.equal(await p.getByTestId(`starting-${id}`).count(), 0, 'the request settles once the session is on the board');
    }

    // Bob prompts it from the chat composer.
    await bob.getByTestId('composer-to').selectOption(id);
    await bob.getByTestId('composer-text').fill('fix the flaky reminder test');
    await bob.getByTestId('composer-text').press('Enter');
    for (const p of [ana, bob]) await expectText(p, 'session-prompts', id, '1');
    assert.equal(await bob.getByTestId('composer-text').inputValue(), '', 'the composer is cleared once the prompt is accepted');

    // The bridge: a turn, then a tool call waiting for approval.
    await bridge(server.url, thread, { type: 'session.turn', id, text: 'Found it — the ticker fires before the store hydrates.' });
    await bridge(server.url, thread, [
      { type: 'session.status', id, state: 'waiting', activity: 'Waiting for approval: Bash' },
      { type: 'session.approval', id, rid: 'a1', tool: 'Bash', digest: 'git push origin roost/fix-login', state: 'pending' },
    ]);
    for (const p of [ana, bob]) {
      await expectText(p, 'session-turns', id, '1');
      await expectText(p, 'session-state', id, 'Waiting');
      await card(p, id).getByTestId('approval-a1').waitFor();
      await p.getByTestId('board-summary').getByText('1 approval waiting').waitFor();
    }

    // Ana allows it from her card, from the keyboard.
    await card(ana, id).getByRole('button', { name: 'Allow Bash in fix-login' }).focus();
    await ana.keyboard.press('Enter');
    // Bob sees it decided, by Ana: no buttons left, the decision in the card's history.
    for (const p of [bob, ana]) {
      await card(p, id).getByTestId('approval-a1').waitFor({ state: 'detached' });
      const d = card(p, id).getByTestId('decided-a1');
      assert.equal(await d.getAttribute('data-state'), 'allowed');
      assert.match((await d.textContent()) ?? '', /allowed by Ana/);
    }
    // Bob's later deny (as if his page had not caught up) changes nothing.
    const late = await fetch(`${server.url}/fleet/${thread}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'roost-name': 'Bob' },
      body: JSON.stringify({ type: 'session.approval', id, rid: 'a1', state: 'denied' }),
    });
    assert.equal(late.status, 409);
    assert.match(((await late.json()) as { message: string }).message, /already allowed by Ana/);

    // Both answer the next request at nearly the same time: Bob's deny leaves first but
    // reaches the server last (held on the way), so Ana's allow is first in the log.
    await bridge(server.url, thread, { type: 'session.approval', id, rid: 'a2', tool: 'Edit', digest: 'src/login.ts', state: 'pending' });
    await card(ana, id).getByTestId('approval-a2').waitFor();
    await card(bob, id).getByTestId('approval-a2').waitFor();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // A card's decision goes through the one decide endpoint (the request is an approval of kind fleet).
    const decision = (u: URL) => /^\/approvals\/fl_[0-9a-f]{24}\/decision$/.test(u.pathname);
    await bob.route(decision, async (route) => {
      if (route.request().method() === 'POST') await held;
      await route.continue();
    });
    await card(bob, id).getByTestId('approval-a2').getByTestId('deny').click();
    await card(ana, id).getByTestId('approval-a2').getByTestId('allow').click();
    await card(ana, id).getByTestId('decided-a2').waitFor({ state: 'attached' });
    release();
    // Bob is told who was first, and his card shows Ana's decision, like hers.
    await card(bob, id).getByRole('alert').getByText('approval "a2" was already allowed by Ana').waitFor();
    await bob.unroute(decision);
    await card(bob, id).getByTestId('decided-a2').waitFor({ state: 'attached' });
    const [da, db] = await Promise.all([card(ana, id).getByTestId('decided-a2').textContent(), card(bob, id).getByTestId('decided-a2').textContent()]);
    assert.equal(da, db, 'both members see the same decision');
    assert.match(da ?? '', /allowed by Ana/);

    // Result, then Ana closes it from the card.
    await bridge(server.url, thread, [
      { type: 'session.status', id, state: 'idle', activity: '' },
      { type: 'session.result', id, summary: '2 files changed, tests green' },
    ]);
    for (const p of [ana, bob]) await expectText(p, 'session-result', id, '2 files changed, tests green');
    await card(ana, id).getByTestId('close').click();
    await card(ana, id).getByTestId('close-confirm').click();
    for (const p of [ana, bob]) {
      await expectText(p, 'session-state', id, 'Ended');
      // An ended session leaves the open cards for the "Ended sessions" list.
      await p.getByText(/Ended sessions \(1\)/).click();
      assert.ok(await card(p, id).isVisible());
      assert.equal(await card(p, id).getByRole('button', { name: /Prompt/ }).count(), 0, 'an ended session cannot be prompted');
    }
    // A late status from the bridge changes nothing: ended is terminal.
    assert.equal((await bridge(server.url, thread, { type: 'session.status', id, state: 'running', activity: 'zombie' })).status, 409);

    // The chat: the same lines, in the same order, for both; prompts are lines of the chat, not copies.
    const want = [
      'Claude: started session “fix-login” on messenger',
      'Bob: asked fix-login: “fix the flaky reminder test”',
      'Claude: [fix-login] Found it — the ticker fires before the store hydrates.',
      'Claude: [fix-login] needs approval to run Bash: git push origin roost/fix-login',
      'Ana: allowed Bash in fix-login',
      'Claude: [fix-login] needs approval to run Edit: src/login.ts',
      'Ana: allowed Edit in fix-login',
      'Claude: [fix-login] ✅ 2 files changed, tests green',
      'Ana: closed session “fix-login”',
    ];
    const [chatA, chatB] = [await waitChat(ana, want.length), await waitChat(bob, want.length)];
    assert.deepEqual(chatA, want);
    assert.deepEqual(chatB, want);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal((await chatOf(ana)).length, want.length, 'the zombie status said nothing');

    // A reload replays the thread from the log: the same chat, the same counts, nothing twice.
    await bob.reload();
    await bob.waitForFunction((t) => window.__roostFleet?.[t]?.connection === 'live', thread);
    assert.deepEqual(await waitChat(bob, want.length), want);
    await expectText(bob, 'session-prompts', id, '1');
    await expectText(bob, 'session-turns', id, '1');
    assert.deepEqual((ana as Page & { errors: string[] }).errors, []);
    assert.deepEqual((bob as Page & { errors: string[] }).errors, []);
  });

  test('the connection state follows the stream, and frames missed meanwhile arrive once', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    const th = 'reconnect';
    const page = await openBoard(anaB, server.url, th, 'Ana');
    await bridge(server.url, th, { type: 'session.spawn', id: 'r1', session: 'steady', flavor: 'plain', root: 'r' });
    await expectText(page, 'session-turns', 'r1', '0');
    // The browser's one live connection is cut and cannot come back for a
    // while (the network refuses it). It is held by whichever tab leads (an
    // earlier test's page, here), so the whole browser's network refuses it.
    const stream = /\/live\?/;
    await anaB.context.route(stream, (route) => route.abort());
    (await server.fleet.board(th)).channel.closeAll('test: cut');
    await page.getByTestId('board-connection').getByText('Reconnecting…').waitFor();
    for (let i = 1; i <= 3; i++) await bridge(server.url, th, { type: 'session.turn', id: 'r1', text: `turn ${i}` }, `r1-turn-${i}`);
    // A retried post with the same idempotency key stores nothing.
    assert.equal((await bridge(server.url, th, { type: 'session.turn', id: 'r1', text: 'turn 3' }, 'r1-turn-3')).json.duplicate, true);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await card(page, 'r1').getByTestId('session-turns').textContent(), '0', 'nothing arrives while the stream is away');
    // The network is back: the page resumes after its last event, and each turn arrives once.
    await anaB.context.unroute(stream);
    await expectText(page, 'session-turns', 'r1', '3');
    await page.getByTestId('board-connection').getByText('Live').waitFor({ timeout: 10_000 });
    assert.deepEqual((await waitChat(page, 4)).filter((l) => l.includes('turn')), ['Claude: [steady] turn 1', 'Claude: [steady] turn 2', 'Claude: [steady] turn 3']);
    const stats = await page.evaluate((t) => window.__roostFleet![t].stats, th);
    assert.ok(stats.reconnects >= 1, 'the page opened a new stream after the cut');
    assert.equal(stats.resets, 0, 'it resumed, it did not start over');
    await page.close();
  });

  test('a server restart: the page says so, comes back by itself and folds nothing twice', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    const port = await freePort();
    const dataDir = tempDir();
    let srv = await inProcess({ port }, dataDir);
    try {
      await bridge(srv.url, 'restart', [
        { type: 'session.spawn', id: 'x1', session: 'survivor', flavor: 'scoped' },
        { type: 'session.turn', id: 'x1', text: 'before the restart' },
      ]);
      const page = await openBoard(anaB, srv.url, 'restart', 'Ana');
      await expectText(page, 'session-turns', 'x1', '1');
      await srv.close();
      await page.getByTestId('board-connection').getByText('Reconnecting…').waitFor();
      srv = await inProcess({ port }, dataDir);
      await bridge(srv.url, 'restart', { type: 'session.turn', id: 'x1', text: 'after the restart' });
      await expectText(page, 'session-turns', 'x1', '2');
      await page.getByTestId('board-connection').getByText('Live').waitFor({ timeout: 10_000 });
      assert.deepEqual(await chatOf(page), ['Claude: started session “survivor”', 'Claude: [survivor] before the restart', 'Claude: [survivor] after the restart']);
      await page.close();
    } finally {
      await srv.close();
    }
  });

  test('bridge presence, and a refused start request that says why, to everyone', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    const th = 'refusals';
    const page = await openBoard(anaB, server.url, th, 'Ana');
    const other = await openBoard(bobB, server.url, th, 'Bob');
    // Nobody runs sessions for this thread yet, and the page says so.
    await page.getByTestId('bridge-presence').getByText('No bridge follows this thread').waitFor();
    // A bridge follows the thread (its stream says `Roost-Client: bridge`): both pages see it come.
    const follow = new AbortController();
    const followed = await fetch(`${server.url}/fleet/${th}/stream`, { headers: { 'roost-client': 'bridge', 'roost-name': 'Claude' }, signal: follow.signal });
    assert.equal(followed.status, 200);
    for (const p of [page, other]) await p.getByTestId('bridge-presence').getByText('Bridge connected').waitFor();
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Name', { exact: true }).fill('outside');
    await page.getByLabel('Root', { exact: true }).fill('../../etc');
    const answered = page.waitForResponse((r) => r.url().endsWith(`/fleet/${th}/requests`));
    await page.getByTestId('start-submit').click();
    const { id } = (await (await answered).json()) as { id: string };
    await page.getByTestId(`starting-${id}`).getByText('waiting for the workstation bridge').waitFor();
    const r = await fetch(`${server.url}/fleet/${th}/requests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'roost-name': 'Claude' },
      body: JSON.stringify({ type: 'request.refused', id, reason: 'the root is outside the bridge’s root' }),
    });
    assert.equal(r.status, 200);
    for (const p of [page, other]) await p.getByTestId(`starting-${id}`).getByText('The bridge did not start “outside”: the root is outside the bridge’s root').waitFor();
    await other.close();
    await page.getByRole('button', { name: 'Dismiss “outside”' }).click();
    await page.getByTestId(`starting-${id}`).waitFor({ state: 'detached' });
    // The bridge goes away: the page says so again.
    follow.abort();
    await page.getByTestId('bridge-presence').getByText('No bridge follows this thread').waitFor();
    await page.close();
  });

  test('a long thread starts from its snapshot: the board is whole, the chat says older lines are not shown', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    const th = 'long';
    await bridge(server.url, th, { type: 'session.spawn', id: 'l1', session: 'marathon', flavor: 'plain' });
    const turns = 5_200;
    for (let i = 0; i < turns; i += 200) {
      const batch = Array.from({ length: Math.min(200, turns - i) }, (_, k) => ({ type: 'session.turn', id: 'l1', text: `turn ${i + k + 1}` }));
      assert.equal((await bridge(server.url, th, batch)).status, 200);
    }
    const page = await openBoard(anaB, server.url, th, 'Ana');
    await expectText(page, 'session-turns', 'l1', String(turns));
    await page.getByText('Earlier messages are not shown.').waitFor();
    assert.equal(await page.getByTestId('chat-line').count(), 0);
    await bridge(server.url, th, { type: 'session.turn', id: 'l1', text: 'one more' });
    assert.deepEqual(await waitChat(page, 1), ['Claude: [marathon] one more']);
    await expectText(page, 'session-turns', 'l1', String(turns + 1));
    await page.close();
  });

  test('a screenshot of a busy board (docs/img/board.png)', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    const th = 'payments';
    await bridge(server.url, th, [
      { type: 'session.spawn', id: 'refunds', session: 'refund-retries', flavor: 'scoped', root: '~/src/payments', worktree: '.roost-worktrees/refunds', by: 'Ana' },
      { type: 'session.status', id: 'refunds', state: 'running', activity: 'npm test -- refunds' },
      { type: 'session.spawn', id: 'ledger', session: 'ledger-cleanup', flavor: 'plain', root: '~/src/ledger', by: 'Bob' },
      { type: 'session.spawn', id: 'docs', session: 'api-docs', flavor: 'scoped', root: '~/src/payments', worktree: '.roost-worktrees/docs', by: 'Bob' },
    ]);
    const post = (name: string, e: unknown) =>
      fetch(`${server.url}/fleet/${th}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': name }, body: JSON.stringify(e) });
    await post('Ana', { type: 'session.prompt', id: 'refunds', text: 'retry failed refunds with backoff, and add a test' });
    await bridge(server.url, th, [
      { type: 'session.turn', id: 'refunds', text: 'Added a retry queue with exponential backoff (3 tries). Running the refunds tests now.' },
      { type: 'session.approval', id: 'refunds', rid: 'p1', tool: 'Bash', digest: 'npm test -- refunds', state: 'pending' },
    ]);
    await post('Bob', { type: 'session.approval', id: 'refunds', rid: 'p1', state: 'allowed' });
    await post('Bob', { type: 'session.prompt', id: 'ledger', text: 'drop the unused ledger_v1 tables' });
    await bridge(server.url, th, [
      { type: 'session.turn', id: 'ledger', text: 'Found 3 unused tables. I will write a migration that drops them.' },
      { type: 'session.status', id: 'ledger', state: 'waiting', activity: 'Waiting for approval: Bash' },
      { type: 'session.approval', id: 'ledger', rid: 'q1', tool: 'Bash', digest: 'psql -f migrations/042_drop_ledger_v1.sql', state: 'pending' },
      { type: 'session.status', id: 'docs', state: 'idle', activity: '' },
      { type: 'session.result', id: 'docs', summary: 'OpenAPI spec regenerated; 12 endpoints documented' },
      { type: 'session.spawn', id: 'old', session: 'flaky-ci', flavor: 'scoped', root: '~/src/payments', by: 'Ana' },
      { type: 'session.end', id: 'old', reason: 'closed' },
    ]);
    // The workstation bridge that runs these sessions follows the thread.
    const follow = new AbortController();
    await fetch(`${server.url}/fleet/${th}/stream`, { headers: { 'roost-client': 'bridge', 'roost-name': 'Claude' }, signal: follow.signal });
    t.after(() => follow.abort());
    const page = await openBoard(anaB, server.url, th, 'Ana');
    await page.getByTestId('bridge-presence').getByText('Bridge connected').waitFor();
    await card(page, 'ledger').getByTestId('approval-q1').waitFor();
    await waitChat(page, 10);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const dir = screenshotDir(PACKAGE_ROOT);
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, 'board.png') });
    // The nav counts it among the approvals waiting (one approvals fold: every kind, every thread); the inbox
    // lists it as an approval of kind fleet, answerable there through the one decide endpoint.
    const waiting = ((await (await fetch(`${server.url}/approvals`)).json()) as { pending: { kind: string; scope: { rid?: string } }[] }).pending;
    assert.ok(waiting.some((a) => a.kind === 'fleet' && a.scope.rid === 'q1'), 'the board request is in the approvals');
    await until('the nav counts every pending approval', async () => (await page.getByTestId('nav-pending').innerText()) === String(waiting.length), 5000);
    await page.getByRole('link', { name: /^Approvals/ }).click();
    const item = page.locator('[data-testid="inbox-item"][data-kind="fleet"]').filter({ hasText: 'psql -f migrations/042_drop_ledger_v1.sql' });
    await item.waitFor();
    const viaOne = page.waitForRequest((r) => r.method() === 'POST' && /\/approvals\/fl_[0-9a-f]{24}\/decision/.test(r.url()));
    await item.getByRole('button', { name: 'Deny Bash for ledger-cleanup' }).click();
    await viaOne;
    await item.waitFor({ state: 'detached' });
    const r = await fetch(`${server.url}/fleet/${th}`);
    const st = (await r.json()) as { sessions: { id: string; approvals: { rid: string; state: string; by: string }[] }[] };
    assert.deepEqual(st.sessions.find((s) => s.id === 'ledger')!.approvals, [{ rid: 'q1', tool: 'Bash', digest: 'psql -f migrations/042_drop_ledger_v1.sql', state: 'denied', by: 'Ana' }]);
    await page.close();
  });
  // Last: the sign-in cookies it sets are per host, not per port.
  test('shared mode: the board names the signed-in member, ignores a typed label, and says when it is closed to you', async (t: TestContext) => {
    if (!need(t, HAVE, WHY)) return;
    const PASSWORD = 'correct horse battery';
    const store = new SqliteStore({ path: join(tempDir(), 'roost.db') });
    await createOwner(store, 'ann', PASSWORD, 'Ann');
    const shared = await startRoost(store, { port: 0 });
    try {
      const base = shared.url;
      const annReq = anaB.context.request;
      assert.equal((await annReq.post(base + '/auth/login', { data: { login: 'ann', password: PASSWORD }, headers: { origin: base } })).status(), 200);
      const made = await annReq.post(base + '/users', { data: { login: 'bob', name: 'Bob', password: PASSWORD }, headers: { origin: base } });
      assert.equal(made.status(), 201, await made.text());
      const tok = await annReq.post(base + '/tokens', { data: { label: 'bridge' }, headers: { origin: base } });
      assert.equal(tok.status(), 201, await tok.text());
      const secret = ((await tok.json()) as { secret: string }).secret;

      // Bob signs in; he is a member of no project yet: the board says it is closed to him, and why.
      const bobReq = bobB.context.request;
      assert.equal((await bobReq.post(base + '/auth/login', { data: { login: 'bob', password: PASSWORD }, headers: { origin: base } })).status(), 200);
      // A label typed in an earlier local session is not who he is now.
      const bob = await bobB.context.newPage();
      await bob.goto(`${base}/fleet/default`);
      await bob.evaluate(() => localStorage.setItem('roost.name', 'Mallory'));
      await bob.getByTestId('board-denied').waitFor();
      assert.match((await bob.getByTestId('board-denied').textContent()) ?? '', /not a member of project "default"/);
      // Ann makes him an editor; the board opens to him by itself (the page retries the stream).
      const added = await annReq.put(base + '/projects/default/members/bob', { data: { role: 'editor' }, headers: { origin: base } });
      assert.ok(added.ok(), await added.text());
      await bob.waitForFunction(() => window.__roostFleet?.default?.connection === 'live', null, { timeout: 15_000 });
      await bob.getByTestId('board-denied').waitFor({ state: 'detached' });
      await bob.getByTestId('signed-in').getByText('Bob').waitFor();
      assert.equal(await bob.getByLabel('Your name').count(), 0, 'nothing to type in shared mode');

      // The bridge's token spawns a session; Bob prompts it from the page.
      const spawned = await fetch(`${base}/fleet/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ type: 'session.spawn', id: 'sh1', session: 'shared-one', flavor: 'scoped' }),
      });
      assert.equal(spawned.status, 200, await spawned.text());
      await card(bob, 'sh1').waitFor();
      await bob.getByTestId('composer-text').fill('hello from Bob');
      await bob.getByTestId('composer-send').click();
      await expectText(bob, 'session-prompts', 'sh1', '1');
      assert.deepEqual((await waitChat(bob, 2)).slice(1), ['Bob: asked shared-one: “hello from Bob”']);
      await bob.close();
    } finally {
      await shared.close();
    }
  });
});
