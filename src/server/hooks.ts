// The hook endpoints: `POST /hooks/:tool` (claude-code, codex, gemini-cli,
// cursor) receives a hook payload, maps it onto the floor with the pure
// mapping in src/integrations, appends the floor events and answers.
//
// Two callers:
// - observation hooks (Claude Code's http hooks, or the command hook for a tool
//   call that needs no approval): answered `{}` as soon as the floor events are
//   durable. `{}` is "no decision", so the agent's own permission flow goes on;
// - the fail-closed command hook (`bin/roost-hook.js`) for a tool call that
//   needs approval, with `?approvals=RULES&window=MS`: the request becomes a
//   pending approval and the response is held until a person decides, the
//   window passes (deny) or the hook goes away (withdrawn). The answer is the
//   tool's own decision shape, with a reason the model sees.
//
// Query parameters are the install's configuration (set by `roost hooks
// install` in the hook's URL or arguments): team, approvals, window.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { APPROVAL_LIMITS, detailOf, digestInput, needsApproval, outcomeLine, sessionRuleFor, type Approval } from '../core/approvals.js';
import { parseWindow } from '../core/window.js';
import { actionClass, barredFromTrust } from '../core/action-class.js';
import { LIMITS, type FloorState, type Status } from '../core/floor.js';
import {
  AGENT_TOOLS,
  decisionAnswer,
  isDecisionPoint,
  mapHook,
  outcomeEvent,
  waitingEvent,
  withdrawnEvent,
  type AgentTool,
  type FloorView,
} from '../integrations/index.js';
import type { FloorEvent } from '../core/floor.js';
import { askedId, newApprovalId, type ApprovalService } from './approvals.js';
import { grantOf, principalKey } from './access.js';
import type { FloorService } from './floor.js';
import { Type } from '@sinclair/typebox';
import { HttpError, MAX_BODY_BYTES, sendJson } from './http.js';
import { route, type Ctx, type Route } from './route.js';
import type { PerProject } from './scoped.js';
import type { UsageService } from './usage.js';
import { BUDGET_PAUSED } from '../core/usage.js';

export function floorView(s: FloorState): FloorView {
  return {
    agent: (id) => s.agents.get(id),
    helpers: (id) => {
      // The fold's per-parent index: a hook costs the session's helpers, not the floor.
      const out: { id: string; role: string; status: Status; leftAt: number | null; seq: number }[] = [];
      for (const kid of s.index.children.get(id) ?? []) {
        const a = s.agents.get(kid);
        if (a) out.push({ id: a.id, role: a.role, status: a.status, leftAt: a.leftAt, seq: a.seq });
      }
      return out.sort((a, b) => a.seq - b.seq);
    },
  };
}

/**
 * A hook reports to the floor and the approvals of the project its caller is
 * granted (a token's own project; the default project in local mode).
 */
export class HookService {
  constructor(
    private floors: PerProject<FloorService>,
    private approvalsOf: PerProject<ApprovalService>,
    private usageOf?: PerProject<UsageService>,
    /** Whether a hook's transcript path may be read (local mode only: in shared mode it names a file on the caller's machine, and a caller must not point the server at its own files). */
    private readTranscripts: () => boolean = () => false,
  ) {}

  /** Tells the usage roll-up who this payload was about (its OTLP records may come after the agent left the floor). */
  private async remember(req: IncomingMessage, tool: string, m: ReturnType<typeof mapHook>): Promise<void> {
    if (!this.usageOf || !m.agent) return;
    let role = '';
    for (const e of m.events) {
      const a = e.agent as { id?: unknown; role?: unknown } | string | null | undefined;
      if (a && typeof a === 'object' && a.id === m.agent && typeof a.role === 'string') role = a.role;
    }
    (await this.usageOf.of(req)).remember(m.agent, { session: m.session, parent: m.agent !== m.session ? m.session : null, team: m.team, role, uid: grantOf(req)?.uid }, tool);
  }

  /**
   * Claude Code's Stop names the session's transcript, SubagentStop the
   * subagent's own: its messages' usage is counted (after a grace period,
   * and only for a session whose usage does not come over OTLP).
   */
  private async transcript(req: IncomingMessage, tool: string, payload: object, m: ReturnType<typeof mapHook>): Promise<void> {
    if (!this.usageOf || tool !== 'claude-code' || !m.agent || !m.session || !this.readTranscripts()) return;
    const p = payload as Record<string, unknown>;
    const path = p.hook_event_name === 'Stop' && m.agent === m.session ? p.transcript_path : p.hook_event_name === 'SubagentStop' && m.agent !== m.session ? p.agent_transcript_path : undefined;
    if (typeof path !== 'string' || !path) return;
    (await this.usageOf.of(req)).readTranscriptLater(path, { agent: m.agent, session: m.session, parent: m.agent !== m.session ? m.session : null, team: m.team });
  }

