// The floor in real Chromium under load: 200 agents in 8 teams, 200 events/s
// posted over HTTP by a separate process, to a `roost serve` child process.
//
//   node dist/bench/browser.js            # 30 s frame window, memory at 1 and 10 min
//   node dist/bench/browser.js --quick    # memory at 1 and 3 min (a dry run)
//   node dist/bench/browser.js --frames-only 20 --agents 500 [--whole]
//                                         # the frame window only, as JSON (npm run bench's
//                                         # floor500 rows): 500 agents in 20 teams, the page's
//                                         # default view, or --whole: zoomed out to all of it
//   ... --profile page.cpuprofile | --trace page.json
//                                         # a CPU profile or a Performance trace of the window
//
// Measures, in the page: frame interval (requestAnimationFrame to the next),
// the floor's own work per frame (drain + fold + draw), the JS heap after a
// forced GC (CDP), and latency from just before the POST to the end of the
// frame that drew the event. Prints a markdown table.
//
// Internal mode: `--poster <url>` is the load generator (run as a child).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitHealthy } from '../test/support/up.js';
import type { Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
// window.__roost, as the page declares it (types only: nothing of web/ is loaded here).
import type {} from '../web/src/floor/hook.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 && Number(argv[i + 1]) > 0 ? Number(argv[i + 1]) : dflt;
};
const AGENTS = opt('--agents', 200);
/** 25 agents a room. */
const TEAMS = opt('--teams', Math.max(8, Math.round(AGENTS / 25)));
const RATE = 200;
const TICK_MS = 50;
const PROBE_PREFIX = 'probe:';

// ---------------------------------------------------------------- poster (child)

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function poster(url: string): Promise<void> {
  const rand = rng(42);
  const teams = Array.from({ length: TEAMS }, (_, i) => `Team ${i < 26 ? String.fromCharCode(65 + i) : i + 1}`);
  const agents = Array.from({ length: AGENTS }, (_, i) => {
    const t = i % TEAMS;
    const lead = i < TEAMS;
    return { id: `a${i}`, team: teams[t], role: lead ? 'lead' : ['coder', 'tester', 'reviewer', 'researcher'][i % 4], parent: lead ? null : `a${t}`, away: 0 };
  });
  const send = async (events: unknown[]) => {
    const r = await fetch(url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events) });
    if (!r.ok) throw new Error(`POST /events: ${r.status} ${await r.text()}`);
  };
  const joins = agents.map((a) => ({ type: 'join', agent: { id: a.id, role: a.role, source: 'bench' }, team: a.team, parent: a.parent ?? undefined, status: 'working', activity: 'Starting' }));
  // At most 200 new agents per request (docs/floor.md, "What one request may create").
  for (let i = 0; i < joins.length; i += 100) await send(joins.slice(i, i + 100));
  process.send?.('ready');
  const tools = ['Read', 'Edit', 'Bash', 'Grep', 'Write'];
  const statuses = ['idle', 'thinking', 'working', 'waiting', 'error', 'offline'];
  const perTick = (RATE * TICK_MS) / 1000;
  let probe = 0;
  let tick = 0;
  const start = Date.now();
  for (;;) {
    tick++;
    const now = Date.now();
    const events: Record<string, unknown>[] = [];
    for (let k = 0; k < perTick; k++) {
      const a = agents[Math.floor(rand() * AGENTS)];
      if (a.away) {
        if (now > a.away) {
          a.away = 0;
          events.push({ type: 'join', agent: { id: a.id, role: a.role, source: 'bench' }, team: a.team, parent: a.parent ?? undefined, status: 'working', activity: 'Back again' });
        } else events.push({ type: 'status', agent: agents[0].id, status: 'working', activity: `Coordinating ${tick}` });
        continue;
      }
      const r = rand();
      if (r < 0.55) events.push({ type: 'tool', agent: a.id, tool: tools[Math.floor(rand() * tools.length)], activity: `Working on file_${Math.floor(rand() * 500)}.ts` });
      else if (r < 0.78) events.push({ type: 'status', agent: a.id, status: statuses[Math.floor(rand() * statuses.length)], activity: `Step ${tick}` });
      else if (r < 0.9) events.push({ type: 'message', agent: a.id, to: agents[Math.floor(rand() * AGENTS)].id, text: `Note ${tick}` });
      else if (r < 0.93) events.push({ type: 'task', agent: a.id, task: `Task ${tick}` });
      else if (r < 0.94 && a.parent) {
        // A helper leaves (the server removes it 6 s later) and comes back 8 s later.
        a.away = now + 8_000;
        events.push({ type: 'leave', agent: a.id });
      } else events.push({ type: 'status', agent: a.id, activity: `Thinking about ${tick}` });
    }
    if (tick % 4 === 0) {
      // The probe: its ts is the moment just before the POST.
      events.push({ type: 'status', agent: agents[1].id, activity: `${PROBE_PREFIX}${++probe}`, ts: Date.now() });
    }
    await send(events);
    const next = start + tick * TICK_MS;
    const wait = next - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

// ---------------------------------------------------------------- driver

async function startServer(dataDir: string): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const bin = fileURLToPath(new URL('../../bin/roost.js', import.meta.url));
  const proc = spawn(process.execPath, [bin, 'serve', '--port', String(port), '--data', dataDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc, { timeoutMs: 20_000, everyMs: 100 });
  return { url, proc };
}

const q = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds used so far by every Chromium process of this profile (all its children share the flag). */
function chromiumCpuSeconds(profile: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes(profile)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]); // utime, stime
    } catch {}
  }
  return ticks / 100; // USER_HZ
}

