// The fleet board driven from the browser, end to end: two members (Ana and
// Bob, two browser profiles) on a real server, the real workstation bridge
// (`roost bridge`, a child process) running the real Claude Code CLI against
// the scripted model stand-in. Ana starts a scoped session from the
// composer, Bob prompts it, a tool call waits on both cards, Bob allows it
// from his, and Ana closes the session: the worktree goes, the branch stays.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess, tempDir } from './support/server.js';
import { shopRepo } from './support/bridge.js';
import { chromiumPath, launch } from './support/browser.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { modelStandin, step, text, toolUse, hasResult, and, not } from './support/model-standin.js';
import { askedWithBash as asked } from './support/model-standin.js';
import { until as waitUntil, git } from './support/until.js';

// window.__roostFleet, as the page declares it (types only).
import type {} from '../web/src/live/useFleet.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const BUILT = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'bridge', 'index.js')) && existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html'));
const THREAD = 'crew';



const until = <T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 30_000) => waitUntil<T>(what, f, ms);

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
});

async function startBridge(server: string, root: string, home: string, modelUrl: string): Promise<{ proc: ChildProcess; log: () => string }> {
  const proc = spawn(process.execPath, [ROOST, 'bridge', '--server', server, '--token', 'bridge-token', '--root', root, '--thread', THREAD, '--claude', CLAUDE_BIN, '--window', '60s'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: 'test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  cleanup.push(async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((ok) => {
      proc.once('exit', () => ok());
      proc.kill('SIGTERM');
      setTimeout(() => proc.kill('SIGKILL'), 5_000).unref();
    });
  });
  await until('the bridge to follow the thread', () => {
    if (proc.exitCode !== null) throw new Error(`the bridge exited: ${out}`);
    return out.includes('following thread');
  });
  return { proc, log: () => out };
}

async function openBoard(b: Awaited<ReturnType<typeof launch>>, url: string, name: string): Promise<Page> {
  const page = await b.context.newPage();
  await page.goto(`${url}/fleet/${THREAD}`);
  await page.getByLabel('Your name').fill(name);
  await page.waitForFunction((t) => window.__roostFleet?.[t]?.connection === 'live', THREAD, { timeout: 10_000 });
  return page;
}

/** The chat as a member sees it: "author: text" per line. */
function chatOf(page: Page): Promise<string[]> {
  return page.getByTestId('chat-line').evaluateAll((els) => els.map((el) => `${el.querySelector('.who')?.textContent ?? ''}: ${el.querySelector('.text')?.textContent ?? ''}`));
}

