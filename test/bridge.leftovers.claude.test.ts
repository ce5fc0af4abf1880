// Every process a session started ends with the session (issue 17, part 3):
// the real bridge (`roost bridge`, a child process), the real Claude Code CLI
// and the model stand-in, which has Claude Code run one allowed Bash command
// that leaves two things behind, each out of reach of a walk over the
// descendants of Claude Code:
// - a detached background job, `(sleep 299.N &)`, re-parented to init;
// - a loop that ignores SIGTERM and forks a `sleep` five times a second (the
//   sleeps inherit the ignored SIGTERM), so a single pass of signals misses
//   whatever it forks meanwhile.
// Both must be gone after a normal close, after a stop (SIGTERM), and after
// the bridge is SIGKILLed and started again on the same root.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { need } from './support/env.js';
import { inProcess, tempDir } from './support/server.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { modelStandin, step, text, toolUse, hasResult, and, not, askedWithBash as asked } from './support/model-standin.js';
import { until } from './support/until.js';
import { bridgeBuilt, killBridges, startBridge, type BridgeProc } from './support/bridge.js';
import { cmdline, environ, hasProc, matching, running } from './support/procs.js';

after(killBridges);

const THREAD = 'crew';

async function post(url: string, path: string, body: unknown): Promise<number> {
  const r = await fetch(`${url}/fleet/${THREAD}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': 'Paul' }, body: JSON.stringify(body) });
  await r.text();
  return r.status;
}

/** The markers of one test's leftovers: unique durations, so /proc tells them from anything else. */
function markers() {
  const n = randomInt(100_000, 999_999);
  return { job: `299.${n}1`, loop: `299.${n}2` };
}

/**
 * The background job itself: the `sleep`, not a shell forked on its way there
 * (a fork shows its parent's command line, which names the job too, until it
 * execs, and may be gone a moment later).
 */
const job = (m: { job: string }) => matching(m.job).filter((pid) => cmdline(pid) === `sleep ${m.job}`);

/**
 * A server, a model stand-in, a bridge (approvals off: the command is allowed
 * by the rules) and a session `s1` that ran the command; resolves once both
 * leftovers run, with their pids.
 */
async function sessionWithLeftovers(t: { after(f: () => unknown): void }) {
  const m = markers();
  const command = `(sleep ${m.job} &); (bash -c 'trap "" TERM; while :; do sleep ${m.loop} & sleep 0.2; done' >/dev/null 2>&1 &); echo started`;
  const model = await modelStandin([
    step(toolUse('Bash', { command, description: 'start background jobs' }, 'toolu_jobs'), and(asked('PROMPT-JOBS'), not(hasResult('toolu_jobs')))),
    step(text('Both jobs started.'), hasResult('toolu_jobs')),
  ]);
  const roost = await inProcess();
  const home = tempDir('roost-leftovers-home-');
  const root = tempDir('roost-leftovers-root-');
  const args = ['--server', roost.url, '--root', root, '--thread', THREAD, '--claude', CLAUDE_BIN, '--approvals', 'off'];
  const env = { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' };
  const bridges: BridgeProc[] = [];
  const start = async () => {
    const b = await startBridge(args, env);
    bridges.push(b);
    return b;
  };
  t.after(async () => {
    // Whatever a failing run left: ended here, by pid, until the loop forks no more.
    for (let i = 0; i < 20; i++) {
      const left = [...matching(m.job), ...matching(m.loop)];
      if (!left.length) break;
      for (const pid of left) if (running(pid)) process.kill(pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 50));
    }
    await roost.close().catch(() => undefined);
    await model.close();
  });
  const bridge = await start();
  try {
    assert.equal(await post(roost.url, '/requests', { type: 'request.start', id: 's1', session: 'jobs', flavor: 'plain' }), 200);
    await bridge.waitFor('started s1');
    assert.equal(await post(roost.url, '', { type: 'session.prompt', id: 's1', text: 'PROMPT-JOBS start them' }), 200);
    await until('the background job and the forking loop to run', () => job(m).length === 1 && matching(m.loop).length >= 3, 30_000, 50);
  } catch (e) {
    console.error(bridge.log());
    throw e;
  }
  const tag = environ(job(m)[0], 'ROOST_BRIDGE_TAG');
  return { m, roost, bridge, start, bridges, tag };
}

/** What still runs of the leftovers. */
const leftovers = (m: { job: string; loop: string }) => ({ job: matching(m.job), loop: matching(m.loop) });

test('a session closed by a member ends its detached background job and its forking loop', { timeout: 60_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  if (!need(t, hasProc(), 'Linux /proc')) return;
  const { m, roost, bridge, tag } = await sessionWithLeftovers(t);
  const t0 = Date.now();
  assert.equal(await post(roost.url, '', { type: 'session.end', id: 's1', reason: 'closed' }), 200);
  await bridge.waitFor('closed s1 (');
  const ms = Date.now() - t0;
  assert.deepEqual(leftovers(m), { job: [], loop: [] }, `nothing of the session runs once it is closed\n${bridge.log()}`);
  t.diagnostic(`close with leftovers took ${ms} ms; ${/s1: ended .*/.exec(bridge.log())?.[0] ?? ''}`);
  // And nothing comes back: the loop was not left forking.
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(leftovers(m), { job: [], loop: [] });
  assert.match(tag ?? '', /^b[0-9a-f]+:s1$/, 'the background job carried the session’s tag (ROOST_BRIDGE_TAG=<bridge>:<session>)');
  await bridge.stop('SIGTERM');
});

test('a bridge stopped with SIGTERM ends its sessions’ detached background job and forking loop', { timeout: 60_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  if (!need(t, hasProc(), 'Linux /proc')) return;
  const { m, bridge } = await sessionWithLeftovers(t);
  const t0 = Date.now();
  await bridge.stop('SIGTERM');
  const ms = Date.now() - t0;
  assert.equal(bridge.proc.exitCode, 0, bridge.log());
  assert.deepEqual(leftovers(m), { job: [], loop: [] }, `nothing of the session runs once the bridge has stopped\n${bridge.log()}`);
  t.diagnostic(`stop with leftovers took ${ms} ms`);
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(leftovers(m), { job: [], loop: [] });
});

test('a bridge SIGKILLed and started again ends what the killed one’s session left running, before it follows the thread', { timeout: 60_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  if (!need(t, hasProc(), 'Linux /proc')) return;
  const { m, bridge, start } = await sessionWithLeftovers(t);
  await bridge.stop('SIGKILL');
  await new Promise((r) => setTimeout(r, 300));
  const left = leftovers(m);
  assert.equal(left.job.length, 1, 'a SIGKILLed bridge ends nothing: the job still runs');
  assert.ok(left.loop.length >= 1, 'and the loop still forks');
  const t0 = Date.now();
  const again = await start();
  const ms = Date.now() - t0;
  assert.deepEqual(leftovers(m), { job: [], loop: [] }, `the restarted bridge ended them before following the thread\n${again.log()}`);
  assert.match(again.log(), /ended \d+ process\(es\) the previous bridge left running/);
  t.diagnostic(`restart with leftovers took ${ms} ms; ${/ended \d+ process\(es\) the previous bridge left running.*/.exec(again.log())?.[0] ?? ''}`);
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(leftovers(m), { job: [], loop: [] });
  await again.stop('SIGTERM');
});