  /** Through the floor's own service: its checks and caps are the ones `POST /events` has (one writer per stream). */
  private async appendFloor(floor: FloorService, events: FloorEvent[]): Promise<void> {
    if (events.length === 0) return;
    await floor.post(events);
  }

  /** `POST /hooks/:tool`: a hook payload is any JSON object (the tool's own shape, mapped in src/integrations). */
  routes(): Route[] {
    return [
      route({ method: 'POST', path: '/hooks/:tool', auth: 'editor', body: Type.Object({}), maxBody: MAX_BODY_BYTES, doc: 'a token, normally', handler: this.post }),
      route({ method: 'POST', path: '/hooks/:tool/denied', auth: 'editor', body: Type.Object({}), maxBody: MAX_BODY_BYTES, doc: 'a hook reports a denial it made on its own', handler: this.postDenied }),
    ];
  }

  post = async ({ req, res, url, params, body: payload }: Ctx<object>): Promise<void> => {
    const tool = params.tool as AgentTool;
    if (!AGENT_TOOLS.includes(tool)) throw new HttpError(404, 'not_found', `no hook endpoint for "${(params.tool ?? '').slice(0, 40)}"; expected one of ${AGENT_TOOLS.join(', ')}`);
    const team = url.searchParams.get('team')?.slice(0, LIMITS.teamName) || undefined;
    const floor = await this.floors.of(req);
    const m = mapHook(tool, payload, { team, view: floorView(floor.state) });
    await this.remember(req, tool, m);
    await this.transcript(req, tool, payload, m);
    // A session's end ends its "allow for this session" rules (logged only when it had some).
    if (m.agent && m.session && (payload as Record<string, unknown>).hook_event_name === 'SessionEnd') await (await this.approvalsOf.of(req)).endSessionRules(m.agent, m.session);
    // A spent budget pauses the agent: its next tool call is denied, with the reason its model reads (docs/integrations.md, "Budgets").
    if (m.agent && this.usageOf && isToolGate(tool, payload)) {
      const why = (await this.usageOf.of(req)).pauseReason({ session: m.session || m.agent, teams: m.team ? [m.team] : [] });
      if (why) return this.denyForBudget(res, floor, tool, payload, m, why);
    }
    const rules = url.searchParams.get('approvals');
    if (m.agent && isDecisionPoint(tool, payload) && needsApproval(rules, m.tool || 'tool')) {
      // Only the fail-closed command hook (`hold=1`) waits; Claude Code's http
      // observation hook sees the same call and leaves the floor to it.
      if (url.searchParams.get('hold') === '1') await this.holdForApproval(req, res, floor, await this.approvalsOf.of(req), tool, payload, m, url);
      else sendJson(res, 200, {});
      return;
    }
    await this.appendFloor(floor, m.events);
    sendJson(res, 200, {});
  };

  /** A paused agent's tool call: the floor shows it paused and why, and the hook answers a deny (held or not). */
  private async denyForBudget(res: ServerResponse, floor: FloorService, tool: AgentTool, payload: object, m: ReturnType<typeof mapHook>, why: string): Promise<void> {
    const first = m.events[0];
    const reason = `${why}. Roost paused this agent until an owner raises or lifts the budget (the Cost page).`;
    const e: FloorEvent = { ...(first ?? {}), type: 'status', agent: first?.agent ?? m.agent, status: 'idle', activity: `${BUDGET_PAUSED}${why}`.slice(0, LIMITS.activity) };
    // Lazy: the floor's note is derived (the next denied call writes it again); the deny is the answer.
    // Through the floor's service like every floor write (its checks and caps).
    await floor.post([e], { lazy: true });
    sendJson(res, 200, decisionAnswer(tool, payload, 'deny', reason));
  }

