// Processes as Linux's /proc shows them, for tests that check what keeps
// running after a process was killed (a zombie counts as gone: it has exited).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';

/** Whether /proc can be read (Linux). */
export const hasProc = () => existsSync('/proc/self/stat');

function stat(pid: number): { state: string; ppid: number } | null {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return { state: f[0], ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/** Whether `pid` runs (exists and is not a zombie). */
export function running(pid: number): boolean {
  const s = stat(pid);
  return s !== null && s.state !== 'Z';
}

/** The command line of `pid` (arguments joined by spaces), or ''. */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Every running process whose command line includes `text` (this one excluded), wherever it was re-parented. */
export function matching(text: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const pid = Number(name);
    if (running(pid) && cmdline(pid).includes(text)) out.push(pid);
  }
  return out;
}

/** The value of `name` in the environment of `pid` (readable for processes of the same uid), or null. */
export function environ(pid: number, name: string): string | null {
  try {
    const kv = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').find((x) => x.startsWith(name + '='));
    return kv === undefined ? null : kv.slice(name.length + 1);
  } catch {
    return null;
  }
}

/** Every running descendant of `pid`, with its command line. */
export function descendants(pid: number): { pid: number; cmd: string }[] {
  const kids = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (!s || s.state === 'Z') continue;
    kids.set(s.ppid, [...(kids.get(s.ppid) ?? []), Number(name)]);
  }
  const out: { pid: number; cmd: string }[] = [];
  const walk = (p: number) => {
    for (const k of kids.get(p) ?? []) {
      out.push({ pid: k, cmd: cmdline(k) });
      walk(k);
    }
  };
  walk(pid);
  return out;
}

/** What a vendor CLI run in JSON-lines mode came to. */
export interface JsonlRun {
  code: number | null;
  /** Its stdout lines that are JSON objects, parsed (a line that is not: `{unparsed}`). */
  events: any[];
  /** Its stdout lines that are not JSON. */
  other: string;
  stderr: string;
  ms: number;
}

/**
 * Runs a vendor CLI that prints JSON lines (`codex exec --json`, `gemini
 * --output-format stream-json`) with exactly `env` (plus PATH), killed with
 * SIGKILL after `timeoutMs`; resolves when it exits, never rejects.
 */
export function runJsonl(bin: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<JsonlRun> {
  const t0 = Date.now();
  return new Promise((ok) => {
    const c = spawn(bin, args, { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => c.kill('SIGKILL'), opts.timeoutMs);
    c.on('exit', (code) => {
      clearTimeout(kill);
      const lines = out.split('\n');
      const events = lines
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return { unparsed: l };
          }
        });
      ok({ code, events, other: lines.filter((l) => !l.startsWith('{')).join('\n'), stderr: err, ms: Date.now() - t0 });
    });
  });
}
