// Every project from the web (issue 18, part 6), in a real browser: the
// project switcher of the floor, the inbox, Work and the cost panel moves the
// view (and its live scopes) to project B, which shows B's agents and
// approvals and not the default project's, and the nav stays in B; in
// shared mode an owner creates a project, invites a member by link and
// changes their role from /manage, every page showing the members follows
// each change without a reload (the live scope members:<project>, closed to
// a non-member), and a member who is not an owner is not offered those controls (the server
// refuses them anyway).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { inProcess, tempDir } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import type {} from '../web/src/floor/hook.js';

const HAVE = chromiumPath() !== null;

async function json(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

describe('the project switcher', () => {
  test('the floor, the inbox and the cost panel move to project B: its agents and approvals, not the default project’s', { timeout: 90_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const srv = await inProcess();
    const b = await launch();
    const ctl = new AbortController();
    const held: Promise<unknown>[] = [];
    try {
      assert.equal((await json(srv.url + '/projects', 'POST', { name: 'Beta' })).status, 201);
      assert.equal((await json(srv.url + '/events', 'POST', { type: 'join', agent: 'in-default', team: 'Home', status: 'working' })).status, 200);
      assert.equal((await json(srv.url + '/events?project=beta', 'POST', { type: 'join', agent: 'in-beta', team: 'Away', status: 'working' })).status, 200);
      // A tool call held for a decision in each project (two in beta, one in default).
      const hold = (project: string, session: string) =>
        held.push(
          fetch(`${srv.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1&project=${project}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ hook_event_name: 'PreToolUse', session_id: session, cwd: '/work/' + project, tool_name: 'Bash', tool_input: { command: `echo ${session}` }, tool_use_id: 'toolu_' + session }),
            signal: ctl.signal,
          }).catch(() => null),
        );
      hold('default', 'd1');
      hold('beta', 'b1');
      hold('beta', 'b2');

      const page = await b.context.newPage();
      await page.goto(srv.url + '/');
      await page.waitForFunction(() => window.__roost?.client.connection === 'live');
      await page.getByTestId('agent-row-in-default').first().waitFor();
      await page.locator('[data-testid=nav-pending]', { hasText: '1' }).waitFor();
      // The switcher lists both projects; choosing Beta moves the floor there.
      await page.getByTestId('floor-project').selectOption('beta');
      await page.waitForURL((u) => u.searchParams.get('project') === 'beta');
      await page.waitForFunction(() => window.__roost?.client.connection === 'live' && window.__roost.state.agents.has('in-beta'));
      await page.getByTestId('agent-row-in-beta').first().waitFor();
      assert.equal(await page.getByTestId('agent-row-in-default').count(), 0, 'the default project’s agent is not on Beta’s floor');
      await page.locator('[data-testid=counts] [data-status=waiting][data-count="2"]').waitFor();
      await page.locator('[data-testid=nav-pending]', { hasText: '2' }).waitFor();
      assert.equal(await page.getByTestId('floor-project').inputValue(), 'beta');

      // The nav stays in the page's project: the inbox of Beta, one tap away.
      await page.locator('nav[aria-label="Views"] a', { hasText: 'Approvals' }).click();
      await page.waitForURL((u) => u.pathname === '/inbox' && u.searchParams.get('project') === 'beta');
      await page.locator('[data-testid=inbox-count]', { hasText: '2' }).waitFor();
      // Work has the same switcher (no picker of its own): it reads Beta's scopes, and moves back to the default project.
      await page.locator('nav[aria-label="Views"] a', { hasText: 'Work' }).click();
      await page.waitForURL((u) => u.pathname === '/work' && u.searchParams.get('project') === 'beta');
      assert.equal(await page.getByTestId('work-project').inputValue(), 'beta');
      await page.waitForFunction(() => window.__roostLive!.scopes.includes('work:beta'));
      await page.getByTestId('work-project-manage').waitFor();
      await page.getByTestId('work-project').selectOption('default');
      await page.waitForURL((u) => u.pathname === '/work' && !u.searchParams.has('project'));
      await page.waitForFunction(() => window.__roostLive!.scopes.includes('work:default') && !window.__roostLive!.scopes.includes('work:beta'));
      await page.goto(srv.url + '/inbox?project=beta');
      await page.locator('[data-testid=inbox-count]', { hasText: '2' }).waitFor();
      const agents = await page.getByTestId('inbox-item').evaluateAll((els) => els.map((e) => e.getAttribute('data-agent')).sort());
      assert.deepEqual(agents, ['claude-code:b1', 'claude-code:b2']);
      await page.getByTestId('inbox-project').selectOption('default');
      await page.waitForURL((u) => !u.searchParams.has('project'));
      await page.locator('[data-testid=inbox-count]', { hasText: '1' }).waitFor();
      assert.equal(await page.getByTestId('inbox-item').getAttribute('data-agent'), 'claude-code:d1');
      // A decision from the inbox of Beta lands in Beta.
      await page.getByTestId('inbox-project').selectOption('beta');
      await page.locator('[data-testid=inbox-count]', { hasText: '2' }).waitFor();
      await page.locator('[data-testid=inbox-item][data-agent="claude-code:b1"]').getByTestId('deny').click();
      await page.locator('[data-testid=inbox-count]', { hasText: '1' }).waitFor();
      const beta = await json(srv.url + '/approvals?project=beta&recent=10', 'GET');
      assert.deepEqual(beta.json.recent.map((a: { asker: string; status: string }) => `${a.asker} ${a.status}`), ['claude-code:b1 denied']);
      assert.equal((await json(srv.url + '/approvals', 'GET')).json.pending.length, 1, 'the default project’s request still waits');

      // The cost panel reads Beta's usage scope.
      await page.goto(srv.url + '/cost');
      await page.locator('[data-testid=cost-connection][data-state=live]').waitFor();
      await page.getByTestId('cost-project').selectOption('beta');
      await page.waitForURL((u) => u.searchParams.get('project') === 'beta');
      await page.locator('[data-testid=cost-connection][data-state=live]').waitFor();
      await page.waitForFunction(() => window.__roostLive!.scopes.includes('usage:beta') && !window.__roostLive!.scopes.includes('usage:default'));
    } finally {
      ctl.abort();
      await Promise.all(held);
      await b.close();
      await srv.close();
    }
  });
});

describe('projects from the web, shared mode', () => {
  test('an owner creates a project, invites a member and changes their role; a non-owner is not offered it', { timeout: 120_000 }, async (t) => {
    if (!need(t, HAVE, 'chromium is not installed')) return;
    const store = new SqliteStore({ path: join(tempDir(), 'roost.db') });
    await createOwner(store, 'ann', 'ann-password', 'Ann');
    const srv = await startRoost(store, { port: 0 });
    const ann = await launch();
    const vera = await launch();
    try {
      const page = await ann.context.newPage();
      await signIn(page, srv.url, 'ann', 'ann-password');
      await page.goto(srv.url + '/manage');
      await page.getByTestId('new-project-name').fill('Beta Team');
      await page.getByTestId('new-project-create').click();
      await page.waitForURL((u) => u.pathname === '/manage' && u.searchParams.get('project') === 'beta-team');
      await page.locator('[data-testid="member-ann"][data-role=owner]').waitFor();
      // The new project is in every switcher at once.
      assert.ok((await page.getByTestId('project-list').innerText()).includes('Beta Team'));

      // An invite link, as a viewer.
      await page.getByTestId('invite-role').selectOption('viewer');
      await page.getByTestId('invite-make').click();
      const link = await page.getByTestId('invite-link').inputValue();
      assert.match(link, new RegExp(`^${srv.url.replace(/[.]/g, '\\.')}/invite/`));
      const vp = await vera.context.newPage();
      await vp.goto(link);
      await vp.fill('#login', 'vera');
      await vp.fill('#name', 'Vera');
      await vp.fill('#password', 'vera-password');
      await Promise.all([vp.waitForURL((u) => u.pathname === '/'), vp.click('button[type=submit]')]);

      // Ann sees her at once, without a reload: the members come over the live connection (members:beta-team).
      const row = page.locator('[data-testid="member-vera"]');
      await row.waitFor({ timeout: 10_000 });
      assert.equal(await row.getAttribute('data-role'), 'viewer');
      assert.ok(await page.evaluate(() => window.__roostLive!.scopes.includes('members:beta-team')));
      // Vera, a viewer, is offered no role pickers and no invite; the floor switcher names the project.
      await vp.goto(srv.url + '/manage?project=beta-team');
      await vp.locator('[data-testid="member-vera"]').waitFor();
      assert.equal(await vp.getByTestId('member-role').count(), 0, 'no role picker for a viewer');
      assert.equal(await vp.getByTestId('invite').count(), 0, 'no invite form for a viewer');
      assert.equal(await vp.getByTestId('member-role-text').first().innerText(), 'owner');
      // Work, with no project named, opens her project (she is not in the default one) and its switcher says so.
      await vp.goto(srv.url + '/work');
      await vp.waitForURL((u) => u.searchParams.get('project') === 'beta-team');
      assert.equal(await vp.getByTestId('work-project').inputValue(), 'beta-team');
      await vp.getByTestId('work-role').filter({ hasText: 'viewer' }).waitFor();
      // ...and the server refuses it all the same.
      const refused = await vp.evaluate(async () => (await fetch('/projects/beta-team/members/vera', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'owner' }) })).status);
      assert.equal(refused, 403);

      // Only those who may see the members get them: Vera is in no other project, and the default one's scope is closed to her.
      const refusedScope = await vp.evaluate(async () => {
        const ctl = new AbortController();
        const r = await fetch('/live?s=members:default', { signal: ctl.signal });
        const reader = r.body!.getReader();
        let text = '';
        while (!text.includes('"closed"')) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        ctl.abort();
        return text;
      });
      assert.match(refusedScope, /"s":"members:default","e":"closed","d":\{"reason":"you are not a member of project .*","status":403\}/);
      await vp.goto(srv.url + '/manage?project=beta-team');
      await vp.locator('[data-testid="member-vera"][data-role=viewer]').waitFor();

      // Ann makes her an editor: Vera's page says so without a reload (her row, and what she is).
      await row.getByTestId('member-role').selectOption('editor');
      await page.locator('[data-testid="member-vera"][data-role=editor]').waitFor();
      await vp.locator('[data-testid="member-vera"][data-role=editor]').waitFor({ timeout: 10_000 });
      await vp.getByTestId('project-detail').getByText('you are an editor').waitFor({ timeout: 10_000 });
      // A change from another tab (or the API, or the CLI) shows in this one: Ann's second tab makes Vera a viewer and back.
      const tab2 = await ann.context.newPage();
      await tab2.goto(srv.url + '/manage?project=beta-team');
      await tab2.locator('[data-testid="member-vera"]').getByTestId('member-role').selectOption('viewer');
      await page.locator('[data-testid="member-vera"][data-role=viewer]').waitFor({ timeout: 10_000 });
      await tab2.locator('[data-testid="member-vera"]').getByTestId('member-role').selectOption('editor');
      await page.locator('[data-testid="member-vera"][data-role=editor]').waitFor({ timeout: 10_000 });
      await tab2.close();
      const me = await vp.evaluate(async () => (await (await fetch('/auth/me')).json()) as { projects: { id: string; role: string }[] });
      assert.deepEqual(me.projects.find((p) => p.id === 'beta-team'), { id: 'beta-team', name: 'Beta Team', role: 'editor' });
      // Now an editor, Vera writes to Beta's floor from her browser, and sees it under the switcher.
      const wrote = await vp.evaluate(async () => (await fetch('/events?project=beta-team', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'join', agent: 'vera-bot', status: 'idle' }) })).status);
      assert.equal(wrote, 200);
      await vp.goto(srv.url + '/?project=beta-team');
      await vp.getByTestId('agent-row-vera-bot').first().waitFor();
      assert.equal(await vp.getByTestId('floor-project').inputValue(), 'beta-team');
      // The last owner cannot be demoted: the refusal is shown in the server's words.
      await page.locator('[data-testid="member-ann"]').getByTestId('member-role').selectOption('viewer');
      await page.getByTestId('members-error').waitFor();
      assert.match(await page.getByTestId('members-error').innerText(), /keeps at least one owner/);
      await page.locator('[data-testid="member-ann"][data-role=owner]').waitFor();
      // Ann removes Vera through the API: both pages follow (Vera's has no project detail left, her scope closed).
      await vp.goto(srv.url + '/manage?project=beta-team');
      await vp.getByTestId('project-detail').waitFor();
      const removed = await page.evaluate(async () => (await fetch('/projects/beta-team/members/vera', { method: 'DELETE' })).status);
      assert.equal(removed, 200);
      await page.locator('[data-testid="member-vera"]').waitFor({ state: 'detached', timeout: 10_000 });
      await vp.getByTestId('project-detail').waitFor({ state: 'detached', timeout: 10_000 });
      assert.equal(await vp.getByTestId('project-beta-team').count(), 0, 'the project left her list');
    } finally {
      await vera.close();
      await ann.close();
      await srv.close();
    }
  });
});

async function signIn(page: Page, url: string, login: string, password: string): Promise<void> {
  await page.goto(url + '/signin');
  await page.fill('#login', login);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('button[type=submit]')]);
}
