// Decisions the bridge can no longer honour (issue 17, part 4), with the real
// bridge (`roost bridge`, a child process), the real Claude Code CLI and the
// model stand-in, on one node:
// - an allow and a deny posted at the same moment: exactly one answers 200,
//   the other 409, whichever path each takes (POST /approvals/:id/decision or
//   the board's own `session.approval` post), and the winner is what happened
//   (the command ran if and only if the allow won);
// - a decision posted after the bridge's hook has already denied the call on
//   its own (its window ran out; the bridge was killed, so the hook could not
//   reach it) is refused with 409, the board shows the denial, and the
//   command never ran.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './support/server.js';
import { step, text, toolUse, hasResult, and, not, offersTool, toolResults, askedWithBash as asked } from './support/model-standin.js';
import { until } from './support/until.js';
import { killBridges, startBridge } from './support/bridge.js';
import { decide } from './support/approvals-http.js';
import { PATHS, RACES, approvals, board, boardApproval, decision, raceScript } from './support/race.js';
import { needBoardBridge, nextPending, withBoardBridge } from './support/board-bridge.js';

after(killBridges);

test('an allow and a deny posted at the same moment: exactly one is 200, the other 409, and the winner is what happened', { timeout: 90_000 }, async (t) => {
  if (!needBoardBridge(t)) return;
  const root = tempDir('roost-race-root-');
  const id = (i: number) => `toolu_race${i}`;
  await withBoardBridge({ root, home: tempDir('roost-race-home-'), script: raceScript('PROMPT-RACE', id), window: '60s', session: 'race' }, async ({ roost, model }) => {
    assert.equal((await board(roost.url, { type: 'session.prompt', id: 's1', text: 'PROMPT-RACE go' }, 'Paul')).status, 200);
    const rounds: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < RACES; i++) {
      // Pending, and on the board too (until the bridge puts it there, the board's path is 404).
      const a = await nextPending(roost.url, seen, `request ${i} pending`);
      const [pa, pb] = PATHS[i % PATHS.length];
      // Allow first in even rounds, deny first in odd ones: both leave at the same moment either way.
      const allowFirst = i % 2 === 0;
      const [x, y] = await Promise.all([decision(roost.url, pa, a, allowFirst, 'Ana').go(), decision(roost.url, pb, a, !allowFirst, 'Bob').go()]);
      const allow = allowFirst ? x : y;
      const deny = allowFirst ? y : x;
      assert.deepEqual([allow.status, deny.status].sort(), [200, 409], `round ${i} (${pa} vs ${pb}): ${JSON.stringify([allow.json, deny.json])}`);
      const allowWon = allow.status === 200;
      // What happened is what won: the board, the approvals record, the command and what the model was told.
      const rec = await until(`round ${i} recorded`, async () => (await approvals(roost.url)).recent.find((r) => r.id === a.id && r.status !== 'pending'), 10_000, 20);
      assert.equal(rec.status, allowWon ? 'allowed' : 'denied', `round ${i}`);
      assert.equal(rec.decidedBy, allowWon ? (allowFirst ? 'Ana' : 'Bob') : allowFirst ? 'Bob' : 'Ana');
      const shown = await until(`round ${i} on the board`, async () => {
        const b = await boardApproval(roost.url, a.scope.rid);
        return b && b.state !== 'pending' ? b : undefined;
      }, 10_000, 20);
      assert.deepEqual([shown.state, shown.by], [rec.status, rec.decidedBy], `round ${i}: the board shows the one outcome`);
      const told = await until(`round ${i}: the tool's result`, () => model.requests.flatMap(toolResults).find((r) => r.tool_use_id === id(i)), 30_000, 20);
      assert.equal(told.is_error, !allowWon, `round ${i}: the model was told ${allowWon ? 'it ran' : 'it was denied'}`);
      assert.equal(existsSync(join(root, `ran-${i}`)), allowWon, `round ${i}: the command ran if and only if the allow won`);
      rounds.push(`${pa}/${pb}:${allowWon ? 'allow' : 'deny'}`);
    }
    t.diagnostic(`${RACES} races, one 200 and one 409 each: ${rounds.join(' ')}`);
    await until('the answer after the last race', () => model.scripted().some((r) => hasResult(id(RACES - 1))(r)), 30_000);
  });
});

