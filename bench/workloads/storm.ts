// Reconnect storm: 1,000 subscribers reconnect at once with their last ids while 200 events/s go on;
// time until every one has caught up, and any gap or duplicate seen.
import { RUNS, load, add, nodes, type Workload } from '../lib.js';

export default {
  name: 'storm',
  async run() {
    const t: number[] = [];
    let gaps = 0;
    let dups = 0;
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const urls = ns.map((n) => n.url);
      const r = await load<{ caughtUpMs: number; gaps: number; duplicates: number }>({ mode: 'storm', streams: urls, posts: urls, subscribers: 1000, rate: 200 });
      await Promise.all(ns.map((n) => n.stop()));
      t.push(r.caughtUpMs);
      gaps += r.gaps;
      dups += r.duplicates;
    }
    add({ workload: 'reconnect storm: 1,000 subscribers, 200 events/s', metric: 'time until all caught up', values: t, unit: 'ms', target: '< 2,000 ms', ok: (m) => m < 2000 });
    add({ workload: 'reconnect storm: 1,000 subscribers, 200 events/s', metric: 'gaps + duplicates seen (all runs)', values: [gaps + dups], unit: '', target: '0', ok: (m) => m === 0 });
  },
} satisfies Workload;
