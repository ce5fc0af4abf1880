// Budgets that act (issue 31): a crossing to the next tool call denied (bench/budget.ts), one row.
import { args, child, add, fmt, median, RUNS, type Workload } from '../lib.js';

export default {
  name: 'budget',
  needs: 'one node',
  async run() {
    const r: { p50: number; p99: number; samples: number }[] = [];
    for (let i = 0; i < RUNS; i++) r.push(await child<{ p50: number; p99: number; samples: number }>('budget.js', [args.quick ? '100' : '300']));
    add({
      workload: 'budget crossing → next tool call denied (SQLite)',
      metric: `p99 of ${r[0].samples} crossings (usage booked, crossing and pause written) to the next Claude Code PreToolUse hook's deny with the reason`,
      values: r.map((x) => x.p99),
      unit: 'ms',
      target: '< 100 ms',
      ok: (m) => m < 100,
      note: `p50 ${fmt(median(r.map((x) => x.p50)))} ms`,
    });
  },
} satisfies Workload;
