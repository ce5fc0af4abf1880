// The approvals app on the server: the log's `approvals` stream folded by the
// shared approvals fold, served as GET /approvals, GET /approvals/stream and
// POST /approvals/:id/decision, and awaited by the hook endpoints.
//
// Why it is shaped like this:
// - every request, decision, expiry and withdrawal is an event in the log,
//   so the audit trail survives restarts and every node folds the same
//   outcome; the first outcome in log order wins (the fold's rule);
// - waiters are woken by the fold, never by the decision handler: a decision
//   made on another node reaches this node's waiting hook through the
//   store's commit wake-up, exactly like a local one;
// - expiry is a logged event (`approval.expired`), appended by whichever
//   node's timer fires first at the deadline; a late decision then loses
//   (409), and the waiting hook answers deny.
//
// Who decided (`by`) is the server's to say: in local mode the request may
// name a label (default "local owner"); once accounts exist the
// authenticated caller's name replaces anything the body says.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  APPROVALS_PROTOCOL_VERSION,
  APPROVAL_LIMITS,
  applyApproval,
  approvalsToJSON,
  clampWindow,
  dueToExpire,
  emptyApprovals,
  nextDeadline,
  pendingApprovals,
  recentApprovals,
  type Approval,
  type ApprovalsState,
} from '../core/approvals.js';
import type { EventStore, LogEntry } from '../storage/types.js';
import { Type, type Static } from '@sinclair/typebox';
import { HttpError, idempotencyKeyOf, sendJson } from './http.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';
import { LiveChannel, sseFrame, type Frame, type LiveOptions } from './live.js';
import { StreamFollower, rebuildFrames } from './follower.js';
import { LOCAL_OWNER, LocalAccess, type Access } from './access.js';

export const APPROVALS_STREAM = 'approvals';

/** Each project has its own approvals; the default project's keep the stream they always had. */
export function approvalsStream(project: string): string {
  return project === 'default' ? APPROVALS_STREAM : `${APPROVALS_STREAM}:${project}`;
}

export interface ApprovalOptions {
  live: Omit<LiveOptions, 'epoch'>;
  /** Replays longer than this get a reset snapshot instead. */
  maxReplay: number;
  /** Who is calling (defaults to local mode: the person at the machine). */
  access?: Access;
  /** The log stream (default: the default project's, `approvals`). */
  stream?: string;
}

export interface NewApproval {
  agent: string;
  agentName?: string;
  team?: string;
  source: string;
  app?: string;
  session?: string;
  tool: string;
  input: string;
  window?: number;
}

function fold(state: ApprovalsState, entry: LogEntry): string {
  const effects = applyApproval(state, JSON.parse(entry.body), entry.position);
  return `{"event":${entry.body},"effects":${JSON.stringify(effects)}}`;
}

export class ApprovalService {
  state: ApprovalsState = emptyApprovals();
  private waiters = new Map<string, Set<(a: Approval) => void>>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt: number | null = null;
  private follower: StreamFollower;
  private stopped = false;
  channel!: LiveChannel;
  readonly stream: string;

  constructor(
    private store: EventStore,
    private opts: ApprovalOptions,
  ) {
    this.stream = opts.stream ?? APPROVALS_STREAM;
    // After every run of folded entries the follower wakes position waiters; then the expiry timer is re-armed.
    this.follower = new StreamFollower(store, this.stream, { apply: (e) => this.applyEntry(e), afterFold: () => this.arm() });
  }

  get position(): number {
    return this.follower.position;
  }

  private get pos(): number {
    return this.follower.position;
  }

  async start(): Promise<void> {
    this.channel = new LiveChannel(
      {
        position: () => this.pos,
        snapshot: (reset) => this.snapshotFrame(reset),
        replay: (after, upTo) => this.replay(after, upTo),
      },
      { ...this.opts.live, epoch: this.store.epoch },
    );
    this.follower.listen();
    await this.follower.catchUp();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const done = this.follower.stop(); // stops hearing commits now
    this.channel?.stop();
    await done;
  }

  /** Folds one entry (the follower calls it in position order), publishes its frame, wakes its approval's waiters. */
  private applyEntry(entry: LogEntry): void {
    const data = fold(this.state, entry);
    this.channel.publish({ position: entry.position, bytes: sseFrame(this.store.epoch, entry.position, 'event', data) });
    // Wake whoever waits on an approval this entry closed.
    const id = (JSON.parse(entry.body) as { id?: unknown }).id;
    if (typeof id === 'string') {
      const a = this.state.byId.get(id);
      const ws = this.waiters.get(id);
      if (a && a.status !== 'pending' && ws) {
        this.waiters.delete(id);
        for (const w of ws) w(a);
      }
    }
  }

