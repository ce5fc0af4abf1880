// The browser's side of the one live connection: ten tabs, one connection (docs/web.md).
import { RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'tabs',
  needs: 'one node',
  async run() {
    const conns: number[] = [];
    const live: number[] = [];
    const d50: number[] = [];
    const d99: number[] = [];
    const p50: number[] = [];
    const p99: number[] = [];
    // One run (ten tabs cost about 20 s), two with --runs above 3.
    for (let i = 0; i < (RUNS > 3 ? 2 : 1); i++) {
      const r = await child<{ connections: number; liveMs: number; deliveredP50: number; deliveredP99: number; p50: number; p99: number }>('tabs.js', ['10']);
      conns.push(r.connections);
      live.push(r.liveMs);
      d50.push(r.deliveredP50);
      d99.push(r.deliveredP99);
      p50.push(r.p50);
      p99.push(r.p99);
    }
    const label = '10 tabs in one Chromium (floor ×4, fleet ×2, inbox ×2, Work ×2)';
    add({ workload: label, metric: 'live connections to the server', values: conns, unit: '', target: '1', ok: (m) => m === 1 });
    add({ workload: label, metric: 'time until all 10 say Live', values: live, unit: 'ms' });
    add({ workload: label, metric: 'new agent, POST to its frame in each floor tab, p50', values: d50, unit: 'ms' });
    add({ workload: label, metric: 'new agent, POST to its frame in each floor tab, p99', values: d99, unit: 'ms' });
    const note = 'headless Chromium paints the tabs it does not show about once a second';
    add({ workload: label, metric: 'new agent, POST to its row in each floor tab, p50', values: p50, unit: 'ms', note });
    add({ workload: label, metric: 'new agent, POST to its row in each floor tab, p99', values: p99, unit: 'ms', target: '< 2,000 ms', ok: (m) => m < 2000 });
  },
} satisfies Workload;
