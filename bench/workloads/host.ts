// The machine's hiccups while nothing of Roost runs: one busy loop, then one per core (bench/jitter.ts).
import { args, RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'host',
  async run() {
    type Jitter = { over1PerS: number; over3PerS: number; maxMs: number; lostPct: number };
    const one: Jitter[] = [];
    const two: Jitter[] = [];
    for (let i = 0; i < RUNS; i++) {
      one.push(await child<Jitter>('jitter.js', ['2']));
      const pair = await Promise.all([child<Jitter>('jitter.js', ['2']), child<Jitter>('jitter.js', ['2'])]);
      two.push(...pair);
    }
    add({ workload: 'host: a busy loop, machine otherwise idle', metric: 'pauses over 1 ms per second', values: one.map((j) => j.over1PerS), unit: '/s' });
    add({ workload: 'host: a busy loop, machine otherwise idle', metric: 'longest pause', values: one.map((j) => j.maxMs), unit: 'ms' });
    add({ workload: 'host: a busy loop on each core', metric: 'pauses over 1 ms per second', values: two.map((j) => j.over1PerS), unit: '/s' });
    add({ workload: 'host: a busy loop on each core', metric: 'pauses over 3 ms per second', values: two.map((j) => j.over3PerS), unit: '/s' });
    add({ workload: 'host: a busy loop on each core', metric: 'longest pause', values: two.map((j) => j.maxMs), unit: 'ms' });
    // Waking a process that sleeps (bench/wake.ts): what every answer to a waiting client pays here.
    type Wake = { writeP50Us: number; writeP99Us: number; tripP50Us: number; tripP99Us: number };
    const wakes: Wake[] = [];
    for (let i = 0; i < RUNS; i++) wakes.push(await child<Wake>('wake.js', [args.quick ? '500' : '2000']));
    const w = 'host: a write to an idle process over loopback, and its echo';
    add({ workload: w, metric: 'the write call, p50', values: wakes.map((x) => x.writeP50Us), unit: 'µs' });
    add({ workload: w, metric: 'the write call, p99', values: wakes.map((x) => x.writeP99Us), unit: 'µs' });
    add({ workload: w, metric: 'round trip, p50', values: wakes.map((x) => x.tripP50Us), unit: 'µs' });
    add({ workload: w, metric: 'round trip, p99', values: wakes.map((x) => x.tripP99Us), unit: 'µs' });
  },
} satisfies Workload;
