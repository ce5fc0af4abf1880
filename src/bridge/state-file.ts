// The bridge's state file, `--root/.roost-bridge/state.json`: what a
// restarted bridge needs to carry on where the last one stopped or died.
//
// - `bridge`: its identity, random once, the first part of every
//   Idempotency-Key it sends (docs/bridge.md, Idempotency keys);
// - `threads`: the last stream id handled, per project and thread (a
//   reconnect or a restart replays exactly what was missed);
// - `agents`: the standing agents' Claude Code sessions and the Work command
//   each runs (a crash reports it interrupted);
// - `reports`: Work reports that end an execution, until the server answered;
// - `owner` and `children`: the bridge process that wrote it and the Claude
//   Code processes it runs (children.ts), so the next start can tell a second
//   bridge from a dead one and end what a dead one left running; with
//   `bridge`, which every session's processes carry in their environment
//   (ROOST_BRIDGE_TAG), also whatever those started, however detached.
//
// Invariants:
// - writes are whole-file (a temp file renamed over the old one) and chained,
//   one at a time, so the file is always one complete state and the last
//   state wins;
// - one bridge per root: `load` takes the root's lock (root-lock.ts) and
//   checks the recorded owner before anything else is touched, and refuses
//   to start when either says another bridge runs.

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildTracker } from './claude.js';
import { endLeftovers, endTagged, startOf, stillRuns, type ChildRecord } from './children.js';
import { lockRoot, type RootLock } from './root-lock.js';

export interface StateFile {
  bridge: string;
  threads: Record<string, { lastEventId?: string }>;
  /** Standing agents by slot: their Claude Code session, and the Work command in flight (for a crash). */
  agents?: StandingAgent[];
  /**
   * Work reports that end an execution (`finished`, or the interrupted report
   * of a crash) not yet answered definitively: kept until the server answers
   * (2xx or a 4xx), re-sent with the same key at the next start.
   */
  reports?: EndReport[];
  /** The bridge process that wrote this file, and the Claude Code processes it runs now (ended at the next start if it dies: children.ts). */
  owner?: { pid: number; start: string };
  children?: ChildRecord[];
}

export interface StandingAgent {
  sid: string;
  used: boolean;
  /** The Work command it runs, and which attempt (a crash reports this one interrupted). */
  running?: string;
  attempt?: string;
}

export interface EndReport {
  command: string;
  key: string;
  status: 'done' | 'failed';
  result: string;
}

export class BridgeState {
  data: StateFile = { bridge: '', threads: {} };
  private readonly file: string;
  private saveTimer: NodeJS.Timeout | null = null;
  /** Once stopped, only `save` writes (the final save writes everything). */
  private stopped = false;
  /** Saves are chained: one temp file, one rename at a time, the last state wins. */
  private saving: Promise<void> = Promise.resolve();
  /** Held from `load` to `release` (root-lock.ts). */
  private rootLock: RootLock | null = null;

  constructor(
    dir: string,
    private log: (line: string) => void,
  ) {
    this.file = join(dir, 'state.json');
  }

  /** The bridge's identity (the first part of its Idempotency-Keys). */
  get bridge(): string {
    return this.data.bridge;
  }

  /** An Idempotency-Key from stable facts: `<bridge>:<parts…>`. */
  key(...parts: (string | number)[]): string {
    return [this.data.bridge, ...parts].join(':');
  }

  /**
   * Reads the file (a first run gets a new identity) and takes the root:
   * throws when another bridge holds it or the recorded owner still runs.
   */
  async load(rootReal: string): Promise<void> {
    try {
      const j = JSON.parse(await readFile(this.file, 'utf8')) as StateFile;
      if (typeof j.bridge === 'string' && j.bridge)
        this.data = {
          bridge: j.bridge,
          threads: j.threads ?? {},
          agents: Array.isArray(j.agents) ? j.agents : [],
          reports: Array.isArray(j.reports) ? j.reports : [],
          owner: j.owner,
          children: Array.isArray(j.children) ? j.children : [],
        };
    } catch {
      // First run (or an unreadable file): a new identity, starting from a snapshot.
    }
    // One bridge per root: the state file, the worktrees and the standing agents' sessions are
    // this folder's, and a second bridge would reset them under the first one's feet.
    const owner = this.data.owner;
    const ownerRuns = !!owner && owner.pid !== process.pid && stillRuns(owner.pid, owner.start);
    const lock = await lockRoot(rootReal);
    if (!lock || ownerRuns) {
      await lock?.release();
      throw new Error(`another bridge${ownerRuns ? ` (pid ${owner.pid})` : ''} runs with --root ${rootReal}: stop it first, or give this one another root (one bridge per root)`);
    }
    this.rootLock = lock;
    if (!this.data.bridge) this.data.bridge = 'b' + randomBytes(5).toString('hex');
    await this.save();
  }

