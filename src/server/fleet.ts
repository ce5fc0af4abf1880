// The fleet app on the server (the fleet board): one log stream per thread,
// `sessions:<thread>` (the stream keeps the name it always had in the log),
// folded by the shared fleet fold (src/core/fleet.ts) and served as
//   GET  /fleet/:thread           the board now
//   POST /fleet/:thread           post session events (one or a batch)
//   GET  /fleet/:thread/stream    snapshot, then live frames (SSE)
//   POST /fleet/:thread/requests  ask the thread's bridge to start a session
//   POST /fleet/:thread/live      a lossy frame for the thread's readers
//
// Order of things for one POST: identify the caller → check every item (a bad
// batch stores nothing) → stamp the transport's identity (`name`, `uid`, `ts`)
// → check the batch against the board, folding it on a scratch copy so a
// batch that spawns then prompts is judged in order → append (durable on
// return) → wait until this node has folded it (read your writes) → answer.
// The commit wakes `onCommit`, which folds entries in position order and
// publishes their frames: `event` frames carry the stored event and its chat
// line, so every reader sees the same board and the same chat.
//
// Boards are loaded on first use and stay in memory (a board is at most 50
// sessions). Another node's commits arrive as wake-ups without entries; the
// board then reads what it missed.

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  FLEET_PROTOCOL_VERSION,
  SESSION_ID_PATTERN,
  SESSION_LIMITS,
  applySessionEvent,
  emptySessions,
  reduceSessions,
  sessionEventConflict,
  type Approval,
  type SessionConflict,
  type SessionEvent,
  type SessionsState,
} from '../core/fleet.js';
import { checkLive, checkRequest, checkSessionEvent, normalizeSessionEvent, resultUsageOf, withSessionIdentity, type RefusedRequest, type ResultUsage, type StartRequest } from '../core/fleet-wire.js';
import type { AppendResult, EventStore, LogEntry, NewEvent } from '../storage/types.js';
import { HttpError, sendJson } from './http.js';
import { RequestKey } from './keys.js';
import { route, type Ctx, type ParamRule, type Route } from './route.js';
import type { ChannelOptions, Live, ScopeSpec } from './live.js';
import { FoldedStream, OnFoldHost } from './folded.js';
import { projectKey } from './floor.js';
import { DEFAULT_PROJECT, LOCAL_OWNER, grantOf } from './access.js';
import { createHash, randomBytes } from 'node:crypto';
import { APPROVAL_LIMITS, type Approval as OneApproval } from '../core/approvals.js';
import { boardCallClass } from '../core/action-class.js';
import { FLEET_NO_DECISION } from '../core/fleet.js';
import { askedId, closedError, type ApprovalService } from './approvals.js';
import type { Holders } from './holders.js';
import type { UsageService } from './usage.js';
import type { PerProject } from './scoped.js';
import { PRESENCE_EXPIRE_MS, Presence } from './presence.js';
import { parseRewindAt, rewind } from './rewind.js';

/** A thread's stream is `sessions:<thread>` (default project) or `sessions:<project>:<thread>`: stored names, kept. */
export const FLEET_STREAM_PREFIX = 'sessions:';
/** A thread id has the form of a session id. */
export const THREAD_PATTERN = SESSION_ID_PATTERN;
export const MAX_SESSION_BATCH = 200;
/** A session event is small; prompts and turns are capped at 20,000 characters. */
const MAX_BODY = 512 * 1024;

/** A server-side reader of a board: each folded entry's event, its position, and a result's usage when heard here. */
export type BoardWatcher = (event: Record<string, unknown>, position: number, usage?: ResultUsage) => void;

/** Who is posting, as the transport knows it. */
export interface Caller {
  name: string;
  uid?: string;
}

export interface FleetOptions {
  live: Live;
  channel: ChannelOptions;
  /** A snapshot of a board is stored every this many events. */
  snapshotEvery: number;
  /** Replays longer than this get a reset snapshot instead. */
  maxReplay: number;
  /**
   * Who the caller is. Throws an HttpError (401/403) to refuse. The default is
   * local mode's (see `localCaller`); shared mode replaces it with the
   * authenticated member or token.
   */
  identify?: (req: IncomingMessage) => Caller;
  /** The project's usage roll-up: a bridge's `session.result` usage is counted there (never stored on the board). */
  usage?: (project: string) => Promise<UsageService>;
  /**
   * The one approvals model (docs/approvals.md): a board's request is an
   * approval of kind `fleet` in its project's approvals, decided there; the
   * board shows each outcome as the server's echo. Absent: a board alone
   * (tests of the fold's rules), decided on the board as the contract reads.
   */
  approvals?: PerProject<ApprovalService>;
  /** Who holds askers' waits (a bridge following its board holds its requests). */
  holders?: Holders;
  /** Several nodes: another node's bridges are forgotten after this long without a repeat (default PRESENCE_EXPIRE_MS, 30 s). */
  presenceExpireMs?: number;
}

/** The project of a board's key (`<thread>` in the default project, else `<project>:<thread>`: FleetService.board). */
function projectOfKey(key: string): string {
  const i = key.indexOf(':');
  return i < 0 ? DEFAULT_PROJECT : key.slice(0, i);
}

/** The topic of bridge presence on the store's broadcast (src/server/presence.ts): per project, one entry per bridge connection, named by its thread. */
const BRIDGES_TOPIC = 'fleet.bridges';

