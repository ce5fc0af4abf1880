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
// Invariants:
// - a board frame is handled completely (a session started, a prompt written
//   to its process) before the next one, and the stream position is saved
//   only after that, so a crash replays at most the frame in hand; every
//   action is idempotent (a start whose id is on the board or running is skipped);
// - one prompt at a time per process: a board prompt or a Work command is
//   written only when the previous one's `result` came back; later ones wait
//   in order (board prompts here, Work commands in the server's queue);
// - a Work command is written only after the server accepted its `started`
//   (it refuses a second start), so a reconnect or a restart never runs a
//   command twice;
// - approvals fail closed: a tool call that needs approval runs only if the
//   first decision in the thread's log allows it; no decision in the window,
//   an ended session, an unreachable bridge or a hook error all deny;
// - a restarted bridge runs nothing of the board's from before: every session
//   still open on the board is ended with the reason `bridge restarted`, and
//   worktrees left behind are removed. Its standing agents resume their
//   Claude Code sessions, so their Work agents (and chats) stay the same.

import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdir, readdir, readFile, realpath, rename, writeFile } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { digestInput, needsApproval } from '../core/approvals.js';
import { emptySessions, reduceSessions, type Session, type SessionsState } from '../core/fleet.js';
import { formatWindow } from '../core/window.js';
import { startClaude, succeeded, userMessage, type ChildTracker } from './claude.js';
import { endLeftovers, startOf, stillRuns, type ChildRecord } from './children.js';
import { BoardClient, Connection, type SseFrame } from './client.js';
import { addWorktree, excludeLocally, mainRepoOf, removeWorktree, repoTop } from './git.js';
import { HandStarted } from './hands.js';
import { lockRoot, type RootLock } from './root-lock.js';
import { SpaceLink, type DueCommand, type Observation } from './work.js';

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

interface Turn {
  msgId: string;
  texts: string[];
}

/** What a session's process is answering now. */
type Inflight = { kind: 'board' } | { kind: 'work'; command: string; by: string; attempt: string };

interface Run {
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
  /** The text of the current turn, for a Work result when Claude gives none. */
  lastText: string;
  /** Counters behind the idempotency keys: each post of a kind gets the next number. */
  turns: number;
  statuses: number;
  results: number;
  turn: Turn | null;
  closing: boolean;
  /** Tool names by tool_use_id (for the lossy result frames). */
  tools: Map<string, string>;
  /** Partial text not yet relayed, and the timer that relays it. */
  partial: string;
  partialTimer: NodeJS.Timeout | null;
  waiting: Map<string, (outcome: { state: 'allowed' | 'denied'; by: string } | null) => void>;
}

interface StateFile {
  bridge: string;
  threads: Record<string, { lastEventId?: string }>;
  /** Standing agents by slot: their Claude Code session, and the Work command in flight (for a crash). */
  agents?: { sid: string; used: boolean; running?: string; attempt?: string }[];
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

interface EndReport {
  command: string;
  key: string;
  status: 'done' | 'failed';
  result: string;
}

const oneLine = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
};

/** The hook Claude Code runs before every tool call: asks the bridge, and denies on any failure. */
export function hookCommand(timeoutMs: number): string {
  const code = [
    'const http=require("http");let raw="";',
    'const deny=(r)=>{process.stdout.write(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"deny",permissionDecisionReason:r}}));process.exit(0)};',
    'process.stdin.on("data",(d)=>raw+=d);process.stdin.on("end",()=>{const u=process.env.ROOST_BRIDGE_HOOK_URL;if(!u)deny("no Roost bridge to ask: denied");',
    'const q=http.request(u,{method:"POST",headers:{"content-type":"application/json"}},(res)=>{let b="";res.on("data",(d)=>b+=d);res.on("end",()=>{',
    'try{const j=JSON.parse(b);if(res.statusCode===200&&j.hookSpecificOutput){process.stdout.write(b);process.exit(0)}}catch(e){}',
    'deny("the Roost bridge gave no decision: denied")})});',
    'q.on("error",(e)=>deny("the Roost bridge could not be reached ("+e.message+"): denied"));',
    `q.setTimeout(${timeoutMs},()=>q.destroy(new Error("no answer in time")));q.end(raw)})`,
  ].join('');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `${q(process.execPath)} -e ${q(code)}`;
}

function answer(decision: 'allow' | 'deny', reason: string) {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } };
}


export class Bridge {
  private conn: Connection;
  private client: BoardClient;
  /** The Space in Work (null when the server has none). */
  work: SpaceLink | null = null;
  /** Hand-started sessions (with `hooksPort`). */
  hands: HandStarted | null = null;
  private board: SessionsState = emptySessions();
  private runs = new Map<string, Run>();
  private state: StateFile = { bridge: '', threads: {} };
  private stateDir: string;
  private saveTimer: NodeJS.Timeout | null = null;
  private hookServer: Server | null = null;
  private hookUrl = '';
  private secret = randomBytes(16).toString('hex');
  private following: Promise<void> | null = null;
  private stopped = false;
  private rootReal = '';
  /** Held from the start to the end of `stop` (src/bridge/root-lock.ts). */
  private rootLock: RootLock | null = null;
  /** The due Work commands as the feed last sent them, and those this process already tried to start. */
  private due: DueCommand[] = [];
  private tried = new Set<string>();
  private pumping: Promise<void> = Promise.resolve();
  /**
   * Resolves once the first frame of the stream (a snapshot) has been handled,
   * or, resuming with Last-Event-ID, once the stream is connected.
   */
  ready: Promise<void>;
  private markReady!: () => void;