test('two members run a real Claude Code session from the board: start, prompt, approve, close', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, chromiumPath() !== null, 'chromium is not installed (apt-get install chromium, or set ROOST_CHROMIUM)')) return;
  if (!need(t, BUILT, 'a build (npm run build)')) return;

  const home = tempDir('roost-board-home-');
  const repo = shopRepo('roost-board-root-');

  const model = await modelStandin([
    step(text('Hello from the stand-in.'), asked('PROMPT-ONE')),
    step(toolUse('Bash', { command: 'echo note > note.txt && git add note.txt && git -c user.name=t -c user.email=t@example.com commit -qm "a note"', description: 'commit a note' }, 'toolu_note'), and(asked('PROMPT-TWO'), not(hasResult('toolu_note')))),
    step(text('Committed the note.'), hasResult('toolu_note')),
  ]);
  cleanup.push(() => model.close());
  const roost = await inProcess();
  cleanup.push(() => roost.close());
  await startBridge(roost.url, repo, home, model.url);
  const [anaB, bobB] = await Promise.all([launch({ viewport: { width: 1280, height: 800 } }), launch({ viewport: { width: 1280, height: 800 } })]);
  cleanup.push(() => anaB.close(), () => bobB.close());
  const [ana, bob] = await Promise.all([openBoard(anaB, roost.url, 'Ana'), openBoard(bobB, roost.url, 'Bob')]);

  for (const p of [ana, bob]) await p.getByTestId('bridge-presence').getByText('Bridge connected').waitFor();

  // Ana starts a scoped session from the composer.
  await ana.getByRole('button', { name: 'New session' }).click();
  await ana.getByLabel('Name', { exact: true }).fill('fix-login');
  const answered = ana.waitForResponse((r) => r.url().endsWith(`/fleet/${THREAD}/requests`));
  await ana.getByTestId('start-submit').click();
  const { id } = (await (await answered).json()) as { id: string };
  const card = (p: Page) => p.getByTestId(`session-${id}`);
  // The bridge runs it in its own worktree; both see it ready.
  for (const p of [ana, bob]) await card(p).getByTestId('session-state').getByText('Idle').waitFor({ timeout: 30_000 });
  const wt = join(repo, '.roost-bridge', 'worktrees', id);
  assert.ok(existsSync(join(wt, 'README.md')), 'the scoped session has its own worktree');
  assert.equal(await card(bob).getByText('Asked by').count(), 1);

  // Bob prompts it: a turn on both boards, a line in both chats.
  await bob.getByTestId('composer-to').selectOption(id);
  await bob.getByTestId('composer-text').fill('PROMPT-ONE say hello');
  await bob.getByTestId('composer-send').click();
  for (const p of [ana, bob]) {
    await p.getByTestId('chat-line').filter({ hasText: '[fix-login] Hello from the stand-in.' }).waitFor({ timeout: 30_000 });
    assert.equal(await card(p).getByTestId('session-prompts').textContent(), '1');
  }

  // Ana asks for a commit: the Bash call waits on both cards; Bob allows it from his.
  await ana.getByTestId('composer-to').selectOption(id);
  await ana.getByTestId('composer-text').fill('PROMPT-TWO commit a note');
  await ana.getByTestId('composer-text').press('Enter');
  for (const p of [ana, bob]) await card(p).getByRole('button', { name: 'Allow Bash in fix-login' }).waitFor({ timeout: 30_000 });
  assert.equal(existsSync(join(wt, 'note.txt')), false, 'nothing runs before a decision');
  await card(bob).getByRole('button', { name: 'Allow Bash in fix-login' }).click();
  for (const p of [ana, bob]) await p.getByTestId('chat-line').filter({ hasText: '[fix-login] Committed the note.' }).waitFor({ timeout: 30_000 });
  assert.equal(git(repo, 'log', '-1', '--format=%s', `roost/${id}`), 'a note', 'the allowed command ran on the session’s branch');
  for (const p of [ana, bob]) {
    const d = card(p).locator('[data-testid^="decided-"]');
    assert.equal(await d.getAttribute('data-state'), 'allowed');
    assert.match((await d.textContent()) ?? '', /allowed by Bob/);
  }

  // Ana closes it: ended on both boards; the worktree goes, the branch stays.
  await card(ana).getByTestId('close').click();
  await card(ana).getByTestId('close-confirm').click();
  for (const p of [ana, bob]) await until('ended', async () => (await card(p).getAttribute('data-state')) === 'ended');
  await until('the worktree removed', () => !existsSync(wt));
  assert.equal(git(repo, 'log', '-1', '--format=%s', `roost/${id}`), 'a note', 'the committed branch survives');

  // One chat for both, in the same order, with the members' prompts among the session's lines.
  const [chatA, chatB] = [await chatOf(ana), await chatOf(bob)];
  assert.deepEqual(chatA, chatB);
  const order = ['Bob: asked fix-login: “PROMPT-ONE say hello”', 'Claude: [fix-login] Hello from the stand-in.', 'Ana: asked fix-login: “PROMPT-TWO commit a note”', 'Bob: allowed Bash in fix-login', 'Claude: [fix-login] Committed the note.', 'Ana: closed session “fix-login”'];
  let at = -1;
  for (const line of order) {
    const i = chatA.indexOf(line, at + 1);
    assert.ok(i > at, `"${line}" in order in ${JSON.stringify(chatA)}`);
    at = i;
  }
  assert.match(chatA[0], /^Claude: started session “fix-login”/);
});
