// Approvals on two nodes sharing one PostgreSQL database: a tool call held on
// one node is released by a decision made on the other (the wake-up comes
// from the log, not from the decision handler); two people deciding at once
// on different nodes get one winner and one 409; expiry is logged once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { child } from './support/server.js';
import { need } from './support/env.js';
import { PG_URL, pgReachable, sql } from './support/pg.js';
import { until as waitUntil } from './support/until.js';
import { PRE_BASH, postJson, twoPgNodes } from './support/held-hooks.js';

const reachable = await pgReachable();

async function pendingOn(url: string): Promise<any[]> {
  return ((await (await fetch(url + '/approvals')).json())).pending;
}

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 15_000) => waitUntil<T>(what, f, ms, 30);

describe('approvals on two nodes', { timeout: 90_000 }, () => {
  const nodes = twoPgNodes('roost_approvals', reachable);

  test('held on node A, decided on node B: A answers; concurrent decisions on both nodes have one winner', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const { a, b } = nodes;
    const held = postJson(`${a.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1`, PRE_BASH);
    const [p] = await until('the held call pending on the other node', async () => {
      const l = await pendingOn(b.url);
      return l.length ? l : undefined;
    });
    // Two people, two nodes, the same moment.
    const [x, y] = await Promise.all([
      postJson(`${a.url}/approvals/${p.id}/decision`, { decision: 'allow', by: 'ann' }),
      postJson(`${b.url}/approvals/${p.id}/decision`, { decision: 'deny', by: 'ben' }),
    ]);
    assert.deepEqual([x.status, y.status].sort(), [200, 409], 'one winner, one conflict');
    const winner = x.status === 200 ? x.json.approval : y.json.approval;
    const answer = (await held).json.hookSpecificOutput;
    assert.equal(answer.permissionDecision, winner.status === 'allowed' ? 'allow' : 'deny', 'the hook got the winning decision');
    assert.match(answer.permissionDecisionReason, new RegExp(`by ${winner.decidedBy}`));
    // Both nodes folded the same outcome.
    for (const n of [a, b]) {
      const got = await until(`the decision on ${n.url}`, async () => (((await (await fetch(`${n.url}/approvals/${p.id}`)).json())).status !== 'pending' ? ((await (await fetch(`${n.url}/approvals/${p.id}`)).json())) : undefined));
      assert.equal(got.decidedBy, winner.decidedBy);
    }
  });

  test('a node that starts later does not take a request another node holds for orphaned; when that node dies, the request is withdrawn and a decision is 409', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const { a, b, db } = nodes;
    const held = postJson(`${a.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1`, { ...PRE_BASH, tool_use_id: 'toolu_node' }).catch(() => null);
    const [p] = await until('the held call pending on the other node', async () => {
      const l = (await pendingOn(b.url)).filter((x) => x.holder);
      return l.length ? l : undefined;
    });
    // A third node starts: it has heard nobody yet, and must not judge A's hook gone.
    const c = await child({ args: ['--db', db.url] });
    try {
      await new Promise((ok) => setTimeout(ok, 2500));
      assert.equal((await (await fetch(`${c.url}/approvals/${p.id}`)).json()).status, 'pending', 'A still holds it: nobody withdrew it');
      // A dies with the hook's connection: the other nodes stop hearing it and withdraw the request.
      const t0 = Date.now();
      await a.stop('SIGKILL');
      await held;
      const got = await until('the request withdrawn on B', async () => {
        const x = (await (await fetch(`${b.url}/approvals/${p.id}`)).json());
        return x.status !== 'pending' ? x : undefined;
      });
      console.log(`# node holding the hook killed: withdrawn on another node after ${Date.now() - t0} ms`);
      assert.equal(got.status, 'withdrawn');
      assert.equal((await postJson(`${c.url}/approvals/${p.id}/decision`, { decision: 'allow' })).status, 409);
      const rows = await sql<{ n: string }>(`select count(*)::text as n from ${db.schema}.events where stream = 'approvals' and type = 'approval.withdrawn' and body like $1`, [`%${p.id}%`]);
      assert.equal(rows[0].n, '1', 'two nodes noticed; the withdrawal is in the log once');
    } finally {
      await c.stop('SIGKILL');
      nodes.a = await child({ args: ['--db', db.url] });
    }
  });

  test('a window that passes with both nodes up is expired once, and the hook is denied', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const { b, db } = nodes;
    const r = await postJson(`${b.url}/hooks/claude-code?approvals=all&window=1500&hold=1`, { ...PRE_BASH, tool_use_id: 'toolu_exp' });
    assert.equal(r.json.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(r.json.hookSpecificOutput.permissionDecisionReason, /No decision in Roost within 1500ms/);
    await new Promise((ok) => setTimeout(ok, 500));
    const rows = await sql<{ n: string }>(`select count(*)::text as n from ${db.schema}.events where stream = 'approvals' and type = 'approval.expired'`);
    assert.equal(rows[0].n, '1', 'both nodes’ timers fired; the expiry is in the log once');
  });
});
