// Three nodes behind HAProxy against one node (issue 34, point 3), on one
// PostgreSQL (a fresh schema per run):
//
//   node dist/bench/proxy.js <postgres-url> [runs=1] [seconds=5]
//
// Per run, the same loads from separate processes (bench/load.ts), first on
// one node (directly), then on three nodes through HAProxy (round-robin,
// configured as test/support/haproxy.ts and docs/scale-out.md say):
// batched ingest (200 events per request, 16 connections), single-event
// ingest (64 connections) and PreToolUse hooks (32 connections). The three
// nodes' figure is the sum over the nodes (every request went to one of them).
// All on one machine: the nodes, PostgreSQL, HAProxy and the load share its
// cores, so three nodes here show the cost of coordination as much as the gain.
// Prints one JSON line: `{rows: [...]}` in bench/run.ts's row shape.
import { child, freePort, type ChildServer } from '../test/support/server.js';
import { startHaproxy, type Haproxy } from '../test/support/haproxy.js';
import { HOOK_BODY, load, median, schemaOn, type BenchRow } from './cap-lib.js';

const [DB, runsArg, secondsArg] = process.argv.slice(2);
if (!DB || DB === '-') throw new Error('usage: proxy.js <postgres-url> [runs] [seconds]');
const RUNS = Number(runsArg ?? 1);
const SECONDS = Number(secondsArg ?? 5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BATCH = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ type: 'tool', agent: `bench-${i % 20}`, team: 'bench', tool: 'Read', activity: `reading file ${i}` })));
const SINGLE = JSON.stringify({ type: 'status', agent: 'bench-1', team: 'bench', status: 'working', activity: 'Reconciling invoices' });

type Http = { rps: number; p50: number; p99: number; errors: number; non2xx: number };

async function loads(url: string) {
  const http = (path: string, body: string, connections: number) => load<Http>({ mode: 'http', url: url + path, body, connections, seconds: SECONDS, warmupSeconds: 1 });
  const batch = await http('/events', BATCH, 16);
  const single = await http('/events', SINGLE, 64);
  const hooks = await http('/hooks/claude-code', HOOK_BODY, 32);
  const errors = [batch, single, hooks].reduce((a, r) => a + r.errors + r.non2xx, 0);
  return { batch: batch.rps * 200, batchP99: batch.p99, single: single.rps, singleP99: single.p99, hooks: hooks.rps, hooksP99: hooks.p99, errors };
}

async function once() {
  // One node, directly.
  const db1 = schemaOn(DB, 6);
  const one = await child({ args: ['--db', db1.url] });
  let r1: Awaited<ReturnType<typeof loads>>;
  try {
    await sleep(1000);
    r1 = await loads(one.url);
  } finally {
    await one.stop('SIGKILL');
    await db1.drop();
  }
  // Three nodes behind HAProxy.
  const db3 = schemaOn(DB, 6);
  const port = await freePort();
  const nodes: ChildServer[] = [];
  let proxy: Haproxy | null = null;
  let r3: Awaited<ReturnType<typeof loads>>;
  try {
    for (let i = 0; i < 3; i++) nodes.push(await child({ args: ['--db', db3.url, '--origin', `http://127.0.0.1:${port}`] }));
    proxy = await startHaproxy(nodes.map((n) => n.port), { port });
    await sleep(1500);
    r3 = await loads(proxy.url);
  } finally {
    await proxy?.stop();
    for (const n of nodes) await n.stop('SIGKILL');
    await db3.drop();
  }
  return { r1, r3 };
}

const runs: Awaited<ReturnType<typeof once>>[] = [];
for (let i = 0; i < RUNS; i++) runs.push(await once());
const w = 'PostgreSQL, one node vs three behind HAProxy';
const pair = (label: string, k: 'batch' | 'single' | 'hooks' | 'batchP99' | 'singleP99' | 'hooksP99', unit: string): BenchRow[] => [
  { workload: w, metric: `${label}, one node`, values: runs.map((r) => r.r1[k]), unit },
  { workload: w, metric: `${label}, three nodes through HAProxy${unit === 'ms' ? '' : ' (the sum)'}`, values: runs.map((r) => r.r3[k]), unit },
];
const ratio = runs.map((r) => r.r3.batch / r.r1.batch);
const rows: BenchRow[] = [
  ...pair('batched ingest (200 per request, 16 connections)', 'batch', 'ev/s'),
  { workload: w, metric: 'batched ingest, three nodes ÷ one node', values: ratio, unit: '×', target: '≥ 2× (or PostgreSQL the limit)', met: median(ratio) >= 2 },
  ...pair('batched ingest latency p99', 'batchP99', 'ms'),
  ...pair('single-event ingest (64 connections)', 'single', 'ev/s'),
  ...pair('single-event latency p99', 'singleP99', 'ms'),
  ...pair('PreToolUse hooks (32 connections)', 'hooks', '/s'),
  ...pair('hook latency p99', 'hooksP99', 'ms'),
  { workload: w, metric: 'errors and non-2xx answers (all loads, both setups)', values: [runs.reduce((a, r) => a + r.r1.errors + r.r3.errors, 0)], unit: '', target: '0', met: runs.every((r) => r.r1.errors + r.r3.errors === 0) },
];
process.stdout.write(JSON.stringify({ rows }) + '\n');
process.exit(0);
