// The webhook targets' routes (owner of the project), in the one route table
// (src/server/route.ts). Every change is an event of the `webhooks` stream.

import { Type } from '@sinclair/typebox';
import { isIP } from 'node:net';
import { WEBHOOK_KINDS, WEBHOOK_LIMITS, webhooksView } from '../../core/webhooks.js';
import type { Access } from '../access.js';
import { HttpError, sendJson } from '../http.js';
import { explainPrivate } from '../net-address.js';
import { route, type Route } from '../route.js';
import { newSecret, newTargetId, type WebhookService } from './service.js';

const Kinds = Type.Array(Type.Union(WEBHOOK_KINDS.map((k) => Type.Literal(k))), { minItems: 1, maxItems: WEBHOOK_KINDS.length, hint: `a list of ${WEBHOOK_KINDS.join(', ')}` });
const Url = Type.String({ minLength: 1, maxLength: WEBHOOK_LIMITS.url, hint: 'an http or https URL' });
const Secret = Type.String({ minLength: WEBHOOK_LIMITS.secret.min, maxLength: WEBHOOK_LIMITS.secret.max, hint: `${WEBHOOK_LIMITS.secret.min} to ${WEBHOOK_LIMITS.secret.max} characters` });
const AddBody = Type.Object(
  { url: Url, kinds: Kinds, secret: Type.Optional(Secret), slack: Type.Optional(Type.Boolean()), allow_private: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, hint: '{url, kinds, secret?, slack?, allow_private?}' },
);
const ChangeBody = Type.Object(
  { url: Type.Optional(Url), kinds: Type.Optional(Kinds), secret: Type.Optional(Secret), slack: Type.Optional(Type.Boolean()), allow_private: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, hint: '{url?, kinds?, secret?, slack?, allow_private?}' },
);
const TARGET_ID = { id: { pattern: /^wh[A-Za-z0-9_-]{1,40}$/, message: 'a webhook target id is wh and letters, digits, "-" or "_"' } };
const DELIVERY_ID = { id: { pattern: /^d[A-Za-z0-9_-]{1,40}$/, message: 'a delivery id is d and letters, digits, "-" or "_"' } };

/** The URL's words for a 400, or null when it may be a target. An IP literal is judged here; a name at every send. */
function checkUrl(raw: string, privateOk: boolean): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '"url" must be an absolute URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return '"url" must be an http or https URL';
  if (u.username || u.password) return '"url" must not carry a user or password (sign with the secret instead)';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!privateOk && isIP(host)) {
    const why = explainPrivate(host);
    if (why) return `"url" is ${why}; a webhook target must be public (in local mode an owner may allow private targets with "allow_private": true)`;
  }
  return null;
}

export function webhookRoutes(hooks: WebhookService, access: Access): Route[] {
  const privateOk = (asked: boolean | undefined) => {
    if (!asked) return false;
    if (access.mode !== 'local') throw new HttpError(400, 'bad_request', '"allow_private" is honoured in local mode only; a shared server sends to public addresses');
    return true;
  };
  const mine = (id: string, project: string) => {
    const t = hooks.state.targets.get(id);
    if (!t || t.project !== project) throw new HttpError(404, 'not_found', 'no such webhook target in this project');
    return t;
  };
  return [
    route({
      method: 'GET',
      path: '/webhooks',
      auth: 'owner',
      doc: "the project's webhook targets (no secrets) and their newest deliveries",
      handler: ({ res, grant }) => sendJson(res, 200, webhooksView(hooks.state, grant!.project)),
    }),
    route({
      method: 'POST',
      path: '/webhooks',
      auth: 'owner',
      body: AddBody,
      doc: 'a webhook target: url, kinds, secret (made when not given, shown once), slack, allow_private (local mode)',
      handler: async ({ res, body, grant, principal }) => {
        const allow = privateOk(body.allow_private);
        const bad = checkUrl(body.url, allow);
        if (bad) throw new HttpError(400, 'bad_request', bad);
        let n = 0;
        for (const t of hooks.state.targets.values()) if (t.project === grant!.project) n++;
        if (n >= WEBHOOK_LIMITS.targetsPerProject) throw new HttpError(409, 'conflict', `a project has at most ${WEBHOOK_LIMITS.targetsPerProject} webhook targets`);
        const id = newTargetId();
        const secret = body.secret ?? newSecret();
        await hooks.append([{ type: 'target.added', id, project: grant!.project, url: new URL(body.url).href, kinds: body.kinds, secret, slack: body.slack === true, allow_private: allow, by: principal!.name }]);
        const shown = webhooksView(hooks.state, grant!.project).targets.find((t) => t.id === id);
        sendJson(res, 201, { target: shown, secret });
      },
    }),
    route({
      method: 'PUT',
      path: '/webhooks/:id',
      auth: 'owner',
      params: TARGET_ID,
      body: ChangeBody,
      doc: 'changes a webhook target (a new secret, url, kinds, slack, allow_private)',
      handler: async ({ res, body, grant, params, principal }) => {
        const t = mine(params.id, grant!.project);
        const allow = body.allow_private === undefined ? t.allowPrivate : privateOk(body.allow_private);
        if (body.url !== undefined) {
          const bad = checkUrl(body.url, allow);
          if (bad) throw new HttpError(400, 'bad_request', bad);
        }
        await hooks.append([{ type: 'target.changed', id: t.id, by: principal!.name, ...body, ...(body.url ? { url: new URL(body.url).href } : {}) }]);
        sendJson(res, 200, { target: webhooksView(hooks.state, grant!.project).targets.find((x) => x.id === t.id) });
      },
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:id',
      auth: 'owner',
      params: TARGET_ID,
      doc: 'removes a webhook target (its pending deliveries fail)',
      handler: async ({ res, grant, params, principal }) => {
        const t = mine(params.id, grant!.project);
        await hooks.append([{ type: 'target.removed', id: t.id, by: principal!.name }]);
        sendJson(res, 200, { ok: true });
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/deliveries/:id/resend',
      auth: 'owner',
      params: DELIVERY_ID,
      doc: 'sends a delivered or failed delivery again (same body, a new signature)',
      handler: async ({ res, grant, params, principal }) => {
        const d = hooks.state.deliveries.get(params.id);
        if (!d || d.project !== grant!.project || !hooks.state.targets.has(d.target)) throw new HttpError(404, 'not_found', 'no such delivery in this project (or its target was removed)');
        if (d.status === 'pending') throw new HttpError(409, 'conflict', 'this delivery is still being sent');
        await hooks.append([{ type: 'delivery.resent', id: d.id, by: principal!.name }]);
        sendJson(res, 200, { ok: true });
      },
    }),
  ];
}
