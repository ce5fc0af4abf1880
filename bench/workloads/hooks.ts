// Claude Code's http observation hook waits for Roost's answer: a tool outside the approval rules,
// 500 calls one after another (the CLI sends them so), each a durable append.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/server/app.js';
import { RUNS, roost, add, type Workload } from '../lib.js';

export default {
  name: 'hooks',
  needs: 'one node',
  async run() {
    const payload = readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '05-PreToolUse-Bash-subagent.json'), 'utf8');
    const p50: number[] = [];
    const p99: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const n = await roost();
      const times: number[] = [];
      for (let k = 0; k < 500; k++) {
        const t0 = performance.now();
        const r = await fetch(n.url + '/hooks/claude-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
        await r.text();
        times.push(performance.now() - t0);
      }
      await n.stop();
      times.sort((a, b) => a - b);
      p50.push(times[250]);
      p99.push(times[494]);
    }
    add({ workload: 'observation hook (POST /hooks/claude-code, not held)', metric: 'latency p50', values: p50, unit: 'ms', target: '< 50 ms', ok: (m) => m < 50 });
    add({ workload: 'observation hook (POST /hooks/claude-code, not held)', metric: 'latency p99', values: p99, unit: 'ms' });
  },
} satisfies Workload;
