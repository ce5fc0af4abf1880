// The Work contract's acceptance (spec live-work.md) as one run in headless
// Chromium: two people (an owner and an editor, real accounts, real
// sign-in cookies) in two browser contexts, a Space, a server restart in the
// middle, then the editor's demotion and removal. The Space is driven over
// HTTP with the owner's token exactly as a bridge would (register, full
// snapshot, command feed, execution reports, terminal): the workstation
// bridge does not speak the Work API yet (see docs/work.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { child, tempDir, type ChildServer } from './support/server.js';
import { chromiumPath, CHROMIUM_ARGS } from './support/browser.js';
import { need } from './support/env.js';
import { openSse, type SseReader } from './support/sse.js';
import { SqliteStore } from '../src/storage/index.js';
import { createOwner } from '../src/server/identity.js';
import { Bridge, DEFAULT_APPROVALS } from '../src/bridge/index.js';
import { CLAUDE_BIN, claudeAvailable, claudeSetup } from './support/claude.js';
import { modelStandin, step, text } from './support/model-standin.js';

const PASSWORD = 'correct horse battery';

/** A Space as a bridge drives it: a token, a registration, observations, the command feed, executions. */
class Space {
  id = '';
  feed: SseReader | null = null;
  constructor(
    public base: string,
    public token: string,
  ) {}
  async call(method: string, path: string, body?: unknown, key?: string) {
    const r = await fetch(this.base + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...(key ? { 'idempotency-key': key } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json: any = await r.json().catch(() => null);
    assert.ok(r.ok, `${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  }
  async register(name: string) {
    this.id = (await this.call('POST', '/api/v2/spaces', { name }, 'register-once')).id;
  }
  report(agents: unknown[], full = false) {
    return this.call('POST', `/api/v2/spaces/${this.id}/agents`, { full, agents });
  }
  exec(command: string, event: string, extra: Record<string, unknown> = {}) {
    return this.call('POST', `/api/v2/spaces/${this.id}/executions`, { command, event, ...extra }, `${command}:${event}`);
  }
  async connect() {
    this.feed = await openSse(`${this.base}/api/v2/spaces/${this.id}/commands`, { authorization: `Bearer ${this.token}` });
  }
  /** The next due command set with `n` commands. */
  async due(n: number): Promise<any[]> {
    const f = await this.feed!.waitFor((x) => x.event === 'commands' && JSON.parse(x.data).commands.length === n, 5000, Math.max(0, this.feed!.frames.length - 1));
    return JSON.parse(f.data).commands;
  }
}

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

const rail = (p: Page) => p.getByTestId('work-rail');
const transcript = (p: Page) => p.getByTestId('transcript').locator('li.msg');
async function texts(p: Page): Promise<string[]> {
  return transcript(p).evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));
}
async function within(ms: number, f: () => Promise<unknown>): Promise<number> {
  const t0 = Date.now();
  await f();
  const took = Date.now() - t0;
  assert.ok(took <= ms, `took ${took} ms, more than ${ms}`);
  return took;
}

test('Work acceptance: two people, one Space, a restart, a demotion and a removal', { timeout: 120_000 }, async (t) => {
  const exe = chromiumPath();
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  const dataDir = tempDir();
  {
    const store = new SqliteStore({ path: join(dataDir, 'roost.db') });
    await createOwner(store, 'olive', PASSWORD, 'Olive');
    await store.close();
  }
  let srv: ChildServer = await child({ dataDir });
  const base = srv.url;
  let browser: Browser | null = null;
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

    // 2. The owner contributes one Space (registered by the "bridge" with her token).
    const tok = await admin.post(base + '/tokens', { data: { project: 'default', role: 'editor', label: 'laptop bridge' }, headers: { origin: base } });
    assert.equal(tok.status(), 201, await tok.text());
    const space = new Space(base, (await tok.json()).secret);
    await space.register("Olive's laptop");
    await owner.getByTestId(`contribute-${space.id}`).click();
    for (const p of [owner, editor]) await p.getByTestId(`space-${space.id}`).and(p.locator('[data-contributed="true"]')).waitFor();
    await space.connect();
    await space.due(0);

    // The editor is reading a human conversation the owner made.
    await owner.evaluate(() => (window.prompt = () => 'planning'));
    await owner.getByTestId('new-conversation').click();
    const planning = editor.locator('[data-chat-title="planning"]');
    await planning.click();
    await editor.getByTestId('transcript-title').filter({ hasText: '# planning' }).waitFor();
    await editor.getByTestId('composer').fill('I will watch the agent');
    await editor.getByTestId('send').click();
    await owner.locator('[data-chat-title="planning"]').click();
    await owner.getByText('I will watch the agent').waitFor();

    // 3. A new agent appears as the same Work chat in both browsers within two seconds, without refresh.
    const agentId = `${space.id}:sess-a1`;
    const agentRow = (p: Page) => p.getByTestId(`agent-${agentId}`);
    await space.report([{ session: 'sess-a1', label: 'fix-login', pane: 'ws1:pane2', origin: 'bridge', mode: 'acceptEdits', state: 'idle' }], true);
    const appeared = await within(2000, () => Promise.all([agentRow(owner).waitFor({ timeout: 2000 }), agentRow(editor).waitFor({ timeout: 2000 })]));
    t.diagnostic(`a new agent showed in both browsers ${appeared} ms after the Space reported it`);
    await editor.getByTestId('transcript-title').filter({ hasText: '# planning' }).waitFor();
    assert.equal(await editor.locator('.rail-item.on').getAttribute('data-chat-title'), 'planning', "the new agent did not steal the editor's selection");
    assert.equal(await agentRow(editor).locator('[data-testid=unread]').count(), 1, 'the new chat is marked unread');

    // 4. Messages, queue order, lifecycle and final result match in both browsers.
    await editor.getByTestId(`agent-${agentId}`).click();
    await owner.getByTestId(`agent-${agentId}`).click();
    await editor.getByTestId('agent-mode').filter({ hasText: 'acceptEdits' }).waitFor();
    for (const [p, text] of [[editor, 'fix the login redirect'], [owner, 'then add a test'], [editor, 'then update the changelog']] as const) {
      await p.getByTestId('composer').fill(text);
      await p.getByTestId('send').click();
      await p.getByTestId('queue').getByText(text).waitFor();
    }
    const queueOf = (p: Page) => p.getByTestId('queue').locator('.q-text').allTextContents();
    await owner.getByTestId('queue').getByText('then update the changelog').waitFor();
    assert.deepEqual(await queueOf(owner), ['fix the login redirect', 'then add a test', 'then update the changelog']);
    assert.deepEqual(await queueOf(editor), await queueOf(owner));
    let due = await space.due(1);
    assert.equal(due[0].text, 'fix the login redirect');
    await space.exec(due[0].id, 'started');
    for (const p of [owner, editor]) {
      await p.getByTestId('agent-state').filter({ hasText: 'working' }).waitFor();
      await p.getByTestId('running').filter({ hasText: 'fix the login redirect' }).waitFor();
    }
    await space.call('POST', `/api/v2/spaces/${space.id}/terminal`, { session: 'sess-a1', data: '$ npm test -- login\n' });
    for (const p of [owner, editor]) await p.getByTestId('terminal').filter({ hasText: 'npm test -- login' }).waitFor();
    await space.exec(due[0].id, 'blocked', { reason: 'Bash: git push' });
    for (const p of [owner, editor]) await p.getByTestId('agent-blocked').filter({ hasText: 'Bash: git push' }).waitFor();
    await space.exec(due[0].id, 'resumed');
    await space.exec(due[0].id, 'output', { text: 'The redirect now keeps the next= parameter.' });
    await space.exec(due[0].id, 'finished', { result: 'Login redirect fixed; 12 tests pass.' });
    for (const p of [owner, editor]) {
      await p.getByTestId('result').filter({ hasText: 'Login redirect fixed; 12 tests pass.' }).waitFor();
      await p.getByTestId('agent-state').filter({ hasText: 'idle' }).waitFor();
    }
    assert.deepEqual(await queueOf(owner), ['then add a test', 'then update the changelog']);
    due = await space.due(1);
    assert.equal(due[0].text, 'then add a test', 'FIFO: the owner\'s command was second');
    await space.exec(due[0].id, 'started');
    await space.exec(due[0].id, 'finished', { result: 'Test added.' });
    for (const p of [owner, editor]) await p.getByTestId('result').filter({ hasText: 'Test added.' }).waitFor();
    await editor.getByTestId('transcript').getByText('Test added.').waitFor();
    await owner.getByTestId('transcript').getByText('Test added.').waitFor();
    const transcriptBefore = await texts(owner);
    assert.deepEqual(await texts(editor), transcriptBefore, 'both browsers show the same transcript');
    assert.ok(transcriptBefore.some((x) => x.startsWith('Eddie') && x.includes('fix the login redirect')));

    // 4b. The same through a real Claude Code session: the Space connector (roost space) with the
    // owner's token runs the editor's command against the scripted model stand-in.
    const model = await modelStandin([step(text('Stand-in says: the README is written.'), (r) => JSON.stringify(r.body?.messages ?? '').includes('write the README'))]);
    const cs = claudeSetup('svc');
    const real = new Bridge({
      server: base,
      token: space.token,
      space: "Olive's workstation",
      project: 'default',
      contribute: true,
      agents: 1,
      root: cs.project,
      thread: 'default',
      name: 'Claude',
      approvals: DEFAULT_APPROVALS,
      windowMs: 60_000,
      claude: CLAUDE_BIN,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cs.home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
      log: () => {},
    });
    try {
      await real.start();
      await real.ready;
      const realRow = (p: Page) => p.locator(`[data-testid^="agent-${real.work!.id}:"]`);
      await Promise.all([realRow(owner).waitFor(), realRow(editor).waitFor()]);
      await realRow(editor).click();
      await realRow(owner).click();
      await editor.getByTestId('composer').fill('Please write the README');
      await editor.getByTestId('send').click();
      for (const p of [owner, editor]) await p.getByTestId('result').filter({ hasText: 'Stand-in says: the README is written.' }).waitFor({ timeout: 30_000 });
      assert.deepEqual(await texts(editor), await texts(owner));
    } finally {
      await real.stop();
      await model.close();
    }
    await editor.getByTestId(`agent-${agentId}`).click();
    await owner.getByTestId(`agent-${agentId}`).click();

    // 5. Moving and ending the pane update the chat without replacing it.
    await space.report([{ session: 'sess-a1', pane: 'ws2:pane7' }]);
    for (const p of [owner, editor]) {
      await p.getByTestId('agent-pane').filter({ hasText: 'ws2:pane7' }).waitFor({ timeout: 4000 }).catch(async (e) => {
        throw new Error(`${p === owner ? 'owner' : 'editor'}: ${await p.locator('main').innerText()} ${JSON.stringify(await (await p.request.get(base + '/api/v2/snapshot?project=default')).json().then((j) => j.agents.map((a: any) => [a.id, a.pane, a.rev])))}`, { cause: e });
      });
      await p.getByTestId('transcript').getByText('moved from ws1:pane2 to ws2:pane7').waitFor();
    }
    await space.report([], true); // the Space's snapshot no longer has it: ended
    for (const p of [owner, editor]) {
      await p.getByTestId('agent-state').filter({ hasText: 'ended' }).waitFor();
      await p.getByTestId('transcript').getByText('ended: gone from the Space').waitFor({ timeout: 3000 }).catch(async (e) => {
        throw new Error(`transcript: ${JSON.stringify(await texts(p))}`, { cause: e });
      });
      assert.equal(await p.locator(`[data-testid^="agent-${space.id}:"]`).count(), 1, 'one agent chat, not a new one');
      assert.equal(await transcript(p).count(), transcriptBefore.length + 2, 'history kept');
    }
    assert.equal(await editor.getByTestId('composer').isDisabled(), true, 'an ended agent takes no command');
    await editor.getByTestId('transcript').locator('[data-status="cancelled"]').waitFor();
    assert.ok((await texts(editor)).some((x) => x.includes('then update the changelog') && x.endsWith('cancelled')), 'what waited for it is cancelled, visibly');
    const beforeRestart = await texts(owner);
    assert.deepEqual(await texts(editor), beforeRestart);

    // 6. Refresh both browsers, restart the server, reconnect the Space: nothing duplicates, history remains.
    const snapBefore = await (await owner.request.get(base + '/api/v2/snapshot?project=default')).json();
    space.feed!.close();
    await srv.stop();
    srv = await child({ dataDir, port: srv.port });
    for (const p of [owner, editor]) {
      await p.reload();
      await p.getByTestId('work-conn').filter({ hasText: 'Live' }).waitFor({ timeout: 10_000 });
      await p.getByTestId(`agent-${agentId}`).click();
      await p.getByTestId('transcript').getByText('ended: gone from the Space').waitFor();
      assert.deepEqual(await texts(p), beforeRestart, 'the same history after refresh and restart');
      assert.equal(await p.locator(`[data-testid^="agent-${space.id}:"]`).count(), 1);
    }
    // The Space reconnects: its full snapshot first (the agent is back in a new pane), then the feed.
    await space.report([{ session: 'sess-a1', pane: 'ws3:pane1', origin: 'bridge' }], true);
    await space.connect();
    await space.due(0);
    for (const p of [owner, editor]) {
      await p.getByTestId('agent-state').filter({ hasText: 'idle' }).waitFor();
      assert.equal(await p.locator(`[data-testid^="agent-${space.id}:"]`).count(), 1, 'the same chat came back');
    }
    await editor.getByTestId('composer').fill('update the changelog after all');
    await editor.getByTestId('send').click();
    assert.equal((await space.due(1))[0].text, 'update the changelog after all', 'the feed works after the restart');
    const snapAfter = await (await owner.request.get(base + '/api/v2/snapshot?project=default')).json();
    assert.equal(snapAfter.agents.length, snapBefore.agents.length);
    assert.equal(snapAfter.results.length, snapBefore.results.length, 'no result twice');
    assert.equal(snapAfter.commands.length, snapBefore.commands.length + 1, 'only the new command');
    assert.equal(snapAfter.conversations.length, snapBefore.conversations.length);
    // A repeated delivery (same key) stores nothing.
    const head = snapAfter.position;
    await space.register("Olive's laptop");
    await space.report([{ session: 'sess-a1', pane: 'ws3:pane1', origin: 'bridge' }], true);
    assert.equal((await (await owner.request.get(base + '/api/v2/snapshot?project=default')).json()).position, head);

    // 8. General Chat stays private and links to project work without leaking private context.
    await owner.getByTestId('chat-general').click();
    for (const text of ['Note to self: the staging password is hunter2', 'Please write a README for the login service']) {
      await owner.getByTestId('composer').fill(text);
      await owner.getByTestId('send').click();
      await owner.getByTestId('transcript').getByText(text).waitFor();
    }
    await owner.getByTestId('start-work-2').click();
    await owner.getByTestId('general-links').getByText('Please write a README').waitFor();
    const linked = editor.locator('[data-chat-title^="Please write a README"]');
    await linked.waitFor();
    await linked.click();
    assert.deepEqual(await texts(editor), ['OlivePlease write a README for the login service']);
    assert.equal(await editor.getByText('hunter2').count(), 0);
    await editor.getByTestId('chat-general').click();
    assert.equal(await editor.getByText('hunter2').count(), 0, "the editor's General Chat is their own");
    const editorView = await (await editor.request.get(base + '/api/v2/snapshot?project=default')).text();
    assert.ok(!editorView.includes('hunter2'));

    // 7. Change the editor to viewer, then remove them: permissions and live streams change at once; attribution stays.
    await editor.getByTestId(`agent-${agentId}`).click();
    assert.equal(await editor.getByTestId('composer').isDisabled(), false);
    const demote = await admin.put(base + `/projects/default/members/${eddieUid}`, { data: { role: 'viewer' }, headers: { origin: base } });
    assert.equal(demote.status(), 200, await demote.text());
    t.diagnostic(`the demotion reached the editor's page in ${await within(2000, () => editor.getByTestId('work-role').filter({ hasText: 'viewer' }).waitFor({ timeout: 2000 }))} ms`);
    await editor.getByTestId('composer-blocked').filter({ hasText: 'Viewers can read' }).waitFor();
    assert.equal(await editor.getByTestId('composer').isDisabled(), true);
    const tryWrite = await editor.evaluate(async (agent) => {
      const r = await fetch('/api/v2/commands', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'default', agent, text: 'sneak' }) });
      return r.status;
    }, agentId);
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
    space.feed?.close();
  } finally {
    await browser?.close();
    await srv.stop();
  }
});
