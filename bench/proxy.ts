// Three nodes behind HAProxy against one node (issue 34, point 3), on one
// PostgreSQL (a fresh schema per run):
//
//   node dist/bench/proxy.js <postgres-url> [runs=1] [seconds=5]
//
// Per run, the same loads from separate processes (bench/load.ts), first on
// one node (directly), then on three nodes through HAProxy (round-robin,
// configured as test/support/haproxy.ts and docs/scale-out.md say):
// batched ingest (200 events per request, 16 connections), single-event
// ingest (64 connections) and PreToolUse hooks (32 connections); then SSE
// clients: 3,000 idle ones (the servers' RSS per client, summed over the
// nodes: HAProxy's configuration holds 4,000 connections, so not bench
// capacity's 10,000) and 1,000 receiving 200 events/s (delivery p99; on three
// nodes the events are posted through the proxy too, so most cross nodes).
// The three nodes' figure is the sum over the nodes (every request went to one of them).
// All on one machine: the nodes, PostgreSQL, HAProxy and the load share its
// cores, so three nodes here show the cost of coordination as much as the gain.
// So that the ratio row says what limited it, each run also measures
// PostgreSQL alone (bench/pg-store.ts: the store with no HTTP and no folding,
// appends of 200 events from 16 callers on one stream, as the batched ingest
// sends them) and the machine's CPU while the three nodes took batched ingest:
// PostgreSQL is the limit when the three nodes reached most of what it takes
// alone; when they reached far less with every core busy, the CPU was.
// Prints one JSON line: `{rows: [...]}` in bench/run.ts's row shape.
import { child, freePort, type ChildServer } from '../test/support/server.js';
import { startHaproxy, type Haproxy } from '../test/support/haproxy.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/app.js';
import { HOOK_BODY, idle, load, median, rssKb, schemaOn, type BenchRow } from './cap-lib.js';

const [DB, runsArg, secondsArg] = process.argv.slice(2);
if (!DB || DB === '-') throw new Error('usage: proxy.js <postgres-url> [runs] [seconds]');
const RUNS = Number(runsArg ?? 1);
const SECONDS = Number(secondsArg ?? 5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BATCH = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ type: 'tool', agent: `bench-${i % 20}`, team: 'bench', tool: 'Read', activity: `reading file ${i}` })));
const SINGLE = JSON.stringify({ type: 'status', agent: 'bench-1', team: 'bench', status: 'working', activity: 'Reconciling invoices' });

type Http = { rps: number; p50: number; p99: number; errors: number; non2xx: number };

/** The whole machine's CPU time so far (all cores): busy and total jiffies (/proc/stat). */
function cpuTimes(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
}

/** `f`'s result and the share of the machine's CPU busy while it ran, %. */
async function withCpu<T>(f: () => Promise<T>): Promise<[T, number]> {
  const a = cpuTimes();
  const r = await f();
  const b = cpuTimes();
  return [r, (100 * (b.busy - a.busy)) / Math.max(1, b.total - a.total)];
}

