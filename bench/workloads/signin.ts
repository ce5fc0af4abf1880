// Sign-in at the production scrypt cost (bench/signin.ts): refusals of an unknown login and a wrong
// password take the same time, and the owner gets in while one address floods wrong logins.
import { args, RUNS, child, add, type Workload } from '../lib.js';

export default {
  name: 'signin',
  async run() {
    const u: number[] = [];
    const w: number[] = [];
    const ratio: number[] = [];
    const owner: number[] = [];
    const ownerIn: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await child<{ unknownMs: number; wrongMs: number; ratio: number; floodOwnerMs: number[]; floodOwnerIn: number; floodOwnerTries: number }>('signin.js', [String(args.quick ? 7 : 15), args.quick ? '3' : '5']);
      u.push(r.unknownMs);
      w.push(r.wrongMs);
      ratio.push(r.ratio);
      owner.push(...r.floodOwnerMs);
      ownerIn.push((100 * r.floodOwnerIn) / r.floodOwnerTries);
    }
    const label = 'sign-in refusals (production scrypt cost)';
    add({ workload: label, metric: 'unknown login, median', values: u, unit: 'ms' });
    add({ workload: label, metric: 'wrong password, median', values: w, unit: 'ms' });
    add({ workload: label, metric: 'unknown over wrong', values: ratio, unit: '×', target: '0.8 – 1.25', ok: (m) => m >= 0.8 && m <= 1.25 });
    const flood = "the owner's sign-in (device cookie) under one address's wrong logins, 40 at a time";
    add({ workload: flood, metric: 'her sign-ins that got in', values: ownerIn, unit: '%', target: '100%', ok: (m) => m >= 100 });
    add({ workload: flood, metric: 'time to sign in', values: owner, unit: 'ms', target: '≤ 2000', ok: (m) => m <= 2000 });
  },
} satisfies Workload;
