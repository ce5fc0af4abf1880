// The approvals app on the server: the log's `approvals` stream of a project
// folded by the shared approvals fold (one model for every kind: tool, fleet,
// verdict, ask; docs/approvals.md), served as GET /approvals, GET
// /approvals/stream, GET /approvals/:id and POST /approvals/:id/decision, and
// awaited by the hook endpoints.
//
// Why it is shaped like this:
// - every request, decision, expiry and withdrawal is an event in the log,
//   so the audit trail survives restarts and every node folds the same
//   outcome; the first outcome in log order wins (the fold's rule), and a
//   decider learns whether it won from the position that closed the request;
// - waiters are woken by the fold, never by the decision handler: a decision
//   made on another node reaches this node's waiting hook through the
//   store's commit wake-up, exactly like a local one;
// - expiry and withdrawal are logged events, keyed per request, appended by
//   whichever node sees the need first (the fold ignores a second outcome);
// - a request whose asker has gone is withdrawn, not left open: its holder
//   (src/server/holders.ts) is a hook connection of some node or a bridge's
//   stream; when nobody holds it any more the sweep withdraws it, and a
//   decision for it is refused (409) after the withdrawal, never recorded as
//   if the call it asked about could still run.
//
// Who decided (`by`) is the server's to say: in local mode the request may
// name a label (default "local owner"); in shared mode the authenticated
// caller's name replaces anything the body says.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import {
  APPROVALS_PROTOCOL_VERSION,
  APPROVAL_LIMITS,
  applyApproval,
  approvalsToJSON,
  clampWindow,
  dueToExpire,
  emptyApprovals,
  hasSessionRules,
  nextDeadline,
  normalizePhrase,
  orphanedApprovals,
  pendingApprovals,
  recentApprovals,
  ruleKeyOf,
  type Approval,
  type ApprovalDetail,
  type ApprovalKind,
  type ApprovalScope,
  type ApprovalsState,
} from '../core/approvals.js';
import { trustedFor } from '../core/agent-trust.js';
import type { EventStore, LogEntry, NewEvent } from '../storage/types.js';
import { Type, type Static } from '@sinclair/typebox';
import { HttpError, sendJson } from './http.js';
import type { RequestKey } from './keys.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';
import type { ChannelOptions, Live, LiveChannel, ScopeSpec } from './live/index.js';
import { FoldedStream } from './folded.js';
import { projectKey } from './floor.js';
import { LOCAL_OWNER, LocalAccess, principalKey, type Access } from './access.js';
import { Holders } from './holders.js';

export const APPROVALS_STREAM = 'approvals';

/** Each project has its own approvals; the default project's keep the stream they always had. */
export function approvalsStream(project: string): string {
  return project === 'default' ? APPROVALS_STREAM : `${APPROVALS_STREAM}:${project}`;
}

/** How often a service looks for requests whose asker has gone (while any request has a holder). */
const SWEEP_MS = 250;

export interface ApprovalOptions {
  live: Live;
  channel: ChannelOptions;
  /** Replays longer than this get a reset snapshot instead. */
  maxReplay: number;
  /** Who is calling (defaults to local mode: the person at the machine). */
  access?: Access;
  /** The project (its stream is `approvalsStream(project)`, its live scope `approvals:<project>`). */
  project: string;
  /** Who holds askers' waits on this node and the others (one per process; a private one when absent). */
  holders?: Holders;
}

/** The live scope `approvals:<project>`: a viewer of the project reads it. */
export function approvalsScope(approvals: PerProject<ApprovalService>): ScopeSpec {
  return {
    need: (project) => ({ project: projectKey(project), min: 'viewer' }),
    open: async (project) => (await approvals.get(project)).channel,
  };
}

export interface NewApproval {
  /** A stable id (a retry of the same request names the same one); a fresh one when absent. */
  id?: string;
  kind?: ApprovalKind;
  asker: string;
  askerName?: string;
  scope?: ApprovalScope;
  team?: string;
  source: string;
  tool: string;
  input: string;
  /** What the call would do (command, content, edits), for the person deciding. */
  detail?: ApprovalDetail | null;
  phrase?: string;
  window?: number;
  /** What holds the asker's wait (see holders.ts); none: only the window closes it. */
  holder?: string;
  /** The principal that asked (`principalKey`), who may then not decide it. */
  askedBy?: string;
  /** A tool call's action class and why it may never run on trust (src/core/action-class.ts). */
  actionClass?: string;
  barred?: string;
}

