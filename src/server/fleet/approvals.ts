// The board's side of the one approvals model (docs/approvals.md, "Fleet
// board requests"): a bridge's pending `session.approval` is asked as an
// approval of kind fleet, a session's end withdraws its requests, the board's
// decision post is an alias of the one decide, and each outcome is echoed
// onto the board once (the contract's wire form, which the bridge obeys:
// docs/fleet.md, "Approvals: one fold").

import type { IncomingMessage } from 'node:http';
import { FLEET_NO_DECISION, sessionEventConflict, type SessionEvent, type SessionsState } from '../../core/fleet.js';
import { pendingApprovals, type Approval as OneApproval } from '../../core/approvals.js';
import { boardCallClass } from '../../core/action-class.js';
import type { EventStore } from '../../storage/types.js';
import type { RequestKey } from '../keys.js';
import { HttpError } from '../http.js';
import { grantOf, principalKey } from '../access.js';
import { closedError, type ApprovalService } from '../approvals.js';
import type { Board } from './board.js';
import { THREAD_PATTERN, askerOf, bridgeHolder, fleetApprovalId, fleetTeam, windowOf, type Caller } from './names.js';

/** The answer to a decision posted on the board (the alias of `POST /approvals/:id/decision`). */
export interface DecisionAnswer {
  ok: true;
  accepted: 1;
  first: number;
  last: number;
  duplicate: false;
  approval: string;
}

export class BoardApprovals {
  constructor(
    private store: EventStore,
    /** The board of a thread of a project (FleetService.board). */
    private boards: (thread: string, project: string) => Promise<Board>,
  ) {}

  /**
   * The requests pending on `after` that `before` did not hold become
   * approvals of kind fleet. A call whose holder (the board's team, its
   * action class) earned trust is allowed by trust at once, the same check
   * as a coding agent's hook (ApprovalService.trustFor); those are returned,
   * for their echo once the board holds the request.
   */
  async ask(
    req: IncomingMessage,
    who: Caller,
    board: Board,
    approvals: ApprovalService,
    before: SessionsState,
    after: SessionsState,
    items: readonly Record<string, unknown>[],
  ): Promise<OneApproval[]> {
    const holder = bridgeHolder(req, who);
    const window = windowOf(req);
    const askedBy = askerOf(req);
    const trusted: OneApproval[] = [];
    for (const s of after.sessions) {
      if (s.state === 'ended') continue;
      const was = new Set(before.sessions.find((x) => x.id === s.id)?.approvals.map((x) => x.rid));
      for (const a of s.approvals) {
        if (a.state !== 'pending' || was.has(a.rid)) continue;
        const posted = items.find((x) => x.type === 'session.approval' && x.id === s.id && x.rid === a.rid);
        const n = {
          id: fleetApprovalId(board.stream, s.id, a.rid),
          kind: 'fleet' as const,
          asker: s.id,
          askerName: s.name,
          scope: { thread: board.thread, session: s.id, rid: a.rid },
          team: fleetTeam(board.thread),
          source: 'bridge',
          tool: a.tool || 'tool',
          input: a.digest,
          window,
          holder,
          askedBy,
          ...boardCallClass(a.tool || 'tool', posted?.command, approvals.state.agentTrust.never),
        };
        const t = approvals.trustFor(n);
        const byTrust = t ? await approvals.allowByTrust(n, t) : null;
        if (byTrust) trusted.push(byTrust);
        else await approvals.request(n);
      }
    }
    return trusted;
  }

  /** Withdraws the pending approvals (as the approvals fold holds them) of the sessions a `session.end` just ended. */
  async withdrawEnded(board: Board, approvals: ApprovalService, before: SessionsState): Promise<void> {
    for (const s of before.sessions) {
      if (s.state === 'ended' || board.state.sessions.find((x) => x.id === s.id)?.state !== 'ended') continue;
      for (const a of pendingApprovals(approvals.state)) {
        const { thread, session, rid } = a.scope;
        if (a.kind === 'fleet' && thread === board.thread && session === s.id && rid && a.id === fleetApprovalId(board.stream, s.id, rid)) {
          await approvals.withdraw(a.id, `the session “${s.name}” was closed`);
        }
      }
    }
  }

