// Batched ingest: POST /events with 200 events per request, 16 connections; durable events/s.
import { RUNS, add, ingest, nodes, BATCH, type Workload } from '../lib.js';

export default {
  name: 'batch',
  async run() {
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ns = await nodes();
      const r = await ingest(ns.map((n) => n.url), BATCH, 16);
      await Promise.all(ns.map((n) => n.stop()));
      v.push(r.rps * 200);
    }
    add({ workload: 'batched POST /events (200 per request)', metric: 'durable events/s, 16 connections', values: v, unit: 'ev/s', target: '> 150,000', ok: (m) => m > 150_000 });
  },
} satisfies Workload;
