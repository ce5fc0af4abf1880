// Claude Code processes as the bridge runs them: stream-json out, one typed
// message at a time (claude-stream.ts), and why the process ended.

import { spawn, type ChildProcess } from 'node:child_process';
import { readLine, type ClaudeMessage } from './claude-stream.js';

export interface ClaudeProcess {
  proc: ChildProcess;
  /** The last lines of its stderr (for the reason it exited). */
  stderr(): string;
}

/** Hears the processes the bridge starts and their ends (the bridge records them for a restart after a crash: children.ts). */
export interface ChildTracker {
  started(proc: ChildProcess, what: string): void;
  ended(proc: ChildProcess): void;
}

/**
 * Starts `claude` with `args` in `cwd`; `onMessage` gets every stream-json
 * line it can read (claude-stream.ts), `onClose` the reason it ended
 * (`claude exited (code): last stderr line`). A line in a format the bridge
 * does not know goes to `opts.onUnknown` (what it was), and then the process
 * is ended (SIGTERM, SIGKILL after 3 s) and nothing more it prints is read:
 * its work stops visibly instead of going on half understood.
 */
export function startClaude(
  bin: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; stdin: boolean; track?: ChildTracker; what?: string; onUnknown: (what: string) => void },
  onMessage: (m: ClaudeMessage) => void,
  onClose: (why: string) => void,
  log: (line: string) => void,
): ClaudeProcess {
  const proc = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  if (proc.pid) opts.track?.started(proc, opts.what ?? 'claude');
  let buf = '';
  let stopped = false;
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (d: string) => {
    if (stopped) return;
    buf += d;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (!line) continue;
      const m = readLine(line);
      if (m && 'unknown' in m) {
        stopped = true;
        buf = '';
        log(`output the bridge does not know: ${m.unknown}; ending the process`);
        opts.onUnknown(m.unknown);
        proc.kill('SIGTERM');
        setTimeout(() => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
        }, 3000).unref();
        return;
      }
      if (m) onMessage(m);
    }
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err = (err + d).slice(-2000)));
  proc.stdin?.on('error', () => undefined); // a dead process's pipe; its exit is handled below
  proc.on('error', (e) => (err += e.message));
  proc.on('close', (code, signal) => {
    opts.track?.ended(proc);
    onClose(`claude exited (${signal ?? code})${err.trim() ? ': ' + err.trim().split('\n').slice(-1)[0] : ''}`);
  });
  return { proc, stderr: () => err };
}
