// `POST /ask`: an agent asks a person a yes-or-no question and waits (what
// `roost mcp`'s ask_person tool calls). The question is an approval in the one
// approvals model (kind `tool`, tool `ask_person`, asked by the agent's floor
// desk), so it waits in the same inbox, is decided the same way, and fails
// safe the same way: no answer within the window is a no, and a caller that
// hangs up withdraws it. The agent is shown waiting on the floor meanwhile.
//
// The answer: `{ answer: 'yes'|'no', status, by?, reason }` where `reason`
// carries what the person typed with their decision, if anything.
//
// Who asks (docs/security.md, "Who may speak for whom"): in shared mode the
// asker is the principal from the transport, never the body. The request's
// `asker` is `token:<id>` (or `person:<uid>`), its `askerName` the name of the
// person the token acts for (the agent name the body gives follows it in
// brackets, as a label), its team none; the body's `agent` only says which
// floor agent's card shows the question (scope.session). That principal cannot
// decide the question (`askedBy`; 403 in the one decide path), and it has at
// most MAX_PENDING_ASKS questions pending (429). In local mode there is one
// person, so the body's agent is the asker, as before.

import { Type } from '@sinclair/typebox';
import { APPROVAL_LIMITS, outcomeLine, pendingAsksOf } from '../core/approvals.js';
import { LIMITS, type FloorEvent } from '../core/floor.js';
import { newApprovalId, type ApprovalService } from './approvals.js';
import { principalKey } from './access.js';
import { HttpError } from './http.js';
import type { FloorService } from './floor.js';
import { sendJson } from './http.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';

const Ask = Type.Object({
  question: Type.String({ minLength: 1, maxLength: APPROVAL_LIMITS.input }),
  agent: Type.String({ minLength: 1, maxLength: LIMITS.id, pattern: '^[A-Za-z0-9._:/@-]+$' }),
  name: Type.Optional(Type.String({ maxLength: LIMITS.name })),
  team: Type.Optional(Type.String({ maxLength: LIMITS.teamName })),
  source: Type.Optional(Type.String({ maxLength: 40 })),
  /** Milliseconds (clamped by the approvals fold to 1 s .. 24 h). */
  window: Type.Optional(Type.Integer({ minimum: 1000 })),
});

/**
 * Questions one asker may have waiting at once (per project). `ask_person`
 * blocks until its answer, so a session waits on one question and a session
 * with helpers on a few; 10 leaves room for a lead and its helpers, and keeps
 * one token from filling the inbox (300 questions of 24 h each were all
 * pending at once before this cap).
 */
export const MAX_PENDING_ASKS = 10;

export function askRoutes(floors: PerProject<FloorService>, approvalsOf: PerProject<ApprovalService>): Route[] {
  // Through the floor's own service, with its checks and caps (one writer per stream).
  const show = (floor: FloorService, e: FloorEvent) => floor.post([e]);
  /** Questions sent to the log and not yet folded, per project and asker (so a burst cannot pass the cap together). */
  const sending = new Map<string, number>();
  return [
    route({
      method: 'POST',
      path: '/ask',
      auth: 'editor',
      body: Ask,
      doc: 'an agent asks a person; the answer comes when they decide (a token, normally)',
      handler: async ({ req, res, body, principal }) => {
        const floor = await floors.of(req);
        const approvals = await approvalsOf.of(req);
        const source = body.source || 'mcp';
        const agent = { id: body.agent, name: body.name || body.agent, source };
        const oneLine = body.question.replace(/\s+/g, ' ').trim();
        const askedBy = principalKey(principal);
        const claimed = body.name || body.agent;
        const asker = askedBy || body.agent;
        const askerName = askedBy ? (claimed === principal!.name ? claimed : `${principal!.name} (agent ${claimed})`) : claimed;
        const slot = `${approvals.project}\n${asker}`;
        const inFlight = sending.get(slot) ?? 0;
        if (pendingAsksOf(approvals.state, asker) + inFlight >= MAX_PENDING_ASKS) {
          throw new HttpError(
            429,
            'too_many',
            `${askedBy.startsWith('token:') ? 'this token has' : askedBy ? 'you have' : `agent ${body.agent} has`} ${MAX_PENDING_ASKS} questions waiting for an answer already (at most ${MAX_PENDING_ASKS} questions pending per asker): wait for an answer before asking again`,
          );
        }
        const id = newApprovalId();
        const release = approvals.holdHook(id);
        let answered = false;
        let gone = false;
        res.on('close', () => {
          gone = true;
          release();
          if (!answered) void approvals.withdraw(id, 'the agent stopped waiting for the answer').catch((e) => console.error('roost: withdrawing a question failed', e));
        });
        sending.set(slot, inFlight + 1);
        let asked;
        try {
          ({ approval: asked } = await approvals.request({
            id,
            kind: 'tool',
            asker,
            askerName,
            // A team named by the body is a label the asker chose: only local mode's agents keep it.
            team: askedBy ? undefined : body.team,
            source,
            scope: { session: body.agent },
            tool: 'ask_person',
            input: body.question,
            window: body.window,
            holder: approvals.holders.self,
            askedBy,
          }));
        } finally {
          const left = (sending.get(slot) ?? 1) - 1;
          if (left > 0) sending.set(slot, left);
          else sending.delete(slot);
        }
        // After the request, dated at it: the request is what makes the agent waiting (as for a held hook, src/server/hooks.ts).
        if (!gone && asked.status === 'pending')
          await show(floor, { type: 'status', agent, ...(body.team ? { team: body.team } : {}), source, status: 'waiting', activity: `Asks: ${oneLine}`.slice(0, LIMITS.activity), ts: asked.requestedAt });
        const closed = await approvals.wait(id);
        if (res.destroyed) return;
        answered = true;
        const yes = closed.status === 'allowed';
        await show(floor, { type: 'status', agent: body.agent, status: 'thinking', activity: `${yes ? 'Yes' : 'No'}: ${oneLine}`.slice(0, LIMITS.activity) }).catch(() => {});
        sendJson(res, 200, { answer: yes ? 'yes' : 'no', status: closed.status, by: closed.decidedBy || undefined, reason: closed.reason || undefined, line: outcomeLine(closed) });
      },
    }),
  ];
}
