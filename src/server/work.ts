// The Work app on the server (docs/work.md): per-project streams
// `work:<project>`, one private stream per person `work:private:<uid>` (General
// Chat), and the Space registry `work:spaces`, each folded by the shared Work
// fold (src/core/work.ts) and served under /api/v2.
//
// One mutation rule: a handler checks the caller through `Access`, builds its
// events, appends them to one stream in one append (atomic, durable on return,
// with the request's Idempotency-Key), waits until this node has folded them,
// and answers from the stored events. The fold derives everything else
// (queues, agent state, chat lines). A retry with the same key stores nothing
// and answers from the events the first request stored, so it gets the same
// result, even a refusal (a refused keyed request stores a small
// `request.refused` marker for that reason).
//
// Live: `GET /api/v2/events` is a LiveChannel per stream; each log entry
// becomes one SSE frame per aggregate it changed (`conversation.changed`,
// `agent.changed`, `execution.changed`, `result.changed`, `project.changed`),
// all with the entry's id and carrying only `{id, rev}`. Presence, role
// changes and terminal output are observation, not history: they ride the
// lossy `GET /api/v2/live` stream and are never stored.
//
// Presence across nodes: each node announces who holds an events stream on
// it, per project, over the store's lossy broadcast (on change, and again
// every PRESENCE_REPEAT_MS); every node keeps what it heard from the others
// and forgets a node not heard for PRESENCE_EXPIRE_MS (one that died).
// Presence is the union of this node's and the others'.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  GENERAL,
  WORK_LIMITS,
  WORK_PROTOCOL_VERSION,
  agentIdOf,
  applySpaceRegistry,
  applyWork,
  dueCommands,
  emptyWork,
  mayCommand,
  type PendingApproval,
  type SpaceRecord,
  type WorkChange,
  type WorkState,
} from '../core/work.js';
import { line as boardLine } from '../core/sessions.js';
import { BROADCAST_MAX_BYTES, type EventStore, type LogEntry, type NewEvent } from '../storage/types.js';
import { HttpError, idempotencyKeyOf, readJson, sendJson, type Router } from './http.js';
import { LiveChannel, sseFrame, type Frame, type LiveOptions } from './live.js';
import { StreamFollower, rebuildFrames } from './follower.js';
import { LocalAccess, atLeast, projectOf, type Access, type Principal, type Role } from './access.js';

