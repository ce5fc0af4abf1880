// Earned trust for coding agents' tool calls (issue 30 point 3), over real
// HTTP in shared mode, with the command hook's held request as Claude Code's
// hook sends it (`POST /hooks/claude-code?hold=1`): the one ledger judges a
// team's calls per action class; three allows by a person and the fourth is
// allowed by trust at once; `git push` waits every time; a second session of
// the team starts trusted, another team does not; a person revokes it; the
// agent's own token can neither decide its requests nor raise its trust.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';
import { until } from './support/until.js';

let srv: SharedServer;
let bob: Caller;
let agent: Caller;

before(async () => {
  srv = await sharedServer({});
  bob = await makeUser(srv, 'bob', 'default', 'editor');
  agent = await mintToken(srv, bob, 'default', 'editor', 'hook');
});
after(async () => {
  await srv.close();
});

let n = 0;

/** One held tool call, as the command hook posts it; resolves with the hook's answer. */
function hook(team: string, session: string, command: string): Promise<{ status: number; json: any }> {
  const payload = { session_id: session, cwd: '/home/dev/shop', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: `toolu_${++n}` };
  return fetch(`${srv.url}/hooks/claude-code?approvals=Bash&hold=1&window=60000&team=${team}&request=req-${n}-abcdefgh`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  }).then(async (r) => ({ status: r.status, json: await r.json() }));
}

async function pendingFor(session: string, command: string): Promise<any> {
  let seen: unknown = null;
  return until(`${command} waiting`, async () => {
    const r = await call(srv.url, bob, 'GET', '/approvals?recent=3');
    seen = r.json;
    return r.json.pending.find((a: any) => a.scope.session === `claude-code:${session}` && a.detail?.command === command);
  }, 20_000).catch((e: Error) => {
    throw new Error(`${e.message}; the inbox: ${JSON.stringify(seen).slice(0, 1500)}`);
  });
}

/** A held call decided by Bob; the hook's answer. */
async function decided(team: string, session: string, command: string, decision: 'allow' | 'deny', reason?: string): Promise<any> {
  const h = hook(team, session, command);
  const a = await pendingFor(session, command);
  const r = await call(srv.url, bob, 'POST', `/approvals/${a.id}/decision`, { decision, ...(reason ? { reason } : {}) });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return (await h).json;
}

const permission = (j: any) => j.hookSpecificOutput?.permissionDecision;
const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const S3 = '33333333-3333-4333-8333-333333333333';

