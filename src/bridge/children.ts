// The processes a bridge started, remembered in its state file so that a
// bridge that was killed (SIGKILL, a crash, the OOM killer) ends them at its
// next start instead of leaving them running.
//
// Why a record is needed: Claude Code does not exit when its stdin closes in
// the middle of a turn (checked with the real CLI: a SIGKILLed parent closes
// the pipe, and `claude -p --input-format stream-json` goes on with its turn,
// model calls and tools included), and the tools it runs (its Bash shell) sit
// in process groups of their own, so neither the pipe nor the bridge's
// process group takes them down. Node has no PR_SET_PDEATHSIG.
//
// Invariants:
// - a process is only signalled while it is the one recorded: same pid and
//   same start (on Linux the boot id and the start tick, elsewhere `ps`'s
//   start time), so a pid the system reused for something else is left alone;
// - the descendants of a recorded process are listed before anything is
//   signalled (once it dies they are re-parented and the link is lost), each
//   with its own start, and get the same treatment;
// - SIGTERM first, SIGKILL after the grace period to whatever still runs.
//
// Descendants are not enough: a background job (`(sleep 299 &)`) is
// re-parented to init and no longer descends from anything recorded. So every
// session's process is also started with a tag in its environment
// (ROOST_BRIDGE_TAG=<bridge id>:<session id>), which everything it starts
// inherits; `endTagged` ends every process whose /proc/<pid>/environ carries
// it, pass after pass until a pass finds nothing, so a tool that forks during
// the cleanup is caught by the next pass. Limits (docs/bridge.md): Linux
// only, processes of the bridge's own uid only, and a process that clears or
// replaces its environment is not found.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export interface ChildRecord {
  pid: number;
  /** When it started, as `startOf` says: with the pid, the process's identity. */
  start: string;
  /** What it is, for the log (`claude s-1`). */
  what: string;
}

interface Proc {
  ppid: number;
  start: string;
  /** A zombie has exited (only its parent has not collected it yet). */
  zombie: boolean;
}

const PROC = process.platform === 'linux';
let bootId: string | null = null;

function linuxBoot(): string {
  if (bootId === null) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootId = '';
    }
  }
  return bootId;
}

/** One process from /proc/<pid>/stat (fields after the command name, which may hold spaces and parentheses). */
function linuxProc(pid: number): Proc | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (start time in clock ticks since boot).
  return { ppid: Number(f[1]), start: `${linuxBoot()}:${f[19]}`, zombie: f[0] === 'Z' };
}

/** Every process: pid → parent, start, zombie. Empty where neither /proc nor `ps` can tell. */
function processTable(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  if (PROC) {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const p = linuxProc(Number(name));
      if (p) out.set(Number(name), p);
    }
    return out;
  }
  try {
    const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,lstart='], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    for (const line of text.split('\n')) {
      const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
      if (m) out.set(Number(m[1]), { ppid: Number(m[2]), start: m[4], zombie: m[3].startsWith('Z') });
    }
  } catch {
    // No `ps` (Windows): nothing can be told apart, so nothing is recorded or ended.
  }
  return out;
}

function lookup(pid: number): Proc | null {
  return PROC ? linuxProc(pid) : (processTable().get(pid) ?? null);
}

/** When process `pid` started (its identity with the pid), or null when it does not run or cannot be told. */
export function startOf(pid: number | undefined): string | null {
  if (!pid) return null;
  const p = lookup(pid);
  return p && !p.zombie ? p.start : null;
}

/** Whether the process recorded as `pid` + `start` still runs (not a reused pid, not a zombie). */
export function stillRuns(pid: number, start: string): boolean {
  return startOf(pid) === start;
}

/** The recorded processes that still run, and all their descendants, each with its start. */
function withDescendants(records: ChildRecord[]): { pid: number; start: string }[] {
  const table = processTable();
  const kids = new Map<number, number[]>();
  for (const [pid, p] of table) {
    const list = kids.get(p.ppid);
    if (list) list.push(pid);
    else kids.set(p.ppid, [pid]);
  }
  const out = new Map<number, string>();
  const walk = (pid: number) => {
    for (const k of kids.get(pid) ?? []) {
      const p = table.get(k)!;
      if (out.has(k) || p.zombie) continue;
      out.set(k, p.start);
      walk(k);
    }
  };
  for (const r of records) {
    const p = table.get(r.pid);
    if (!p || p.zombie || p.start !== r.start) continue; // gone, or the pid now belongs to another process
    out.set(r.pid, r.start);
    walk(r.pid);
  }
  return [...out].map(([pid, start]) => ({ pid, start }));
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Exited meanwhile.
  }
}

