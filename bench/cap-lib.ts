// Helpers of the capacity benches (bench/capacity.ts, bench/proxy.ts): the
// load generator (bench/load.ts) as a child, RSS, fresh PostgreSQL schemas.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { PACKAGE_ROOT } from '../src/server/app.js';

const BENCH = join(PACKAGE_ROOT, 'dist', 'bench');

export interface BenchRow {
  workload: string;
  metric: string;
  values: number[];
  unit: string;
  target?: string;
  /** Whether the median met the target (run.ts turns it back into its check). */
  met?: boolean;
  note?: string;
}

export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** Runs bench/load.js with `cfg` to its end; its last JSON line. */
export function load<T>(cfg: object): Promise<T> {
  return new Promise((ok, fail) => {
    const p = spawn(process.execPath, [join(BENCH, 'load.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 ? ok(JSON.parse(out.trim().split('\n').pop()!) as T) : fail(new Error(`load generator failed (${code})`))));
  });
}

/** bench/load.js holding `n` idle streams on `urls` (`path`: another stream than the floor's /stream); resolves once they are open. */
export function idle(urls: string[], n: number, path?: string): Promise<ChildProcess> {
  const p = spawn(process.execPath, [join(BENCH, 'load.js'), JSON.stringify({ mode: 'idle', streams: urls, subscribers: n, path })], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok, fail) => {
    createInterface({ input: p.stdout }).once('line', () => ok(p));
    p.once('exit', (c) => fail(new Error(`idle load exited ${c}`)));
  });
}

export const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];

export const HOOK_BODY = readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '05-PreToolUse-Bash-subagent.json'), 'utf8');

/** A fresh schema on `base` (with a pool of `pool` per node), and its drop. */
export function schemaOn(base: string, pool: number): { url: string; drop(): Promise<void> } {
  const schema = `roost_bench_cap_${randomBytes(4).toString('hex')}`;
  return {
    url: `${base}${base.includes('?') ? '&' : '?'}schema=${schema}&pool=${pool}`,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => c.end());
    },
  };
}

/** Agents joined in requests of 200 (the edge's cap of new agents per request) until `agents` or the floor's cap; how many and how long. */
export async function fillFloor(url: string, agents: number): Promise<{ joined: number; ms: number }> {
  const t0 = performance.now();
  let joined = 0;
  for (let b = 0; b < agents / 200; b++) {
    const batch = Array.from({ length: 200 }, (_, i) => ({ type: 'join', agent: `cap-${b * 200 + i}`, team: `team-${(b * 200 + i) % 50}`, role: 'dev' }));
    const r = await fetch(url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
    if (r.status === 409) break; // the floor is at its cap (the agents of the loads before count)
    if (r.status !== 200) throw new Error(`filling the floor: ${r.status} ${await r.text()}`);
    joined += 200;
  }
  return { joined, ms: performance.now() - t0 };
}