  private async holdForApproval(
    req: IncomingMessage,
    res: ServerResponse,
    floor: FloorService,
    approvals: ApprovalService,
    tool: AgentTool,
    payload: object,
    m: ReturnType<typeof mapHook>,
    url: URL,
  ): Promise<void> {
    // Creating the agent (first event of a session) and showing it waiting go together.
    // The mapped event carries the agent's identity (name, team, parent): keep it, show "waiting".
    const identity = m.events[0] ?? { type: 'tool', agent: m.agent };
    const withIdentity = (e: FloorEvent): FloorEvent => ({ ...identity, ...e, agent: identity.agent });
    const key = requestKeyOf(url);
    // The hook's own key names the request, so its later report of a denial made on its own finds it.
    const id = key ? askedId('ap', callerOf(req), key) : newApprovalId();
    const asked = { ...newToolApproval(tool, payload, m, url), ...classOf(req, payload, m, approvals) };
    // The team is trusted at this action class (earned trust, on for this project): logged and answered at once.
    const trusted = approvals.trustFor({ ...asked, id });
    if (trusted) {
      // The allow and the floor's "working" are queued in the same turn, so they share one
      // commit (one fsync on SQLite) rather than paying one each. Should the fold refuse the
      // allow (the ledger moved meanwhile), the call waits as usual and its "waiting" follows.
      const allowing = approvals.allowByTrust({ ...asked, id }, { level: trusted.level });
      const [a] = await Promise.all([allowing, this.appendFloor(floor, [withIdentity(outcomeEvent(m, true, ''))])]);
      if (a) {
        // What the mapping added after the call (Gemini's delegated helper joining) happens only once it runs.
        await this.appendFloor(floor, m.events.slice(1));
        sendJson(res, 200, decisionAnswer(tool, payload, 'allow', explain(a).reason));
        return;
      }
    }
    // Allowed for this session already (a person's "allow for this session"): logged and answered at once.
    const rule = sessionRuleFor(approvals.state, { ...asked, detail: asked.detail ?? null });
    if (rule) {
      const a = await approvals.allowByRule({ ...asked, id }, rule);
      if (a && a.status !== 'pending') {
        const { allowed, reason } = explain(a);
        await this.appendFloor(floor, [withIdentity(outcomeEvent(m, allowed, reason)), ...(allowed ? m.events.slice(1) : [])]);
        sendJson(res, 200, decisionAnswer(tool, payload, allowed ? 'allow' : 'deny', reason));
        return;
      }
    }
    // This node holds the hook's connection, from before the request is in the log (so no sweep
    // can find it unheld in between): the request stays open while the connection does.
    const release = approvals.holdHook(id);
    let answered = false;
    // The hook went away before an answer (the agent was interrupted or killed, or its own
    // timeout fired): nobody is waiting any more, so the request is withdrawn and the agent
    // is no longer shown waiting for it. (Closed before the request was even in the log: the
    // request is then unheld from its first moment, and the sweep withdraws it.)
    let gone = false;
    res.on('close', () => {
      gone = true;
      release();
      if (answered) return;
      void approvals
        .withdraw(id, 'the agent stopped waiting (its hook went away)')
        .then(() => this.appendFloor(floor, [withIdentity(withdrawnEvent(m))]))
        .catch((e) => console.error('roost: withdrawing an approval failed', e));
    });
    let approval: Approval;
    try {
      ({ approval } = await approvals.request({ ...asked, id, holder: approvals.holders.self }));
    } catch (e) {
      answered = true;
      throw e;
    }
    if (approval.status !== 'pending') {
      // The same key again (a hook retrying): answer with what became of it.
      answered = true;
      sendJson(res, 200, decisionAnswer(tool, payload, approval.status === 'allowed' ? 'allow' : 'deny', explain(approval).reason));
      return;
    }
    // The floor says "waiting" only once the request is in the log: the request is what makes
    // the agent waiting (src/core/attention.ts), so no reader sees it waiting with nothing to
    // decide. It is dated at the request, so a decision that overtakes it still reads as the
    // answer to this wait. Not once the hook has gone (its withdrawal is then on its way, and
    // the floor would be left waiting after it), nor once answered.
    if (!gone && approvals.state.byId.get(id)?.status === 'pending') await this.appendFloor(floor, [withIdentity({ ...waitingEvent(m), ts: approval.requestedAt })]);
    const closed = await approvals.wait(approval.id);
    const { allowed, reason } = explain(closed);
    if (res.destroyed) return;
    answered = true;
    // The call's own event was the waiting one; anything the mapping added after
    // it (Gemini's delegated helper joining) happens only if the call runs.
    const after = allowed ? m.events.slice(1) : [];
    await this.appendFloor(floor, [withIdentity(outcomeEvent(m, allowed, reason)), ...after]).catch((e) => console.error('roost: floor append failed', e));
    // A person's note on an allow goes to the model too, where the tool's hook can carry it.
    sendJson(res, 200, decisionAnswer(tool, payload, allowed ? 'allow' : 'deny', reason, allowed && closed.reason ? reason : ''));
  }

