// The pure floor fold (bench/fold.ts): 1,000,000 events of 200 agents in 8 teams, with and without JSON.parse.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { RUNS, BENCH, add, type Workload } from '../lib.js';

export default {
  name: 'fold',
  async run() {
    const v: number[] = [];
    const vp: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await new Promise<{ foldPerSec: number; parseFoldPerSec: number }>((ok, fail) => {
        const p = spawn(process.execPath, [join(BENCH, 'fold.js'), '1000000'], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.on('exit', (c) => (c === 0 ? ok(JSON.parse(out)) : fail(new Error('fold bench failed'))));
      });
      v.push(r.foldPerSec);
      vp.push(r.parseFoldPerSec);
    }
    add({ workload: 'pure floor fold (200 agents, 8 teams)', metric: 'events/s', values: v, unit: 'ev/s', target: '> 1,000,000', ok: (m) => m > 1_000_000 });
    add({ workload: 'pure floor fold (200 agents, 8 teams)', metric: 'JSON.parse + fold, events/s', values: vp, unit: 'ev/s' });
  },
} satisfies Workload;
