// `roost bridge` as a child process (the built CLI), as a member runs it on
// their machine: its output kept for the test to wait on and to show when a
// test fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/server/index.js';
import { git, until } from './until.js';
import { tempDir } from './server.js';

export const ROOST_BIN = join(PACKAGE_ROOT, 'bin', 'roost.js');
/** Whether the CLI is built (`npm run build`), which a child bridge needs. */
export const bridgeBuilt = () => existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'bridge', 'index.js'));

export interface BridgeProc {
  proc: ChildProcess;
  log(): string;
  /** Waits until its output has `text` `times` times (it exits: fails with its output). */
  waitFor(text: string, times?: number, ms?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<BridgeProc>();
/** Kills every child bridge still running (for an `after` hook). */
export async function killBridges(): Promise<void> {
  for (const b of running) await b.stop('SIGKILL');
}

/** Starts `roost bridge ARGS` with exactly `env` (plus PATH) and waits until it follows its thread. */
export async function startBridge(args: string[], env: NodeJS.ProcessEnv, ready = 'following thread'): Promise<BridgeProc> {
  const proc = spawn(process.execPath, [ROOST_BIN, 'bridge', ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const b: BridgeProc = {
    proc,
    log: () => out,
    waitFor: (text, times = 1, ms = 45_000) =>
      until(
        `the bridge to say "${text}"${times > 1 ? ` ${times} times` : ''}`,
        () => {
          if (proc.exitCode !== null) throw new Error(`the bridge exited (${proc.exitCode}): ${out}`);
          return out.split(text).length - 1 >= times;
        },
        ms,
      ).then(() => undefined),
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      running.delete(b);
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
      return new Promise((ok) => {
        proc.once('exit', () => ok());
        proc.kill(signal);
      });
    },
  };
  running.add(b);
  await b.waitFor(ready);
  return b;
}

/** A git repository `shop` with one commit (its README.md) in a fresh folder, as a member's project for the bridge. */
export function shopRepo(prefix: string): string {
  const repo = join(realpathSync(tempDir(prefix)), 'shop');
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), 'shop\n');
  git(repo, 'add', 'README.md');
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first');
  return repo;
}