async function heapMB(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  await cdp.detach();
  const used = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN;
  return used / 1024 / 1024;
}

/**
 * `--profile <file>`: a DevTools CPU profile of the page over the frame window
 * (open it in DevTools' Performance panel); `--trace <file>`: a Performance
 * trace (tasks, style, layout, paint, commit, GC) of the same. For working on
 * the renderer: both cost the page time, so the frame numbers of such a run
 * are not the bench's.
 */
async function startProfiling(page: Page): Promise<() => Promise<void>> {
  const at = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] ? argv[i + 1] : null;
  };
  const profileTo = at('--profile');
  const traceTo = at('--trace');
  if (!profileTo && !traceTo) return async () => {};
  const cdp = await page.context().newCDPSession(page);
  if (profileTo) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  const chunks: unknown[] = [];
  let traced: Promise<void> = Promise.resolve();
  if (traceTo) {
    cdp.on('Tracing.dataCollected', (e) => chunks.push(...e.value));
    traced = new Promise((ok) => cdp.once('Tracing.tracingComplete', () => ok()));
    await cdp.send('Tracing.start', {
      transferMode: 'ReportEvents',
      traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.frame', 'v8', 'v8.execute', 'blink.user_timing', 'loading', 'toplevel'] },
    });
  }
  return async () => {
    if (profileTo) {
      const { profile } = await cdp.send('Profiler.stop');
      writeFileSync(profileTo, JSON.stringify(profile));
    }
    if (traceTo) {
      await cdp.send('Tracing.end');
      await traced;
      writeFileSync(traceTo, JSON.stringify({ traceEvents: chunks }));
    }
    await cdp.detach();
  };
}

