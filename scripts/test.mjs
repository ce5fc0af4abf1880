#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (TypeScript via tsx).
// Usage: node scripts/test.mjs [--checks] [filter-substring ...]
//
// - With --checks (`npm test`), the build, the web bundle and the lint
//   (scripts/check.mjs) start first, side by side; the tests start as soon as
//   the build and the bundle are done, while the lint (the longest, one core)
//   still runs. A failed build or bundle stops the run before any test; a
//   failed lint fails it at the end, its output printed above the last line.
// - Processes: a test process is `node --import tsx scripts/test-group.mjs
//   <file>...`, node:test running in it as in `node <file>`. Most of a small
//   file's CPU is that start-up: node, tsx, and importing src/ through tsx's
//   hooks (about 2 s of CPU for a file that starts a server, of 1 to 5 s in
//   all), so the light files that set nothing process-wide run in groups of
//   about ROOST_TEST_GROUP_S (default 45) seconds by their times, one file
//   after another in one process (the rules and how files are told apart:
//   `alone` below, test-group.mjs, test-reporter.mjs). A group of 8 fold files
//   took 10 s of CPU against 22 s one process each, 8 HTTP files 28 s against
//   44 s. Each file still has its own output, counts, wall time and a share
//   of its process's CPU (by wall time, marked ~). A process that dies or is
//   killed fails the file it was in; the files of its group it never started
//   run again, each in its own process. ROOST_TEST_GROUP_S=0: every file alone.
// - Longest first: each unit (a file, or a group) by the time its files took
//   in their last run on this checkout (node_modules/.cache/roost-test-times.json,
//   rewritten after every run), else scripts/test-times.json, else an
//   estimate from its kind; the long units start first so the run does not
//   end waiting on one of them (longest-processing-time first).
// - More processes at once than cores: a file mostly waits (on its servers, on
//   PostgreSQL, on a CLI or Chromium, on timers); measured in CPU time, a real
//   agent CLI's file takes about 10 s and a Chromium file about 13 s of CPU,
//   a light one 0.5 to 8 s, while `node --test` at 2 files at once ran the
//   suite in 910 s, 1,820 core-seconds.
//   Up to ROOST_TEST_CONCURRENCY (default 4) processes run at once, of which at
//   most ROOST_TEST_HEAVY (default 3) heavy files (*.browser.test.ts,
//   *.claude|codex|gemini.test.ts: a Chromium's memory, a CLI's start-up burst),
//   so one slot is always left to the light files. At most ROOST_TEST_PG_FILES
//   (default 3) PostgreSQL files (*.pg.*) at once, of the server's 100
//   connections: a test node's pool holds at most 4 (test/support/pg.ts), and
//   the file that opens the most, nodeloss.pg.browser's three nodes, peaks at
//   18 (storage.pg kept every contract test's store open to its end, about a
//   hundred connections, until each test closed its own: two files at once
//   ran the server out then, "sorry, too many clients already"). Heavy and
//   PostgreSQL files always run alone.
// - A file has 300 s (ROOST_TEST_FILE_TIMEOUT_S; in a group, from its own
//   start): the real CLIs' suites take a few tens of seconds each test, more
//   on a busy machine; a file that hangs is killed and fails then.
// - A file's output (its console output, then the spec reporter's text) is
//   printed whole when its process ends, so two files never interleave. After
//   the run: the slowest files, each failed file's failing tests again, then
//   one closing line, "tests: N passed, N failed, N skipped" (CI reads it).
// In CI (CI=true) a suite whose environment is missing fails instead of skipping.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { runCheck } from './check.mjs';

const root = new URL('..', import.meta.url).pathname;
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.test\.ts$/.test(name)) out.push(p);
  }
  return out;
}
const withChecks = process.argv.includes('--checks');
const filters = process.argv.slice(2).filter((a) => a !== '--checks');
const files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// In CI every environment's suites must be there to run (each fails rather than
// skips when its environment is missing: see test/support/env.ts).
if (filters.length === 0 && (process.env.CI === 'true' || process.env.CI === '1')) {
  for (const kind of ['.pg.test.ts', '.browser.test.ts', '.claude.test.ts', '.codex.test.ts', '.gemini.test.ts']) {
    if (!files.some((f) => f.endsWith(kind))) {
      console.error(`CI: no ${kind} suite found; the required suites did not run`);
      process.exit(1);
    }
  }
}

