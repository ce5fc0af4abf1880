// `npm run bench`: measures Roost on this machine and prints one table.
// Every workload runs `--runs` times (default 3) and reports the median and the
// range; servers and the load generator are separate processes.
//
//   node dist/bench/run.js [--quick] [--only host,ingest,batch,fanout,mux,idle,storm,restart,hostile,nests,lease,hooks,trust,bulk,restart-agents,fold,work-fold,search,signin,flock,flock-ingest,push,webhooks,capacity,proxy]
//                          [--runs 3] [--seconds 5] [--warmup 1]
//                          [--db postgres://...] [--nodes 2]

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT } from '../src/server/app.js';

const { values: args } = parseArgs({
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
const RUNS = Number(args.runs ?? (args.quick ? 1 : 3));
const SECONDS = Number(args.seconds ?? (args.quick ? 3 : 5));
const WARMUP = Number(args.warmup ?? 1);
/**
 * Roost's ingest windows per run, each between two of the baseline's. Four: one window
 * against its neighbours moves by ±5 points with the host (docs/architecture.md,
 * "Measuring"), and a run's share is the mean of its windows.
 */
const INGEST_WINDOWS = args.quick ? 1 : 4;
const NODES = Number(args.nodes);
const DB = args.db;
const RESTART_EVENTS = Number(args.events ?? (args.quick ? 200_000 : 1_000_000));
const ONLY = args.only ? new Set(args.only.split(',')) : null;
const BENCH = join(PACKAGE_ROOT, 'dist', 'bench');
const tmp: string[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'roost-bench-'));
  tmp.push(d);
  return d;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A port nobody listens on now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}

interface Proc {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

async function waitHealthy(url: string, proc: ChildProcess, path = '/health', timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`process exited (${proc.exitCode})`);
    try {
      const r = await fetch(url + path, { signal: AbortSignal.timeout(2000) });
      if (r.status < 500) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await sleep(10);
  }
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

async function roost(dataDir = tempDir(), env: Record<string, string> = {}): Promise<Proc & { startMs: number }> {
  const port = await freePort();
  const argv = [join(PACKAGE_ROOT, 'bin', 'roost.js'), 'serve', '--port', String(port), '--data', dataDir];
  if (DB) argv.push('--db', DB);
  const t0 = performance.now();
  const proc = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc);
  return { url, proc, stop: stopper(proc), startMs: performance.now() - t0 };
}

async function baseline(): Promise<Proc> {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(BENCH, 'baseline-server.js'), String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc, '/');
  return { url, proc, stop: stopper(proc) };
}

