// Racing decisions on two nodes (issue 17, part 4): two Roost nodes (A and B)
// on one PostgreSQL schema, the real bridge (`roost bridge`, a child process)
// following the board on A with the real Claude Code CLI and the model
// stand-in. A Bash call waits for a decision; an allow posted to one node and
// a deny posted to the other leave at the same moment (both fetches started
// in the same tick after a barrier, the one sent first alternating), through
// either path (POST /approvals/:id/decision or the board's `session.approval`
// post), round after round. Each round: exactly one 200 and one 409, and the
// record and the board on both nodes, whether the command ran and what the
// model was told all agree with the winner, and the winner is the first
// decision in the log. The output records how far apart the two answers came
// and how long each took (both in flight at once: the later one was sent
// before the earlier one was answered), and in how many rounds both decisions
// got past the servers' pending check into the log (a race decided by log
// order, not by one request arriving after the other was settled).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PostgresStore } from '../src/storage/postgres.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable, sql } from './support/pg.js';
import { tempDir } from './support/server.js';
import { modelStandin, hasResult, toolResults } from './support/model-standin.js';
import { until } from './support/until.js';
import { killBridges, startBridge } from './support/bridge.js';
import { ENV, PATHS, RACES, THREAD, approvals, board, boardApproval, decision, raceScript } from './support/race.js';
import { boardBridgeArgs, needBoardBridge, startSession } from './support/board-bridge.js';

after(killBridges);

const reachable = await pgReachable();

