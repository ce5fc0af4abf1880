// Two nodes on PostgreSQL: the one driving a list is SIGKILLed with a crow in the air (issue 37, point 10; bench/lease.ts).
import { RUNS, DB, child, add, type Workload } from '../lib.js';

export default {
  name: 'lease',
  needs: 'postgres',
  async run() {
    const r = await child<{ runs: { driverMs: number; resumeMs: number }[] }>('lease.js', [DB ?? '', String(RUNS)]);
    const label = 'a list after its driving node is SIGKILLed (2 nodes, PostgreSQL, default lease)';
    add({ workload: label, metric: 'the other node drives', values: r.runs.map((x) => x.driverMs), unit: 'ms' });
    add({ workload: label, metric: 'the list resumes (the crow in the air asked again)', values: r.runs.map((x) => x.resumeMs), unit: 'ms', target: '< 5,000 ms', ok: (m) => m < 5000 });
  },
} satisfies Workload;