  /**
   * The board's decision post, an alias of the one decide: a member's
   * `session.approval` allowed/denied decides the approval (first wins, a
   * second is 409, the decider is the transport's name); the bridge's own
   * denial of its own request (its window ended) withdraws it (nobody
   * decided). Answers once the board holds the echo.
   */
  async decide(req: IncomingMessage, board: Board, approvals: ApprovalService, who: Caller, e: SessionEvent & { name: string }, key: RequestKey | null): Promise<DecisionAnswer> {
    const c = sessionEventConflict(board.state, e);
    // With a key, a 409 may be the retry of a decision that was made: the decide below answers as the first did.
    if (c && (!key || c.status === 404)) throw new HttpError(c.status, c.kind, c.message);
    const session = e.id as string;
    const rid = e.rid as string;
    const id = fleetApprovalId(board.stream, session, rid);
    let a = approvals.state.byId.get(id);
    const s = board.state.sessions.find((x) => x.id === session);
    const held = s?.approvals.find((x) => x.rid === rid);
    if (!a && s && held?.state === 'pending' && !approvals.state.forgotten.has(id)) {
      // A request the board holds but the approvals do not (posted before they were one model): asked now, then decided the one way.
      a = (await approvals.request({ id, kind: 'fleet', asker: session, askerName: s.name, scope: { thread: board.thread, session, rid }, source: 'bridge', tool: held.tool || 'tool', input: held.digest })).approval;
    }
    if (!a) throw c ? new HttpError(c.status, c.kind, c.message) : new HttpError(404, 'not_found', `no approval "${rid}" in session "${s?.name ?? session}"`);
    // The request's own bridge (same caller, same process: the holder it asked under), or the token that asked it.
    const principal = principalKey(grantOf(req) ?? null);
    const own = (a.holder !== '' && a.holder === bridgeHolder(req, who)) || (a.askedBy !== '' && a.askedBy === principal);
    if (own && e.state === 'denied') {
      // The board shows it denied by the bridge, as the bridge said it (the echo reads this name; elsewhere FLEET_NO_DECISION).
      if (a.status === 'pending') {
        this.echoNames.set(id, who.name);
        try {
          await approvals.withdraw(id, 'no decision within the bridge’s window: denied');
        } finally {
          setTimeout(() => this.echoNames.delete(id), 60_000).unref();
        }
      }
      a = approvals.state.byId.get(id) ?? a;
      if (a.status !== 'withdrawn') throw closedError(id, a);
    } else {
      // The token that asked it never allows it (403: the one check, in decide).
      const r = await approvals.decide(id, e.state === 'allowed' ? 'allow' : 'deny', who.name, { key, principal });
      if (!r.won) throw closedError(id, r.approval);
      a = r.approval;
    }
    const at = await this.echo(approvals.project, a);
    return { ok: true, accepted: 1, first: at ?? board.pos, last: at ?? board.pos, duplicate: false, approval: a.id };
  }

  private echoes = new Map<string, Promise<number | null>>();
  /** The name a withdrawal's echo carries when the bridge itself denied (its window ended). */
  private echoNames = new Map<string, string>();

  /**
   * The board's echo of a closed fleet approval: `session.approval` allowed
   * or denied, written once by the server (keyed by the approval's id) while
   * the board still holds the request pending, with the decider's name (or
   * FLEET_NO_DECISION when nobody decided). Resolves with its position, or
   * null when there was nothing to echo.
   */
  echo(project: string, a: OneApproval): Promise<number | null> {
    if (a.kind !== 'fleet' || a.status === 'pending') return Promise.resolve(null);
    let p = this.echoes.get(a.id);
    if (!p) {
      p = this.writeEcho(project, a).finally(() => this.echoes.delete(a.id));
      this.echoes.set(a.id, p);
    }
    return p;
  }

  private async writeEcho(project: string, a: OneApproval): Promise<number | null> {
    const { thread, session, rid } = a.scope;
    if (!thread || !session || !rid || !THREAD_PATTERN.test(thread)) return null;
    const board = await this.boards(thread, project);
    if (fleetApprovalId(board.stream, session, rid) !== a.id) return null;
    await board.fresh();
    const s = board.state.sessions.find((x) => x.id === session);
    const held = s?.approvals.find((x) => x.rid === rid);
    if (!s || s.state === 'ended' || !held || held.state !== 'pending') return null;
    const decided = a.status === 'allowed' || a.status === 'denied';
    const body = {
      type: 'session.approval',
      id: session,
      rid,
      session: s.name,
      tool: held.tool,
      state: a.status === 'allowed' ? 'allowed' : 'denied',
      name: (decided ? a.decidedBy : this.echoNames.get(a.id)) || FLEET_NO_DECISION,
      ts: Date.now(),
    };
    const r = await this.store.append(board.stream, [{ type: body.type, body: JSON.stringify(body) }], { idempotencyKey: `approval:${a.id}` });
    await board.folded(r.last);
    return r.last;
  }
}
