// Fan-out: 1,000 SSE subscribers of the floor while 500 events/s are posted; delivery latency,
// sampled on 100 of them (with --nodes above 1, posted to node 1 and read on the others).
import { NODES, add, fanoutRuns, type Workload } from '../lib.js';

export default {
  name: 'fanout',
  async run() {
    const { p50, p99 } = await fanoutRuns('fan-out');
    const note = NODES > 1 ? 'posted to node 1, read on the others; latency sampled on 100 of the 1,000' : 'latency sampled on 100 of the 1,000';
    add({ workload: 'fan-out: 1,000 SSE subscribers, 500 events/s', metric: 'delivery latency p50', values: p50, unit: 'ms', note });
    add({ workload: 'fan-out: 1,000 SSE subscribers, 500 events/s', metric: 'delivery latency p99', values: p99, unit: 'ms', target: '< 100 ms', ok: (m) => m < 100 });
  },
} satisfies Workload;
