// The pure Work fold (bench/work-fold.ts): 1,000,000 messages in one conversation, and whether it stays linear.
import { RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'work-fold',
  async run() {
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
  },
} satisfies Workload;
