// The fleet's routes (docs/fleet.md): the board's HTTP face over the service
// (./service.ts), which knows nothing of them.
//   GET  /fleet/:thread           the board now
//   POST /fleet/:thread           post session events (one or a batch)
//   GET  /fleet/:thread/rewind    the board as it was
//   GET  /fleet/:thread/stream    snapshot, then live frames (SSE)
//   POST /fleet/:thread/requests  ask the thread's bridge to start a session
//   POST /fleet/:thread/live      a lossy frame for the thread's readers

import { FLEET_PROTOCOL_VERSION, emptySessions } from '../../core/fleet.js';
import { checkLive, checkRequest, checkSessionEvent, normalizeSessionEvent, withSessionIdentity, type RefusedRequest, type StartRequest } from '../../core/fleet-wire.js';
import { randomBytes } from 'node:crypto';
import { HttpError, sendJson } from '../http.js';
import { route, type Ctx, type ParamRule, type Route } from '../route.js';
import { parseRewindAt, rewind } from '../rewind.js';
import { fold, type SnapshotBody } from './board.js';
import { FLEET_STREAM_PREFIX, MAX_BODY, MAX_SESSION_BATCH, THREAD_PATTERN, boardStream, projectFor } from './names.js';
import type { FleetService } from './service.js';

export class FleetRoutes {
  constructor(private svc: FleetService) {}

  /** The fleet's routes (docs/fleet.md): bodies are checked by the pure wire checks of src/core/fleet-wire.ts. */
  list(): Route[] {
    const thread = { thread: THREAD_PARAM };
    return [
      route({ method: 'GET', path: '/fleet/:thread', auth: 'viewer', params: thread, page: true, handler: this.getState }),
      // Keys as stored before the route layer scoped them (keys.ts): `<board's stream>:<key>`, on the board and in the approvals alike.
      route({ method: 'POST', path: '/fleet/:thread', auth: 'editor', params: thread, body: { wire: checkBatch }, maxBody: MAX_BODY, key: { legacy: (_s, k, c) => `${boardStream(c.project, c.params.thread)}:${k}` }, handler: this.post }),
      route({ method: 'GET', path: '/fleet/:thread/rewind', auth: 'viewer', params: thread, doc: 'the board as it was at ?at=<position or ISO time> (read-only)', handler: this.getRewind }),
      route({ method: 'GET', path: '/fleet/:thread/stream', auth: 'viewer', params: thread, stream: true, handler: ({ req, res, url, params }) => this.svc.serveStream(req, res, url, projectFor(req), params.thread) }),
      route({ method: 'POST', path: '/fleet/:thread/requests', auth: 'editor', params: thread, body: { wire: wireOf((x) => checkRequest(x, newRequestId)) }, key: { legacy: (_s, k, c) => `${FLEET_STREAM_PREFIX}${c.params.thread}:${k}` }, handler: this.postRequest }),
      route({ method: 'POST', path: '/fleet/:thread/live', auth: 'editor', params: thread, body: { wire: wireOf(checkLive) }, maxBody: 64 * 1024, handler: this.postLive }),
    ];
  }

  post = async ({ req, res, params, body: batch, key }: Ctx<Batch>): Promise<void> => {
    const { items, where } = batch;
    const who = this.svc.identify(req);
    const project = projectFor(req);
    const board = await this.svc.board(params.thread, project);
    await board.fresh();
    const approvals = await this.svc.approvalsOf(project);
    // A decision on a request is the one approvals model's decide (the board's post is its alias).
    if (approvals && items.some(isDecision)) {
      if (items.length > 1) throw new HttpError(400, 'bad_request', 'a decision on an approval ("session.approval" allowed or denied) is posted alone, not in a batch');
      const e = withSessionIdentity(normalizeSessionEvent(items[0]), { name: who.name, uid: who.uid, ts: Date.now() });
      return sendJson(res, 200, await this.svc.boardApprovals.decide(req, board, approvals, who, e, key));
    }
    // A spent budget: the bridge takes no new prompt for the thread's sessions (docs/integrations.md, "Budgets").
    if (items.some((i) => i.type === 'session.prompt')) await this.svc.budgetGate(project, params.thread);
    const r = await this.svc.appendChecked(req, who, project, board, approvals, items, where, key);
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
  postRequest = async ({ req, res, params, body: r0, key }: Ctx<StartRequest | RefusedRequest>): Promise<void> => {
    if (r0.type === 'request.start') await this.svc.budgetGate(projectFor(req), params.thread);
    const r = await this.svc.request(projectFor(req), params.thread, this.svc.identify(req), r0, key);
    sendJson(res, 200, { ok: true, ...r });
  };

  /**
   * POST /fleet/:thread/live: a lossy frame (`session.tool`,
   * `session.stream`) relayed at once to the readers of the thread's stream as
   * `event: live` with no `id:` line. Nothing is stored and nothing replays it.
   */
  postLive = async ({ req, res, params, body: live }: Ctx<LiveFrame>): Promise<void> => {
    const who = this.svc.identify(req);
    const board = await this.svc.board(params.thread, projectFor(req));
    const s = board.state.sessions.find((x) => x.id === live.id);
    if (!s) throw new HttpError(404, 'not_found', `no session "${live.id}" on this board`);
    if (s.state === 'ended') throw new HttpError(409, 'conflict', `session "${s.name}" has ended`);
    const frame = withSessionIdentity(live, { name: who.name, uid: who.uid, ts: Date.now() });
    const relayed = board.channel.broadcast('live', JSON.stringify(frame));
    sendJson(res, 200, { ok: true, relayed });
  };

  getState = async ({ req, res, params }: Ctx): Promise<void> => {
    const board = await this.svc.board(params.thread, projectFor(req));
    await board.fresh();
    sendJson(res, 200, { protocol: FLEET_PROTOCOL_VERSION, epoch: this.svc.store.epoch, thread: board.thread, position: board.pos, bridges: this.svc.bridgesOn(projectFor(req), board.thread), ...board.state });
  };

  /** GET /fleet/:thread/rewind?at=: the board folded by the same fold from the nearest kept snapshot up to a past position or time. */
  getRewind = async ({ req, res, url, params }: Ctx): Promise<void> => {
    const at = parseRewindAt(url.searchParams.get('at'));
    const board = await this.svc.board(params.thread, projectFor(req));
    const r = await rewind(this.svc.store, { stream: board.stream, empty: emptySessions, load: (text) => JSON.parse(text) as SnapshotBody, step: (state, entry) => fold(state, entry).state }, at);
    sendJson(res, 200, { protocol: FLEET_PROTOCOL_VERSION, epoch: this.svc.store.epoch, thread: board.thread, position: r.position, at: r.at, head: r.head, first: r.first, ...r.state });
  };
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
