// The Work routes, /api/v2 (docs/work.md): reads, conversations, commands,
// Spaces and their reports. Who may call each one, how its project is found
// and what its body is are declared in `routes()` and checked by the route
// layer (src/server/route.ts); a handler reads or commits through the service
// (service.ts). Checks about one resource's owner (a Space's, an agent's
// Space's) stay here: they are about the thing, not the caller's role.
//
// A project is named by `project` in the body, else `?project=` (400 when
// malformed); the caller's role there is checked first, then whether the
// project exists (404), so a non-member gets the same 403 for a project that
// exists and one that does not. `?scope=private` (reads) and the `general`
// conversation (messages) are the caller's own General Chat: any principal.

import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { GENERAL, WORK_LIMITS, agentChatOf, agentIdOf, agentsOfSpace, mayCommand, previewWork, type Agent, type Command, type Conversation, type Execution as WorkExecution, type PendingApproval } from '../../core/work.js';
import { line as boardLine } from '../../core/fleet.js';
import { roleAtLeast } from '../../core/identity.js';
import { HttpError, sendJson } from '../http.js';
import { projectOf, type Principal } from '../access.js';
import { route, type Asking, type Auth, type Ctx, type Route } from '../route.js';
import { ID, TEXT } from '../schemas.js';
import { SPACES_STREAM, parse, type Book } from './book.js';
import { MISSING_KEY, PROJECT_ID, liveScope, type WorkService } from './service.js';

const MAX_BODY = 256 * 1024;

function rid(prefix: string): string {
  return prefix + randomBytes(9).toString('base64url');
}

// ---------------------------------------------------------------- how a request names its project

function bodyProject(a: Asking): string | null {
  const v = a.raw !== null && typeof a.raw === 'object' && !Array.isArray(a.raw) ? (a.raw as Record<string, unknown>).project : undefined;
  return typeof v === 'string' ? v : null;
}

function checkedProject(p: string): string {
  if (!PROJECT_ID.test(p)) throw new HttpError(400, 'bad_request', 'name a project: ?project=<id> (1 to 64 letters, digits, "-" or "_")');
  return p;
}

/** `project` in the body, else `?project=`. */
const workProject = (a: Asking): string => checkedProject(bodyProject(a) ?? a.url.searchParams.get('project') ?? '');
/** The path's `:project`. */
const pathProject = (a: Asking): string => checkedProject(a.params.project ?? '');
/** A read of the caller's own General Chat (`?scope=private`) needs only a principal; a project's, its viewer. */
const readAuth = (a: Asking): Auth => (a.url.searchParams.get('scope') === 'private' ? 'principal' : 'viewer');

// ---------------------------------------------------------------- bodies

const Project = Type.Optional(Type.String({ hint: 'a project id' }));
const NewConversation = Type.Object({ title: TEXT(WORK_LIMITS.title), project: Project });
const NewMessage = Type.Object({ text: TEXT(WORK_LIMITS.text), project: Project });
const Link = Type.Object({
  message: Type.Integer({ hint: 'the seq of one of your General Chat messages' }),
  title: Type.Optional(Type.String({ maxLength: 10_000 })),
  /** The agent to queue the request to, as a command (else only the request moves). */
  agent: Type.Optional(TEXT(WORK_LIMITS.id)),
  project: Project,
});
const NewCommand = Type.Object({ agent: TEXT(WORK_LIMITS.id), text: TEXT(WORK_LIMITS.text), project: Project });
const Cancel = Type.Object({ project: Project });
const Callable = Type.Object({ callable: Type.Boolean(), project: Project });
const NewSpace = Type.Object({ name: TEXT(WORK_LIMITS.name) });
const Contribute = Type.Object({ space: TEXT(WORK_LIMITS.id) });
const Observation = Type.Object({
  session: Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$', hint: "the agent's stable session id (1 to 128 of A-Z a-z 0-9 _ . : -)" }),
  ended: Type.Optional(Type.Boolean()),
});
const Agents = Type.Object({
  agents: Type.Array(Observation, { maxItems: 200, batch: true, hint: 'a list of at most 200 observations' }),
  full: Type.Optional(Type.Boolean()),
  project: Project,
});
const Pointer = Type.Object(
  { thread: ID(), session: ID(), rid: ID(), tool: TEXT(10_000), digest: Type.Optional(Type.String({ maxLength: 10_000 })) },
  { hint: '{thread, session, rid, tool, digest}' },
);
const EXECUTION_EVENTS = { started: 'execution.started', blocked: 'execution.blocked', resumed: 'execution.resumed', output: 'execution.output', finished: 'execution.finished' } as const;
const Execution = Type.Object({
  command: TEXT(WORK_LIMITS.id),
  event: Type.Union(Object.keys(EXECUTION_EVENTS).map((k) => Type.Literal(k as keyof typeof EXECUTION_EVENTS))),
  reason: Type.Optional(Type.String({ maxLength: 10_000 })),
  approval: Type.Optional(Pointer),
  rid: Type.Optional(ID()),
  text: Type.Optional(TEXT(WORK_LIMITS.text)),
  status: Type.Optional(Type.String()),
  result: Type.Optional(Type.String({ maxLength: MAX_BODY })),
  project: Project,
});
const Terminal = Type.Object({ session: TEXT(WORK_LIMITS.id), data: TEXT(64 * 1024) });

