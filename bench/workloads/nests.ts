// 100 readers of a 5,000-record nest's stream at once, each reopening once it has the history (issue 37, point 6; bench/nests.ts).
import { RUNS, SECONDS, child, add, type Workload } from '../lib.js';

export default {
  name: 'nests',
  needs: 'sqlite',
  async run() {
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
  },
} satisfies Workload;
