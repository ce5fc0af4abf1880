// Floor ingest with the flock at work beside it (issue 13, targets: "no
// effect on floor ingest beyond 5%"): one server (in this process, the flock's
// model in-process, bench/flock-setup.ts), single-event POST /events from a
// separate load process (bench/load.ts, 64 connections), in windows that take
// turns in the same run: without the flock, then with 20 lists of 50 items in
// flight (a list that finishes is replaced at once, so 20 are in the air for
// the whole window), `windows` times each (with a slow model every window
// without first, then every window with). The flock is warmed up first, so
// trust skips the approvals, as in bench/flock.ts.
//
// Usage: node dist/bench/flock-ingest.js <seconds> <model delay ms> <windows>
// Prints one JSON line: { without: [ev/s], with: [ev/s], ratio, itemsPerSecWith }.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { flockBench } from './flock-setup.js';
import { PACKAGE_ROOT } from '../src/server/app.js';

const SECONDS = Number(process.argv[2] ?? 5);
const DELAY_MS = Number(process.argv[3] ?? 0);
const WINDOWS = Number(process.argv[4] ?? 2);
const LISTS = 20;
const ITEMS = 50;
const SINGLE = JSON.stringify({ type: 'status', agent: 'bench-1', team: 'bench', status: 'working', activity: 'Reconciling invoices' });

function ingest(url: string): Promise<number> {
  return new Promise((ok, fail) => {
    const cfg = { mode: 'http', url: url + '/events', body: SINGLE, connections: 64, seconds: SECONDS };
    const p = spawn(process.execPath, [join(PACKAGE_ROOT, 'dist', 'bench', 'load.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      if (code !== 0) return fail(new Error(`load generator failed (${code})`));
      const r = JSON.parse(out.trim().split('\n').pop()!) as { rps: number; errors: number; non2xx: number };
      if (r.errors + r.non2xx) process.stderr.write(`  warning: ${r.errors + r.non2xx} errors or non-2xx answers\n`);
      ok(r.rps);
    });
  });
}

async function main(): Promise<void> {
  // Warmed up with a model answering at once (trust is earned in a few seconds), then slowed to the delay.
  const bench = await flockBench(0);
  const { roost, post } = bench;
  const text = Array.from({ length: ITEMS }, (_, i) => `write note number ${i + 1}`).join('\n');
  let n = 0;
  try {
    await bench.warmUp();
    bench.setDelay(DELAY_MS);
    const without: number[] = [];
    const withFlock: number[] = [];
    let items = 0;
    let flockSeconds = 0;
    // 20 lists in the air: each one that finishes is replaced while `on`.
    let on = true;
    const keep = async (): Promise<void> => {
      while (on) {
        const id = await post(text, `ingest-${++n}`);
        await roost.flock.finished(id);
        if (on) items += ITEMS;
      }
    };
    const fly = async (): Promise<Promise<void>[]> => {
      on = true;
      const keepers = Array.from({ length: LISTS }, () => keep());
      while ([...roost.flock.state.lists.values()].filter((l) => !l.finished).length < LISTS) await new Promise((r) => setTimeout(r, 5));
      return keepers;
    };
    const measureWith = async (): Promise<void> => {
      const t0 = performance.now();
      withFlock.push(await ingest(roost.url));
      flockSeconds += (performance.now() - t0) / 1000;
    };
    if (DELAY_MS === 0) {
      // A fast model: windows take turns, and the lists finish between them.
      for (let w = 0; w < WINDOWS; w++) {
        without.push(await ingest(roost.url));
        const keepers = await fly();
        await measureWith();
        on = false;
        await Promise.all(keepers);
      }
    } else {
      // A slow model: its lists would take minutes to finish, so every window without them comes
      // first, then every window with them; the server closes with them in flight (a list never
      // hangs on a close).
      for (let w = 0; w < WINDOWS; w++) without.push(await ingest(roost.url));
      const keepers = await fly();
      for (let w = 0; w < WINDOWS; w++) await measureWith();
      on = false;
      void Promise.allSettled(keepers);
    }
    const med = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];
    // The driver's pace (src/server/flock/pace.ts), when this build has one: turns that waited, windows spent yielding.
    const pace = (roost.flock as unknown as { pace?: { stats: unknown } }).pace?.stats ?? null;
    process.stdout.write(JSON.stringify({ without, with: withFlock, ratio: med(withFlock) / med(without), itemsPerSecWith: items / flockSeconds, pace }) + '\n');
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
