// Decisions in bulk in the inbox, in a real Chromium (issue 30 point 4): 50
// calls held by their hooks across 5 sessions of two vendors (Claude Code's recorded
// PreToolUse and Codex's PermissionRequest, posted as their command hooks
// do), picked by team and then all shown, and denied in one action with a
// note. One of them was decided over HTTP by someone else just before: the
// bulk result names it as a 409 ("someone else decided first"), and every
// held hook gets its answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { decide, pendingOf } from './support/approvals-http.js';
import type { Roost } from '../src/server/index.js';

const exe = chromiumPath();
const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const CLAUDE = JSON.parse(readFileSync(join(FIX, 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;
// Codex lets a hook decide at its PermissionRequest (the point where it would ask), answered `decision.behavior`.
const CODEX = JSON.parse(readFileSync(join(FIX, 'claude-code', 'hooks-doc-examples', 'codex', 'PermissionRequest.json'), 'utf8')) as Record<string, unknown>;

// Five sessions: three Claude Code (teams alpha, alpha, beta), two Codex (team gamma).
const SESSIONS: { vendor: 'claude-code' | 'codex'; team: string; session: string }[] = [
  { vendor: 'claude-code', team: 'alpha', session: '11111111-1111-4111-8111-111111111111' },
  { vendor: 'claude-code', team: 'alpha', session: '22222222-2222-4222-8222-222222222222' },
  { vendor: 'claude-code', team: 'beta', session: '33333333-3333-4333-8333-333333333333' },
  { vendor: 'codex', team: 'gamma', session: '01a232a6-f245-7c71-9b13-000000000001' },
  { vendor: 'codex', team: 'gamma', session: '01a232a6-f245-7c71-9b13-000000000002' },
];

let srv: Roost;
before(async () => {
  srv = await inProcess();
});
after(async () => {
  await srv?.close();
});

function held(s: (typeof SESSIONS)[number], i: number): Promise<any> {
  const base = s.vendor === 'codex' ? CODEX : CLAUDE;
  const payload = { ...base, session_id: s.session, tool_input: { command: `make target${i}` }, tool_use_id: `call_${s.session.slice(-4)}_${i}` };
  const path = `/hooks/${s.vendor}?approvals=Bash&window=300000&hold=1&team=${s.team}`;
  return fetch(srv.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) }).then((r) => r.json());
}

test('50 waiting calls across 5 sessions of two vendors decided in one action; one decided first by someone else is named as a 409', { timeout: 240_000 }, async (t) => {
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  const hooks: Promise<any>[] = [];
  for (let i = 0; i < 50; i++) hooks.push(held(SESSIONS[i % 5], i));
  const pending = await until('50 calls waiting', async () => {
    const p = await pendingOf(srv.url);
    return p.length === 50 ? p : null;
  }, 60_000);
  assert.deepEqual([...new Set(pending.map((a: any) => a.source))].sort(), ['claude-code', 'codex']);

  const b = await launch({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await b.context.newPage();
    await page.goto(srv.url + '/inbox');
    const count = page.locator('[data-testid="inbox-count"]');
    await until('the inbox shows 50 waiting', async () => (await count.textContent()) === '50', 60_000);

    // By team: alpha's two sessions, 20 calls.
    await page.locator('[data-testid="bulk-by"]').selectOption('team');
    await page.locator('[data-testid="bulk-value"]').selectOption('alpha');
    await page.locator('[data-testid="bulk-select"]').click();
    assert.equal(await page.locator('[data-testid="bulk-count"]').textContent(), '20 selected');
    assert.equal(await page.locator('[data-testid="pick"]:checked').count(), 20);
    // Then every one shown.
    await page.locator('[data-testid="bulk-by"]').selectOption('all');
    await page.locator('[data-testid="bulk-select"]').click();
    assert.equal(await page.locator('[data-testid="bulk-count"]').textContent(), '50 selected');

    // Someone else decides one of them over HTTP just before.
    const first = pending.find((a: any) => /make target17$/.test(a.input));
    assert.ok(first, 'make target17 waits');
    assert.equal((await decide(srv.url, first.id, 'allow', 'Ann')).status, 200);

    await page.locator('[data-testid="bulk-note"]').fill('wrong branch: rebase first');
    await page.locator('[data-testid="bulk-deny"]').click();
    const result = page.locator('[data-testid="bulk-result"]');
    await result.waitFor({ timeout: 60_000 });
    assert.match((await page.locator('[data-testid="bulk-decided"]').textContent()) ?? '', /Denied 49; 1 not decided by you/);
    const missed = page.locator('[data-testid="bulk-missed"]');
    assert.equal(await missed.count(), 1);
    assert.equal(await missed.getAttribute('data-approval'), first.id);
    assert.equal(await missed.getAttribute('data-status'), '409');
    const text = (await missed.textContent()) ?? '';
    assert.match(text, /someone else decided first/);
    assert.match(text, /Ann/, 'who was first');
    assert.match(text, /make target17/, 'the item is named');
    await until('the inbox is empty', async () => (await count.textContent()) === '0', 60_000);
  } finally {
    await b.close();
  }

  // Every held hook is answered: the one Ann allowed, the rest denied with the note.
  const answers = await Promise.all(hooks);
  // Claude Code's answer is permissionDecision; Codex's is decision.behavior (its deny carries the note as `message`).
  const decisions = answers.map((a) => a.hookSpecificOutput?.permissionDecision ?? a.hookSpecificOutput?.decision?.behavior);
  assert.equal(decisions.filter((d) => d === 'deny').length, 49);
  assert.equal(decisions[17], 'allow');
  assert.match(answers[0].hookSpecificOutput.permissionDecisionReason, /wrong branch: rebase first/);
  assert.match(answers[3].hookSpecificOutput.decision.message, /wrong branch: rebase first/, 'the Codex session too');
});
