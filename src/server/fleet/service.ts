// The fleet app on the server (the fleet board): one log stream per thread,
// `sessions:<thread>` (the stream keeps the name it always had in the log),
// folded by the shared fleet fold (src/core/fleet.ts). The folder by job:
//   names.ts      streams, threads, callers, holders, approval ids, teams; the options
//   board.ts      one thread's board (its fold, snapshots, channel, watchers)
//   approvals.ts  the board's side of the one approvals model (ask, withdraw, decide, echo)
//   service.ts    the boards, bridge presence, checked appends, the server's own posts (this file)
//   routes.ts     the HTTP routes (/fleet/:thread...), over this service
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
import { randomBytes } from 'node:crypto';
import { reduceSessions, sessionEventConflict, type Approval, type SessionConflict, type SessionsState } from '../../core/fleet.js';
import { checkSessionEvent, normalizeSessionEvent, resultUsageOf, withSessionIdentity, type RefusedRequest, type ResultUsage, type StartRequest } from '../../core/fleet-wire.js';
import { boardView } from '../../core/fleet-approvals.js';
import type { AppendResult, EventStore, NewEvent } from '../../storage/types.js';
import { HttpError } from '../http.js';
import { RequestKey } from '../keys.js';
import type { ScopeSpec } from '../live/index.js';
import { projectKey } from '../floor.js';
import { DEFAULT_PROJECT, LOCAL_OWNER, grantOf } from '../access.js';
import type { ApprovalService } from '../approvals.js';
import { PRESENCE_EXPIRE_MS, Presence } from '../presence.js';
import { BoardApprovals } from './approvals.js';
import { Board } from './board.js';
import {
  BRIDGES_TOPIC,
  FLEET_STREAM_PREFIX,
  boardStream,
  THREAD_PATTERN,
  bridgeHolder,
  fleetApprovalId,
  fleetTeam,
  localCaller,
  projectOfKey,
  type BoardWatcher,
  type Caller,
  type FleetOptions,
} from './names.js';

export class FleetService {
  private boards = new Map<string, Promise<Board>>();
  private loaded = new Map<string, Board>();
  private unlisten: (() => void) | null = null;
  /** Who the caller is (FleetOptions.identify, or local mode's `localCaller`). */
  readonly identify: (req: IncomingMessage) => Caller;
  /** The board's side of the one approvals model: asks, withdrawals, the decision alias, the echo. */
  readonly boardApprovals: BoardApprovals;
  /** This node's bridge connections (a random id each) → the board they follow. */
  private bridgeConns = new Map<string, { project: string; thread: string }>();
  /**
   * Which boards bridges follow, on every node sharing the store (the generic
   * presence over the store's broadcast: docs/scale-out.md): per project,
   * one entry per bridge connection, its name the thread.
   */
  private bridgePresence: Presence;

  constructor(
    readonly store: EventStore,
    private opts: FleetOptions,
  ) {
    this.identify = opts.identify ?? localCaller;
    this.boardApprovals = new BoardApprovals(store, (thread, project) => this.board(thread, project));
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
  bridgesOn(project: string, thread: string): number {
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
      const b = new Board(thread, boardStream(project, thread), `fleet:${project}/${thread}`, this.store, this.opts);
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
   * project: the board's request (its tool and digest) with its state and
   * decider from the one approvals fold, both caught up with the log (so a
   * post another node answered a moment ago is seen), or null when that
   * session has no such request. Work checks a blocked execution's pointer
   * with it.
   */
  async approvalOf(project: string, thread: string, session: string, rid: string): Promise<Approval | null> {
    const board = await this.board(thread, project);
    await board.fresh();
    const request = board.state.sessions.find((s) => s.id === session)?.approvals.find((a) => a.rid === rid);
    if (!request) return null;
    // Its fate is the approvals fold's (src/core/fleet-approvals.ts), caught up with the log too.
    const approvals = this.opts.approvals ? await this.opts.approvals.get(project) : null;
    if (!approvals) return request;
    await approvals.fresh();
    return boardView(request, approvals.state.byId.get(fleetApprovalId(board.stream, session, rid)));
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

  /**
   * Session events (checked by the edge's check) appended as `who`: the
   * transport's identity stamped, the batch judged against the board in
   * order, new approval requests asked first, a result's usage counted. What
   * a member's, a bridge's and the server's own posts (the flock's code
   * crows, `postAs`) all go through. Throws the conflict as an HttpError.
   */
  async appendChecked(
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
    const trusted = req && approvals && events.some((e) => e.type === 'session.approval') ? await this.boardApprovals.ask(req, who, board, approvals, before, scratch, items) : [];
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
    if (approvals && events.some((e) => e.type === 'session.end')) await this.boardApprovals.withdrawEnded(board, approvals, before);
    // A call allowed by earned trust: its echo follows the request onto the board (the bridge lets it run).
    for (const a of trusted) await this.boardApprovals.echo(project, a);
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

  /** 409 with the budget's reason when a spent budget covers the thread's sessions (the project's, or the team the bridge books them to). */
  async budgetGate(project: string, thread: string): Promise<void> {
    if (!this.opts.usage) return;
    const why = (await this.opts.usage(project)).pauseReason({ teams: [fleetTeam(thread)] });
    if (why) throw new HttpError(409, 'conflict', `the bridge takes no new command: ${why}`);
  }

  /** A request to the thread's bridge as `who` (the route's, and the server's own: `requestAs`). */
  async request(project: string, thread: string, who: Caller, r0: StartRequest | RefusedRequest, key: RequestKey | null): Promise<{ id: string; position: number; duplicate: boolean }> {
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

  /** The project's approvals (the one model), or null for a board alone (tests of the fold's rules). */
  async approvalsOf(project: string): Promise<ApprovalService | null> {
    return this.opts.approvals ? this.opts.approvals.get(project) : null;
  }

  /**
   * GET /fleet/:thread/stream: the board's live scope on a connection of its
   * own; a bridge following it (`Roost-Client: bridge`) is counted in the
   * bridge presence and holds its approval requests while it stays.
   */
  async serveStream(req: IncomingMessage, res: ServerResponse, url: URL, project: string, thread: string): Promise<void> {
    const board = await this.board(thread, project);
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
  }
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

/** The key of a post the server makes itself as `who`, owned by them as a member's would be (keys.ts), with its old form. */
function serverKey(rawKey: string, who: Caller, legacy: (stream: string) => string): RequestKey {
  return new RequestKey(rawKey, who.uid ?? '', undefined, legacy);
}
