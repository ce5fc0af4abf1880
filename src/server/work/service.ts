// The Work app on the server (docs/work.md): per-project streams
// `work:<project>`, one private stream per person `work:private:<uid>` (General
// Chat), and the Space registry `work:spaces`, each folded by the shared Work
// fold (src/core/work.ts) and served under /api/v2 (routes.ts beside this file).
//
// One mutation rule: a handler checks the caller through `Access`, builds its
// events, appends them to one stream in one append (atomic, durable on return,
// with the request's Idempotency-Key), waits until this node has folded them,
// and answers from the stored events (`commit`). The fold derives everything
// else (queues, agent state, chat lines). Every mutation needs an
// Idempotency-Key (400 without one). A retry with a key that went through
// stores nothing and gets the first answer byte for byte (kept with the key);
// a refused request stores nothing, so its key stays free for a later,
// valid attempt (docs/work.md, "Keys and answers").
//
// Live, through the one live mechanism (src/server/live/), as scopes:
// - `work:<project>` and `work.private` (the caller's General Chat): a book's
//   durable frames (book.ts); the single-scope `GET /api/v2/events`;
// - `work.live:<project>[/<agent>]`: lossy frames, observation, not history,
//   never stored: presence, my role as it changes, my Spaces, my General
//   Chat's changes, and the terminal of the agent named; the single-scope
//   `GET /api/v2/live`, and the events stream carries it too;
// - `space:<id>`: a Space's command feed (feed.ts).
// Presence is who holds a `work:<project>` scope now; across nodes it is the
// generic src/server/presence.ts.

import type { ServerResponse } from 'node:http';
import { applySpaceRegistry, type SpaceRecord, type Who, type WorkState } from '../../core/work.js';
import type { AppendResult, EventStore, NewEvent } from '../../storage/types.js';
import { HttpError, sendJsonText } from '../http.js';
import type { RequestKey } from '../keys.js';
import { LossyChannel, type ChannelOptions, type Live, type ScopeSpec, type Subscription } from '../live/index.js';
import { LocalAccess, type Access, type AccessChange, type Principal } from '../access.js';
import { PRESENCE_EXPIRE_MS, Presence, type Person } from '../presence.js';
import { Book, PRIVATE_PREFIX, SPACES_STREAM, WORK_PREFIX, parse, type BookScope } from './book.js';
import { SpaceFeeds } from './feed.js';

export { PRESENCE_EXPIRE_MS };

/** The server, as the actor of what it records on its own (a change found at start). */
const ROOST: Who = { uid: 'roost', name: 'Roost' };
export const PROJECT_ID = /^[A-Za-z0-9_-]{1,64}$/;

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
  live: Live;
  channel: ChannelOptions;
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
  /** Why a spent budget refuses a new command to an agent of the project (the reason its model would read), or null. */
  budgetPause?: (project: string, agent: string) => Promise<string | null>;
}

/** What `commit` stored (or found stored under the key), and the first answer when it was kept. */
export interface Committed {
  key: RequestKey;
  stream: string;
  stored: Record<string, unknown>[];
  answer: string | undefined;
}

export const MISSING_KEY = 'this request needs an Idempotency-Key header (a unique string per request; send the same one to retry it)';

const LOCAL_PROJECTS: ProjectInfo[] = [{ id: 'default', name: 'Default' }];

/** The lossy scope of a project, or of one agent's terminal in it. */
export function liveScope(project: string, agent: string | null): string {
  return agent ? `work.live:${project}/${agent}` : `work.live:${project}`;
}

/** The topic of Work presence on the store's broadcast (src/server/presence.ts). */
const PRESENCE_TOPIC = 'work.presence';

export class WorkService {
  private books = new Map<string, Promise<Book>>();
  /** Every book started or starting, by stream (the routes read the loaded ones). */
  readonly loaded = new Map<string, Book>();
  spaces = new Map<string, SpaceRecord>();
  private spacesPos = 0;
  /** The lossy channels (`work.live:<project>[/<agent>]`), by project, then agent ("" for the project's own). */
  private lossy = new Map<string, Map<string, LossyChannel>>();
  readonly feeds: SpaceFeeds;
  readonly presence: Presence;
  private unlisten: (() => void) | null = null;
  private unaccess: (() => void) | null = null;
  readonly access: Access;
  readonly live: Live;

  constructor(
    readonly store: EventStore,
    readonly opts: WorkOptions,
  ) {
    this.access = opts.access ?? new LocalAccess();
    this.live = opts.live;
    this.feeds = new SpaceFeeds(store.epoch, (space, p) => this.contributions(space, p));
    this.presence = new Presence(store, {
      topic: PRESENCE_TOPIC,
      expireMs: opts.presenceExpireMs ?? PRESENCE_EXPIRE_MS,
      local: (project) => this.localPresence(project),
      onChange: (project) => this.pushPresence(project),
    });
  }

