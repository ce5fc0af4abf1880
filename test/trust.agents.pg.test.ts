// Earned trust through two nodes sharing one PostgreSQL database (issue 30):
// trust earned on node A (three people's allows of `npm test`, or an owner's
// "Allow and trust this class" of `make lint`) lets node B answer the same
// team's next such call at once, by trust: the ledger is the log, and every
// node folds it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { need } from './support/env.js';
import { PG_URL, pgReachable } from './support/pg.js';
import { until as waitUntil } from './support/until.js';
import { holdBash, holdQuery, postJson, twoPgNodes } from './support/held-hooks.js';

const reachable = await pgReachable();
const HOLD = holdQuery('alpha', 60_000);

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 20_000) => waitUntil<T>(what, f, ms, 30);

const run = (node: string, command: string): Promise<any> => holdBash(node, command, HOLD);

async function waiting(node: string, command: string): Promise<any> {
  return until(`${command} waiting on ${node}`, async () => ((await (await fetch(node + '/approvals')).json()) as { pending: any[] }).pending.find((a) => a.input.includes(command)));
}

async function levelOn(node: string, cls: string): Promise<number> {
  const j = (await (await fetch(node + '/api/trust')).json()) as { agents: { holders: { team: string; action_class: string; level: number }[] } };
  return j.agents.holders.find((h) => h.team === 'alpha' && h.action_class === cls)?.level ?? -1;
}

describe('earned trust on two nodes', { timeout: 120_000 }, () => {
  const nodes = twoPgNodes('roost_trust', reachable);

  test('trust earned on node A auto-allows on node B', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const { a, b } = nodes;
    const on = await fetch(a.url + '/api/trust/agents', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on: true }) });
    assert.equal(on.status, 200);
    for (let i = 0; i < 3; i++) {
      const held = run(a.url, 'npm test');
      const p = await waiting(a.url, 'npm test');
      assert.equal((await postJson(`${a.url}/approvals/${p.id}/decision`, { decision: 'allow', by: 'ann' })).status, 200);
      assert.equal((await held).hookSpecificOutput.permissionDecision, 'allow');
    }
    await until('node B folded the trust earned on A', async () => ((await levelOn(b.url, 'npm test')) === 2 ? true : undefined));
    const auto = await run(b.url, 'npm test');
    assert.equal(auto.hookSpecificOutput.permissionDecision, 'allow');
    assert.match(auto.hookSpecificOutput.permissionDecisionReason, /Allowed by trust/);

    // An owner's "Allow and trust this class" on A: B runs the next one on trust too.
    const held = run(a.url, 'make lint');
    const p = await waiting(a.url, 'make lint');
    assert.equal((await postJson(`${a.url}/approvals/${p.id}/trust`, {})).status, 200);
    assert.equal((await held).hookSpecificOutput.permissionDecision, 'allow');
    await until('node B folded the owner\'s raise', async () => ((await levelOn(b.url, 'make lint')) === 2 ? true : undefined));
    assert.equal((await run(b.url, 'make lint')).hookSpecificOutput.permissionDecision, 'allow');
  });
});
