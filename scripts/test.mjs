#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (TypeScript via tsx).
// Usage: node scripts/test.mjs [filter-substring ...]
// A test file (a process) has 300 s: the real CLIs' suites take a few tens of
// seconds each test, more on a busy machine; a file that hangs fails then.
// In CI (CI=true) a suite whose environment is missing fails instead of skipping.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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
const r = spawnSync(
  process.execPath,
  // Password hashes at a test cost in every test process (test/support/scrypt-cost.ts; production code never lowers it).
  ['--import', 'tsx', '--import', './test/support/scrypt-cost.ts', '--test', '--test-reporter=spec', '--test-timeout=300000', `--test-concurrency=${process.env.ROOST_TEST_CONCURRENCY ?? 2}`, ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(r.status ?? 1);
