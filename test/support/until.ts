// Polling for tests that wait on something outside their control (a real CLI,
// a browser, another process): the first truthy value of `f`, or a failure
// naming what never came.
import { execFileSync } from 'node:child_process';

export async function until<T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms: number, everyMs = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs git in `cwd` and returns its trimmed output. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' }).trim();
}
