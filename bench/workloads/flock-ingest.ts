// Floor ingest with and without 20 flock lists of 50 items in flight, in turns in the same run (bench/flock-ingest.ts).
import { args, RUNS, SECONDS, child, add, type Workload } from '../lib.js';

export default {
  name: 'flock-ingest',
  async run() {
    const ratio: number[] = [];
    const ratioSlow: number[] = [];
    const without: number[] = [];
    const withFlock: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // The model answering at once: the flock works as fast as Roost lets it (its worst case for ingest).
      const r = await child<{ without: number[]; with: number[]; ratio: number }>('flock-ingest.js', [String(SECONDS), '0', args.quick ? '1' : '4']);
      ratio.push(100 * r.ratio);
      without.push(...r.without);
      withFlock.push(...r.with);
      // A model that takes 1 s per call, as a fast real one does: lists in flight, mostly waiting.
      const s = await child<{ ratio: number }>('flock-ingest.js', [String(SECONDS), '1000', args.quick ? '1' : '4']);
      ratioSlow.push(100 * s.ratio);
    }
    const label = 'single-event POST /events with 20 flock lists of 50 in flight';
    add({ workload: label, metric: 'events/s without the flock (same run)', values: without, unit: 'ev/s' });
    add({ workload: label, metric: 'events/s with the flock, model answering at once', values: withFlock, unit: 'ev/s' });
    add({ workload: label, metric: 'with over without, model answering at once', values: ratio, unit: '%', target: '≥ 95%', ok: (m) => m >= 95 });
    add({ workload: label, metric: 'with over without, model answering in 1 s', values: ratioSlow, unit: '%', target: '≥ 95%', ok: (m) => m >= 95 });
  },
} satisfies Workload;
