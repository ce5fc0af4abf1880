// Earned trust (docs/approvals.md "Earned trust"): an auto-allowed call, after three people's allows of
// `npm test`, 1,000 more, one after another, each answered allow at once (bench/held-hook.ts);
// the p50 and p99 are of the last 500.
//
// Warm-up: the first WARMUP auto-allowed calls of each fresh server are made the same way and
// not counted; the MEASURED after them are: what is measured is a server that has been
// running. A fresh one is slower in its first few hundred calls (on the idle 2-core host, one
// server's first 500 calls: p50 3.8 ms, p99 13.4 ms; its later ones: p50 1.8 ms, p99 about
// 8 ms). Every call, counted or not, is a durable auto-allow through the real hook endpoint
// (bench/README.md, "Method" and "History: the auto-allowed call").
import { hold, waitPending } from '../held-hook.js';
import { RUNS, roost, add, type Workload } from '../lib.js';

/** Calls made and not counted, then calls counted (p99 = the 99th percentile of these). */
const WARMUP = 500;
const MEASURED = 500;

export default {
  name: 'trust',
  needs: 'one node',
  async run() {
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
      for (let k = 0; k < WARMUP + MEASURED; k++) {
        const t0 = performance.now();
        const d = await hold(n.url, 'npm test', 100 + k);
        if (k >= WARMUP) times.push(performance.now() - t0);
        if (d !== 'allow') throw new Error(`call ${k} was not allowed by trust (${d})`);
      }
      await n.stop();
      times.sort((a, b) => a - b);
      p50.push(times[Math.floor(MEASURED / 2)]);
      p99.push(times[Math.ceil(MEASURED * 0.99) - 1]);
    }
    const label = `an auto-allowed call (held hook, trusted class; SQLite; ${MEASURED} after ${WARMUP} not counted)`;
    add({ workload: label, metric: 'hook request to answer p50', values: p50, unit: 'ms' });
    add({ workload: label, metric: 'hook request to answer p99', values: p99, unit: 'ms', target: '< 10 ms', ok: (m) => m < 10 });
  },
} satisfies Workload;