export const WORK_PREFIX = 'work:';
export const SPACES_STREAM = 'work:spaces';
const PRIVATE_PREFIX = 'work:private:';
const PROJECT_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A board thread, session or approval id (the board's pattern). */
const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BODY = 256 * 1024;

export interface ProjectInfo {
  id: string;
  name: string;
}

/**
 * What Work reads of the fleet board (the sessions service): the request a
 * blocked execution points at, as the board holds it (caught up with the
 * log), or null when the board has no such request in that session.
 */
export interface BoardReader {
  approvalOf(project: string, thread: string, session: string, rid: string): Promise<{ tool: string; digest: string; state: string; by: string } | null>;
  /** The uid that spawned a board session, or null. */
  spawnerOf(project: string, thread: string, session: string): Promise<string | null>;
}

export interface WorkOptions {
  live: Omit<LiveOptions, 'epoch'>;
  maxReplay: number;
  access?: Access;
  /** The fleet board, to check a blocked execution's approval pointer against (without it, pointers are refused). */
  boards?: BoardReader;
  /**
   * The projects that exist (shared mode: the identity state's; local mode:
   * `default`). Work streams of other ids are refused with 404.
   */
  projects?: () => ProjectInfo[];
  /** How long another node's presence lasts without a repeat (default PRESENCE_EXPIRE_MS, 30 s). */
  presenceExpireMs?: number;
}

const LOCAL_PROJECTS: ProjectInfo[] = [{ id: 'default', name: 'Default' }];

function rid(prefix: string): string {
  return prefix + randomBytes(9).toString('base64url');
}

function parse(body: string): Record<string, unknown> {
  try {
    const v = JSON.parse(body);
    return typeof v === 'object' && v !== null ? v : {};
  } catch {
    return {};
  }
}

// ------------------------------------------------------------ one stream's fold

function framesOf(epoch: string, position: number, changes: WorkChange[]): Buffer {
  if (changes.length === 0) return Buffer.alloc(0);
  return Buffer.concat(changes.map((c) => sseFrame(epoch, position, `${c.family}.changed`, `{"id":${JSON.stringify(c.id)},"rev":${position}}`)));
}

/** One Work stream folded in memory, with its live channel. */
class Book {
  state: WorkState = emptyWork();
  private follower: StreamFollower;
  readonly channel: LiveChannel;
  /** Hears every folded entry (the Space command feeds use it). */
  listeners = new Set<(changes: WorkChange[]) => void>();

  constructor(
    readonly stream: string,
    readonly scope: { project: string } | { private: string },
    private store: EventStore,
    private opts: WorkOptions,
  ) {
    this.channel = new LiveChannel(
      { position: () => this.pos, snapshot: (reset) => this.snapshotFrame(reset), replay: (a, u) => this.replay(a, u) },
      { ...opts.live, epoch: store.epoch },
    );
    this.follower = new StreamFollower(store, stream, { apply: (e) => this.apply(e) });
  }

  get pos(): number {
    return this.follower.position;
  }

  start(): Promise<void> {
    return this.follower.catchUp();
  }

  /** A commit of this book's stream (the service routes them: one listener for every book). */
  onCommit(head: number, entries: LogEntry[] | null): void {
    this.follower.onCommit(head, entries);
  }

  folded(position: number): Promise<void> {
    return this.follower.folded(position);
  }

  fresh(): Promise<void> {
    return this.follower.fresh();
  }

  /** Folds one entry (the follower calls it in position order; `pos` is already the entry's, which listeners read). */
  private apply(entry: LogEntry): void {
    const r = applyWork(this.state, parse(entry.body), entry.position);
    this.state = r.state;
    this.channel.publish({ position: entry.position, bytes: framesOf(this.store.epoch, entry.position, r.changes) });
    if (r.changes.length) for (const l of this.listeners) l(r.changes);
  }

  snapshot(reset: boolean): Record<string, unknown> {
    const s = this.state;
    return {
      protocol: WORK_PROTOCOL_VERSION,
      epoch: this.store.epoch,
      ...('project' in this.scope ? { scope: 'project', project: this.scope.project } : { scope: 'private' }),
      position: this.pos,
      lastEventId: `${this.store.epoch}:${this.pos}`,
      reset,
      spaces: Object.values(s.spaces),
      conversations: Object.values(s.conversations),
      agents: Object.values(s.agents),
      commands: Object.values(s.commands),
      executions: Object.values(s.executions),
      results: Object.values(s.results),
    };
  }

  private snapshotFrame(reset: boolean): Frame {
    return { position: this.pos, bytes: sseFrame(this.store.epoch, this.pos, 'snapshot', JSON.stringify(this.snapshot(reset))) };
  }

  /** Frames (after, upTo], rebuilt by folding the log from the start (Work streams are small). */
  private async replay(after: number, upTo: number): Promise<Frame[] | null> {
    if (upTo - after > this.opts.maxReplay || upTo > this.opts.maxReplay * 4) return null;
    return rebuildFrames(this.store, this.stream, { state: emptyWork(), position: 0 }, after, upTo, (state, e) => {
      const r = applyWork(state, parse(e.body), e.position);
      return { state: r.state, bytes: framesOf(this.store.epoch, e.position, r.changes) };
    });
  }
}

// ------------------------------------------------------------ lossy observers

interface Watcher {
  res: ServerResponse;
  p: Principal;
  project: string | null;
  agent: string | null;
  /** Counts toward presence (an events stream), or only watches (the live stream). */
  present: boolean;
  /** Writes a lossy frame (events streams write to the socket, as their LiveChannel does). */
  write: (frame: string) => void;
}

function lossy(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

// ------------------------------------------------------------ presence across nodes

/** The broadcast topic of Work presence: `{project, people, part, parts}`, or `{ask: true}` from a node that just started. */
const PRESENCE_TOPIC = 'work.presence';
/**
 * Another node's presence not repeated for this long is forgotten: that node
 * died or cannot reach the database (`WorkOptions.presenceExpireMs`). A node
 * repeats what it announced every third of it, so it is alive to the others.
 */
export const PRESENCE_EXPIRE_MS = 30_000;
/** At most this many parts per project and node (each up to a broadcast's size): several hundred people. */
const PRESENCE_MAX_PARTS = 64;

interface Person {
  uid: string;
  name: string;
}

/** One other node's presence in one project, as last heard (in parts, when it did not fit one broadcast). */
interface Heard {
  parts: number;
  chunks: Map<number, Person[]>;
  /** When it was last heard, by this node's monotonic clock (performance.now(), ms): never the sender's. */
  at: number;
}

function byName(a: Person, b: Person): number {
  return a.name.localeCompare(b.name) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
}

/** The people of one announcement, split into payloads that each fit a broadcast (at least one, possibly empty). */
function presencePayloads(project: string, people: Person[]): string[] {
  const budget = BROADCAST_MAX_BYTES - 200; // the envelope: project id, part numbers
  const chunks: Person[][] = [[]];
  let used = 0;
  for (const p of people) {
    const size = Buffer.byteLength(JSON.stringify(p)) + 1;
    if (used + size > budget && chunks[chunks.length - 1].length) {
      if (chunks.length === PRESENCE_MAX_PARTS) break;
      chunks.push([]);
      used = 0;
    }
    chunks[chunks.length - 1].push(p);
    used += size;
  }
  return chunks.map((c, i) => JSON.stringify({ project, part: i, parts: chunks.length, people: c }));
}

/** Another node's announcement, re-validated (a broadcast is not trusted more than any input). */
function parsePresence(payload: string): { ask: true } | { project: string; part: number; parts: number; people: Person[] } | null {
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const m = v as Record<string, unknown>;
  if (m.ask === true) return { ask: true };
  const { project, part, parts, people } = m;
  if (typeof project !== 'string' || !PROJECT_ID.test(project)) return null;
  if (!Number.isInteger(parts) || (parts as number) < 1 || (parts as number) > PRESENCE_MAX_PARTS) return null;
  if (!Number.isInteger(part) || (part as number) < 0 || (part as number) >= (parts as number)) return null;
  if (!Array.isArray(people)) return null;
  const out: Person[] = [];
  for (const x of people.slice(0, 2000)) {
    const { uid, name } = (typeof x === 'object' && x !== null ? x : {}) as Record<string, unknown>;
    if (typeof uid === 'string' && uid && typeof name === 'string') out.push({ uid: uid.slice(0, 200), name: name.slice(0, 200) });
  }
  return { project, part: part as number, parts: parts as number, people: out };
}

// ------------------------------------------------------------ the service

export class WorkService {
  private books = new Map<string, Promise<Book>>();
  private loaded = new Map<string, Book>();
  private spaces: Record<string, SpaceRecord> = {};
  private spacesPos = 0;
  private watchers = new Set<Watcher>();
  private feeds = new Set<{ space: string; res: ServerResponse; last: string; p: Principal }>();
  private unlisten: (() => void) | null = null;
  private unaccess: (() => void) | null = null;
  readonly access: Access;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Other nodes' presence: node (the store's sender name) → project → what it announced. */
  private heard = new Map<string, Map<string, Heard>>();
  /** What this node last announced, per project where someone is present here (the people, as JSON). */
  private announced = new Map<string, string>();
  /** Projects whose presence here changed since the last announcement. */
  private presenceDirty = new Set<string>();
  private announcing = false;
  private repeatAsked = false;
  private presenceTimers: NodeJS.Timeout[] = [];
  private unbroadcast: (() => void) | null = null;
  private stopped = false;
  private presenceExpireMs: number;

  constructor(
    private store: EventStore,
    private opts: WorkOptions,
  ) {
    this.access = opts.access ?? new LocalAccess();
    this.presenceExpireMs = opts.presenceExpireMs ?? PRESENCE_EXPIRE_MS;
  }

  /** The /api/v2 routes (docs/work.md). */
  mount(router: Router): Router {
    return router
      .on('GET', '/api/v2/projects', this.getProjects)
      .on('GET', '/api/v2/me', this.getMe)
      .on('GET', '/api/v2/snapshot', this.getSnapshot)
      .on('GET', '/api/v2/events', this.getEvents)
      .on('GET', '/api/v2/live', this.getLive)
      .on('GET', '/api/v2/conversations/:id', this.getConversation)
      .on('POST', '/api/v2/conversations', this.postConversation)
      .on('POST', '/api/v2/conversations/:id/messages', this.postMessage)
      .on('POST', '/api/v2/general/link', this.postLink)
      .on('GET', '/api/v2/agents/:id', this.getAgent)
      .on('POST', '/api/v2/agents/:id/callable', this.postCallable)
      .on('GET', '/api/v2/executions/:id', this.getExecution)
      .on('GET', '/api/v2/results/:id', this.getResult)
      .on('POST', '/api/v2/commands', this.postCommand)
      .on('POST', '/api/v2/commands/:id/cancel', this.postCancel)
      .on('GET', '/api/v2/spaces', this.getSpaces)
      .on('POST', '/api/v2/spaces', this.postSpace)
      .on('POST', '/api/v2/spaces/:id/agents', this.postAgents)
      .on('POST', '/api/v2/spaces/:id/executions', this.postExecution)
      .on('POST', '/api/v2/spaces/:id/terminal', this.postTerminal)
      .on('GET', '/api/v2/spaces/:id/commands', this.getFeed)
      .on('POST', '/api/v2/projects/:project/spaces', this.postContribute)
      .on('POST', '/api/v2/projects/:project/spaces/:space/revoke', this.postRevoke);
  }

  private projectList(): ProjectInfo[] {
    return this.opts.projects ? this.opts.projects() : LOCAL_PROJECTS;
  }

  /** Loads the Space registry and every known project's stream (so Space feeds see every contribution). */
  async start(): Promise<void> {
    this.unlisten = this.store.onCommit((stream, head, entries) => {
      if (!stream.startsWith(WORK_PREFIX)) return;
      if (stream === SPACES_STREAM) {
        void this.readSpaces();
        return;
      }
      this.loaded.get(stream)?.onCommit(head, entries);
    });
    await this.readSpaces();
    for (const p of this.projectList()) await this.book(p.id);
    this.unaccess = this.access.onChange((project, uid) => this.roleChanged(project, uid));
    this.heartbeat = setInterval(() => {
      for (const w of this.watchers) if (!w.present) w.write(':\n\n');
      for (const f of this.feeds) f.res.write(':\n\n');
    }, this.opts.live.heartbeatMs);
    this.heartbeat.unref();
    this.startPresence();
  }

  async stop(): Promise<void> {
    this.stopPresence();
    this.unlisten?.();
    this.unaccess?.();
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const b of this.loaded.values()) b.channel.stop();
    for (const w of this.watchers) w.res.end();
    for (const f of this.feeds) f.res.end();
    await Promise.allSettled([...this.books.values()]);
  }

  private spacesReading: Promise<void> | null = null;
  private readSpaces(): Promise<void> {
    if (this.spacesReading) return this.spacesReading.then(() => this.readSpaces());
    this.spacesReading = (async () => {
      try {
        for (;;) {
          const batch = await this.store.read(SPACES_STREAM, this.spacesPos, 5000);
          for (const e of batch) {
            this.spaces = applySpaceRegistry(this.spaces, parse(e.body));
            this.spacesPos = e.position;
          }
          if (batch.length < 5000) break;
        }
      } finally {
        this.spacesReading = null;
      }
    })();
    return this.spacesReading;
  }

  book(project: string): Promise<Book> {
    return this.bookOf(WORK_PREFIX + project, { project });
  }

  privateBook(uid: string): Promise<Book> {
    return this.bookOf(PRIVATE_PREFIX + uid, { private: uid });
  }

  private bookOf(stream: string, scope: Book['scope']): Promise<Book> {
    let p = this.books.get(stream);
    if (!p) {
      const b = new Book(stream, scope, this.store, this.opts);
      this.loaded.set(stream, b);
      if ('project' in scope) b.listeners.add(() => this.pushFeeds());
      else {
        const uid = scope.private;
        b.listeners.add((changes) => {
          const frames = changes.map((c) => lossy('private.changed', { id: c.id, rev: b.pos })).join('');
          for (const w of this.watchers) if (w.p.uid === uid && w.project) w.write(frames);
        });
      }
      p = b.start().then(
        () => b,
        (e) => {
          this.loaded.delete(stream);
          this.books.delete(stream);
          b.channel.stop();
          throw e;
        },
      );
      this.books.set(stream, p);
    }
    return p;
  }

  /** The state of a project as this node has folded it (tests, other apps). */
  async stateOf(project: string): Promise<WorkState> {
    return (await this.book(project)).state;
  }

  // ------------------------------------------------------------ helpers

  private projectOf(url: URL, body?: Record<string, unknown>): string {
    const p = (body && typeof body.project === 'string' ? body.project : null) ?? url.searchParams.get('project') ?? '';
    if (!PROJECT_ID.test(p)) throw new HttpError(400, 'bad_request', 'name a project: ?project=<id> (1 to 64 letters, digits, "-" or "_")');
    if (!this.projectList().some((x) => x.id === p)) throw new HttpError(404, 'not_found', `no such project: ${p}`);
    return p;
  }

  private async principal(req: IncomingMessage): Promise<Principal> {
    const p = await this.access.principal(req);
    if (!p) throw new HttpError(401, 'unauthorized', 'sign in, or send a token (Authorization: Bearer ...)');
    return p;
  }

  private key(req: IncomingMessage, stream: string, uid: string): string | undefined {
    const raw = idempotencyKeyOf(req);
    return raw && `${stream}|${uid}|${raw}`;
  }

  /**
   * Appends `events` to the book's stream in one append and returns the
   * stored bodies (the first request's, when the key was seen before).
   * `refusal`: the conflict found against the current state; with a key the
   * request may be the retry of one that was applied, so the store decides.
   */
  private async commit(book: Book, events: Record<string, unknown>[], key: string | undefined, refusal: HttpError | null): Promise<Record<string, unknown>[]> {
    if (refusal && !key) throw refusal;
    const toStore: NewEvent[] = refusal
      ? [{ type: 'request.refused', body: JSON.stringify({ type: 'request.refused', status: refusal.status, kind: refusal.kind, message: refusal.message }) }]
      : events.map((e) => ({ type: String(e.type), body: JSON.stringify(e) }));
    const r = await this.store.append(book.stream, toStore, { idempotencyKey: key });
    await book.folded(r.last);
    const stored = r.duplicate ? (await this.store.read(book.stream, r.first - 1, r.last - r.first + 1)).map((e) => parse(e.body)) : toStore.map((e) => parse(e.body));
    const refused = stored.find((e) => e.type === 'request.refused');
    if (refused) throw new HttpError(Number(refused.status) || 409, (refused.kind as 'conflict') ?? 'conflict', String(refused.message));
    return stored;
  }

  private who(p: Principal): { uid: string; name: string } {
    return { uid: p.uid, name: p.name };
  }

  private async needSpace(spaceId: string, p: Principal): Promise<SpaceRecord> {
    // Registered on another node a moment ago: read the registry before saying no.
    if (!this.spaces[spaceId] && this.store.capabilities.crossNodeWakeups) await this.readSpaces();
    const sp = this.spaces[spaceId];
    if (!sp) throw new HttpError(404, 'not_found', `no such Space: ${spaceId}`);
    if (sp.owner.uid !== p.uid) throw new HttpError(403, 'forbidden', `the Space "${sp.name}" belongs to ${sp.owner.name}; only its owner's bridge may act for it`);
    return sp;
  }

  /** With several nodes: every loaded project caught up with the log (a contribution made elsewhere a moment ago). */
  private async freshProjects(): Promise<void> {
    if (!this.store.capabilities.crossNodeWakeups) return;
    await Promise.all([...this.loaded.values()].filter((b) => 'project' in b.scope).map((b) => b.fresh()));
  }

  /** The projects (among those loaded) a Space is contributed to now. */
  private contributions(spaceId: string, p?: Principal): Book[] {
    const out: Book[] = [];
    for (const b of this.loaded.values()) {
      if (!('project' in b.scope) || !b.state.spaces[spaceId]?.contributed) continue;
      // A Space acts in a project only while its owner is a member there (and a token only in its own project).
      if (p && this.access.roleIn(p, b.scope.project) === null) continue;
      out.push(b);
    }
    return out;
  }

  // ------------------------------------------------------------ reads

  getProjects = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const p = await this.principal(req);
    const list = this.projectList()
      .map((x) => ({ ...x, role: this.access.roleIn(p, x.id) }))
      .filter((x) => x.role !== null)
      .map((x) => ({ ...x, present: this.presence(x.id) }));
    sendJson(res, 200, { me: this.who(p), projects: list });
  };

  getMe = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const p = await this.principal(req);
    const project = url.searchParams.get('project');
    const role = project ? this.access.roleIn(p, project) : null;
    // Who is present, for a project I may read (on every node: see presence()).
    const present = project && role !== null ? { present: this.presence(project) } : {};
    sendJson(res, 200, { uid: p.uid, name: p.name, kind: p.kind, project, role, ...present });
  };

  /** The book a read is about: `?scope=private` (the caller's General Chat) or `?project=P` (viewer at least). */
  private async readable(req: IncomingMessage, url: URL): Promise<{ book: Book; p: Principal; role: Role | null }> {
    if (url.searchParams.get('scope') === 'private') {
      const p = await this.principal(req);
      return { book: await this.privateBook(p.uid), p, role: null };
    }
    const project = this.projectOf(url);
    const g = await this.access.require(req, project, 'viewer');
    const book = await this.book(project);
    await book.fresh();
    return { book, p: g, role: g.role };
  }

  getSnapshot = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const { book, role } = await this.readable(req, url);
    sendJson(res, 200, { ...book.snapshot(false), role });
  };

  getEvents = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const { book, p, role } = await this.readable(req, url);
    const project = 'project' in book.scope ? book.scope.project : null;
    // One connection per tab: the project's durable frames, and on the same
    // socket the lossy ones (presence, my role, my Spaces, the terminal of
    // `?agent=`, and `private.changed` for my General Chat).
    const sock = req.socket;
    const write = (frame: string) => {
      if (!sock.destroyed && sock.writable) sock.write(frame);
    };
    const w: Watcher = { res, p, project, agent: url.searchParams.get('agent'), present: true, write };
    this.watchers.add(w);
    res.on('close', () => {
      this.watchers.delete(w);
      if (project) this.presenceChanged(project);
    });
    book.channel.subscribe(req, res, url);
    if (project) {
      write(lossy('role', { project, role }));
      this.presenceChanged(project);
    }
  };

  private aggregate(family: 'conversations' | 'agents' | 'executions' | 'results') {
    return async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
      const { book } = await this.readable(req, url);
      const s = book.state;
      const item = s[family][params.id];
      if (!item) throw new HttpError(404, 'not_found', `no such ${family.slice(0, -1)}: ${params.id}`);
      const extra: Record<string, unknown> = {};
      if (family === 'agents') {
        const a = s.agents[params.id];
        extra.queue = a.queue.map((c) => s.commands[c]).filter(Boolean);
        extra.running = a.running ? s.executions[a.running] : null;
        extra.runningCommand = a.running ? s.commands[s.executions[a.running].command] : null;
      }
      if (family === 'conversations') {
        // The commands its prompts refer to, so a reader sees their status (queued, cancelled, done) change with the chat.
        const ids = new Set(s.conversations[params.id].messages.map((m) => m.command).filter((c): c is string => !!c));
        extra.commands = [...ids].map((c) => s.commands[c]).filter(Boolean);
      }
      if (family === 'executions') extra.command = s.commands[s.executions[params.id].command];
      sendJson(res, 200, { position: book.pos, item, ...extra });
    };
  }
  getConversation = this.aggregate('conversations');
  getAgent = this.aggregate('agents');
  getExecution = this.aggregate('executions');
  getResult = this.aggregate('results');

  // ------------------------------------------------------------ conversations

  postConversation = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const body = await this.body(req);
    const project = this.projectOf(url, body);
    const g = await this.access.require(req, project, 'editor');
    const title = textField(body, 'title', WORK_LIMITS.title, true);
    const book = await this.book(project);
    const stored = await this.commit(book, [{ type: 'conversation.created', id: rid('c-'), title, by: this.who(g), at: Date.now() }], this.key(req, book.stream, g.uid), null);
    sendJson(res, 200, { id: stored[0].id, position: book.pos });
  };

  postMessage = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const text = textField(body, 'text', WORK_LIMITS.text, true);
    const cid = params.id;
    let book: Book;
    let p: Principal;
    if (cid === GENERAL) {
      p = await this.principal(req);
      book = await this.privateBook(p.uid);
    } else {
      const project = this.projectOf(url, body);
      p = await this.access.require(req, project, 'editor');
      book = await this.book(project);
      const c = book.state.conversations[cid];
      if (!c) throw new HttpError(404, 'not_found', `no such conversation: ${cid}`);
      if (c.kind === 'agent') throw new HttpError(409, 'conflict', 'an agent chat takes commands: POST /api/v2/commands');
    }
    const stored = await this.commit(book, [{ type: 'message.posted', conversation: cid, text, by: this.who(p), at: Date.now() }], this.key(req, book.stream, p.uid), null);
    const conv = book.state.conversations[cid];
    const seq = conv?.messages.find((m) => m.at === stored[0].at && m.text === stored[0].text && m.by.uid === p.uid)?.seq ?? null;
    sendJson(res, 200, { conversation: cid, seq, position: book.pos });
  };

  /**
   * General Chat starts real work: one of the caller's General Chat messages
   * (`message`: its seq) becomes the first message of a new project
   * conversation, and General Chat gets a link to it. Nothing else of the
   * private chat moves. Two streams, two appends, one key: the project append
   * first (it holds the new id), then the private link; a retry with the key
   * completes whichever half is missing and stores nothing twice.
   */
  postLink = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const body = await this.body(req);
    const project = this.projectOf(url, body);
    const g = await this.access.require(req, project, 'editor');
    const seq = body.message;
    const priv = await this.privateBook(g.uid);
    const general = priv.state.conversations[GENERAL];
    const msg = typeof seq === 'number' ? general?.messages.find((m) => m.seq === seq) : undefined;
    const book = await this.book(project);
    const rawKey = this.key(req, book.stream, g.uid);
    const refusal = !msg || msg.kind !== 'human' || msg.by.uid !== g.uid ? new HttpError(404, 'not_found', `no message ${String(seq)} of yours in General Chat`) : null;
    const title = typeof body.title === 'string' && body.title.trim() ? body.title.trim().slice(0, WORK_LIMITS.title) : (msg?.text.split('\n')[0].slice(0, 80) ?? '');
    const at = Date.now();
    const target = rid('c-');
    const stored = await this.commit(book, [{ type: 'conversation.linked', side: 'project', project, target, title, request: msg?.text ?? '', by: this.who(g), at }], rawKey, refusal);
    const ev = stored[0];
    await this.commit(
      priv,
      [{ type: 'conversation.linked', side: 'private', project, target: ev.target, title: ev.title, by: this.who(g), at: ev.at }],
      rawKey ? `${priv.stream}|${g.uid}|link:${rawKey}` : undefined,
      null,
    );
    sendJson(res, 200, { project, conversation: ev.target, position: book.pos });
  };

  // ------------------------------------------------------------ commands

  postCommand = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const body = await this.body(req);
    const project = this.projectOf(url, body);
    const g = await this.access.require(req, project, 'editor');
    const agent = textField(body, 'agent', WORK_LIMITS.id, true);
    const text = textField(body, 'text', WORK_LIMITS.text, true);
    const book = await this.book(project);
    await book.fresh();
    const why = mayCommand(book.state, agent, g.uid);
    const refusal = why ? new HttpError(why === 'no such agent' ? 404 : 409, why === 'no such agent' ? 'not_found' : 'conflict', `cannot send to ${agent}: ${why}`) : null;
    const stored = await this.commit(book, [{ type: 'command.queued', id: rid('k-'), agent, text, by: this.who(g), at: Date.now() }], this.key(req, book.stream, g.uid), refusal);
    const id = String(stored[0].id);
    const c = book.state.commands[id];
    const a = book.state.agents[agent];
    sendJson(res, 200, { id, position: c?.position ?? null, status: c?.status ?? null, queue: a ? a.queue : [] });
  };

  postCancel = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const project = this.projectOf(url, body);
    const g = await this.access.require(req, project, 'editor');
    const book = await this.book(project);
    const c = book.state.commands[params.id];
    const refusal = !c ? new HttpError(404, 'not_found', `no such command: ${params.id}`) : c.status !== 'queued' ? new HttpError(409, 'conflict', `the command is ${c.status}; only a queued command can be cancelled`) : null;
    await this.commit(book, [{ type: 'command.cancelled', command: params.id, by: this.who(g), at: Date.now() }], this.key(req, book.stream, g.uid), refusal);
    sendJson(res, 200, { id: params.id, status: book.state.commands[params.id]?.status });
  };

  postCallable = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const project = this.projectOf(url, body);
    const g = await this.access.require(req, project, 'editor');
    if (typeof body.callable !== 'boolean') throw new HttpError(400, 'bad_request', '"callable" must be true or false');
    const book = await this.book(project);
    const a = book.state.agents[params.id];
    if (!a) throw new HttpError(404, 'not_found', `no such agent: ${params.id}`);
    const sp = book.state.spaces[a.space];
    if (sp.owner.uid !== g.uid) throw new HttpError(403, 'forbidden', `only ${sp.owner.name}, who owns the Space, may change who can call ${a.label}`);
    await this.commit(book, [{ type: 'agent.callable', agent: a.id, callable: body.callable, by: this.who(g), at: Date.now() }], this.key(req, book.stream, g.uid), null);
    sendJson(res, 200, { id: a.id, callable: book.state.agents[a.id].callable });
  };

  // ------------------------------------------------------------ spaces

  postSpace = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await this.body(req);
    const p = await this.principal(req);
    const name = textField(body, 'name', WORK_LIMITS.name, true);
    const key = this.key(req, SPACES_STREAM, p.uid);
    const ev = { type: 'space.registered', id: rid('s-'), name, by: this.who(p), at: Date.now() };
    const r = await this.store.append(SPACES_STREAM, [{ type: ev.type, body: JSON.stringify(ev) }], { idempotencyKey: key });
    await this.readSpaces();
    const stored = r.duplicate ? parse((await this.store.read(SPACES_STREAM, r.first - 1, 1))[0].body) : ev;
    // The owner's open Work views list their Spaces: tell them (lossy; they refetch).
    for (const w of this.watchers) if (w.p.uid === p.uid && w.project) w.write(lossy('spaces', { space: stored.id }));
    sendJson(res, 200, { id: stored.id, name: stored.name, owner: stored.by, duplicate: r.duplicate });
  };

  getSpaces = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const p = await this.principal(req);
    const mine = Object.values(this.spaces)
      .filter((s) => s.owner.uid === p.uid)
      .map((s) => ({ ...s, projects: this.contributions(s.id).map((b) => (b.scope as { project: string }).project) }));
    sendJson(res, 200, { spaces: mine });
  };

  /** The Space's owner contributes it to a project (editor at least there). */
  postContribute = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const project = this.projectOf(new URL('http://x/?project=' + encodeURIComponent(params.project)));
    const g = await this.access.require(req, project, 'editor');
    const sp = await this.needSpace(textField(body, 'space', WORK_LIMITS.id, true), g);
    const book = await this.book(project);
    const refusal = book.state.spaces[sp.id]?.contributed ? new HttpError(409, 'conflict', `${sp.name} is already contributed to ${project}`) : null;
    await this.commit(book, [{ type: 'space.contributed', space: sp.id, name: sp.name, owner: sp.owner, by: this.who(g), at: Date.now() }], this.key(req, book.stream, g.uid), refusal);
    sendJson(res, 200, { space: sp.id, project, contributed: true });
  };

  /** The Space's owner, or a project owner, revokes future execution. */
  postRevoke = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    req.resume();
    const project = this.projectOf(new URL('http://x/?project=' + encodeURIComponent(params.project)));
    const g = await this.access.require(req, project, 'viewer');
    const book = await this.book(project);
    const sp = book.state.spaces[params.space];
    if (!sp) throw new HttpError(404, 'not_found', `${params.space} was never contributed to ${project}`);
    if (sp.owner.uid !== g.uid && !atLeast(g.role, 'owner')) throw new HttpError(403, 'forbidden', `only ${sp.owner.name} (the Space's owner) or a project owner may revoke it`);
    const refusal = !sp.contributed ? new HttpError(409, 'conflict', `${sp.name} is already revoked`) : null;
    await this.commit(book, [{ type: 'space.revoked', space: sp.id, by: this.who(g), at: Date.now() }], this.key(req, book.stream, g.uid), refusal);
    sendJson(res, 200, { space: sp.id, project, contributed: false });
  };

  /** The contribution a Space's report is about: the named project, or its only one. */
  private async reportBook(spaceId: string, body: Record<string, unknown>, p: Principal): Promise<Book> {
    await this.freshProjects();
    const all = this.contributions(spaceId, p);
    if (all.length === 0 && this.contributions(spaceId).length > 0) throw new HttpError(403, 'forbidden', 'you are no longer a member of the project this Space is contributed to');
    if (typeof body.project === 'string') {
      const b = all.find((x) => (x.scope as { project: string }).project === body.project);
      if (!b) throw new HttpError(409, 'conflict', `this Space is not contributed to project ${body.project} (or was revoked)`);
      return b;
    }
    if (all.length === 1) return all[0];
    throw new HttpError(all.length ? 400 : 409, all.length ? 'bad_request' : 'conflict', all.length ? 'this Space is contributed to several projects: name one ("project")' : 'this Space is not contributed to any project yet');
  }

  /**
   * A Space reports the agents it observes, keyed by stable session id. A
   * `full` report is the Space's whole snapshot (sent first after every
   * connect): agents of this Space missing from it are marked ended. Only
   * real changes are stored (folded on a scratch copy first).
   */
  postAgents = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const p = await this.principal(req);
    const sp = await this.needSpace(params.id, p);
    const book = await this.reportBook(sp.id, body, p);
    await book.fresh();
    if (!Array.isArray(body.agents) || body.agents.length > 200) throw new HttpError(400, 'bad_request', '"agents" must be a list of at most 200 observations');
    const at = Date.now();
    const events: Record<string, unknown>[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < body.agents.length; i++) {
      const o = body.agents[i] as Record<string, unknown>;
      if (typeof o !== 'object' || o === null) throw new HttpError(400, 'bad_request', `agents[${i}] is not an object`);
      const session = o.session;
      if (typeof session !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(session)) throw new HttpError(400, 'bad_request', `agents[${i}].session must be the agent's stable session id (1 to 128 of A-Z a-z 0-9 _ . : -)`);
      seen.add(session);
      if (o.ended === true) events.push({ type: 'agent.ended', space: sp.id, session, reason: typeof o.reason === 'string' ? o.reason.slice(0, WORK_LIMITS.reason) : 'ended', at });
      else
        events.push({
          type: 'agent.observed',
          space: sp.id,
          session,
          ...pick(o, ['label', 'pane', 'cwd', 'mode', 'origin', 'state']),
          at,
        });
    }
    if (body.full === true)
      for (const a of Object.values(book.state.agents))
        if (a.space === sp.id && a.state !== 'ended' && !seen.has(a.session)) events.push({ type: 'agent.ended', space: sp.id, session: a.session, reason: 'gone from the Space', at });
    // Keep only what changes something.
    let scratch = book.state;
    const real = events.filter((e, i) => {
      const r = applyWork(scratch, e, scratch.rev + 1 + i);
      scratch = r.state;
      return r.changes.length > 0;
    });
    const project = (book.scope as { project: string }).project;
    // The answer is the Space's agents as the project now sees them, so a
    // retry (which finds nothing left to change) answers the same.
    if (real.length) await this.commit(book, real, this.key(req, book.stream, p.uid), null);
    sendJson(res, 200, { project, agents: this.spaceAgents(book, sp.id) });
  };

  private spaceAgents(book: Book, space: string): { id: string; session: string; state: string }[] {
    return Object.values(book.state.agents)
      .filter((a) => a.space === space)
      .map((a) => ({ id: a.id, session: a.session, state: a.state }));
  }

  /** A Space reports an execution's lifecycle for a command addressed to one of its agents. */
  postExecution = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const p = await this.principal(req);
    const sp = await this.needSpace(params.id, p);
    const cmdId = textField(body, 'command', WORK_LIMITS.id, true);
    // Revocation stops future execution, not the report of one that runs.
    await this.freshProjects();
    const books = [...this.loaded.values()].filter((b) => 'project' in b.scope && b.state.commands[cmdId]);
    const book = books[0];
    if (!book) throw new HttpError(404, 'not_found', `no such command: ${cmdId}`);
    const c = book.state.commands[cmdId];
    const a = book.state.agents[c.agent];
    if (a.space !== sp.id) throw new HttpError(403, 'forbidden', 'that command is addressed to an agent of another Space');
    const inProject = (book.scope as { project: string }).project;
    if (this.access.roleIn(p, inProject) === null) throw new HttpError(403, 'forbidden', `you are no longer a member of project "${inProject}"; this Space cannot report there`);
    const kind = body.event;
    const types: Record<string, string> = { started: 'execution.started', blocked: 'execution.blocked', resumed: 'execution.resumed', output: 'execution.output', finished: 'execution.finished' };
    if (typeof kind !== 'string' || !types[kind]) throw new HttpError(400, 'bad_request', '"event" is one of started, blocked, resumed, output, finished');
    const ev: Record<string, unknown> = { type: types[kind], command: cmdId, at: Date.now() };
    let refusal: HttpError | null = null;
    if (kind === 'blocked') {
      ev.reason = typeof body.reason === 'string' ? body.reason.slice(0, WORK_LIMITS.reason) : 'waiting for a decision';
      if (body.approval !== undefined) {
        const pointed = await this.approvalPointer(req, url, p, body.approval);
        if ('refusal' in pointed) refusal = pointed.refusal;
        else {
          ev.approval = pointed.pointer;
          // The blocked line says what the board holds, not what the Space wrote.
          ev.reason = boardLine(`needs approval: ${pointed.pointer.tool} ${pointed.pointer.digest}`, WORK_LIMITS.reason);
        }
      }
    }
    if (kind === 'resumed' && body.rid !== undefined) {
      // The approval this resume ends (a blocked execution's pointer is cleared only by its own).
      if (typeof body.rid !== 'string' || !BOARD_ID.test(body.rid)) throw new HttpError(400, 'bad_request', '"rid" must be 1 to 64 letters, digits, "-" or "_"');
      ev.rid = body.rid;
    }
    if (kind === 'output') ev.text = textField(body, 'text', WORK_LIMITS.text, true);
    if (kind === 'finished') {
      ev.status = body.status === 'failed' ? 'failed' : 'done';
      ev.result = typeof body.result === 'string' ? body.result.slice(0, WORK_LIMITS.text) : '';
    }
    const r = applyWork(book.state, ev, book.state.rev + 1);
    refusal ??=
      r.changes.length === 0
        ? new HttpError(409, 'conflict', kind === 'started' ? `command ${cmdId} cannot start: it is ${c.status}${c.status === 'queued' ? ' behind others, or the agent is busy or ended (one at a time, in queue order)' : ''}` : `command ${cmdId} has no ${kind === 'output' ? 'running' : 'matching'} execution to update`)
        : null;
    await this.commit(book, [ev], this.key(req, book.stream, p.uid), refusal);
    const s = book.state;
    const x = s.executions[`x-${cmdId}`];
    sendJson(res, 200, { project: (book.scope as { project: string }).project, execution: x?.id ?? null, state: x?.state ?? null, result: x?.result ?? null });
  };

  /**
   * Where a blocked execution's approval waits: `{thread, session, rid, tool,
   * digest}` of the `session.approval` the bridge posted pending on its board
   * thread. The board's project is not taken from the payload: it is the one
   * the board routes resolve for this same caller (its token's project, else
   * its `Roost-Project`, else the default), where the bridge posted the
   * request; and the caller must be an editor there, as posting it needed.
   * Members decide it on the board's route, which checks their own role.
   *
   * The Space's word is not enough: the board must hold that `rid` pending
   * in that board session, with the same tool and digest (a Space could
   * otherwise show a harmless request and point the buttons at another of
   * its own). The pointer stored is the board's copy. A malformed pointer or
   * a caller with no right to the board throws (400/403, nothing stored); a
   * pointer the board contradicts is a refusal (409), keyed like any other.
   */
  private async approvalPointer(req: IncomingMessage, url: URL, p: Principal, raw: unknown): Promise<{ pointer: PendingApproval } | { refusal: HttpError }> {
    const bad = (why: string) => new HttpError(400, 'bad_request', `"approval" ${why}`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('is {thread, session, rid, tool, digest}');
    const a = raw as Record<string, unknown>;
    const out: Record<string, string> = {};
    for (const f of ['thread', 'session', 'rid']) {
      const v = a[f];
      if (typeof v !== 'string' || !BOARD_ID.test(v)) throw bad(`.${f} must be 1 to 64 letters, digits, "-" or "_"`);
      out[f] = v;
    }
    if (typeof a.tool !== 'string' || !a.tool) throw bad('.tool must be a non-empty string');
    if (a.digest !== undefined && typeof a.digest !== 'string') throw bad('.digest must be a string');
    out.tool = a.tool.slice(0, WORK_LIMITS.tool);
    out.digest = ((a.digest as string | undefined) ?? '').slice(0, WORK_LIMITS.digest);
    const project = projectOf(req, url, p);
    const role = this.access.roleIn(p, project);
    if (!role || !atLeast(role, 'editor')) throw new HttpError(403, 'forbidden', `this Space cannot post approvals on the board of project "${project}" (it needs the editor role there), so it cannot point at one`);
    const refuse = (why: string) => ({ refusal: new HttpError(409, 'conflict', `"approval" ${why}`) });
    if (!this.opts.boards) return refuse('cannot be checked: this server has no fleet board');
    // Read after the bridge's board post was answered; on several nodes the board catches up with the log first.
    const held = await this.opts.boards.approvalOf(project, out.thread, out.session, out.rid);
    const where = `session "${out.session}" on board thread "${out.thread}" of project "${project}"`;
    if (!held) return refuse(`points at request ${out.rid}, which ${where} does not hold`);
    // And the board session must be this caller's: a Space shows its own bridge's requests, never
    // one of another member's sessions on the same board.
    const spawner = await this.opts.boards.spawnerOf(project, out.thread, out.session);
    if (spawner !== p.uid) return refuse(`points at ${where}, which this caller did not start (a Space points only at its own bridge's sessions)`);
    if (held.state !== 'pending') return refuse(`points at request ${out.rid} of ${where}, which was already ${held.state}${held.by ? ` by ${held.by}` : ''}`);
    if (boardLine(out.tool, WORK_LIMITS.tool) !== held.tool || boardLine(out.digest, WORK_LIMITS.digest) !== held.digest)
      return refuse(`says ${out.tool} ${out.digest}, but request ${out.rid} of ${where} is ${held.tool} ${held.digest}`);
    return { pointer: { project, thread: out.thread, session: out.session, rid: out.rid, tool: held.tool, digest: held.digest } };
  }

  /** Lossy terminal output of one agent, relayed to whoever watches it; never stored. */
  postTerminal = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const p = await this.principal(req);
    const sp = await this.needSpace(params.id, p);
    const session = textField(body, 'session', WORK_LIMITS.id, true);
    const data = textField(body, 'data', 64 * 1024, true);
    const agent = agentIdOf(sp.id, session);
    let sent = 0;
    for (const w of this.watchers) {
      if (w.agent !== agent || !w.project) continue;
      if (!this.loaded.get(WORK_PREFIX + w.project)?.state.agents[agent]) continue;
      w.write(lossy('terminal', { agent, data }));
      sent++;
    }
    sendJson(res, 200, { delivered: sent });
  };

  /**
   * The commands a Space should run now: for each of its idle agents in every
   * project it is contributed to, the head of the queue. The whole due set is
   * sent on connect and whenever it changes, so a reconnect replays exactly
   * what has not been started (`execution.started` acknowledges a command).
   * Each frame also names the projects the Space acts in now.
   */
  getFeed = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const p = await this.principal(req);
    const sp = await this.needSpace(params.id, p);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write('retry: 1000\n\n');
    const f = { space: sp.id, res, last: '', p };
    this.feeds.add(f);
    res.on('close', () => this.feeds.delete(f));
    this.pushFeed(f);
  };

  private dueFor(space: string, p: Principal): unknown[] {
    const out: unknown[] = [];
    for (const b of this.contributions(space, p)) {
      const project = (b.scope as { project: string }).project;
      for (const c of dueCommands(b.state, space)) {
        const a = b.state.agents[c.agent];
        out.push({ project, id: c.id, agent: c.agent, session: a.session, text: c.text, by: c.by, at: c.at, position: c.position });
      }
    }
    return out;
  }

  private pushFeed(f: { space: string; res: ServerResponse; last: string; p: Principal }): void {
    // The projects it acts in ride along, so a bridge hears of a contribution
    // (or a revocation) made in a browser and reconciles there at once.
    const projects = this.contributions(f.space, f.p).map((b) => (b.scope as { project: string }).project);
    const data = JSON.stringify({ commands: this.dueFor(f.space, f.p), projects });
    if (data === f.last) return;
    f.last = data;
    f.res.write(`event: commands\ndata: ${data}\n\n`);
  }

  private pushFeeds(): void {
    for (const f of this.feeds) this.pushFeed(f);
  }

  // ------------------------------------------------------------ presence, role changes

  /** Who has an open events stream on the project now, on this node or on another one sharing the store. */
  presence(project: string): Person[] {
    const seen = this.localPresence(project);
    const fresh = performance.now() - this.presenceExpireMs;
    for (const projects of this.heard.values()) {
      const h = projects.get(project);
      if (!h || h.at < fresh) continue;
      for (const chunk of h.chunks.values()) for (const x of chunk) if (!seen.has(x.uid)) seen.set(x.uid, x.name);
    }
    return [...seen].map(([uid, name]) => ({ uid, name })).sort(byName);
  }

  /** Who has an open events stream on the project on this node. */
  private localPresence(project: string): Map<string, string> {
    const seen = new Map<string, string>();
    for (const w of this.watchers) if (w.present && w.project === project) seen.set(w.p.uid, w.p.name);
    return seen;
  }

  private pushPresence(project: string): void {
    const frame = lossy('presence', { project, people: this.presence(project) });
    for (const w of this.watchers) if (w.project === project) w.write(frame);
  }

  /** This node's presence in a project changed: tell its watchers now, and the other nodes (once per turn). */
  private presenceChanged(project: string): void {
    this.pushPresence(project);
    if (this.stopped || !this.store.capabilities.crossNodeBroadcast) return;
    this.presenceDirty.add(project);
    if (this.announcing) return;
    this.announcing = true;
    setImmediate(() => {
      this.announcing = false;
      const dirty = [...this.presenceDirty];
      this.presenceDirty.clear();
      for (const p of dirty) this.announce(p, false);
    });
  }

  /** Sends this node's presence in a project, when it changed since the last time (or always, to repeat it). */
  private announce(project: string, repeat: boolean): void {
    if (this.stopped) return;
    const people = [...this.localPresence(project)].map(([uid, name]) => ({ uid: uid.slice(0, 200), name: name.slice(0, 200) })).sort(byName);
    const now = JSON.stringify(people);
    const before = this.announced.get(project) ?? '[]';
    if (!repeat && now === before) return;
    // Nobody here any more: one empty announcement, then silence (not repeated).
    if (people.length) this.announced.set(project, now);
    else this.announced.delete(project);
    try {
      for (const payload of presencePayloads(project, people)) this.store.broadcast(PRESENCE_TOPIC, payload);
    } catch (e) {
      console.error('roost: announcing Work presence failed', e);
    }
  }

  private startPresence(): void {
    if (!this.store.capabilities.crossNodeBroadcast) return;
    this.unbroadcast = this.store.onBroadcast((topic, payload, from) => {
      if (topic === PRESENCE_TOPIC) this.hear(payload, from);
    });
    // Just started: the others answer with what they have now instead of at their next repeat.
    this.store.broadcast(PRESENCE_TOPIC, JSON.stringify({ ask: true }));
    const repeat = setInterval(() => {
      for (const p of [...this.announced.keys()]) this.announce(p, true);
    }, this.presenceExpireMs / 3);
    const sweep = setInterval(() => this.forgetSilent(), Math.min(1000, this.presenceExpireMs / 10));
    for (const t of [repeat, sweep]) t.unref();
    this.presenceTimers.push(repeat, sweep);
  }

  /** Says goodbye (an empty announcement for every project where someone was here), so the others need not wait for the expiry. */
  private stopPresence(): void {
    if (this.stopped) return;
    for (const t of this.presenceTimers) clearInterval(t);
    this.unbroadcast?.();
    if (this.store.capabilities.crossNodeBroadcast) {
      for (const project of this.announced.keys()) {
        try {
          this.store.broadcast(PRESENCE_TOPIC, presencePayloads(project, [])[0]);
        } catch {}
      }
    }
    this.announced.clear();
    this.stopped = true;
  }

  /** Another node's announcement (or its request for ours). */
  private hear(payload: string, from: string): void {
    const m = parsePresence(payload);
    if (!m) return;
    if ('ask' in m) {
      if (this.repeatAsked) return;
      this.repeatAsked = true;
      setImmediate(() => {
        this.repeatAsked = false;
        for (const p of [...this.announced.keys()]) this.announce(p, true);
      });
      return;
    }
    const before = JSON.stringify(this.presence(m.project));
    let projects = this.heard.get(from);
    if (!projects) this.heard.set(from, (projects = new Map()));
    let h = projects.get(m.project);
    // A different number of parts is a new announcement: its older parts are gone.
    if (!h || h.parts !== m.parts) projects.set(m.project, (h = { parts: m.parts, chunks: new Map(), at: 0 }));
    h.chunks.set(m.part, m.people);
    h.at = performance.now();
    if (m.parts === 1 && m.people.length === 0) {
      projects.delete(m.project);
      if (!projects.size) this.heard.delete(from);
    }
    if (JSON.stringify(this.presence(m.project)) !== before) this.pushPresence(m.project);
  }

  /** Forgets what other nodes announced and did not repeat in time, and tells the watchers whom that removed. */
  private forgetSilent(): void {
    const old = performance.now() - this.presenceExpireMs;
    const changed = new Set<string>();
    for (const [from, projects] of this.heard) {
      for (const [project, h] of projects) {
        if (h.at >= old) continue;
        projects.delete(project);
        changed.add(project);
      }
      if (!projects.size) this.heard.delete(from);
    }
    // `presence()` already leaves out what is stale, so the frame goes out when it is dropped here.
    for (const project of changed) this.pushPresence(project);
  }

  /**
   * The lossy stream of a project: presence now and on every change, role
   * changes of the caller (`role`), and the terminal of `?agent=` when given.
   */
  getLive = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const project = this.projectOf(url);
    const g = await this.access.require(req, project, 'viewer');
    const agent = url.searchParams.get('agent');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write('retry: 1000\n\n');
    const w: Watcher = { res, p: g, project, agent, present: false, write: (f) => void res.write(f) };
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
    res.write(lossy('presence', { project, people: this.presence(project) }));
    res.write(lossy('role', { project, role: g.role }));
  };

  /** A member's role changed or they were removed: close what they may no longer read, tell the rest. */
  private roleChanged(project: string, uid: string): void {
    for (const w of [...this.watchers]) {
      if (w.project !== project || w.p.uid !== uid) continue;
      const role = this.access.roleIn(w.p, project);
      if (role === null) {
        this.watchers.delete(w);
        const sock = w.res.socket;
        if (!sock || sock.destroyed || !sock.writable) continue;
        sock.end(`event: error\ndata: ${JSON.stringify({ reason: `you are no longer a member of project "${project}"` })}\n\n`);
        setTimeout(() => sock.destroy(), 200).unref();
      } else w.write(lossy('role', { project, role }));
    }
    this.presenceChanged(project);
    this.pushFeeds();
  }

  private async body(req: IncomingMessage): Promise<Record<string, unknown>> {
    const b = await readJson(req, MAX_BODY);
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new HttpError(400, 'bad_request', 'the body must be a JSON object');
    return b as Record<string, unknown>;
  }
}

function textField(body: Record<string, unknown>, name: string, max: number, required: boolean): string {
  const v = body[name];
  if (v === undefined && !required) return '';
  if (typeof v !== 'string' || (required && v.trim() === '')) throw new HttpError(400, 'bad_request', `"${name}" must be a non-empty string`);
  if (v.length > max) throw new HttpError(413, 'too_large', `"${name}" is longer than ${max} characters`);
  return v;
}


function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (typeof o[k] === 'string') out[k] = (o[k] as string).slice(0, 1000);
  return out;
}