/**
 * The agent and chat a command's event belongs to, written on it by the server
 * (the fold reads only `command`): what search indexes the event under and
 * opens (docs/search.md, "Work"). None for a command the project has not.
 */
function chatOf(c: Command | undefined): { agent?: string; conversation?: string } {
  return c ? { agent: c.agent, conversation: c.conversation } : {};
}

/** The string fields of an observation a report keeps (each to 1000 characters). */
function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (typeof o[k] === 'string') out[k] = (o[k]).slice(0, 1000);
  return out;
}

export class WorkRoutes {
  constructor(private w: WorkService) {}

  /** The /api/v2 routes (docs/work.md). */
  routes(): Route[] {
    const big = { maxBody: MAX_BODY };
    // Every mutation needs an Idempotency-Key (400 naming it), asked before the handler looks at anything;
    // terminal bytes are lossy, never stored, and need none.
    // The key is the caller's on the stream written (keys.ts); before the route layer scoped it, `<stream>|<uid>|<key>` in the stream.
    // No fingerprint: a retry with a key already stored checks nothing and gets the first answer (docs/work.md, "Keys and answers").
    const keyed = (r: Route): Route =>
      r.method !== 'POST' || r.path.endsWith('/terminal') ? r : { ...r, key: { required: MISSING_KEY, fingerprint: false, legacy: (stream, key, c) => `${stream}|${c.owner}|${key}` } };
    const all: Route[] = [
      route({ method: 'GET', path: '/api/v2/projects', auth: 'principal', handler: this.getProjects }),
      route({ method: 'GET', path: '/api/v2/me', auth: 'principal', handler: this.getMe }),
      route({ method: 'GET', path: '/api/v2/snapshot', auth: readAuth, project: workProject, doc: 'viewer; `?scope=private`: any principal (their General Chat)', handler: this.getSnapshot }),
      route({ method: 'GET', path: '/api/v2/events', auth: readAuth, project: workProject, stream: true, doc: 'viewer; `?scope=private`: any principal (their General Chat)', handler: this.getEvents }),
      route({ method: 'GET', path: '/api/v2/live', auth: 'viewer', project: workProject, stream: true, handler: this.getLive }),
      route({ method: 'GET', path: '/api/v2/conversations/:id', auth: readAuth, project: workProject, doc: 'viewer; `?scope=private`: any principal', handler: this.aggregate('conversations') }),
      route({ method: 'POST', path: '/api/v2/conversations', auth: 'editor', project: workProject, body: NewConversation, ...big, handler: this.postConversation }),
      route({
        method: 'POST',
        path: '/api/v2/conversations/:id/messages',
        auth: (a) => (a.params.id === GENERAL ? 'principal' : 'editor'),
        project: workProject,
        body: NewMessage,
        ...big,
        doc: 'editor; to `general`: any principal (their General Chat)',
        handler: this.postMessage,
      }),
      route({ method: 'POST', path: '/api/v2/general/link', auth: 'editor', project: workProject, body: Link, ...big, handler: this.postLink }),
      route({ method: 'GET', path: '/api/v2/agents/:id', auth: readAuth, project: workProject, doc: 'viewer; `?scope=private`: any principal', handler: this.aggregate('agents') }),
      route({ method: 'POST', path: '/api/v2/agents/:id/callable', auth: 'editor', project: workProject, body: Callable, doc: 'the owner of the agent\'s Space', handler: this.postCallable }),
      route({ method: 'GET', path: '/api/v2/executions/:id', auth: readAuth, project: workProject, doc: 'viewer; `?scope=private`: any principal', handler: this.aggregate('executions') }),
      route({ method: 'GET', path: '/api/v2/results/:id', auth: readAuth, project: workProject, doc: 'viewer; `?scope=private`: any principal', handler: this.aggregate('results') }),
      route({ method: 'POST', path: '/api/v2/commands', auth: 'editor', project: workProject, body: NewCommand, ...big, handler: this.postCommand }),
      route({ method: 'POST', path: '/api/v2/commands/:id/cancel', auth: 'editor', project: workProject, body: Cancel, handler: this.postCancel }),
      route({ method: 'GET', path: '/api/v2/spaces', auth: 'principal', doc: 'their own Spaces', handler: this.getSpaces }),
      route({ method: 'POST', path: '/api/v2/spaces', auth: 'principal', body: NewSpace, handler: this.postSpace }),
      route({ method: 'POST', path: '/api/v2/spaces/:id/agents', auth: 'space', body: Agents, ...big, handler: this.postAgents }),
      route({ method: 'POST', path: '/api/v2/spaces/:id/executions', auth: 'space', body: Execution, ...big, handler: this.postExecution }),
      route({ method: 'POST', path: '/api/v2/spaces/:id/terminal', auth: 'space', body: Terminal, ...big, handler: this.postTerminal }),
      route({ method: 'GET', path: '/api/v2/spaces/:id/commands', auth: 'space', stream: true, handler: this.getFeed }),
      route({ method: 'POST', path: '/api/v2/projects/:project/spaces', auth: 'editor', project: pathProject, body: Contribute, doc: 'and the owner of the Space', handler: this.postContribute }),
      route({ method: 'POST', path: '/api/v2/projects/:project/spaces/:space/revoke', auth: 'principal', doc: "the Space's owner (a member or not), or a project owner", handler: this.postRevoke }),
      route({ method: 'POST', path: '/api/v2/spaces/:id/revoke', auth: 'space', doc: 'the Space\'s owner: every project it is contributed to', handler: this.postRevokeEverywhere }),
    ];
    return all.map(keyed);
  }

