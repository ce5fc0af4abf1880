// Idle subscribers: the server's RSS before and after 5,000 streams that receive nothing, per subscriber.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RUNS, BENCH, sleep, roost, rssKb, add, type Workload } from '../lib.js';

export default {
  name: 'idle',
  needs: 'one node',
  async run() {
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost();
      await sleep(500);
      const before = rssKb(n.proc.pid!);
      const p = spawn(process.execPath, [join(BENCH, 'load.js'), JSON.stringify({ mode: 'idle', streams: [n.url], subscribers: 5000 })], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((ok, fail) => {
        const rl = createInterface({ input: p.stdout });
        rl.once('line', () => ok());
        p.once('exit', (c) => fail(new Error(`idle load exited ${c}`)));
      });
      const after = rssKb(n.proc.pid!);
      p.kill('SIGKILL');
      await n.stop();
      v.push(((after - before) * 1024) / 5000 / 1000);
    }
    add({ workload: 'idle subscribers (5,000 streams)', metric: 'server RSS per idle subscriber', values: v, unit: 'KB', target: '< 20 KB', ok: (m) => m < 20 });
  },
} satisfies Workload;
