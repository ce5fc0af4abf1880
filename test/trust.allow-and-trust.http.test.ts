// "Allow and trust this class" over HTTP (issue 30 point 4, docs/approvals.md
// "Earned trust"): one owner's action allows a waiting call through the one
// decide path and raises its team's action class to trusted, as one
// `trust.changed` naming the call and the owner; the next such call runs on
// trust with nobody deciding. A class that never runs on trust, and a call
// someone else decided first, are 409s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { until } from './support/until.js';
import { approvalsOf, decide, pendingOf } from './support/approvals-http.js';
import { holdBash, postJson } from './support/held-hooks.js';
import type { Roost } from '../src/server/index.js';


let srv: Roost;
before(async () => {
  srv = await inProcess();
});
after(async () => {
  await srv?.close();
});

const run = (command: string): Promise<any> => holdBash(srv.url, command);
const post = (path: string, body: unknown) => postJson(srv.url + path, body);

const waiting = (cmd: string) => until(`${cmd} waiting`, async () => (await pendingOf(srv.url)).find((a) => a.input.includes(cmd)), 10_000);

test('"Allow and trust this class" allows the call and makes its team trusted at its class in one action; the next call runs on trust', async () => {
  const held = run('npm test');
  const a = await waiting('npm test');
  // Trust is off until an owner turns it on.
  assert.equal((await post(`/approvals/${a.id}/trust`, {})).status, 409);
  const on = await fetch(srv.url + '/api/trust/agents', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on: true }) });
  assert.equal(on.status, 200);

  const r = await post(`/approvals/${a.id}/trust`, { reason: 'our own test suite' });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.deepEqual([r.json.team, r.json.action_class, r.json.from, r.json.to], ['alpha', 'npm test', 1, 2]);
  assert.equal(r.json.approval.status, 'allowed');
  assert.equal((await held).hookSpecificOutput.permissionDecision, 'allow');

  // The next npm test is allowed at once, by trust, and names the owner's action as what earned it.
  const next = await run('npm test');
  assert.equal(next.hookSpecificOutput.permissionDecision, 'allow');
  const byTrust = (await approvalsOf(srv.url)).recent.find((x: any) => x.decidedBy === 'trust');
  assert.ok(byTrust);
  assert.deepEqual(byTrust.trust.because.map((b: any) => [b.approval, b.by]), [[a.id, r.json.by]]);

  // One audited change with its actor and reason.
  const h = (await (await fetch(srv.url + `/api/trust/alpha/history?action_class=${encodeURIComponent('npm test')}`)).json());
  assert.equal(h.level, 2);
  assert.deepEqual(h.history.map((c: any) => [c.from, c.to, c.by, c.reason]), [[1, 2, r.json.by, 'our own test suite']]);

  // Someone else decided first: a 409, and the class is not raised by it.
  const other = run('make lint');
  const b = await waiting('make lint');
  assert.equal((await decide(srv.url, b.id, 'deny', 'Ann')).status, 200);
  const late = await post(`/approvals/${b.id}/trust`, {});
  assert.equal(late.status, 409);
  assert.match(late.json.message, /Ann/);
  assert.equal((await other).hookSpecificOutput.permissionDecision, 'deny');

  // git push never runs on trust: 409, and the call still waits for a person.
  const push = run('git push origin main');
  const p = await waiting('git push');
  const refused = await post(`/approvals/${p.id}/trust`, {});
  assert.equal(refused.status, 409);
  assert.match(refused.json.message, /never runs on trust/);
  assert.equal((await pendingOf(srv.url)).some((x) => x.id === p.id), true, 'still waiting');
  assert.equal((await decide(srv.url, p.id, 'deny', 'Ann')).status, 200);
  assert.equal((await push).hookSpecificOutput.permissionDecision, 'deny');
});