// With --checks (`npm test`): the build, the bundle and the lint (scripts/check.mjs)
// start now; the tests start once the build and the bundle are done (the tests
// spawn dist/'s CLI, the browser ones load dist/web, which the bundle empties
// while it writes), while the lint still runs; it is waited for at the end.
const checking = withChecks ? { build: runCheck('build'), bundle: runCheck('bundle'), lint: runCheck('lint') } : null;
if (checking) {
  const built = await Promise.all([checking.build, checking.bundle]);
  if (built.some((c) => c.code !== 0)) {
    await checking.lint;
    console.error(`✖ ${built.filter((c) => c.code !== 0).map((c) => c.name).join(' and ')} failed; no tests ran`);
    process.exit(1);
  }
}

const FILE_TIMEOUT_MS = 1000 * Number(process.env.ROOST_TEST_FILE_TIMEOUT_S ?? 300);
const SLOTS = Math.max(1, Number(process.env.ROOST_TEST_CONCURRENCY ?? 4));
const HEAVY_SLOTS = Math.max(1, Math.min(SLOTS, Number(process.env.ROOST_TEST_HEAVY ?? 3)));
const heavy = (f) => /\.(browser|claude|codex|gemini)\./.test(f);
const PG_SLOTS = Math.max(1, Number(process.env.ROOST_TEST_PG_FILES ?? 3));
const onPg = (f) => /\.pg\./.test(f);

// Each file's time in its last run on this checkout, else in the committed
// table (scripts/test-times.json: a clean clone, as CI's, has no cache, and
// estimated from its kind and size alone a long light file, bridge.work's 90 s,
// started among the last and the run ended waiting on it), else an estimate:
// heavy files and PostgreSQL ones take longest, then the rest by size (a bigger
// file has more tests). ROOST_TEST_SAVE_TIMES=1 rewrites the committed table
// from the run's times (after a whole run on an idle machine).
const timesFile = join(root, 'node_modules', '.cache', 'roost-test-times.json');
const committedTimesFile = join(root, 'scripts', 'test-times.json');
const readTimes = (path) => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
};
const committed = readTimes(committedTimesFile);
let known = { ...committed, ...readTimes(timesFile) };
function estimate(f) {
  if (typeof known[f] === 'number') return known[f];
  const size = statSync(join(root, f)).size / 1000; // about a second per KB for the heavy kinds
  if (/\.(claude|codex|gemini)\./.test(f)) return 30_000 + size * 1500;
  if (f.includes('.browser.')) return 15_000 + size * 1000;
  if (f.includes('.pg.')) return 5_000 + size * 500;
  return size * 300;
}
// Which files share a process (scripts/test-group.mjs runs them one after
// another in it) and which run alone. Alone: the heavy kinds and the PostgreSQL
// ones (they have their own slots), and a file that sets anything process-wide
// another file would see: hooks on the root (a `before`, `after`, `beforeEach`
// or `afterEach` at the top of the file applies to every file after it in the
// process), the environment, the working directory, process listeners or exit
// code, mocked timers, the password cost, or one that measures the process's
// memory or resources, or one that imports a helper that hooks the root itself
// (test/support/browser.ts closes its Chromium after the file: a hook on the
// root added once the root has run does not wait for the file's end). A file
// can ask for its own process with the comment `roost-test: own process`.
const GROUP_MS = 1000 * Number(process.env.ROOST_TEST_GROUP_S ?? 45);
const PROCESS_WIDE =
  /^(before|after|beforeEach|afterEach)\s*\(|^mock\.|roost-test: own process|process\.(chdir|exitCode|on|once|off|removeAllListeners|setMaxListeners|memoryUsage|resourceUsage|argv)\b|getActiveResources|mock\.timers|setScryptCostForTests|process\.env(\.\w+|\[[^\]]+\])\s*(=(?!=)|\?\?=|\|\|=)|delete process\.env|support\/browser\.js/m;
