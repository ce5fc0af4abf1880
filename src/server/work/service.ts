// The Work app on the server (docs/work.md): per-project streams
// `work:<project>`, one private stream per person `work:private:<uid>` (General
// Chat), and the Space registry `work:spaces`, each folded by the shared Work
// fold (src/core/work.ts) and served under /api/v2 (routes.ts beside this file).
//
// One mutation rule: a handler checks the caller through `Access`, builds its
// events, appends them to one stream in one append (atomic, durable on return,
// with the request's Idempotency-Key), waits until this node has folded them,
// and answers from the stored events (`commit`). The fold derives everything
// else (queues, agent state, chat lines). A retry with the same key stores
// nothing and answers from the events the first request stored, so it gets
// the same result, even a refusal (a refused keyed request stores a small
// `request.refused` marker for that reason).
//
// Live, through the one live mechanism (src/server/live.ts), as scopes:
// - `work:<project>` and `work.private` (the caller's General Chat): a book's
//   durable frames (book.ts); the single-scope `GET /api/v2/events`;
// - `work.live:<project>[/<agent>]`: lossy frames, observation, not history,
//   never stored: presence, my role as it changes, my Spaces, my General
//   Chat's changes, and the terminal of the agent named; the single-scope
//   `GET /api/v2/live`, and the events stream carries it too;
// - `space:<id>`: a Space's command feed (feed.ts).
// Presence is who holds a `work:<project>` scope now; across nodes it is the
// generic src/server/presence.ts.

import type { IncomingMessage } from 'node:http';
import { applySpaceRegistry, type SpaceRecord, type WorkState } from '../../core/work.js';
import type { EventStore, NewEvent } from '../../storage/types.js';
import { HttpError, idempotencyKeyOf } from '../http.js';
import type { Route } from '../route.js';
import { LossyChannel, type ChannelOptions, type Live, type ScopeSpec, type Subscription } from '../live.js';
import { LocalAccess, type Access, type AccessChange, type Principal } from '../access.js';
import { PRESENCE_EXPIRE_MS, Presence, type Person } from '../presence.js';
import { Book, PRIVATE_PREFIX, SPACES_STREAM, WORK_PREFIX, parse, type BookScope } from './book.js';
import { SpaceFeeds } from './feed.js';
import { WorkRoutes } from './routes.js';

export { PRESENCE_EXPIRE_MS };
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
}

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

  /** The /api/v2 routes (docs/work.md); the route layer resolves a `space` route's Space with `needSpace`. */
  routes(): Route[] {
    return new WorkRoutes(this).routes();
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

  key(req: IncomingMessage, stream: string, uid: string): string | undefined {
    const raw = idempotencyKeyOf(req);
    return raw && `${stream}|${uid}|${raw}`;
  }

  /**
   * Appends `events` to the book's stream in one append and returns the
   * stored bodies (the first request's, when the key was seen before).
   * `refusal`: the conflict found against the current state; with a key the
   * request may be the retry of one that was applied, so the store decides.
   */
  async commit(book: Book, events: Record<string, unknown>[], key: string | undefined, refusal: HttpError | null): Promise<Record<string, unknown>[]> {
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
