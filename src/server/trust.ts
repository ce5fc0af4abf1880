// The trust ledger's routes besides the flock contract's `GET /api/trust` and
// `POST /api/trust` (src/server/flock/routes.ts): the coding agents' earned
// trust (docs/approvals.md "Earned trust") and one holder's history.
//
//   PUT  /api/trust/agents {on?, never?}     owner   turn earned trust on or off for the project; the never-classes
//   POST /approvals/:id/revoke {reason?}     editor  a call allowed by trust: its holder drops a level
//   POST /approvals/:id/trust {reason?}      owner   "Allow and trust this class": allow a waiting call and raise its team's class to trusted
//   GET  /api/trust/:holder/history          viewer  ?task_type= (a crow, `flock`) or ?action_class= (a team)
//
// Who decides is the transport's principal; the token that asked for an
// approval never revokes it (and never decides it: src/server/approvals.ts).

import { Type } from '@sinclair/typebox';
import { agentLedgerJSON, agentLevel, AGENT_TRUST_LIMITS } from '../core/agent-trust.js';
import { MAX_TRUST } from '../core/trust.js';
import { CLASS_MAX } from '../core/action-class.js';
import { flockLedger, isTrustHolder, TASK_TYPES } from '../core/flock.js';
import { principalKey, type Access } from './access.js';
import { closedError, decider, type ApprovalService } from './approvals.js';
import type { FlockService } from './flock/service.js';
import { HttpError, sendJson } from './http.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';

const AgentsBody = Type.Object({
  on: Type.Optional(Type.Boolean()),
  never: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CLASS_MAX }), { maxItems: AGENT_TRUST_LIMITS.never })),
});

const RevokeBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: AGENT_TRUST_LIMITS.reason })) });

