// The workstation bridge: runs on a member's machine, connects out to a Roost
// server, and is that member's Space (docs/bridge.md, docs/work.md). It runs
// Claude Code sessions: the ones members start from a board thread, and
// `--agents N` standing ones of its own; every one is both a board session
// and a Work agent keyed by its Claude Code session id.
//
// What flows where:
// - in, on the thread's stream (exact replay after a reconnect): the members'
//   `request.start`, `session.prompt`, `session.end` and approval decisions;
// - in, on the Space's command feed: the Work commands due now (the head of
//   each idle agent's queue, as the server orders them);
// - out, as posts with an Idempotency-Key derived from stable facts (session
//   id + turn number, + status sequence, + approval rid; command id + event):
//   the board's `session.*` events and Work's observations and executions;
// - lossy, never stored: `session.tool`/`session.stream` frames and the Work
//   terminal.
//
// This file wires the parts together and runs the start and the stop; each
// job is in its own file:
//   state-file.ts     the state file, the root's lock, the processes recorded for a crash
//   board.ts          the thread's stream in, the board's posts out
//   runs.ts           the sessions' Claude Code processes, one prompt at a time
//   claude-stream.ts  Claude Code's stream-json output, typed, read into turns
//   approvals.ts      the PreToolUse hook and the decisions from the board
//   work-pump.ts      the sessions as Work agents: reports and due commands
//   work.ts, hands.ts the Space's wire, and hand-started sessions
//
// Invariants of the whole (each part states its own):
// - a restarted bridge runs nothing of the board's from before: every session
//   still open on the board is ended with the reason `bridge restarted`, and
//   worktrees left behind are removed. Its standing agents resume their
//   Claude Code sessions, so their Work agents (and chats) stay the same;
// - before any of that, whatever a killed predecessor left running is ended
//   (state-file.ts), so an old process never writes into a resumed session;
// - every process a session starts carries the session's tag in its
//   environment (children.ts); a close, a stop and the next start after a
//   crash end everything carrying it, repeating until nothing is left;
// - a stop ends every session at once (processes, worktrees) and gives the
//   posts that say so a bounded time, so it never waits on an unreachable server.

import { mkdir, realpath } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { Approvals } from './approvals.js';
import { Board, closedReason } from './board.js';
import { TAG_VAR, sessionTag } from './children.js';
import { BoardClient, Connection } from './client.js';
import { excludeLocally, repoTop } from './git.js';
import { HandStarted } from './hands.js';
import { Runs } from './runs.js';
import { BridgeState } from './state-file.js';
import { WorkPump } from './work-pump.js';
import { SpaceLink } from './work.js';

