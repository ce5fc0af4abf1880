// The one live connection of a browser: four scopes per connection (the
// floor, approvals, a fleet board, Work), the floor posted to as in the
// fan-out, so the two rows compare the mux form's cost with the single one's.
import { add, fanoutRuns, type Workload } from '../lib.js';

export default {
  name: 'mux',
  async run() {
    const path = '/live?' + ['floor:default', 'approvals:default', 'fleet:default/bench', 'work:default'].map((s) => 's=' + encodeURIComponent(s)).join('&');
    const { p50, p99 } = await fanoutRuns('mux', path);
    const note = 'floor, approvals, a fleet board and Work on each connection; latency of the floor frames, sampled on 100 of the 1,000';
    add({ workload: 'mux: 1,000 connections × 4 scopes, 500 events/s', metric: 'delivery latency p50', values: p50, unit: 'ms', note });
    add({ workload: 'mux: 1,000 connections × 4 scopes, 500 events/s', metric: 'delivery latency p99', values: p99, unit: 'ms', target: '< 100 ms', ok: (m) => m < 100 });
  },
} satisfies Workload;