  // ------------------------------------------------------------ reads

  getProjects = ({ res, principal }: Ctx): void => {
    const p = principal!;
    const list = this.w
      .projectList()
      .map((x) => ({ ...x, role: this.w.access.roleIn(p, x.id) }))
      .filter((x) => x.role !== null)
      .map((x) => ({ ...x, present: this.w.people(x.id) }));
    sendJson(res, 200, { me: this.w.who(p), projects: list });
  };

  getMe = ({ res, url, principal }: Ctx): void => {
    const p = principal!;
    const project = url.searchParams.get('project');
    const role = project ? this.w.access.roleIn(p, project) : null;
    // Who is present, for a project I may read (on every node: see presence()).
    const present = project && role !== null ? { present: this.w.people(project) } : {};
    sendJson(res, 200, { uid: p.uid, name: p.name, kind: p.kind, project, role, ...present });
  };

  /** The book a read is about: the caller's General Chat, or the granted project's (caught up with the log). */
  private async readable(c: Ctx): Promise<Book> {
    if (!c.grant) return this.w.privateBook(c.principal!.uid);
    const book = await this.w.projectBook(c.grant.project);
    await book.fresh();
    return book;
  }

  getSnapshot = async (c: Ctx): Promise<void> => {
    const book = await this.readable(c);
    sendJson(c.res, 200, { ...book.snapshot(false), role: c.grant?.role ?? null });
  };

  /**
   * One connection per tab: the book's durable frames (`work:<project>`, or
   * `work.private`), and for a project the lossy ones on the same connection
   * (`work.live:<project>[/<agent>]`: presence, my role, my Spaces, my General
   * Chat's changes, the terminal of `?agent=`).
   */
  getEvents = async (c: Ctx): Promise<void> => {
    const { req, res, url } = c;
    const book = await this.readable(c);
    const scopes = [book.channel.scope];
    if ('project' in book.scope) scopes.push(this.lossyScope(book, url));
    await this.w.live.serve(req, res, url, c.grant ?? c.principal!, scopes);
  };

  /** The lossy scope of a project's reader: the terminal of `?agent=` when the project has that agent. */
  private lossyScope(book: Book, url: URL): string {
    const agent = url.searchParams.get('agent');
    const project = (book.scope as { project: string }).project;
    return liveScope(project, agent && book.state.agents.has(agent) ? agent : null);
  }

  private aggregate(family: 'conversations' | 'agents' | 'executions' | 'results') {
    return async (c: Ctx): Promise<void> => {
      const book = await this.readable(c);
      const s = book.state;
      const id = c.params.id;
      // Tables are Maps: an id such as `constructor` is just an id nobody has (404).
      const item = s[family].get(id);
      if (!item) throw new HttpError(404, 'not_found', `no such ${family.slice(0, -1)}: ${id}`);
      const extra: Record<string, unknown> = {};
      if (family === 'agents') {
        const a = item as Agent;
        extra.queue = a.queue.map((k) => s.commands.get(k)).filter(Boolean);
        const running = a.running ? s.executions.get(a.running) : undefined;
        extra.running = running ?? null;
        extra.runningCommand = running ? (s.commands.get(running.command) ?? null) : null;
      }
      if (family === 'conversations') {
        // The commands its prompts refer to, so a reader sees their status (queued, cancelled, done) change with the chat.
        const ids = new Set((item as Conversation).messages.map((m) => m.command).filter((k): k is string => !!k));
        extra.commands = [...ids].map((k) => s.commands.get(k)).filter(Boolean);
      }
      if (family === 'executions') extra.command = s.commands.get((item as WorkExecution).command);
      sendJson(c.res, 200, { position: book.pos, item, ...extra });
    };
  }

