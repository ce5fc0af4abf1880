// How far one node carries (issue 34, point 3): one `roost serve` process
// (SQLite, or PostgreSQL with a URL), the load from separate processes
// (bench/load.ts).
//
//   node dist/bench/capacity.js [postgres-url|-] [runs=1] [seconds=5]
//
// Per run, on a fresh node:
// - 10,000 idle SSE clients on the floor stream: the server's RSS per client
//   (its RSS with them, less its RSS before, over 10,000). 10,000 is also the
//   node's cap on live connections with this machine's open-file limit of
//   20,000 (src/server/fd-limit.ts: half the limit);
// - 9,000 of them stay idle (open on a stream that is quiet meanwhile: the
//   project's approvals) while 1,000 more receive 200 events/s on the floor
//   stream: delivery latency (post to frame), sampled on 100 of the 1,000;
// - for comparison, not the target: all 10,000 receiving the 200 events/s
//   (10 times the writes of the row above);
// - hooks per second: Claude Code's PreToolUse hook (a real payload) on
//   `POST /hooks/claude-code`, 32 connections (each a durable append);
// - agents on the floor: the floor filled to its cap of 10,000 agents (200 per
//   request), the RSS per agent, the snapshot a browser loads
//   (`GET /state`), and single-event ingest with the floor full.
// Prints one JSON line: `{rows: [...]}` in bench/run.ts's row shape.
import { child, type ChildServer } from '../test/support/server.js';
import { fillFloor, HOOK_BODY, idle, load, median, rssKb, schemaOn, type BenchRow } from './cap-lib.js';

const [dbArg, runsArg, secondsArg] = process.argv.slice(2);
const DB = dbArg && dbArg !== '-' ? dbArg : null;
const RUNS = Number(runsArg ?? 1);
const SECONDS = Number(secondsArg ?? 5);
const IDLE = 10_000;
const FAN = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function once() {
  const db = DB ? schemaOn(DB, 6) : null;
  const node: ChildServer = await child({ args: db ? ['--db', db.url] : [] });
  try {
    await sleep(1000);
    // Idle clients.
    const rss0 = rssKb(node.proc.pid!);
    const idler = await idle([node.url], IDLE);
    await sleep(2000);
    const rssIdle = rssKb(node.proc.pid!);
    process.stderr.write(`  capacity: RSS ${rss0} KB → ${rssIdle} KB with ${IDLE} idle clients\n`);
    idler.kill('SIGKILL');
    await sleep(2000);
    // 9,000 idle (on a stream nothing is published to meanwhile) and 1,000 receiving 200 events/s.
    type Fan = { p50: number; p99: number; received: number; expected: number; sent: number };
    const fanout = () => load<Fan>({ mode: 'fanout', streams: [node.url], posts: [node.url], subscribers: FAN, measured: 100, rate: 200, seconds: SECONDS * 2 });
    let rest = await idle([node.url], IDLE - FAN, '/approvals/stream');
    const fan = await fanout();
    rest.kill('SIGKILL');
    process.stderr.write(`  capacity: fan-out to 1,000 p50 ${fan.p50} ms, p99 ${fan.p99} ms (${fan.received} of ${fan.expected}; ${fan.sent} posted)\n`);
    await sleep(2000);
    // The same with the 9,000 on the floor stream too: all 10,000 receive.
    rest = await idle([node.url], IDLE - FAN);
    const all = await fanout();
    rest.kill('SIGKILL');
    process.stderr.write(`  capacity: fan-out to 10,000 p50 ${all.p50} ms, p99 ${all.p99} ms (${all.received} of ${all.expected}; ${all.sent} posted)\n`);
    await sleep(1500);
    // Hooks per second.
    const hooks = await load<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }>({ mode: 'http', url: node.url + '/hooks/claude-code', body: HOOK_BODY, connections: 32, seconds: SECONDS, warmupSeconds: 1 });
    process.stderr.write(`  capacity: hooks ${hooks.rps}/s, p99 ${hooks.p99} ms\n`);
    // The floor at its cap of agents.
    const rssBefore = rssKb(node.proc.pid!);
    const fill = await fillFloor(node.url, 10_000);
    await sleep(1000);
    const rssFull = rssKb(node.proc.pid!);
    const t0 = performance.now();
    const snap = await fetch(node.url + '/state');
    const snapBytes = (await snap.arrayBuffer()).byteLength;
    const stateMs = performance.now() - t0;
    const full = await load<{ rps: number; p50: number; p99: number }>({ mode: 'http', url: node.url + '/events', body: JSON.stringify({ type: 'status', agent: 'cap-77', status: 'working', activity: 'busy' }), connections: 64, seconds: SECONDS, warmupSeconds: 1 });
    return {
      rssPerClientKb: ((rssIdle - rss0) * 1024) / IDLE / 1000,
      fanP50: fan.p50,
      fanP99: fan.p99,
      fanLost: fan.expected - fan.received,
      allP50: all.p50,
      allP99: all.p99,
      allLost: all.expected - all.received,
      hooksPerS: hooks.rps,
      hookP99: hooks.p99,
      hookErrors: hooks.errors + hooks.non2xx,
      fillEvPerS: (fill.joined * 1000) / fill.ms,
      rssPerAgentKb: ((rssFull - rssBefore) * 1024) / fill.joined / 1000,
      stateMs,
      stateKb: snapBytes / 1000,
      fullEvPerS: full.rps,
      fullP99: full.p99,
    };
  } finally {
    await node.stop('SIGKILL');
    await db?.drop();
  }
}

