// Budgets that act (issue 31, docs/integrations.md "Budgets"): the time from
// a budget crossing to the next tool call denied. Each sample: the owner
// raises a team's budget just above what the team has spent (the pause
// ends); then one model request that crosses it is booked (its usage
// appended and folded, the crossing and the pause written), and the team's
// agent makes its next tool call: a Claude Code PreToolUse hook posted over
// HTTP. The sample is the time from the booking's start to the deny in hand.
// A call not denied with the budget's reason fails the run.
//
//   node dist/bench/budget.js [samples]    # prints one JSON line
//
// The server is in this process (SQLite in a temp folder), the hook a real
// HTTP request to it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';

const SAMPLES = Number(process.argv[2] ?? 300);
const SID = 'b0d9e7a1-0000-4000-8000-00000000beef';
const AGENT = `claude-code:${SID}`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'roost-bench-budget-'));
  const roost = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0 });
  const hook = async (body: Record<string, unknown>) => {
    const r = await fetch(`${roost.url}/hooks/claude-code?team=bench`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await r.json()) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
  };
  try {
    await hook({ hook_event_name: 'SessionStart', session_id: SID, cwd: '/home/dev/bench', source: 'startup' });
    const pre = { hook_event_name: 'PreToolUse', session_id: SID, cwd: '/home/dev/bench', tool_name: 'Bash', tool_input: { command: 'make test' } };
    const ms: number[] = [];
    let spentMicros = 0;
    for (let i = 0; i < SAMPLES + 20; i++) {
      // Raise the team's budget 1 $ above its spend: the pause (if any) ends.
      await roost.usage.setBudgetOf({ scope: 'team', target: 'bench', period: 'total', unit: 'usd', limit: spentMicros + 1_000_000 }, 'bench');
      const t0 = performance.now();
      await roost.usage.record([{ key: `r${i}`, via: 'bridge', agent: AGENT, session: AGENT, team: 'bench', source: 'claude-code', model: 'claude-sonnet-4-5', input: 1000, output: 100, cacheRead: 0, cacheWrite: 0, vendorUsd: 1.5, ts: Date.now() }]);
      const a = await hook(pre);
      const dt = performance.now() - t0;
      spentMicros += 1_500_000;
      if (a.hookSpecificOutput?.permissionDecision !== 'deny' || !/^budget for team bench reached/.test(a.hookSpecificOutput.permissionDecisionReason ?? '')) throw new Error(`sample ${i}: not denied: ${JSON.stringify(a)}`);
      if (i >= 20) ms.push(dt); // the first 20 warm up
    }
    ms.sort((x, y) => x - y);
    const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
    console.log(JSON.stringify({ samples: ms.length, p50: q(0.5), p99: q(0.99), max: ms[ms.length - 1] }));
  } finally {
    await roost.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