/**
 * The id of a request named by its asker: the asker's own key (a hook's
 * request key, a board session's request id), hashed with who the caller is,
 * so one caller can never name, or close, another caller's request.
 */
export function askedId(prefix: 'ap' | 'fl', caller: string, key: string): string {
  return `${prefix}_` + createHash('sha256').update(`${caller}\n${key}`).digest('hex').slice(0, 24);
}

/** A fresh request id (a request nobody will name again). */
export function newApprovalId(): string {
  return 'ap_' + randomUUID().replace(/-/g, '').slice(0, 20);
}

function fold(state: ApprovalsState, entry: LogEntry): string {
  const effects = applyApproval(state, JSON.parse(entry.body), entry.position);
  return `{"event":${entry.body},"effects":${JSON.stringify(effects)}}`;
}

/** Whether a holder still holds a request: yes, no, or not known yet (a node that has just started). */
type Held = 'yes' | 'no' | 'unknown';

export class ApprovalService {
  private host: FoldedStream<ApprovalsState>;
  private waiters = new Map<string, Set<(a: Approval) => void>>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt: number | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Requests whose hook connection this node holds now (holder `holders.self`). */
  private hookHolds = new Set<string>();
  /** Withdrawals in flight (one append per request, whoever asks). */
  private withdrawing = new Map<string, Promise<void>>();
  /** Called with each entry's folded approval once closed (after the waiters): projections (the fleet board). */
  private closedListeners = new Set<(a: Approval) => void>();
  private requestedListeners = new Set<(a: Approval) => void>();
  /** Listeners hear outcomes folded after the start; the start's own replay is told once, below. */
  private listening = false;
  readonly stream: string;
  readonly holders: Holders;