test('a decision after the hook already denied on its own is refused: the window ran out, or the bridge was killed', { timeout: 90_000 }, async (t) => {
  if (!needBoardBridge(t)) return;
  const root = tempDir('roost-late-root-');
  const script = [
    step(toolUse('Bash', { command: 'touch ran-window', description: 'unanswered' }, 'toolu_window'), and(asked('PROMPT-WINDOW'), not(hasResult('toolu_window')))),
    step(text('Not run.'), and(offersTool('Bash'), hasResult('toolu_window'))),
    step(toolUse('Bash', { command: 'touch ran-killed', description: 'asked of a bridge about to die' }, 'toolu_killed'), and(asked('PROMPT-KILLED'), not(hasResult('toolu_killed')))),
    step(text('Not run either.'), and(offersTool('Bash'), hasResult('toolu_killed'))),
  ];
  await withBoardBridge({ root, home: tempDir('roost-late-home-'), script, window: '2s', session: 'race' }, async (rig) => {
    const { roost, model } = rig;

    // ---- the window runs out: the bridge denies on its own; a member's allow after that is 409, both ways.
    assert.equal((await board(roost.url, { type: 'session.prompt', id: 's1', text: 'PROMPT-WINDOW go' }, 'Paul')).status, 200);
    const w = await until('the request pending', async () => (await approvals(roost.url)).pending.find((x) => x.kind === 'fleet'), 30_000, 20);
    const told = await until('the hook’s own denial reaching the model', () => model.requests.flatMap(toolResults).find((r) => r.tool_use_id === 'toolu_window'), 30_000, 20);
    assert.equal(told.is_error, true);
    assert.match(told.content, /No decision in Roost within 2s: denied/);
    await until('the denial on the board', async () => (await boardApproval(roost.url, w.scope.rid))?.state === 'denied', 10_000);
    assert.equal((await decide(roost.url, w.id, 'allow', 'Ana')).status, 409, 'a late allow through /approvals');
    assert.equal((await board(roost.url, { type: 'session.approval', id: 's1', rid: w.scope.rid, state: 'allowed' }, 'Ana')).status, 409, 'and through the board');
    const wRec = (await approvals(roost.url)).recent.find((r) => r.id === w.id);
    assert.deepEqual([wRec.status, wRec.decidedBy], ['withdrawn', ''], 'nobody decided it');
    assert.deepEqual([(await boardApproval(roost.url, w.scope.rid)).state, (await boardApproval(roost.url, w.scope.rid)).by], ['denied', 'Claude'], 'the board keeps the bridge’s denial');
    assert.equal(existsSync(join(root, 'ran-window')), false, 'the command never ran');

    // ---- the bridge is killed while a call waits: the hook cannot reach it and denies; the
    // request is withdrawn within 2 s, and a member's allow after that is 409, both ways.
    await until('the answer after the window', async () => (await approvals(roost.url)).pending.length === 0 && model.scripted().some((r) => hasResult('toolu_window')(r)), 30_000);
    await new Promise((r) => setTimeout(r, 500)); // the result and the idle status
    assert.equal((await board(roost.url, { type: 'session.prompt', id: 's1', text: 'PROMPT-KILLED go' }, 'Paul')).status, 200);
    const k = await until('the second request pending', async () => (await approvals(roost.url)).pending.find((x) => x.kind === 'fleet'), 30_000, 20);
    const t0 = Date.now();
    await rig.bridge.stop('SIGKILL');
    const toldK = await until('the hook’s denial reaching the model', () => model.requests.flatMap(toolResults).find((r) => r.tool_use_id === 'toolu_killed'), 30_000, 20);
    assert.equal(toldK.is_error, true);
    assert.match(toldK.content, /could not be reached|denied/);
    const kRec = await until('withdrawn', async () => (await approvals(roost.url)).recent.find((r) => r.id === k.id && r.status === 'withdrawn'), 5000, 20);
    const ms = Date.now() - t0;
    assert.ok(ms < 2500, `withdrawn ${ms} ms after the bridge was killed`);
    assert.match(kRec.reason, /bridge/);
    assert.equal((await decide(roost.url, k.id, 'allow', 'Ana')).status, 409, 'a late allow through /approvals');
    assert.equal((await board(roost.url, { type: 'session.approval', id: 's1', rid: k.scope.rid, state: 'allowed' }, 'Ana')).status, 409, 'and through the board');
    const shown = await until('the board shows it denied', async () => {
      const b = await boardApproval(roost.url, k.scope.rid);
      return b?.state === 'denied' ? b : undefined;
    }, 10_000);
    assert.notEqual(shown.by, 'Ana', 'no later "allowed" recorded for a call that never ran');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(existsSync(join(root, 'ran-killed')), false, 'the command never ran');
    t.diagnostic(`bridge killed -> request withdrawn in ${ms} ms`);
    // A restart ends what the killed bridge left running (its Claude Code process).
    rig.bridge = await startBridge(rig.args, rig.env);
    assert.ok(readFileSync(join(root, '.roost-bridge', 'state.json'), 'utf8').includes('"children": []'));
  });
});
