// The floor in Chromium with 500 agents in 20 rooms at 200 events/s (bench/browser.ts --frames-only):
// frame intervals (rAF to rAF) in the default view, where names are readable and the rest is a pan
// away, and zoomed out to the whole floor. One run each (a run is about 45 s).
import { args, child, add, type Workload } from '../lib.js';

export default {
  name: 'floor500',
  needs: 'one node',
  async run() {
    for (const whole of [false, true]) {
      const r = await child<{ median: number; p99: number; max: number; workMedian: number; workP99: number; load: number; namePx: number }>('browser.js', ['--frames-only', args.quick ? '10' : '20', '--agents', '500', ...(whole ? ['--whole'] : [])]);
      const label = `floor in Chromium: 500 agents, 20 rooms, 200 events/s, ${whole ? 'zoomed out to the whole floor' : 'the default view'}`;
      const note = `names ${r.namePx.toFixed(1)} px; the floor's own work per frame ${r.workMedian.toFixed(1)} ms median, ${r.workP99.toFixed(1)} ms p99; load ${r.load.toFixed(1)}`;
      add({ workload: label, metric: 'frame interval, median', values: [r.median], unit: 'ms', target: '< 16.7 ms', ok: (m) => m < 16.7, note });
      add({ workload: label, metric: 'frame interval, p99', values: [r.p99], unit: 'ms', target: '< 50 ms', ok: (m) => m < 50 });
    }
  },
} satisfies Workload;
