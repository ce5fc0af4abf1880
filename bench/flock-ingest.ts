// Floor ingest with the flock at work beside it (issue 13, targets: "no
// effect on floor ingest beyond 5%"): one server (in this process, the flock's
// model in-process, bench/flock-setup.ts), single-event POST /events from a
// separate load process (bench/load.ts, 64 connections), in windows that take
// turns in the same run: without the flock, then with 20 lists of 50 items in
// flight (a list that finishes is replaced at once, so 20 are in the air for
// the whole window), `windows` windows with the flock, each between two
// without it (W F W F W), and each compared with the mean of its two
// neighbours; every window is preceded by a second of the same load, not
// counted, and a window's lists are handed over during that second. The
// flock is warmed up first, so trust skips the approvals, as in
// bench/flock.ts.
//
// Usage: node dist/bench/flock-ingest.js <seconds> <model delay ms> <windows>
// Prints one JSON line: { without: [ev/s], with: [ev/s], ratio (the median of ratios), ratios, itemsPerSecWith }.

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
    const cfg = { mode: 'http', url: url + '/events', body: SINGLE, connections: 64, seconds: SECONDS, warmupSeconds: 1 };
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
  // Warmed up with a model answering at once (trust is earned in a few seconds); each window with the flock then sets the delay.
  const bench = await flockBench(0);
  const { roost, post } = bench;
  const text = Array.from({ length: ITEMS }, (_, i) => `write note number ${i + 1}`).join('\n');
  let n = 0;
  try {
    await bench.warmUp();
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
    // The lists are handed over while the load runs its warm-up second, as a person hands
    // over lists to a server that agents keep busy: the flock starts out yielding, and what a
    // burst of lists flown on an idle server leaves behind (garbage, WAL) is not counted.
    const measureWith = async (): Promise<Promise<void>[]> => {
      const t0 = performance.now();
      const load = ingest(roost.url);
      await new Promise((r) => setTimeout(r, 500));
      const keepers = await fly();
      withFlock.push(await load);
      flockSeconds += (performance.now() - t0) / 1000;
      return keepers;
    };
    // Windows take turns, W F W F … W, and each window with the flock is compared with the mean
    // of the windows without it on either side, as the ingest row compares Roost with the
    // baseline: this machine's speed drifts within a minute (docs/architecture.md,
    // "Measuring"), and a comparison is only as good as it is close in time. Between windows
    // the lists in the air are let finish with the model answering at once (a slow model's
    // lists would take minutes), so a window without the flock has no list in flight.
    without.push(await ingest(roost.url));
    for (let w = 0; w < WINDOWS; w++) {
      bench.setDelay(DELAY_MS);
      const keepers = await measureWith();
      on = false;
      bench.setDelay(0);
      await Promise.all(keepers);
      without.push(await ingest(roost.url));
    }
    const ratios = withFlock.map((r, w) => (2 * r) / (without[w] + without[w + 1]));
    const sorted = [...ratios].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const ratio = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    // The driver's pace (src/server/flock/pace.ts), when this build has one: turns that waited, windows spent yielding.
    const pace = (roost.flock as unknown as { pace?: { stats: unknown } }).pace?.stats ?? null;
    process.stdout.write(JSON.stringify({ without, with: withFlock, ratio, ratios, itemsPerSecWith: items / flockSeconds, pace }) + '\n');
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