const alone = (f) => heavy(f) || onPg(f) || PROCESS_WIDE.test(readFileSync(join(root, f), 'utf8'));
const sharing = files.filter((f) => !alone(f)).sort((a, b) => estimate(b) - estimate(a));
// Groups of about GROUP_MS by the times above, balanced (each file, longest
// first, joins the group with the least so far); a file longer than that alone.
const groups = [];
const small = sharing.filter((f) => estimate(f) < GROUP_MS);
const bins = Array.from({ length: Math.ceil(small.reduce((s, f) => s + estimate(f), 0) / GROUP_MS) }, () => ({ files: [], ms: 0 }));
for (const f of sharing) {
  if (!small.includes(f)) {
    groups.push([f]);
    continue;
  }
  const bin = bins.reduce((a, b) => (b.ms < a.ms ? b : a));
  bin.files.push(f);
  bin.ms += estimate(f);
}
for (const b of bins) if (b.files.length) groups.push(b.files);
for (const f of files) if (alone(f)) groups.push([f]);
const unitMs = (u) => u.reduce((s, f) => s + estimate(f), 0);
const queue = groups.sort((a, b) => unitMs(b) - unitMs(a));

const tmp = mkdtempSync(join(tmpdir(), 'roost-test-'));
const results = [];
let running = 0;
// The running processes' groups: killed with the runner (Ctrl-C, CI's timeout).
const pgroups = new Set();
function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {}
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const pid of pgroups) killGroup(pid);
    process.exit(130);
  });
}
let runningHeavy = 0;
let runningPg = 0;
const t0 = Date.now();
// The whole machine's CPU over the run (Linux): how busy the cores were, to tell
// a run that waited from one the CPU bounded.
function cpuTicks() {
  try {
    const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    return { total: f.reduce((a, b) => a + b, 0), idle: f[3] + f[4] };
  } catch {
    return null;
  }
}
const ticks0 = cpuTicks();