/** How long after the bridge's own window the server's expiry comes (the bridge's own denial normally closes it first). */
const FLEET_WINDOW_SLACK_MS = 10_000;

/**
 * The approval id of request `rid` of board session `session` on a board
 * stream: derived, so the board's alias, Work and the echo all name the same
 * request, and one board can never name another's.
 */
export function fleetApprovalId(stream: string, session: string, rid: string): string {
  return askedId('fl', stream, `${session}\n${rid}`);
}

/**
 * The holder of a bridge's requests: the bridge's process id (`Roost-Bridge`,
 * new each start) bound to the caller, so one member's client can never hold
 * (or release) another's. Empty without the header (a plain client: only the
 * window closes its requests).
 */
export function bridgeHolder(req: IncomingMessage, who: Caller): string {
  const raw = req.headers['roost-bridge'];
  if (typeof raw !== 'string' || !THREAD_PATTERN.test(raw)) return '';
  return 'bridge:' + createHash('sha256').update(`${who.uid ?? ''}\n${raw}`).digest('hex').slice(0, 24);
}

/**
 * The team a board session's calls earn trust as (docs/approvals.md "Earned
 * trust"): its Space's thread, named as the usage books its cost (`fleet ·
 * <thread>`), so every session of that thread shares it and no other does.
 */
export function fleetTeam(thread: string): string {
  return `fleet · ${thread}`.slice(0, 80);
}

/** The bridge's window (`Roost-Approval-Window`, ms), when it says; the server's expiry comes a little after it. */
function windowOf(req: IncomingMessage): number | undefined {
  const ms = Number(req.headers['roost-approval-window']);
  if (!Number.isInteger(ms) || ms < APPROVAL_LIMITS.minWindow || ms > APPROVAL_LIMITS.maxWindow) return undefined;
  return ms + FLEET_WINDOW_SLACK_MS;
}

/**
 * Local mode: the server listens on loopback only and the person at the
 * machine is the only member, so every caller is the owner (`uid: local`). A
 * client may label itself with the `Roost-Name` header (the bridge says
 * "Claude", a browser tab the name its person typed), which only tells the
 * owner's own clients apart on the board and in the chat.
 */
export function localCaller(req: IncomingMessage): Caller {
  // Shared mode: the authenticated member or token, whatever the request says.
  const g = grantOf(req);
  if (g && g.kind !== 'local') return { name: g.name, uid: g.uid };
  const raw = req.headers['roost-name'];
  const label = typeof raw === 'string' ? raw.replace(/\s+/g, ' ').trim().slice(0, SESSION_LIMITS.by) : '';
  return { name: label || LOCAL_OWNER.name, uid: LOCAL_OWNER.uid };
}

interface SnapshotBody {
  position: number;
  state: SessionsState;
}

/** One entry folded into `state`: the next state and the frame's data (the stored body is not re-serialized). */
function fold(state: SessionsState, entry: LogEntry): { state: SessionsState; data: string } {
  let event: unknown = null;
  try {
    event = JSON.parse(entry.body);
  } catch {
    // A corrupt body folds like any hostile event: to nothing.
  }
  const r = applySessionEvent(state, event);
  return { state: r.state, data: `{"event":${entry.body},"chat":${JSON.stringify(r.chat)}}` };
}

/** One thread's board: its fold, its position in the log and its live channel (`fleet:<project>/<thread>`). */
class Board extends OnFoldHost<SessionsState> {
  protected readonly host: FoldedStream<SessionsState>;
  /** Bridges following it on any node sharing the store (presence, not durable: see docs/bridge.md; `FleetService.bridgePresence`), as last told to its readers. */
  following = 0;
  /** Server-side readers of every folded entry (the flock's code crows: docs/flock.md, "Code items"). */
  readonly watchers = new Set<BoardWatcher>();
  /** A `session.result`'s usage while its post is appended here (the stored event never keeps it), by session id. */
  readonly heardUsage = new Map<string, ResultUsage>();

  constructor(
    readonly thread: string,
    readonly stream: string,
    scope: string,
    store: EventStore,
    opts: FleetOptions,
  ) {
    super();
    this.host = new FoldedStream<SessionsState>(
      store,
      {
        stream,
        scope,
        empty: emptySessions,
        step: (state, entry) => {
          const r = fold(state, entry);
          return { state: r.state, events: [{ name: 'event', data: r.data }] };
        },
        snapshot: (state, position, reset) =>
          JSON.stringify({ protocol: FLEET_PROTOCOL_VERSION, epoch: store.epoch, thread: this.thread, position, reset, state, bridges: this.following }),
        stored: {
          every: opts.snapshotEvery,
          body: (state, position) => JSON.stringify({ position, state } satisfies SnapshotBody),
          load: (text) => JSON.parse(text) as SnapshotBody,
          label: 'fleet snapshot',
          history: true,
        },
        applied: (entry) => this.tell(entry),
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }


  /** Hands a folded entry to the watchers, with the usage its post carried when it was posted on this node. */
  private tell(entry: LogEntry): void {
    if (this.watchers.size === 0) return;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(entry.body) as Record<string, unknown>;
    } catch {
      return;
    }
    const usage = e.type === 'session.result' && typeof e.id === 'string' ? this.heardUsage.get(e.id) : undefined;
    for (const w of this.watchers) {
      try {
        w(e, entry.position, usage);
      } catch (err) {
        console.error('roost: a board watcher failed', err);
      }
    }
  }

  /** Tells live readers how many bridges follow the board now, on any node (a lossy frame), when that changed. */
  announceBridges(count: number): void {
    if (count === this.following) return;
    this.following = count;
    this.channel.broadcast('live', JSON.stringify({ type: 'bridges', count }));
  }
}

export class FleetService {
  private boards = new Map<string, Promise<Board>>();
  private loaded = new Map<string, Board>();
  private unlisten: (() => void) | null = null;
  private identify: (req: IncomingMessage) => Caller;
  /** This node's bridge connections (a random id each) → the board they follow. */
  private bridgeConns = new Map<string, { project: string; thread: string }>();
  /**
   * Which boards bridges follow, on every node sharing the store (the generic
   * presence over the store's broadcast: docs/scale-out.md): per project,
   * one entry per bridge connection, its name the thread.
   */
  private bridgePresence: Presence;

