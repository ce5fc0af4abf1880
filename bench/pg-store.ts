// What one PostgreSQL sustains under Roost's store, without HTTP in the way:
// N processes (nodes), each with one PostgresStore and C callers appending B
// events at a time (one event by default) to the same stream, for S seconds.
// Prints one JSON line with the summed appends/s and events/s, the worst
// node's ack latency p50/p99, and the cross-node wake-up latency (commit on
// one node until the other node's listener hears of it). bench/proxy.ts runs
// it to set the database's own rate beside what the nodes reached.
//
//   node dist/bench/pg-store.js <postgres-url-with-?schema=> [nodes=1] [callers=64] [seconds=5] [batch=1]

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PostgresStore } from '../src/storage/postgres.js';

const [url, nodesArg = '1', callersArg = '64', secondsArg = '5', batchArg = '1', role] = process.argv.slice(2);
if (!url) {
  console.error('usage: pg-store <postgres-url> [nodes] [callers] [seconds] [batch]');
  process.exit(2);
}
const NODES = Number(nodesArg);
const CALLERS = Number(callersArg);
const SECONDS = Number(secondsArg);
const BATCH = Math.max(1, Math.floor(Number(batchArg)) || 1);

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN;
}

interface NodeResult {
  appends: number;
  p50: number;
  p99: number;
  wake: number[];
}

/** One node: append for SECONDS; meanwhile note when other nodes' commits are heard. */
async function node(): Promise<void> {
  const store = await PostgresStore.open(url, { pollEveryMs: 0 });
  const wake: number[] = [];
  // A body carries its commit-side send time; the listener of another node reads it back.
  store.onCommit((stream, _head, entries) => {
    if (stream !== 'bench' || entries !== null) return;
    store.read('bench', _head - 1, 1).then(
      ([e]) => {
        if (e) wake.push(Date.now() - JSON.parse(e.body).t);
      },
      () => {}, // closing
    );
  });
  await new Promise<void>((ok) => process.stdin.once('data', () => ok())); // start together
  const lat: number[] = [];
  let appends = 0;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const body = JSON.stringify({ type: 'status', agent: 'bench', t: Date.now() });
        await store.append('bench', BATCH === 1 ? [{ type: 'status', body }] : Array.from({ length: BATCH }, () => ({ type: 'status', body })));
        lat.push(performance.now() - t);
        appends++;
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  await store.close();
  lat.sort((a, b) => a - b);
  const r: NodeResult = { appends, p50: pct(lat, 0.5), p99: pct(lat, 0.99), wake };
  process.stdout.write(JSON.stringify(r) + '\n');
}

async function main(): Promise<void> {
  // Migrate once before the nodes start, so the figures are steady state.
  await (await PostgresStore.open(url)).close();
  const self = fileURLToPath(import.meta.url);
  const kids = Array.from({ length: NODES }, () => spawn(process.execPath, [self, url, nodesArg, callersArg, secondsArg, String(BATCH), 'node'], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const outs = kids.map(
    (k) =>
      new Promise<NodeResult>((ok, fail) => {
        let out = '';
        k.stdout.on('data', (d) => (out += d));
        k.on('exit', (c) => (c === 0 ? ok(JSON.parse(out.trim())) : fail(new Error(`node exited ${c}`))));
      }),
  );
  await new Promise((r) => setTimeout(r, 1000));
  for (const k of kids) k.stdin.end('go\n');
  const rs = await Promise.all(outs);
  const wake = rs.flatMap((r) => r.wake).sort((a, b) => a - b);
  process.stdout.write(
    JSON.stringify({
      nodes: NODES,
      callersPerNode: CALLERS,
      batch: BATCH,
      appendsPerSec: Math.round(rs.reduce((a, r) => a + r.appends, 0) / SECONDS),
      eventsPerSec: Math.round((rs.reduce((a, r) => a + r.appends, 0) * BATCH) / SECONDS),
      ackP50: Math.max(...rs.map((r) => r.p50)),
      ackP99: Math.max(...rs.map((r) => r.p99)),
      wakeP50: NODES > 1 ? pct(wake, 0.5) : null,
      wakeP99: NODES > 1 ? pct(wake, 0.99) : null,
    }) + '\n',
  );
}

if (role === 'node') await node();
else await main();