  constructor(
    private store: EventStore,
    private opts: ApprovalOptions,
  ) {
    this.stream = approvalsStream(opts.project);
    this.holders = opts.holders ?? new Holders(store);
    // No stored snapshots: the stream is small (a few events per approval), a replay folds it from the start.
    this.host = new FoldedStream<ApprovalsState>(
      store,
      {
        stream: this.stream,
        scope: `approvals:${opts.project}`,
        empty: emptyApprovals,
        step: (state, entry) => ({ state, events: [{ name: 'event', data: fold(state, entry) }] }),
        snapshot: (state, position, reset) => JSON.stringify({ protocol: APPROVALS_PROTOCOL_VERSION, epoch: this.store.epoch, position, reset, state: approvalsToJSON(state) }),
        applied: (entry) => this.applied(entry),
        // After every run of folded entries the position waiters are woken; then the expiry timer is re-armed.
        afterFold: () => this.arm(),
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }

  /** The project these approvals are of. */
  get project(): string {
    return this.opts.project;
  }

  /** The folded approvals (the live state: read it, never change it). */
  get state(): ApprovalsState {
    return this.host.state;
  }

  get position(): number {
    return this.host.position;
  }

  private get pos(): number {
    return this.host.position;
  }

  /** The live channel of `approvals:<project>`. */
  get channel(): LiveChannel {
    return this.host.channel;
  }

  async start(): Promise<void> {
    if (!this.opts.holders) this.holders.start();
    this.host.listen();
    await this.host.start();
    // The outcomes of the history are told once, the recent ones only (what a
    // projection may still lack: a node that died between an outcome and its echo).
    this.listening = true;
    for (const a of recentApprovals(this.state)) for (const f of this.closedListeners) f(a);
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    if (!this.opts.holders) this.holders.stop();
    await this.host.stop(); // stops hearing commits now
  }

  /** Hears every request as it is folded, and every closed one (projections: the fleet board). */
  onRequested(f: (a: Approval) => void): () => void {
    this.requestedListeners.add(f);
    return () => this.requestedListeners.delete(f);
  }

  onClosed(f: (a: Approval) => void): () => void {
    this.closedListeners.add(f);
    return () => this.closedListeners.delete(f);
  }

  /** After the host folded an entry (in position order) and published its frame: wake its approval's waiters, tell the listeners. */
  private applied(entry: LogEntry): void {
    const id = (JSON.parse(entry.body) as { id?: unknown }).id;
    if (typeof id !== 'string') return;
    const a = this.state.byId.get(id);
    if (!a) return;
    if (a.status === 'pending') {
      if (entry.type === 'approval.requested' && this.listening) for (const f of this.requestedListeners) f(a);
      return;
    }
    if (a.closedAt !== entry.position) return; // an outcome that lost: nothing changed
    this.hookHolds.delete(id);
    const ws = this.waiters.get(id);
    if (ws) {
      this.waiters.delete(id);
      for (const w of ws) w(a);
    }
    if (this.listening) for (const f of this.closedListeners) f(a);
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
          idempotencyKey: `expired:${id}`,
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
    return this.host.folded(position);
  }

  /** Catches up with the log's head (another node's outcomes not yet announced here). */
  fresh(): Promise<void> {
    return this.host.fresh();
  }

  // ------------------------------------------------------------ holders

  /** Whether the asker of a pending request still waits, as far as this node can tell now. */
  private held(a: Approval): Held {
    if (!a.holder) return 'yes';
    if (a.holder === this.holders.self) return this.hookHolds.has(a.id) ? 'yes' : 'no';
    return this.holders.state(a.holder);
  }

  /** Withdraws pending requests nobody holds any more (a hook whose node restarted, a bridge gone). */
  private sweep(): void {
    if (this.stopped) return;
    for (const id of orphanedApprovals(this.state, (a) => this.held(a) !== 'no')) {
      const a = this.state.byId.get(id)!;
      void this.withdraw(id, goneReason(a)).catch((e) => console.error('roost: withdrawing an orphaned approval failed', e));
    }
  }

  /**
   * This node holds the hook connection of request `id` (the hook waits on
   * it). The returned function releases it: the connection closed (the
   * caller then withdraws) or the answer went out.
   */
  holdHook(id: string): () => void {
    this.hookHolds.add(id);
    const release = this.holders.hold(this.holders.self);
    return () => {
      this.hookHolds.delete(id);
      release();
    };
  }

  // ------------------------------------------------------------ commands

  /**
   * Logs a new pending approval (or finds the one a retry names); resolves
   * with it once folded. `created` is false when the id was already known.
   */
  async request(n: NewApproval): Promise<{ approval: Approval; created: boolean }> {
    const id = n.id ?? newApprovalId();
    const known = this.state.byId.get(id);
    if (known) return { approval: known, created: false };
    if (this.state.forgotten.has(id)) throw new HttpError(409, 'conflict', `approval ${id} was requested before and is long closed`);
    const r = await this.store.append(this.stream, [this.requestEvent(id, n)], n.id ? { idempotencyKey: `requested:${id}` } : undefined);
    await this.folded(r.last);
    const a = this.state.byId.get(id);
    if (!a) {
      // A duplicate the state no longer knows: its request is older than what the fold remembers (REMEMBER_FORGOTTEN).
      if (this.state.forgotten.has(id) || r.duplicate) throw new HttpError(409, 'conflict', `approval ${id} is long closed`);
      throw new HttpError(400, 'bad_request', 'the approval request was not acceptable (asker and tool are required; an ask needs its phrase)');
    }
    return { approval: a, created: !r.duplicate };
  }

  private requestEvent(id: string, n: NewApproval): NewEvent {
    const body = {
      type: 'approval.requested',
      id,
      kind: n.kind ?? 'tool',
      asker: n.asker,
      askerName: n.askerName,
      scope: n.scope,
      team: n.team,
      source: n.source,
      tool: n.tool,
      input: n.input,
      detail: n.detail ?? undefined,
      phrase: n.phrase,
      holder: n.holder,
      askedBy: n.askedBy || undefined,
      window: clampWindow(n.window),
      action_class: n.actionClass,
      barred: n.barred || undefined,
      ts: Date.now(),
    };
    return { type: body.type, body: JSON.stringify(body) };
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

  /**
   * The asker stopped waiting: the request closes unanswered. Keyed, so the
   * nodes that notice at once write one withdrawal; resolves once folded.
   */
  withdraw(id: string, reason: string): Promise<void> {
    const a = this.state.byId.get(id);
    if (!a || a.status !== 'pending') return Promise.resolve();
    let p = this.withdrawing.get(id);
    if (!p) {
      p = (async () => {
        const body = { type: 'approval.withdrawn', id, reason: reason.slice(0, APPROVAL_LIMITS.reason), ts: Date.now() };
        const r = await this.store.append(this.stream, [{ type: body.type, body: JSON.stringify(body) }], { idempotencyKey: `withdrawn:${id}` });
        await this.folded(r.last);
      })().finally(() => this.withdrawing.delete(id));
      this.withdrawing.set(id, p);
    }
    return p;
  }

  /**
   * A hook that denied a call on its own (Roost could not be reached) reports
   * it once Roost is back: the request it had asked for (or would have) is
   * closed as withdrawn with that reason, so a late decision cannot record a
   * yes for a call that never ran. Creates the request first when it never
   * got through. Resolves with the request as it ends up.
   */
  async reportOwnDenial(n: NewApproval & { id: string }, reason: string): Promise<Approval | null> {
    const known = this.state.byId.get(n.id);
    if (known) {
      await this.withdraw(n.id, reason);
      return this.state.byId.get(n.id) ?? known;
    }
    if (this.state.forgotten.has(n.id)) return null;
    const withdrawn = { type: 'approval.withdrawn', id: n.id, reason: reason.slice(0, APPROVAL_LIMITS.reason), ts: Date.now() };
    const r = await this.store.append(this.stream, [this.requestEvent(n.id, { ...n, holder: undefined }), { type: withdrawn.type, body: JSON.stringify(withdrawn) }], {
      idempotencyKey: `reported:${n.id}`,
    });
    await this.folded(r.last);
    return this.state.byId.get(n.id) ?? null;
  }

  /**
   * A request that a session's "allow for this session" rule already allows:
   * logged as requested and allowed at once, naming the rule and who made it
   * (so the audit trail reads like any other decision). Keyed by the id.
   */
  async allowByRule(n: NewApproval & { id: string }, rule: { key: string; by: string; from: string }): Promise<Approval | null> {
    const known = this.state.byId.get(n.id);
    if (known) return known;
    if (this.state.forgotten.has(n.id)) return null;
    const decided = {
      type: 'approval.decided',
      id: n.id,
      decision: 'allow',
      by: rule.by,
      reason: `allowed for this session (the rule made with ${rule.from})`,
      rule: rule.key,
      ts: Date.now(),
    };
    const r = await this.store.append(this.stream, [this.requestEvent(n.id, { ...n, holder: undefined }), { type: decided.type, body: JSON.stringify(decided) }], {
      idempotencyKey: `ruled:${n.id}`,
    });
    await this.folded(r.last);
    return this.state.byId.get(n.id) ?? null;
  }

  /**
   * A call whose holder (team, action class) is trusted: requested and
   * allowed by `trust` in one append, with the level and the decisions that
   * earned it (docs/approvals.md "Earned trust"). The fold checks the ledger
   * again; null when it refused (the ledger changed meanwhile: the caller
   * holds the call for a person as usual).
   */
  /**
   * Earned trust's one check, for a coding agent's hook and a board
   * session's call alike: the level when the call's holder (team, action
   * class) is trusted now and nothing bars the call, else null. The caller
   * then allows it by trust (`allowByTrust`) or holds it for a person.
   */
  trustFor(n: NewApproval & { id: string }): { level: number } | null {
    if (!n.actionClass || n.barred || !n.team || this.state.byId.has(n.id) || this.state.forgotten.has(n.id)) return null;
    const t = trustedFor(this.state.agentTrust, n.team, n.actionClass);
    return t ? { level: t.level } : null;
  }

  async allowByTrust(n: NewApproval & { id: string }, trust: { level: number }): Promise<Approval | null> {
    if (this.state.byId.has(n.id) || this.state.forgotten.has(n.id)) return null;
    const decided = { type: 'approval.decided', id: n.id, decision: 'allow', by: 'trust', trust, reason: `the team "${n.team}" earned trust at "${n.actionClass}"`, ts: Date.now() };
    const r = await this.store.append(this.stream, [this.requestEvent(n.id, { ...n, holder: undefined }), { type: decided.type, body: JSON.stringify(decided) }], {
      idempotencyKey: `trusted:${n.id}`,
    });
    await this.folded(r.last);
    const a = this.state.byId.get(n.id);
    return a && a.status === 'allowed' && a.trust ? a : null;
  }

  /** Appends one `trust.*` event of the agents' ledger (an owner's switch or never-classes, a person's revocation). */
  async appendTrust(body: Record<string, unknown>): Promise<void> {
    const e: Record<string, unknown> = { ...body, ts: Date.now() };
    const r = await this.store.append(this.stream, [{ type: String(e.type), body: JSON.stringify(e) }]);
    await this.folded(r.last);
  }

  /** A session ended: its "allow for this session" rules end with it (logged only when it had some). */
  async endSessionRules(asker: string, session: string): Promise<void> {
    if (!hasSessionRules(this.state, asker, session)) return;
    const body = { type: 'approval.rules.ended', asker, session, ts: Date.now() };
    const r = await this.store.append(this.stream, [{ type: body.type, body: JSON.stringify(body) }]);
    await this.folded(r.last);
  }

  /**
   * Records a decision. Resolves with the approval and whether this decision
   * is the one that closed it (false: something else came first in the log;
   * the caller answers 409). A request whose asker is gone is withdrawn
   * first, so the decision loses; a node that has just started waits until
   * it can tell (at most the holders' grace).
   */
  async decide(
    id: string,
    decision: 'allow' | 'deny',
    by: string,
    opts: { reason?: string; phrase?: string; remember?: 'session'; key?: RequestKey | null; principal?: string } = {},
  ): Promise<{ approval: Approval; won: boolean }> {
    let a = this.state.byId.get(id);
    if (!a && !this.state.forgotten.has(id)) throw new HttpError(404, 'not_found', `no approval request "${id.slice(0, 80)}"`);
    if (a?.askedBy && opts.principal === a.askedBy) {
      throw new HttpError(403, 'forbidden', `${a.askedBy.startsWith('token:') ? 'this token' : 'you'} asked this question and cannot answer its own question: the person the token acts for, or another member, decides it`);
    }
    if (a && a.status === 'pending') {
      let held = this.held(a);
      for (let waited = 0; held === 'unknown' && waited < Math.max(this.holders.graceMs, this.holders.remoteGraceMs) + 100; waited += 50) {
        await new Promise((r) => setTimeout(r, 50));
        held = this.held(a);
      }
      if (held !== 'yes' && a.status === 'pending') await this.withdraw(id, goneReason(a));
      a = this.state.byId.get(id) ?? a;
    }
    if (!a || (a.status !== 'pending' && !opts.key)) throw closedError(id, a);
    let reason = opts.reason;
    if (a.kind === 'ask' && decision === 'allow' && normalizePhrase(opts.phrase) !== a.phrase) {
      // An ask is approved only by its exact phrase; any other answer is a no (as a wrong reply in the nest is), and it is the first decision.
      decision = 'deny';
      reason = `the phrase typed${opts.phrase?.trim() ? ` ("${opts.phrase.trim().slice(0, APPROVAL_LIMITS.phrase)}")` : ''} is not the ask's: not a yes`;
    }
    if (opts.remember && a.status === 'pending' && (decision !== 'allow' || ruleKeyOf(a) === null)) {
      throw new HttpError(400, 'bad_request', '"remember": "session" is for allowing a tool call of an agent session (not a deny, a board request, a verdict or an ask)');
    }
    const body = { type: 'approval.decided', id, decision, by, reason, phrase: opts.phrase, remember: opts.remember, principal: opts.principal || undefined, ts: Date.now() };
    const events = [{ type: body.type, body: JSON.stringify(body) }];
    const r = await (opts.key ? opts.key.append(this.store, this.stream, events) : this.store.append(this.stream, events));
    await this.folded(r.last);
    const now = this.state.byId.get(id) ?? a;
    // A retry with the same key names the first request's position: it won or lost as that one did.
    return { approval: now, won: now.closedAt === r.last };
  }

  // ------------------------------------------------------------ endpoints

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


  postDecision = async (req: IncomingMessage, res: ServerResponse, id: string, b: Static<typeof Decision>, key: RequestKey | null): Promise<void> => {
    // Whoever asked (an agent's token) never decides its own request, nor so earns its own trust (the one check, in decide).
    const access = this.opts.access ?? LOCAL_ACCESS;
    const by = await decider(access, req, b.by);
    const r = await this.decide(id, b.decision, by, {
      principal: principalKey(access.principal(req)),
      reason: b.reason,
      phrase: b.phrase,
      remember: b.remember,
      key,
    });
    if (!r.won) throw closedError(r.approval.id, r.approval);
    sendJson(res, 200, { ok: true, approval: r.approval });
  };
}

/** A decision's body: `by` is a label in local mode only; `phrase` approves an `ask`. */
const Decision = Type.Object({
  decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
  by: Type.Optional(Type.String({ maxLength: 1000 })),
  reason: Type.Optional(Type.String({ maxLength: APPROVAL_LIMITS.reason })),
  phrase: Type.Optional(Type.String({ maxLength: APPROVAL_LIMITS.phrase })),
  /** With `allow`: the same call (a shell command), every file edit, or the same tool, allowed for the rest of the agent's session. */
  remember: Type.Optional(Type.Literal('session')),
});

/** The approvals routes, each served by the request's project's service. */
export function approvalsRoutes(of: PerProject<ApprovalService>, live: Live): Route[] {
  return [
    route({ method: 'GET', path: '/approvals', auth: 'viewer', handler: async ({ req, res, url }) => (await of.of(req)).getApprovals(req, res, url) }),
    route({ method: 'GET', path: '/approvals/stream', auth: 'viewer', stream: true, handler: async ({ req, res, url, grant }) => void (await live.serve(req, res, url, grant!, [`approvals:${grant!.project}`])) }),
    route({ method: 'GET', path: '/approvals/:id', auth: 'viewer', handler: async ({ req, res, params }) => (await of.of(req)).getApproval(res, params.id) }),
    route({
      method: 'POST',
      path: '/approvals/:id/decision',
      auth: 'editor',
      body: Decision,
      doc: 'the decider is the caller\'s name; 200 when this decision closed the request, 409 when it was already closed',
      key: { legacy: legacyDecisionKey },
      handler: async ({ req, res, params, body, grant, key }) => {
        const svc = await of.of(req);
        // A nest's ask_owner is the owner's decision alone (docs/security.md, "Who may speak for whom").
        if (grant && grant.role !== 'owner' && svc.state.byId.get(params.id)?.kind === 'ask') throw new HttpError(403, 'forbidden', 'only a person with the owner role answers an ask_owner');
        return svc.postDecision(req, res, params.id, body, key);
      },
    }),
  ];
}

/** A decision's key as it was stored before keys were scoped by the route layer (keys.ts). */
export const legacyDecisionKey = (stream: string, key: string): string => (stream === APPROVALS_STREAM ? `approval:${key}` : `${stream}:${key}`);

/** 409: the request is closed (decided, expired, withdrawn), and by what. */
export function closedError(id: string, a: Approval | undefined): HttpError {
  if (!a) return new HttpError(409, 'conflict', `approval ${id.slice(0, 80)} is already closed`);
  const why = a.status === 'withdrawn' ? `withdrawn${a.reason ? ` (${a.reason})` : ''}` : `${a.status}${a.decidedBy ? ' by ' + a.decidedBy : ''}`;
  // A fleet board's request is named as the board names it (the same words whichever path decided).
  if (a.kind === 'fleet' && a.scope.rid) return new HttpError(409, 'conflict', `approval "${a.scope.rid}" was already ${why}`);
  return new HttpError(409, 'conflict', `approval ${a.id} is already ${why}`);
}

/** Why a request whose holder is gone was withdrawn. */
function goneReason(a: Approval): string {
  if (a.holder.startsWith('bridge:')) return 'its bridge went away';
  return 'its hook is no longer held by any Roost node (the server restarted, or the connection broke)';
}

/**
 * Who made a decision, decided by the server. Local mode has one person (the
 * owner at the machine) and no login, so the body may offer a label and the
 * default is "local owner". When shared mode brings accounts, the
 * authenticated caller is the decider and the body's `by` is ignored.
 */
export async function decider(access: Access, req: IncomingMessage, offered: string | undefined): Promise<string> {
  const p = access.principal(req);
  if (access.mode === 'shared') {
    if (!p) throw new HttpError(401, 'unauthorized', 'sign in, or send a token (Authorization: Bearer ...), to decide approvals');
    return p.name;
  }
  const label = offered?.replace(/\s+/g, ' ').trim().slice(0, APPROVAL_LIMITS.by);
  return label || p?.name || LOCAL_OWNER.name;
}

const LOCAL_ACCESS = new LocalAccess();
