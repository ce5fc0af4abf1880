// The baseline and Roost in turns, both servers up (the one not loaded is idle):
// B R B R … B per run, each Roost window compared with the mean of the baseline
// windows on either side. This machine's speed drifts by tens of percent within
// a minute (docs/architecture.md, "Measuring"), so a comparison is only as good
// as it is close in time.
import { RUNS, INGEST_WINDOWS, baseline, median, add, ingest, nodes, SINGLE, type Workload } from '../lib.js';

export default {
  name: 'ingest',
  async run() {
    const base = { rps: [] as number[], p50: [] as number[], p99: [] as number[] };
    const single = { rps: [] as number[], p50: [] as number[], p99: [] as number[] };
    const share: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const b = await baseline();
      const ns = await nodes();
      const bs = [await ingest([b.url], SINGLE, 64)];
      const rs: Awaited<ReturnType<typeof ingest>>[] = [];
      for (let w = 0; w < INGEST_WINDOWS; w++) {
        rs.push(await ingest(ns.map((n) => n.url), SINGLE, 64));
        bs.push(await ingest([b.url], SINGLE, 64));
      }
      await Promise.all([b.stop(), ...ns.map((n) => n.stop())]);
      const mean = (v: number[]) => v.reduce((a, x) => a + x, 0) / v.length;
      base.rps.push(mean(bs.map((r) => r.rps)));
      base.p50.push(median(bs.map((r) => r.p50)));
      base.p99.push(median(bs.map((r) => r.p99)));
      single.rps.push(mean(rs.map((r) => r.rps)));
      single.p50.push(median(rs.map((r) => r.p50)));
      single.p99.push(median(rs.map((r) => r.p99)));
      share.push(mean(rs.map((r, w) => (200 * r.rps) / (bs[w].rps + bs[w + 1].rps))));
    }
    add({ workload: 'baseline: bare node:http', metric: 'requests/s, 64 connections', values: base.rps, unit: 'req/s' });
    add({ workload: 'baseline: bare node:http', metric: 'latency p50', values: base.p50, unit: 'ms' });
    add({ workload: 'baseline: bare node:http', metric: 'latency p99', values: base.p99, unit: 'ms' });
    add({ workload: 'durable single-event POST /events', metric: 'events/s, 64 connections', values: single.rps, unit: 'ev/s', target: 'aim 12,000' });
    add({
      workload: 'durable single-event POST /events',
      metric: 'share of baseline',
      values: share,
      unit: '%',
      target: '≥ 60%',
      ok: (m) => m >= 60,
      note: 'each window against the baseline windows either side',
    });
    add({ workload: 'durable single-event POST /events', metric: 'latency p50', values: single.p50, unit: 'ms' });
    add({ workload: 'durable single-event POST /events', metric: 'latency p99', values: single.p99, unit: 'ms' });
  },
} satisfies Workload;
