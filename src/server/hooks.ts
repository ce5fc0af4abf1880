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

import type { ServerResponse } from 'node:http';
import { digestInput, needsApproval, type Approval } from '../core/approvals.js';
import { formatWindow, parseWindow } from '../core/window.js';
import { LIMITS, type FloorState, type Status } from '../core/floor.js';
import { normalizeFloorEvent } from '../core/floor-wire.js';
import {
  AGENT_TOOLS,
  decisionAnswer,
  isDecisionPoint,
  mapHook,
  outcomeEvent,
  waitingEvent,
  type AgentTool,
  type FloorView,
} from '../integrations/index.js';
import type { FloorEvent } from '../core/floor.js';
import type { EventStore } from '../storage/types.js';
import type { ApprovalService } from './approvals.js';
import type { FloorService } from './floor.js';
import { Type } from '@sinclair/typebox';
import { HttpError, MAX_BODY_BYTES, sendJson } from './http.js';
import { route, type Ctx, type Route } from './route.js';
import type { PerProject } from './scoped.js';

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
    private store: EventStore,
    private floors: PerProject<FloorService>,
    private approvalsOf: PerProject<ApprovalService>,
  ) {}

  private async appendFloor(floor: FloorService, events: FloorEvent[]): Promise<void> {
    if (events.length === 0) return;
    const now = Date.now();
    await this.store.append(
      floor.stream,
      events.map((e) => {
        const n = normalizeFloorEvent(e as unknown as Record<string, unknown>, now);
        return { type: n.type, body: JSON.stringify(n) };
      }),
    );
  }

  /** `POST /hooks/:tool`: a hook payload is any JSON object (the tool's own shape, mapped in src/integrations). */
  routes(): Route[] {
    return [route({ method: 'POST', path: '/hooks/:tool', auth: 'editor', body: Type.Object({}), maxBody: MAX_BODY_BYTES, doc: 'a token, normally', handler: this.post })];
  }

  post = async ({ req, res, url, params, body: payload }: Ctx<object>): Promise<void> => {
    const tool = params.tool as AgentTool;
    if (!AGENT_TOOLS.includes(tool)) throw new HttpError(404, 'not_found', `no hook endpoint for "${(params.tool ?? '').slice(0, 40)}"; expected one of ${AGENT_TOOLS.join(', ')}`);
    const team = url.searchParams.get('team')?.slice(0, LIMITS.teamName) || undefined;
    const floor = await this.floors.of(req);
    const m = mapHook(tool, payload, { team, view: floorView(floor.state) });
    const rules = url.searchParams.get('approvals');
    if (m.agent && isDecisionPoint(tool, payload) && needsApproval(rules, m.tool || 'tool')) {
      // Only the fail-closed command hook (`hold=1`) waits; Claude Code's http
      // observation hook sees the same call and leaves the floor to it.
      if (url.searchParams.get('hold') === '1') await this.holdForApproval(res, floor, await this.approvalsOf.of(req), tool, payload, m, parseWindow(url.searchParams.get('window')));
      else sendJson(res, 200, {});
      return;
    }
    await this.appendFloor(floor, m.events);
    sendJson(res, 200, {});
  };

  private async holdForApproval(
    res: ServerResponse,
    floor: FloorService,
    approvals: ApprovalService,
    tool: AgentTool,
    payload: object,
    m: ReturnType<typeof mapHook>,
    window: number | undefined,
  ): Promise<void> {
    // Creating the agent (first event of a session) and showing it waiting go together.
    // The mapped event carries the agent's identity (name, team, parent): keep it, show "waiting".
    const identity = m.events[0] ?? { type: 'tool', agent: m.agent };
    const withIdentity = (e: FloorEvent): FloorEvent => ({ ...identity, ...e, agent: identity.agent });
    await this.appendFloor(floor, [withIdentity(waitingEvent(m))]);
    const approval = await approvals.request({
      agent: m.agent,
      agentName: m.agentName,
      team: m.team,
      source: tool,
      app: 'floor',
      session: m.session,
      tool: m.tool || 'tool',
      input: m.input || digestInput(m.tool, (payload as Record<string, unknown>).tool_input, 2000),
      window,
    });
    let answered = false;
    // The hook went away before an answer (the agent was interrupted, or its
    // own timeout fired): nobody is waiting any more, so close the request.
    res.on('close', () => {
      if (!answered) void approvals.withdraw(approval.id, 'the agent stopped waiting').catch(() => {});
    });
    const closed = await approvals.wait(approval.id);
    const { allowed, reason } = explain(closed);
    if (res.destroyed) return;
    answered = true;
    // The call's own event was the waiting one; anything the mapping added after
    // it (Gemini's delegated helper joining) happens only if the call runs.
    const after = allowed ? m.events.slice(1) : [];
    await this.appendFloor(floor, [withIdentity(outcomeEvent(m, allowed, reason)), ...after]).catch((e) => console.error('roost: floor append failed', e));
    sendJson(res, 200, decisionAnswer(tool, payload, allowed ? 'allow' : 'deny', reason));
  }
}

/** Whether a closed approval lets the tool run, and the reason the agent (and its model) reads. */
export function explain(a: Approval): { allowed: boolean; reason: string } {
  switch (a.status) {
    case 'allowed':
      return { allowed: true, reason: `Allowed in Roost by ${a.decidedBy}${a.reason ? ': ' + a.reason : ''}` };
    case 'denied':
      return { allowed: false, reason: `Denied in Roost by ${a.decidedBy}${a.reason ? ': ' + a.reason : ''}` };
    case 'expired':
      return { allowed: false, reason: `No decision in Roost within ${formatWindow(a.window)}: denied (unanswered approvals count as a no)` };
    default:
      return { allowed: false, reason: 'The approval request was withdrawn: denied' };
  }
}
