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

import type { IncomingMessage } from 'node:http';
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
  type SessionsState,
} from '../core/fleet.js';
import { checkLive, checkRequest, checkSessionEvent, normalizeSessionEvent, withSessionIdentity, type RefusedRequest, type StartRequest } from '../core/fleet-wire.js';
import type { EventStore, LogEntry, NewEvent } from '../storage/types.js';
import { HttpError, idempotencyKeyOf, sendJson } from './http.js';
import { route, type Ctx, type ParamRule, type Route } from './route.js';
import type { ChannelOptions, Live, ScopeSpec } from './live.js';
import { FoldedStream, OnFoldHost } from './folded.js';
import { projectKey } from './floor.js';
import { DEFAULT_PROJECT, LOCAL_OWNER, grantOf } from './access.js';
import { randomBytes } from 'node:crypto';

/** A thread's stream is `sessions:<thread>` (default project) or `sessions:<project>:<thread>`: stored names, kept. */
export const FLEET_STREAM_PREFIX = 'sessions:';
/** A thread id has the form of a session id. */
export const THREAD_PATTERN = SESSION_ID_PATTERN;
export const MAX_SESSION_BATCH = 200;
/** A session event is small; prompts and turns are capped at 20,000 characters. */
const MAX_BODY = 512 * 1024;

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
  /** Bridges following this board on this node (presence, not durable: see docs/bridge.md). */
  bridges = 0;

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
          JSON.stringify({ protocol: FLEET_PROTOCOL_VERSION, epoch: store.epoch, thread: this.thread, position, reset, state, bridges: this.bridges }),
        stored: {
          every: opts.snapshotEvery,
          body: (state, position) => JSON.stringify({ position, state } satisfies SnapshotBody),
          load: (text) => JSON.parse(text) as SnapshotBody,
          label: 'fleet snapshot',
        },
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }


  /** Tells live readers how many bridges follow the board now (a lossy frame). */
  announceBridges(): void {
    this.channel.broadcast('live', JSON.stringify({ type: 'bridges', count: this.bridges }));
  }
}

export class FleetService {
  private boards = new Map<string, Promise<Board>>();
  private loaded = new Map<string, Board>();
  private unlisten: (() => void) | null = null;
  private identify: (req: IncomingMessage) => Caller;

  constructor(
    private store: EventStore,
    private opts: FleetOptions,
  ) {
    this.identify = opts.identify ?? localCaller;
  }

  start(): void {
    this.unlisten = this.store.onCommit((stream, head, entries) => {
      if (!stream.startsWith(FLEET_STREAM_PREFIX)) return;
      this.loaded.get(stream.slice(FLEET_STREAM_PREFIX.length))?.onCommit(head, entries);
    });
  }

  async stop(): Promise<void> {
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
      route({ method: 'POST', path: '/fleet/:thread', auth: 'editor', params: thread, body: { wire: checkBatch }, maxBody: MAX_BODY, handler: this.post }),
      route({ method: 'GET', path: '/fleet/:thread/stream', auth: 'viewer', params: thread, stream: true, handler: this.getStream }),
      route({ method: 'POST', path: '/fleet/:thread/requests', auth: 'editor', params: thread, body: { wire: wireOf((x) => checkRequest(x, newRequestId)) }, handler: this.postRequest }),
      route({ method: 'POST', path: '/fleet/:thread/live', auth: 'editor', params: thread, body: { wire: wireOf(checkLive) }, maxBody: 64 * 1024, handler: this.postLive }),
    ];
  }

  post = async ({ req, res, params, body: batch }: Ctx<Batch>): Promise<void> => {
    const { items, where } = batch;
    const who = this.identify(req);
    const rawKey = idempotencyKeyOf(req);
    const board = await this.board(params.thread, projectFor(req));
    const key = rawKey && `${board.stream}:${rawKey}`;
    await board.fresh();
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
    const r = await this.store.append(board.stream, events, { idempotencyKey: key });
    await board.folded(r.last);
    if (conflict && !r.duplicate) throw conflict;
    sendJson(res, 200, { ok: true, accepted: r.last - r.first + 1, first: r.first, last: r.last, duplicate: r.duplicate });
  };

  /**
   * POST /fleet/:thread/requests: a member asks the thread's bridge
   * to start a session (`request.start`), or the bridge says it will not
   * (`request.refused`). Stored on the thread's stream, where the sessions
   * fold ignores it and the bridge acts on it (docs/bridge.md). Identity is
   * the transport's, as for every session event. Answers `{ok, id, position,
   * duplicate}`; a start request for an id already on the board is a 409.
   */
  postRequest = async ({ req, res, params, body: r0 }: Ctx<StartRequest | RefusedRequest>): Promise<void> => {
    const thread = params.thread;
    const who = this.identify(req);
    const rawKey = idempotencyKeyOf(req);
    const key = rawKey && `${FLEET_STREAM_PREFIX}${thread}:${rawKey}`;
    const board = await this.board(thread, projectFor(req));
    await board.fresh();
    const known = board.state.sessions.find((x) => x.id === r0.id);
    // A start for a session already on the board asks for nothing (the retry of
    // a request whose answer was lost is recognised by its key below).
    const conflict = r0.type === 'request.start' && known ? new HttpError(409, 'conflict', `session "${r0.id}" already exists; a new session needs a new id`) : null;
    if (conflict && !key) throw conflict;
    const e = withSessionIdentity(r0, { name: who.name, uid: who.uid, ts: Date.now() });
    const r = await this.store.append(board.stream, [{ type: e.type, body: JSON.stringify(e) }], { idempotencyKey: key });
    await board.folded(r.last);
    if (conflict && !r.duplicate) throw conflict;
    const id = r.duplicate ? ((await storedId(this.store, board.stream, r.first)) ?? r0.id) : r0.id;
    sendJson(res, 200, { ok: true, id, position: r.first, duplicate: r.duplicate });
  };

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
    sendJson(res, 200, { protocol: FLEET_PROTOCOL_VERSION, epoch: this.store.epoch, thread: board.thread, position: board.pos, bridges: board.bridges, ...board.state });
  };

  getStream = async ({ req, res, url, params }: Ctx): Promise<void> => {
    const board = await this.board(params.thread, projectFor(req));
    // A bridge says so when it follows (`Roost-Client: bridge`): the board can tell members whether anyone will start their sessions.
    const bridge = req.headers['roost-client'] === 'bridge';
    if (bridge) board.bridges++;
    let conn;
    try {
      conn = await this.opts.live.serve(req, res, url, grantOf(req) ?? LOCAL_OWNER, [board.channel.scope]);
    } catch (e) {
      if (bridge) board.bridges--;
      throw e;
    }
    if (!bridge) return;
    conn.onEnd(() => {
      board.bridges--;
      board.announceBridges();
    });
    board.announceBridges();
  };
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
