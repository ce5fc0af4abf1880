// The command hook's spool of denials made on its own (bin/roost-hook.js):
// what waits in it, and an end to the detached reporter a test started (it
// would otherwise keep trying an address that is gone for its 15 minutes).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The spool folder of hooks run with HOME=`home` (and no ROOST_HOOK_SPOOL). */
export function spoolOf(home: string): string {
  return join(home, '.roost', 'hook-reports');
}

/** The reports waiting in a spool folder. */
export function spooled(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
}

/** Ends the reporter holding the spool's lock, if one runs (by its pid: a process this test started). */
export function endReporter(dir: string): void {
  try {
    const pid = Number(readFileSync(join(dir, '.reporter.lock'), 'utf8'));
    if (pid > 1) process.kill(pid, 'SIGTERM');
  } catch {}
}