export interface BridgeOptions {
  server: string;
  token?: string;
  /** The thread's project (shared mode), when the token does not imply it. */
  project?: string;
  /** The folder sessions run in (plain) or branch from (scoped). */
  root: string;
  thread: string;
  /** The label the bridge posts under. */
  name: string;
  /** The Claude Code executable. */
  claude: string;
  /** Which tools need a member's approval (see needsApproval); the default spares read-only tools. */
  approvals: string;
  /** How long a pending approval waits before it counts as denied. */
  windowMs: number;
  /** The Space's name in Work (default: the host name). */
  space?: string;
  /** Contribute the Space to `project` (or `default`) at start. */
  contribute?: boolean;
  /** Standing sessions the bridge runs itself (Work agents from the start; default 0). */
  agents?: number;
  /** Listen on 127.0.0.1:<port> (0: any) for hook events of hand-started sessions. */
  hooksPort?: number;
  /** The environment Claude Code runs in (default: this process's, without ROOST_TOKEN). */
  env?: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** Tools that only read: they run without asking under the default rules. */
export const READ_ONLY_TOOLS = ['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'TodoWrite', 'TaskList', 'TaskGet', 'TaskOutput'];
export const DEFAULT_APPROVALS = `(?!(?:${READ_ONLY_TOOLS.join('|')})$).*`;

const STATE_DIR = '.roost-bridge';

export class Bridge {
  private conn: Connection;
  private state: BridgeState;
  private board: Board;
  private approvals: Approvals;
  private runs: Runs;
  private pump: WorkPump;
  private stateDir: string;
  private rootReal = '';
  private following: Promise<void> | null = null;
  private stopped = false;
  /**
   * Resolves once the first frame of the stream (a snapshot) has been handled,
   * or, resuming with Last-Event-ID, once the stream is connected.
   */
  ready: Promise<void>;
  private markReady!: () => void;

  constructor(private opts: BridgeOptions) {
    this.conn = new Connection({ server: opts.server, token: opts.token, project: opts.project, name: opts.name, log: opts.log, approvalWindowMs: opts.windowMs });
    this.stateDir = join(resolve(opts.root), STATE_DIR);
    this.state = new BridgeState(this.stateDir, opts.log);
    // Where the stream position is kept in the state file: one per project and thread.
    const streamKey = opts.project ? `${opts.project}/${opts.thread}` : opts.thread;
    this.board = new Board(new BoardClient(this.conn, opts.thread), this.state, streamKey, opts.log);
    this.pump = new WorkPump(this.state, opts.log);
    this.approvals = new Approvals({ rules: opts.approvals, windowMs: opts.windowMs, thread: opts.thread, name: opts.name, env: opts.env }, this.board, { get: (id) => this.runs.get(id) }, () => this.pump.link);
    this.runs = new Runs({ claude: opts.claude, root: () => this.rootReal, stateDir: this.stateDir, log: opts.log }, this.board, this.state, this.approvals, this.pump);
    this.pump.attach(this.runs);
    this.ready = new Promise((r) => (this.markReady = r));
  }

  /** The Space in Work (null when the server has none). */
  get work(): SpaceLink | null {
    return this.pump.link;
  }

  /** Hand-started sessions (with `hooksPort`). */
  get hands(): HandStarted | null {
    return this.pump.hands;
  }

  /** The Space's name in Work. */
  get spaceName(): string {
    return (this.opts.space || hostname()).slice(0, 100);
  }

  // ------------------------------------------------------------ lifecycle

  async start(): Promise<void> {
    try {
      await this.begin();
    } catch (e) {
      // A start that fails leaves nothing behind: no listener, no connection, and the root
      // free for the next bridge (in this process too).
      this.stopped = true;
      this.runs.stopped = true;
      this.conn.close();
      this.state.abandon();
      await this.approvals.close();
      await this.state.release();
      throw e;
    }
  }

  private async begin(): Promise<void> {
    this.rootReal = await realpath(resolve(this.opts.root));
    await mkdir(join(this.stateDir, 'worktrees'), { recursive: true });
    const top = await repoTop(this.rootReal);
    if (top) await excludeLocally(top, `/${relative(top, this.stateDir).split(sep).join('/')}/`);
    await this.state.load(this.rootReal);
    await this.state.endLeftovers();
    await this.approvals.listen();

    // The Space first: registered under its name's key, so a restart finds the same one.
    const work = new SpaceLink({
      conn: this.conn,
      name: this.spaceName,
      project: this.opts.project ?? (this.opts.contribute ? 'default' : undefined),
      contribute: this.opts.contribute,
      log: this.opts.log,
      observations: () => this.pump.observations(),
      onDue: (c) => this.pump.onDue(c),
    });
    if (await work.register()) this.pump.link = work;
    this.pump.interrupted();
    await this.state.save();
    await this.pump.resend();

    // Reconcile the board before following: whatever is open there, this fresh
    // process does not run it. End it with a reason rather than leave it "running".
    for (const s of await this.board.read()) {
      this.opts.log(`ending ${s.id}: this bridge no longer runs it`);
      await this.board.end(s.id, s.name, 'bridge restarted');
    }
    await this.runs.removeLeftoverWorktrees();
    for (let i = 0; i < (this.opts.agents ?? 0); i++) await this.runs.startStanding(i, `${this.spaceName} #${i + 1}`, this.opts.name);
    await this.state.save();

    if (this.pump.link && this.opts.hooksPort !== undefined) {
      const hands = new HandStarted({
        space: this.pump.link,
        claude: this.opts.claude,
        env: (hookId) => ({ ...this.approvals.env(hookId), [TAG_VAR]: sessionTag(this.state.bridge, hookId) }),
        settings: this.approvals.settings(),
        isOurs: (sid) => this.runs.bySid(sid) !== undefined,
        wake: () => this.pump.wake(),
        log: this.opts.log,
        track: this.state.tracker,
      });
      this.opts.log(`hand-started sessions: point their hooks at ${await hands.listen(this.opts.hooksPort)}`);
      this.pump.hands = hands;
    }
    this.pump.link?.start();
    this.following = this.board.follow(
      {
        start: (ask) => this.runs.startAsked(ask),
        prompt: (id, text) => {
          const run = this.runs.get(id);
          if (run) this.runs.prompt(run, text);
        },
        ended: async (id, reason) => {
          // A member closed it (or our own end came back): stop the process, remove the worktree.
          const run = this.runs.get(id);
          if (run) await this.runs.close(run, reason, false);
        },
        replaced: async () => {
          // After a reset, whatever ended while we were away ends here too.
          for (const run of this.runs.all()) {
            const s = this.board.session(run.id);
            if (!s || s.state === 'ended') await this.runs.close(run, closedReason(s?.reason), false);
          }
          this.approvals.settle();
        },
        decided: () => this.approvals.settle(),
        caughtUp: () => this.markReady(),
      },
      this.conn.server,
    );
  }

  /**
   * Ends every session (posting `session.end` with `reason`), stops following
   * and saves the position. The local part (processes, worktrees) is done at
   * once; the posts then get `postsMs` to reach the server, and whatever is
   * not answered by then is dropped (a finished report stays in the state
   * file for the next start), so a stop never waits on an unreachable server.
   */
  async stop(reason = 'bridge stopped', postsMs = 5000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.runs.stopped = true;
    this.state.stopSaving();
    try {
      await Promise.all(this.runs.all().map((r) => this.runs.close(r, reason, true)));
      await this.pump.hands?.stop(reason);
      // Each close ended what its session started; this catches anything else of this bridge's.
      await this.state.endTagged('still running at the stop');
      let timer: NodeJS.Timeout | null = null;
      await Promise.race([this.conn.drain(), new Promise((r) => (timer = setTimeout(r, postsMs)))]);
      if (timer) clearTimeout(timer);
      this.conn.close();
      await this.following?.catch(() => undefined);
      await this.pump.link?.stopped();
      await this.approvals.close();
      await this.state.saveLast();
    } finally {
      await this.state.release();
    }
  }
}
