// The flock with a model that answers at once (bench/flock.ts): Roost's own time per item, and 20 lists of 50 with 100 watchers.
import { args, RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'flock',
  async run() {
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
  },
} satisfies Workload;
