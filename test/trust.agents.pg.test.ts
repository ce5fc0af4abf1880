// Earned trust through two nodes sharing one PostgreSQL database (issue 30):
// trust earned on node A (three people's allows of `npm test`, or an owner's
// "Allow and trust this class" of `make lint`) lets node B answer the same
// team's next such call at once, by trust: the ledger is the log, and every
// node folds it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { child, type ChildServer } from './support/server.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { until as waitUntil } from './support/until.js';

const reachable = await pgReachable();
const PRE_BASH = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8'));
const HOLD = '/hooks/claude-code?approvals=Bash&window=60000&hold=1&team=alpha';

async function postJson(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 20_000) => waitUntil<T>(what, f, ms, 30);

function run(node: string, command: string): Promise<any> {
  return postJson(node + HOLD, { ...PRE_BASH, tool_input: { command }, tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` }).then((r) => r.json);
}

async function waiting(node: string, command: string): Promise<any> {
  return until(`${command} waiting on ${node}`, async () => ((await (await fetch(node + '/approvals')).json()) as { pending: any[] }).pending.find((a) => a.input.includes(command)));
}

async function levelOn(node: string, cls: string): Promise<number> {
  const j = (await (await fetch(node + '/api/trust')).json()) as { agents: { holders: { team: string; action_class: string; level: number }[] } };
  return j.agents.holders.find((h) => h.team === 'alpha' && h.action_class === cls)?.level ?? -1;
}

describe('earned trust on two nodes', { timeout: 120_000 }, () => {
  const db = freshSchema('roost_trust');
  let a: ChildServer;
  let b: ChildServer;
  before(async () => {
    if (!reachable) return;
    [a, b] = await Promise.all([child({ args: ['--db', db.url] }), child({ args: ['--db', db.url] })]);
  });
  after(async () => {
    for (const s of [a, b]) await s?.stop('SIGKILL');
    if (reachable) await db.drop();
  });

  test('trust earned on node A auto-allows on node B', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
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