  private arm(): void {
    if (this.stopped) return;
    const next = nextDeadline(this.state);
    if (next === this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = next;
    if (next === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = null;
      void this.expireDue();
    }, Math.max(0, next - Date.now()));
    this.timer.unref();
  }

  private async expireDue(): Promise<void> {
    const now = Date.now();
    const due = dueToExpire(this.state, now);
    try {
      // Every node's timer fires at the deadline; the key makes the expiry one
      // event in the log whichever node writes it first (the fold would ignore
      // a second one anyway: the first outcome wins).
      for (const id of due) {
        await this.store.append(this.stream, [{ type: 'approval.expired', body: JSON.stringify({ type: 'approval.expired', id, ts: now }) }], {
          idempotencyKey: `${this.stream}:expired:${id}`,
        });
      }
    } catch (e) {
      console.error('roost: expiring approvals failed', e);
      // Try again shortly: a pending approval past its deadline must end as a denial.
      if (!this.stopped) setTimeout(() => void this.expireDue(), 1000).unref();
      return;
    }
    this.arm();
  }

  /** Resolves once this node has folded the stream up to `position`. */
  private folded(position: number): Promise<void> {
    return this.follower.folded(position);
  }

  // ------------------------------------------------------------ commands

  /** Logs a new pending approval; resolves with it once folded. */
  async request(n: NewApproval): Promise<Approval> {
    const id = 'ap_' + randomUUID().replace(/-/g, '').slice(0, 20);
    const body = {
      type: 'approval.requested',
      id,
      agent: n.agent,
      agentName: n.agentName,
      team: n.team,
      source: n.source,
      app: n.app ?? 'floor',
      session: n.session,
      tool: n.tool,
      input: n.input,
      window: clampWindow(n.window),
      ts: Date.now(),
    };
    const r = await this.store.append(this.stream, [{ type: body.type, body: JSON.stringify(body) }]);
    await this.folded(r.last);
    const a = this.state.byId.get(id);
    if (!a) throw new HttpError(400, 'bad_request', 'the approval request was not acceptable (agent and tool are required)');
    return a;
  }

  /** Resolves when the approval is closed (decided, expired or withdrawn). */
  wait(id: string): Promise<Approval> {
    const a = this.state.byId.get(id);
    if (a && a.status !== 'pending') return Promise.resolve(a);
    return new Promise((ok) => {
      let ws = this.waiters.get(id);
      if (!ws) this.waiters.set(id, (ws = new Set()));
      ws.add(ok);
    });
  }

  /** The agent stopped waiting (its hook went away): the request closes unanswered. */
  async withdraw(id: string, reason: string): Promise<void> {
    const a = this.state.byId.get(id);
    if (!a || a.status !== 'pending') return;
    await this.store.append(this.stream, [
      { type: 'approval.withdrawn', body: JSON.stringify({ type: 'approval.withdrawn', id, reason, ts: Date.now() }) },
    ]);
  }

  /**
   * Records a decision. Resolves with the approval and whether this decision
   * is the one that closed it (false: something else came first in the log).
   */
  async decide(id: string, decision: 'allow' | 'deny', by: string, opts: { reason?: string; idempotencyKey?: string } = {}): Promise<{ approval: Approval; won: boolean; duplicate: boolean }> {
    const a = this.state.byId.get(id);
    if (!a && !this.state.forgotten.has(id)) throw new HttpError(404, 'not_found', `no approval request "${id.slice(0, 80)}"`);
    if (!a || (a.status !== 'pending' && !opts.idempotencyKey)) {
      throw new HttpError(409, 'conflict', a ? `approval ${id} is already ${a.status}${a.decidedBy ? ' by ' + a.decidedBy : ''}` : `approval ${id} is already closed`);
    }
    const body = { type: 'approval.decided', id, decision, by, reason: opts.reason, ts: Date.now() };
    const r = await this.store.append(this.stream, [{ type: body.type, body: JSON.stringify(body) }], { idempotencyKey: opts.idempotencyKey });
    await this.folded(r.last);
    const now = this.state.byId.get(id) ?? a;
    return { approval: now, won: now.closedAt === r.last, duplicate: r.duplicate };
  }

  // ------------------------------------------------------------ endpoints

  private snapshotBody(reset: boolean): string {
    return JSON.stringify({
      protocol: APPROVALS_PROTOCOL_VERSION,
      epoch: this.store.epoch,
      position: this.pos,
      reset,
      state: approvalsToJSON(this.state),
    });
  }

