// Fan-out: 1,000 SSE subscribers of the floor while 500 events/s are posted; delivery latency,
// sampled on 100 of them (with --nodes above 1, posted to node 1 and read on the others).
import { RUNS, SECONDS, NODES, load, add, nodes, type Workload } from '../lib.js';

export default {
  name: 'fanout',
  async run() {
    const p50: number[] = [];
    const p99: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const urls = ns.map((n) => n.url);
      // With several nodes, events go in on the first and out on the others: cross-node latency.
      const r = await load<{ p50: number; p99: number; received: number; expected: number }>({
        mode: 'fanout',
        streams: urls.length > 1 ? urls.slice(1) : urls,
        posts: [urls[0]],
        subscribers: 1000,
        measured: 100,
        rate: 500,
        seconds: SECONDS * 2,
      });
      await Promise.all(ns.map((n) => n.stop()));
      if (r.received !== r.expected) process.stderr.write(`  warning: fan-out delivered ${r.received} of ${r.expected} measured frames\n`);
      p50.push(r.p50);
      p99.push(r.p99);
    }
    const note = NODES > 1 ? 'posted to node 1, read on the others; latency sampled on 100 of the 1,000' : 'latency sampled on 100 of the 1,000';
    add({ workload: 'fan-out: 1,000 SSE subscribers, 500 events/s', metric: 'delivery latency p50', values: p50, unit: 'ms', note });
    add({ workload: 'fan-out: 1,000 SSE subscribers, 500 events/s', metric: 'delivery latency p99', values: p99, unit: 'ms', target: '< 100 ms', ok: (m) => m < 100 });
  },
} satisfies Workload;