/**
 * Ends the recorded processes that still run, with everything they started:
 * SIGTERM, then SIGKILL after `graceMs` to those still running (each checked
 * against its start before every signal). Resolves with the recorded ones
 * that were still running, once everything is gone or killed.
 */
export async function endLeftovers(records: ChildRecord[], graceMs = 3000): Promise<ChildRecord[]> {
  const alive = records.filter((r) => Number.isInteger(r.pid) && r.pid > 1 && r.pid !== process.pid && typeof r.start === 'string' && stillRuns(r.pid, r.start));
  if (alive.length === 0) return [];
  let procs = withDescendants(alive);
  for (const p of procs) signal(p.pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while ((procs = procs.filter((p) => stillRuns(p.pid, p.start))).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  for (const p of procs) if (stillRuns(p.pid, p.start)) signal(p.pid, 'SIGKILL');
  // SIGKILL cannot be ignored; wait (briefly) until the kernel has taken them down.
  const gone = Date.now() + 2000;
  while ((procs = procs.filter((p) => stillRuns(p.pid, p.start))).length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
  return alive;
}

// ------------------------------------------------------------ tagged processes

/**
 * The environment variable every session's Claude Code process is started
 * with: `<bridge id>:<session id>`. Every process it starts inherits it,
 * re-parented background jobs included, so `/proc/<pid>/environ` names the
 * bridge and the session of everything a session left running, however it
 * was detached. Linux only (elsewhere only the recorded processes are ended).
 */
export const TAG_VAR = 'ROOST_BRIDGE_TAG';

/** The tag of one session of a bridge. */
export const sessionTag = (bridge: string, session: string) => `${bridge}:${session}`;

/** Which tags a sweep ends: one session's (`bridge:session`), or every session's of a bridge (`bridge:`). */
export type TagMatch = { session: string } | { bridge: string };

function tagOf(pid: number): string | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return null; // gone, or another user's (only the same uid can read it)
  }
  const key = `${TAG_VAR}=`;
  for (const kv of raw.split('\0')) if (kv.startsWith(key)) return kv.slice(key.length);
  return null;
}

function matches(tag: string, m: TagMatch): boolean {
  return 'session' in m ? tag === m.session : tag.startsWith(m.bridge + ':');
}

/** Every running process (not this one, not a zombie) whose environment carries a matching tag, with its start. */
export function tagged(m: TagMatch): { pid: number; start: string }[] {
  if (!PROC) return [];
  const out: { pid: number; start: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid || pid <= 1) continue;
    const tag = tagOf(pid);
    if (tag === null || !matches(tag, m)) continue;
    const p = linuxProc(pid);
    if (p && !p.zombie) out.push({ pid, start: p.start });
  }
  return out;
}

export interface Sweep {
  /** Processes signalled, all passes together. */
  ended: number;
  /** Passes that found something. */
  passes: number;
  ms: number;
  /** Still running when the time ran out (pids). */
  resisting: number[];
}

/**
 * Ends every process whose environment carries a matching tag, repeating
 * until a pass finds nothing, so a process that forks meanwhile cannot
 * escape: SIGTERM to all found (new ones included) for up to `graceMs`, then
 * SIGKILL to whatever still carries the tag, pass after pass, until none is
 * left or `limitMs` has gone by (what resists is returned, for the log).
 * Each process is checked against its start before it is signalled.
 */
export async function endTagged(m: TagMatch, graceMs = 2000, limitMs = 8000): Promise<Sweep> {
  const t0 = Date.now();
  const seen = new Set<number>();
  let passes = 0;
  const pass = (sig: NodeJS.Signals): number => {
    const found = tagged(m);
    if (found.length) passes++;
    for (const p of found) {
      if (!stillRuns(p.pid, p.start)) continue;
      seen.add(p.pid);
      signal(p.pid, sig);
    }
    return found.length;
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  if (pass('SIGTERM') === 0) return { ended: 0, passes: 0, ms: Date.now() - t0, resisting: [] };
  while (Date.now() - t0 < graceMs) {
    await pause(50);
    if (pass('SIGTERM') === 0) return { ended: seen.size, passes, ms: Date.now() - t0, resisting: [] };
  }
  while (Date.now() - t0 < limitMs) {
    if (pass('SIGKILL') === 0) return { ended: seen.size, passes, ms: Date.now() - t0, resisting: [] };
    await pause(20);
  }
  return { ended: seen.size, passes, ms: Date.now() - t0, resisting: tagged(m).map((p) => p.pid) };
}
