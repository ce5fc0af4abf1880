#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (TypeScript via tsx).
// Usage: node scripts/test.mjs [filter-substring ...]
//
// Each file is its own process (`node --import tsx <file>`, node:test running in
// it), as `node --test` would make it, but scheduled here:
// - Longest first: the time each file took in its last run on this checkout
//   (node_modules/.cache/roost-test-times.json, rewritten after every run), else
//   an estimate from its kind; the long files start first so the run does not
//   end waiting on one of them (longest-processing-time first).
// - More files at once than cores: a file mostly waits (on its servers, on
//   PostgreSQL, on a CLI or Chromium, on timers); measured in CPU time, a real
//   agent CLI's file takes about 10 s and a Chromium file about 13 s of CPU,
//   a light one 0.5 to 8 s (a sample: about 900 s for the suite), while
//   `node --test` at 2 files at once ran it in 910 s, 1,820 core-seconds.
//   Up to ROOST_TEST_CONCURRENCY (default 4) files run at once, of which at
//   most ROOST_TEST_HEAVY (default 3) heavy ones (*.browser.test.ts,
//   *.claude|codex|gemini.test.ts: a Chromium's memory, a CLI's start-up burst),
//   so one slot is always left to the light files. At most ROOST_TEST_PG_FILES
//   (default 3) PostgreSQL files (*.pg.*) at once, of the server's 100
//   connections: a test node's pool holds at most 4 (test/support/pg.ts), and
//   the file that opens the most, nodeloss.pg.browser's three nodes, peaks at
//   18 (storage.pg kept every contract test's store open to its end, about a
//   hundred connections, until each test closed its own: two files at once
//   ran the server out then, "sorry, too many clients already").
// - A file has 300 s (ROOST_TEST_FILE_TIMEOUT_S): the real CLIs' suites take a few tens of seconds each
//   test, more on a busy machine; a file that hangs is killed and fails then.
// - A file's output (the spec reporter's) is printed whole when it ends, so two
//   files never interleave. After the run: the slowest files, then one closing
//   line, "tests: N passed, N failed, N skipped" (CI reads it).
// In CI (CI=true) a suite whose environment is missing fails instead of skipping.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

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
const filters = process.argv.slice(2);
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
const queue = [...files].sort((a, b) => estimate(b) - estimate(a));

// Two reporters in each file's process: spec (its text, printed when the file
// ends) and scripts/timing-reporter.mjs (its counts, as JSON in a temp file).
const tmp = mkdtempSync(join(tmpdir(), 'roost-test-'));
const results = [];
let running = 0;
// The running files' process groups: killed with the runner (Ctrl-C, CI's timeout).
const groups = new Set();
function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {}
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const pid of groups) killGroup(pid);
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

// The search index's worker (src/storage/sqlite-search-host.ts): a worker that
// loads TypeScript through tsx costs about half a second of CPU to start, once
// per store a test opens. When dist/ was built after the last change to any
// source file (as `npm test` does first), the tests run its compiled worker.
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const distWorker = join(root, 'dist', 'src', 'storage', 'sqlite-search-worker.js');
try {
  if (statSync(join(root, 'dist', 'types', 'node.tsbuildinfo')).mtimeMs >= newest(join(root, 'src')) && statSync(distWorker).isFile()) process.env.ROOST_SEARCH_WORKER = distWorker;
} catch {
  // No build: the workers load the TypeScript.
}
if (!process.env.ROOST_SEARCH_WORKER) console.log('test: the search index workers load TypeScript (dist/ is older than src/, or missing)');

function runFile(file, n) {
  const json = join(tmp, `${n}.json`);
  const started = Date.now();
  const cpuFile = join(tmp, `${n}.cpu`);
  const node = [
    process.execPath,
    // Password hashes at a test cost in every test process (test/support/scrypt-cost.ts; production code never lowers it).
    '--import', 'tsx', '--import', './test/support/scrypt-cost.ts',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/timing-reporter.mjs', `--test-reporter-destination=${json}`,
    file,
  ];
  // Under a shell whose `times` then reports the CPU the file cost: its process
  // and everything it started and waited for (servers, CLIs, Chromium).
  const child = spawn(
    '/bin/sh',
    ['-c', 'c=0; "$@" || c=$?; times > "$0"; exit $c', cpuFile, ...node],
    // Its own process group, so a file that hangs is killed with everything it started (servers, Chromium, CLIs).
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  groups.add(child.pid);
  const out = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => out.push(d));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, FILE_TIMEOUT_MS);
  return new Promise((done) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      groups.delete(child.pid);
      const ms = Date.now() - started;
      let counts = { passed: 0, failed: 0, skipped: 0 };
      try {
        counts = JSON.parse(readFileSync(json, 'utf8'));
      } catch {}
      // `times`: the shell's own user and system time, then its children's ("1m2.5s 0m0.4s").
      let cpuMs = NaN;
      try {
        const sec = (x) => Number(x.split('m')[0]) * 60 + Number(x.split('m')[1].replace('s', ''));
        const [user, sys] = readFileSync(cpuFile, 'utf8').trim().split('\n')[1].trim().split(/\s+/);
        cpuMs = 1000 * (sec(user) + sec(sys));
      } catch {}
      // A file that fails outside any test (it does not load, a hook throws, it hangs) fails as one test.
      const failed = counts.failed || (code !== 0 || signal ? 1 : 0);
      process.stdout.write(`\n▶ ${file} (${(ms / 1000).toFixed(1)} s, CPU ${Number.isFinite(cpuMs) ? (cpuMs / 1000).toFixed(1) : '?'} s)\n`);
      for (const d of out) process.stdout.write(d);
      if (timedOut) process.stdout.write(`✖ ${file}: killed after ${FILE_TIMEOUT_MS / 1000} s\n`);
      else if (failed && !counts.failed) process.stdout.write(`✖ ${file}: exited ${signal ?? code} outside any test\n`);
      // A failed file's output is printed again at the end, where a truncated log still shows it.
      const said = failed ? Buffer.concat(out).toString('utf8') : '';
      results.push({ file, ms, cpuMs, passed: counts.passed, failed, skipped: counts.skipped, said, timedOut });
      done();
    });
  });
}

await new Promise((finish) => {
  let n = 0;
  const next = () => {
    while (running < SLOTS && queue.length > 0) {
      // The longest waiting file that fits: a heavy one only while a heavy slot is free, a PostgreSQL one while a PostgreSQL slot is.
      const i = queue.findIndex((f) => (runningHeavy < HEAVY_SLOTS || !heavy(f)) && (runningPg < PG_SLOTS || !onPg(f)));
      if (i < 0) break;
      const [file] = queue.splice(i, 1);
      const h = heavy(file);
      const p = onPg(file);
      running++;
      if (h) runningHeavy++;
      if (p) runningPg++;
      void runFile(file, n++).then(() => {
        running--;
        if (h) runningHeavy--;
        if (p) runningPg--;
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
if (failedFiles.length) console.log(`failed files: ${failedFiles.join(', ')}`);
console.log(`tests: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
process.exit(sum('failed') > 0 ? 1 : 0);