  private snapshotFrame(reset: boolean): Frame {
    return { position: this.pos, bytes: sseFrame(this.store.epoch, this.pos, 'snapshot', this.snapshotBody(reset)) };
  }

  /** Rebuilds frames (after, upTo] by folding the stream from its start (it is small: a few events per approval). */
  private async replay(after: number, upTo: number): Promise<Frame[] | null> {
    if (upTo > this.opts.maxReplay) return null;
    return rebuildFrames(this.store, this.stream, { state: emptyApprovals(), position: 0 }, after, upTo, (state, e) => ({
      state,
      bytes: sseFrame(this.store.epoch, e.position, 'event', fold(state, e)),
    }));
  }

  getApprovals = (_req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const limit = Math.min(100, Math.max(0, Number(url.searchParams.get('recent') ?? 20) || 0));
    sendJson(res, 200, {
      protocol: APPROVALS_PROTOCOL_VERSION,
      epoch: this.store.epoch,
      position: this.pos,
      now: Date.now(),
      pending: pendingApprovals(this.state),
      recent: recentApprovals(this.state, limit),
    });
  };

  getApproval = (res: ServerResponse, id: string): void => {
    const a = this.state.byId.get(id);
    if (!a) throw new HttpError(404, 'not_found', `no approval request "${id.slice(0, 80)}"`);
    sendJson(res, 200, a);
  };

  getStream = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    this.channel.subscribe(req, res, url);
  };

  postDecision = async (req: IncomingMessage, res: ServerResponse, id: string, b: Static<typeof Decision>): Promise<void> => {
    const key = idempotencyKeyOf(req);
    const by = await decider(this.opts.access ?? LOCAL_ACCESS, req, b.by);
    const r = await this.decide(id, b.decision, by, {
      reason: b.reason?.slice(0, APPROVAL_LIMITS.reason),
      idempotencyKey: key ? (this.stream === APPROVALS_STREAM ? `approval:${key}` : `${this.stream}:${key}`) : undefined,
    });
    if (!r.won && !r.duplicate) {
      const a = r.approval;
      throw new HttpError(409, 'conflict', `approval ${a.id} is already ${a.status}${a.decidedBy ? ' by ' + a.decidedBy : ''}`);
    }
    sendJson(res, 200, { ok: true, approval: r.approval, duplicate: r.duplicate });
  };
}

/** A decision's body: `by` is a label in local mode only; `reason` is kept to APPROVAL_LIMITS.reason characters. */
const Decision = Type.Object({
  decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
  by: Type.Optional(Type.String({ maxLength: 1000 })),
  reason: Type.Optional(Type.String({ maxLength: 4000 })),
});

/** The approvals routes, each served by the request's project's service. */
export function approvalsRoutes(of: PerProject<ApprovalService>): Route[] {
  return [
    route({ method: 'GET', path: '/approvals', auth: 'viewer', handler: async ({ req, res, url }) => (await of.of(req)).getApprovals(req, res, url) }),
    route({ method: 'GET', path: '/approvals/stream', auth: 'viewer', stream: true, handler: async ({ req, res, url }) => (await of.of(req)).getStream(req, res, url) }),
    route({ method: 'GET', path: '/approvals/:id', auth: 'viewer', handler: async ({ req, res, params }) => (await of.of(req)).getApproval(res, params.id) }),
    route({
      method: 'POST',
      path: '/approvals/:id/decision',
      auth: 'editor',
      body: Decision,
      doc: 'the decider is the caller\'s name',
      handler: async ({ req, res, params, body }) => (await of.of(req)).postDecision(req, res, params.id, body),
    }),
  ];
}

/**
 * Who made a decision, decided by the server. Local mode has one person (the
 * owner at the machine) and no login, so the body may offer a label and the
 * default is "local owner". When shared mode brings accounts, the
 * authenticated caller is the decider and the body's `by` is ignored.
 */
export async function decider(access: Access, req: IncomingMessage, offered: string | undefined): Promise<string> {
  const p = await access.principal(req);
  if (access.mode === 'shared') {
    if (!p) throw new HttpError(401, 'unauthorized', 'sign in, or send a token (Authorization: Bearer ...), to decide approvals');
    return p.name;
  }
  const label = offered?.replace(/\s+/g, ' ').trim().slice(0, APPROVAL_LIMITS.by);
  return label || p?.name || LOCAL_OWNER.name;
}

const LOCAL_ACCESS = new LocalAccess();