const runs: Awaited<ReturnType<typeof once>>[] = [];
for (let i = 0; i < RUNS; i++) runs.push(await once());
const v = <K extends keyof (typeof runs)[number]>(k: K) => runs.map((r) => r[k]);
const store = DB ? 'PostgreSQL' : 'SQLite';
const rows: BenchRow[] = [
  { workload: `capacity, one node (${store}): 10,000 idle SSE clients`, metric: 'server RSS per client', values: v('rssPerClientKb'), unit: 'KB', target: '< 20 KB', met: median(v('rssPerClientKb')) < 20 },
  { workload: `capacity, one node (${store}): 1,000 of 10,000 clients receiving 200 events/s`, metric: 'delivery latency p50', values: v('fanP50'), unit: 'ms', note: `100 sampled; frames not delivered: ${v('fanLost').join(', ')}` },
  { workload: `capacity, one node (${store}): 1,000 of 10,000 clients receiving 200 events/s`, metric: 'delivery latency p99', values: v('fanP99'), unit: 'ms', target: '< 250 ms', met: median(v('fanP99')) < 250 },
  { workload: `capacity, one node (${store}): all 10,000 clients receiving 200 events/s`, metric: 'delivery latency p50', values: v('allP50'), unit: 'ms', note: `100 sampled; frames not delivered: ${v('allLost').join(', ')}` },
  { workload: `capacity, one node (${store}): all 10,000 clients receiving 200 events/s`, metric: 'delivery latency p99', values: v('allP99'), unit: 'ms', note: 'for comparison: 10 times the writes of the 1,000-client row; no target' },
  { workload: `capacity, one node (${store}): PreToolUse hooks, 32 connections`, metric: 'hooks/s', values: v('hooksPerS'), unit: '/s', note: `errors ${v('hookErrors').join(', ')}` },
  { workload: `capacity, one node (${store}): PreToolUse hooks, 32 connections`, metric: 'latency p99', values: v('hookP99'), unit: 'ms' },
  { workload: `capacity, one node (${store}): the floor at its cap of 10,000 agents`, metric: 'joins/s filling it (200 per request)', values: v('fillEvPerS'), unit: 'ev/s' },
  { workload: `capacity, one node (${store}): the floor at its cap of 10,000 agents`, metric: 'server RSS per agent', values: v('rssPerAgentKb'), unit: 'KB' },
  { workload: `capacity, one node (${store}): the floor at its cap of 10,000 agents`, metric: 'GET /state (a browser’s first load)', values: v('stateMs'), unit: 'ms', note: `${Math.round(median(v('stateKb')))} KB` },
  { workload: `capacity, one node (${store}): the floor at its cap of 10,000 agents`, metric: 'single-event POST /events, 64 connections', values: v('fullEvPerS'), unit: 'ev/s' },
  { workload: `capacity, one node (${store}): the floor at its cap of 10,000 agents`, metric: 'single-event latency p99', values: v('fullP99'), unit: 'ms' },
];
process.stdout.write(JSON.stringify({ rows }) + '\n');
process.exit(0);
