// Full-text search over a large log (bench/search.ts, docs/search.md): a two-word query with a team filter, first page.
// With --db, on PostgreSQL (a fresh schema per run, dropped after it).
import { args, DB, RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'search',
  async run() {
    const count = Number(args.events ?? (args.quick ? 100_000 : 1_000_000));
    const p99: number[] = [];
    const p50: number[] = [];
    const size: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ p50: number; p99: number; indexBytes: number }>('search.js', DB ? [String(count), DB] : [String(count)]);
      p99.push(r.p99);
      p50.push(r.p50);
      size.push(r.indexBytes / count);
    }
    const label = `search, ${DB ? 'PostgreSQL tsvector + GIN' : 'SQLite FTS5'} (${count.toLocaleString('en')} floor events, 8 teams)`;
    add({ workload: label, metric: 'two words + team, p99', values: p99, unit: 'ms', target: '< 50', ok: (m) => m < 50 });
    add({ workload: label, metric: 'two words + team, p50', values: p50, unit: 'ms' });
    add({ workload: label, metric: 'index bytes per event', values: size, unit: 'B' });
  },
} satisfies Workload;