const MARK = '\u0001roost-test ';
const TAG = '\u0002roost-test ';
// Runs one process of test files (one, or a group), resolving to the files it did not start (the process died first).
function runUnit(unit, n) {
  const cpuFile = join(tmp, `${n}.cpu`);
  const node = [
    process.execPath,
    // Password hashes at a test cost in every test process (test/support/scrypt-cost.ts; production code never lowers it).
    '--import', 'tsx', '--import', './test/support/scrypt-cost.ts',
    '--test-reporter=./scripts/test-reporter.mjs', '--test-reporter-destination=stdout',
    './scripts/test-group.mjs', ...unit,
  ];
  // Under a shell whose `times` then reports the CPU the process cost: itself
  // and everything it started and waited for (servers, CLIs, Chromium).
  const child = spawn(
    '/bin/sh',
    ['-c', 'c=0; "$@" || c=$?; times > "$0"; exit $c', cpuFile, ...node],
    // Its own process group, so a file that hangs is killed with everything it started (servers, Chromium, CLIs).
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const spawned = Date.now();
  pgroups.add(child.pid);
  // Each file's console output, told apart by test-group.mjs's lines; what comes before the first file's, the process's own.
  const said = new Map(unit.map((f) => [f, []]));
  const spec = new Map(unit.map((f) => [f, []]));
  const counts = new Map();
  const own = [];
  const started = new Map();
  const ended = new Map();
  let current = null;
  let timedOut = null;
  let timer = null;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = current;
      killGroup(child.pid);
    }, FILE_TIMEOUT_MS);
  };
  arm();
  let line = '';
  let blank = false;
  const sink = () => (current ? said.get(current) : own);
  child.stdout.on('data', (d) => {
    const parts = (line + d.toString('utf8')).split('\n');
    line = parts.pop();
    for (const l of parts) {
      if (l.startsWith(TAG)) {
        // The reporter's: a line of a file's spec text, or its counts.
        const rest = l.slice(TAG.length);
        const sp = rest.indexOf(' ');
        const f = unit[Number(rest.slice(0, sp))];
        const what = rest.slice(sp + 1);
        if (f && what.startsWith('counts ')) {
          try {
            counts.set(f, JSON.parse(what.slice(7)));
          } catch {}
        } else if (f) spec.get(f).push(what + '\n');
        continue;
      }
      if (l.startsWith(MARK)) {
        // test-group.mjs starts its lines on a new line: the blank line before one is its own.
        blank = false;
        const [what, ...rest] = l.slice(MARK.length).split(' ');
        const f = rest.join(' ');
        if (what === 'start' && said.has(f)) {
          // The first file's time counts the process's start-up (node, tsx, the imports they share).
          started.set(f, current ? Date.now() : spawned);
          current = f;
          arm();
        } else if (what === 'end' && said.has(f)) ended.set(f, Date.now());
        continue;
      }
      if (blank) sink().push(Buffer.from('\n'));
      blank = l === '';
      if (!blank) sink().push(Buffer.from(l + '\n'));
    }
  });
  child.stderr.on('data', (d) => sink().push(d));
  return new Promise((done) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      pgroups.delete(child.pid);
      if (line) sink().push(Buffer.from(line));
      const closed = Date.now();
      // `times`: the shell's own user and system time, then its children's ("1m2.5s 0m0.4s").
      let cpuMs = NaN;
      try {
        const sec = (x) => Number(x.split('m')[0]) * 60 + Number(x.split('m')[1].replace('s', ''));
        const [user, sys] = readFileSync(cpuFile, 'utf8').trim().split('\n')[1].trim().split(/\s+/);
        cpuMs = 1000 * (sec(user) + sec(sys));
      } catch {}
      const ran = unit.filter((f) => started.has(f));
      const msOf = (f) => (ended.get(f) ?? closed) - started.get(f);
      const ranMs = ran.reduce((s, f) => s + msOf(f), 0) || 1;
      // The process exited badly: with a file unfinished, that file failed; after every file ended, the last one is blamed.
      const bad = code !== 0 || signal;
      const anyFailed = ran.some((f) => counts.get(f)?.failed);
      const blamed = bad && !anyFailed ? (ran.find((f) => !ended.has(f)) ?? ran[ran.length - 1]) : ran.find((f) => !ended.has(f));
      for (const f of ran) {
        const c = counts.get(f) ?? { passed: 0, failed: 0, skipped: 0 };
        const failed = c.failed || (f === blamed ? 1 : 0);
        const ms = msOf(f);
        const cpu = (cpuMs * ms) / ranMs;
        const with_ = unit.length > 1 ? `, in one process with ${unit.length - 1} other file${unit.length > 2 ? 's' : ''}` : '';
        const head = `\n▶ ${f} (${(ms / 1000).toFixed(1)} s, CPU ${Number.isFinite(cpu) ? `${unit.length > 1 ? '~' : ''}${(cpu / 1000).toFixed(1)}` : '?'} s${with_})\n`;
        let text = Buffer.concat([...(f === ran[0] ? own : []), ...said.get(f)]).toString('utf8') + spec.get(f).join('');
        if (timedOut === f) text += `✖ ${f}: killed after ${FILE_TIMEOUT_MS / 1000} s\n`;
        else if (failed && !c.failed) text += `✖ ${f}: the process exited ${signal ?? code} outside any test${unit.length > 1 ? ` (it ran ${unit.join(', ')} one after another)` : ''}\n`;
        process.stdout.write(head + text);
        // A failed file's output is printed again at the end, where a truncated log still shows it.
        results.push({ file: f, ms, cpuMs: cpu, passed: c.passed, failed, skipped: c.skipped, said: failed ? text : '', timedOut: timedOut === f });
      }
      // Files the process never started (it died before them) run again, each alone.
      done(unit.filter((f) => !started.has(f)));
    });
  });
}