  // ------------------------------------------------------------ conversations

  postConversation = async ({ res, grant, body, key: rk }: Ctx<Static<typeof NewConversation>>): Promise<void> => {
    const g = grant!;
    const book = await this.w.projectBook(g.project);
    const c = await this.w.commit(book, [{ type: 'conversation.created', id: rid('c-'), title: body.title, by: this.w.who(g), at: Date.now() }], rk!, null);
    await this.w.reply(res, c, () => ({ id: c.stored[0].id, position: book.pos }));
  };

  postMessage = async ({ res, params, principal, grant, body, key: rk }: Ctx<Static<typeof NewMessage>>): Promise<void> => {
    const cid = params.id;
    const p = grant ?? principal!;
    let book: Book;
    if (!grant) book = await this.w.privateBook(p.uid);
    else {
      book = await this.w.projectBook(grant.project);
      const c = book.state.conversations.get(cid);
      if (!c) throw new HttpError(404, 'not_found', `no such conversation: ${cid}`);
      if (c.kind === 'agent') throw new HttpError(409, 'conflict', 'an agent chat takes commands: POST /api/v2/commands');
    }
    const key = rk!;
    const c = await this.w.commit(book, [{ type: 'message.posted', conversation: cid, text: body.text, by: this.w.who(p), at: Date.now() }], key, null);
    const stored = c.stored;
    const conv = book.state.conversations.get(cid);
    // Its message is among the newest: look from the end (a long chat is not walked per post).
    let seq: number | null = null;
    for (let i = (conv?.messages.length ?? 0) - 1; i >= 0 && seq === null; i--) {
      const m = conv!.messages[i];
      if (m.at === stored[0].at && m.text === stored[0].text && m.by.uid === p.uid) seq = m.seq;
    }
    await this.w.reply(res, c, () => ({ conversation: cid, seq, position: book.pos }));
  };

  /**
   * General Chat starts real work: one of the caller's General Chat messages
   * (`message`: its seq) becomes the first message of a new project
   * conversation, and General Chat gets a link to it. Nothing else of the
   * private chat moves. Two streams, two appends, one key: the project append
   * first (it holds the new id), then the private link; a retry with the key
   * completes whichever half is missing and stores nothing twice.
   */
  postLink = async ({ res, grant, body, key: rk }: Ctx<Static<typeof Link>>): Promise<void> => {
    const g = grant!;
    const project = g.project;
    const seq = body.message;
    const book = await this.w.projectBook(project);
    const priv = await this.w.privateBook(g.uid);
    const general = priv.state.conversations.get(GENERAL);
    // Messages are numbered from 1 in log order: message `seq` is at index seq - 1.
    const msg = Number.isInteger(seq) && seq >= 1 ? general?.messages[seq - 1] : undefined;
    const rawKey = rk!;
    const refusal = !msg || msg.kind !== 'human' || msg.by.uid !== g.uid ? new HttpError(404, 'not_found', `no message ${String(seq)} of yours in General Chat`) : null;
    const title = body.title?.trim() ? body.title.trim().slice(0, WORK_LIMITS.title) : (msg?.text.split('\n')[0].slice(0, 80) ?? '');
    const at = Date.now();
    const target = rid('c-');
    const events: Record<string, unknown>[] = [{ type: 'conversation.linked', side: 'project', project, target, title, request: msg?.text ?? '', by: this.w.who(g), at }];
    // Started with an agent picked: the request is also queued to it as a command, in the same append,
    // refused as a command would be (no such agent, ended, revoked, trusted local, queue full).
    let agentRefusal: HttpError | null = null;
    if (body.agent !== undefined) {
      await book.fresh();
      const why = this.commandRefusal(book, body.agent, g.uid, project) ?? (await this.budgetRefusal(project, body.agent));
      if (why) agentRefusal = why.status === 404 ? new HttpError(404, 'not_found', `no agent ${body.agent} in ${project} to start it with`) : new HttpError(409, 'conflict', `cannot queue it to ${body.agent}: ${why.text}`);
      events[0].command = rid('k-');
      events.push({ type: 'command.queued', id: events[0].command, agent: body.agent, conversation: agentChatOf(body.agent), text: msg?.text ?? '', by: this.w.who(g), at });
    }
    const c = await this.w.commit(book, events, rawKey, refusal ?? agentRefusal);
    // Its answer is kept only once both halves are stored.
    if (c.answer !== undefined) return this.w.reply(res, c, () => null);
    const ev = c.stored[0];
    const queued = c.stored.find((e) => e.type === 'command.queued');
    const label = queued ? book.state.agents.get(String(queued.agent))?.label || String(queued.agent) : undefined;
    const link: Record<string, unknown> = { type: 'conversation.linked', side: 'private', project, target: ev.target, title: ev.title, by: this.w.who(g), at: ev.at };
    if (queued) Object.assign(link, { command: queued.id, agent: label });
    // Before keys were scoped by the route layer, this half was keyed `<private stream>|<uid>|link:<the project half's key>`.
    await this.w.commit(priv, [link], rawKey.withLegacy((stream, k) => `${stream}|${g.uid}|link:${book.stream}|${g.uid}|${k}`), null);
    await this.w.reply(res, c, () => (queued ? { project, conversation: ev.target, command: queued.id, position: book.pos } : { project, conversation: ev.target, position: book.pos }));
  };