test('two nodes: an allow posted to one and a deny to the other at the same moment: one 200, one 409, and the winner is what happened on both', { timeout: 90_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  if (!needBoardBridge(t)) return;
  const db = freshSchema('roost_race');
  const root = tempDir('roost-race2-root-');
  const id = (i: number) => `toolu_race2_${i}`;
  const model = await modelStandin([
    ...raceScript('PROMPT-RACE2', id),
  ]);
  const nodes: Roost[] = [];
  let bridge: Awaited<ReturnType<typeof startBridge>> | undefined;
  try {
    const [A, B] = await Promise.all([0, 1].map(async () => startRoost(await PostgresStore.open(db.url), { port: 0 })));
    nodes.push(A, B);
    bridge = await startBridge(boardBridgeArgs(A.url, root, '60s'), ENV(tempDir('roost-race2-home-'), model.url));
    await startSession(A.url, bridge, 'race');
    assert.equal((await board(A.url, { type: 'session.prompt', id: 's1', text: 'PROMPT-RACE2 go' }, 'Paul')).status, 200);

    const rounds: string[] = [];
    const gaps: number[] = [];
    let bothLogged = 0;
    const seen = new Set<string>();
    for (let i = 0; i < RACES; i++) {
      // Both nodes list the request, in /approvals and on the board, before the race (B folds it from the log).
      // (The bridge's post asks the approvals first, then puts the request on the board: until then the board's
      // path does not know it, 404.)
      const a = await until(`request ${i} pending on A`, async () => (await approvals(A.url)).pending.find((x) => x.kind === 'fleet' && !seen.has(x.id)), 30_000, 20);
      for (const node of [A, B]) {
        await until(`request ${i} pending on ${node === A ? 'A' : 'B'}`, async () => (await approvals(node.url)).pending.some((x) => x.id === a.id) && (await boardApproval(node.url, a.scope.rid))?.state === 'pending', 10_000, 20);
      }
      seen.add(a.id);
      const [pAllow, pDeny] = PATHS[i % PATHS.length];
      const swap = i >= PATHS.length; // rounds 0-3: allow to A, deny to B; rounds 4-7: the reverse
      const [allowAt, denyAt] = swap ? [B, A] : [A, B];
      const allowFirst = (i + (swap ? 1 : 0)) % 2 === 0;
      const allowReq = decision(allowAt.url, pAllow, a, true, 'Ana');
      const denyReq = decision(denyAt.url, pDeny, a, false, 'Bob');
      // The barrier: both leave in one tick, the one sent first alternating.
      await new Promise((r) => setImmediate(r));
      const t0 = performance.now();
      const [first, second] = allowFirst ? [allowReq.go(), denyReq.go()] : [denyReq.go(), allowReq.go()];
      const [x, y] = await Promise.all([first, second]);
      const [allow, deny] = allowFirst ? [x, y] : [y, x];
      const label = `round ${i}: allow via ${pAllow} on ${swap ? 'B' : 'A'}, deny via ${pDeny} on ${swap ? 'A' : 'B'}, ${allowFirst ? 'allow' : 'deny'} sent first`;
      assert.deepEqual([allow.status, deny.status].sort(), [200, 409], `${label}: ${JSON.stringify([allow.json, deny.json])}`);
      const allowWon = allow.status === 200;
      const loser = allowWon ? deny : allow;
      assert.match(loser.json.message, new RegExp(`already ${allowWon ? 'allowed by Ana' : 'denied by Bob'}`), `${label}: the loser is told who won`);
      const gap = Math.abs(allow.at - deny.at);
      gaps.push(gap);
      t.diagnostic(`${label}: ${allowWon ? 'allow' : 'deny'} won; answered ${(allow.at - t0).toFixed(1)} ms (allow, ${allow.status}) and ${(deny.at - t0).toFixed(1)} ms (deny, ${deny.status}) after leaving, ${gap.toFixed(1)} ms apart`);

      // What happened is what won: the record and the board on both nodes, the command, what the model was told.
      const want = [allowWon ? 'allowed' : 'denied', allowWon ? 'Ana' : 'Bob'];
      for (const [n, node] of [['A', A], ['B', B]] as const) {
        const rec = await until(`${label}: recorded on ${n}`, async () => (await approvals(node.url)).recent.find((r) => r.id === a.id && r.status !== 'pending'), 10_000, 20);
        assert.deepEqual([rec.status, rec.decidedBy], want, `${label}: the record on ${n}`);
        const shown = await until(`${label}: on the board on ${n}`, async () => {
          const b = await boardApproval(node.url, a.scope.rid);
          return b && b.state !== 'pending' ? b : undefined;
        }, 10_000, 20);
        assert.deepEqual([shown.state, shown.by], want, `${label}: the board on ${n} shows the one outcome`);
      }
      const told = await until(`${label}: the tool's result`, () => model.requests.flatMap(toolResults).find((r) => r.tool_use_id === id(i)), 30_000, 20);
      assert.equal(told.is_error, !allowWon, `${label}: the model was told ${allowWon ? 'it ran' : 'it was denied'}`);
      assert.equal(existsSync(join(root, `ran-${i}`)), allowWon, `${label}: the command ran if and only if the allow won`);
      // The winner is the first decision in the log; a second one there raced past the pending check and lost.
      const logged = (await sql<{ body: string }>(`SELECT body FROM "${db.schema}".events WHERE stream = 'approvals' AND type = 'approval.decided' ORDER BY position`))
        .map((r) => JSON.parse(r.body) as { id: string; decision: string; by: string })
        .filter((d) => d.id === a.id);
      assert.ok(logged.length >= 1 && logged.length <= 2, `${label}: ${logged.length} decisions logged`);
      assert.deepEqual([logged[0].decision, logged[0].by], [allowWon ? 'allow' : 'deny', want[1]], `${label}: the first decision in the log is the one that won`);
      if (logged.length === 2) bothLogged++;
      rounds.push(`${pAllow}@${swap ? 'B' : 'A'}/${pDeny}@${swap ? 'A' : 'B'}:${allowWon ? 'allow' : 'deny'}`);
    }
    const sorted = [...gaps].sort((p, q) => p - q);
    t.diagnostic(`${RACES} races on two nodes, one 200 and one 409 each: ${rounds.join(' ')}; answers apart: median ${sorted[RACES >> 1].toFixed(1)} ms, max ${sorted[RACES - 1].toFixed(1)} ms; both decisions in the log in ${bothLogged} of ${RACES} rounds`);
    await until('the answer after the last race', () => model.scripted().some((r) => hasResult(id(RACES - 1))(r)), 30_000);
    // Both nodes fold one board.
    const [ba, bb] = await Promise.all([A, B].map(async (n) => ((await (await fetch(`${n.url}/fleet/${THREAD}`)).json()) as { sessions: { approvals: unknown[] }[] }).sessions[0].approvals));
    assert.deepEqual(ba, bb, 'both nodes show the same approvals');
  } catch (e) {
    if (bridge) console.error(bridge.log());
    throw e;
  } finally {
    await bridge?.stop('SIGTERM');
    for (const n of nodes) await n.close();
    await model.close();
    await db.drop();
  }
});