  projectList(): ProjectInfo[] {
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
    this.unaccess = this.access.onChange((c) => this.accessChanged(c));
    // What changed while no server ran (and, once, every membership from before member.changed existed).
    for (const p of this.projectList()) void this.syncMembers(p.id, ROOST);
    await Promise.all([...this.memberSync.values()]);
    this.presence.start();
  }

  async stop(): Promise<void> {
    this.presence.stop();
    this.unlisten?.();
    this.unaccess?.();
    await Promise.allSettled([...this.loaded.values()].map((b) => b.stop()));
    for (const m of this.lossy.values()) for (const ch of m.values()) ch.stop();
    this.feeds.stop();
    await Promise.allSettled([...this.books.values()]);
  }

  private spacesReading: Promise<void> | null = null;
  /** Reads the Space registry up to the log's head (another node may have registered one a moment ago). */
  readSpaces(): Promise<void> {
    if (this.spacesReading) return this.spacesReading.then(() => this.readSpaces());
    this.spacesReading = (async () => {
      try {
        for (;;) {
          const batch = await this.store.read(SPACES_STREAM, this.spacesPos, 5000);
          for (const e of batch) {
            applySpaceRegistry(this.spaces, parse(e.body));
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

  private bookOf(stream: string, scope: BookScope): Promise<Book> {
    let p = this.books.get(stream);
    if (!p) {
      const b = new Book(stream, scope, this.store, this.opts);
      this.loaded.set(stream, b);
      if ('project' in scope) {
        const project = scope.project;
        b.listeners.add(() => this.feeds.pushAll());
        // Presence: who holds the project's durable scope now.
        b.channel.opened = b.channel.closed = () => this.presence.changed(project);
      } else {
        // My General Chat changed: my Work views (their lossy scopes) hear it.
        const uid = scope.private;
        b.listeners.add((changes) => {
          for (const c of changes) this.toPerson(uid, 'private.changed', { id: c.id, rev: b.pos });
        });
      }
      p = b.start().then(
        () => b,
        (e) => {
          this.loaded.delete(stream);
          this.books.delete(stream);
          void b.stop();
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

  /** A project's book: 404 when the project does not exist (asked after the caller's role there, see routes.ts). */
  async projectBook(project: string): Promise<Book> {
    if (!this.projectList().some((x) => x.id === project)) throw new HttpError(404, 'not_found', `no such project: ${project}`);
    return this.book(project);
  }

  /**
   * Appends `events` to the book's stream in one append, under `key`, and
   * returns the stored bodies. A key already used on this stream is the
   * retry of a request that went through: nothing is stored or checked, and
   * the first request's events (and its answer, when kept) are returned.
   * Otherwise `refusal` (the conflict found against the current state, or
   * about the request) is thrown and nothing is stored, so the key stays
   * free for a later attempt: a refusal never sticks to its key. No events
   * and no refusal: nothing is appended (the answer is not kept either).
   */
  async commit(book: Book, events: Record<string, unknown>[], key: RequestKey, refusal: HttpError | null): Promise<Committed> {
    const prior = await key.seen(this.store, book.stream);
    if (prior) return this.priorOf(book, key, prior);
    if (refusal) throw refusal;
    if (events.length === 0) return { key, stream: book.stream, stored: [], answer: undefined };
    const toStore: NewEvent[] = events.map((e) => ({ type: String(e.type), body: JSON.stringify(e) }));
    const r = await this.store.append(book.stream, toStore, key.on(book.stream));
    // Two attempts at once: the other one stored it first.
    if (r.duplicate) return this.priorOf(book, key, r);
    await book.folded(r.last);
    return { key, stream: book.stream, stored: toStore.map((e) => parse(e.body)), answer: undefined };
  }

  private async priorOf(book: Book, key: RequestKey, r: AppendResult): Promise<Committed> {
    await book.folded(r.last);
    const stored = (await this.store.read(book.stream, r.first - 1, r.last - r.first + 1)).map((e) => parse(e.body));
    // A refusal stored by an older server under this key (`request.refused`): it still answers that.
    const refused = stored.find((e) => e.type === 'request.refused');
    if (refused) throw new HttpError(Number(refused.status) || 409, (refused.kind as 'conflict') ?? 'conflict', String(refused.message));
    return { key, stream: book.stream, stored, answer: r.answer };
  }

  /**
   * Answers a mutation: the first answer, byte for byte, when `c` is a
   * duplicate whose answer was kept; else `body`, kept with the key for the
   * duplicates to come (the first kept stays).
   */
  async reply(res: ServerResponse, c: { key: RequestKey; stream: string; answer: string | undefined }, body: () => unknown): Promise<void> {
    if (c.answer !== undefined) return sendJsonText(res, 200, c.answer);
    const text = JSON.stringify(body());
    // A convenience, not a fact of the log: a failure to keep it leaves the rebuilt answer to the next retry.
    await this.store.keepAnswer(c.stream, c.key.on(c.stream), text).catch(() => false);
    sendJsonText(res, 200, text);
  }

  who(p: Principal): { uid: string; name: string } {
    return { uid: p.uid, name: p.name };
  }

  async needSpace(spaceId: string, p: Principal): Promise<SpaceRecord> {
    // Registered on another node a moment ago: read the registry before saying no.
    if (!this.spaces.has(spaceId) && this.store.capabilities.crossNodeWakeups) await this.readSpaces();
    const sp = this.spaces.get(spaceId);
    if (!sp) throw new HttpError(404, 'not_found', `no such Space: ${spaceId}`);
    if (sp.owner.uid !== p.uid) throw new HttpError(403, 'forbidden', `the Space "${sp.name}" belongs to ${sp.owner.name}; only its owner's bridge may act for it`);
    return sp;
  }

  /** Whether `uid` is a member of the project now (true where members are not listed: local mode). */
  isMember(uid: string, project: string): boolean {
    const list = this.access.members?.(project);
    return !list || list.some((m) => m.uid === uid);
  }

  private memberSync = new Map<string, Promise<void>>();

  /**
   * Brings the project's stream in line with who may do what (`only`: one
   * member, else all): a `member.changed` for each membership, role or name
   * the stream does not hold yet, and for a member no longer there, their
   * removal followed by a `space.revoked` of each Space of theirs
   * contributed to the project (its queued commands cancelled, with the
   * reason in its agents' chats). One append per member; per project one
   * sync at a time. The key is the member's change and the stream's head it
   * was judged at, so nodes that judge the same change at the same head
   * store it once (their appends are duplicates). Failures are logged: the
   * next change or start tries again.
   */
  syncMembers(project: string, by: Who, only?: string): Promise<void> {
    if (!this.access.members) return Promise.resolve();
    const run = async () => {
      const listed = this.access.members?.(project);
      if (!listed || !this.projectList().some((x) => x.id === project)) return;
      // A project made since the start has no book until someone opens its Work: load it now, so its
      // members are recorded when they change (not at the next start, which would move its position).
      const book = await this.book(project);
      await book.fresh();
      const now = new Map(listed.map((m) => [m.uid, m]));
      const uids = only !== undefined ? [only] : [...new Set([...now.keys(), ...book.state.members.keys()])];
      for (const uid of uids) {
        const want = now.get(uid);
        const had = book.state.members.get(uid);
        const events: Record<string, unknown>[] = [];
        const at = Date.now();
        if (want && (had?.role !== want.role || had.name !== want.name)) events.push({ type: 'member.changed', uid, name: want.name, role: want.role, by, at });
        if (!want) {
          if (had) events.push({ type: 'member.changed', uid, name: had.name, role: null, by, at });
          for (const sp of book.state.spaces.values())
            if (sp.contributed && sp.owner.uid === uid) events.push({ type: 'space.revoked', space: sp.id, reason: `its owner ${sp.owner.name} was removed from the project`, by, at });
        }
        if (events.length === 0) continue;
        const key = `${book.stream}|roost|member:${uid}:${want?.role ?? 'removed'}:${book.pos}`;
        const r = await this.store.append(book.stream, events.map((e) => ({ type: String(e.type), body: JSON.stringify(e) })), { idempotencyKey: key });
        await book.folded(r.last);
      }
    };
    const prev = this.memberSync.get(project) ?? Promise.resolve();
    const next = prev.then(run).catch((e: unknown) => console.error(`roost: work could not record a membership change in ${project}: ${e instanceof Error ? e.message : String(e)}`));
    this.memberSync.set(project, next);
    return next;
  }

  /** With several nodes: every loaded project caught up with the log (a contribution made elsewhere a moment ago). */
  async freshProjects(): Promise<void> {
    if (!this.store.capabilities.crossNodeWakeups) return;
    await Promise.all([...this.loaded.values()].filter((b) => 'project' in b.scope).map((b) => b.fresh()));
  }

  /** The projects (among those loaded) a Space is contributed to now. */
  contributions(spaceId: string, p?: Principal): Book[] {
    const out: Book[] = [];
    for (const b of this.loaded.values()) {
      if (!('project' in b.scope) || !b.state.spaces.get(spaceId)?.contributed) continue;
      // A Space acts in a project only while its owner is a member there (and a token only in its own project).
      if (p && this.access.roleIn(p, b.scope.project) === null) continue;
      out.push(b);
    }
    return out;
  }


  // ------------------------------------------------------------ presence, role changes

  /** Who has an open events stream on the project now, on this node or on another one sharing the store. */
  people(project: string): Person[] {
    return this.presence.people(project);
  }

  /** Who holds the project's durable scope (`work:<project>`: an events stream, a mux scope) on this node. */
  private localPresence(project: string): Map<string, string> {
    const seen = new Map<string, string>();
    const b = this.loaded.get(WORK_PREFIX + project);
    if (b) for (const sub of b.channel.subs) seen.set(sub.who.uid, sub.who.name);
    return seen;
  }

  private pushPresence(project: string): void {
    const data = JSON.stringify({ project, people: this.people(project) });
    for (const ch of this.lossy.get(project)?.values() ?? []) ch.broadcast('presence', data);
  }

  /**
   * A member's role changed or they were removed. The live mechanism has
   * closed what they may no longer read; the rest hears the new role, and
   * presence and the Space feeds are told.
   */
  private accessChanged(c: AccessChange): void {
    if (c.kind !== 'member') return;
    const { project, uid } = c;
    // The project's durable copy of it (member.changed), and a removed member's Spaces revoked there.
    void this.syncMembers(project, c.by ?? ROOST, uid);
    for (const ch of this.lossy.get(project)?.values() ?? []) {
      for (const sub of ch.subs) {
        if (sub.who.uid !== uid) continue;
        const role = this.access.roleIn(sub.who, project);
        if (role !== null) ch.send(sub, 'role', JSON.stringify({ project, role }));
      }
    }
    this.presence.changed(project);
    this.feeds.pushAll();
  }

  /** A lossy frame to every Work view of one person (their `work.live` scopes, in any project). */
  toPerson(uid: string, name: string, data: unknown): void {
    const text = JSON.stringify(data);
    for (const m of this.lossy.values()) for (const ch of m.values()) ch.broadcast(name, text, (sub) => sub.who.uid === uid);
  }

  /** Terminal bytes of an agent, to whoever watches it (in every project where it is); returns how many got them. */
  terminal(agent: string, data: string): number {
    const text = JSON.stringify({ agent, data });
    let n = 0;
    for (const [project, m] of this.lossy) {
      const ch = m.get(agent);
      const book = this.loaded.get(WORK_PREFIX + project);
      if (ch && book?.state.agents.has(agent)) n += ch.broadcast('terminal', text);
    }
    return n;
  }

  /** The lossy channel of a project (`agent` null) or of one of its agents' terminal. */
  private lossyChannel(project: string, agent: string | null): LossyChannel {
    let m = this.lossy.get(project);
    if (!m) this.lossy.set(project, (m = new Map()));
    let ch = m.get(agent ?? '');
    if (!ch) {
      const made = new LossyChannel(liveScope(project, agent), this.store.epoch);
      // A new reader hears who is here and its own role at once.
      made.opened = (sub: Subscription) => {
        made.send(sub, 'presence', JSON.stringify({ project, people: this.people(project) }));
        made.send(sub, 'role', JSON.stringify({ project, role: this.access.roleIn(sub.who, project) }));
      };
      m.set(agent ?? '', (ch = made));
    }
    return ch;
  }

  /**
   * Work's live scopes (docs/work.md): `work:<project>` and
   * `work.live:<project>[/<agent>]` for a viewer of the project,
   * `work.private` for the caller's own General Chat, `space:<id>` for the
   * Space's owner (its bridge). A project that does not exist is a 404, asked
   * after the caller's role there.
   */
  scopes(): Record<string, ScopeSpec> {
    const projectIn = (key: string) => {
      const project = key.split('/')[0];
      if (!PROJECT_ID.test(project)) throw new HttpError(400, 'bad_request', 'a project id is 1 to 64 letters, digits, "-" or "_"');
      return project;
    };
    return {
      work: {
        need: (key) => ({ project: projectIn(key.includes('/') ? '' : key), min: 'viewer' }),
        open: async (key) => (await this.projectBook(key)).channel,
      },
      'work.private': {
        need: (key) => {
          if (key !== '') throw new HttpError(400, 'bad_request', '"work.private" is the caller\'s own General Chat: it takes no key');
          return null;
        },
        open: async (_key, who) => (await this.privateBook(who.uid)).channel,
      },
      'work.live': {
        need: (key) => ({ project: projectIn(key), min: 'viewer' }),
        open: async (key) => {
          const project = projectIn(key);
          const agent = key.length > project.length ? key.slice(project.length + 1) : null;
          const book = await this.projectBook(project);
          if (agent !== null && !book.state.agents.has(agent)) throw new HttpError(404, 'not_found', `no such agent: ${agent.slice(0, 200)}`);
          return this.lossyChannel(project, agent);
        },
      },
      space: {
        need: () => null,
        open: async (key, who) => this.feeds.channel((await this.needSpace(key, who)).id),
      },
    };
  }
}
