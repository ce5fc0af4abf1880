// What a test needs from its environment, and what to do when it is missing:
// locally a loud skip with the reason; in CI (CI=true) a failure, so a required
// suite can never silently not run.
import type { TestContext } from 'node:test';

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** Returns true when the test may go on; otherwise skips it (locally) or fails it (CI). */
export function need(t: TestContext, ok: boolean, reason: string): boolean {
  if (ok) return true;
  if (IN_CI) throw new Error(`required environment missing in CI: ${reason}`);
  console.warn(`\n*** SKIPPED: ${t.name}: ${reason} ***\n`);
  t.skip(reason);
  return false;
}

/**
 * Where tests write their screenshots: `test-results/` (ignored by git), or
 * `docs/img/` with ROOST_SCREENSHOTS=docs when the pictures in the docs should
 * be renewed. A test run never dirties the checkout by itself.
 */
export function screenshotDir(root: string): string {
  return process.env.ROOST_SCREENSHOTS === 'docs' ? `${root}/docs/img` : `${root}/test-results`;
}
