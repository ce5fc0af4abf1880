// How far one node carries (issue 34; bench/capacity.ts): 10,000 idle SSE clients, 1,000 of them at 200 events/s, hooks/s, the floor at its cap.
import { args, child, add, DB, RUNS, SECONDS, type Row, type Workload } from '../lib.js';

export default {
  name: 'capacity',
  needs: 'one node',
  async run() {
    const out = await child<{ rows: (Row & { met?: boolean })[] }>('capacity.js', [DB ?? '-', String(args.quick ? 1 : RUNS), String(SECONDS)]);
    for (const r of out.rows) add({ ...r, ok: r.met === undefined ? undefined : () => r.met! });
  },
} satisfies Workload;
