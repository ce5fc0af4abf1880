// A bulk decision: 200 held calls (bench/held-hook.ts), allowed in one POST /approvals/decisions;
// the answer, and every held hook woken.
import { hold, waitPending } from '../held-hook.js';
import { RUNS, roost, add, type Workload } from '../lib.js';

export default {
  name: 'bulk',
  needs: 'one node',
  async run() {
    const answered: number[] = [];
    const woken: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost();
      const hooks: Promise<string>[] = [];
      for (let k = 0; k < 200; k++) hooks.push(hold(n.url, `make target${k}`, k));
      const ids = (await waitPending(n.url, 200)).map((a) => a.id);
      const t0 = performance.now();
      const r = await fetch(n.url + '/approvals/decisions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids, decision: 'allow', by: 'bench' }) });
      const body = (await r.json()) as { decided: number };
      answered.push(performance.now() - t0);
      const all = await Promise.all(hooks);
      woken.push(performance.now() - t0);
      if (body.decided !== 200 || all.some((d) => d !== 'allow')) throw new Error(`bulk decided ${body.decided}, ${all.filter((d) => d === 'allow').length} hooks allowed`);
      await n.stop();
    }
    const label = 'a bulk decision of 200 waiting calls (POST /approvals/decisions; SQLite)';
    add({ workload: label, metric: 'answered', values: answered, unit: 'ms', target: '< 1,000 ms', ok: (m) => m < 1000 });
    add({ workload: label, metric: 'all 200 held hooks answered', values: woken, unit: 'ms', target: '< 1,000 ms', ok: (m) => m < 1000 });
  },
} satisfies Workload;
