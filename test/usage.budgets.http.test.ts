// Budgets on a real server (docs/integrations.md, "Budgets"): a team's day
// budget crossed by booked usage pauses the team's agents: the next tool call
// is denied by the hooks with the budget's reason (the observation hook and
// the held approval hook alike), the floor shows the agent paused and why,
// the bridge takes no new command; an owner's raise ends it at once; every
// crossing, pause and lift is written once; `roost doctor` names it; a spent
// project budget stops the flock; a Work command to a spent agent is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, tempDir } from './support/server.js';
import { USAGE_LIMITS } from '../src/core/usage.js';
import { runDoctor } from '../src/cli/doctor.js';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

const SID = '7b0c3c4e-1d1e-4a59-9f43-0f3b0d1e2a11';
const AGENT = `claude-code:${SID}`;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(roost.url + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

const preToolUse = (command: string) => ({ hook_event_name: 'PreToolUse', session_id: SID, cwd: '/home/dev/shop', tool_name: 'Bash', tool_input: { command } });

/** Books `usd` dollars for the session (the hook point the bridge and the flock use). */
let k = 0;
async function spend(usd: number) {
  await roost.usage.record([{ key: `k${++k}`, via: 'bridge', agent: AGENT, session: AGENT, team: 'backend', source: 'claude-code', model: 'claude-sonnet-4-5', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, vendorUsd: usd, ts: Date.now() }]);
}

async function budgetEvents(): Promise<any[]> {
  return (await roost.store.read('usage', 0, 100_000)).map((e) => JSON.parse(e.body)).filter((e) => String(e.type).startsWith('budget.'));
}

test("a team's day budget: crossing pauses the team's agent, the hooks deny its next call with the reason, the bridge refuses; a raise ends it at once", async () => {
  // The agent is on the floor in team backend (the hook's ?team=).
  assert.equal((await call('POST', '/hooks/claude-code?team=backend', { hook_event_name: 'SessionStart', session_id: SID, cwd: '/home/dev/shop', source: 'startup' })).status, 200);
  const set = await call('PUT', '/usage/budgets', { scope: 'team', target: 'backend', period: 'day', usd: 1 });
  assert.equal(set.status, 200, JSON.stringify(set.json));
  assert.equal(set.json.budget.key, 'team:backend:day');

  // Under the budget: the call runs (no decision from Roost).
  assert.deepEqual((await call('POST', '/hooks/claude-code?team=backend', preToolUse('ls'))).json, {});
  await spend(0.85);
  assert.deepEqual((await budgetEvents()).filter((e) => e.type === 'budget.crossed').map((e) => e.threshold), [80]);
  assert.deepEqual((await call('POST', '/hooks/claude-code?team=backend', preToolUse('ls'))).json, {}, '80% is a notice, not a pause');
  await spend(0.2);

  // Spent: the next tool call is denied with the reason the model reads.
  const denied = await call('POST', '/hooks/claude-code?team=backend', preToolUse('rm -rf build'));
  assert.equal(denied.json.hookSpecificOutput.permissionDecision, 'deny');
  assert.match(denied.json.hookSpecificOutput.permissionDecisionReason, /^budget for team backend reached: 1\.05 \$ of 1\.00 \$ today/);
  // The held approval hook too: denied at once, nothing waits for a person.
  const t0 = Date.now();
  const held = await call('POST', '/hooks/claude-code?team=backend&approvals=Bash&hold=1&request=budget-held-0001', preToolUse('make deploy'));
  assert.equal(held.json.hookSpecificOutput.permissionDecision, 'deny');
  assert.match(held.json.hookSpecificOutput.permissionDecisionReason, /budget for team backend reached/);
  assert.ok(Date.now() - t0 < 5000);
  // The command hook of a command-only install (`--observe`) passes the server's deny on to Claude Code.
  const printed = await new Promise<string>((ok, fail) => {
    const c = execFile(process.execPath, [join(PACKAGE_ROOT, 'bin', 'roost-hook.js'), 'claude-code', '--server', roost.url, '--team', 'backend', '--observe'], { timeout: 30_000 }, (e, out) => (e ? fail(e) : ok(out)));
    c.stdin!.end(JSON.stringify(preToolUse('git push')));
  });
  assert.match(JSON.parse(printed).hookSpecificOutput.permissionDecisionReason, /^budget for team backend reached/);
  const pending = (await call('GET', '/approvals')).json;
  assert.equal(JSON.stringify(pending).includes('make deploy'), false, 'no approval request was opened for it');
  // The floor shows the agent paused and why.
  const floor = (await call('GET', '/state')).json;
  const card = floor.agents.find((a: any) => a.id === AGENT);
  assert.match(card.activity, /^Paused: budget for team backend reached: 1\.05 \$ of 1\.00 \$ today/);
  // The budgets as the page reads them.
  const listed = (await call('GET', '/usage/budgets')).json.budgets;
  assert.deepEqual(listed.map((b: any) => [b.key, b.spent, b.limit, b.pausedNow]), [['team:backend:day', 1_050_000, 1_000_000, true]]);

  // `roost doctor` names the paused budget and fails.
  const doc = await runDoctor({ server: roost.url, home: tempDir(), dir: tempDir(), path: '', processes: () => [] });
  assert.ok(doc.problems.some((p) => p.level === 'fail' && /budget team:backend:day of project default: 1\.05 \$ of 1\.00 \$ today: its agents are paused/.test(p.message)), JSON.stringify(doc.problems));
  // The bridge takes no new command for the paused team (its sessions are booked to `fleet · <thread>`).
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'team', target: 'fleet · t1', usd: 0.5 })).status, 200);
  await roost.usage.record([{ key: 'fleet-1', via: 'bridge', agent: 'claude-code:fleet-s1', session: 'claude-code:fleet-s1', team: 'fleet · t1', source: 'claude-code', model: 'claude-sonnet-4-5', input: 1, output: 1, cacheRead: 0, cacheWrite: 0, vendorUsd: 0.6, ts: Date.now() }]);
  const refused = await call('POST', '/fleet/t1/requests', { type: 'request.start', id: 's2', session: 'next-job', flavor: 'scoped' });
  assert.equal(refused.status, 409);
  assert.match(refused.json.message, /the bridge takes no new command: budget for team fleet · t1 reached: 0\.60 \$ of 0\.50 \$/);
  const prompt = await call('POST', '/fleet/t1', [{ type: 'session.prompt', id: 's1', text: 'go on' }]);
  assert.equal(prompt.status, 409, JSON.stringify(prompt.json));
  assert.equal((await call('POST', '/fleet/t2/requests', { type: 'request.start', id: 's3', session: 'other', flavor: 'scoped' })).status, 200, 'another thread is not paused');

  // The owner raises the budget: the pause ends at once and the next call runs.
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'team', target: 'backend', period: 'day', usd: 5 })).status, 200);
  assert.deepEqual((await call('POST', '/hooks/claude-code?team=backend', preToolUse('ls'))).json, {});
  // And a lift (no raise) ends the fleet team's pause.
  const lift = await call('POST', '/usage/budgets/lift', { budget: 'team:fleet · t1:total' });
  assert.equal(lift.status, 200, JSON.stringify(lift.json));
  assert.equal((await call('POST', '/fleet/t1/requests', { type: 'request.start', id: 's4', session: 'next-job-2', flavor: 'scoped' })).status, 200);

  // Every change, crossing, pause and lift is an event, each written once, even as more usage arrives
  // (a budget passed at once has one crossing, 100, which implies 80).
  await spend(0.01);
  await spend(0.01);
  const ev = (await budgetEvents()).map((e) => `${e.type} ${e.budget ?? ''} ${e.threshold ?? e.why ?? ''}`.trim());
  assert.deepEqual(ev, [
    'budget.set',
    'budget.crossed team:backend:day 80',
    'budget.crossed team:backend:day 100',
    'budget.paused team:backend:day',
    'budget.set',
    'budget.crossed team:fleet · t1:total 100',
    'budget.paused team:fleet · t1:total',
    'budget.lifted team:backend:day raised',
    'budget.set',
    'budget.lifted team:fleet · t1:total lifted',
  ]);
});