  /** A spent budget that covers the agent (its Claude Code session, its team, the project): 409 with the budget's reason. */
  private async budgetRefusal(project: string, agent: string): Promise<{ status: 409; text: string } | null> {
    const why = this.w.opts.budgetPause ? await this.w.opts.budgetPause(project, agent) : null;
    return why ? { status: 409, text: why } : null;
  }

  /** Why `agent` cannot take a command from `uid` in the project now (404: no such agent), or null. */
  private commandRefusal(book: Book, agent: string, uid: string, project: string): { status: 404 | 409; text: string } | null {
    // An id the project has no agent by (Object.prototype's keys included) is a 404 before the fold is asked.
    const found = book.state.agents.get(agent);
    if (!found) return { status: 404, text: 'no such agent' };
    const why = mayCommand(book.state, agent, uid);
    if (why) return { status: 409, text: why };
    // Its owner removed a moment ago: the revocation that follows is on its way (syncMembers).
    const owner = book.state.spaces.get(found.space)?.owner;
    if (owner && !this.w.isMember(owner.uid, project)) return { status: 409, text: `its Space's owner ${owner.name} is no longer a member of this project` };
    return null;
  }

  // ------------------------------------------------------------ commands

  postCommand = async ({ res, grant, body, key: rk }: Ctx<Static<typeof NewCommand>>): Promise<void> => {
    const g = grant!;
    const { agent, text } = body;
    const book = await this.w.projectBook(g.project);
    await book.fresh();
    const why = this.commandRefusal(book, agent, g.uid, g.project) ?? (await this.budgetRefusal(g.project, agent));
    const refusal = why ? new HttpError(why.status, why.status === 404 ? 'not_found' : 'conflict', `cannot send to ${agent}: ${why.text}`) : null;
    const done = await this.w.commit(book, [{ type: 'command.queued', id: rid('k-'), agent, conversation: agentChatOf(agent), text, by: this.w.who(g), at: Date.now() }], rk!, refusal);
    const id = String(done.stored[0].id);
    // As it is now, kept with the key: a retry gets this, not the queue of its own time.
    await this.w.reply(res, done, () => {
      const c = book.state.commands.get(id);
      const a = book.state.agents.get(agent);
      return { id, position: c?.position ?? null, status: c?.status ?? null, queue: a ? a.queue : [] };
    });
  };

  postCancel = async ({ res, params, grant, key: rk }: Ctx): Promise<void> => {
    const g = grant!;
    const book = await this.w.projectBook(g.project);
    const c = book.state.commands.get(params.id);
    const refusal = !c ? new HttpError(404, 'not_found', `no such command: ${params.id}`) : c.status !== 'queued' ? new HttpError(409, 'conflict', `the command is ${c.status}; only a queued command can be cancelled`) : null;
    const done = await this.w.commit(book, [{ type: 'command.cancelled', command: params.id, ...chatOf(c), by: this.w.who(g), at: Date.now() }], rk!, refusal);
    await this.w.reply(res, done, () => ({ id: params.id, status: book.state.commands.get(params.id)?.status }));
  };

  postCallable = async ({ res, params, grant, body, key: rk }: Ctx<Static<typeof Callable>>): Promise<void> => {
    const g = grant!;
    const book = await this.w.projectBook(g.project);
    const a = book.state.agents.get(params.id);
    if (!a) throw new HttpError(404, 'not_found', `no such agent: ${params.id}`);
    const sp = book.state.spaces.get(a.space)!;
    if (sp.owner.uid !== g.uid) throw new HttpError(403, 'forbidden', `only ${sp.owner.name}, who owns the Space, may change who can call ${a.label}`);
    const done = await this.w.commit(book, [{ type: 'agent.callable', agent: a.id, callable: body.callable, by: this.w.who(g), at: Date.now() }], rk!, null);
    await this.w.reply(res, done, () => ({ id: a.id, callable: book.state.agents.get(a.id)!.callable }));
  };

  // ------------------------------------------------------------ spaces