  constructor(
    private store: EventStore,
    private opts: FleetOptions,
  ) {
    this.identify = opts.identify ?? localCaller;
    this.bridgePresence = new Presence(store, {
      topic: BRIDGES_TOPIC,
      expireMs: opts.presenceExpireMs ?? PRESENCE_EXPIRE_MS,
      local: (project) => {
        const out = new Map<string, string>();
        for (const [id, c] of this.bridgeConns) if (c.project === project) out.set(id, c.thread);
        return out;
      },
      onChange: (project) => {
        for (const [key, b] of this.loaded) if (projectOfKey(key) === project) b.announceBridges(this.bridgesOn(project, b.thread));
      },
    });
  }

  /** How many bridges follow a project's thread, on any node. */
  private bridgesOn(project: string, thread: string): number {
    let n = 0;
    for (const p of this.bridgePresence.people(project)) if (p.name === thread) n++;
    return n;
  }

  start(): void {
    this.unlisten = this.store.onCommit((stream, head, entries) => {
      if (!stream.startsWith(FLEET_STREAM_PREFIX)) return;
      this.loaded.get(stream.slice(FLEET_STREAM_PREFIX.length))?.onCommit(head, entries);
    });
    this.bridgePresence.start();
  }

  async stop(): Promise<void> {
    this.bridgePresence.stop();
    this.unlisten?.();
    await Promise.allSettled([...this.loaded.values()].map((b) => b.stop()));
    await Promise.allSettled([...this.boards.values()]);
  }

  /**
   * The live scope `fleet:<project>/<thread>`: a viewer of the project reads
   * it (the board's durable frames, and its lossy `live` frames).
   */
  readonly scope: ScopeSpec = {
    need: (key) => ({ project: projectKey(key.slice(0, Math.max(0, key.indexOf('/')))), min: 'viewer' }),
    open: async (key) => {
      const i = key.indexOf('/');
      const thread = key.slice(i + 1);
      if (!THREAD_PATTERN.test(thread)) throw new HttpError(400, 'bad_request', 'a thread id is 1 to 64 letters, digits, "-" or "_"');
      return (await this.board(thread, key.slice(0, i))).channel;
    },
  };

  /**
   * The board of a thread of a project, loaded from the log on first use.
   * Threads belong to a project: the default project's keep their streams
   * (`sessions:<thread>`), another project's are `sessions:<project>:<thread>`.
   */
  board(thread: string, project: string = DEFAULT_PROJECT): Promise<Board> {
    const key = project === DEFAULT_PROJECT ? thread : `${project}:${thread}`;
    let p = this.boards.get(key);
    if (!p) {
      const b = new Board(thread, FLEET_STREAM_PREFIX + key, `fleet:${project}/${thread}`, this.store, this.opts);
      b.following = this.bridgesOn(project, thread);
      // Registered before it reads, so no commit falls between its read and its first wake-up.
      this.loaded.set(key, b);
      p = b.start().then(
        () => b,
        (e) => {
          this.loaded.delete(key);
          this.boards.delete(key);
          void b.stop();
          throw e;
        },
      );
      this.boards.set(key, p);
    }
    return p;
  }

  /** The state of a thread's board as this node has folded it (for tests and other apps). */
  async stateOf(thread: string, project: string = DEFAULT_PROJECT): Promise<SessionsState> {
    return (await this.board(thread, project)).state;
  }

  /**
   * Read-only: request `rid` of board session `session` on a thread of a
   * project, as the board holds it once caught up with the log (so a post
   * another node answered a moment ago is seen), or null when that session
   * has no such request. Work checks a blocked execution's pointer with it.
   */
  async approvalOf(project: string, thread: string, session: string, rid: string): Promise<Approval | null> {
    const board = await this.board(thread, project);
    await board.fresh();
    return board.state.sessions.find((s) => s.id === session)?.approvals.find((a) => a.rid === rid) ?? null;
  }

  /** Who spawned each board session (by stream and session id), and how far its stream was read for it (bounded). */
  private spawners = new Map<string, { uid: string | null; after: number }>();

