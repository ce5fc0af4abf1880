// The bench's shared parts: the command line, the processes a workload starts
// (a Roost server, the bare node:http baseline, the load generator, a bench
// script of dist/bench), and the table every workload adds its rows to.
// bench/run.ts runs the workloads (bench/workloads/*.ts); bench/README.md says how.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT } from '../src/server/app.js';
import { freePort, waitHealthy } from '../test/support/up.js';

export const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    runs: { type: 'string' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    db: { type: 'string' },
    nodes: { type: 'string', default: '1' },
    events: { type: 'string' },
  },
});
export const RUNS = Number(args.runs ?? (args.quick ? 1 : 3));
export const SECONDS = Number(args.seconds ?? (args.quick ? 3 : 5));
export const WARMUP = Number(args.warmup ?? 1);
/**
 * Roost's ingest windows per run, each between two of the baseline's. Four: one window
 * against its neighbours moves by ±5 points with the host (docs/architecture.md,
 * "Measuring"), and a run's share is the mean of its windows.
 */
export const INGEST_WINDOWS = args.quick ? 1 : 4;
export const NODES = Number(args.nodes);
export const DB = args.db;
export const RESTART_EVENTS = Number(args.events ?? (args.quick ? 200_000 : 1_000_000));
export const BENCH = join(PACKAGE_ROOT, 'dist', 'bench');
const tmp: string[] = [];
/** Removes every temp directory the workloads made (the runner calls it at the end). */
export function cleanup(): void {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
}

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'roost-bench-'));
  tmp.push(d);
  return d;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export interface Proc {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

function stopper(proc: ChildProcess) {
  return () =>
    new Promise<void>((ok) => {
      if (proc.exitCode !== null) return ok();
      proc.once('exit', () => ok());
      proc.kill('SIGTERM');
      setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
    });
}

export async function roost(dataDir = tempDir(), env: Record<string, string> = {}): Promise<Proc & { startMs: number }> {
  const port = await freePort();
  const argv = [join(PACKAGE_ROOT, 'bin', 'roost.js'), 'serve', '--port', String(port), '--data', dataDir];
  if (DB) argv.push('--db', DB);
  const t0 = performance.now();
  const proc = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc, { timeoutMs: 120_000, everyMs: 10 });
  return { url, proc, stop: stopper(proc), startMs: performance.now() - t0 };
}

export async function baseline(): Promise<Proc> {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(BENCH, 'baseline-server.js'), String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc, { path: '/', timeoutMs: 120_000, everyMs: 10 });
  return { url, proc, stop: stopper(proc) };
}

/** Runs the load generator once and returns its JSON line. */
export function load<T>(cfg: object): Promise<T> {
  return new Promise((ok, fail) => {
    const p = spawn(process.execPath, [join(BENCH, 'load.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      if (code !== 0) return fail(new Error(`load generator failed (${code})`));
      try {
        ok(JSON.parse(out.trim().split('\n').pop()!) as T);
      } catch (e) {
        fail(e);
      }
    });
  });
}

/** Runs a bench script of dist/bench in its own process and returns its last JSON line. */
export function child<T>(script: string, argv: string[]): Promise<T> {
  return new Promise((ok, fail) => {
    const p = spawn(process.execPath, [join(BENCH, script), ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      if (code !== 0) return fail(new Error(`${script} ${argv[0]} failed (${code})`));
      try {
        ok(JSON.parse(out.trim().split('\n').pop()!) as T);
      } catch (e) {
        fail(e);
      }
    });
  });
}

/**
 * Runs a bench script that takes `[db or -, runs, seconds]` and prints
 * `{rows}` (each row's `met`, when it has one, says whether its target was
 * met), and adds its rows to the table.
 */
export async function addChildRows(script: string): Promise<void> {
  const out = await child<{ rows: (Row & { met?: boolean })[] }>(script, [DB ?? '-', String(args.quick ? 1 : RUNS), String(SECONDS)]);
  for (const r of out.rows) add({ ...r, ok: r.met === undefined ? undefined : () => r.met! });
}

export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

// ------------------------------------------------------------------ table

export interface Row {
  workload: string;
  metric: string;
  values: number[];
  unit: string;
  target?: string;
  ok?: (median: number) => boolean;
  note?: string;
}
const rows: Row[] = [];

export function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}

