// The one live connection of a browser: four scopes per connection (the
// floor, approvals, a fleet board, Work), the floor posted to as in the
// fan-out, so the two rows compare the mux form's cost with the single one's.
import { RUNS, SECONDS, load, add, nodes, type Workload } from '../lib.js';

export default {
  name: 'mux',
  async run() {
    const p50: number[] = [];
    const p99: number[] = [];
    const path = '/live?' + ['floor:default', 'approvals:default', 'fleet:default/bench', 'work:default'].map((s) => 's=' + encodeURIComponent(s)).join('&');
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const urls = ns.map((n) => n.url);
      const r = await load<{ p50: number; p99: number; received: number; expected: number }>({
        mode: 'fanout',
        streams: urls.length > 1 ? urls.slice(1) : urls,
        posts: [urls[0]],
        subscribers: 1000,
        measured: 100,
        rate: 500,
        seconds: SECONDS * 2,
        path,
      });
      await Promise.all(ns.map((n) => n.stop()));
      if (r.received !== r.expected) process.stderr.write(`  warning: mux delivered ${r.received} of ${r.expected} measured frames\n`);
      p50.push(r.p50);
      p99.push(r.p99);
    }
    const note = 'floor, approvals, a fleet board and Work on each connection; latency of the floor frames, sampled on 100 of the 1,000';
    add({ workload: 'mux: 1,000 connections × 4 scopes, 500 events/s', metric: 'delivery latency p50', values: p50, unit: 'ms', note });
    add({ workload: 'mux: 1,000 connections × 4 scopes, 500 events/s', metric: 'delivery latency p99', values: p99, unit: 'ms', target: '< 100 ms', ok: (m) => m < 100 });
  },
} satisfies Workload;
