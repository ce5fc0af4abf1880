// Decisions in bulk (issue 30 point 4, docs/approvals.md "Decisions in
// bulk"): many waiting requests allowed or denied in one action, each through
// the one decide path (first decision wins; a request someone else decided
// first is reported 409 for that item, and the rest go on). A note (`reason`)
// goes with every item: on a deny it is the reason the agent's model reads.

import { Type } from '@sinclair/typebox';
import { APPROVAL_LIMITS } from '../core/approvals.js';
import { principalKey, type Access } from './access.js';
import { closedError, decider, type ApprovalService } from './approvals.js';
import { HttpError, sendJson } from './http.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';

/** At most this many requests per bulk decision (a page of the inbox, and a bounded cost per request). */
export const BULK_MAX = 200;

const BulkBody = Type.Object({
  ids: Type.Array(Type.String({ minLength: 1, maxLength: APPROVAL_LIMITS.id }), { minItems: 1, maxItems: BULK_MAX }),
  decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
  reason: Type.Optional(Type.String({ maxLength: APPROVAL_LIMITS.reason })),
  by: Type.Optional(Type.String({ maxLength: 1000 })),
});

export interface BulkItem {
  id: string;
  status: 200 | 403 | 404 | 409;
  message?: string;
}

export function bulkRoutes(approvals: PerProject<ApprovalService>, access: Access): Route[] {
  return [
    route({
      method: 'POST',
      path: '/approvals/decisions',
      auth: 'editor',
      body: BulkBody,
      doc: `allow or deny up to ${BULK_MAX} requests in one action, each through the one decide path; 200 {decided, results: [{id, status, message?}]} (409 per item someone else decided first)`,
      handler: async ({ req, res, body }) => {
        const ap = await approvals.of(req);
        const by = await decider(access, req, body.by);
        const asker = principalKey(access.principal(req));
        // Every item goes through the one decide path at once: their appends share the store's
        // group commits (a few fsyncs for 200 items, not 200 in a row); results keep the ids' order.
        const one = async (id: string): Promise<BulkItem> => {
          const asked = ap.state.byId.get(id);
          if (asked?.askedBy && asked.askedBy === asker) return { id, status: 403, message: 'the token that asked for this approval cannot decide it' };
          // An ask is a yes only with its own words: never allowed (or denied) wholesale.
          if (asked?.kind === 'ask') return { id, status: 409, message: 'an ask is answered with its phrase, on its own' };
          try {
            const r = await ap.decide(id, body.decision, by, { reason: body.reason });
            return r.won ? { id, status: 200 } : { id, status: 409, message: closedError(id, r.approval).message };
          } catch (e) {
            if (e instanceof HttpError && (e.status === 404 || e.status === 409 || e.status === 400)) return { id, status: e.status === 400 ? 409 : e.status, message: e.message };
            throw e;
          }
        };
        const results = await Promise.all([...new Set(body.ids)].map(one));
        sendJson(res, 200, { decided: results.filter((r) => r.status === 200).length, results });
      },
    }),
  ];
}
