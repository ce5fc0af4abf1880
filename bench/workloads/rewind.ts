// Rewind to random positions of a large floor log (bench/rewind.ts, docs/floor.md "Rewind"), snapshots every 2,500 events (FLOOR_REWIND_EVERY).
import { args, child, add, type Workload } from '../lib.js';

export default {
  name: 'rewind',
  needs: 'sqlite',
  async run() {
    const count = Number(args.events ?? (args.quick ? 100_000 : 1_000_000));
    const r = await child<{ byEvery: Record<string, { p50: number; p99: number; snapshotMiBPerM: number }> }>('rewind.js', [String(count)]);
    const label = `rewind the floor (${count.toLocaleString('en')} events, 200 agents)`;
    add({ workload: label, metric: 'state at a position, p99', values: [r.byEvery['2500'].p99], unit: 'ms', target: '< 300', ok: (m) => m < 300 });
    add({ workload: label, metric: 'state at a position, p50', values: [r.byEvery['2500'].p50], unit: 'ms' });
    add({ workload: label, metric: 'kept snapshots per million events', values: [r.byEvery['2500'].snapshotMiBPerM], unit: 'MiB' });
  },
} satisfies Workload;