  postSpace = async ({ res, principal, body, key: rk }: Ctx<Static<typeof NewSpace>>): Promise<void> => {
    const p = principal!;
    const key = rk!;
    const ev = { type: 'space.registered', id: rid('s-'), name: body.name, by: this.w.who(p), at: Date.now() };
    const r = await key.append(this.w.store, SPACES_STREAM, [{ type: ev.type, body: JSON.stringify(ev) }]);
    await this.w.readSpaces();
    const stored = r.duplicate ? parse((await this.w.store.read(SPACES_STREAM, r.first - 1, 1))[0].body) : ev;
    // The owner's open Work views list their Spaces: tell them (lossy; they refetch).
    this.w.toPerson(p.uid, 'spaces', { space: stored.id });
    // A bridge registers under the same key at every start: it gets the first answer (`duplicate: false` included).
    await this.w.reply(res, { key, stream: SPACES_STREAM, answer: r.answer }, () => ({ id: stored.id, name: stored.name, owner: stored.by, duplicate: r.duplicate }));
  };

  getSpaces = ({ res, principal }: Ctx): void => {
    const p = principal!;
    const mine = [...this.w.spaces.values()]
      .filter((s) => s.owner.uid === p.uid)
      .map((s) => ({ ...s, projects: this.w.contributions(s.id).map((b) => (b.scope as { project: string }).project) }));
    sendJson(res, 200, { spaces: mine });
  };

  /** The Space's owner contributes it to a project (editor at least there). */
  postContribute = async ({ res, grant, body, key: rk }: Ctx<Static<typeof Contribute>>): Promise<void> => {
    const g = grant!;
    const project = g.project;
    const book = await this.w.projectBook(project);
    const sp = await this.w.needSpace(body.space, g);
    const refusal = book.state.spaces.get(sp.id)?.contributed ? new HttpError(409, 'conflict', `${sp.name} is already contributed to ${project}`) : null;
    const done = await this.w.commit(book, [{ type: 'space.contributed', space: sp.id, name: sp.name, owner: sp.owner, by: this.w.who(g), at: Date.now() }], rk!, refusal);
    await this.w.reply(res, done, () => ({ space: sp.id, project, contributed: true }));
  };

  /**
   * The Space's owner, or a project owner, revokes future execution. The
   * owner needs no role in the project: a member who was removed can still
   * take their machine back (their contributions were revoked at removal; a
   * later one, made while they were a member again, is theirs to revoke).
   */
  postRevoke = async ({ res, params, principal, key: rk }: Ctx): Promise<void> => {
    const g = principal!;
    const project = checkedProject(params.project ?? '');
    const role = this.w.access.roleIn(g, project);
    const known = this.w.projectList().some((x) => x.id === project);
    const book = known ? await this.w.book(project) : null;
    await book?.fresh();
    const sp = book?.state.spaces.get(params.space);
    const mine = !!sp && sp.owner.uid === g.uid;
    // A stranger learns nothing: the same 403 whether the project or the Space exists or not.
    if (!mine && role === null) throw new HttpError(403, 'forbidden', `you are not a member of project "${project}"`);
    if (!book) throw new HttpError(404, 'not_found', `no such project: ${project}`);
    if (!sp) throw new HttpError(404, 'not_found', `${params.space} was never contributed to ${project}`);
    if (!mine && !roleAtLeast(role, 'owner')) throw new HttpError(403, 'forbidden', `only ${sp.owner.name} (the Space's owner) or a project owner may revoke it`);
    const refusal = !sp.contributed ? new HttpError(409, 'conflict', `${sp.name} is already revoked`) : null;
    const done = await this.w.commit(book, [{ type: 'space.revoked', space: sp.id, by: this.w.who(g), at: Date.now() }], rk!, refusal);
    await this.w.reply(res, done, () => ({ space: sp.id, project, contributed: false }));
  };

  /**
   * The Space's owner revokes it in every project it is contributed to,
   * member there or not: one `space.revoked` per project, each under the
   * request's key in that project's stream (a retry stores nothing again).
   * Answers the projects it was revoked in by this request.
   */
  postRevokeEverywhere = async ({ res, params, principal, key: rk }: Ctx): Promise<void> => {
    const p = principal!;
    const sp = await this.w.needSpace(params.id, p);
    await this.w.freshProjects();
    const revoked: string[] = [];
    for (const book of [...this.w.loaded.values()].filter((b) => 'project' in b.scope)) {
      const key = rk!;
      const contributed = !!book.state.spaces.get(sp.id)?.contributed;
      const prior = await key.seen(this.w.store, book.stream);
      if (!contributed && !prior) continue;
      const done = await this.w.commit(book, contributed ? [{ type: 'space.revoked', space: sp.id, by: this.w.who(p), at: Date.now() }] : [], key, null);
      if (done.stored.length) revoked.push((book.scope as { project: string }).project);
    }
    sendJson(res, 200, { space: sp.id, revoked: revoked.sort() });
  };

