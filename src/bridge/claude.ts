// Claude Code processes as the bridge runs them: stream-json out, one typed
// message at a time (claude-stream.ts), and why the process ended.

import { spawn, type ChildProcess } from 'node:child_process';
import { readMessage, type ClaudeMessage } from './claude-stream.js';

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
 * (`claude exited (code): last stderr line`).
 */
export function startClaude(
  bin: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; stdin: boolean; track?: ChildTracker; what?: string },
  onMessage: (m: ClaudeMessage) => void,
  onClose: (why: string) => void,
  log: (line: string) => void,
): ClaudeProcess {
  const proc = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  if (proc.pid) opts.track?.started(proc, opts.what ?? 'claude');
  let buf = '';
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (!line) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        log(`unreadable line from claude (${(e as Error).message})`);
        continue;
      }
      const m = readMessage(raw);
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