test('budgets: hostile bodies are refused, a project holds at most USAGE_LIMITS.budgets (a removal makes room), lifting an unknown budget is a 404', async () => {
  for (const bad of [
    { scope: 'galaxy', usd: 1 },
    { scope: 'team', usd: 1 },
    { scope: 'team', target: 'x', usd: -1 },
    { scope: 'team', target: 'x', usd: 1, tokens: 5 },
    { scope: 'team', target: 'x' },
    { scope: 'team', target: 'x', period: 'day', usd: 1, tz: 'Mars/Olympus' },
    { scope: 'team', target: 'x', usd: 1, extra: true },
  ]) {
    const r = await call('PUT', '/usage/budgets', bad);
    assert.equal(r.status, 400, `${JSON.stringify(bad)} → ${r.status}`);
  }
  const have = (await call('GET', '/usage/budgets')).json.budgets.length;
  for (let i = have; i < USAGE_LIMITS.budgets; i++) assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: `claude-code:x${i}`, tokens: 1000 })).status, 200);
  const over = await call('PUT', '/usage/budgets', { scope: 'agent', target: 'claude-code:one-too-many', tokens: 1000 });
  assert.equal(over.status, 409);
  assert.match(over.json.message, /at most 50 budgets/);
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: 'claude-code:x49', tokens: 0 })).status, 200, '0 removes one');
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: 'claude-code:one-more', tokens: 1000 })).status, 200);
  assert.equal((await call('POST', '/usage/budgets/lift', { budget: 'team:nobody:total' })).status, 404);
});