  /**
   * The uid stamped on the last `session.spawn` of board session `session`
   * on a thread of a project (the board keeps only the label), read from the
   * board's stream; null when there is none. The last one: an ended session
   * evicted from a full board frees its id for a new spawn, and a refused
   * spawn is never stored. Work checks a blocked execution's pointer with it.
   */
  async spawnerOf(project: string, thread: string, session: string): Promise<string | null> {
    const { stream } = await this.board(thread, project);
    const key = `${stream}\n${session}`;
    const seen = this.spawners.get(key) ?? { uid: null, after: 0 };
    for (;;) {
      const page = await this.store.read(stream, seen.after, 1000);
      for (const e of page) {
        seen.after = e.position;
        if (e.type !== 'session.spawn') continue;
        let body: { id?: unknown; uid?: unknown };
        try {
          body = JSON.parse(e.body);
        } catch {
          continue;
        }
        if (body.id === session && typeof body.uid === 'string') seen.uid = body.uid;
      }
      if (page.length < 1000) break;
    }
    if (this.spawners.size >= 10_000) this.spawners.clear();
    this.spawners.set(key, seen);
    return seen.uid;
  }

  // ------------------------------------------------------------ endpoints

  /** The fleet's routes (docs/fleet.md): bodies are checked by the pure wire checks of src/core/fleet-wire.ts. */
  routes(): Route[] {
    const thread = { thread: THREAD_PARAM };
    return [
      route({ method: 'GET', path: '/fleet/:thread', auth: 'viewer', params: thread, page: true, handler: this.getState }),
      // Keys as stored before the route layer scoped them (keys.ts): `<board's stream>:<key>`, on the board and in the approvals alike.
      route({ method: 'POST', path: '/fleet/:thread', auth: 'editor', params: thread, body: { wire: checkBatch }, maxBody: MAX_BODY, key: { legacy: (_s, k, c) => `${boardStream(c.project, c.params.thread)}:${k}` }, handler: this.post }),
      route({ method: 'GET', path: '/fleet/:thread/rewind', auth: 'viewer', params: thread, doc: 'the board as it was at ?at=<position or ISO time> (read-only)', handler: this.getRewind }),
      route({ method: 'GET', path: '/fleet/:thread/stream', auth: 'viewer', params: thread, stream: true, handler: this.getStream }),
      route({ method: 'POST', path: '/fleet/:thread/requests', auth: 'editor', params: thread, body: { wire: wireOf((x) => checkRequest(x, newRequestId)) }, key: { legacy: (_s, k, c) => `${FLEET_STREAM_PREFIX}${c.params.thread}:${k}` }, handler: this.postRequest }),
      route({ method: 'POST', path: '/fleet/:thread/live', auth: 'editor', params: thread, body: { wire: wireOf(checkLive) }, maxBody: 64 * 1024, handler: this.postLive }),
    ];
  }

  post = async ({ req, res, params, body: batch, key }: Ctx<Batch>): Promise<void> => {
    const { items, where } = batch;
    const who = this.identify(req);
    const project = projectFor(req);
    const board = await this.board(params.thread, project);
    await board.fresh();
    const approvals = this.opts.approvals ? await this.opts.approvals.get(project) : null;
    // A decision on a request is the one approvals model's decide (the board's post is its alias).
    if (approvals && items.some(isDecision)) {
      if (items.length > 1) throw new HttpError(400, 'bad_request', 'a decision on an approval ("session.approval" allowed or denied) is posted alone, not in a batch');
      return this.decideOnBoard(req, res, board, approvals, who, withSessionIdentity(normalizeSessionEvent(items[0]), { name: who.name, uid: who.uid, ts: Date.now() }), key);
    }
    // A spent budget: the bridge takes no new prompt for the thread's sessions (docs/integrations.md, "Budgets").
    if (items.some((i) => i.type === 'session.prompt')) await this.budgetGate(project, params.thread);
    const r = await this.appendChecked(req, who, project, board, approvals, items, where, key);
    sendJson(res, 200, { ok: true, accepted: r.last - r.first + 1, first: r.first, last: r.last, duplicate: r.duplicate });
  };

  /**
   * Session events (checked by the edge's check) appended as `who`: the
   * transport's identity stamped, the batch judged against the board in
   * order, new approval requests asked first, a result's usage counted. What
   * a member's, a bridge's and the server's own posts (the flock's code
   * crows, `postAs`) all go through. Throws the conflict as an HttpError.
   */
  private async appendChecked(
    req: IncomingMessage | null,
    who: Caller,
    project: string,
    board: Board,
    approvals: ApprovalService | null,
    items: readonly Record<string, unknown>[],
    where: (i: number) => string,
    key: RequestKey | null,
  ): Promise<AppendResult> {
    const before = board.state;
    const now = Date.now();
    const events: NewEvent[] = [];
    let scratch = board.state;
    let conflict: HttpError | null = null;
    for (let i = 0; i < items.length; i++) {
      // The transport's identity wins over the payload's, whatever it said.
      const e = withSessionIdentity(normalizeSessionEvent(items[i]), { name: who.name, uid: who.uid, ts: now });
      const c: SessionConflict | null = conflict ? null : sessionEventConflict(scratch, e);
      if (c) conflict = new HttpError(c.status, c.kind, where(i) + c.message);
      scratch = reduceSessions(scratch, e);
      events.push({ type: e.type as string, body: JSON.stringify(e) });
    }
    // Without a key, a refused batch stores nothing. With a key, it may be the
    // retry of a request that was applied before its answer was lost: append
    // it so the store can recognise the key (nothing is stored twice); if it
    // was new after all, it folds to nothing on the board and is refused.
    if (conflict && !key) throw conflict;
    // Each new request is asked in the approvals first (keyed by its id: a retry asks nothing twice), so
    // the board never shows a request the one model lacks.
    const trusted = req && approvals && events.some((e) => e.type === 'session.approval') ? await this.askApprovals(req, who, board, approvals, before, scratch, items) : [];
    // A result's usage is never stored: its watchers get it as the stored result is folded here.
    const heard: string[] = [];
    for (const item of items) {
      const u = resultUsageOf(item);
      if (!u || typeof item.id !== 'string') continue;
      board.heardUsage.set(item.id, u);
      heard.push(item.id);
    }
    let r: AppendResult;
    try {
      r = await (key ? key.append(this.store, board.stream, events) : this.store.append(board.stream, events));
      await board.folded(r.last);
    } finally {
      for (const id of heard) board.heardUsage.delete(id);
    }
    // A session closed: its requests die with it (the board drops them), and nobody waits for them any more.
    if (approvals && events.some((e) => e.type === 'session.end')) await this.withdrawEnded(board, approvals, before);
    // A call allowed by earned trust: its echo follows the request onto the board (the bridge lets it run).
    for (const a of trusted) await this.echo(project, a);
    if (conflict && !r.duplicate) throw conflict;
    if (this.opts.usage) await this.countUsage(project, board, items, key ? `${board.stream}:${key.key}` : `${board.stream}@${r.first}`, now);
    return r;
  }

