// Decisions with context (issue 18, part 7), over HTTP with the real Claude
// Code hook payloads: a held call carries what it would do (the command and
// its directory; a file's content; the edits of an Edit or MultiEdit), capped;
// "allow for this session" is a rule that allows the same command (any file
// edit; the same tool) again in that session only, logged like any decision,
// and ends with the session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import type { Roost } from '../src/server/index.js';
import { until } from './support/until.js';
import { approvalsOf, pendingOf } from './support/approvals-http.js';
import { DETAIL_LIMITS, applyApproval, approvalsFromJSON, approvalsToJSON, clampDetail, emptyApprovals, sessionRuleFor } from '../src/core/approvals.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const fixture = (p: string) => JSON.parse(readFileSync(join(FIX, p), 'utf8')) as Record<string, unknown>;
const PRE_BASH = fixture('hooks-real-2.1.197/09-PreToolUse-Bash.json');
const SESSION_END = fixture('hooks-real-2.1.197/12-SessionEnd.json');
const HOLD = '/hooks/claude-code?approvals=Bash,Edit,MultiEdit,Write,WebFetch&window=60000&hold=1';

/** A PreToolUse payload of the captured session, with another tool call in it. */
function pre(tool: string, input: Record<string, unknown>, session = PRE_BASH.session_id as string): Record<string, unknown> {
  return { ...PRE_BASH, session_id: session, tool_name: tool, tool_input: input, tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` };
}

async function post(url: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

/** Holds a call and returns its pending request and the hook's answer (once decided). */
async function hold(roost: Roost, payload: Record<string, unknown>): Promise<{ p: any; answer: Promise<{ status: number; json: any }> }> {
  const before = new Set((await pendingOf(roost.url)).map((a) => a.id));
  const answer = post(roost.url + HOLD, payload);
  const p = await until('the held call pending', async () => (await pendingOf(roost.url)).find((a) => !before.has(a.id)), 10_000, 20);
  return { p, answer };
}

const decision = (a: { json: any }) => a.json.hookSpecificOutput.permissionDecision as string;

test('a held call shows what it would do: the command and its directory, a file’s content, the edits (capped)', async () => {
  const roost = await inProcess();
  try {
    const bash = await hold(roost, pre('Bash', { command: 'npm run migrate -- --to 42', description: 'run the migration' }));
    assert.deepEqual(bash.p.detail, { kind: 'command', command: 'npm run migrate -- --to 42', cwd: '/home/dev/shop', description: 'run the migration', truncated: false });
    assert.equal(bash.p.input, '$ npm run migrate -- --to 42', 'the one-line digest stays');

    const big = 'x'.repeat(DETAIL_LIMITS.text + 5_000);
    const write = await hold(roost, pre('Write', { file_path: '/home/dev/shop/big.txt', content: big }));
    assert.equal(write.p.detail.kind, 'write');
    assert.equal(write.p.detail.path, '/home/dev/shop/big.txt');
    assert.equal(write.p.detail.content.length, DETAIL_LIMITS.text, 'content is capped');
    assert.equal(write.p.detail.truncated, true);

    const edit = await hold(roost, pre('Edit', { file_path: '/home/dev/shop/a.ts', old_string: 'const a = 1;\n', new_string: 'const a = 2;\n', replace_all: true }));
    assert.deepEqual(edit.p.detail, { kind: 'edit', path: '/home/dev/shop/a.ts', edits: [{ old: 'const a = 1;\n', new: 'const a = 2;\n', all: true }], truncated: false });

    const many = Array.from({ length: DETAIL_LIMITS.edits + 3 }, (_, i) => ({ old_string: `old ${i}`, new_string: `new ${i}` }));
    const multi = await hold(roost, pre('MultiEdit', { file_path: '/home/dev/shop/b.ts', edits: many }));
    assert.equal(multi.p.detail.kind, 'edit');
    assert.equal(multi.p.detail.edits.length, DETAIL_LIMITS.edits);
    assert.deepEqual(multi.p.detail.edits[1], { old: 'old 1', new: 'new 1', all: false });
    assert.equal(multi.p.detail.truncated, true);

    const fetchCall = await hold(roost, pre('WebFetch', { url: 'https://example.com', prompt: 'read it' }));
    assert.equal(fetchCall.p.detail, null, 'tools without a detail keep the digest only');

    for (const h of [bash, write, edit, multi, fetchCall]) assert.equal((await post(`${roost.url}/approvals/${h.p.id}/decision`, { decision: 'deny', by: 'ann' })).status, 200);
    for (const h of [bash, write, edit, multi, fetchCall]) assert.equal(decision(await h.answer), 'deny');
  } finally {
    await roost.close();
  }
});

test('allow for this session: the same command again in that session is allowed at once and logged; another command, another session, or after the session ended asks again', async () => {
  const roost = await inProcess();
  try {
    const first = await hold(roost, pre('Bash', { command: 'npm test' }));
    // A deny cannot be remembered; a remembered allow needs a tool call of a session.
    const bad = await post(`${roost.url}/approvals/${first.p.id}/decision`, { decision: 'deny', remember: 'session' });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /remember/);
    assert.equal((await post(`${roost.url}/approvals/${first.p.id}/decision`, { decision: 'allow', remember: 'forever' })).status, 400);
    const ok = await post(`${roost.url}/approvals/${first.p.id}/decision`, { decision: 'allow', by: 'ann', remember: 'session' });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.approval.rule, 'command:npm test');
    assert.equal(decision(await first.answer), 'allow');

    // The same command in the same session: no wait, allowed by the rule, in the log as a decision.
    const again = await post(roost.url + HOLD, pre('Bash', { command: 'npm test' }));
    assert.equal(decision(again), 'allow');
    assert.match(again.json.hookSpecificOutput.permissionDecisionReason, /Allowed in Roost by ann: allowed for this session/);
    const { recent } = await approvalsOf(roost.url);
    const ruled = recent.find((a) => a.id !== first.p.id && a.input === '$ npm test');
    assert.ok(ruled, 'the rule’s decision is in the audit trail');
    assert.equal(ruled.status, 'allowed');
    assert.equal(ruled.decidedBy, 'ann');
    assert.equal(ruled.rule, 'command:npm test');
    assert.match(ruled.reason, new RegExp(first.p.id));
    assert.equal(roost.floor.state.agents.get(first.p.asker)!.status, 'working');

    // Another command in the session, the same command in another session: a person decides.
    const other = await hold(roost, pre('Bash', { command: 'npm publish' }));
    const elsewhere = await hold(roost, pre('Bash', { command: 'npm test' }, '0d7c2b1e-0000-4000-8000-000000000001'));
    for (const h of [other, elsewhere]) assert.equal((await post(`${roost.url}/approvals/${h.p.id}/decision`, { decision: 'deny' })).status, 200);
    for (const h of [other, elsewhere]) assert.equal(decision(await h.answer), 'deny');

    // File edits: one "allow for this session" covers every edit and write of the session.
    const edit = await hold(roost, pre('Edit', { file_path: '/home/dev/shop/a.ts', old_string: 'a', new_string: 'b' }));
    assert.equal((await post(`${roost.url}/approvals/${edit.p.id}/decision`, { decision: 'allow', remember: 'session' })).status, 200);
    assert.equal(decision(await edit.answer), 'allow');
    assert.equal(decision(await post(roost.url + HOLD, pre('Write', { file_path: '/home/dev/shop/new.ts', content: 'export {};\n' }))), 'allow');

    // The session ends: its rules end with it (logged), and the same command asks again.
    assert.equal((await post(roost.url + '/hooks/claude-code', SESSION_END)).status, 200);
    const after = await hold(roost, pre('Bash', { command: 'npm test' }));
    assert.equal((await post(`${roost.url}/approvals/${after.p.id}/decision`, { decision: 'deny' })).status, 200);
    assert.equal(decision(await after.answer), 'deny');
    const log = await roost.store.read('approvals', 0);
    assert.equal(log.filter((e) => e.type === 'approval.rules.ended').length, 1);
  } finally {
    await roost.close();
  }
});

test('the fold: hostile details are clamped, rules survive a snapshot, and end with their session', () => {
  assert.equal(clampDetail({ kind: 'shell', command: 'x' }), null);
  assert.equal(clampDetail({ kind: 'command', command: 42 }), null);
  assert.equal(clampDetail({ kind: 'edit', path: 'a', edits: 'nope' }), null);
  const huge = clampDetail({ kind: 'edit', path: 'a', edits: Array.from({ length: 500 }, () => ({ old: 'o'.repeat(30_000), new: 'n', all: 'yes' })) });
  assert.ok(huge && huge.kind === 'edit');
  assert.ok(huge.edits.length <= DETAIL_LIMITS.edits);
  assert.ok(huge.edits.reduce((n, e) => n + e.old.length + e.new.length, 0) <= DETAIL_LIMITS.text);
  assert.equal(huge.edits[0].all, false);
  assert.equal(huge.truncated, true);

  const s = emptyApprovals();
  const req = { type: 'approval.requested', id: 'ap_1', kind: 'tool', asker: 'cc:1', scope: { session: 's1' }, tool: 'Bash', input: '$ ls', detail: { kind: 'command', command: 'ls', cwd: '/w' }, ts: 1 };
  applyApproval(s, req, 1);
  applyApproval(s, { type: 'approval.decided', id: 'ap_1', decision: 'allow', by: 'ann', remember: 'session', ts: 2 }, 2);
  const ask = { kind: 'tool' as const, asker: 'cc:1', scope: { session: 's1' }, tool: 'Bash', input: '$ ls', detail: clampDetail(req.detail) };
  assert.deepEqual(sessionRuleFor(s, ask), { key: 'command:ls', by: 'ann', from: 'ap_1' });
  const back = approvalsFromJSON(JSON.parse(JSON.stringify(approvalsToJSON(s))));
  assert.deepEqual(sessionRuleFor(back, ask), { key: 'command:ls', by: 'ann', from: 'ap_1' });
  assert.equal(sessionRuleFor(back, { ...ask, scope: { session: 's2' } }), null);
  applyApproval(back, { type: 'approval.rules.ended', asker: 'cc:1', session: 's1', ts: 3 }, 3);
  assert.equal(sessionRuleFor(back, ask), null);
  // A decision naming a rule it does not match makes none; a prototype name is just a key.
  applyApproval(s, { ...req, id: 'ap_2', scope: { session: '__proto__' } }, 4);
  applyApproval(s, { type: 'approval.decided', id: 'ap_2', decision: 'allow', by: 'ann', rule: 'tool:Other', ts: 5 }, 5);
  assert.equal(s.byId.get('ap_2')!.rule, '');
  assert.equal(sessionRuleFor(s, { ...ask, scope: { session: '__proto__' } }), null);
});