  constructor(private opts: BridgeOptions) {
    this.conn = new Connection({ server: opts.server, token: opts.token, project: opts.project, name: opts.name, log: opts.log });
    this.client = new BoardClient(this.conn, opts.thread);
    this.stateDir = join(resolve(opts.root), STATE_DIR);
    this.ready = new Promise((r) => (this.markReady = r));
  }

  /** Where the stream position is kept in the state file: one per project and thread. */
  private get streamKey(): string {
    return this.opts.project ? `${this.opts.project}/${this.opts.thread}` : this.opts.thread;
  }

  private key(...parts: (string | number)[]): string {
    return [this.state.bridge, ...parts].join(':');
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
      this.conn.close();
      if (this.saveTimer) clearTimeout(this.saveTimer);
      await this.closeHookServer();
      await this.rootLock?.release();
      this.rootLock = null;
      throw e;
    }
  }

  private async begin(): Promise<void> {
    this.rootReal = await realpath(resolve(this.opts.root));
    await mkdir(join(this.stateDir, 'worktrees'), { recursive: true });
    const top = await repoTop(this.rootReal);
    if (top) await excludeLocally(top, `/${relative(top, this.stateDir).split(sep).join('/')}/`);
    await this.loadState();
    await this.endLeftovers();
    await this.startHookServer();

    // The Space first: registered under its name's key, so a restart finds the same one.
    const work = new SpaceLink({
      conn: this.conn,
      name: this.spaceName,
      project: this.opts.project ?? (this.opts.contribute ? 'default' : undefined),
      contribute: this.opts.contribute,
      log: this.opts.log,
      observations: () => this.observations(),
      onDue: (c) => this.onDue(c),
    });
    if (await work.register()) this.work = work;
    // A crash left a standing agent's command running: it was interrupted, say so (refused if it
    // finished, or never started). Its own key, per attempt: a refusal stored under
    // `<command>:finished` would be the answer to the real finish of a command that starts later,
    // and one stored for an attempt whose `started` never arrived would answer a later attempt's.
    for (const a of this.state.agents ?? []) {
      if (!a.running) continue;
      const key = a.attempt ? `${a.running}:interrupted:${a.attempt}` : `${a.running}:interrupted`;
      (this.state.reports ??= []).push({ command: a.running, key, status: 'failed', result: 'interrupted: the bridge stopped before it finished' });
      delete a.running;
      delete a.attempt;
    }
    await this.saveState();
    // What ended before the last stop or crash and was never answered: sent again, same key.
    if (this.work) for (const r of [...(this.state.reports ?? [])]) await this.deliver(r);
    else this.state.reports = [];

    // Reconcile the board before following: whatever is open there, this fresh
    // process does not run it. End it with a reason rather than leave it "running".
    const snap = await this.client.getBoard();
    this.board = { sessions: snap.sessions ?? [] };
    for (const s of this.board.sessions) {
      if (s.state === 'ended') continue;
      this.opts.log(`ending ${s.id}: this bridge no longer runs it`);
      await this.client.post('', { type: 'session.end', id: s.id, session: s.name, reason: 'bridge restarted' }, this.key(s.id, 'end'));
    }
    await this.removeLeftoverWorktrees();
    for (let i = 0; i < (this.opts.agents ?? 0); i++) await this.startStanding(i);
    await this.saveState();

    if (this.work && this.opts.hooksPort !== undefined) {
      const hands = new HandStarted({
        space: this.work,
        claude: this.opts.claude,
        env: (hookId) => this.claudeEnv(hookId),
        settings: this.claudeSettings(),
        isOurs: (sid) => [...this.runs.values()].some((r) => r.sid === sid),
        wake: () => void this.pump(),
        log: this.opts.log,
        track: this.track,
      });
      this.opts.log(`hand-started sessions: point their hooks at ${await hands.listen(this.opts.hooksPort)}`);
      this.hands = hands;
    }
    this.work?.start();
    this.following = this.client.follow({
      lastEventId: () => this.state.threads[this.streamKey]?.lastEventId,
      onFrame: (f) => this.onFrame(f),
      onState: (s, why) => {
        this.opts.log(s === 'connected' ? `connected to ${this.conn.server}${this.client.base}/stream` : `stream down (${why}); reconnecting`);
        // Resumed with Last-Event-ID: the board was read at the start, and the
        // server sends only what is new, which may be nothing at all.
        if (s === 'connected' && this.state.threads[this.streamKey]?.lastEventId) this.markReady();
      },
    });
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
    try {
      await Promise.all([...this.runs.values()].map((r) => this.close(r, reason, true)));
      await this.hands?.stop(reason);
      let timer: NodeJS.Timeout | null = null;
      await Promise.race([this.conn.drain(), new Promise((r) => (timer = setTimeout(r, postsMs)))]);
      if (timer) clearTimeout(timer);
      this.conn.close();
      await this.following?.catch(() => undefined);
      await this.work?.stopped();
      await this.closeHookServer();
      if (this.saveTimer) clearTimeout(this.saveTimer);
      this.saveTimer = null;
      await this.saveState();
    } finally {
      await this.rootLock?.release();
    }
  }

  /** Stops the approval hook's listener, cutting any call still waiting on it. */
  private closeHookServer(): Promise<void> {
    this.hookServer?.closeAllConnections();
    return new Promise<void>((ok) => (this.hookServer ? this.hookServer.close(() => ok()) : ok()));
  }

  private async loadState(): Promise<void> {
    try {
      const j = JSON.parse(await readFile(join(this.stateDir, 'state.json'), 'utf8')) as StateFile;
      if (typeof j.bridge === 'string' && j.bridge)
        this.state = {
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
    const owner = this.state.owner;
    const ownerRuns = !!owner && owner.pid !== process.pid && stillRuns(owner.pid, owner.start);
    const lock = await lockRoot(this.rootReal);
    if (!lock || ownerRuns) {
      await lock?.release();
      throw new Error(`another bridge${ownerRuns ? ` (pid ${owner!.pid})` : ''} runs with --root ${this.rootReal}: stop it first, or give this one another root (one bridge per root)`);
    }
    this.rootLock = lock;
    if (!this.state.bridge) this.state.bridge = 'b' + randomBytes(5).toString('hex');
    await this.saveState();
  }

  /**
   * A bridge that was killed (SIGKILL, a crash) leaves its Claude Code
   * processes running: they do not exit when their stdin closes mid-turn.
   * Its state file names them (pid and start, so a reused pid is left
   * alone); end them, and what they started, before anything else: a
   * standing session is about to be resumed, and its old process would
   * still be writing to the same conversation.
   */
  private async endLeftovers(): Promise<void> {
    const left = this.state.children ?? [];
    // The bridge that wrote the file no longer runs (loadState refuses to start otherwise).
    if (left.length) {
      const ended = await endLeftovers(left);
      if (ended.length) this.opts.log(`ended ${ended.length} Claude Code process(es) the previous bridge left running (${ended.map((c) => `${c.what}, pid ${c.pid}`).join('; ')})`);
    }
    const me = startOf(process.pid);
    this.state.owner = me ? { pid: process.pid, start: me } : undefined;
    this.state.children = [];
    await this.saveState();
  }

  /** Records each Claude Code process this bridge starts until it ends (written at once: a kill may come any moment). */
  private track: ChildTracker = {
    started: (proc: ChildProcess, what: string) => {
      const start = startOf(proc.pid);
      if (!start || !proc.pid) return;
      (this.state.children ??= []).push({ pid: proc.pid, start, what });
      void this.saveState().catch((e) => this.opts.log(`saving the bridge state failed: ${(e as Error).message}`));
    },
    ended: (proc: ChildProcess) => {
      const before = this.state.children?.length ?? 0;
      this.state.children = (this.state.children ?? []).filter((c) => c.pid !== proc.pid);
      if (this.state.children.length !== before) this.scheduleSave();
    },
  };

  /** Saves are chained: one temp file, one rename at a time, the last state wins. */
  private saving: Promise<void> = Promise.resolve();
  private saveState(): Promise<void> {
    const file = join(this.stateDir, 'state.json');
    const tmp = `${file}.${process.pid}.tmp`;
    const write = async () => {
      await writeFile(tmp, JSON.stringify(this.state, null, 2));
      await rename(tmp, file);
    };
    this.saving = this.saving.then(write, write);
    return this.saving;
  }

  private scheduleSave(): void {
    // Once stopping, the final save in stop() writes everything.
    if (this.saveTimer || this.stopped) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.saveState().catch((e) => this.opts.log(`saving the bridge state failed: ${(e as Error).message}`));
    }, 100);
  }

  private async removeLeftoverWorktrees(): Promise<void> {
    const dir = join(this.stateDir, 'worktrees');
    for (const id of await readdir(dir).catch(() => [] as string[])) {
      if (this.runs.has(id)) continue;
      const path = join(dir, id);
      const top = await mainRepoOf(path);
      if (!top) continue;
      await removeWorktree(top, path).then(
        () => this.opts.log(`removed the worktree of ${id}, left from an earlier run`),
        (e) => this.opts.log(`could not remove ${path}: ${(e as Error).message}`),
      );
    }
  }

  // ------------------------------------------------------------ the stream

  private async onFrame(f: SseFrame): Promise<void> {
    let data: any;
    try {
      data = JSON.parse(f.data);
    } catch {
      return;
    }
    if (f.event === 'snapshot') {
      this.board = data.state ?? emptySessions();
      // After a reset, whatever ended while we were away ends here too.
      for (const r of [...this.runs.values()]) {
        const s = this.session(r.id);
        if (!s || s.state === 'ended') await this.close(r, closedReason(s?.reason), false);
      }
      this.settleWaiters();
    } else if (f.event === 'event') {
      await this.onEvent(data.event);
    } else {
      return; // live frames and anything new: not ours
    }
    if (f.id) {
      (this.state.threads[this.streamKey] ??= {}).lastEventId = f.id;
      this.scheduleSave();
    }
    this.markReady();
  }

  private session(id: string): Session | undefined {
    return this.board.sessions.find((s) => s.id === id);
  }

  private async onEvent(e: any): Promise<void> {
    if (!e || typeof e !== 'object') return;
    if (e.type === 'request.start') {
      await this.startSession(e);
      return;
    }
    const before = this.board;
    this.board = reduceSessions(this.board, e);
    if (this.board === before) return; // a no-op on the board is a no-op here too
    const run = typeof e.id === 'string' ? this.runs.get(e.id) : undefined;
    if (!run) return;
    switch (e.type) {
      case 'session.prompt':
        this.prompt(run, String(e.text ?? ''));
        break;
      case 'session.end':
        // A member closed it (or our own end came back): stop the process, remove the worktree.
        await this.close(run, closedReason(e.reason), false);
        break;
      case 'session.approval':
        this.settleWaiters();
        break;
    }
  }

  /** Wakes approval waiters whose request the board has settled (or whose session ended). */
  private settleWaiters(): void {
    for (const run of this.runs.values()) {
      const s = this.session(run.id);
      for (const [rid, wake] of run.waiting) {
        if (!s || s.state === 'ended') {
          run.waiting.delete(rid);
          wake(null);
          continue;
        }
        const a = s.approvals.find((x) => x.rid === rid);
        if (a && a.state !== 'pending') {
          run.waiting.delete(rid);
          wake({ state: a.state, by: a.by });
        }
      }
    }
  }

  // ------------------------------------------------------------ sessions

  /** Resolves a request's root inside the bridge's root, or says why not. */
  private async resolveRoot(asked: string): Promise<string | { error: string }> {
    let p = asked.trim();
    if (p === '~' || p.startsWith('~/')) p = join(homedir(), p.slice(1));
    const target = resolve(this.rootReal, p || '.');
    let real: string;
    try {
      real = await realpath(target);
    } catch {
      return { error: `no folder ${asked || '.'} under the bridge's root` };
    }
    if (real !== this.rootReal && !real.startsWith(this.rootReal + sep)) return { error: `${asked} is outside the bridge's root` };
    if (real === this.stateDir || real.startsWith(this.stateDir + sep)) return { error: `${asked} is the bridge's own folder` };
    return real;
  }

  private display(path: string): string {
    const home = homedir();
    return path === home || path.startsWith(home + sep) ? '~' + path.slice(home.length) : path;
  }

  private newRun(id: string, name: string, cwd: string, flavor: Run['flavor'], worktree: Run['worktree'], slot: number | null, sid: string = randomUUID(), used = false): Run {
    return {
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
      turn: null,
      closing: false,
      tools: new Map(),
      partial: '',
      partialTimer: null,
      waiting: new Map(),
    };
  }

  private async startSession(req: any): Promise<void> {
    const id = typeof req.id === 'string' ? req.id : '';
    if (!id || this.runs.has(id) || this.session(id) || this.stopped) return; // done before, or not ours to redo
    const refuse = (reason: string) => {
      this.opts.log(`refused ${id}: ${reason}`);
      return this.client.post('/requests', { type: 'request.refused', id, reason: oneLine(reason, 120) }, this.key(id, 'refused'));
    };
    const where = await this.resolveRoot(typeof req.root === 'string' ? req.root : '');
    if (typeof where !== 'string') return void (await refuse(where.error));
    const flavor = req.flavor === 'plain' ? 'plain' : 'scoped';
    let cwd = where;
    let worktree: Run['worktree'] = null;
    if (flavor === 'scoped') {
      const top = await repoTop(where);
      if (!top) return void (await refuse(`${this.display(where)} is not in a git repository; a scoped session needs one`));
      const path = join(this.stateDir, 'worktrees', id);
      try {
        await addWorktree(top, path, `roost/${id}`);
      } catch (e) {
        return void (await refuse((e as Error).message));
      }
      worktree = { top, path };
      cwd = join(path, relative(top, where));
    }
    const run = this.newRun(id, typeof req.session === 'string' && req.session ? req.session : id, cwd, flavor, worktree, null);
    await this.spawnRun(run, typeof req.name === 'string' ? req.name.slice(0, 80) : '', this.display(where));
  }

  /** A standing agent: the same Claude Code session across restarts (resumed), a new board session each run. */
  private async startStanding(slot: number): Promise<void> {
    const agents = (this.state.agents ??= []);
    const kept = agents[slot] ?? (agents[slot] = { sid: randomUUID(), used: false });
    const id = `a${slot + 1}-${randomBytes(3).toString('hex')}`;
    const run = this.newRun(id, `${this.spaceName} #${slot + 1}`, this.rootReal, 'plain', null, slot, kept.sid, kept.used);
    await this.spawnRun(run, this.opts.name, this.display(this.rootReal));
  }

  /** Starts the process, puts the session on the board and in Work. */
  private async spawnRun(run: Run, by: string, root: string): Promise<void> {
    this.runs.set(run.id, run);
    this.launch(run);
    const r = await this.client.post(
      '',
      {
        type: 'session.spawn',
        id: run.id,
        session: run.name,
        flavor: run.flavor,
        root: oneLine(root, 300),
        worktree: run.worktree ? oneLine(this.display(run.worktree.path), 300) : '',
        by,
      },
      this.key(run.id, 'spawn'),
    );
    if (r.status !== 200) {
      // Someone else's session by that id (another bridge on this thread?): not ours to run.
      await this.close(run, 'not started', false);
      return;
    }
    this.opts.log(`started ${run.id} (${run.flavor}, Claude Code session ${run.sid}) in ${run.cwd}`);
    this.status(run, 'idle', 'ready for a prompt');
  }

  /** Claude Code's environment: the bridge's without its token, plus where the approval hook asks. */
  private claudeEnv(hookId: string): NodeJS.ProcessEnv {
    // The session never sees the bridge's token: with it, a tool call could post its own approval.
    const env: NodeJS.ProcessEnv = { ...(this.opts.env ?? process.env), ROOST_BRIDGE_HOOK_URL: `${this.hookUrl}/hook/${hookId}?k=${this.secret}` };
    delete env.ROOST_TOKEN;
    return env;
  }

  private claudeSettings(): string {
    const timeoutMs = this.opts.windowMs + 60_000;
    return JSON.stringify({
      hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hookCommand(timeoutMs), timeout: Math.ceil(timeoutMs / 1000) + 60 }] }] },
    });
  }

  private launch(run: Run): void {
    const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--settings', this.claudeSettings()];
    // The session id is ours from the start (the Work agent's key); a relaunch continues the same conversation.
    args.push(...(run.used ? ['--resume', run.sid] : ['--session-id', run.sid]));
    const c = startClaude(
      this.opts.claude,
      args,
      { cwd: run.cwd, env: this.claudeEnv(run.id), stdin: true, track: this.track, what: `claude ${run.id}` },
      (m) => this.onClaude(run, m),
      (why) => {
        if (run.proc !== c.proc) return;
        run.proc = null;
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
        this.flushTurn(run, true);
        this.opts.log(`${run.id}: ${why}`);
        this.status(run, 'dead', why);
        const was = run.inflight;
        run.inflight = null;
        if (was?.kind === 'work') this.finishWork(run, was.command, 'failed', why);
        this.work?.observe(this.observation(run));
        this.next(run);
      },
      (l) => this.opts.log(`${run.id}: ${l}`),
    );
    run.proc = c.proc;
    run.pane = c.proc.pid ? `pid ${c.proc.pid}` : run.pane;
    this.work?.observe(this.observation(run));
  }

  /** A board prompt: written now if the process is free, else after what is in flight. */
  private prompt(run: Run, text: string): void {
    if (!text.trim() || run.closing) return;
    if (run.inflight) {
      run.pending.push(text);
      return;
    }
    run.inflight = { kind: 'board' };
    this.write(run, text, 'thinking');
  }

  private write(run: Run, text: string, activity: string): void {
    if (!run.proc) this.launch(run);
    this.status(run, 'running', activity);
    run.lastText = '';
    run.used = true;
    run.inflightText = text;
    run.rewritten = false;
    void this.remember(run);
    run.proc!.stdin!.write(userMessage(text));
    this.work?.observe(this.observation(run));
  }

  /** What comes after a prompt's result: the next board prompt, else a due Work command. */
  private next(run: Run): void {
    if (run.inflight || run.closing) return;
    const text = run.pending.shift();
    if (text !== undefined) {
      run.inflight = { kind: 'board' };
      this.write(run, text, 'thinking');
      return;
    }
    void this.pump();
  }

  /**
   * A standing agent's facts in the state file (its session, whether it was
   * used, the command in flight); `now` writes it before returning.
   */
  private async remember(run: Run, now = false): Promise<void> {
    if (run.slot === null || !this.state.agents?.[run.slot]) return;
    const a = this.state.agents[run.slot];
    a.used = run.used;
    if (run.inflight?.kind === 'work') {
      a.running = run.inflight.command;
      a.attempt = run.inflight.attempt;
    } else {
      delete a.running;
      delete a.attempt;
    }
    if (now) await this.saveState();
    else this.scheduleSave();
  }

  /** Ends a session's process and removes its worktree; posts `session.end` when the bridge is the one ending it. */
  private async close(run: Run, reason: string, post: boolean): Promise<void> {
    if (run.closing) return;
    run.closing = true;
    for (const [rid, wake] of run.waiting) {
      run.waiting.delete(rid);
      wake(null);
    }
    const proc = run.proc;
    if (proc) {
      const exited = new Promise<void>((ok) => proc.once('close', () => ok()));
      proc.stdin!.end();
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    }
    // Its Work agent ends (a running execution fails with the reason; the chat stays). The
    // execution's end is reported first, and kept until answered: the agent-ended report
    // alone would be lost if the server is away, and a standing agent comes back.
    const was = run.inflight;
    run.inflight = null;
    if (was?.kind === 'work') this.finishWork(run, was.command, 'failed', `the agent ended (${oneLine(reason, 120)})`);
    else void this.remember(run);
    this.work?.observe({ session: run.sid, ended: true, reason: oneLine(reason, 120) });
    // Queued, not awaited: the worktree goes now, whether or not the server is there (stop bounds the posts).
    if (post) void this.client.post('', { type: 'session.end', id: run.id, session: run.name, reason: oneLine(reason, 120) }, this.key(run.id, 'end'));
    if (run.worktree) {
      await removeWorktree(run.worktree.top, run.worktree.path).then(
        () => this.opts.log(`removed the worktree of ${run.id}; branch roost/${run.id} stays`),
        (e) => this.opts.log(`could not remove the worktree of ${run.id}: ${(e as Error).message}`),
      );
    }
    this.runs.delete(run.id);
    this.opts.log(`closed ${run.id} (${reason})`);
  }

  // ------------------------------------------------------------ Work

  private observation(run: Run): Observation {
    return { session: run.sid, label: run.name, pane: run.pane, cwd: oneLine(this.display(run.cwd), 900), origin: 'bridge', mode: run.flavor, state: run.inflight ? 'working' : 'idle' };
  }

  /** The Space's full snapshot: every session it runs, and the hand-started ones it has heard of. */
  private observations(): Observation[] {
    return [...[...this.runs.values()].filter((r) => !r.closing).map((r) => this.observation(r)), ...(this.hands?.observations() ?? [])];
  }

  private async onDue(commands: DueCommand[]): Promise<void> {
    this.due = commands;
    await this.pump();
  }

  /** Starts what is due on the agents that are free: one pass at a time. */
  private pump(): Promise<void> {
    const pass = async () => {
      for (const c of this.due) {
        if (this.tried.has(c.id) || this.stopped) continue;
        const run = [...this.runs.values()].find((r) => r.sid === c.session);
        if (run) {
          if (!run.inflight && !run.pending.length && !run.closing) await this.startWork(run, c);
          continue;
        }
        if (this.hands?.take(c) === 'started') this.tried.add(c.id);
      }
    };
    this.pumping = this.pumping.then(pass, pass);
    return this.pumping;
  }

  /** A Work command into a session: accepted by the server (`started`) first, then written as a prompt. */
  private async startWork(run: Run, c: DueCommand): Promise<void> {
    this.tried.add(c.id);
    run.inflight = { kind: 'work', command: c.id, by: c.by?.name ?? '', attempt: randomBytes(4).toString('hex') };
    // Written down before the server hears of it: a crash after `started` is then reported as interrupted.
    await this.remember(run, true);
    const r = await this.work!.execution(c.id, 'started');
    if (r.status !== 200 || run.closing) {
      this.opts.log(`did not start ${c.id}: ${r.json?.message ?? (run.closing ? 'the session is closing' : r.status)}`);
      if (run.closing) return; // close() reported its end
      run.inflight = null;
      // No answer (the connection closed while it was sent): it may have started; the state
      // file keeps it, so the next start reports it interrupted.
      if (r.status !== 0) void this.remember(run);
      this.next(run);
      return;
    }
    this.opts.log(`${run.id}: running Work command ${c.id} from ${c.by?.name ?? 'someone'}`);
    this.work!.terminal(run.sid, `$ ${c.text.split('\n')[0].slice(0, 200)}\n`);
    this.write(run, c.text, `Work command from ${c.by?.name ?? 'a teammate'}`);
  }

  /**
   * A command ended: its `finished` report is written to the state file (in
   * the same save that drops the command in flight) and kept there until the
   * server answers it, so a stop or crash while the server is away sends it
   * again at the next start.
   */
  private finishWork(run: Run, command: string, status: 'done' | 'failed', result: string): void {
    if (!this.work) return void this.remember(run);
    const r: EndReport = { command, key: `${command}:finished`, status, result: result.slice(0, 20_000) };
    (this.state.reports ??= []).push(r);
    void this.remember(run, true);
    void this.deliver(r);
  }

  /** Posts an end report; forgets it once the server answered (2xx or a 4xx), keeps it when the connection closed first. */
  private async deliver(r: EndReport): Promise<void> {
    const answer = await this.work!.execution(r.command, 'finished', { status: r.status, result: r.result }, r.key);
    if (answer.status === 0) return;
    this.state.reports = (this.state.reports ?? []).filter((x) => x !== r);
    this.scheduleSave();
  }

  // ------------------------------------------------------------ claude's output

  private status(run: Run, state: 'running' | 'idle' | 'waiting' | 'dead', activity: string): void {
    const n = ++run.statuses;
    void this.client.post('', { type: 'session.status', id: run.id, state, activity: oneLine(activity, 200) }, this.key(run.id, 'status', n));
  }

  private live(run: Run, tool: string, text: string): void {
    // Lossy: one attempt, no retry, no order guarantee; failures are dropped.
    void this.client.postOnce('/live', { type: 'session.tool', id: run.id, tool, text: text.slice(0, 4000) }).catch(() => undefined);
  }

  /** Partial text of the main conversation, relayed at most every 150 ms as `session.stream` (lossy; each frame carries what is new). */
  private streamText(run: Run, delta: string): void {
    run.partial += delta;
    if (run.partialTimer) return;
    run.partialTimer = setTimeout(() => {
      run.partialTimer = null;
      const text = run.partial;
      run.partial = '';
      if (text) void this.client.postOnce('/live', { type: 'session.stream', id: run.id, text: text.slice(0, 4000) }).catch(() => undefined);
    }, 150);
  }

  /**
   * A complete turn: a board `session.turn`; for a Work command also an
   * `execution.output`, unless it is the last turn (`final`: its text is the result).
   */
  private flushTurn(run: Run, final: boolean): void {
    const t = run.turn;
    if (!t) return;
    run.turn = null;
    const n = ++run.turns;
    const text = t.texts.join('\n\n').trim();
    const body: Record<string, unknown> = { type: 'session.turn', id: run.id, session: run.name };
    if (text) body.text = text.slice(0, 20_000);
    void this.client.post('', body, this.key(run.id, 'turn', n));
    if (text) run.lastText = text;
    const w = run.inflight;
    if (!final && text && w?.kind === 'work') void this.work?.execution(w.command, 'output', { text: text.slice(0, 20_000) }, `${w.command}:output:${n}`);
  }

  private onClaude(run: Run, m: any): void {
    if (!m || typeof m !== 'object') return;
    const main = !m.parent_tool_use_id;
    switch (m.type) {
      case 'stream_event':
        if (main && m.event?.type === 'content_block_delta' && m.event.delta?.type === 'text_delta' && typeof m.event.delta.text === 'string') this.streamText(run, m.event.delta.text);
        break;
      case 'assistant': {
        const content: any[] = Array.isArray(m.message?.content) ? m.message.content : [];
        if (!main) {
          // A subagent's step: only the activity says so.
          const tu = content.find((b) => b?.type === 'tool_use');
          if (tu) {
            run.tools.set(tu.id, tu.name);
            this.status(run, 'running', `subagent: ${tu.name} ${digestInput(tu.name, tu.input, 150)}`);
          }
          break;
        }
        const msgId = String(m.message?.id ?? '');
        if (run.turn && run.turn.msgId !== msgId) this.flushTurn(run, false);
        run.turn ??= { msgId, texts: [] };
        for (const b of content) {
          if (b?.type === 'text' && typeof b.text === 'string') {
            run.turn.texts.push(b.text);
            if (b.text.trim()) this.work?.terminal(run.sid, b.text + '\n');
          } else if (b?.type === 'tool_use') {
            run.tools.set(b.id, b.name);
            const digest = digestInput(b.name, b.input, 150);
            this.status(run, 'running', `${b.name} ${digest}`);
            this.live(run, b.name, digest);
            this.work?.terminal(run.sid, `> ${b.name} ${digest}\n`);
          }
        }
        break;
      }
      case 'user': {
        if (main) this.flushTurn(run, false);
        const content: any[] = Array.isArray(m.message?.content) ? m.message.content : [];
        for (const b of content) {
          if (b?.type !== 'tool_result') continue;
          const c = typeof b.content === 'string' ? b.content : Array.isArray(b.content) ? b.content.map((x: any) => x?.text ?? '').join('') : '';
          this.live(run, run.tools.get(b.tool_use_id) ?? 'tool', (b.is_error ? 'error: ' : '') + c);
        }
        break;
      }
      case 'result': {
        if (m.is_error && Array.isArray(m.errors) && m.errors.some((e: unknown) => typeof e === 'string' && e.startsWith('No conversation found')) && !run.rewritten) {
          // `--resume` of a conversation Claude Code never saved: the process exits now, and is launched again (see launch).
          run.wrongMode = true;
          break;
        }
        this.flushTurn(run, true);
        const n = ++run.results;
        const secs = typeof m.duration_ms === 'number' ? `${(m.duration_ms / 1000).toFixed(1)} s` : '';
        const turns = typeof m.num_turns === 'number' ? `, ${m.num_turns} turn${m.num_turns === 1 ? '' : 's'}` : '';
        const cost = typeof m.total_cost_usd === 'number' && m.total_cost_usd > 0 ? `, $${m.total_cost_usd.toFixed(4)}` : '';
        const denied = Array.isArray(m.permission_denials) && m.permission_denials.length ? `, ${m.permission_denials.length} tool call(s) denied` : '';
        const ok = succeeded(m);
        const summary = !ok ? `stopped (${m.subtype ?? 'error'}) after ${secs}${turns}` : `done in ${secs}${turns}${cost}${denied}`;
        void this.client.post('', { type: 'session.result', id: run.id, session: run.name, summary: oneLine(summary, 500) }, this.key(run.id, 'result', n));
        this.status(run, 'idle', 'ready for a prompt');
        const was = run.inflight;
        run.inflight = null;
        if (was?.kind === 'work') {
          const text = typeof m.result === 'string' && m.result.trim() ? m.result : run.lastText || (ok ? 'done' : `stopped (${m.subtype ?? 'error'})`);
          this.finishWork(run, was.command, ok ? 'done' : 'failed', text);
        } else void this.remember(run);
        this.work?.observe(this.observation(run));
        this.next(run);
        break;
      }
    }
  }

  // ------------------------------------------------------------ approvals

  private async startHookServer(): Promise<void> {
    this.hookServer = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const m = /^\/hook\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
      if (req.method !== 'POST' || !m || url.searchParams.get('k') !== this.secret) return reply(404, {});
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let payload: any = {};
        try {
          payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {}
        this.decide(m[1], payload).then(
          (d) => reply(200, answer(d.decision, d.reason)),
          (e) => reply(200, answer('deny', `the Roost bridge failed (${(e as Error).message}): denied`)),
        );
      });
    });
    await new Promise<void>((ok) => this.hookServer!.listen(0, '127.0.0.1', ok));
    const port = (this.hookServer.address() as { port: number }).port;
    this.hookUrl = `http://127.0.0.1:${port}`;
  }

  /** A request id from Claude Code's tool_use_id (stable, so a retried post is the same request). */
  private ridOf(payload: any, run: Run): string {
    const raw = typeof payload.tool_use_id === 'string' ? payload.tool_use_id.replace(/[^A-Za-z0-9_-]/g, '') : '';
    return (raw || `call-${run.statuses}-${Date.now().toString(36)}`).slice(-64);
  }

  private async decide(id: string, payload: any): Promise<{ decision: 'allow' | 'deny'; reason: string }> {
    // The window runs from the moment Claude Code asks, not from when the board
    // hears of it: a request that reached the board late would otherwise stay
    // open after the call it asks about had stopped waiting.
    const deadline = Date.now() + this.opts.windowMs;
    const tool = typeof payload.tool_name === 'string' ? payload.tool_name : 'tool';
    if (id.startsWith('hand_')) {
      // A hand-started session's headless run: nobody watches it, so nothing that needs approval runs.
      if (!needsApproval(this.opts.approvals, tool)) return { decision: 'allow', reason: 'needs no approval under the bridge’s rules' };
      return { decision: 'deny', reason: `${tool} needs approval, and a command run in a hand-started session has nobody to ask: denied` };
    }
    const run = this.runs.get(id);
    if (!run || run.closing) return { decision: 'deny', reason: 'the session has ended in Roost: denied' };
    if (!needsApproval(this.opts.approvals, tool)) return { decision: 'allow', reason: 'needs no approval under the bridge’s rules' };
    const rid = this.ridOf(payload, run);
    const digest = digestInput(tool, payload.tool_input, 200);
    const asking = oneLine(`needs approval: ${tool} ${digest}`, 200);
    // The request and the waiting status in one batch: the board never shows one without the other.
    const posting = this.client.post(
      '',
      [
        { type: 'session.approval', id, rid, session: run.name, tool: tool.slice(0, 120), digest, state: 'pending' },
        { type: 'session.status', id, state: 'waiting', activity: asking },
      ],
      this.key(id, 'approval', rid),
    );
    let lateTimer: NodeJS.Timeout | null = null;
    const late = new Promise<null>((ok) => (lateTimer = setTimeout(() => ok(null), Math.max(0, deadline - Date.now()))));
    const posted = await Promise.race([posting, late]);
    if (lateTimer) clearTimeout(lateTimer);
    if (posted && posted.status !== 200) return { decision: 'deny', reason: `Roost refused the approval request (${posted.json?.message ?? posted.status}): denied` };
    // No answer yet when the window ends (Roost is away, or slow): awaitDecision finds the window
    // over and ends it as any other, so a decision that does reach the log first is still obeyed.
    // A Work command shows it is blocked while it waits, and resumed once decided (whichever way).
    // The report points at the request on the board (thread, board session, rid), so a member can
    // decide from the Work view with the board's own post; the server adds the board's project.
    const w = posted && run.inflight?.kind === 'work' ? run.inflight.command : null;
    const approval = { thread: this.opts.thread, session: id, rid, tool: tool.slice(0, 120), digest };
    if (w) void this.work?.execution(w, 'blocked', { reason: asking, approval }, `${w}:blocked:${rid}`);
    try {
      return await this.awaitDecision(run, id, rid, tool, digest, deadline, !posted);
    } finally {
      if (w) void this.work?.execution(w, 'resumed', { rid }, `${w}:resumed:${rid}`);
    }
  }

  /** `unreached`: the request had not got through to Roost when the window ended. */
  private async awaitDecision(run: Run, id: string, rid: string, tool: string, digest: string, deadline: number, unreached: boolean): Promise<{ decision: 'allow' | 'deny'; reason: string }> {
    const decided = new Promise<{ state: 'allowed' | 'denied'; by: string } | null>((wake) => run.waiting.set(rid, wake));
    this.settleWaiters(); // it may be settled already (a replayed decision)
    let timer: NodeJS.Timeout | null = null;
    const window = new Promise<'window'>((ok) => (timer = setTimeout(() => ok('window'), Math.max(0, deadline - Date.now()))));
    let outcome = await Promise.race([decided, window]);
    if (timer) clearTimeout(timer);
    if (outcome === 'window') {
      // Nobody answered in time: say so on the board, and obey whichever decision the log holds
      // first, for at most 5 s more. The denial is not awaited: with Roost away it waits in the
      // post queue, behind the request itself (posts go out in order), and the call is denied
      // meanwhile; the board then shows the request closed by it, never one left open.
      void this.client.post('', { type: 'session.approval', id, rid, session: run.name, tool: tool.slice(0, 120), state: 'denied' }, this.key(id, 'approval', rid, 'window'));
      let grace: NodeJS.Timeout | null = null;
      outcome = await Promise.race([decided, new Promise<null>((ok) => (grace = setTimeout(() => ok(null), 5000)))]);
      if (grace) clearTimeout(grace);
      if (outcome?.state === 'denied' && outcome.by === this.opts.name) {
        outcome = null;
      }
      if (!outcome) {
        run.waiting.delete(rid);
        if (!run.closing) this.status(run, 'running', `denied: ${tool} (${unreached ? 'Roost unreachable' : 'no decision'})`);
        const within = formatWindow(this.opts.windowMs);
        return {
          decision: 'deny',
          reason: `${unreached ? `Roost could not be reached within ${within} to ask` : `No decision in Roost within ${within}`}: denied (unanswered approvals count as a no)`,
        };
      }
    }
    if (!outcome) return { decision: 'deny', reason: 'the session has ended in Roost: denied' };
    if (outcome.state === 'allowed') {
      this.status(run, 'running', `${tool} ${digest}`);
      return { decision: 'allow', reason: `Allowed in Roost by ${outcome.by}` };
    }
    this.status(run, 'running', `denied: ${tool}`);
    return { decision: 'deny', reason: `Denied in Roost by ${outcome.by}` };
  }
}

/** The reason a Work agent ends when its board session was closed. */
function closedReason(reason: unknown): string {
  return typeof reason === 'string' && reason && reason !== 'closed' ? `closed on the board: ${reason}` : 'closed on the board';
}

/** A bridge's state folder under its root. */
export function bridgeStateDir(root: string): string {
  return join(resolve(root), STATE_DIR);
}
