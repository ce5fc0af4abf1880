// The Work routes, /api/v2 (docs/work.md): reads, conversations, commands,
// Spaces and their reports. Each handler checks its caller through the
// service's `Access`, then reads or commits through the service (service.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { GENERAL, WORK_LIMITS, agentIdOf, applyWork, mayCommand, type PendingApproval } from '../../core/work.js';
import { line as boardLine } from '../../core/fleet.js';
import { roleAtLeast } from '../../core/identity.js';
import { HttpError, readJson, sendJson, type Router } from '../http.js';
import { projectOf, type Principal, type Role } from '../access.js';
import { SPACES_STREAM, WORK_PREFIX, parse, type Book } from './book.js';
import { lossy, type WorkService, type Watcher } from './service.js';

/** A board thread, session or approval id (the board's pattern). */
const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BODY = 256 * 1024;

function rid(prefix: string): string {
  return prefix + randomBytes(9).toString('base64url');
}

export class WorkRoutes {
  constructor(private w: WorkService) {}

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

  // ------------------------------------------------------------ reads

  getProjects = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const p = await this.w.principal(req);
    const list = this.w.projectList()
      .map((x) => ({ ...x, role: this.w.access.roleIn(p, x.id) }))
      .filter((x) => x.role !== null)
      .map((x) => ({ ...x, present: this.w.people(x.id) }));
    sendJson(res, 200, { me: this.w.who(p), projects: list });
  };

  getMe = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const p = await this.w.principal(req);
    const project = url.searchParams.get('project');
    const role = project ? this.w.access.roleIn(p, project) : null;
    // Who is present, for a project I may read (on every node: see presence()).
    const present = project && role !== null ? { present: this.w.people(project) } : {};
    sendJson(res, 200, { uid: p.uid, name: p.name, kind: p.kind, project, role, ...present });
  };

  /** The book a read is about: `?scope=private` (the caller's General Chat) or `?project=P` (viewer at least). */
  private async readable(req: IncomingMessage, url: URL): Promise<{ book: Book; p: Principal; role: Role | null }> {
    if (url.searchParams.get('scope') === 'private') {
      const p = await this.w.principal(req);
      return { book: await this.w.privateBook(p.uid), p, role: null };
    }
    const project = this.w.projectOf(url);
    const g = await this.w.access.require(req, project, 'viewer');
    const book = await this.w.book(project);
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
    this.w.watchers.add(w);
    res.on('close', () => {
      this.w.watchers.delete(w);
      if (project) this.w.presence.changed(project);
    });
    book.channel.subscribe(req, res, url);
    if (project) {
      write(lossy('role', { project, role }));
      this.w.presence.changed(project);
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
    const project = this.w.projectOf(url, body);
    const g = await this.w.access.require(req, project, 'editor');
    const title = textField(body, 'title', WORK_LIMITS.title, true);
    const book = await this.w.book(project);
    const stored = await this.w.commit(book, [{ type: 'conversation.created', id: rid('c-'), title, by: this.w.who(g), at: Date.now() }], this.w.key(req, book.stream, g.uid), null);
    sendJson(res, 200, { id: stored[0].id, position: book.pos });
  };

  postMessage = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const text = textField(body, 'text', WORK_LIMITS.text, true);
    const cid = params.id;
    let book: Book;
    let p: Principal;
    if (cid === GENERAL) {
      p = await this.w.principal(req);
      book = await this.w.privateBook(p.uid);
    } else {
      const project = this.w.projectOf(url, body);
      p = await this.w.access.require(req, project, 'editor');
      book = await this.w.book(project);
      const c = book.state.conversations[cid];
      if (!c) throw new HttpError(404, 'not_found', `no such conversation: ${cid}`);
      if (c.kind === 'agent') throw new HttpError(409, 'conflict', 'an agent chat takes commands: POST /api/v2/commands');
    }
    const stored = await this.w.commit(book, [{ type: 'message.posted', conversation: cid, text, by: this.w.who(p), at: Date.now() }], this.w.key(req, book.stream, p.uid), null);
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
    const project = this.w.projectOf(url, body);
    const g = await this.w.access.require(req, project, 'editor');
    const seq = body.message;
    const priv = await this.w.privateBook(g.uid);
    const general = priv.state.conversations[GENERAL];
    const msg = typeof seq === 'number' ? general?.messages.find((m) => m.seq === seq) : undefined;
    const book = await this.w.book(project);
    const rawKey = this.w.key(req, book.stream, g.uid);
    const refusal = !msg || msg.kind !== 'human' || msg.by.uid !== g.uid ? new HttpError(404, 'not_found', `no message ${String(seq)} of yours in General Chat`) : null;
    const title = typeof body.title === 'string' && body.title.trim() ? body.title.trim().slice(0, WORK_LIMITS.title) : (msg?.text.split('\n')[0].slice(0, 80) ?? '');
    const at = Date.now();
    const target = rid('c-');
    const stored = await this.w.commit(book, [{ type: 'conversation.linked', side: 'project', project, target, title, request: msg?.text ?? '', by: this.w.who(g), at }], rawKey, refusal);
    const ev = stored[0];
    await this.w.commit(
      priv,
      [{ type: 'conversation.linked', side: 'private', project, target: ev.target, title: ev.title, by: this.w.who(g), at: ev.at }],
      rawKey ? `${priv.stream}|${g.uid}|link:${rawKey}` : undefined,
      null,
    );
    sendJson(res, 200, { project, conversation: ev.target, position: book.pos });
  };

  // ------------------------------------------------------------ commands

  postCommand = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const body = await this.body(req);
    const project = this.w.projectOf(url, body);
    const g = await this.w.access.require(req, project, 'editor');
    const agent = textField(body, 'agent', WORK_LIMITS.id, true);
    const text = textField(body, 'text', WORK_LIMITS.text, true);
    const book = await this.w.book(project);
    await book.fresh();
    const why = mayCommand(book.state, agent, g.uid);
    const refusal = why ? new HttpError(why === 'no such agent' ? 404 : 409, why === 'no such agent' ? 'not_found' : 'conflict', `cannot send to ${agent}: ${why}`) : null;
    const stored = await this.w.commit(book, [{ type: 'command.queued', id: rid('k-'), agent, text, by: this.w.who(g), at: Date.now() }], this.w.key(req, book.stream, g.uid), refusal);
    const id = String(stored[0].id);
    const c = book.state.commands[id];
    const a = book.state.agents[agent];
    sendJson(res, 200, { id, position: c?.position ?? null, status: c?.status ?? null, queue: a ? a.queue : [] });
  };

  postCancel = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const project = this.w.projectOf(url, body);
    const g = await this.w.access.require(req, project, 'editor');
    const book = await this.w.book(project);
    const c = book.state.commands[params.id];
    const refusal = !c ? new HttpError(404, 'not_found', `no such command: ${params.id}`) : c.status !== 'queued' ? new HttpError(409, 'conflict', `the command is ${c.status}; only a queued command can be cancelled`) : null;
    await this.w.commit(book, [{ type: 'command.cancelled', command: params.id, by: this.w.who(g), at: Date.now() }], this.w.key(req, book.stream, g.uid), refusal);
    sendJson(res, 200, { id: params.id, status: book.state.commands[params.id]?.status });
  };

  postCallable = async (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const project = this.w.projectOf(url, body);
    const g = await this.w.access.require(req, project, 'editor');
    if (typeof body.callable !== 'boolean') throw new HttpError(400, 'bad_request', '"callable" must be true or false');
    const book = await this.w.book(project);
    const a = book.state.agents[params.id];
    if (!a) throw new HttpError(404, 'not_found', `no such agent: ${params.id}`);
    const sp = book.state.spaces[a.space];
    if (sp.owner.uid !== g.uid) throw new HttpError(403, 'forbidden', `only ${sp.owner.name}, who owns the Space, may change who can call ${a.label}`);
    await this.w.commit(book, [{ type: 'agent.callable', agent: a.id, callable: body.callable, by: this.w.who(g), at: Date.now() }], this.w.key(req, book.stream, g.uid), null);
    sendJson(res, 200, { id: a.id, callable: book.state.agents[a.id].callable });
  };

  // ------------------------------------------------------------ spaces

  postSpace = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await this.body(req);
    const p = await this.w.principal(req);
    const name = textField(body, 'name', WORK_LIMITS.name, true);
    const key = this.w.key(req, SPACES_STREAM, p.uid);
    const ev = { type: 'space.registered', id: rid('s-'), name, by: this.w.who(p), at: Date.now() };
    const r = await this.w.store.append(SPACES_STREAM, [{ type: ev.type, body: JSON.stringify(ev) }], { idempotencyKey: key });
    await this.w.readSpaces();
    const stored = r.duplicate ? parse((await this.w.store.read(SPACES_STREAM, r.first - 1, 1))[0].body) : ev;
    // The owner's open Work views list their Spaces: tell them (lossy; they refetch).
    for (const w of this.w.watchers) if (w.p.uid === p.uid && w.project) w.write(lossy('spaces', { space: stored.id }));
    sendJson(res, 200, { id: stored.id, name: stored.name, owner: stored.by, duplicate: r.duplicate });
  };

  getSpaces = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const p = await this.w.principal(req);
    const mine = Object.values(this.w.spaces)
      .filter((s) => s.owner.uid === p.uid)
      .map((s) => ({ ...s, projects: this.w.contributions(s.id).map((b) => (b.scope as { project: string }).project) }));
    sendJson(res, 200, { spaces: mine });
  };

  /** The Space's owner contributes it to a project (editor at least there). */
  postContribute = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const project = this.w.projectOf(new URL('http://x/?project=' + encodeURIComponent(params.project)));
    const g = await this.w.access.require(req, project, 'editor');
    const sp = await this.w.needSpace(textField(body, 'space', WORK_LIMITS.id, true), g);
    const book = await this.w.book(project);
    const refusal = book.state.spaces[sp.id]?.contributed ? new HttpError(409, 'conflict', `${sp.name} is already contributed to ${project}`) : null;
    await this.w.commit(book, [{ type: 'space.contributed', space: sp.id, name: sp.name, owner: sp.owner, by: this.w.who(g), at: Date.now() }], this.w.key(req, book.stream, g.uid), refusal);
    sendJson(res, 200, { space: sp.id, project, contributed: true });
  };

  /** The Space's owner, or a project owner, revokes future execution. */
  postRevoke = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    req.resume();
    const project = this.w.projectOf(new URL('http://x/?project=' + encodeURIComponent(params.project)));
    const g = await this.w.access.require(req, project, 'viewer');
    const book = await this.w.book(project);
    const sp = book.state.spaces[params.space];
    if (!sp) throw new HttpError(404, 'not_found', `${params.space} was never contributed to ${project}`);
    if (sp.owner.uid !== g.uid && !roleAtLeast(g.role, 'owner')) throw new HttpError(403, 'forbidden', `only ${sp.owner.name} (the Space's owner) or a project owner may revoke it`);
    const refusal = !sp.contributed ? new HttpError(409, 'conflict', `${sp.name} is already revoked`) : null;
    await this.w.commit(book, [{ type: 'space.revoked', space: sp.id, by: this.w.who(g), at: Date.now() }], this.w.key(req, book.stream, g.uid), refusal);
    sendJson(res, 200, { space: sp.id, project, contributed: false });
  };

  /** The contribution a Space's report is about: the named project, or its only one. */
  private async reportBook(spaceId: string, body: Record<string, unknown>, p: Principal): Promise<Book> {
    await this.w.freshProjects();
    const all = this.w.contributions(spaceId, p);
    if (all.length === 0 && this.w.contributions(spaceId).length > 0) throw new HttpError(403, 'forbidden', 'you are no longer a member of the project this Space is contributed to');
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
    const p = await this.w.principal(req);
    const sp = await this.w.needSpace(params.id, p);
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
    if (real.length) await this.w.commit(book, real, this.w.key(req, book.stream, p.uid), null);
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
    const p = await this.w.principal(req);
    const sp = await this.w.needSpace(params.id, p);
    const cmdId = textField(body, 'command', WORK_LIMITS.id, true);
    // Revocation stops future execution, not the report of one that runs.
    await this.w.freshProjects();
    const books = [...this.w.loaded.values()].filter((b) => 'project' in b.scope && b.state.commands[cmdId]);
    const book = books[0];
    if (!book) throw new HttpError(404, 'not_found', `no such command: ${cmdId}`);
    const c = book.state.commands[cmdId];
    const a = book.state.agents[c.agent];
    if (a.space !== sp.id) throw new HttpError(403, 'forbidden', 'that command is addressed to an agent of another Space');
    const inProject = (book.scope as { project: string }).project;
    if (this.w.access.roleIn(p, inProject) === null) throw new HttpError(403, 'forbidden', `you are no longer a member of project "${inProject}"; this Space cannot report there`);
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
    await this.w.commit(book, [ev], this.w.key(req, book.stream, p.uid), refusal);
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
  postTerminal = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const body = await this.body(req);
    const p = await this.w.principal(req);
    const sp = await this.w.needSpace(params.id, p);
    const session = textField(body, 'session', WORK_LIMITS.id, true);
    const data = textField(body, 'data', 64 * 1024, true);
    const agent = agentIdOf(sp.id, session);
    let sent = 0;
    for (const w of this.w.watchers) {
      if (w.agent !== agent || !w.project) continue;
      if (!this.w.loaded.get(WORK_PREFIX + w.project)?.state.agents[agent]) continue;
      w.write(lossy('terminal', { agent, data }));
      sent++;
    }
    sendJson(res, 200, { delivered: sent });
  };

  /** A Space's command feed (feed.ts): its owner's bridge only. */
  getFeed = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const p = await this.w.principal(req);
    const sp = await this.w.needSpace(params.id, p);
    this.w.feeds.open(res, sp.id, p);
  };

  /**
   * The lossy stream of a project: presence now and on every change, role
   * changes of the caller (`role`), and the terminal of `?agent=` when given.
   */
  getLive = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const project = this.w.projectOf(url);
    const g = await this.w.access.require(req, project, 'viewer');
    const agent = url.searchParams.get('agent');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write('retry: 1000\n\n');
    const w: Watcher = { res, p: g, project, agent, present: false, write: (f) => void res.write(f) };
    this.w.watchers.add(w);
    res.on('close', () => this.w.watchers.delete(w));
    res.write(lossy('presence', { project, people: this.w.people(project) }));
    res.write(lossy('role', { project, role: g.role }));
  };

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