  /**
   * The usage a batch's results carry, counted once each on the project's
   * usage (keyed by the post's key and the item's place: a retried post,
   * duplicate or not, counts nothing twice).
   */
  private async countUsage(project: string, board: Board, items: readonly Record<string, unknown>[], key: string, ts: number): Promise<void> {
    const svc = await this.opts.usage!(project);
    for (const [i, item] of items.entries()) {
      const u = resultUsageOf(item);
      if (u) await svc.recordBridge(`${key}#${i}`, u, fleetTeam(board.thread), ts);
    }
  }

  // ------------------------------------------------------------ approvals (one model)

  /**
   * The requests pending on `after` that `before` did not hold become
   * approvals of kind fleet. A call whose holder (the board's team, its
   * action class) earned trust is allowed by trust at once, the same check
   * as a coding agent's hook (ApprovalService.trustFor); those are returned,
   * for their echo once the board holds the request.
   */
  private async askApprovals(
    req: IncomingMessage,
    who: Caller,
    board: Board,
    approvals: ApprovalService,
    before: SessionsState,
    after: SessionsState,
    items: readonly Record<string, unknown>[],
  ): Promise<OneApproval[]> {
    const holder = bridgeHolder(req, who);
    const window = windowOf(req);
    const trusted: OneApproval[] = [];
    for (const s of after.sessions) {
      if (s.state === 'ended') continue;
      const was = new Set(before.sessions.find((x) => x.id === s.id)?.approvals.map((x) => x.rid));
      for (const a of s.approvals) {
        if (a.state !== 'pending' || was.has(a.rid)) continue;
        const posted = items.find((x) => x.type === 'session.approval' && x.id === s.id && x.rid === a.rid);
        const n = {
          id: fleetApprovalId(board.stream, s.id, a.rid),
          kind: 'fleet' as const,
          asker: s.id,
          askerName: s.name,
          scope: { thread: board.thread, session: s.id, rid: a.rid },
          team: fleetTeam(board.thread),
          source: 'bridge',
          tool: a.tool || 'tool',
          input: a.digest,
          window,
          holder,
          ...boardCallClass(a.tool || 'tool', posted?.command, approvals.state.agentTrust.never),
        };
        const t = approvals.trustFor(n);
        const byTrust = t ? await approvals.allowByTrust(n, t) : null;
        if (byTrust) trusted.push(byTrust);
        else await approvals.request(n);
      }
    }
    return trusted;
  }

  /** Withdraws the approvals of requests a `session.end` just dropped from the board. */
  private async withdrawEnded(board: Board, approvals: ApprovalService, before: SessionsState): Promise<void> {
    for (const s of before.sessions) {
      if (s.state === 'ended' || board.state.sessions.find((x) => x.id === s.id)?.state !== 'ended') continue;
      for (const a of s.approvals) if (a.state === 'pending') await approvals.withdraw(fleetApprovalId(board.stream, s.id, a.rid), `the session “${s.name}” was closed`);
    }
  }