async function drive(quick: boolean, framesOnly = false, windowMs = 30_000, whole = false): Promise<void> {
  const memA = 60_000;
  const memB = quick ? 180_000 : 600_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'roost-bench-browser-'));
  const profile = mkdtempSync(join(tmpdir(), 'roost-bench-chromium-'));
  const { url, proc: server } = await startServer(dataDir);
  let load: ChildProcess | null = null;
  const context = await launchChromium(profile, { width: 1600, height: 1000 });
  try {
    const page = await context.newPage();
    await page.goto(url + '/');
    await page.waitForFunction(() => window.__roost?.client.connection === 'live');
    // Latency probes, timed in the page at the end of the frame that drew them.
    await page.evaluate((prefix) => {
      const long: number[] = [];
      (window as unknown as { __long: number[] }).__long = long;
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) long.push(e.duration);
      }).observe({ type: 'longtask' });
      const lat: number[] = [];
      (window as unknown as { __lat: number[] }).__lat = lat;
      window.__roost!.afterDraw = (events, at) => {
        for (const e of events) if (typeof e.activity === 'string' && e.activity.startsWith(prefix) && typeof e.ts === 'number') lat.push(at - e.ts);
      };
    }, PROBE_PREFIX);

    load = spawn(process.execPath, [fileURLToPath(import.meta.url), '--poster', url, '--agents', String(AGENTS), '--teams', String(TEAMS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((ok, fail) => {
      load!.once('message', () => ok());
      load!.once('exit', (c) => fail(new Error(`poster exited (${c})`)));
    });
    const t0 = Date.now();
    await page.waitForFunction((n) => window.__roost!.state.agents.size >= n, AGENTS);
    console.error(`bench: ${AGENTS} agents on the floor; warming up`);
    if (whole) {
      // Zoomed out until the whole floor is on screen (a person's choice; the default view keeps names readable).
      await page.waitForTimeout(500);
      await page.evaluate(() => {
        const s = window.__roost!.scene;
        const e = s.extent;
        s.zoomBy(Math.min((e.cssW - 32) / e.worldW, (e.cssH - 32) / e.worldH) / s.scale, 0, 0);
        s.panBy(16 - s.camera.offX, 16 - s.camera.offY);
      });
    }
    const view = await page.evaluate(() => ({ scale: window.__roost!.scene.scale, namePx: window.__roost!.scene.namePx() }));

    // The 30 s frame window, after 15 s of warm-up.
    await sleep(framesOnly ? 5_000 : 15_000);
    await page.evaluate(() => (window as unknown as { __long: number[] }).__long.splice(0));
    const cpu0 = chromiumCpuSeconds(profile);
    const prof = await startProfiling(page);
    const frames = await page.evaluate(
      (windowMs) =>
        new Promise<{ intervals: number[]; work: number[]; drawWork: number[]; events: number; draws: number }>((done) => {
          const hook = window.__roost!;
          const intervals: number[] = [];
          const startCount = hook.frameCount;
          const startDraw = hook.drawCount;
          const startDraws = hook.scene.counters.draws;
          const startFrames = hook.client.stats.frames;
          let last = performance.now();
          const end = last + windowMs;
          const tick = (t: number) => {
            intervals.push(t - last);
            last = t;
            if (t < end) requestAnimationFrame(tick);
            else {
              const n = Math.min(hook.frameCount - startCount, 4096);
              const work: number[] = [];
              for (let i = hook.frameCount - n; i < hook.frameCount; i++) work.push(hook.frameWork[i % 4096]);
              const m = Math.min(hook.drawCount - startDraw, 4096);
              const drawWork: number[] = [];
              for (let i = hook.drawCount - m; i < hook.drawCount; i++) drawWork.push(hook.drawWork[i % 4096]);
              done({ intervals: intervals.slice(1), work, drawWork, events: hook.client.stats.frames - startFrames, draws: hook.scene.counters.draws - startDraws });
            }
          };
          requestAnimationFrame((t) => {
            last = t;
            requestAnimationFrame(tick);
          });
        }),
      windowMs,
    );
    await prof();
    const longTasks = await page.evaluate(() => (window as unknown as { __long: number[] }).__long.splice(0));
    const cpuPct = ((chromiumCpuSeconds(profile) - cpu0) / (windowMs / 1000)) * 100;
    const slow = frames.intervals.filter((x) => x > 50).length;
    const loadInWindow = loadavg()[0];
    console.error(`bench: frame window done; intervals > 50 ms: ${slow}; long tasks: ${longTasks.length} (max ${fmt(Math.max(0, ...longTasks), 0)} ms)`);
    if (framesOnly) {
      console.log(JSON.stringify({ agents: AGENTS, teams: TEAMS, ...view, cpuPct, load: loadInWindow, median: q(frames.intervals, 0.5), p99: q(frames.intervals, 0.99), max: Math.max(...frames.intervals), workMedian: q(frames.work, 0.5), workP99: q(frames.work, 0.99), workMax: Math.max(...frames.work), draws: frames.draws, events: frames.events }));
      return;
    }
    await sleep(Math.max(0, t0 + memA - Date.now()));
    const heap1 = await heapMB(page);
    const agents1 = await page.evaluate(() => window.__roost!.state.agents.size);
    console.error(`bench: heap after ${memA / 60_000} min: ${fmt(heap1)} MB; waiting for ${memB / 60_000} min`);
    await sleep(Math.max(0, t0 + memB - Date.now()));
    const heap2 = await heapMB(page);
    const agents2 = await page.evaluate(() => window.__roost!.state.agents.size);
    const lat = await page.evaluate(() => (window as unknown as { __lat: number[] }).__lat);
    const stats = await page.evaluate(() => ({ ...window.__roost!.client.stats }));
    const seconds = frames.intervals.reduce((a, b) => a + b, 0) / 1000;

    const growth = ((heap2 - heap1) / heap1) * 100;
    const rows: [string, string, string, string][] = [
      ['Frame interval, median (rAF to rAF)', `${fmt(q(frames.intervals, 0.5))} ms`, '< 16 ms (60 Hz vsync is 16.7)', q(frames.intervals, 0.5) < 17 ? 'ok' : 'MISS'],
      ['Floor work per frame, median (fold, and draw when due)', `${fmt(q(frames.work, 0.5))} ms`, '< 16 ms', q(frames.work, 0.5) < 16 ? 'ok' : 'MISS'],
      ['Floor work per drawn frame, median / p99 / max', `${fmt(q(frames.drawWork, 0.5))} / ${fmt(q(frames.drawWork, 0.99))} / ${fmt(Math.max(...frames.drawWork))} ms`, '', ''],
      ['Chromium CPU during the window (all its processes)', `${fmt(cpuPct, 0)} % of one core`, '', ''],
      ['Frame intervals over 50 ms; long tasks (30 s)', `${slow}; ${longTasks.length} (max ${fmt(Math.max(0, ...longTasks), 0)} ms)`, '', ''],
      ['Longest frame interval (30 s)', `${fmt(Math.max(...frames.intervals))} ms`, '< 100 ms', Math.max(...frames.intervals) < 100 ? 'ok' : 'MISS'],
      ['Frames drawn / events folded (30 s)', `${frames.draws} / ${frames.events} (${fmt(frames.events / seconds, 0)} ev/s)`, '200 ev/s', ''],
      [`JS heap after GC, ${memA / 60_000} min`, `${fmt(heap1)} MB (${agents1} agents)`, '', ''],
      [`JS heap after GC, ${memB / 60_000} min`, `${fmt(heap2)} MB (${agents2} agents)`, `within 20% of ${memA / 60_000} min`, Math.abs(growth) <= 20 ? 'ok' : 'MISS'],
      ['Heap growth', `${growth >= 0 ? '+' : ''}${fmt(growth)} %`, '', ''],
      ['POST → drawn, p50', `${fmt(q(lat, 0.5), 0)} ms (${lat.length} probes)`, '', ''],
      ['POST → drawn, p95', `${fmt(q(lat, 0.95), 0)} ms`, '< 250 ms', q(lat, 0.95) < 250 ? 'ok' : 'MISS'],
      ['Duplicates / fresh snapshots', `${stats.duplicates} / ${stats.snapshots}`, '0 / 1', stats.duplicates === 0 && stats.snapshots === 1 ? 'ok' : 'MISS'],
    ];
    rows.push(['Machine load (1-min load average: frame window / end)', `${fmt(loadInWindow)} / ${fmt(loadavg()[0])} on ${cpus().length} CPUs`, '', '']);
    console.log(`\n### Floor in Chromium: ${AGENTS} agents, ${TEAMS} teams, ${RATE} events/s${quick ? ' (--quick)' : ''}\n`);
    console.log('| Measure | Value | Target | |');
    console.log('|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  } finally {
    load?.kill('SIGTERM');
    await context.close().catch(() => {});
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args[0] === '--poster') {
  poster(args[1]).catch((e) => {
    console.error('bench poster:', e);
    process.exit(1);
  });
} else {
  // --frames-only [seconds]: just the frame window (for working on the renderer).
  const fo = args.indexOf('--frames-only');
  drive(args.includes('--quick'), fo >= 0, fo >= 0 && Number(args[fo + 1]) > 0 ? Number(args[fo + 1]) * 1000 : 30_000, args.includes('--whole')).then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
