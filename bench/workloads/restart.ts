// Restart with a large log (bench/prefill.ts): the first start folds it all and writes snapshots,
// then each restart serves from the snapshots.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { RUNS, RESTART_EVENTS, BENCH, tempDir, roost, add, type Workload } from '../lib.js';

export default {
  name: 'restart',
  needs: 'sqlite',
  async run() {
    const dir = tempDir();
    const pre = await new Promise<{ events: number; ms: number }>((ok, fail) => {
      const p = spawn(process.execPath, [join(BENCH, 'prefill.js'), dir, String(RESTART_EVENTS)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('exit', (c) => (c === 0 ? ok(JSON.parse(out)) : fail(new Error('prefill failed'))));
    });
    // The first start folds the whole log and writes snapshots as it goes.
    const first = await roost(dir);
    await first.stop();
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost(dir);
      v.push(n.startMs);
      await n.stop();
    }
    const label = `restart with ${RESTART_EVENTS.toLocaleString('en-US')} events in the log`;
    add({ workload: label, metric: 'first start, no snapshot yet (fold all)', values: [first.startMs], unit: 'ms', note: `prefill ${pre.ms} ms` });
    add({ workload: label, metric: 'restart to serving (snapshots)', values: v, unit: 'ms', target: '< 3,000 ms', ok: (m) => m < 3000 });
  },
} satisfies Workload;