  /**
   * The board's decision post, an alias of the one decide: a member's
   * `session.approval` allowed/denied decides the approval (first wins, a
   * second is 409, the decider is the transport's name); the bridge's own
   * denial of its own request (its window ended) withdraws it (nobody
   * decided). Answers once the board holds the echo.
   */
  private async decideOnBoard(req: IncomingMessage, res: ServerResponse, board: Board, approvals: ApprovalService, who: Caller, e: SessionEvent & { name: string }, key: RequestKey | null): Promise<void> {
    const c = sessionEventConflict(board.state, e);
    // With a key, a 409 may be the retry of a decision that was made: the decide below answers as the first did.
    if (c && (!key || c.status === 404)) throw new HttpError(c.status, c.kind, c.message);
    const session = e.id as string;
    const rid = e.rid as string;
    const id = fleetApprovalId(board.stream, session, rid);
    let a = approvals.state.byId.get(id);
    const s = board.state.sessions.find((x) => x.id === session);
    const held = s?.approvals.find((x) => x.rid === rid);
    if (!a && s && held?.state === 'pending' && !approvals.state.forgotten.has(id)) {
      // A request the board holds but the approvals do not (posted before they were one model): asked now, then decided the one way.
      a = (await approvals.request({ id, kind: 'fleet', asker: session, askerName: s.name, scope: { thread: board.thread, session, rid }, source: 'bridge', tool: held.tool || 'tool', input: held.digest })).approval;
    }
    if (!a) throw c ? new HttpError(c.status, c.kind, c.message) : new HttpError(404, 'not_found', `no approval "${rid}" in session "${s?.name ?? session}"`);
    // The request's own bridge (same caller, same process: the holder it asked under).
    const own = a.holder !== '' && a.holder === bridgeHolder(req, who);
    if (own && e.state === 'denied') {
      // The board shows it denied by the bridge, as the bridge said it (the echo reads this name; elsewhere FLEET_NO_DECISION).
      if (a.status === 'pending') {
        this.echoNames.set(id, who.name);
        try {
          await approvals.withdraw(id, 'no decision within the bridge’s window: denied');
        } finally {
          setTimeout(() => this.echoNames.delete(id), 60_000).unref();
        }
      }
      a = approvals.state.byId.get(id) ?? a;
      if (a.status !== 'withdrawn') throw closedError(id, a);
    } else {
      const r = await approvals.decide(id, e.state === 'allowed' ? 'allow' : 'deny', who.name, { key });
      if (!r.won) throw closedError(id, r.approval);
      a = r.approval;
    }
    const at = await this.echo(approvals.project, a);
    sendJson(res, 200, { ok: true, accepted: 1, first: at ?? board.pos, last: at ?? board.pos, duplicate: false, approval: a.id });
  }

  private echoes = new Map<string, Promise<number | null>>();
  /** The name a withdrawal's echo carries when the bridge itself denied (its window ended). */
  private echoNames = new Map<string, string>();

  /**
   * The board's echo of a closed fleet approval: `session.approval` allowed
   * or denied, written once by the server (keyed by the approval's id) while
   * the board still holds the request pending, with the decider's name (or
   * FLEET_NO_DECISION when nobody decided). Resolves with its position, or
   * null when there was nothing to echo.
   */
  echo(project: string, a: OneApproval): Promise<number | null> {
    if (a.kind !== 'fleet' || a.status === 'pending') return Promise.resolve(null);
    let p = this.echoes.get(a.id);
    if (!p) {
      p = this.writeEcho(project, a).finally(() => this.echoes.delete(a.id));
      this.echoes.set(a.id, p);
    }
    return p;
  }

  private async writeEcho(project: string, a: OneApproval): Promise<number | null> {
    const { thread, session, rid } = a.scope;
    if (!thread || !session || !rid || !THREAD_PATTERN.test(thread)) return null;
    const board = await this.board(thread, project);
    if (fleetApprovalId(board.stream, session, rid) !== a.id) return null;
    await board.fresh();
    const s = board.state.sessions.find((x) => x.id === session);
    const held = s?.approvals.find((x) => x.rid === rid);
    if (!s || s.state === 'ended' || !held || held.state !== 'pending') return null;
    const decided = a.status === 'allowed' || a.status === 'denied';
    const body = {
      type: 'session.approval',
      id: session,
      rid,
      session: s.name,
      tool: held.tool,
      state: a.status === 'allowed' ? 'allowed' : 'denied',
      name: (decided ? a.decidedBy : this.echoNames.get(a.id)) || FLEET_NO_DECISION,
      ts: Date.now(),
    };
    const r = await this.store.append(board.stream, [{ type: body.type, body: JSON.stringify(body) }], { idempotencyKey: `approval:${a.id}` });
    await board.folded(r.last);
    return r.last;
  }

  /**
   * POST /fleet/:thread/requests: a member asks the thread's bridge
   * to start a session (`request.start`), or the bridge says it will not
   * (`request.refused`). Stored on the thread's stream, where the sessions
   * fold ignores it and the bridge acts on it (docs/bridge.md). Identity is
   * the transport's, as for every session event. Answers `{ok, id, position,
   * duplicate}`; a start request for an id already on the board is a 409.
   */
  postRequest = async ({ req, res, params, body: r0, key }: Ctx<StartRequest | RefusedRequest>): Promise<void> => {
    if (r0.type === 'request.start') await this.budgetGate(projectFor(req), params.thread);
    const r = await this.request(projectFor(req), params.thread, this.identify(req), r0, key);
    sendJson(res, 200, { ok: true, ...r });
  };

  /** 409 with the budget's reason when a spent budget covers the thread's sessions (the project's, or the team the bridge books them to). */
  private async budgetGate(project: string, thread: string): Promise<void> {
    if (!this.opts.usage) return;
    const why = (await this.opts.usage(project)).pauseReason({ teams: [fleetTeam(thread)] });
    if (why) throw new HttpError(409, 'conflict', `the bridge takes no new command: ${why}`);
  }

