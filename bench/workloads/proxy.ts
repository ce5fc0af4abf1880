// Three nodes behind HAProxy against one node directly (issue 34; bench/proxy.ts): batched ingest, single events, hooks.
import { args, child, add, DB, RUNS, SECONDS, type Row, type Workload } from '../lib.js';

export default {
  name: 'proxy',
  needs: 'postgres',
  async run() {
    const out = await child<{ rows: (Row & { met?: boolean })[] }>('proxy.js', [DB ?? '-', String(args.quick ? 1 : RUNS), String(SECONDS)]);
    for (const r of out.rows) add({ ...r, ok: r.met === undefined ? undefined : () => r.met! });
  },
} satisfies Workload;
