// Bringing a server process up: a free port to give it, and the wait until it
// answers. One copy for the tests (support/server.ts), the bench and the
// scripts; it imports node builtins only, so a small bench process that loads
// it loads nothing of Roost.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A port nobody listens on now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}

export interface WaitOptions {
  /** The path that answers 2xx once the server is up (`/health`; the bare baseline answers on `/`). */
  path?: string;
  /** How long it may take. A loaded 2-core machine takes 20 s and more to start a Roost server. */
  timeoutMs?: number;
  /** How long to wait between two tries. */
  everyMs?: number;
  /** What the process printed, for the error when it exits or never answers. */
  log?: () => string;
}

/**
 * Waits until `url + path` answers 2xx. Throws if the process exits first, or
 * when the time is up; then the process is killed, so that a failed start does
 * not leave a server running that holds the caller open.
 */
export async function waitHealthy(url: string, proc: ChildProcess, opts: WaitOptions = {}): Promise<void> {
  const { path = '/health', timeoutMs = 60_000, everyMs = 50, log = () => '' } = opts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`the server exited early (${proc.exitCode ?? proc.signalCode}): ${log()}`);
    try {
      const r = await fetch(url + path, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return;
    } catch {}
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${url} did not come up in ${timeoutMs / 1000} s: ${log()}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
