// Real Roost servers for tests: in-process (fast) or as a child process
// (for restarts and SIGKILL), each on its own port and data folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/storage/index.js';
import { startRoost, type Roost, type RoostConfig, PACKAGE_ROOT } from '../../src/server/index.js';
import { freePort, waitHealthy } from './up.js';

export { freePort };

export function tempDir(prefix = 'roost-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** An in-process server on a random port with a fresh SQLite file. */
export async function inProcess(cfg: Partial<RoostConfig> = {}, dataDir = tempDir()): Promise<Roost & { dataDir: string }> {
  const store = new SqliteStore({ path: join(dataDir, 'roost.db') });
  const roost = await startRoost(store, { port: 0, ...cfg });
  return Object.assign(roost, { dataDir });
}

export interface ChildServer {
  url: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `roost serve` as a child process (the built CLI), waiting until it answers. */
export async function child(opts: { dataDir?: string; port?: number; env?: Record<string, string>; args?: string[] } = {}): Promise<ChildServer> {
  const dataDir = opts.dataDir ?? tempDir();
  const port = opts.port ?? (await freePort());
  const proc = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'roost.js'), 'serve', '--port', String(port), '--data', dataDir, ...(opts.args ?? [])], {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc, { log: () => log });
  return {
    url,
    port,
    dataDir,
    proc,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(); // already gone (a signal leaves exitCode null)
      return new Promise((ok) => {
        proc.once('exit', () => ok());
        proc.kill(signal);
      });
    },
  };
}

/** A response's status and its body as JSON (null when the body is not JSON). */
export async function answer(r: Response): Promise<{ status: number; json: any }> {
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const r = await fetch(url + '/events', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return answer(r);
}
