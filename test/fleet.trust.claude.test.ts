// Earned trust on the fleet board (issue 30, "one mechanism each"): a board
// session's tool call, held by `roost bridge` for a person, is judged by the
// same ledger as a coding agent's hook. Real server, the real bridge (a child
// process), the real Claude Code CLI and the model stand-in:
// - trust off (the default): a call waits for a person;
// - trust on: three `npm test` calls allowed by a person, the fourth allowed
//   by `trust` with no person (the level and the three decisions that earned
//   it on the record, the board showing it allowed by trust), and the model
//   sees the command's output;
// - `git push` waits for a person, trusted team or not.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answer, tempDir } from './support/server.js';
import { step, text, toolUse, hasResult, and, not, offersTool, toolResults, askedWithBash as asked } from './support/model-standin.js';
import { until } from './support/until.js';
import { killBridges } from './support/bridge.js';
import { decide } from './support/approvals-http.js';
import { THREAD, approvals, board, boardApproval } from './support/race.js';
import { needBoardBridge, nextPending, withBoardBridge } from './support/board-bridge.js';

after(killBridges);

const id = (i: number) => `toolu_npmtest${i}`;

test('a board session earns trust: three npm test allowed by a person, the fourth by trust; git push waits', { timeout: 120_000 }, async (t) => {
  if (!needBoardBridge(t)) return;
  const root = tempDir('roost-fleet-trust-root-');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', scripts: { test: 'echo tests-passed-here' } }));
  const calls = 6; // 0: trust off; 1-3: a person allows; 4: by trust; then git push
  const script = [
    ...Array.from({ length: calls }, (_, i) =>
      step(toolUse('Bash', { command: 'npm test', description: `tests ${i}` }, id(i)), i === 0 ? and(asked('PROMPT-TRUST'), not(hasResult(id(0)))) : and(offersTool('Bash'), hasResult(id(i - 1)), not(hasResult(id(i))))),
    ),
    step(toolUse('Bash', { command: 'git push origin main', description: 'push' }, 'toolu_push'), and(offersTool('Bash'), hasResult(id(calls - 1)), not(hasResult('toolu_push')))),
    step(text('Done.'), and(offersTool('Bash'), hasResult('toolu_push'))),
  ];
  await withBoardBridge({ root, home: tempDir('roost-fleet-trust-home-'), script, window: '60s', session: 'tests' }, async ({ roost, model }) => {
    const seen = new Set<string>();
    const next = (what: string) => nextPending(roost.url, seen, what);
    const result = (i: number | string) => until(`the result of ${i}`, () => model.requests.flatMap(toolResults).find((r) => r.tool_use_id === (typeof i === 'number' ? id(i) : i)), 30_000, 20);
    assert.equal((await board(roost.url, { type: 'session.prompt', id: 's1', text: 'PROMPT-TRUST go' }, 'Paul')).status, 200);

    // Trust is off by default: the call waits for a person (and a person's allow earns nothing while off).
    const off = await next('call 0 waiting (trust off)');
    assert.equal(off.tool, 'Bash');
    assert.equal((await decide(roost.url, off.id, 'allow', 'Ana')).status, 200);
    await result(0);

    const on = await answer(await fetch(`${roost.url}/api/trust/agents`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on: true }) }));
    assert.equal(on.status, 200, JSON.stringify(on.json));

    // Three allowed by a person.
    const byPerson: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const a = await next(`call ${i} waiting`);
      assert.equal((await decide(roost.url, a.id, 'allow', 'Ana')).status, 200);
      byPerson.push(a.id);
      const r = await result(i);
      assert.equal(r.is_error, false, `call ${i} ran`);
    }

    // The fourth: allowed by trust, nobody deciding; the model sees the command's output.
    const told = await result(4);
    assert.equal(told.is_error, false);
    assert.match(told.content, /tests-passed-here/, 'the model sees the output of npm test');
    const rec = (await approvals(roost.url)).recent.find((r) => r.kind === 'fleet' && r.status === 'allowed' && r.decidedBy === 'trust');
    assert.ok(rec, 'an approval decided by trust');
    assert.equal(rec.actionClass, 'npm test');
    assert.equal(rec.team, `fleet · ${THREAD}`);
    assert.equal(rec.trust.level, 2);
    assert.deepEqual(
      rec.trust.because.map((b: { approval: string; verdict: string; by: string }) => [b.approval, b.verdict, b.by]),
      byPerson.map((x) => [x, 'approved', 'Ana']),
      'the three decisions that earned it',
    );
    const shown = await until('the board shows it allowed by trust', async () => {
      const b = await boardApproval(roost.url, rec.scope.rid);
      return b?.state === 'allowed' ? b : undefined;
    }, 10_000, 20);
    assert.equal(shown.by, 'trust');
    assert.ok(!seen.has(rec.id), 'it never waited');

    // The fifth too (still trusted); the ledger shows the board's team at trusted.
    assert.equal((await result(5)).is_error, false);
    const ledger = (await (await fetch(`${roost.url}/api/trust`)).json()) as { agents: { holders: { team: string; action_class: string; level: number }[] } };
    assert.equal(ledger.agents.holders.find((h) => h.team === `fleet · ${THREAD}` && h.action_class === 'npm test')?.level, 2);

    // git push waits for a person, even for a trusted team.
    const push = await next('git push waiting');
    assert.match(push.input, /git push/);
    assert.ok(push.barred, 'git push never runs on trust');
    assert.equal((await decide(roost.url, push.id, 'deny', 'Ana')).status, 200);
    assert.equal((await result('toolu_push')).is_error, true);
    await until('the answer after the push', () => model.scripted().some((r) => hasResult('toolu_push')(r)), 30_000);
  });
});
