// Notifications (issue 18): an approval to its push message, a notification's click to the decision on a phone.
import { args, RUNS, child, fmt, add, type Workload } from '../lib.js';

export default {
  name: 'push',
  needs: 'one node',
  async run() {
    const push: number[] = [];
    const click: number[] = [];
    const cold: number[] = [];
    const worst = { push: 0, click: 0, cold: 0 };
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ pushP50: number; pushMax: number; clickP50: number; clickMax: number; coldP50: number; coldMax: number }>('push.js', [String(args.quick ? 3 : 5)]);
      push.push(r.pushP50);
      click.push(r.clickP50);
      cold.push(r.coldP50);
      worst.push = Math.max(worst.push, r.pushMax);
      worst.click = Math.max(worst.click, r.clickMax);
      worst.cold = Math.max(worst.cold, r.coldMax);
    }
    const label = 'push: approval → push service stand-in → service worker → decision';
    add({ workload: label, metric: 'approval posted → push message at the stand-in, p50', values: push, unit: 'ms', target: '< 1,000 ms', ok: (m) => m < 1000, note: `worst ${fmt(worst.push)} ms` });
    const phone = 'phone: 390×844, touch, 4× CPU slowdown';
    add({ workload: label, metric: `click → decision interactive, app open, p50 (${phone})`, values: click, unit: 'ms', target: '< 1,500 ms', ok: (m) => m < 1500, note: `worst ${fmt(worst.click)} ms` });
    add({ workload: label, metric: `decision page loaded fresh → interactive, p50 (${phone}; the worker's openWindow)`, values: cold, unit: 'ms', target: '< 1,500 ms', ok: (m) => m < 1500, note: `worst ${fmt(worst.cold)} ms` });
  },
} satisfies Workload;
