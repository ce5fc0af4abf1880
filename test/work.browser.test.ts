// The Work contract's acceptance (spec live-work.md) as one run in headless
// Chromium: two people (an owner and an editor, real accounts, real sign-in
// cookies) in two browser contexts, and a Space run by the real `roost
// bridge` (a child process, with the owner's token) that runs the real Claude
// Code CLI against the scripted model stand-in for every command. A server
// restart in the middle (the bridge reconnects and reconciles on its own),
// then the editor's demotion and removal. Every step is asserted in both
// browsers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { child, tempDir, type ChildServer } from './support/server.js';
import { chromiumPath, CHROMIUM_ARGS } from './support/browser.js';
import { need, screenshotDir } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { SqliteStore } from '../src/storage/index.js';
import { createOwner } from '../src/cli/owner.js';
import { CLAUDE_BIN, claudeAvailable, claudeSetup } from './support/claude.js';
import { and, askedWithBash as asked, hasResult, modelStandin, not, step, text } from './support/model-standin.js';
import { bridgeBuilt, killBridges, startBridge, type BridgeProc } from './support/bridge.js';
import { until } from './support/until.js';

const PASSWORD = 'correct horse battery';
after(killBridges);

async function signIn(ctx: BrowserContext, base: string, login: string): Promise<Page> {
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  (page as any).errors = errors;
  const r = await page.request.post(base + '/auth/login', { data: { login, password: PASSWORD }, headers: { origin: base } });
  assert.equal(r.status(), 200, await r.text());
  await page.goto(base + '/work');
  try {
    await page.getByTestId('work-conn').filter({ hasText: 'Live' }).waitFor({ timeout: 10_000 });
  } catch (e) {
    throw new Error(`${login}'s Work view is not live: ${(await page.locator('main').innerText()).slice(0, 400)}`, { cause: e });
  }
  return page;
}

const transcript = (p: Page) => p.getByTestId('transcript').locator('li.msg');
/** Each message's words (its time left out: the times are checked on their own). */
async function texts(p: Page): Promise<string[]> {
  return transcript(p).evaluateAll((els) =>
    els.map((e) => {
      const c = e.cloneNode(true) as HTMLElement;
      c.querySelectorAll('time').forEach((t) => t.remove());
      return (c.textContent ?? '').trim();
    }),
  );
}
async function within(ms: number, f: () => Promise<unknown>): Promise<number> {
  const t0 = Date.now();
  await f();
  const took = Date.now() - t0;
  assert.ok(took <= ms, `took ${took} ms, more than ${ms}`);
  return took;
}