  /** A request to the thread's bridge as `who` (the route's, and the server's own: `requestAs`). */
  private async request(project: string, thread: string, who: Caller, r0: StartRequest | RefusedRequest, key: RequestKey | null): Promise<{ id: string; position: number; duplicate: boolean }> {
    const board = await this.board(thread, project);
    await board.fresh();
    const known = board.state.sessions.find((x) => x.id === r0.id);
    // A start for a session already on the board asks for nothing (the retry of
    // a request whose answer was lost is recognised by its key below).
    const conflict = r0.type === 'request.start' && known ? new HttpError(409, 'conflict', `session "${r0.id}" already exists; a new session needs a new id`) : null;
    if (conflict && !key) throw conflict;
    const e = withSessionIdentity(r0, { name: who.name, uid: who.uid, ts: Date.now() });
    const events = [{ type: e.type, body: JSON.stringify(e) }];
    const r = await (key ? key.append(this.store, board.stream, events) : this.store.append(board.stream, events));
    await board.folded(r.last);
    if (conflict && !r.duplicate) throw conflict;
    const id = r.duplicate ? ((await storedId(this.store, board.stream, r.first)) ?? r0.id) : r0.id;
    return { id, position: r.first, duplicate: r.duplicate };
  }

  // ------------------------------------------------------------ the server's own sessions (the flock's code crows)

