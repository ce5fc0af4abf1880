// A floor of 10,000 agents (the cap), made by hostile batches stored past the edge, all in one room.
import { RUNS, tempDir, roost, child, add, type Workload } from '../lib.js';

export default {
  name: 'restart-agents',
  needs: 'sqlite',
  async run() {
    const dir = tempDir();
    await child<{ agents: number }>('hostile.js', ['prefill', dir, '10000']);
    const serve = async () => {
      const n = await roost(dir);
      const t = performance.now();
      const st = (await (await fetch(n.url + '/state')).json()) as { agents: unknown[] };
      const ms = n.startMs + (performance.now() - t);
      await n.stop();
      if (st.agents.length !== 10_000) process.stderr.write(`  warning: ${st.agents.length} agents on the floor, not 10,000\n`);
      return ms;
    };
    const first = await serve();
    const v: number[] = [];
    for (let i = 0; i < RUNS; i++) v.push(await serve());
    const label = 'restart with 10,000 agents on the floor';
    add({ workload: label, metric: 'first start to GET /state answered', values: [first], unit: 'ms' });
    add({ workload: label, metric: 'restart to GET /state answered', values: v, unit: 'ms', target: '< 3,000 ms', ok: (m) => m < 3000 });
  },
} satisfies Workload;
