// Single-event ingest with the search index kept current and without (bench/ingest-index.ts), each as a share of bare node:http.
import { args, child, add, SECONDS, type Workload } from '../lib.js';

export default {
  name: 'search-index-ingest',
  needs: 'sqlite',
  async run() {
    const r = await child<{ indexedShare: number; plainShare: number }>('ingest-index.js', [String(args.quick ? 1 : 4), String(SECONDS)]);
    add({ workload: 'durable single-event POST /events, search index kept current', metric: 'share of baseline', values: [r.indexedShare], unit: '%' });
    add({ workload: 'durable single-event POST /events, no search index', metric: 'share of baseline', values: [r.plainShare], unit: '%' });
    add({ workload: 'search index on ingest', metric: 'indexed share over unindexed', values: [(100 * r.indexedShare) / r.plainShare], unit: '%', target: '≥ 90%', ok: (m) => m >= 90 });
  },
} satisfies Workload;