  /** The contribution a Space's report is about: the named project, or its only one. */
  private async reportBook(spaceId: string, project: string | undefined, p: Principal): Promise<Book> {
    await this.w.freshProjects();
    const all = this.w.contributions(spaceId, p);
    // Contributed where its owner is no longer a member (revoked there at the removal): say so.
    const removed = () => [...this.w.loaded.values()].some((b) => 'project' in b.scope && b.state.spaces.has(spaceId) && this.w.access.roleIn(p, b.scope.project) === null);
    if (all.length === 0 && (this.w.contributions(spaceId).length > 0 || removed())) throw new HttpError(403, 'forbidden', 'you are no longer a member of the project this Space is contributed to');
    if (project !== undefined) {
      const b = all.find((x) => (x.scope as { project: string }).project === project);
      if (!b) throw new HttpError(409, 'conflict', `this Space is not contributed to project ${project} (or was revoked)`);
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
  postAgents = async ({ res, params, principal, body, key: rk }: Ctx<Static<typeof Agents>>): Promise<void> => {
    const p = principal!;
    const spaceId = params.id;
    const book = await this.reportBook(spaceId, body.project, p);
    const key = rk!;
    await book.fresh();
    const at = Date.now();
    // The reporting member (or token owner), from the transport, on every event.
    const by = this.w.who(p);
    const events: Record<string, unknown>[] = [];
    const seen = new Set<string>();
    for (const o of body.agents as (Static<typeof Observation> & Record<string, unknown>)[]) {
      const session = o.session;
      seen.add(session);
      if (o.ended === true) events.push({ type: 'agent.ended', space: spaceId, session, reason: typeof o.reason === 'string' ? o.reason.slice(0, WORK_LIMITS.reason) : 'ended', by, at });
      else events.push({ type: 'agent.observed', space: spaceId, session, ...pick(o, ['label', 'pane', 'cwd', 'mode', 'origin', 'state']), by, at });
    }
    if (body.full === true)
      for (const a of agentsOfSpace(book.state, spaceId))
        if (a.state !== 'ended' && !seen.has(a.session)) events.push({ type: 'agent.ended', space: spaceId, session: a.session, reason: 'gone from the Space', by, at });
    // Keep only what changes something (folded in order, then undone).
    const changes = previewWork(book.state, events);
    const real = events.filter((_, i) => changes[i].length > 0);
    const project = (book.scope as { project: string }).project;
    // The answer is the Space's agents as the project now sees them, kept with
    // the key when something was stored (a report that changes nothing stores nothing, not even its key).
    const done = await this.w.commit(book, real, key, null);
    await this.w.reply(res, done, () => ({ project, agents: this.spaceAgents(book, spaceId) }));
  };

  private spaceAgents(book: Book, space: string): { id: string; session: string; state: string }[] {
    return agentsOfSpace(book.state, space).map((a) => ({ id: a.id, session: a.session, state: a.state }));
  }

  /** A Space reports an execution's lifecycle for a command addressed to one of its agents. */
  postExecution = async ({ req, res, url, params, principal, body, key: rk }: Ctx<Static<typeof Execution>>): Promise<void> => {
    const p = principal!;
    const spaceId = params.id;
    const cmdId = body.command;
    // Revocation stops future execution, not the report of one that runs.
    await this.w.freshProjects();
    const book = [...this.w.loaded.values()].find((b) => 'project' in b.scope && b.state.commands.has(cmdId));
    if (!book) throw new HttpError(404, 'not_found', `no such command: ${cmdId}`);
    const c = book.state.commands.get(cmdId)!;
    const a = book.state.agents.get(c.agent)!;
    if (a.space !== spaceId) throw new HttpError(403, 'forbidden', 'that command is addressed to an agent of another Space');
    const inProject = (book.scope as { project: string }).project;
    if (this.w.access.roleIn(p, inProject) === null) throw new HttpError(403, 'forbidden', `you are no longer a member of project "${inProject}"; this Space cannot report there`);
    const kind = body.event;
    const ev: Record<string, unknown> = { type: EXECUTION_EVENTS[kind], command: cmdId, ...chatOf(c), by: this.w.who(p), at: Date.now() };
    let refusal: HttpError | null = null;
    if (kind === 'blocked') {
      ev.reason = body.reason !== undefined ? body.reason.slice(0, WORK_LIMITS.reason) : 'waiting for a decision';
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
    // The approval this resume ends (a blocked execution's pointer is cleared only by its own).
    if (kind === 'resumed' && body.rid !== undefined) ev.rid = body.rid;
    if (kind === 'output') {
      if (body.text === undefined) throw new HttpError(400, 'bad_request', '"text" is required with "event": "output"');
      ev.text = body.text;
    }
    if (kind === 'finished') {
      ev.status = body.status === 'failed' ? 'failed' : 'done';
      ev.result = (body.result ?? '').slice(0, WORK_LIMITS.text);
    }
    const [changes] = previewWork(book.state, [ev]);
    refusal ??=
      changes.length === 0
        ? new HttpError(409, 'conflict', kind === 'started' ? `command ${cmdId} cannot start: it is ${c.status}${c.status === 'queued' ? ' behind others, or the agent is busy or ended (one at a time, in queue order)' : ''}` : `command ${cmdId} has no ${kind === 'output' ? 'running' : 'matching'} execution to update`)
        : null;
    const done = await this.w.commit(book, [ev], rk!, refusal);
    await this.w.reply(res, done, () => {
      const x = book.state.executions.get(`x-${cmdId}`);
      return { project: inProject, execution: x?.id ?? null, state: x?.state ?? null, result: x?.result ?? null };
    });
  };

  /**
   * Where a blocked execution's approval waits: `{thread, session, rid, tool,
   * digest}` of the `session.approval` the bridge posted pending on its board
   * thread. The board's project is not taken from the payload: it is the one
   * the board routes resolve for this same caller (its token's project, else
   * its `Roost-Project`, else the default), where the bridge posted the
   * request; and the caller must be an editor there, as posting it needed.
   * The request is an approval of kind `fleet` in the one approvals model
   * (docs/approvals.md): members decide it through POST
   * /approvals/:id/decision (or the board's alias), which checks their own
   * role and records them as the decider; Work stores no decision.
   *
   * The Space's word is not enough: the board must hold that `rid` pending
   * in that board session, with the same tool and digest (a Space could
   * otherwise show a harmless request and point the buttons at another of
   * its own). The pointer stored is the board's copy. A malformed pointer or
   * a caller with no right to the board throws (400/403, nothing stored); a
   * pointer the board contradicts is a refusal (409), keyed like any other.
   */
  private async approvalPointer(req: IncomingMessage, url: URL, p: Principal, raw: Static<typeof Pointer>): Promise<{ pointer: PendingApproval } | { refusal: HttpError }> {
    // The shape was checked by the route's schema; the tool and digest are kept to the board's caps.
    const out = { thread: raw.thread, session: raw.session, rid: raw.rid, tool: raw.tool.slice(0, WORK_LIMITS.tool), digest: (raw.digest ?? '').slice(0, WORK_LIMITS.digest) };
    const project = projectOf(req, url, p);
    const role = this.w.access.roleIn(p, project);
    if (!role || !roleAtLeast(role, 'editor')) throw new HttpError(403, 'forbidden', `this Space cannot post approvals on the board of project "${project}" (it needs the editor role there), so it cannot point at one`);
    const refuse = (why: string) => ({ refusal: new HttpError(409, 'conflict', `"approval" ${why}`) });
    if (!this.w.opts.boards) return refuse('cannot be checked: this server has no fleet board');
    // Read after the bridge's board post was answered; on several nodes the board catches up with the log first.
    const held = await this.w.opts.boards.approvalOf(project, out.thread, out.session, out.rid);
    const where = `session "${out.session}" on board thread "${out.thread}" of project "${project}"`;
    if (!held) return refuse(`points at request ${out.rid}, which ${where} does not hold`);
    // And the board session must be this caller's: a Space shows its own bridge's requests, never
    // one of another member's sessions on the same board.
    const spawner = await this.w.opts.boards.spawnerOf(project, out.thread, out.session);
    if (spawner !== p.uid) return refuse(`points at ${where}, which this caller did not start (a Space points only at its own bridge's sessions)`);
    if (held.state !== 'pending') return refuse(`points at request ${out.rid} of ${where}, which was already ${held.state}${held.by ? ` by ${held.by}` : ''}`);
    if (boardLine(out.tool, WORK_LIMITS.tool) !== held.tool || boardLine(out.digest, WORK_LIMITS.digest) !== held.digest)
      return refuse(`says ${out.tool} ${out.digest}, but request ${out.rid} of ${where} is ${held.tool} ${held.digest}`);
    return { pointer: { project, thread: out.thread, session: out.session, rid: out.rid, tool: held.tool, digest: held.digest } };
  }

  /** Lossy terminal output of one agent, relayed to whoever watches it; never stored. */
  postTerminal = ({ res, params, body }: Ctx<Static<typeof Terminal>>): void => {
    sendJson(res, 200, { delivered: this.w.terminal(agentIdOf(params.id, body.session), body.data) });
  };

  /** A Space's command feed (feed.ts, the live scope `space:<id>`): its owner's bridge only. */
  getFeed = async ({ req, res, url, params, principal }: Ctx): Promise<void> => {
    await this.w.live.serve(req, res, url, principal!, [`space:${params.id}`]);
  };

  /**
   * The lossy stream of a project: presence now and on every change, role
   * changes of the caller (`role`), and the terminal of `?agent=` when given.
   */
  getLive = async ({ req, res, url, grant }: Ctx): Promise<void> => {
    const book = await this.w.projectBook(grant!.project);
    await this.w.live.serve(req, res, url, grant!, [this.lossyScope(book, url)]);
  };
}