await new Promise((finish) => {
  let n = 0;
  const next = () => {
    while (running < SLOTS && queue.length > 0) {
      // The longest waiting unit that fits: a heavy file only while a heavy slot is free, a PostgreSQL one while a PostgreSQL slot is.
      const i = queue.findIndex((u) => (runningHeavy < HEAVY_SLOTS || !heavy(u[0])) && (runningPg < PG_SLOTS || !onPg(u[0])));
      if (i < 0) break;
      const [unit] = queue.splice(i, 1);
      const h = heavy(unit[0]);
      const p = onPg(unit[0]);
      running++;
      if (h) runningHeavy++;
      if (p) runningPg++;
      void runUnit(unit, n++).then((left) => {
        running--;
        if (h) runningHeavy--;
        if (p) runningPg--;
        for (const f of left) queue.unshift([f]);
        if (queue.length === 0 && running === 0) finish();
        else next();
      });
    }
  };
  next();
});
rmSync(tmp, { recursive: true, force: true });

// This run's times order the next run (a file that failed keeps its time too).
try {
  mkdirSync(dirname(timesFile), { recursive: true });
  const local = readTimes(timesFile);
  for (const r of results) local[r.file] = r.ms;
  writeFileSync(timesFile, JSON.stringify(local, null, 1));
} catch {}
if (process.env.ROOST_TEST_SAVE_TIMES === '1') {
  // Whole seconds, sorted by name; the files this run did not run keep their committed time; the files that no longer exist are left out.
  const table = Object.fromEntries(walk(join(root, 'test')).map((f) => relative(root, f)).sort().map((f) => [f, committed[f] ?? known[f]]).filter(([, ms]) => typeof ms === 'number'));
  for (const r of results) table[r.file] = r.ms;
  for (const f of Object.keys(table)) table[f] = Math.round(table[f] / 1000) * 1000;
  writeFileSync(committedTimesFile, JSON.stringify(table, null, 1) + '\n');
}

const rows = [...results].sort((a, b) => b.ms - a.ms);
const sum = (k) => results.reduce((s, r) => s + (Number.isFinite(r[k]) ? r[k] : 0), 0);
const s1 = (ms) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '?').padStart(7);
console.log(
  `\nper-file time (slowest ${Math.min(25, rows.length)} of ${rows.length}; sum ${(sum('ms') / 1000).toFixed(0)} s, CPU ${(sum('cpuMs') / 1000).toFixed(0)} s, ${((Date.now() - t0) / 1000).toFixed(0)} s wall at ${SLOTS} at once, ${HEAVY_SLOTS} heavy, ${PG_SLOTS} PostgreSQL):`,
);
const ticks1 = cpuTicks();
if (ticks0 && ticks1 && ticks1.total > ticks0.total) {
  console.log(`  the machine's CPU was busy ${Math.round((100 * (1 - (ticks1.idle - ticks0.idle) / (ticks1.total - ticks0.total))))}% of the run (all processes, not only the tests')`);
}
console.log('     wall      CPU');
for (const f of rows.slice(0, 25)) {
  console.log(`  ${s1(f.ms)} s ${s1(f.cpuMs)} s  ${f.file}${f.failed ? `  (${f.failed} failed)` : ''}`);
}
for (const r of results.filter((x) => x.failed)) {
  // What failed, and why: the failing tests' lines and the errors under them (the spec reporter's ✖ blocks), or the last lines.
  const lines = r.said.split('\n');
  const summary = lines.findIndex((l) => l.includes('✖ failing tests'));
  const first = summary >= 0 ? summary : lines.findIndex((l) => l.includes('✖'));
  const shown = (first >= 0 ? lines.slice(first) : lines.slice(-40)).slice(0, 80);
  console.log(`\n✖ ${r.file}${r.timedOut ? ` (killed after ${FILE_TIMEOUT_MS / 1000} s)` : ''}:\n${shown.map((l) => `  ${l}`).join('\n')}`);
}
const failedFiles = results.filter((r) => r.failed).map((r) => r.file);
// The lint, if it ran with the tests: its failure fails the run too, its output here.
const lint = checking ? await checking.lint : null;
if (lint && lint.code !== 0) console.log(`\n✖ ${lint.name} failed:\n${lint.said.split('\n').map((l) => `  ${l}`).join('\n')}`);
if (failedFiles.length) console.log(`failed files: ${failedFiles.join(', ')}`);
console.log(`tests: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
process.exit(sum('failed') > 0 || (lint && lint.code !== 0) ? 1 : 0);