test('earned trust: off by default, on by an owner; three allows, then the fourth by trust; git push waits every time; teams apart; a person revokes', async () => {
  // Off: three allows earn nothing, and the fourth waits.
  for (let i = 0; i < 3; i++) assert.equal(permission(await decided('alpha', S1, 'npm test', 'allow')), 'allow');
  let ledger = (await call(srv.url, bob, 'GET', '/api/trust')).json;
  assert.equal(ledger.agents.on, false);
  assert.deepEqual(ledger.agents.holders, []);
  assert.deepEqual(ledger.agents.never, ['git push', 'rm', 'sudo']);
  // Only an owner turns it on; the agent's token cannot.
  assert.equal((await call(srv.url, agent, 'PUT', '/api/trust/agents', { on: true })).status, 403);
  assert.equal((await call(srv.url, bob, 'PUT', '/api/trust/agents', { on: true })).status, 403);
  assert.equal((await call(srv.url, srv.owner, 'PUT', '/api/trust/agents', { on: true })).status, 200);

  // The agent's own token cannot decide its own request.
  const own = hook('alpha', S1, 'npm test');
  const waiting = await pendingFor(S1, 'npm test');
  assert.equal(waiting.actionClass, 'npm test');
  const self = await call(srv.url, agent, 'POST', `/approvals/${waiting.id}/decision`, { decision: 'allow' });
  assert.equal(self.status, 403, JSON.stringify(self.json));
  assert.equal((await call(srv.url, bob, 'POST', `/approvals/${waiting.id}/decision`, { decision: 'allow' })).status, 200);
  assert.equal(permission((await own).json), 'allow');
  // Two more by Bob: a (team, class) starts regular, so three approvals in a row make it trusted.
  for (let i = 0; i < 2; i++) await decided('alpha', S1, 'npm test -- --watch=false', 'allow');
  ledger = (await call(srv.url, bob, 'GET', '/api/trust')).json;
  const alpha = ledger.agents.holders.find((h: any) => h.team === 'alpha' && h.action_class === 'npm test');
  assert.equal(alpha.level_name, 'trusted');
  assert.deepEqual(ledger.agents.history.map((c: any) => [c.from, c.to]), [[1, 2]]);
  assert.deepEqual(ledger.agents.history[0].because.map((b: any) => b.by), ['Bob', 'Bob', 'Bob']);

  // The next npm test is allowed at once, by trust, with the level and the three decisions that earned it.
  const auto = await hook('alpha', S1, 'npm test');
  assert.equal(permission(auto.json), 'allow');
  assert.match(auto.json.hookSpecificOutput.permissionDecisionReason, /Allowed by trust/);
  const recent = (await call(srv.url, bob, 'GET', '/approvals?recent=5')).json.recent;
  const byTrust = recent.find((a: any) => a.decidedBy === 'trust');
  assert.ok(byTrust, 'the approval is written as decided by trust');
  assert.equal(byTrust.trust.level, 2);
  assert.equal(byTrust.trust.because.length, 3);

  // git push waits every time, even after ten approvals.
  for (let i = 0; i < 10; i++) await decided('alpha', S1, 'git push origin main', 'allow');
  const push = hook('alpha', S1, 'git push origin main');
  const p = await pendingFor(S1, 'git push origin main');
  assert.match(p.barred, /git push/);
  assert.equal((await call(srv.url, agent, 'POST', `/approvals/${p.id}/trust`, {})).status, 403, 'the agent cannot allow and trust its own call');
  assert.equal((await call(srv.url, bob, 'POST', `/approvals/${p.id}/decision`, { decision: 'deny' })).status, 200);
  assert.equal(permission((await push).json), 'deny');

  // A second session of the same team starts trusted; another team does not.
  assert.equal(permission((await hook('alpha', S2, 'npm test')).json), 'allow');
  const beta = hook('beta', S3, 'npm test');
  const b = await pendingFor(S3, 'npm test');
  assert.equal((await call(srv.url, bob, 'POST', `/approvals/${b.id}/decision`, { decision: 'deny', reason: 'not this team' })).status, 200);
  assert.match((await beta).json.hookSpecificOutput.permissionDecisionReason, /not this team/, 'the note reaches the model as the reason');

  // A person revokes the trust that allowed a call: the holder drops a level and the next call waits.
  assert.equal((await call(srv.url, agent, 'POST', `/approvals/${byTrust.id}/revoke`, {})).status, 403, 'never the agent itself');
  const rv = await call(srv.url, bob, 'POST', `/approvals/${byTrust.id}/revoke`, { reason: 'ran the wrong suite' });
  assert.equal(rv.status, 200, JSON.stringify(rv.json));
  assert.deepEqual([rv.json.from, rv.json.to], [2, 1]);
  const next = hook('alpha', S2, 'npm test');
  const w = await pendingFor(S2, 'npm test');
  // A deny drops it once more.
  assert.equal((await call(srv.url, bob, 'POST', `/approvals/${w.id}/decision`, { decision: 'deny' })).status, 200);
  assert.equal(permission((await next).json), 'deny');
  const h = await call(srv.url, bob, 'GET', `/api/trust/alpha/history?action_class=${encodeURIComponent('npm test')}`);
  assert.equal(h.status, 200);
  assert.equal(h.json.level, 0);
  assert.deepEqual(h.json.history.map((c: any) => [c.from, c.to, c.by ?? '']), [[1, 2, ''], [2, 1, 'Bob'], [1, 0, '']]);
  assert.equal(h.json.history[1].reason, 'ran the wrong suite');
  assert.equal((await call(srv.url, bob, 'GET', '/api/trust/gamma/history?action_class=ls')).status, 404);
});

test('decisions in bulk: many waiting calls across sessions denied in one action with a note, through the one decide path; one decided first by someone else is a 409 for that item', async () => {
  const sessions = ['44444444-4444-4444-8444-444444444444', '55555555-5555-4555-8555-555555555555'];
  const hooks: Promise<{ status: number; json: any }>[] = [];
  const cmds: [string, string][] = [];
  for (let i = 0; i < 6; i++) {
    const s = sessions[i % 2];
    const c = `make target${i}`;
    cmds.push([s, c]);
    hooks.push(hook(i % 2 ? 'gamma' : 'delta', s, c));
  }
  const ids: string[] = [];
  for (const [s, c] of cmds) ids.push((await pendingFor(s, c)).id);
  // Someone else is faster on one of them.
  assert.equal((await call(srv.url, srv.owner, 'POST', `/approvals/${ids[2]}/decision`, { decision: 'allow' })).status, 200);
  // The agent's own token may not decide them in bulk either.
  const own = await call(srv.url, agent, 'POST', '/approvals/decisions', { ids: [ids[0]], decision: 'allow' });
  assert.deepEqual(own.json.results.map((r: any) => r.status), [403]);
  const r = await call(srv.url, bob, 'POST', '/approvals/decisions', { ids, decision: 'deny', reason: 'wrong branch: rebase first' });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.decided, 5);
  assert.deepEqual(r.json.results.map((x: any) => x.status), [200, 200, 409, 200, 200, 200]);
  assert.match(r.json.results[2].message, /allowed by Ann/);
  const answers = await Promise.all(hooks);
  assert.deepEqual(answers.map((a) => permission(a.json)), ['deny', 'deny', 'allow', 'deny', 'deny', 'deny']);
  assert.match(answers[0].json.hookSpecificOutput.permissionDecisionReason, /wrong branch: rebase first/);
  assert.equal((await call(srv.url, bob, 'POST', '/approvals/decisions', { ids: Array.from({ length: 201 }, (_, i) => `ap_${i}`), decision: 'deny' })).status, 400);
});