  /**
   * A bridge that was killed (SIGKILL, a crash) leaves its Claude Code
   * processes running: they do not exit when their stdin closes mid-turn.
   * The file names them (pid and start, so a reused pid is left alone); end
   * them, and what they started, before anything else: a standing session is
   * about to be resumed, and its old process would still be writing to the
   * same conversation. Then this process is the owner.
   */
  async endLeftovers(): Promise<void> {
    const left = this.data.children ?? [];
    // The bridge that wrote the file no longer runs (load refuses to start otherwise).
    if (left.length) {
      const ended = await endLeftovers(left);
      if (ended.length) this.log(`ended ${ended.length} Claude Code process(es) the previous bridge left running (${ended.map((c) => `${c.what}, pid ${c.pid}`).join('; ')})`);
    }
    // And whatever the sessions started, however detached: it carries this bridge's tag.
    await this.endTagged('the previous bridge left running');
    const me = startOf(process.pid);
    this.data.owner = me ? { pid: process.pid, start: me } : undefined;
    this.data.children = [];
    await this.save();
  }

  /**
   * Ends every process carrying a tag of this bridge (any session's, children.ts),
   * until none is left or the time runs out, and says so in the log.
   */
  async endTagged(what: string): Promise<void> {
    if (!this.data.bridge) return;
    const swept = await endTagged({ bridge: this.data.bridge });
    if (swept.ended) this.log(`ended ${swept.ended} process(es) ${what} (${swept.passes} pass(es), ${swept.ms} ms)`);
    if (swept.resisting.length) this.log(`still running after ${swept.ms} ms, not ended: pid ${swept.resisting.join(', ')}`);
  }

  /** Records each Claude Code process this bridge starts until it ends (written at once: a kill may come any moment). */
  readonly tracker: ChildTracker = {
    started: (proc: ChildProcess, what: string) => {
      const start = startOf(proc.pid);
      if (!start || !proc.pid) return;
      (this.data.children ??= []).push({ pid: proc.pid, start, what });
      void this.save().catch((e) => this.log(`saving the bridge state failed: ${(e as Error).message}`));
    },
    ended: (proc: ChildProcess) => {
      const before = this.data.children?.length ?? 0;
      this.data.children = (this.data.children ?? []).filter((c) => c.pid !== proc.pid);
      if (this.data.children.length !== before) this.scheduleSave();
    },
  };

  save(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    const write = async () => {
      await writeFile(tmp, JSON.stringify(this.data, null, 2));
      await rename(tmp, this.file);
    };
    this.saving = this.saving.then(write, write);
    return this.saving;
  }

  /** A save soon (changes in a burst are written once). */
  scheduleSave(): void {
    // Once stopping, the final save in stop() writes everything.
    if (this.saveTimer || this.stopped) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.save().catch((e) => this.log(`saving the bridge state failed: ${(e as Error).message}`));
    }, 100);
  }

  /** No more scheduled saves from now on: `saveLast` writes everything. */
  stopSaving(): void {
    this.stopped = true;
  }

  /** A failed start: nothing more is written (the root may go to another bridge at once). */
  abandon(): void {
    this.stopped = true;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
  }

  /** The last save: a save still scheduled is folded into it. */
  saveLast(): Promise<void> {
    this.stopped = true;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    return this.save();
  }

  /** Frees the root for the next bridge. */
  async release(): Promise<void> {
    await this.rootLock?.release();
    this.rootLock = null;
  }
}
