// A fleet board session run by the real bridge (`roost bridge`, a child
// process) with the real Claude Code CLI against the model stand-in, its Bash
// calls held for a decision: the set-up the racing-decision suites and the
// board's earned-trust suite share. The board's readers are in race.ts.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { need } from './env.js';
import { inProcess } from './server.js';
import { CLAUDE_BIN, claudeAvailable } from './claude.js';
import { modelStandin, type ModelStandin, type Step } from './model-standin.js';
import { until } from './until.js';
import { bridgeBuilt, startBridge, type BridgeProc } from './bridge.js';
import { ENV, THREAD, approvals, board, boardApproval } from './race.js';

/** Whether this machine can run a board bridge (the Claude Code CLI and a build); skips the test, or fails it in CI, when not. */
export function needBoardBridge(t: TestContext): boolean {
  return need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)') && need(t, bridgeBuilt(), 'a build (npm run build)');
}

/** The bridge's arguments: follow THREAD on `server`, sessions under `root`, Bash held for a decision for `window` (`60s`, `2s`). */
export function boardBridgeArgs(server: string, root: string, window: string): string[] {
  return ['--server', server, '--root', root, '--thread', THREAD, '--claude', CLAUDE_BIN, '--approvals', 'Bash', '--window', window];
}

/** Paul starts session s1 on the board (`name`), and the bridge starts it. */
export async function startSession(url: string, bridge: BridgeProc, name: string): Promise<void> {
  assert.equal((await board(url, { type: 'request.start', id: 's1', session: name, flavor: 'plain' }, 'Paul', '/requests')).status, 200);
  await bridge.waitFor('started s1');
}

/** The next fleet approval pending that is not in `seen`, once the board shows it too (the bridge asks the approvals first, then puts it on the board); added to `seen`. */
export async function nextPending(url: string, seen: Set<string>, what: string): Promise<any> {
  const a = await until(what, async () => (await approvals(url)).pending.find((x) => x.kind === 'fleet' && !seen.has(x.id)), 30_000, 20);
  seen.add(a.id);
  await until(`${what} on the board`, async () => (await boardApproval(url, a.scope.rid))?.state === 'pending', 10_000, 20);
  return a;
}

export interface BoardRig {
  roost: Awaited<ReturnType<typeof inProcess>>;
  model: ModelStandin;
  /** The bridge's arguments and environment, to start it again. */
  args: string[];
  env: NodeJS.ProcessEnv;
  /** The running bridge; a test that restarts it puts the new one here, and that one is stopped at the end. */
  bridge: BridgeProc;
}

/**
 * Runs `body` with a fresh in-process Roost, the model stand-in playing
 * `script`, and a bridge on `root` (its own HOME in `home`) with session s1
 * started. Prints the bridge's output when `body` fails, and stops all three
 * whatever happens.
 */
export async function withBoardBridge(opts: { root: string; home: string; script: Step[]; window: string; session: string }, body: (rig: BoardRig) => Promise<void>): Promise<void> {
  const model = await modelStandin(opts.script);
  const roost = await inProcess();
  const args = boardBridgeArgs(roost.url, opts.root, opts.window);
  const env = ENV(opts.home, model.url);
  const rig: BoardRig = { roost, model, args, env, bridge: await startBridge(args, env) };
  try {
    await startSession(roost.url, rig.bridge, opts.session);
    await body(rig);
  } catch (e) {
    console.error(rig.bridge.log());
    throw e;
  } finally {
    await rig.bridge.stop('SIGTERM');
    await roost.close();
    await model.close();
  }
}