test('Work acceptance: two people, a Space run by the real bridge and Claude Code, a restart, a demotion and a removal', { timeout: 150_000 }, async (t) => {
  const exe = chromiumPath();
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const t0 = Date.now();
  const dataDir = tempDir();
  {
    const store = new SqliteStore({ path: join(dataDir, 'roost.db') });
    await createOwner(store, 'olive', PASSWORD, 'Olive');
    await store.close();
  }
  // What the model says to each command (the last ask decides; the first command runs a tool that needs approval).
  const model = await modelStandin([
    step(
      { content: [{ type: 'text', text: 'Running the login tests first.' }, { type: 'tool_use', id: 'toolu_login', name: 'Bash', input: { command: 'echo "12 tests pass"', description: 'run the login tests' } }] },
      and(asked('fix the login redirect'), not(hasResult('toolu_login'))),
    ),
    step(text('Login redirect fixed; 12 tests pass.'), hasResult('toolu_login')),
    step(text('Test added.'), asked('then add a test')),
    step(text('Changelog updated.'), asked('then update the changelog')),
    step(text('README written.'), asked('write the README')),
    step(text('Summary: login fixed, a test, the changelog and the README.'), asked('summarize')),
  ]);
  let srv: ChildServer = await child({ dataDir });
  const base = srv.url;
  let browser: Browser | null = null;
  let bridge: BridgeProc | null = null;
  try {
    browser = await chromium.launch({ executablePath: exe!, headless: true, args: CHROMIUM_ARGS });
    const ownerCtx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const editorCtx = await browser.newContext({ viewport: { width: 1400, height: 900 } });

    // 1. Two users join one project as owner and editor.
    const admin = ownerCtx.request;
    assert.equal((await admin.post(base + '/auth/login', { data: { login: 'olive', password: PASSWORD } })).status(), 200);
    const made = await admin.post(base + '/users', { data: { login: 'eddie', name: 'Eddie', password: PASSWORD, project: 'default', role: 'editor' }, headers: { origin: base } });
    assert.equal(made.status(), 201, await made.text());
    const eddieUid = (await made.json()).user.uid;
    const owner = await signIn(ownerCtx, base, 'olive');
    const editor = await signIn(editorCtx, base, 'eddie');
    await owner.getByTestId('work-role').filter({ hasText: 'owner' }).waitFor();
    await editor.getByTestId('work-role').filter({ hasText: 'editor' }).waitFor();
    for (const p of [owner, editor]) {
      await p.getByTestId('presence').getByText('Olive').waitFor();
      await p.getByTestId('presence').getByText('Eddie').waitFor();
    }
    /** The owner acts on the fleet board as any member would (the board view and the approvals inbox post the same). */
    const onBoard = async (path: string, body: unknown) => {
      const r = await admin.post(base + '/fleet/default' + path, { data: body, headers: { origin: base, 'roost-project': 'default' } });
      assert.equal(r.status(), 200, await r.text());
    };
    const boardSession = async (id: string) =>
      ((await (await admin.get(base + '/fleet/default', { headers: { 'roost-project': 'default' } })).json())).sessions.find((s: any) => s.id === id);
    const snapshot = async () => (await (await owner.request.get(base + '/api/v2/snapshot?project=default')).json());

    // 2. The owner runs her bridge (her token) and contributes its Space from the Work view.
    const tok = await admin.post(base + '/tokens', { data: { project: 'default', role: 'editor', label: 'laptop bridge' }, headers: { origin: base } });
    assert.equal(tok.status(), 201, await tok.text());
    const cs = claudeSetup('shop');
    bridge = await startBridge(['--server', base, '--root', cs.project, '--project', 'default', '--space', "Olive's laptop", '--claude', CLAUDE_BIN, '--window', '60s'], {
      HOME: cs.home,
      ROOST_TOKEN: (await tok.json()).secret,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    });
    const spaces = ((await (await admin.get(base + '/api/v2/spaces')).json())).spaces;
    assert.deepEqual(spaces.map((x: any) => [x.name, x.projects]), [["Olive's laptop", []]], 'the bridge registered her Space; nobody contributed it yet');
    const spaceId: string = spaces[0].id;
    await owner.getByTestId(`contribute-${spaceId}`).click();
    for (const p of [owner, editor]) await p.getByTestId(`space-${spaceId}`).and(p.locator('[data-contributed="true"]')).waitFor();
    await bridge.waitFor("reported the Space's 0 agent(s) to default");

    // The editor is reading a human conversation the owner made.
    // Made in the page (no prompt()): the "+" opens a title field in the rail.
    await owner.evaluate(() => (window.prompt = () => { throw new Error('prompt() is not used'); }));
    await owner.getByTestId('new-conversation').click();
    await owner.getByTestId('new-conversation-title').fill('planning');
    await owner.getByTestId('new-conversation-title').press('Enter');
    await owner.getByTestId('new-conversation-form').waitFor({ state: 'detached' });
    const planning = editor.locator('[data-chat-title="planning"]');
    await planning.click();
    await editor.getByTestId('transcript-title').filter({ hasText: '# planning' }).waitFor();
    await editor.getByTestId('composer').fill('I will watch the agent');
    await editor.getByTestId('send').click();
    await owner.locator('[data-chat-title="planning"]').click();
    await owner.getByText('I will watch the agent').waitFor();

    // 3. A new agent (the owner starts a Claude Code session on her Space from the board) appears as the same
    //    Work chat in both browsers within two seconds, without refresh.
    const anyAgent = (p: Page) => p.locator(`[data-testid^="agent-${spaceId}:"]`);
    const asked3 = Date.now();
    await onBoard('/requests', { type: 'request.start', id: 'fix-login', session: 'fix-login', flavor: 'plain' });
    await Promise.all([anyAgent(owner).waitFor({ timeout: 5000 }), anyAgent(editor).waitFor({ timeout: 5000 })]);
    const appeared = Date.now() - asked3;
    assert.ok(appeared <= 2000, `the agent took ${appeared} ms to show in both browsers`);
    t.diagnostic(`a new agent showed in both browsers ${appeared} ms after the session was asked for`);
    const agent0 = (await snapshot()).agents.find((a: any) => a.space === spaceId);
    const agentId: string = agent0.id;
    assert.equal(agent0.origin, 'bridge');
    assert.match(agentId, new RegExp(`^${spaceId}:[0-9a-f-]{36}$`), "keyed by the Space and Claude Code's session id");
    const agentRow = (p: Page) => p.getByTestId(`agent-${agentId}`);
    await editor.getByTestId('transcript-title').filter({ hasText: '# planning' }).waitFor();
    assert.equal(await editor.locator('.rail-item.on').getAttribute('data-chat-title'), 'planning', "the new agent did not steal the editor's selection");
    assert.equal(await agentRow(editor).locator('[data-testid=unread]').count(), 1, 'the new chat is marked unread');

    // 4. Messages, queue order, lifecycle and final result match in both browsers; every command runs in the real session.
    await editor.getByTestId(`agent-${agentId}`).click();
    await owner.getByTestId(`agent-${agentId}`).click();
    await editor.getByTestId('agent-mode').filter({ hasText: 'plain' }).waitFor();
    const say = async (p: Page, words: string) => {
      await p.getByTestId('composer').fill(words);
      await p.getByTestId('send').click();
      await p.getByTestId('transcript').getByText(words).first().waitFor();
    };
    await say(editor, 'fix the login redirect');
    for (const p of [owner, editor]) {
      await p.getByTestId('running').filter({ hasText: 'fix the login redirect' }).waitFor({ timeout: 15_000 });
      await p.getByTestId('terminal').filter({ hasText: 'echo "12 tests pass"' }).waitFor({ timeout: 15_000 });
      await p.getByTestId('agent-blocked').filter({ hasText: 'needs approval: Bash' }).waitFor({ timeout: 15_000 });
    }
    // While it waits for a decision, two more commands queue behind it, in the order they were sent.
    await say(editor, 'then add a test');
    await say(owner, 'then update the changelog');
    const queueOf = (p: Page) => p.getByTestId('queue').locator('.q-text').allTextContents();
    await owner.getByTestId('queue').getByText('then update the changelog').waitFor();
    await editor.getByTestId('queue').getByText('then update the changelog').waitFor();
    assert.deepEqual(await queueOf(owner), ['then add a test', 'then update the changelog']);
    assert.deepEqual(await queueOf(editor), await queueOf(owner));
    // Both see the request on the agent, with Allow / Deny (owner and editor may decide); a viewer sees it read-only.
    for (const p of [owner, editor]) {
      const box = p.getByTestId('work-approval');
      await box.getByTestId('approval-tool').filter({ hasText: 'Bash' }).waitFor({ timeout: 10_000 });
      await box.getByTestId('approval-digest').filter({ hasText: '$ echo "12 tests pass"' }).waitFor();
      await box.getByTestId('approval-who').filter({ hasText: 'Editors and owners of' }).waitFor();
      assert.equal(await box.getByTestId('approval-allow').isEnabled(), true);
      assert.equal(await box.locator('.ask').getAttribute('data-source'), 'approvals', "what a decider sees is the request as the server holds it (the one approvals fold, asked from the board's request)");
    }
    await owner.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'work.png') }); // docs/img/work.png with ROOST_SCREENSHOTS=docs
    const rid = await owner.getByTestId('work-approval').getAttribute('data-rid');
    assert.equal((await boardSession('fix-login'))?.approvals.find((a: any) => a.rid === rid)?.state, 'pending', 'it is the request waiting on the board');
    const viewerMade = await admin.post(base + '/users', { data: { login: 'vera', name: 'Vera', password: PASSWORD, project: 'default', role: 'viewer' }, headers: { origin: base } });
    assert.equal(viewerMade.status(), 201, await viewerMade.text());
    const viewerCtx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const viewer = await signIn(viewerCtx, base, 'vera');
    await viewer.getByTestId(`agent-${agentId}`).click();
    await viewer.getByTestId('work-approval').getByTestId('approval-readonly').filter({ hasText: 'You are a viewer' }).waitFor({ timeout: 10_000 });
    assert.equal(await viewer.getByTestId('approval-allow').count(), 0, 'no buttons for a viewer');
    const forged = await viewer.evaluate(
      async (r) => (await fetch('/fleet/default?project=default', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'session.approval', id: 'fix-login', rid: r, state: 'allowed' }) })).status,
      rid,
    );
    assert.equal(forged, 403, "the server refuses a viewer's decision");
    assert.deepEqual((viewer as any).errors, [], 'no page errors');
    await viewerCtx.close();
    // The owner clicks Allow in the Work view; the editor's browser sees the execution blocked until then, and resumed after.
    // Through the one decide endpoint of the approvals model (the request is an approval of kind fleet).
    const viaOne = owner.waitForRequest((r) => r.method() === 'POST' && /\/approvals\/fl_[0-9a-f]{24}\/decision/.test(r.url()));
    await owner.getByTestId('approval-allow').click();
    await viaOne;
    await editor.getByTestId('work-approval').waitFor({ state: 'detached', timeout: 10_000 });
    await editor.getByTestId('agent-blocked').waitFor({ state: 'detached' });
    const decided = (await boardSession('fix-login'))?.approvals.find((a: any) => a.rid === rid);
    assert.deepEqual([decided?.state, decided?.by], ['allowed', 'Olive'], 'decided on the board, by the owner, from the Work view');
    const one = await owner.evaluate(
      async (r) => ((await (await fetch('/approvals?recent=100&project=default')).json()) as { recent: any[] }).recent.find((a) => a.kind === 'fleet' && a.scope.rid === r),
      rid,
    );
    assert.deepEqual([one?.status, one?.decidedBy, one?.scope?.session], ['allowed', 'Olive', 'fix-login'], 'decided in the one approvals model, the decider from the transport');
    const answers = ['Login redirect fixed; 12 tests pass.', 'Test added.', 'Changelog updated.'];
    for (const p of [owner, editor]) {
      for (const r of answers) await p.getByTestId('transcript').getByText(r).waitFor({ timeout: 15_000 });
      await p.getByTestId('transcript').getByText('Running the login tests first.').waitFor();
      await p.getByTestId('result').filter({ hasText: 'Changelog updated.' }).waitFor();
      await p.getByTestId('agent-state').filter({ hasText: 'idle' }).waitFor();
    }
    assert.equal(await owner.getByTestId('queue').locator('.q-text').count(), 0, 'the queue is empty');
    const order = await texts(owner);
    const at = answers.map((r) => order.findIndex((x) => x.includes(r)));
    assert.ok(at[0] >= 0 && at[0] < at[1] && at[1] < at[2], `results in queue order: ${JSON.stringify(order)}`);
    const transcriptBefore = await texts(owner);
    assert.deepEqual(await texts(editor), transcriptBefore, 'both browsers show the same transcript');
    assert.ok(transcriptBefore.some((x) => x.startsWith('Eddie') && x.includes('fix the login redirect')));
    assert.ok(transcriptBefore.some((x) => x.includes('blocked: needs approval: Bash')), 'the transcript keeps that it was blocked');
    const s4 = await snapshot();
    const ex = (words: string) => s4.executions.find((x: any) => s4.commands.find((c: any) => c.id === x.command)?.text === words);
    assert.ok(ex('fix the login redirect').endedAt <= ex('then add a test').startedAt && ex('then add a test').endedAt <= ex('then update the changelog').startedAt, 'one at a time, FIFO');

    // 5. Moving the session (its process ends and comes back elsewhere) updates the chat without replacing it.
    const pane0 = s4.agents.find((a: any) => a.id === agentId).pane;
    const pid0 = Number(/^pid (\d+)$/.exec(pane0)?.[1]);
    assert.ok(pid0 > 0, `the pane is the process: ${pane0}`);
    process.kill(pid0, 'SIGKILL');
    await until('the board to see the process gone', async () => (await boardSession('fix-login'))?.state === 'dead', 10_000);
    await say(editor, 'write the README');
    for (const p of [owner, editor]) {
      await p.getByTestId('result').filter({ hasText: 'README written.' }).waitFor({ timeout: 15_000 });
      await p.getByTestId('transcript').getByText(new RegExp(`moved from ${pane0} to pid \\d+`)).waitFor();
      await p.getByTestId('agent-pane').filter({ hasNotText: pane0 }).filter({ hasText: /pid \d+/ }).waitFor();
      assert.equal(await anyAgent(p).count(), 1, 'one agent chat, not a new one');
    }
    const readmeReq = model.requests.find(asked('write the README'))!;
    assert.ok(JSON.stringify(readmeReq.body.messages).includes('Changelog updated.'), 'the new process resumed the same Claude Code conversation');
    const beforeRestart = await texts(owner);
    assert.deepEqual(await texts(editor), beforeRestart);

    // 6. Refresh both browsers, restart the server; the bridge reconnects and reconciles on its own:
    //    nothing duplicates, history remains, and the next command runs.
    const snapBefore = await snapshot();
    const reports = bridge.log().split("reported the Space's 1 agent(s)").length - 1;
    await srv.stop();
    srv = await child({ dataDir, port: srv.port });
    for (const p of [owner, editor]) {
      await p.reload();
      await p.getByTestId('work-conn').filter({ hasText: 'Live' }).waitFor({ timeout: 10_000 });
      await p.getByTestId(`agent-${agentId}`).click();
      await p.getByTestId('result').filter({ hasText: 'README written.' }).waitFor();
      assert.deepEqual(await texts(p), beforeRestart, 'the same history after refresh and restart');
      assert.equal(await anyAgent(p).count(), 1);
    }
    await bridge.waitFor("reported the Space's 1 agent(s)", reports + 1, 20_000);
    const reconciled = await snapshot();
    assert.equal(reconciled.position, snapBefore.position, "the bridge's reconciliation found nothing to change: nothing stored twice");
    await say(editor, 'summarize what changed');
    for (const p of [owner, editor]) await p.getByTestId('result').filter({ hasText: 'Summary: login fixed' }).waitFor({ timeout: 15_000 });
    const snapAfter = await snapshot();
    assert.equal(snapAfter.agents.length, snapBefore.agents.length, 'no agent twice');
    assert.equal(snapAfter.results.length, snapBefore.results.length + 1, 'no result twice, one new');
    assert.equal(snapAfter.commands.length, snapBefore.commands.length + 1, 'only the new command');
    assert.equal(snapAfter.conversations.length, snapBefore.conversations.length);
    assert.equal(model.requests.filter(asked('fix the login redirect')).length, 2, 'the first command reached the model once (and once more with its tool result)');

    // 5, continued. Ending the session (the owner closes it on the board) ends the chat's agent, not the chat.
    const lenBeforeEnd = (await texts(owner)).length;
    await onBoard('', { type: 'session.end', id: 'fix-login' });
    for (const p of [owner, editor]) {
      await p.getByTestId('agent-state').filter({ hasText: 'ended' }).waitFor({ timeout: 10_000 });
      await p.getByTestId('transcript').getByText('ended: closed on the board').waitFor();
      assert.equal(await anyAgent(p).count(), 1, 'one agent chat, not a new one');
      assert.equal(await transcript(p).count(), lenBeforeEnd + 1, 'history kept');
    }
    assert.equal(await editor.getByTestId('composer').isDisabled(), true, 'an ended agent takes no command');
    await bridge.waitFor('closed fix-login');

    // 8. General Chat stays private and links to project work without leaking private context.
    await owner.getByTestId('chat-general').click();
    for (const words of ['Note to self: the staging password is hunter2', 'Please write a README for the login service']) {
      await owner.getByTestId('composer').fill(words);
      await owner.getByTestId('send').click();
      await owner.getByTestId('transcript').getByText(words).waitFor();
    }
    await owner.getByTestId('start-work-2').click();
    // Its only agent has ended: the page says no agent can take it; the request alone can still move.
    await owner.getByTestId('start-none').waitFor();
    await owner.getByTestId('start-copy').click();
    await owner.getByTestId('general-links').getByText('Please write a README').waitFor();
    const linked = editor.locator('[data-chat-title^="Please write a README"]');
    await linked.waitFor();
    await linked.click();
    assert.deepEqual(await texts(editor), ['OlivePlease write a README for the login service']);
    // Each message shows when it was written (HH:MM today), its full date on hover.
    const time = editor.getByTestId('transcript').getByTestId('msg-time').first();
    assert.match(await time.innerText(), /^\d\d:\d\d$/);
    assert.ok(Math.abs(Date.parse((await time.getAttribute('datetime'))!) - Date.now()) < 10 * 60_000, 'the time is the message\'s');
    assert.equal(await editor.getByText('hunter2').count(), 0);
    await editor.getByTestId('chat-general').click();
    assert.equal(await editor.getByText('hunter2').count(), 0, "the editor's General Chat is their own");
    const editorView = await (await editor.request.get(base + '/api/v2/snapshot?project=default')).text();
    assert.ok(!editorView.includes('hunter2'));

    // 7. Change the editor to viewer, then remove them: permissions and live streams change at once; attribution stays.
    await editor.getByTestId('chat-general').click();
    await editor.locator('[data-chat-title="planning"]').click();
    assert.equal(await editor.getByTestId('composer').isDisabled(), false);
    const demote = await admin.put(base + `/projects/default/members/${eddieUid}`, { data: { role: 'viewer' }, headers: { origin: base } });
    assert.equal(demote.status(), 200, await demote.text());
    t.diagnostic(`the demotion reached the editor's page in ${await within(2000, () => editor.getByTestId('work-role').filter({ hasText: 'viewer' }).waitFor({ timeout: 2000 }))} ms`);
    await editor.getByTestId('composer-blocked').filter({ hasText: 'Viewers can read' }).waitFor();
    assert.equal(await editor.getByTestId('composer').isDisabled(), true);
    const tryWrite = await editor.evaluate(async () => {
      const r = await fetch('/api/v2/conversations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'default', title: 'sneak' }) });
      return r.status;
    });
    assert.equal(tryWrite, 403);
    const removed = await admin.delete(base + `/projects/default/members/${eddieUid}`, { headers: { origin: base } });
    assert.equal(removed.status(), 200, await removed.text());
    t.diagnostic(`the removal closed the editor's stream in ${await within(3000, () => editor.getByTestId('work-revoked').waitFor({ timeout: 3000 }))} ms`);
    await owner.getByTestId('presence').getByText('Eddie').waitFor({ state: 'detached' });
    assert.equal((await editor.request.get(base + '/api/v2/snapshot?project=default')).status(), 403);
    await owner.getByTestId(`agent-${agentId}`).click();
    const ownerTexts = await texts(owner);
    assert.ok(ownerTexts.some((x) => x.startsWith('Eddie') && x.includes('fix the login redirect')), 'history keeps Eddie as the author');
    // General Chat is usable before any project: a new account with none.
    const nina = await admin.post(base + '/users', { data: { login: 'nina', name: 'Nina', password: PASSWORD }, headers: { origin: base } });
    assert.equal(nina.status(), 201);
    const ninaCtx = await browser.newContext();
    const np = await ninaCtx.newPage();
    assert.equal((await np.request.post(base + '/auth/login', { data: { login: 'nina', password: PASSWORD } })).status(), 200);
    await np.goto(base + '/work');
    await np.getByText('You are in no project yet').waitFor();
    await np.getByTestId('chat-general').click();
    await np.getByTestId('composer').fill('first thoughts, before any project');
    await np.getByTestId('send').click();
    await np.getByTestId('transcript').getByText('first thoughts, before any project').waitFor();
    assert.equal(await np.getByText('hunter2').count(), 0);
    for (const p of [owner, editor]) assert.deepEqual((p as any).errors, [], 'no page errors');
    t.diagnostic(`the acceptance run took ${Date.now() - t0} ms`);
  } catch (e) {
    if (bridge) console.error(`--- the bridge said:\n${bridge.log()}`);
    throw e;
  } finally {
    await bridge?.stop();
    await browser?.close();
    await srv.stop();
    await model.close();
  }
});
