// Earned trust (docs/approvals.md "Earned trust"): an auto-allowed call, after three people's allows of
// `npm test`, 500 more, one after another, each answered allow at once (bench/held-hook.ts).
import { hold, waitPending } from '../held-hook.js';
import { RUNS, roost, add, type Workload } from '../lib.js';

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
  },
} satisfies Workload;