  /**
   * Threads of a project that a bridge follows now, on this node or another
   * sharing the store (bridge presence: a bridge on another node is known
   * from its node's announcements, and forgotten when they stop),
   * `default` first, then by name.
   */
  followed(project: string): string[] {
    const out = new Set<string>();
    for (const p of this.bridgePresence.people(project)) if (THREAD_PATTERN.test(p.name)) out.add(p.name);
    return [...out].sort((a, b) => (a === 'default' ? -1 : b === 'default' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * A start request posted by the server itself as `who`, exactly as a
   * member's through `POST /fleet/:thread/requests` (keyed: a retry, after a
   * restart say, stores nothing and answers the first one's position).
   */
  requestAs(project: string, thread: string, who: Caller, r: StartRequest, rawKey: string): Promise<{ id: string; position: number; duplicate: boolean }> {
    return this.request(project, thread, who, r, serverKey(rawKey, who, () => `${FLEET_STREAM_PREFIX}${thread}:${rawKey}`));
  }

  /**
   * Session events posted by the server itself as `who` (a prompt, an end),
   * checked and judged exactly as a member's `POST /fleet/:thread`. Decisions
   * on approvals are not among them: those are a person's, in the one inbox.
   */
  async postAs(project: string, thread: string, who: Caller, items: Record<string, unknown>[], rawKey: string): Promise<AppendResult> {
    for (const [i, x] of items.entries()) {
      const why = checkSessionEvent(x) ?? (x.type === 'session.approval' ? 'the server does not post approvals' : null);
      if (why) throw new HttpError(400, 'bad_request', `event ${i}: ${why}`);
    }
    const board = await this.board(thread, project);
    await board.fresh();
    return this.appendChecked(null, who, project, board, this.opts.approvals ? await this.opts.approvals.get(project) : null, items, (i) => `event ${i}: `, serverKey(rawKey, who, (stream) => `${stream}:${rawKey}`));
  }

  /**
   * Reads every entry of a thread's board from `after` on, then each new one
   * as this node folds it, in position order and each once; returns the
   * stop. A result's usage rides along when its post was taken by this node
   * (the stored event never keeps it).
   */
  async watch(project: string, thread: string, after: number, w: BoardWatcher): Promise<() => void> {
    const board = await this.board(thread, project);
    let seen = after;
    let held: { e: Record<string, unknown>; position: number; usage?: ResultUsage }[] | null = [];
    const hear: BoardWatcher = (e, position, usage) => {
      if (held) return void held.push({ e, position, usage });
      if (position <= seen) return;
      seen = position;
      w(e, position, usage);
    };
    board.watchers.add(hear);
    const stop = () => void board.watchers.delete(hear);
    try {
      // What was folded before the watch: read from the log, up to the position folded now.
      const upTo = board.pos;
      while (seen < upTo) {
        const page = await this.store.read(board.stream, seen, Math.min(1000, upTo - seen));
        if (page.length === 0) break;
        for (const entry of page) {
          seen = entry.position;
          let e: Record<string, unknown>;
          try {
            e = JSON.parse(entry.body) as Record<string, unknown>;
          } catch {
            continue;
          }
          w(e, entry.position);
        }
      }
    } catch (err) {
      stop();
      throw err;
    }
    const waiting = held;
    held = null;
    for (const h of waiting) hear(h.e, h.position, h.usage);
    return stop;
  }

  /**
   * POST /fleet/:thread/live: a lossy frame (`session.tool`,
   * `session.stream`) relayed at once to the readers of the thread's stream as
   * `event: live` with no `id:` line. Nothing is stored and nothing replays it.
   */
  postLive = async ({ req, res, params, body: live }: Ctx<LiveFrame>): Promise<void> => {
    const who = this.identify(req);
    const board = await this.board(params.thread, projectFor(req));
    const s = board.state.sessions.find((x) => x.id === live.id);
    if (!s) throw new HttpError(404, 'not_found', `no session "${live.id}" on this board`);
    if (s.state === 'ended') throw new HttpError(409, 'conflict', `session "${s.name}" has ended`);
    const frame = withSessionIdentity(live, { name: who.name, uid: who.uid, ts: Date.now() });
    const relayed = board.channel.broadcast('live', JSON.stringify(frame));
    sendJson(res, 200, { ok: true, relayed });
  };

  getState = async ({ req, res, params }: Ctx): Promise<void> => {
    const board = await this.board(params.thread, projectFor(req));
    await board.fresh();
    sendJson(res, 200, { protocol: FLEET_PROTOCOL_VERSION, epoch: this.store.epoch, thread: board.thread, position: board.pos, bridges: this.bridgesOn(projectFor(req), board.thread), ...board.state });
  };

  /** GET /fleet/:thread/rewind?at=: the board folded by the same fold from the nearest kept snapshot up to a past position or time. */
  getRewind = async ({ req, res, url, params }: Ctx): Promise<void> => {
    const at = parseRewindAt(url.searchParams.get('at'));
    const board = await this.board(params.thread, projectFor(req));
    const r = await rewind(this.store, { stream: board.stream, empty: emptySessions, load: (text) => JSON.parse(text) as SnapshotBody, step: (state, entry) => fold(state, entry).state }, at);
    sendJson(res, 200, { protocol: FLEET_PROTOCOL_VERSION, epoch: this.store.epoch, thread: board.thread, position: r.position, at: r.at, head: r.head, first: r.first, ...r.state });
  };

  getStream = async ({ req, res, url, params }: Ctx): Promise<void> => {
    const project = projectFor(req);
    const board = await this.board(params.thread, project);
    // A bridge says so when it follows (`Roost-Client: bridge`): the board can tell members whether anyone will start their
    // sessions, on every node (bridge presence), and the flock can send code items to it.
    const bridge = req.headers['roost-client'] === 'bridge';
    const id = randomBytes(9).toString('base64url');
    const follows = (yes: boolean) => {
      if (yes) this.bridgeConns.set(id, { project, thread: board.thread });
      else this.bridgeConns.delete(id);
      this.bridgePresence.changed(project);
    };
    if (bridge) follows(true);
    // A bridge following its board holds its approval requests: when it goes, they are withdrawn (docs/approvals.md).
    const holder = bridge && this.opts.holders ? bridgeHolder(req, this.identify(req)) : '';
    const release = holder ? this.opts.holders!.hold(holder) : null;
    let conn;
    try {
      conn = await this.opts.live.serve(req, res, url, grantOf(req) ?? LOCAL_OWNER, [board.channel.scope]);
    } catch (e) {
      if (bridge) follows(false);
      release?.();
      throw e;
    }
    if (!bridge) return;
    conn.onEnd(() => {
      release?.();
      follows(false);
    });
  };
}

/** A board's stream (FleetService.board). */
function boardStream(project: string, thread: string): string {
  return FLEET_STREAM_PREFIX + (project === DEFAULT_PROJECT ? thread : `${project}:${thread}`);
}

/** The key of a post the server makes itself as `who`, owned by them as a member's would be (keys.ts), with its old form. */
function serverKey(rawKey: string, who: Caller, legacy: (stream: string) => string): RequestKey {
  return new RequestKey(rawKey, who.uid ?? '', undefined, legacy);
}

/** Reads the request the idempotency key first stored (a retry's answer names the original id). */
async function storedId(store: EventStore, stream: string, position: number): Promise<string | undefined> {
  const [e] = await store.read(stream, position - 1, 1);
  try {
    return (JSON.parse(e?.body ?? '{}') as { id?: string }).id;
  } catch {
    return undefined;
  }
}

/** The project the access layer resolved for this request (local mode without a grant: the default). */
function projectFor(req: IncomingMessage): string {
  return grantOf(req)?.project ?? DEFAULT_PROJECT;
}

/** A decision on an approval: `session.approval` allowed or denied. */
function isDecision(x: Record<string, unknown>): boolean {
  return x.type === 'session.approval' && x.state !== 'pending';
}

const THREAD_PARAM: ParamRule = { pattern: THREAD_PATTERN, message: 'a thread id is 1 to 64 letters, digits, "-" or "_"' };

/** A checked post: its items, and how an error names one (`event i: ` in a batch). */
interface Batch {
  items: Record<string, unknown>[];
  where: (i: number) => string;
}

/** One event or a batch of up to MAX_SESSION_BATCH, each checked by the fold's edge check (a bad item refuses the whole batch). */
function checkBatch(body: unknown): Batch {
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0) throw new HttpError(400, 'bad_request', 'the batch is empty');
  if (items.length > MAX_SESSION_BATCH) throw new HttpError(413, 'too_large', `a batch holds at most ${MAX_SESSION_BATCH} events, got ${items.length}`);
  const where = (i: number) => (Array.isArray(body) ? `event ${i}: ` : '');
  for (let i = 0; i < items.length; i++) {
    const why = checkSessionEvent(items[i]);
    if (why) throw new HttpError(400, 'bad_request', where(i) + why);
  }
  return { items: items as Record<string, unknown>[], where };
}

type LiveFrame = { type: string; id: string; tool?: string; text?: string };

/** A core check answering `{ok}` or `{error}`, as a wire body check (the error is a 400). */
function wireOf<T>(check: (x: unknown) => { ok: T } | { error: string }): (x: unknown) => T {
  return (x) => {
    const c = check(x);
    if ('error' in c) throw new HttpError(400, 'bad_request', c.error);
    return c.ok;
  };
}

function newRequestId(): string {
  return 's-' + randomBytes(6).toString('hex');
}
