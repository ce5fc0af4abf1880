// Decisions with context in the inbox, in a real Chromium (issue 18, part 7):
// held Claude Code calls (the real hook payloads) show the command and its
// directory, a long file's content folded, an edit as a diff; "Allow this
// command this session" answers the held hook and makes the same command in
// that session pass at once, with nothing left to decide.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { pendingOf } from './support/approvals-http.js';
import type { Roost } from '../src/server/index.js';

const exe = chromiumPath();
const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;
const HOLD = '/hooks/claude-code?approvals=Bash,Edit,Write&window=120000&hold=1';
const pre = (tool: string, input: Record<string, unknown>) => ({ ...PRE_BASH, tool_name: tool, tool_input: input, tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` });

let srv: Roost;
before(async () => {
  srv = await inProcess();
});
after(async () => {
  await srv?.close();
});

function hold(payload: unknown): Promise<any> {
  return fetch(srv.url + HOLD, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) }).then((r) => r.json());
}

test('the inbox shows what a call would do, and "allow for this session" covers the same command after it', { timeout: 120_000 }, async (t) => {
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  const bash = hold(pre('Bash', { command: 'npm run migrate -- --to 42', description: 'run the migration' }));
  const edit = hold(pre('Edit', { file_path: '/home/dev/shop/src/tax.ts', old_string: 'export function tax(x) {\n  return x * 0.2;\n}', new_string: 'export function tax(x) {\n  return x * 0.25;\n}' }));
  const content = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n');
  const write = hold(pre('Write', { file_path: '/home/dev/shop/notes.txt', content }));
  await until('three held calls', async () => ((await pendingOf(srv.url)).length === 3 ? true : undefined), 10_000);

  const b = await launch({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await b.context.newPage();
    await page.goto(srv.url + '/inbox');
    const items = page.locator('[data-testid="inbox-item"]');
    await items.first().waitFor();
    assert.equal(await items.count(), 3);

    // The command, and the directory it runs in.
    const cmd = items.filter({ has: page.locator('[data-testid="detail-command"]') });
    assert.equal((await cmd.locator('[data-testid="detail-cmd"]').textContent())?.trim(), '$ npm run migrate -- --to 42');
    assert.equal(await cmd.locator('[data-testid="detail-cwd"]').textContent(), '/home/dev/shop');

    // The edit as a diff: the changed line removed and added, the rest as context.
    const diff = items.locator('[data-testid="detail-diff"]');
    assert.deepEqual(await diff.locator('[data-line="del"]').allTextContents(), ['-   return x * 0.2;\n']);
    assert.deepEqual(await diff.locator('[data-line="add"]').allTextContents(), ['+   return x * 0.25;\n']);
    assert.equal(await diff.locator('[data-line="ctx"]').count(), 2);

    // Forty lines of content: the first ones shown, the rest behind "Show all 40 lines".
    const folded = items.locator('[data-testid="detail-content"]');
    const more = folded.locator('details');
    assert.equal(await more.evaluate((d) => (d as HTMLDetailsElement).open), false);
    assert.equal(await folded.locator('summary').textContent(), 'Show all 40 lines');
    assert.equal(await folded.getByText('line 40').isVisible(), false);
    await folded.locator('summary').click();
    assert.equal(await folded.getByText('line 40').isVisible(), true);

    // Allow the command for the session: the held hook is allowed...
    await cmd.getByTestId('allow-session').click();
    const answer = await bash;
    assert.equal(answer.hookSpecificOutput.permissionDecision, 'allow');
    await until('the item gone from the inbox', async () => ((await items.count()) === 2 ? true : undefined), 10_000);
    // ...and the same command again in that session passes at once: nothing new to decide.
    const again = await hold(pre('Bash', { command: 'npm run migrate -- --to 42' }));
    assert.equal(again.hookSpecificOutput.permissionDecision, 'allow');
    assert.match(again.hookSpecificOutput.permissionDecisionReason, /allowed for this session/);
    await page.waitForTimeout(300);
    assert.equal(await items.count(), 2, 'nothing new waits in the inbox');
    // The rule's decision is in the recent list, like any other.
    await until('the rule-allowed call among the recent', async () => ((await page.locator('[data-testid="inbox-recent"] li').count()) >= 2 ? true : undefined), 10_000);

    for (const a of await pendingOf(srv.url)) await fetch(`${srv.url}/approvals/${a.id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'deny' }) });
    await Promise.all([edit, write]);
  } finally {
    await b.close();
  }
});