export function trustRoutes(flocks: PerProject<FlockService>, approvals: PerProject<ApprovalService>, access: Access): Route[] {
  return [
    route({
      method: 'PUT',
      path: '/api/trust/agents',
      auth: 'owner',
      body: AgentsBody,
      doc: 'earned trust for coding agents: on/off for the project, and the classes that never run on trust (each an event)',
      handler: async ({ req, res, body }) => {
        const ap = await approvals.of(req);
        const by = await decider(access, req, undefined);
        if (body.on !== undefined) await ap.appendTrust({ type: 'trust.enabled', on: body.on, by });
        if (body.never !== undefined) await ap.appendTrust({ type: 'trust.never', classes: body.never, by });
        sendJson(res, 200, agentLedgerJSON(ap.state.agentTrust));
      },
    }),
    route({
      method: 'POST',
      path: '/approvals/:id/revoke',
      auth: 'editor',
      body: RevokeBody,
      doc: 'a call allowed by trust: its team drops a level at its action class (the next such call waits); 409 when it was not allowed by trust or the level moved',
      handler: async ({ req, res, params, body }) => {
        const ap = await approvals.of(req);
        const a = ap.state.byId.get(params.id);
        if (!a) throw new HttpError(404, 'not_found', `no approval request "${params.id.slice(0, 80)}"`);
        if (a.status !== 'allowed' || !a.trust || !a.actionClass) throw new HttpError(409, 'conflict', 'that call was not allowed by trust');
        if (a.askedBy && a.askedBy === principalKey(access.principal(req))) throw new HttpError(403, 'forbidden', 'the token that asked cannot change its own trust');
        const from = agentLevel(ap.state.agentTrust, a.team, a.actionClass);
        if (from === 0) throw new HttpError(409, 'conflict', `${a.team} is already a stranger at "${a.actionClass}"`);
        const by = await decider(access, req, undefined);
        const reason = body.reason?.trim() || `revoked the trust that allowed ${a.id}`;
        const before = ap.state.agentTrust.changes;
        await ap.appendTrust({ type: 'trust.changed', holder: a.team, action_class: a.actionClass, from, to: from - 1, by, reason, approval: a.id });
        if (ap.state.agentTrust.changes === before) throw new HttpError(409, 'conflict', 'the ledger changed meanwhile; read it and try again');
        sendJson(res, 200, { team: a.team, action_class: a.actionClass, from, to: from - 1, by, reason });
      },
    }),
    route({
      method: 'POST',
      path: '/approvals/:id/trust',
      auth: 'owner',
      body: RevokeBody,
      doc: '"Allow and trust this class": a waiting tool call allowed through the one decide path, and its team raised to trusted at its action class (one trust.changed naming the call and the owner); 409 when trust is off, the class never runs on trust, or someone decided first',
      handler: async ({ req, res, params, body }) => {
        const ap = await approvals.of(req);
        const a = ap.state.byId.get(params.id);
        if (!a) throw new HttpError(404, 'not_found', `no approval request "${params.id.slice(0, 80)}"`);
        const principal = principalKey(access.principal(req));
        if (a.askedBy && a.askedBy === principal) throw new HttpError(403, 'forbidden', 'the token that asked cannot change its own trust');
        if (!ap.state.agentTrust.on) throw new HttpError(409, 'conflict', 'earned trust is off for this project (PUT /api/trust/agents {"on": true})');
        if (!a.actionClass || !a.team) throw new HttpError(409, 'conflict', 'only a tool call of a team, with an action class, can be trusted');
        if (a.barred) throw new HttpError(409, 'conflict', `"${a.actionClass}" never runs on trust: ${a.barred}`);
        const by = await decider(access, req, undefined);
        const r = await ap.decide(a.id, 'allow', by, { reason: body.reason, principal });
        if (!r.won) throw new HttpError(409, 'conflict', closedError(a.id, r.approval).message);
        const from = agentLevel(ap.state.agentTrust, a.team, a.actionClass);
        if (from < MAX_TRUST) {
          const reason = body.reason?.trim() || `allowed ${a.id} and trusted its class`;
          await ap.appendTrust({ type: 'trust.changed', holder: a.team, action_class: a.actionClass, from, to: MAX_TRUST, by, reason, approval: a.id });
        }
        sendJson(res, 200, { approval: r.approval, team: a.team, action_class: a.actionClass, from, to: agentLevel(ap.state.agentTrust, a.team, a.actionClass), by });
      },
    }),
    route({
      method: 'GET',
      path: '/api/trust/:holder/history',
      auth: 'viewer',
      doc: 'why a holder is where it is: ?task_type= for a crow or `flock`, ?action_class= for a team',
      handler: async ({ req, res, params, url }) => {
        const holder = params.holder.slice(0, 200);
        const cls = url.searchParams.get('action_class');
        if (cls !== null) {
          const ap = await approvals.of(req);
          const j = agentLedgerJSON(ap.state.agentTrust, { team: holder, action_class: cls.slice(0, CLASS_MAX) });
          if (j.holders.length === 0 && j.history.length === 0) throw new HttpError(404, 'not_found', `no trust history for team "${holder}" at "${cls.slice(0, 80)}"`);
          return sendJson(res, 200, { team: holder, action_class: cls, level: j.holders[0]?.level ?? 0, holder: j.holders[0] ?? null, history: j.history });
        }
        const task_type = url.searchParams.get('task_type');
        const svc = await flocks.of(req);
        if (!isTrustHolder(svc.state, holder)) throw new HttpError(404, 'not_found', `no trust holder "${holder}" (a working crow, "flock", or a team with ?action_class=)`);
        if (task_type !== null && !(TASK_TYPES as readonly string[]).includes(task_type)) throw new HttpError(400, 'bad_request', `task_type must be one of ${TASK_TYPES.join(', ')}`);
        const l = flockLedger(svc.state);
        const mine = (h: { holder: string; task_type: string }) => h.holder === holder && (task_type === null || h.task_type === task_type);
        sendJson(res, 200, { holder, ...(task_type ? { task_type } : {}), holders: l.holders.filter(mine), history: l.history.filter(mine) });
      },
    }),
  ];
}
