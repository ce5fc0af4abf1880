// The sessions the bridge runs: one long-lived Claude Code process each
// (`claude -p --input-format stream-json …`), started for a member's start
// request or as a standing agent, fed one prompt at a time, and ended with
// its worktree when the session closes.
//
// Invariants:
// - one prompt at a time per process: a board prompt or a Work command is
//   written only when the previous one's `result` came back; later board
//   prompts wait here in order (Work commands wait in the server's queue);
// - a start is idempotent: an id already on the board or already running is
//   skipped, and a spawn the server refuses (someone else's session by that
//   id) is closed at once;
// - a session's Claude Code id is ours from the start (`--session-id`, the
//   Work agent's key); a relaunch continues the same conversation
//   (`--resume`), and a crash that left the state file behind Claude Code's
//   own record is corrected once, quietly (see `launch`);
// - close ends the process (stdin closed, SIGTERM, SIGKILL after 3 s), then
//   every process carrying the session's tag (children.ts), before the
//   worktree is removed, and answers every approval still waiting with a
//   denial.

import { randomBytes, randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { readdir, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { oneLine, type Board, type StartAsk } from './board.js';
import { startClaude } from './claude.js';
import { TAG_VAR, endTagged, sessionTag } from './children.js';
import { SessionOutput, newUsage, noConversation, resultSummary, succeeded, unknownOutput, userMessage, type ModelFigures, type OutputSink, type ResultMessage } from './claude-stream.js';
import { addWorktree, mainRepoOf, removeWorktree, repoTop } from './git.js';
import type { BridgeState } from './state-file.js';

/** What a session's process is answering now. */
export type Inflight = { kind: 'board' } | { kind: 'work'; command: string; by: string; attempt: string };

export interface Run {
  /** The board session's id. */
  id: string;
  name: string;
  cwd: string;
  flavor: 'scoped' | 'plain';
  worktree: { top: string; path: string } | null;
  proc: ChildProcess | null;
  /** Claude Code's session id: given at launch (`--session-id`), kept on resume; the Work agent's key. */
  sid: string;
  /** Whether a prompt was ever written (a relaunch then resumes the conversation). */
  used: boolean;
  /** Where it runs (`pid N`): an observation, never identity. */
  pane: string;
  /** The standing agent's slot, or null for a session a member started. */
  slot: number | null;
  inflight: Inflight | null;
  /** Board prompts waiting for the one in flight. */
  pending: string[];
  /** The text in flight, and whether it was already written again after a launch in the wrong mode. */
  inflightText: string;
  rewritten: boolean;
  /** Claude Code said it has no such conversation: launch with `--session-id`, not `--resume`. */
  wrongMode: boolean;
  /** The text of the current prompt's last turn, for a Work result when Claude gives none. */
  lastText: string;
  /** Counters behind the board's idempotency keys: each post of a kind gets the next number. */
  turns: number;
  statuses: number;
  results: number;
  closing: boolean;
  /** Its process's output, read into turns, partial text and tool calls. */
  output: SessionOutput;
  /** The process's `modelUsage` as last reported (cumulative per process; cleared at each launch). */
  usageSeen: Map<string, ModelFigures>;
  /** Why the bridge is ending its process (output in a format it does not know): the reason its end reports. */
  stopWhy: string | null;
}

/** What the sessions need from the Work side (work-pump.ts). */
export interface WorkSide {
  /** The agent's facts changed (state, pane). */
  observe(run: Run): void;
  /** The agent ended with its session. */
  ended(run: Run, reason: string): void;
  /** Lossy terminal text of the agent. */
  terminal(run: Run, text: string): void;
  /** A turn of the command in flight that is not its last (`n`: the board's turn number). */
  output(command: string, n: number, text: string): void;
  /** The command in flight ended (reported, and kept until the server answers). */
  finish(run: Run, command: string, status: 'done' | 'failed', result: string): void;
  /** A process became free: a Work command may be due for it. */
  wake(): void;
}

/** What the sessions need from the approvals (approvals.ts). */
export interface ApprovalSide {
  /** Claude Code's environment for a session (`hookId` names it to the approval hook). */
  env(hookId: string): NodeJS.ProcessEnv;
  /** `--settings`: the PreToolUse hook that asks the bridge. */
  settings(): string;
  /** The session ends: every call still waiting is denied. */
  cancel(runId: string): void;
}

export interface RunsOptions {
  /** The Claude Code executable. */
  claude: string;
  /** The bridge's root (its real path) and its own folder inside it. */
  root: () => string;
  stateDir: string;
  log: (line: string) => void;
}

/** A path as members see it: the home folder as `~`. */
export function display(path: string): string {
  const home = homedir();
  return path === home || path.startsWith(home + sep) ? '~' + path.slice(home.length) : path;
}

export class Runs {
  private map = new Map<string, Run>();
  /** Set once the bridge stops: no new session starts. */
  stopped = false;

  constructor(
    private opts: RunsOptions,
    private board: Board,
    private state: BridgeState,
    private approvals: ApprovalSide,
    private work: WorkSide,
  ) {}

  get(id: string): Run | undefined {
    return this.map.get(id);
  }

  has(id: string): boolean {
    return this.map.has(id);
  }

  all(): Run[] {
    return [...this.map.values()];
  }

  bySid(sid: string): Run | undefined {
    for (const r of this.map.values()) if (r.sid === sid) return r;
    return undefined;
  }

  // ------------------------------------------------------------ starting

  /** Resolves a request's root inside the bridge's root, or says why not. */
  private async resolveRoot(asked: string): Promise<string | { error: string }> {
    const root = this.opts.root();
    let p = asked.trim();
    if (p === '~' || p.startsWith('~/')) p = join(homedir(), p.slice(1));
    const target = resolve(root, p || '.');
    let real: string;
    try {
      real = await realpath(target);
    } catch {
      return { error: `no folder ${asked || '.'} under the bridge's root` };
    }
    if (real !== root && !real.startsWith(root + sep)) return { error: `${asked} is outside the bridge's root` };
    const own = this.opts.stateDir;
    if (real === own || real.startsWith(own + sep)) return { error: `${asked} is the bridge's own folder` };
    return real;
  }

  private newRun(id: string, name: string, cwd: string, flavor: Run['flavor'], worktree: Run['worktree'], slot: number | null, sid: string = randomUUID(), used = false): Run {
    const run: Run = {
      id,
      name,
      cwd,
      flavor,
      worktree,
      proc: null,
      sid,
      used,
      pane: '',
      slot,
      inflight: null,
      pending: [],
      inflightText: '',
      rewritten: false,
      wrongMode: false,
      lastText: '',
      turns: 0,
      statuses: 0,
      results: 0,
      closing: false,
      output: null as unknown as SessionOutput, // set just below: the sink needs the run
      usageSeen: new Map(),
      stopWhy: null,
    };
    run.output = new SessionOutput(this.sinkFor(run));
    return run;
  }

  /** A member's start request: a scoped session gets a worktree; a request the bridge cannot run is refused with the reason. */
  async startAsked(ask: StartAsk): Promise<void> {
    const id = ask.id;
    if (this.map.has(id) || this.board.session(id) || this.stopped) return; // done before, or not ours to redo
    const refuse = (reason: string) => {
      this.opts.log(`refused ${id}: ${reason}`);
      return this.board.refuse(id, reason);
    };
    const where = await this.resolveRoot(ask.root);
    if (typeof where !== 'string') return void (await refuse(where.error));
    let cwd = where;
    let worktree: Run['worktree'] = null;
    if (ask.flavor === 'scoped') {
      const top = await repoTop(where);
      if (!top) return void (await refuse(`${display(where)} is not in a git repository; a scoped session needs one`));
      const path = join(this.opts.stateDir, 'worktrees', id);
      try {
        await addWorktree(top, path, `roost/${id}`);
      } catch (e) {
        return void (await refuse((e as Error).message));
      }
      worktree = { top, path };
      cwd = join(path, relative(top, where));
    }
    const run = this.newRun(id, ask.session, cwd, ask.flavor, worktree, null);
    await this.spawn(run, ask.by, display(where));
  }

  /** A standing agent: the same Claude Code session across restarts (resumed), a new board session each run. */
  async startStanding(slot: number, label: string, by: string): Promise<void> {
    const agents = (this.state.data.agents ??= []);
    const kept = agents[slot] ?? (agents[slot] = { sid: randomUUID(), used: false });
    const id = `a${slot + 1}-${randomBytes(3).toString('hex')}`;
    const root = this.opts.root();
    const run = this.newRun(id, label, root, 'plain', null, slot, kept.sid, kept.used);
    await this.spawn(run, by, display(root));
  }

  /** Starts the process, puts the session on the board and in Work. */
  private async spawn(run: Run, by: string, root: string): Promise<void> {
    this.map.set(run.id, run);
    this.launch(run);
    const r = await this.board.spawn(run, { flavor: run.flavor, root, worktree: run.worktree ? display(run.worktree.path) : '', by });
    if (r.status !== 200) {
      // Someone else's session by that id (another bridge on this thread?): not ours to run.
      await this.close(run, 'not started', false);
      return;
    }
    this.opts.log(`started ${run.id} (${run.flavor}, Claude Code session ${run.sid}) in ${run.cwd}`);
    this.board.status(run, 'idle', 'ready for a prompt');
  }

  private launch(run: Run): void {
    run.usageSeen = new Map();
    const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--settings', this.approvals.settings()];
    // The session id is ours from the start (the Work agent's key); a relaunch continues the same conversation.
    args.push(...(run.used ? ['--resume', run.sid] : ['--session-id', run.sid]));
    const c = startClaude(
      this.opts.claude,
      args,
      {
        cwd: run.cwd,
        env: { ...this.approvals.env(run.id), [TAG_VAR]: sessionTag(this.state.bridge, run.id) },
        stdin: true,
        track: this.state.tracker,
        what: `claude ${run.id}`,
        // Its output is in a format the bridge does not know: the process is ended (claude.ts), and its
        // end below says why (the board's status, the Work command in flight failed with the reason).
        onUnknown: (what) => {
          if (run.proc === c.proc) run.stopWhy = unknownOutput(what);
        },
      },
      (m) => run.output.read(m),
      (exited) => {
        if (run.proc !== c.proc) return;
        run.proc = null;
        const why = run.stopWhy ?? exited;
        run.stopWhy = null;
        if (run.closing) return;
        // Launched in the wrong mode (a crash can leave `used` behind the truth): the session
        // exists (`--session-id` refused) or does not (`--resume` found nothing). Once, quietly,
        // launch the other way and write what was in flight again.
        const exists = /is already in use/.test(why);
        if ((exists || run.wrongMode) && run.inflight && !run.rewritten) {
          run.used = exists;
          run.wrongMode = false;
          run.rewritten = true;
          this.opts.log(`${run.id}: ${exists ? 'the session exists: resuming it' : 'no such conversation yet: starting it'}`);
          this.launch(run);
          run.proc!.stdin!.write(userMessage(run.inflightText));
          void this.remember(run);
          return;
        }
        // It died on its own: the board says so; its Work agent stays (the next prompt resumes it), a close removes it.
        run.output.endTurn(true);
        this.opts.log(`${run.id}: ${why}`);
        this.board.status(run, 'dead', why);
        const was = run.inflight;
        run.inflight = null;
        if (was?.kind === 'work') this.work.finish(run, was.command, 'failed', why);
        this.work.observe(run);
        this.next(run);
      },
      (l) => this.opts.log(`${run.id}: ${l}`),
    );
    run.proc = c.proc;
    run.pane = c.proc.pid ? `pid ${c.proc.pid}` : run.pane;
    this.work.observe(run);
  }

  // ------------------------------------------------------------ prompts

  /** A board prompt: written now if the process is free, else after what is in flight. */
  prompt(run: Run, text: string): void {
    if (!text.trim() || run.closing) return;
    if (run.inflight) {
      run.pending.push(text);
      return;
    }
    run.inflight = { kind: 'board' };
    this.write(run, text, 'thinking');
  }

  /** Writes a prompt into the process (relaunching it if it died); `activity` is the status meanwhile. */
  write(run: Run, text: string, activity: string): void {
    if (!run.proc) this.launch(run);
    this.board.status(run, 'running', activity);
    run.lastText = '';
    run.used = true;
    run.inflightText = text;
    run.rewritten = false;
    void this.remember(run);
    run.proc!.stdin!.write(userMessage(text));
    this.work.observe(run);
  }

  /** What comes after a prompt's result: the next board prompt, else a due Work command. */
  next(run: Run): void {
    if (run.inflight || run.closing) return;
    const text = run.pending.shift();
    if (text !== undefined) {
      run.inflight = { kind: 'board' };
      this.write(run, text, 'thinking');
      return;
    }
    this.work.wake();
  }

  /**
   * A standing agent's facts in the state file (its session, whether it was
   * used, the command in flight); `now` writes it before returning.
   */
  async remember(run: Run, now = false): Promise<void> {
    if (run.slot === null || !this.state.data.agents?.[run.slot]) return;
    const a = this.state.data.agents[run.slot];
    a.used = run.used;
    if (run.inflight?.kind === 'work') {
      a.running = run.inflight.command;
      a.attempt = run.inflight.attempt;
    } else {
      delete a.running;
      delete a.attempt;
    }
    if (now) await this.state.save();
    else this.state.scheduleSave();
  }

  // ------------------------------------------------------------ the process's output

  /** What the session's output becomes: board posts, Work reports and terminal text. */
  private sinkFor(run: Run): OutputSink {
    return {
      toolCall: (name, digest, subagent) => {
        if (subagent) return this.board.status(run, 'running', `subagent: ${name} ${digest}`);
        this.board.status(run, 'running', `${name} ${digest}`);
        this.board.tool(run, name, digest);
        this.work.terminal(run, `> ${name} ${digest}\n`);
      },
      toolResult: (name, text, isError) => this.board.tool(run, name, (isError ? 'error: ' : '') + text),
      text: (text) => this.work.terminal(run, text + '\n'),
      partial: (text) => this.board.stream(run, text),
      turn: (text, final) => {
        const n = this.board.turn(run, text);
        if (text) run.lastText = text;
        const w = run.inflight;
        if (!final && text && w?.kind === 'work') this.work.output(w.command, n, text);
      },
      result: (m) => this.onResult(run, m),
    };
  }

  private onResult(run: Run, m: ResultMessage): void {
    if (noConversation(m) && !run.rewritten) {
      // `--resume` of a conversation Claude Code never saved: the process exits now, and is launched again (see launch).
      run.wrongMode = true;
      return;
    }
    this.board.result(run, resultSummary(m), { claude: run.sid, models: newUsage(run.usageSeen, m.models) });
    this.board.status(run, 'idle', 'ready for a prompt');
    const was = run.inflight;
    run.inflight = null;
    if (was?.kind === 'work') {
      const ok = succeeded(m);
      const text = m.result?.trim() ? m.result : run.lastText || (ok ? 'done' : `stopped (${m.subtype || 'error'})`);
      this.work.finish(run, was.command, ok ? 'done' : 'failed', text);
    } else void this.remember(run);
    this.work.observe(run);
    this.next(run);
  }

  // ------------------------------------------------------------ ending

  /** Removes the worktrees an earlier run left (their branches stay): no session of this process uses them. */
  async removeLeftoverWorktrees(): Promise<void> {
    const dir = join(this.opts.stateDir, 'worktrees');
    for (const id of await readdir(dir).catch(() => [] as string[])) {
      if (this.map.has(id)) continue;
      const path = join(dir, id);
      const top = await mainRepoOf(path);
      if (!top) continue;
      await removeWorktree(top, path).then(
        () => this.opts.log(`removed the worktree of ${id}, left from an earlier run`),
        (e) => this.opts.log(`could not remove ${path}: ${(e as Error).message}`),
      );
    }
  }

  /** Ends a session's process and removes its worktree; posts `session.end` when the bridge is the one ending it. */
  async close(run: Run, reason: string, post: boolean): Promise<void> {
    if (run.closing) return;
    run.closing = true;
    run.output.stop();
    this.approvals.cancel(run.id);
    const proc = run.proc;
    if (proc) {
      const exited = new Promise<void>((ok) => proc.once('close', () => ok()));
      proc.stdin!.end();
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    }
    // Everything the session started, however detached (a background job re-parented to init,
    // a tool that forks meanwhile), carries its tag: ended until none is left (children.ts).
    const swept = await endTagged({ session: sessionTag(this.state.bridge, run.id) });
    if (swept.ended) this.opts.log(`${run.id}: ended ${swept.ended} process(es) it left running (${swept.passes} pass(es), ${swept.ms} ms)`);
    if (swept.resisting.length) this.opts.log(`${run.id}: still running after ${swept.ms} ms, not ended: pid ${swept.resisting.join(', ')}`);
    // Its Work agent ends (a running execution fails with the reason; the chat stays). The
    // execution's end is reported first, and kept until answered: the agent-ended report
    // alone would be lost if the server is away, and a standing agent comes back.
    const was = run.inflight;
    run.inflight = null;
    if (was?.kind === 'work') this.work.finish(run, was.command, 'failed', `the agent ended (${oneLine(reason, 120)})`);
    else void this.remember(run);
    this.work.ended(run, reason);
    // Queued, not awaited: the worktree goes now, whether or not the server is there (stop bounds the posts).
    if (post) void this.board.end(run.id, run.name, reason);
    if (run.worktree) {
      await removeWorktree(run.worktree.top, run.worktree.path).then(
        () => this.opts.log(`removed the worktree of ${run.id}; branch roost/${run.id} stays`),
        (e) => this.opts.log(`could not remove the worktree of ${run.id}: ${(e as Error).message}`),
      );
    }
    this.map.delete(run.id);
    this.opts.log(`closed ${run.id} (${reason})`);
  }
}