/** PostgreSQL alone, on a fresh schema: bench/pg-store.js, one process, 16 callers appending 200 events at a time to one stream. */
async function pgAlone(): Promise<number> {
  const db = schemaOn(DB, 6);
  try {
    const out = await new Promise<string>((ok, fail) => {
      const p = spawn(process.execPath, [join(PACKAGE_ROOT, 'dist', 'bench', 'pg-store.js'), db.url, '1', '16', String(SECONDS), '200'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let o = '';
      p.stdout.on('data', (d) => (o += d));
      p.on('exit', (c) => (c === 0 ? ok(o) : fail(new Error(`pg-store exited ${c}`))));
    });
    return (JSON.parse(out.trim().split('\n').pop()!) as { eventsPerSec: number }).eventsPerSec;
  } finally {
    await db.drop();
  }
}

const IDLE = 3_000;
const FAN = 1_000;

/** SSE clients through `url` on the nodes `pids`: RSS per idle client (all nodes' RSS summed), and fan-out p99 to 1,000 at 200 events/s. */
async function sse(url: string, pids: number[]) {
  const rss = () => pids.reduce((a, p) => a + rssKb(p), 0);
  const rss0 = rss();
  const idler = await idle([url], IDLE);
  await sleep(2000);
  const rss1 = rss();
  idler.kill('SIGKILL');
  await sleep(1500);
  const fan = await load<{ p50: number; p99: number; received: number; expected: number }>({ mode: 'fanout', streams: [url], posts: [url], subscribers: FAN, measured: 100, rate: 200, seconds: SECONDS * 2 });
  return { rssPerClientKb: ((rss1 - rss0) * 1024) / IDLE / 1000, fanP99: fan.p99, fanLost: fan.expected - fan.received };
}

async function loads(url: string) {
  const http = (path: string, body: string, connections: number) => load<Http>({ mode: 'http', url: url + path, body, connections, seconds: SECONDS, warmupSeconds: 1 });
  const [batch, cpu] = await withCpu(() => http('/events', BATCH, 16));
  const single = await http('/events', SINGLE, 64);
  const hooks = await http('/hooks/claude-code', HOOK_BODY, 32);
  const errors = [batch, single, hooks].reduce((a, r) => a + r.errors + r.non2xx, 0);
  return { batch: batch.rps * 200, batchP99: batch.p99, batchCpu: cpu, single: single.rps, singleP99: single.p99, hooks: hooks.rps, hooksP99: hooks.p99, errors };
}

async function once() {
  // One node, directly.
  const db1 = schemaOn(DB, 6);
  const one = await child({ args: ['--db', db1.url] });
  let r1: Awaited<ReturnType<typeof loads>> & Awaited<ReturnType<typeof sse>>;
  try {
    await sleep(1000);
    r1 = { ...(await loads(one.url)), ...(await sse(one.url, [one.proc.pid!])) };
  } finally {
    await one.stop('SIGKILL');
    await db1.drop();
  }
  // Three nodes behind HAProxy.
  const db3 = schemaOn(DB, 6);
  const port = await freePort();
  const nodes: ChildServer[] = [];
  let proxy: Haproxy | null = null;
  let r3: Awaited<ReturnType<typeof loads>> & Awaited<ReturnType<typeof sse>>;
  try {
    for (let i = 0; i < 3; i++) nodes.push(await child({ args: ['--db', db3.url, '--origin', `http://127.0.0.1:${port}`] }));
    proxy = await startHaproxy(nodes.map((n) => n.port), { port });
    await sleep(1500);
    r3 = { ...(await loads(proxy.url)), ...(await sse(proxy.url, nodes.map((n) => n.proc.pid!))) };
  } finally {
    await proxy?.stop();
    for (const n of nodes) await n.stop('SIGKILL');
    await db3.drop();
  }
  return { r1, r3, pg: await pgAlone() };
}

const runs: Awaited<ReturnType<typeof once>>[] = [];
for (let i = 0; i < RUNS; i++) runs.push(await once());
const w = 'PostgreSQL, one node vs three behind HAProxy';
const pair = (label: string, k: 'batch' | 'single' | 'hooks' | 'batchP99' | 'singleP99' | 'hooksP99' | 'rssPerClientKb' | 'fanP99', unit: string, note?: (r: (typeof runs)[number]['r1']) => string): BenchRow[] => [
  { workload: w, metric: `${label}, one node`, values: runs.map((r) => r.r1[k]), unit, ...(note ? { note: runs.map((r) => note(r.r1)).join('; ') } : {}) },
  { workload: w, metric: `${label}, three nodes through HAProxy${unit === '/s' || unit === 'ev/s' ? ' (the sum)' : ''}`, values: runs.map((r) => r.r3[k]), unit, ...(note ? { note: runs.map((r) => note(r.r3)).join('; ') } : {}) },
];
// A setup that completed no batch in its window (an overloaded machine) has no ratio: NaN, never met.
const ratio = runs.map((r) => (r.r1.batch > 0 ? r.r3.batch / r.r1.batch : NaN));
// The three nodes' share of what PostgreSQL takes alone: near 1, the database was the limit.
const ofPg = runs.map((r) => r.r3.batch / r.pg);
const pgLimit = median(ofPg) >= 0.8;
const cpu3 = median(runs.map((r) => r.r3.batchCpu));
const why = !Number.isFinite(median(ratio))
  ? `no ratio: one node completed no batch in its window (three nodes ${Math.round(median(runs.map((r) => r.r3.batch)))} ev/s, PostgreSQL alone ${Math.round(median(runs.map((r) => r.pg)))} ev/s, the machine's CPU ${Math.round(cpu3)} % busy)`
  : median(ratio) >= 2
    ? 'met'
    : pgLimit
      ? `not 2×, and PostgreSQL is the limit: three nodes reached ${Math.round(100 * median(ofPg))} % of what it takes alone`
      : `not 2×, and PostgreSQL is not the limit: three nodes reached ${Math.round(100 * median(ofPg))} % of what it takes alone (${Math.round(median(runs.map((r) => r.pg))).toLocaleString('en-US')} ev/s) with the machine's CPU ${Math.round(cpu3)} % busy: the CPU the nodes, the database, HAProxy and the load share is the limit`;
const rows: BenchRow[] = [
  ...pair('batched ingest (200 per request, 16 connections)', 'batch', 'ev/s'),
  { workload: w, metric: 'batched ingest, three nodes ÷ one node', values: ratio, unit: '×', target: '≥ 2× (or PostgreSQL the limit)', met: Number.isFinite(median(ratio)) && (median(ratio) >= 2 || pgLimit), note: why },
  { workload: w, metric: 'PostgreSQL alone (bench/pg-store.ts: appends of 200 events, 16 callers, one stream, no HTTP)', values: runs.map((r) => r.pg), unit: 'ev/s', note: 'the database’s own rate in the same run' },
  { workload: w, metric: 'batched ingest, three nodes through HAProxy ÷ PostgreSQL alone', values: ofPg, unit: '×', note: 'near 1: the database is the limit' },
  { workload: w, metric: 'the machine’s CPU busy during the three nodes’ batched ingest', values: runs.map((r) => r.r3.batchCpu), unit: '%', note: 'all cores, all processes (/proc/stat)' },
  { workload: w, metric: 'the machine’s CPU busy during one node’s batched ingest', values: runs.map((r) => r.r1.batchCpu), unit: '%' },
  ...pair('batched ingest latency p99', 'batchP99', 'ms'),
  ...pair('single-event ingest (64 connections)', 'single', 'ev/s'),
  ...pair('single-event latency p99', 'singleP99', 'ms'),
  ...pair('PreToolUse hooks (32 connections)', 'hooks', '/s'),
  ...pair('hook latency p99', 'hooksP99', 'ms'),
  ...pair(`${IDLE.toLocaleString('en-US')} idle SSE clients: servers' RSS per client (summed over the nodes)`, 'rssPerClientKb', 'KB'),
  ...pair(`${FAN.toLocaleString('en-US')} SSE clients receiving 200 events/s: delivery latency p99`, 'fanP99', 'ms', (r) => `frames not delivered: ${r.fanLost}`),
  { workload: w, metric: 'errors and non-2xx answers (all loads, both setups)', values: [runs.reduce((a, r) => a + r.r1.errors + r.r3.errors, 0)], unit: '', target: '0', met: runs.every((r) => r.r1.errors + r.r3.errors === 0) },
];
process.stdout.write(JSON.stringify({ rows }) + '\n');
process.exit(0);