/** Runs the load generator once and returns its JSON line. */
function load<T>(cfg: object): Promise<T> {
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
function child<T>(script: string, argv: string[]): Promise<T> {
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

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

// ------------------------------------------------------------------ table

interface Row {
  workload: string;
  metric: string;
  values: number[];
  unit: string;
  target?: string;
  ok?: (median: number) => boolean;
  note?: string;
}
const rows: Row[] = [];

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function add(r: Row): void {
  rows.push(r);
  const m = median(r.values);
  process.stderr.write(`  ${r.workload} / ${r.metric}: ${fmt(m)} ${r.unit} [${r.values.map(fmt).join(', ')}]\n`);
}

function printTable(): void {
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

const want = (name: string) => !ONLY || ONLY.has(name);

// ------------------------------------------------------------------ workloads

const SINGLE = JSON.stringify({ type: 'status', agent: 'bench-1', team: 'bench', status: 'working', activity: 'Reconciling invoices' });
const BATCH = JSON.stringify(
  Array.from({ length: 200 }, (_, i) => ({ type: 'tool', agent: `bench-${i % 20}`, team: 'bench', tool: 'Read', activity: `reading file ${i}` })),
);

/** Ingest against every node at once (one load process per node); summed requests/s. */
async function ingest(urls: string[], body: string, connections: number) {
  const per = Math.max(1, Math.round(connections / urls.length));
  const rs = await Promise.all(
    urls.map((u) => load<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }>({ mode: 'http', url: u + '/events', body, connections: per, seconds: SECONDS, warmupSeconds: WARMUP })),
  );
  const bad = rs.reduce((a, r) => a + r.errors + r.non2xx, 0);
  if (bad) process.stderr.write(`  warning: ${bad} errors or non-2xx answers\n`);
  return { rps: rs.reduce((a, r) => a + r.rps, 0), p50: Math.max(...rs.map((r) => r.p50)), p99: Math.max(...rs.map((r) => r.p99)) };
}

async function nodes(): Promise<Proc[]> {
  const dir = tempDir();
  const out: Proc[] = [];
  for (let i = 0; i < NODES; i++) out.push(await roost(DB ? tempDir() : dir));
  return out;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  process.stderr.write(`roost bench: ${RUNS} run(s) per workload, ${SECONDS}s load windows, store ${DB ? 'postgres' : 'sqlite'}, ${NODES} node(s)\n`);

  if (want('host')) {
    // The machine's hiccups while nothing of Roost runs: one busy loop, then one per core (bench/jitter.ts).
    type Jitter = { over1PerS: number; over3PerS: number; maxMs: number; lostPct: number };
    const one: Jitter[] = [];
    const two: Jitter[] = [];
    for (let i = 0; i < RUNS; i++) {
      one.push(await child<Jitter>('jitter.js', ['2']));
      const pair = await Promise.all([child<Jitter>('jitter.js', ['2']), child<Jitter>('jitter.js', ['2'])]);
      two.push(...pair);
    }
    add({ workload: 'host: a busy loop, machine otherwise idle', metric: 'pauses over 1 ms per second', values: one.map((j) => j.over1PerS), unit: '/s' });
    add({ workload: 'host: a busy loop, machine otherwise idle', metric: 'longest pause', values: one.map((j) => j.maxMs), unit: 'ms' });
    add({ workload: 'host: a busy loop on each core', metric: 'pauses over 1 ms per second', values: two.map((j) => j.over1PerS), unit: '/s' });
    add({ workload: 'host: a busy loop on each core', metric: 'pauses over 3 ms per second', values: two.map((j) => j.over3PerS), unit: '/s' });
    add({ workload: 'host: a busy loop on each core', metric: 'longest pause', values: two.map((j) => j.maxMs), unit: 'ms' });
    // Waking a process that sleeps (bench/wake.ts): what every answer to a waiting client pays here.
    type Wake = { writeP50Us: number; writeP99Us: number; tripP50Us: number; tripP99Us: number };
    const wakes: Wake[] = [];
    for (let i = 0; i < RUNS; i++) wakes.push(await child<Wake>('wake.js', [args.quick ? '500' : '2000']));
    const w = 'host: a write to an idle process over loopback, and its echo';
    add({ workload: w, metric: 'the write call, p50', values: wakes.map((x) => x.writeP50Us), unit: 'µs' });
    add({ workload: w, metric: 'the write call, p99', values: wakes.map((x) => x.writeP99Us), unit: 'µs' });
    add({ workload: w, metric: 'round trip, p50', values: wakes.map((x) => x.tripP50Us), unit: 'µs' });
    add({ workload: w, metric: 'round trip, p99', values: wakes.map((x) => x.tripP99Us), unit: 'µs' });
  }

  if (want('ingest')) {
    // The baseline and Roost in turns, both servers up (the one not loaded is idle):
    // B R B R … B per run, each Roost window compared with the mean of the baseline
    // windows on either side. This machine's speed drifts by tens of percent within
    // a minute (docs/architecture.md, "Measuring"), so a comparison is only as good
    // as it is close in time.
    const base = { rps: [] as number[], p50: [] as number[], p99: [] as number[] };
    const single = { rps: [] as number[], p50: [] as number[], p99: [] as number[] };
    const share: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const b = await baseline();
      const ns = await nodes();
      const bs = [await ingest([b.url], SINGLE, 64)];
      const rs: Awaited<ReturnType<typeof ingest>>[] = [];
      for (let w = 0; w < INGEST_WINDOWS; w++) {
        rs.push(await ingest(ns.map((n) => n.url), SINGLE, 64));
        bs.push(await ingest([b.url], SINGLE, 64));
      }
      await Promise.all([b.stop(), ...ns.map((n) => n.stop())]);
      const mean = (v: number[]) => v.reduce((a, x) => a + x, 0) / v.length;
      base.rps.push(mean(bs.map((r) => r.rps)));
      base.p50.push(median(bs.map((r) => r.p50)));
      base.p99.push(median(bs.map((r) => r.p99)));
      single.rps.push(mean(rs.map((r) => r.rps)));
      single.p50.push(median(rs.map((r) => r.p50)));
      single.p99.push(median(rs.map((r) => r.p99)));
      share.push(mean(rs.map((r, w) => (200 * r.rps) / (bs[w].rps + bs[w + 1].rps))));
    }
    add({ workload: 'baseline: bare node:http', metric: 'requests/s, 64 connections', values: base.rps, unit: 'req/s' });
    add({ workload: 'baseline: bare node:http', metric: 'latency p50', values: base.p50, unit: 'ms' });
    add({ workload: 'baseline: bare node:http', metric: 'latency p99', values: base.p99, unit: 'ms' });
    add({ workload: 'durable single-event POST /events', metric: 'events/s, 64 connections', values: single.rps, unit: 'ev/s', target: 'aim 12,000' });
    add({
      workload: 'durable single-event POST /events',
      metric: 'share of baseline',
      values: share,
      unit: '%',
      target: '≥ 60%',
      ok: (m) => m >= 60,
      note: 'each window against the baseline windows either side',
    });
    add({ workload: 'durable single-event POST /events', metric: 'latency p50', values: single.p50, unit: 'ms' });
    add({ workload: 'durable single-event POST /events', metric: 'latency p99', values: single.p99, unit: 'ms' });
  }

  if (want('batch')) {
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const r = await ingest(ns.map((n) => n.url), BATCH, 16);
      await Promise.all(ns.map((n) => n.stop()));
      v.push(r.rps * 200);
    }
    add({ workload: 'batched POST /events (200 per request)', metric: 'durable events/s, 16 connections', values: v, unit: 'ev/s', target: '> 150,000', ok: (m) => m > 150_000 });
  }

  if (want('fanout')) {
    const p50: number[] = [];
    const p99: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const urls = ns.map((n) => n.url);
      // With several nodes, events go in on the first and out on the others: cross-node latency.
      const r = await load<{ p50: number; p99: number; received: number; expected: number }>({
        mode: 'fanout',
        streams: urls.length > 1 ? urls.slice(1) : urls,
        posts: [urls[0]],
        subscribers: 1000,
        measured: 100,
        rate: 500,
        seconds: SECONDS * 2,
      });
      await Promise.all(ns.map((n) => n.stop()));
      if (r.received !== r.expected) process.stderr.write(`  warning: fan-out delivered ${r.received} of ${r.expected} measured frames\n`);
      p50.push(r.p50);
      p99.push(r.p99);
    }
    const note = NODES > 1 ? 'posted to node 1, read on the others; latency sampled on 100 of the 1,000' : 'latency sampled on 100 of the 1,000';
    add({ workload: 'fan-out: 1,000 SSE subscribers, 500 events/s', metric: 'delivery latency p50', values: p50, unit: 'ms', note });
    add({ workload: 'fan-out: 1,000 SSE subscribers, 500 events/s', metric: 'delivery latency p99', values: p99, unit: 'ms', target: '< 100 ms', ok: (m) => m < 100 });
  }

  if (want('mux')) {
    // The one live connection of a browser: four scopes per connection (the
    // floor, approvals, a fleet board, Work), the floor posted to as in the
    // fan-out, so the two rows compare the mux form's cost with the single one's.
    const p50: number[] = [];
    const p99: number[] = [];
    const path = '/live?' + ['floor:default', 'approvals:default', 'fleet:default/bench', 'work:default'].map((s) => 's=' + encodeURIComponent(s)).join('&');
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
        path,
      });
      await Promise.all(ns.map((n) => n.stop()));
      if (r.received !== r.expected) process.stderr.write(`  warning: mux delivered ${r.received} of ${r.expected} measured frames\n`);
      p50.push(r.p50);
      p99.push(r.p99);
    }
    const note = 'floor, approvals, a fleet board and Work on each connection; latency of the floor frames, sampled on 100 of the 1,000';
    add({ workload: 'mux: 1,000 connections × 4 scopes, 500 events/s', metric: 'delivery latency p50', values: p50, unit: 'ms', note });
    add({ workload: 'mux: 1,000 connections × 4 scopes, 500 events/s', metric: 'delivery latency p99', values: p99, unit: 'ms', target: '< 100 ms', ok: (m) => m < 100 });
  }

  if (want('tabs') && NODES === 1) {
    // The browser's side of the one live connection: ten tabs, one connection (docs/web.md).
    const conns: number[] = [];
    const live: number[] = [];
    const d50: number[] = [];
    const d99: number[] = [];
    const p50: number[] = [];
    const p99: number[] = [];
    // One run (ten tabs cost about 20 s), two with --runs above 3.
    for (let i = 0; i < (RUNS > 3 ? 2 : 1); i++) {
      const r = await child<{ connections: number; liveMs: number; deliveredP50: number; deliveredP99: number; p50: number; p99: number }>('tabs.js', ['10']);
      conns.push(r.connections);
      live.push(r.liveMs);
      d50.push(r.deliveredP50);
      d99.push(r.deliveredP99);
      p50.push(r.p50);
      p99.push(r.p99);
    }
    const label = '10 tabs in one Chromium (floor ×4, fleet ×2, inbox ×2, Work ×2)';
    add({ workload: label, metric: 'live connections to the server', values: conns, unit: '', target: '1', ok: (m) => m === 1 });
    add({ workload: label, metric: 'time until all 10 say Live', values: live, unit: 'ms' });
    add({ workload: label, metric: 'new agent, POST to its frame in each floor tab, p50', values: d50, unit: 'ms' });
    add({ workload: label, metric: 'new agent, POST to its frame in each floor tab, p99', values: d99, unit: 'ms' });
    const note = 'headless Chromium paints the tabs it does not show about once a second';
    add({ workload: label, metric: 'new agent, POST to its row in each floor tab, p50', values: p50, unit: 'ms', note });
    add({ workload: label, metric: 'new agent, POST to its row in each floor tab, p99', values: p99, unit: 'ms', target: '< 2,000 ms', ok: (m) => m < 2000 });
  }

  if (want('floor500') && NODES === 1) {
    // The floor in Chromium with 500 agents in 20 rooms at 200 events/s (bench/browser.ts --frames-only):
    // frame intervals (rAF to rAF) in the default view, where names are readable and the rest is a pan
    // away, and zoomed out to the whole floor. One run each (a run is about 45 s).
    for (const whole of [false, true]) {
      const r = await child<{ median: number; p99: number; max: number; workMedian: number; workP99: number; load: number; namePx: number }>('browser.js', ['--frames-only', args.quick ? '10' : '20', '--agents', '500', ...(whole ? ['--whole'] : [])]);
      const label = `floor in Chromium: 500 agents, 20 rooms, 200 events/s, ${whole ? 'zoomed out to the whole floor' : 'the default view'}`;
      const note = `names ${r.namePx.toFixed(1)} px; the floor's own work per frame ${r.workMedian.toFixed(1)} ms median, ${r.workP99.toFixed(1)} ms p99; load ${r.load.toFixed(1)}`;
      add({ workload: label, metric: 'frame interval, median', values: [r.median], unit: 'ms', target: '< 16.7 ms', ok: (m) => m < 16.7, note });
      add({ workload: label, metric: 'frame interval, p99', values: [r.p99], unit: 'ms', target: '< 50 ms', ok: (m) => m < 50 });
    }
  }

  if (want('push') && NODES === 1) {
    // Notifications (issue 18): an approval to its push message, a notification's click to the decision on a phone.
    const push: number[] = [];
    const click: number[] = [];
    const cold: number[] = [];
    const worst = { push: 0, click: 0, cold: 0 };
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ pushP50: number; pushMax: number; clickP50: number; clickMax: number; coldP50: number; coldMax: number }>('push.js', [String(args.quick ? 3 : 5)]);
      push.push(r.pushP50);
      click.push(r.clickP50);
      cold.push(r.coldP50);
      worst.push = Math.max(worst.push, r.pushMax);
      worst.click = Math.max(worst.click, r.clickMax);
      worst.cold = Math.max(worst.cold, r.coldMax);
    }
    const label = 'push: approval → push service stand-in → service worker → decision';
    add({ workload: label, metric: 'approval posted → push message at the stand-in, p50', values: push, unit: 'ms', target: '< 1,000 ms', ok: (m) => m < 1000, note: `worst ${fmt(worst.push)} ms` });
    const phone = 'phone: 390×844, touch, 4× CPU slowdown';
    add({ workload: label, metric: `click → decision interactive, app open, p50 (${phone})`, values: click, unit: 'ms', target: '< 1,500 ms', ok: (m) => m < 1500, note: `worst ${fmt(worst.click)} ms` });
    add({ workload: label, metric: `decision page loaded fresh → interactive, p50 (${phone}; the worker's openWindow)`, values: cold, unit: 'ms', target: '< 1,500 ms', ok: (m) => m < 1500, note: `worst ${fmt(worst.cold)} ms` });
  }

  if (want('webhooks') && NODES === 1) {
    // Outbound webhooks (issue 31): 1,000 deliveries once and in order per target; a 30 s outage, then every one arrives, none twice.
    // One run (the outage alone takes 30 s); ROOST_BENCH_WEBHOOK_OUTAGE_S shortens it.
    const r = await child<{ deliveries: number; firstMs: number; perSecond: number; firstOnce: boolean; firstOrdered: boolean; outageS: number; failedAttempts: number; recoverMs: number; secondOnce: boolean; secondOrdered: boolean; twice: number; badSignatures: number }>('webhooks.js', [
      process.env.ROOST_BENCH_WEBHOOK_OUTAGE_S ?? '30',
    ]);
    const label = 'webhooks: 4 targets × 250 events to a local receiver (signatures checked), SQLite';
    const good1 = r.firstOnce && r.firstOrdered && r.badSignatures === 0;
    add({ workload: label, metric: `${r.deliveries} deliveries, all delivered once, in order per target`, values: [r.firstMs], unit: 'ms', target: 'all once, in order', ok: () => good1, note: `${fmt(r.perSecond)}/s; once ${r.firstOnce}, in order ${r.firstOrdered}` });
    const good2 = r.secondOnce && r.secondOrdered && r.twice === 0;
    add({
      workload: label,
      metric: `receiver down ${r.outageS} s while ${r.deliveries} more wait, then back: all arrive, none twice (time after it is back)`,
      values: [r.recoverMs],
      unit: 'ms',
      target: 'all arrive, none twice',
      ok: () => good2,
      note: `${r.failedAttempts} failed attempts during the outage (backoff base 100 ms); once ${r.secondOnce}, in order ${r.secondOrdered}`,
    });
  }

  if (want('idle') && NODES === 1) {
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost();
      await sleep(500);
      const before = rssKb(n.proc.pid!);
      const p = spawn(process.execPath, [join(BENCH, 'load.js'), JSON.stringify({ mode: 'idle', streams: [n.url], subscribers: 5000 })], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((ok, fail) => {
        const rl = createInterface({ input: p.stdout });
        rl.once('line', () => ok());
        p.once('exit', (c) => fail(new Error(`idle load exited ${c}`)));
      });
      const after = rssKb(n.proc.pid!);
      p.kill('SIGKILL');
      await n.stop();
      v.push(((after - before) * 1024) / 5000 / 1000);
    }
    add({ workload: 'idle subscribers (5,000 streams)', metric: 'server RSS per idle subscriber', values: v, unit: 'KB', target: '< 20 KB', ok: (m) => m < 20 });
  }

  if (want('storm')) {
    const t: number[] = [];
    let gaps = 0;
    let dups = 0;
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const urls = ns.map((n) => n.url);
      const r = await load<{ caughtUpMs: number; gaps: number; duplicates: number }>({ mode: 'storm', streams: urls, posts: urls, subscribers: 1000, rate: 200 });
      await Promise.all(ns.map((n) => n.stop()));
      t.push(r.caughtUpMs);
      gaps += r.gaps;
      dups += r.duplicates;
    }
    add({ workload: 'reconnect storm: 1,000 subscribers, 200 events/s', metric: 'time until all caught up', values: t, unit: 'ms', target: '< 2,000 ms', ok: (m) => m < 2000 });
    add({ workload: 'reconnect storm: 1,000 subscribers, 200 events/s', metric: 'gaps + duplicates seen (all runs)', values: [gaps + dups], unit: '', target: '0', ok: (m) => m === 0 });
  }

  if (want('restart') && !DB) {
    const dir = tempDir();
    const pre = await new Promise<{ events: number; ms: number }>((ok, fail) => {
      const p = spawn(process.execPath, [join(BENCH, 'prefill.js'), dir, String(RESTART_EVENTS)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('exit', (c) => (c === 0 ? ok(JSON.parse(out)) : fail(new Error('prefill failed'))));
    });
    // The first start folds the whole log and writes snapshots as it goes.
    const first = await roost(dir);
    await first.stop();
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost(dir);
      v.push(n.startMs);
      await n.stop();
    }
    const label = `restart with ${RESTART_EVENTS.toLocaleString('en-US')} events in the log`;
    add({ workload: label, metric: 'first start, no snapshot yet (fold all)', values: [first.startMs], unit: 'ms', note: `prefill ${pre.ms} ms` });
    add({ workload: label, metric: 'restart to serving (snapshots)', values: v, unit: 'ms', target: '< 3,000 ms', ok: (m) => m < 3000 });
  }

  if (want('hostile') && !DB) {
    // One 125 KB POST /events of 200 messages to 50 new recipients each (issue 12, part 7).
    const held: number[] = [];
    const cpu: number[] = [];
    let status = 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ status: number; loopMaxMs: number; cpuMs: number; agents: number }>('hostile.js', ['batch', tempDir()]);
      held.push(r.loopMaxMs);
      cpu.push(r.cpuMs);
      status = r.status;
    }
    const label = 'hostile batch: 200 messages to 50 new recipients each (125 KB)';
    add({ workload: label, metric: 'event loop held (longest gap of a 1 ms timer)', values: held, unit: 'ms', note: `answered ${status}`, target: '< 50 ms', ok: (m) => m < 50 });
    add({ workload: label, metric: 'server CPU for the request (incl. the probe timer)', values: cpu, unit: 'ms' });
  }

  if (want('nests') && !DB) {
    // 100 readers of a 5,000-record nest's stream at once, each reopening once it has the history (issue 37, point 6; bench/nests.ts).
    const p99: number[] = [];
    const p50: number[] = [];
    let note = '';
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ p50: number; p99: number; max: number; histories: number; builds: number; serverCpuS: number }>('nests.js', [String(Math.max(SECONDS, 5)), '100', '5000']);
      p99.push(r.p99);
      p50.push(r.p50);
      note = `${r.histories} histories read, ${r.builds} builds of it`;
    }
    const label = '100 concurrent streams of a 5,000-record nest (GET /api/events?nest_id=)';
    add({ workload: label, metric: 'GET /health latency p50', values: p50, unit: 'ms' });
    add({ workload: label, metric: 'GET /health latency p99', values: p99, unit: 'ms', note, target: '< 100 ms', ok: (m) => m < 100 });
  }

  // How far one node carries, and three behind HAProxy (issue 34; bench/capacity.ts, bench/proxy.ts).
  for (const script of ['capacity', 'proxy']) if (want(script) && NODES === 1 && (script === 'capacity' || DB)) for (const r of (await child<{ rows: (Row & { met?: boolean })[] }>(`${script}.js`, [DB ?? '-', String(args.quick ? 1 : RUNS), String(SECONDS)])).rows) add({ ...r, ok: r.met === undefined ? undefined : () => r.met! });

  if (want('lease') && DB) {
    // Two nodes on PostgreSQL: the one driving a list is SIGKILLed with a crow in the air (issue 37, point 10; bench/lease.ts).
    const r = await child<{ runs: { driverMs: number; resumeMs: number }[] }>('lease.js', [DB, String(RUNS)]);
    const label = 'a list after its driving node is SIGKILLed (2 nodes, PostgreSQL, default lease)';
    add({ workload: label, metric: 'the other node drives', values: r.runs.map((x) => x.driverMs), unit: 'ms' });
    add({ workload: label, metric: 'the list resumes (the crow in the air asked again)', values: r.runs.map((x) => x.resumeMs), unit: 'ms', target: '< 5,000 ms', ok: (m) => m < 5000 });
  }

  if (want('hooks') && NODES === 1) {
    // Claude Code's http observation hook waits for Roost's answer: a tool outside the approval rules,
    // 500 calls one after another (the CLI sends them so), each a durable append.
    const payload = readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '05-PreToolUse-Bash-subagent.json'), 'utf8');
    const p50: number[] = [];
    const p99: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost();
      const times: number[] = [];
      for (let k = 0; k < 500; k++) {
        const t0 = performance.now();
        const r = await fetch(n.url + '/hooks/claude-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
        await r.text();
        times.push(performance.now() - t0);
      }
      await n.stop();
      times.sort((a, b) => a - b);
      p50.push(times[250]);
      p99.push(times[494]);
    }
    add({ workload: 'observation hook (POST /hooks/claude-code, not held)', metric: 'latency p50', values: p50, unit: 'ms', target: '< 50 ms', ok: (m) => m < 50 });
    add({ workload: 'observation hook (POST /hooks/claude-code, not held)', metric: 'latency p99', values: p99, unit: 'ms' });
  }

  if ((want('trust') || want('bulk')) && NODES === 1) {
    // Earned trust (issue 30; docs/approvals.md "Earned trust"): Claude Code's fail-closed command hook
    // (`hold=1`) with Bash under the approval rules, posting its recorded PreToolUse payload.
    const pre = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;
    const hold = (url: string, command: string, k: number) =>
      fetch(url + '/hooks/claude-code?approvals=Bash&window=120000&hold=1&team=bench', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...pre, tool_input: { command }, tool_use_id: `toolu_bench_${k}` }) }).then(
        async (r) => ((await r.json()) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput?.permissionDecision ?? '',
      );
    const pendingOf = async (url: string) => ((await (await fetch(url + '/approvals')).json()) as { pending: { id: string; input: string }[] }).pending;
    const waitPending = async (url: string, n: number) => {
      for (const end = Date.now() + 60_000; Date.now() < end; await sleep(20)) {
        const p = await pendingOf(url);
        if (p.length >= n) return p;
      }
      throw new Error(`${n} calls did not come to wait`);
    };
    if (want('trust')) {
      // An auto-allowed call: after three people's allows of `npm test`, 500 more, one after another; each answered allow at once.
      const p50: number[] = [];
      const p99: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const n = await roost();
        await fetch(n.url + '/api/trust/agents', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on: true }) });
        for (let k = 0; k < 3; k++) {
          const held = hold(n.url, 'npm test', k);
          const [a] = await waitPending(n.url, 1);
          await fetch(`${n.url}/approvals/${a.id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow', by: 'bench' }) });
          await held;
        }
        const times: number[] = [];
        for (let k = 0; k < 500; k++) {
          const t0 = performance.now();
          const d = await hold(n.url, 'npm test', 100 + k);
          times.push(performance.now() - t0);
          if (d !== 'allow') throw new Error(`call ${k} was not allowed by trust (${d})`);
        }
        await n.stop();
        times.sort((a, b) => a - b);
        p50.push(times[250]);
        p99.push(times[494]);
      }
      const label = 'an auto-allowed call (held hook, trusted class; SQLite)';
      add({ workload: label, metric: 'hook request to answer p50', values: p50, unit: 'ms' });
      add({ workload: label, metric: 'hook request to answer p99', values: p99, unit: 'ms', target: '< 10 ms', ok: (m) => m < 10 });
    }
    if (want('bulk')) {
      // A bulk decision: 200 held calls, allowed in one POST /approvals/decisions; the answer, and every held hook woken.
      const answered: number[] = [];
      const woken: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const n = await roost();
        const hooks: Promise<string>[] = [];
        for (let k = 0; k < 200; k++) hooks.push(hold(n.url, `make target${k}`, k));
        const ids = (await waitPending(n.url, 200)).map((a) => a.id);
        const t0 = performance.now();
        const r = await fetch(n.url + '/approvals/decisions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids, decision: 'allow', by: 'bench' }) });
        const body = (await r.json()) as { decided: number };
        answered.push(performance.now() - t0);
        const all = await Promise.all(hooks);
        woken.push(performance.now() - t0);
        if (body.decided !== 200 || all.some((d) => d !== 'allow')) throw new Error(`bulk decided ${body.decided}, ${all.filter((d) => d === 'allow').length} hooks allowed`);
        await n.stop();
      }
      const label = 'a bulk decision of 200 waiting calls (POST /approvals/decisions; SQLite)';
      add({ workload: label, metric: 'answered', values: answered, unit: 'ms', target: '< 1,000 ms', ok: (m) => m < 1000 });
      add({ workload: label, metric: 'all 200 held hooks answered', values: woken, unit: 'ms', target: '< 1,000 ms', ok: (m) => m < 1000 });
    }
  }

  if (want('restart-agents') && !DB) {
    // A floor of 10,000 agents (the cap), made by hostile batches stored past the edge, all in one room.
    const dir = tempDir();
    await child<{ agents: number }>('hostile.js', ['prefill', dir, '10000']);
    const serve = async () => {
      const n = await roost(dir);
      const t = performance.now();
      const st = (await (await fetch(n.url + '/state')).json()) as { agents: unknown[] };
      const ms = n.startMs + (performance.now() - t);
      await n.stop();
      if (st.agents.length !== 10_000) process.stderr.write(`  warning: ${st.agents.length} agents on the floor, not 10,000\n`);
      return ms;
    };
    const first = await serve();
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) v.push(await serve());
    const label = 'restart with 10,000 agents on the floor';
    add({ workload: label, metric: 'first start to GET /state answered', values: [first], unit: 'ms' });
    add({ workload: label, metric: 'restart to GET /state answered', values: v, unit: 'ms', target: '< 3,000 ms', ok: (m) => m < 3000 });
  }

  if (want('fold')) {
    const v: number[] = [];
    const vp: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await new Promise<{ foldPerSec: number; parseFoldPerSec: number }>((ok, fail) => {
        const p = spawn(process.execPath, [join(BENCH, 'fold.js'), '1000000'], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.on('exit', (c) => (c === 0 ? ok(JSON.parse(out)) : fail(new Error('fold bench failed'))));
      });
      v.push(r.foldPerSec);
      vp.push(r.parseFoldPerSec);
    }
    add({ workload: 'pure floor fold (200 agents, 8 teams)', metric: 'events/s', values: v, unit: 'ev/s', target: '> 1,000,000', ok: (m) => m > 1_000_000 });
    add({ workload: 'pure floor fold (200 agents, 8 teams)', metric: 'JSON.parse + fold, events/s', values: vp, unit: 'ev/s' });
  }

  if (want('search')) {
    // Full-text search over a large log (bench/search.ts, docs/search.md): a two-word query with a team filter, first page.
    const count = Number(args.events ?? (args.quick ? 100_000 : 1_000_000));
    const p99: number[] = [];
    const p50: number[] = [];
    const size: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ p50: number; p99: number; indexBytes: number }>('search.js', [String(count)]);
      p99.push(r.p99);
      p50.push(r.p50);
      size.push(r.indexBytes / count);
    }
    const label = `search, SQLite FTS5 (${count.toLocaleString('en')} floor events, 8 teams)`;
    add({ workload: label, metric: 'two words + team, p99', values: p99, unit: 'ms', target: '< 50', ok: (m) => m < 50 });
    add({ workload: label, metric: 'two words + team, p50', values: p50, unit: 'ms' });
    add({ workload: label, metric: 'index bytes per event', values: size, unit: 'B' });
  }

  if (want('work-fold')) {
    const v: number[] = [];
    const ratio: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ perSec: number; lastOverFirst: number }>('work-fold.js', ['1000000']);
      v.push(r.perSec);
      ratio.push(r.lastOverFirst);
    }
    const label = 'pure Work fold (1,000,000 messages in one conversation)';
    add({ workload: label, metric: 'events/s', values: v, unit: 'ev/s', target: '> 500,000', ok: (m) => m > 500_000 });
    add({ workload: label, metric: 'time of the last tenth over the first (1 = linear)', values: ratio, unit: '×' });
  }

  if (want('flock')) {
    // The flock with a model that answers at once (bench/flock.ts): Roost's own time per item, and 20 lists of 50 with 100 watchers.
    const p99: number[] = [];
    const p50: number[] = [];
    const cpu: number[] = [];
    const bulk: number[] = [];
    const complete: string[] = [];
    const acc50: number[] = [];
    const acc99: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ cpuPerItem: number; perItemP50: number; perItemP99: number; acceptedP50: number; acceptedP99: number; bulkSeconds: number; watchersComplete: string }>('flock.js', [
        args.quick ? '200' : '1000',
        '20',
        '50',
      ]);
      cpu.push(r.cpuPerItem);
      p50.push(r.perItemP50);
      p99.push(r.perItemP99);
      acc50.push(r.acceptedP50);
      acc99.push(r.acceptedP99);
      bulk.push(r.bulkSeconds);
      complete.push(r.watchersComplete);
    }
    const label = 'flock, a model answering at once (one-item lists in turn; trusted, so no approvals)';
    add({ workload: label, metric: "CPU per item (the server's process)", values: cpu, unit: 'ms' });
    add({ workload: label, metric: 'per item, POST sent to list.finished, p50', values: p50, unit: 'ms' });
    add({ workload: label, metric: 'per item, POST sent to list.finished, p99', values: p99, unit: 'ms', target: '< 5 ms', ok: (m) => m < 5 });
    add({ workload: label, metric: 'the POST answered (202, the list durable), p50', values: acc50, unit: 'ms' });
    add({ workload: label, metric: 'the POST answered (202, the list durable), p99', values: acc99, unit: 'ms' });
    add({
      workload: '20 flock lists of 50 items at once, 5 watchers each',
      metric: 'until every list finished',
      values: bulk,
      unit: 's',
      target: 'every event to all 100 watchers',
      ok: () => complete.every((c) => c === '100/100'),
      note: `watchers with every event: ${complete.join(', ')}`,
    });
  }

  if (want('flock-ingest')) {
    // Floor ingest with and without 20 flock lists of 50 items in flight, in turns in the same run (bench/flock-ingest.ts).
    const ratio: number[] = [];
    const ratioSlow: number[] = [];
    const without: number[] = [];
    const withFlock: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // The model answering at once: the flock works as fast as Roost lets it (its worst case for ingest).
      const r = await child<{ without: number[]; with: number[]; ratio: number }>('flock-ingest.js', [String(SECONDS), '0', args.quick ? '1' : '4']);
      ratio.push(100 * r.ratio);
      without.push(...r.without);
      withFlock.push(...r.with);
      // A model that takes 1 s per call, as a fast real one does: lists in flight, mostly waiting.
      const s = await child<{ ratio: number }>('flock-ingest.js', [String(SECONDS), '1000', args.quick ? '1' : '4']);
      ratioSlow.push(100 * s.ratio);
    }
    const label = 'single-event POST /events with 20 flock lists of 50 in flight';
    add({ workload: label, metric: 'events/s without the flock (same run)', values: without, unit: 'ev/s' });
    add({ workload: label, metric: 'events/s with the flock, model answering at once', values: withFlock, unit: 'ev/s' });
    add({ workload: label, metric: 'with over without, model answering at once', values: ratio, unit: '%', target: '≥ 95%', ok: (m) => m >= 95 });
    add({ workload: label, metric: 'with over without, model answering in 1 s', values: ratioSlow, unit: '%', target: '≥ 95%', ok: (m) => m >= 95 });
  }

  if (want('signin')) {
    const u: number[] = [];
    const w: number[] = [];
    const ratio: number[] = [];
    const owner: number[] = [];
    const ownerIn: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ unknownMs: number; wrongMs: number; ratio: number; floodOwnerMs: number[]; floodOwnerIn: number; floodOwnerTries: number }>('signin.js', [String(args.quick ? 7 : 15), args.quick ? '3' : '5']);
      u.push(r.unknownMs);
      w.push(r.wrongMs);
      ratio.push(r.ratio);
      owner.push(...r.floodOwnerMs);
      ownerIn.push((100 * r.floodOwnerIn) / r.floodOwnerTries);
    }
    const label = 'sign-in refusals (production scrypt cost)';
    add({ workload: label, metric: 'unknown login, median', values: u, unit: 'ms' });
    add({ workload: label, metric: 'wrong password, median', values: w, unit: 'ms' });
    add({ workload: label, metric: 'unknown over wrong', values: ratio, unit: '×', target: '0.8 – 1.25', ok: (m) => m >= 0.8 && m <= 1.25 });
    const flood = "the owner's sign-in (device cookie) under one address's wrong logins, 40 at a time";
    add({ workload: flood, metric: 'her sign-ins that got in', values: ownerIn, unit: '%', target: '100%', ok: (m) => m >= 100 });
    add({ workload: flood, metric: 'time to sign in', values: owner, unit: 'ms', target: '≤ 2000', ok: (m) => m <= 2000 });
  }

  printTable();
  process.stdout.write(`\n${RUNS} run(s) each; median and range; ${((Date.now() - t0) / 1000).toFixed(0)} s in all; node ${process.version}, ${DB ? 'postgres' : 'sqlite'}, ${NODES} node(s)\n`);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const d of tmp) rmSync(d, { recursive: true, force: true });
  });