test('a spent project budget: the flock flies nothing more (its model calls fail at once with the reason, no tokens); a raise lets it fly', async () => {
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: 'claude-code:one-more', tokens: 0 })).status, 200, 'room for one more');
  const spent = (await call('GET', '/usage')).json.state.project.costMicros as number;
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'project', usd: spent / 1_000_000 })).status, 200);
  const req = { system: 'you are a crow', messages: [{ role: 'user' as const, content: 'fly' }], maxTokens: 16 };
  const out = await roost.flock.call('crow', req, { crow: 'corvo', item_id: 'i-1' });
  assert.equal(out.ok, false);
  assert.match(!out.ok ? out.error.message : '', /^the flock flies nothing more: budget for project default reached: [\d.]+ \$ of [\d.]+ \$$/);
  assert.equal(out.usage.total, 0);
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'project', usd: 1000 })).status, 200);
  const after = await roost.flock.call('crow', req, { crow: 'corvo', item_id: 'i-1' });
  // This server has no model configured: the call now gets as far as that.
  assert.doesNotMatch(!after.ok ? after.error.message : '', /budget/);
});

test("a Work command to an agent whose budget is spent is refused with the reason; a raise lets it through", async () => {
  let n = 0;
  const post = async (path: string, body: unknown) => {
    const r = await fetch(roost.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': `budget-work-${++n}` }, body: JSON.stringify(body) });
    return { status: r.status, json: (await r.json()) };
  };
  const sp = await post('/api/v2/spaces', { name: 'laptop' });
  assert.equal(sp.status, 200, JSON.stringify(sp.json));
  const space = sp.json.id as string;
  assert.equal((await post('/api/v2/projects/default/spaces', { space })).status, 200);
  const sid = '0d6c7f0e-5a1b-4c2d-9e3f-4a5b6c7d8e9f';
  assert.equal((await post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [{ session: sid, label: 'fixer', origin: 'bridge' }] })).status, 200);
  const agent = `${space}:${sid}`;
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: 'claude-code:x48', tokens: 0 })).status, 200, 'room for one more');
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: `claude-code:${sid}`, tokens: 100 })).status, 200);
  await roost.usage.record([{ key: 'work-1', via: 'bridge', agent: `claude-code:${sid}`, session: `claude-code:${sid}`, team: 'laptop', source: 'claude-code', model: 'claude-sonnet-4-5', input: 100, output: 20, cacheRead: 0, cacheWrite: 0, ts: Date.now() }]);
  const refused = await post('/api/v2/commands?project=default', { agent, text: 'run the tests' });
  assert.equal(refused.status, 409, JSON.stringify(refused.json));
  assert.match(refused.json.message, new RegExp(`^cannot send to ${agent}: budget for agent claude-code:${sid} \\(with its sub-agents\\) reached: 120 tokens of 100 tokens$`));
  assert.equal((await call('PUT', '/usage/budgets', { scope: 'agent', target: `claude-code:${sid}`, tokens: 10_000 })).status, 200);
  assert.equal((await post('/api/v2/commands?project=default', { agent, text: 'run the tests' })).status, 200);
});
