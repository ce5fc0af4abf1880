// One 125 KB POST /events of 200 messages to 50 new recipients each (issue 12, part 7).
import { RUNS, tempDir, child, add, type Workload } from '../lib.js';

export default {
  name: 'hostile',
  needs: 'sqlite',
  async run() {
    const held: number[] = [];
    const cpu: number[] = [];
    let status = 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ status: number; loopMaxMs: number; cpuMs: number; agents: number }>('hostile.js', ['batch', tempDir()]);
      held.push(r.loopMaxMs);
      cpu.push(r.cpuMs);
      status = r.status;
    }
    const label = 'hostile batch: 200 messages to 50 new recipients each (125 KB)';
    add({ workload: label, metric: 'event loop held (longest gap of a 1 ms timer)', values: held, unit: 'ms', note: `answered ${status}`, target: '< 50 ms', ok: (m) => m < 50 });
    add({ workload: label, metric: 'server CPU for the request (incl. the probe timer)', values: cpu, unit: 'ms' });
  },
} satisfies Workload;