  /**
   * POST /hooks/:tool/denied?request=KEY: a command hook denied a call on
   * its own because Roost could not be reached, and says so now that it is
   * back (bin/roost-hook.js keeps the report until it gets through). The
   * body is the hook payload it had; the request it asked for (or would
   * have) is closed as withdrawn with that reason, and a decision that comes
   * later is refused (409). Answers `{id, status}`.
   */
  postDenied = async ({ req, res, url, params, body: payload }: Ctx<object>): Promise<void> => {
    const tool = params.tool as AgentTool;
    if (!AGENT_TOOLS.includes(tool)) throw new HttpError(404, 'not_found', `no hook endpoint for "${(params.tool ?? '').slice(0, 40)}"; expected one of ${AGENT_TOOLS.join(', ')}`);
    const key = requestKeyOf(url);
    if (!key) throw new HttpError(400, 'bad_request', '"request" (the hook\'s request key, 8 to 64 letters, digits, "-" or "_") is required');
    const floor = await this.floors.of(req);
    const m = mapHook(tool, payload, { team: url.searchParams.get('team')?.slice(0, LIMITS.teamName) || undefined, view: floorView(floor.state) });
    if (!m.agent) throw new HttpError(400, 'bad_request', 'the payload names no agent session');
    const at = Number(url.searchParams.get('at'));
    const when = Number.isFinite(at) && at > 0 ? ` at ${new Date(at).toISOString()}` : '';
    const approvals = await this.approvalsOf.of(req);
    const a = await approvals.reportOwnDenial(
      { ...newToolApproval(tool, payload, m, url), id: askedId('ap', callerOf(req), key) },
      `the agent's hook denied it on its own${when}: Roost could not be reached`,
    );
    sendJson(res, 200, { id: a?.id ?? null, status: a?.status ?? 'closed' });
  };
}

/** A hook that runs before a tool call and may deny it: the decision points, and Codex's PreToolUse. */
function isToolGate(tool: AgentTool, payload: object): boolean {
  return isDecisionPoint(tool, payload) || (tool === 'codex' && (payload as Record<string, unknown>).hook_event_name === 'PreToolUse');
}

/** The hook's request key (`request=`), when it sent a usable one. */
function requestKeyOf(url: URL): string | undefined {
  const k = url.searchParams.get('request');
  return k && /^[A-Za-z0-9_-]{8,64}$/.test(k) ? k : undefined;
}

/** Who the hook's caller is, for the scope of its request keys (local mode: the one local owner). */
function callerOf(req: IncomingMessage): string {
  return grantOf(req)?.uid ?? 'local';
}

/** A tool call's approval request, as the mapped hook payload describes it. */
function newToolApproval(tool: AgentTool, payload: object, m: ReturnType<typeof mapHook>, url: URL) {
  return {
    kind: 'tool' as const,
    asker: m.agent,
    askerName: m.agentName,
    team: m.team,
    source: tool,
    scope: m.session ? { session: m.session } : {},
    tool: m.tool || 'tool',
    input: m.input || digestInput(m.tool, (payload as Record<string, unknown>).tool_input, APPROVAL_LIMITS.input),
    detail: detailOf(m.tool, (payload as Record<string, unknown>).tool_input, (payload as Record<string, unknown>).cwd),
    window: parseWindow(url.searchParams.get('window')),
  };
}

/** A tool call's action class, why it may never run on trust, and the token that asks (docs/approvals.md "Earned trust"). */
function classOf(req: IncomingMessage, payload: object, m: ReturnType<typeof mapHook>, approvals: ApprovalService): { actionClass: string; barred: string; askedBy: string } {
  const p = payload as Record<string, unknown>;
  const cwd = typeof p.cwd === 'string' ? p.cwd : '';
  const tool = m.tool || 'tool';
  return {
    actionClass: actionClass(tool, p.tool_input, cwd),
    barred: barredFromTrust(tool, p.tool_input, cwd, approvals.state.agentTrust.never),
    // The token that asks may never decide this call (approvals' one askedBy check).
    askedBy: grantOf(req)?.kind === 'token' ? principalKey(grantOf(req) ?? null) : '',
  };
}

/** Whether a closed approval lets the tool run, and the reason the agent (and its model) reads. */
export function explain(a: Approval): { allowed: boolean; reason: string } {
  return { allowed: a.status === 'allowed', reason: outcomeLine(a) };
}
