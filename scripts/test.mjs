#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (TypeScript via tsx).
// Usage: node scripts/test.mjs [filter-substring ...]
// A test file (a process) has 300 s: the real CLIs' suites take a few tens of
// seconds each test, more on a busy machine; a file that hangs fails then.
// In CI (CI=true) a suite whose environment is missing fails instead of skipping.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

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
// Two reporters: the spec reporter on the terminal, and one that times each file
// (scripts/timing-reporter.mjs). The slowest files are printed after the run, then
// one closing line, "N passed, N failed, N skipped", counted from the same events.
const timingFile = join(mkdtempSync(join(tmpdir(), 'roost-test-')), 'timing.json');
const r = spawnSync(
  process.execPath,
  // Password hashes at a test cost in every test process (test/support/scrypt-cost.ts; production code never lowers it).
  [
    '--import', 'tsx', '--import', './test/support/scrypt-cost.ts', '--test',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/timing-reporter.mjs', `--test-reporter-destination=${timingFile}`,
    '--test-timeout=300000', `--test-concurrency=${process.env.ROOST_TEST_CONCURRENCY ?? 2}`, ...files,
  ],
  { cwd: root, stdio: 'inherit' },
);
let timing;
try {
  timing = JSON.parse(readFileSync(timingFile, 'utf8'));
} catch {
  timing = undefined;
}
if (timing) {
  const rows = timing.files.sort((a, b) => b.ms - a.ms);
  const total = rows.reduce((s, f) => s + f.ms, 0);
  console.log(`\nper-file time (slowest ${Math.min(25, rows.length)} of ${rows.length}; sum ${(total / 1000).toFixed(0)} s over the run's concurrency):`);
  for (const f of rows.slice(0, 25)) {
    console.log(`  ${(f.ms / 1000).toFixed(1).padStart(7)} s  ${relative(root, f.file)}${f.failed ? `  (${f.failed} failed)` : ''}`);
  }
  console.log(`tests: ${timing.passed} passed, ${timing.failed} failed, ${timing.skipped} skipped`);
}
process.exit(r.status ?? 1);
