// The entry of one test process of scripts/test.mjs: it runs the test files
// named on its command line one after another in this one process (node:test
// in-process, as `node <file>` runs one), so they share its start-up and the
// modules they import (src/ through tsx), which is most of a small file's CPU.
// A file is imported only when the one before it has finished: after each file
// a do-nothing test on the root (`test()` there runs one top-level test at a
// time, in order) resolves only when the file's tests have all ended; the
// runner's reporter (scripts/test-reporter.mjs) drops it from the counts and
// takes the end of it as the end of the file. A line on stdout marks where each
// file starts and ends, so the runner can tell whose console output is whose,
// which file was running when the process died, and which never started.
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

export const MARK = '\u0001roost-test';
for (const file of process.argv.slice(2)) {
  process.stdout.write(`\n${MARK} start ${file}\n`);
  await import(pathToFileURL(resolve(file)).href);
  await test(`${MARK} end of ${file}`, () => {});
  process.stdout.write(`\n${MARK} end ${file}\n`);
}