export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function add(r: Row): void {
  rows.push(r);
  const m = median(r.values);
  process.stderr.write(`  ${r.workload} / ${r.metric}: ${fmt(m)} ${r.unit} [${r.values.map(fmt).join(', ')}]\n`);
}

export function printTable(): void {
  const lines = [
    '| workload | metric | median | range | target | met |',
    '|---|---|---:|---|---|---|',
    ...rows.map((r) => {
      const m = median(r.values);
      const range = r.values.length > 1 ? `${fmt(Math.min(...r.values))} – ${fmt(Math.max(...r.values))}` : '';
      const met = r.ok ? (r.ok(m) ? 'yes' : 'NO') : '';
      return `| ${r.workload} | ${r.metric}${r.note ? ` (${r.note})` : ''} | ${fmt(m)} ${r.unit} | ${range} | ${r.target ?? ''} | ${met} |`;
    }),
  ];
  process.stdout.write('\n' + lines.join('\n') + '\n');
}


// ------------------------------------------------------------------ shared by workloads

export const SINGLE = JSON.stringify({ type: 'status', agent: 'bench-1', team: 'bench', status: 'working', activity: 'Reconciling invoices' });
export const BATCH = JSON.stringify(
  Array.from({ length: 200 }, (_, i) => ({ type: 'tool', agent: `bench-${i % 20}`, team: 'bench', tool: 'Read', activity: `reading file ${i}` })),
);

/** Ingest against every node at once (one load process per node); summed requests/s. */
export async function ingest(urls: string[], body: string, connections: number) {
  const per = Math.max(1, Math.round(connections / urls.length));
  const rs = await Promise.all(
    urls.map((u) => load<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }>({ mode: 'http', url: u + '/events', body, connections: per, seconds: SECONDS, warmupSeconds: WARMUP })),
  );
  const bad = rs.reduce((a, r) => a + r.errors + r.non2xx, 0);
  if (bad) process.stderr.write(`  warning: ${bad} errors or non-2xx answers\n`);
  return { rps: rs.reduce((a, r) => a + r.rps, 0), p50: Math.max(...rs.map((r) => r.p50)), p99: Math.max(...rs.map((r) => r.p99)) };
}

export async function nodes(): Promise<Proc[]> {
  const dir = tempDir();
  const out: Proc[] = [];
  for (let i = 0; i < NODES; i++) out.push(await roost(DB ? tempDir() : dir));
  return out;
}

/** One workload of the bench: a file in bench/workloads/, named in bench/run.ts's list. */
export interface Workload {
  /** Its name on the command line (`npm run bench -- <name>`). */
  name: string;
  /** Where it runs: 'one node' (not with --nodes above 1), 'sqlite' (not with --db), 'postgres' (only with --db). Anywhere if absent. */
  needs?: 'one node' | 'sqlite' | 'postgres';
  /** Runs it `RUNS` times (or as its comment says) and adds its rows with `add`. */
  run(): Promise<void>;
}

/**
 * The fan-out load (bench/load.ts `fanout`): 1,000 SSE subscribers of `path`
 * (the floor's stream by default) while 500 events/s are posted, latency sampled
 * on 100 of them, `RUNS` times; with several nodes, posted to node 1 and read on
 * the others. Returns each run's p50 and p99.
 */
export async function fanoutRuns(what: string, path?: string): Promise<{ p50: number[]; p99: number[] }> {
  const p50: number[] = [];
  const p99: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const ns = await nodes();
    const urls = ns.map((n) => n.url);
    const r = await load<{ p50: number; p99: number; received: number; expected: number }>({
      mode: 'fanout',
      streams: urls.length > 1 ? urls.slice(1) : urls,
      posts: [urls[0]],
      subscribers: 1000,
      measured: 100,
      rate: 500,
      seconds: SECONDS * 2,
      ...(path ? { path } : {}),
    });
    await Promise.all(ns.map((n) => n.stop()));
    if (r.received !== r.expected) process.stderr.write(`  warning: ${what} delivered ${r.received} of ${r.expected} measured frames\n`);
    p50.push(r.p50);
    p99.push(r.p99);
  }
  return { p50, p99 };
}
