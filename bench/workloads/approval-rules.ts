// Caller-given approval rules (bench/approval-rules.ts): a near-miss wildcard, a new rule per check, the rules a RegExp backtracks on.
import { RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'approval-rules',
  async run() {
    const nearMiss: number[] = [];
    const distinct: number[] = [];
    const worst: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ nearMissUs: number; distinctUs: number; catastrophicMs: number }>('approval-rules.js', []);
      nearMiss.push(r.nearMissUs);
      distinct.push(r.distinctUs);
      worst.push(r.catastrophicMs);
    }
    const label = 'approval rules (pure)';
    add({ workload: label, metric: 'a check: 60 stars against a 200-character near miss', values: nearMiss, unit: 'µs', target: '< 100 µs', ok: (m) => m < 100 });
    add({ workload: label, metric: 'a check of a rule never seen (compiled, cache churning)', values: distinct, unit: 'µs', target: '< 50 µs', ok: (m) => m < 50 });
    add({ workload: label, metric: 'the slowest first check of a backtracking pattern', values: worst, unit: 'ms', target: '< 5 ms', ok: (m) => m < 5 });
  },
} satisfies Workload;
