// The flock's routes (spec/flock-events.md, docs/flock.md): one table,
// mounted like every app's. Paths, payloads and status codes are the
// contract's; error bodies are `{message}` (plus the server's `kind`), and a
// 429 is `{message, cooldown_s}`.

import { Type } from '@sinclair/typebox';
import {
  cleanNestName,
  cooldownS,
  crowRemoveRefusal,
  nestDeleteRefusal,
  CROW_KINDS,
  flockLedger,
  isTrustHolder,
  FLOCK_LIMITS,
  NEST_MODES,
  nestMessages,
  nestRecordJSON,
  nestRefusal,
  nestSlug,
  nestsIndex,
  overRate,
  quarantined,
  flockTs,
  spunCrows,
  TASK_TYPES,
  TODO_NEST,
  type FlockState,
} from '../../core/flock.js';
import { LIST_BODY_MAX, parseListText } from '../../core/flock-wire.js';
import { agentLedgerJSON } from '../../core/agent-trust.js';
import { personaRecords } from '../../core/personas.js';
import { personAuthor } from '../../core/nest-people.js';
import { NO_PROVIDER_MESSAGE } from '../../models/config.js';
import type { Access } from '../access.js';
import { PROJECT_PARAM } from '../access.js';
import { decider, type ApprovalService } from '../approvals.js';
import { HttpError, sendJson } from '../http.js';
import type { Live, ScopeSpec } from '../live/index.js';
import { route, type Route } from '../route.js';
import type { PerProject } from '../scoped.js';
import { rateRefusalS, verdictApprovalId, type FlockService } from './service.js';
import { ASKERS, checkPost, MessageBody } from './post.js';

const ListBody = Type.Object({
  text: Type.String({ maxLength: LIST_BODY_MAX }),
  requester: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.requester })),
  nest_id: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.id })),
  token_budget: Type.Optional(Type.Integer({ minimum: FLOCK_LIMITS.minBudget, maximum: FLOCK_LIMITS.maxBudget })),
});

const VerdictBody = Type.Object({
  item_id: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.id + 5 }),
  target: Type.Union([Type.Literal('triage'), Type.Literal('output')]),
  approve: Type.Boolean(),
});

const TrustBody = Type.Object({
  holder: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.crowName }),
  task_type: Type.Union(TASK_TYPES.map((t) => Type.Literal(t))),
  action: Type.Union([Type.Literal('demote'), Type.Literal('reset')]),
  reason: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.reason }),
});

const NestBody = Type.Object({
  name: Type.String({ maxLength: 400 }),
  crows: Type.Array(Type.String({ maxLength: FLOCK_LIMITS.crowName * 2 }), { maxItems: 64 }),
});

/** A nest's id from the path: a slug (anything else names no nest). */
function nestParam(state: FlockState, raw: string): string {
  const nest_id = raw.length <= FLOCK_LIMITS.nestName ? raw : '';
  if (!nest_id || !state.nests.has(nest_id)) throw new HttpError(404, 'not_found', `no nest "${raw.slice(0, 80)}"`);
  return nest_id;
}

const bad = (message: string) => new HttpError(400, 'bad_request', message);

/** A nest post over HTTP: the contract's body, its `author` optional (the caller's own label when absent). */
const PostBody = Type.Object({ ...MessageBody.properties, author: Type.Optional(MessageBody.properties.author) });

/**
 * The author of a nest post over HTTP, from the transport. Shared mode: the
 * caller's own label (core/nest-people.ts: "owner" for the owner role,
 * "member:<name>" for anyone else); a body `author` naming anyone else (the
 * owner, a crow, Quill, the Sentry, the harness, another member) is 403:
 * crows and service roles speak only through the server's drivers. Local
 * mode: one person at the machine, whose scripts may also post as the crows
 * (the contract's self-asserted author), "owner" when absent.
 */
function postAuthor(mode: string, role: string, name: string, given: string | undefined): string {
  const said = given?.trim() ?? '';
  if (mode !== 'shared') return said || 'owner';
  const mine = personAuthor(role, name);
  if (said !== '' && said !== mine) {
    throw new HttpError(403, 'forbidden', `you post as "${mine}", not "${said.slice(0, 40)}": crows, Quill and the Sentry speak only through the server, and only the owner role posts as "owner"`);
  }
  return mine;
}

const KindBody = Type.Object({
  kind: Type.Optional(Type.Union(CROW_KINDS.map((k) => Type.Literal(k)))),
  mode: Type.Optional(Type.Union(NEST_MODES.map((m) => Type.Literal(m)))),
});

const ReasonBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.reason }) });
const RenameBody = Type.Object({ name: Type.String({ maxLength: 400 }) });
const DeleteNestBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.reason })) });

const BudgetBody = Type.Object({ token_budget: Type.Integer({ minimum: FLOCK_LIMITS.minBudget, maximum: FLOCK_LIMITS.maxBudget }) });

/** `flock:<project>` (the whole flock, for the view) and `flock.list:<project>/<list_id>` (one list's contract stream). */
export function flockScopes(flocks: PerProject<FlockService>): { flock: ScopeSpec; list: ScopeSpec; nest: ScopeSpec } {
  const project = (key: string): string => {
    if (!PROJECT_PARAM.test(key)) throw new HttpError(400, 'bad_request', 'a project id is 1 to 64 lowercase letters, digits, "-" or "_"');
    return key;
  };
  const split = (key: string): [string, string] => {
    const i = key.indexOf('/');
    if (i < 0) throw new HttpError(400, 'bad_request', 'a list or nest scope is flock.list:<project>/<list_id> or flock.nest:<project>/<nest_id>');
    return [project(key.slice(0, i)), key.slice(i + 1)];
  };
  return {
    flock: { need: (key) => ({ project: project(key), min: 'viewer' }), open: async (key) => (await flocks.get(key)).channel },
    list: {
      need: (key) => ({ project: split(key)[0], min: 'viewer' }),
      open: async (key) => {
        const [p, list_id] = split(key);
        return (await flocks.get(p)).listChannel(list_id);
      },
    },
    nest: {
      need: (key) => ({ project: split(key)[0], min: 'viewer' }),
      open: async (key) => {
        const [p, nest_id] = split(key);
        return (await flocks.get(p)).nestChannel(nest_id);
      },
    },
  };
}

export function flockRoutes(flocks: PerProject<FlockService>, approvals: PerProject<ApprovalService>, live: Live, access: Access): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/lists',
      flock: true,
      auth: 'editor',
      body: ListBody,
      maxBody: LIST_BODY_MAX + 4096,
      doc: '202 {list_id}; 400, 404 unknown nest, 429 {message, cooldown_s}, 503 without a model',
      handler: async ({ req, res, body, principal }) => {
        const svc = await flocks.of(req);
        if (!svc.models?.ready) throw new HttpError(503, 'unavailable', NO_PROVIDER_MESSAGE);
        // Shared mode: the signed-in member (or the token's owner), never the body's word. Local mode: self-asserted.
        let requester: string;
        if (access.mode === 'shared') requester = principal!.name;
        else {
          requester = (body.requester ?? '').replace(/\s+/g, ' ').trim();
          if (!requester) throw new HttpError(400, 'bad_request', '"requester" is required: who hands over the list');
        }
        const now = Date.now();
        const cool = cooldownS(svc.state, requester, now);
        if (cool > 0) return void sendJson(res, 429, { message: `${requester} is cooling down after too many strikes; try again in ${cool} s.`, cooldown_s: cool });
        const nest_id = body.nest_id ?? TODO_NEST;
        if (!svc.state.nests.has(nest_id)) throw new HttpError(404, 'not_found', `no nest "${nest_id.slice(0, 80)}"`);
        if (overRate(svc.state, requester, now, 'list')) {
          const wait = rateRefusalS(await svc.strike(requester, 'rate'));
          return void sendJson(res, 429, { message: `${requester} may start ${FLOCK_LIMITS.listsPerMinute} lists a minute; try again in ${wait} s.`, cooldown_s: wait });
        }
        const parsed = parseListText(body.text);
        if (!parsed.ok) {
          const c = await svc.strike(requester, parsed.strike);
          // The strike that starts a cooldown is answered as a prank.
          if (c > 0) return void sendJson(res, 429, { message: `${parsed.message}. ${requester} is cooling down for ${c} s.`, cooldown_s: c });
          throw new HttpError(400, 'bad_request', parsed.message);
        }
        const list_id = await svc.startList(requester, parsed.items, nest_id, body.token_budget);
        sendJson(res, 202, { list_id });
      },
    }),
    route({
      method: 'GET',
      path: '/api/events',
      flock: true,
      auth: 'viewer',
      stream: true,
      doc: '?list_id=: the list\'s contract events; ?nest_id=: the nest\'s nest.message (SSE, id: lines, Last-Event-ID)',
      handler: async ({ req, res, url, grant }) => {
        const nest_id = url.searchParams.get('nest_id');
        if (nest_id !== null) {
          nestParam((await flocks.of(req)).state, nest_id);
          return live.serve(req, res, url, grant!, [`flock.nest:${grant!.project}/${nest_id}`]).then(() => undefined);
        }
        const list_id = url.searchParams.get('list_id');
        if (!list_id) throw new HttpError(400, 'bad_request', 'name the list or the nest: /api/events?list_id=<id> or ?nest_id=<id>');
        if (list_id.length > FLOCK_LIMITS.id || !/^[A-Za-z0-9_.:-]+$/.test(list_id)) throw new HttpError(400, 'bad_request', 'that is not a list id');
        await live.serve(req, res, url, grant!, [`flock.list:${grant!.project}/${list_id}`]);
      },
    }),
    route({
      method: 'POST',
      path: '/api/verdicts',
      flock: true,
      auth: 'editor',
      body: VerdictBody,
      doc: '204; 404 when nothing waits (a second answer included); the decider is the caller',
      handler: async ({ req, res, body }) => {
        const svc = await flocks.of(req);
        const target = body.target;
        const nothing = () => new HttpError(404, 'not_found', `no ${target} verdict waits for ${body.item_id.slice(0, 90)}`);
        const pending = svc.pendingVerdict(body.item_id, target);
        if (!pending) throw nothing();
        const ap = await approvals.of(req);
        await svc.ensureApproval(pending.list, pending.item, target);
        const id = verdictApprovalId(svc.project, body.item_id, target);
        const by = await decider(access, req, undefined);
        let won: boolean;
        try {
          won = (await ap.decide(id, body.approve ? 'allow' : 'deny', by)).won;
        } catch (e) {
          if (e instanceof HttpError && (e.status === 409 || e.status === 404)) throw nothing();
          throw e;
        }
        if (!won) throw nothing();
        // The verdict is in the log before the answer (the approval's listener writes the same one, keyed).
        await svc.writeVerdict(pending.list.list_id, body.item_id, target, body.approve ? 'approved' : 'rejected', by);
        res.writeHead(204);
        res.end();
      },
    }),
    route({
      method: 'GET',
      path: '/api/trust',
      flock: true,
      auth: 'viewer',
      doc: "the one ledger: the flock's holders (the contract's fields) and, under `agents`, the coding agents' teams per action class",
      handler: async ({ req, res }) => sendJson(res, 200, { ...flockLedger((await flocks.of(req)).state), agents: agentLedgerJSON((await approvals.of(req)).state.agentTrust) }),
    }),
    route({
      method: 'POST',
      path: '/api/trust',
      flock: true,
      auth: 'owner',
      body: TrustBody,
      doc: 'demote (one level) or reset a holder, with a reason (logged)',
      handler: async ({ req, res, body }) => {
        const svc = await flocks.of(req);
        if (!isTrustHolder(svc.state, body.holder)) throw new HttpError(404, 'not_found', `no trust holder "${body.holder}" (a working crow, or "flock")`);
        const by = await decider(access, req, undefined);
        const r = await svc.demote(body.holder, body.task_type, body.action, by, body.reason);
        sendJson(res, 200, { holder: body.holder, task_type: body.task_type, ...r, by, reason: body.reason });
      },
    }),
    route({
      method: 'PUT',
      path: '/api/budget',
      flock: true,
      auth: 'owner',
      body: BudgetBody,
      doc: 'the project\'s default token budget for new lists',
      handler: async ({ req, res, body }) => {
        const svc = await flocks.of(req);
        await svc.setProjectBudget(body.token_budget, await decider(access, req, undefined));
        sendJson(res, 200, { token_budget: svc.state.budget.project });
      },
    }),
    route({ method: 'GET', path: '/api/personas', flock: true, auth: 'viewer', handler: ({ res }) => sendJson(res, 200, personaRecords()) }),
    route({ method: 'GET', path: '/api/crows', flock: true, auth: 'viewer', handler: async ({ req, res }) => sendJson(res, 200, { crows: spunCrows((await flocks.of(req)).state) }) }),
    route({
      method: 'GET',
      path: '/api/nests',
      flock: true,
      auth: 'viewer',
      doc: '{roster, nests} (the contract\'s), plus watchdog {on, model, band, reason} and quarantined [{crow, nest_id, flag, refers_to, since}]',
      handler: async ({ req, res }) => {
        const svc = await flocks.of(req);
        const q = quarantined(svc.state).map((x) => ({ crow: x.crow, nest_id: x.nest_id, flag: x.flag, refers_to: x.refers_to, since: flockTs(x.since) }));
        sendJson(res, 200, { ...nestsIndex(svc.state), watchdog: svc.watch.status(), quarantined: q });
      },
    }),
    route({
      method: 'POST',
      path: '/api/nests',
      flock: true,
      auth: 'editor',
      body: NestBody,
      doc: '201 {nest_id, name, crows}; 400 {message}; 409 a taken id',
      handler: async ({ req, res, body, principal }) => {
        const svc = await flocks.of(req);
        // The fold's own cleaning (one function), so an accepted name is the name kept and its slug the id.
        const name = cleanNestName(body.name) ?? '';
        const why = nestRefusal(svc.state, name, body.crows);
        if (why === 'bad name') throw bad(`"name" is 1 to ${FLOCK_LIMITS.nestName} characters after trimming, with at least one letter or digit`);
        if (why === 'bad crows') throw bad(`"crows" is 1 to ${FLOCK_LIMITS.nestCrows} distinct names from the roster (GET /api/nests)`);
        if (why === 'taken') throw new HttpError(409, 'conflict', `a nest "${nestSlug(name)}" exists already; pick another name`);
        if (why === 'too many nests') throw bad(`a project has at most ${FLOCK_LIMITS.maxNests} nests, todo included`);
        const nest_id = nestSlug(name);
        if (!(await svc.createNest(nest_id, name, body.crows, principal?.name ?? 'owner'))) throw new HttpError(409, 'conflict', `a nest "${nest_id}" exists already; pick another name`);
        sendJson(res, 201, { nest_id, name, crows: svc.state.nests.get(nest_id)!.core.slice() });
      },
    }),
    // The owner's direct actions (docs/flock.md, "What the owner does directly"): each one event, folded like any.
    route({
      method: 'POST',
      path: '/api/quarantine/:crow/lift',
      flock: true,
      auth: 'owner',
      body: ReasonBody,
      doc: 'lifts a crow\'s quarantine now, with a reason (logged as quarantine.lifted); 404 when it is not quarantined',
      handler: async ({ req, res, params, body }) => {
        const svc = await flocks.of(req);
        const crow = params.crow;
        if (!svc.state.quarantine.has(crow)) throw new HttpError(404, 'not_found', `${crow.slice(0, 40)} is not quarantined`);
        const by = await decider(access, req, undefined);
        const reason = body.reason.trim();
        if (!reason) throw bad('"reason" says why the quarantine is lifted');
        await svc.append([{ type: 'quarantine.lifted', crow, by, reason, ts: flockTs(Date.now()) }]);
        if (svc.state.quarantine.has(crow)) throw new HttpError(409, 'conflict', `${crow} is still quarantined (changed meanwhile); try again`);
        sendJson(res, 200, { crow, by, reason });
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/crows/:name',
      flock: true,
      auth: 'owner',
      body: ReasonBody,
      doc: 'removes a spun crow from the registry, with a reason (crow.removed); 404 not a spun crow, 409 while it flies',
      handler: async ({ req, res, params, body }) => {
        const svc = await flocks.of(req);
        const name = params.name;
        const why = crowRemoveRefusal(svc.state, name);
        if (why === 'unknown') throw new HttpError(404, 'not_found', `no spun crow "${name.slice(0, 40)}" (persona crows stay)`);
        if (why === 'busy') throw new HttpError(409, 'conflict', `${name} is flying; remove it once it has landed`);
        const by = await decider(access, req, undefined);
        const reason = body.reason.trim() || 'removed by the owner';
        await svc.append([{ type: 'crow.removed', name, by, reason, ts: flockTs(Date.now()) }]);
        if (svc.state.spun.has(name)) throw new HttpError(409, 'conflict', `${name} took off meanwhile; try again once it has landed`);
        sendJson(res, 200, { name, by, reason });
      },
    }),
    route({
      method: 'PUT',
      path: '/api/nests/:id',
      flock: true,
      auth: 'owner',
      body: RenameBody,
      doc: 'renames a nest (its id stays: every msg_id is built on it); 400 todo or a bad name, 404',
      handler: async ({ req, res, params, body }) => {
        const svc = await flocks.of(req);
        const nest_id = nestParam(svc.state, params.id);
        if (nest_id === TODO_NEST) throw bad('todo keeps its name');
        const name = cleanNestName(body.name);
        if (!name || !nestSlug(name)) throw bad(`"name" is 1 to ${FLOCK_LIMITS.nestName} characters after trimming, with at least one letter or digit`);
        const nest = svc.state.nests.get(nest_id)!;
        if (name !== nest.name) await svc.append([{ type: 'nest.renamed', nest_id, name, by: await decider(access, req, undefined), ts: flockTs(Date.now()) }]);
        const now = svc.state.nests.get(nest_id);
        if (!now) throw new HttpError(404, 'not_found', `no nest "${nest_id}"`);
        sendJson(res, 200, { nest_id, name: now.name, crows: now.core.slice() });
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/nests/:id',
      flock: true,
      auth: 'owner',
      body: DeleteNestBody,
      doc: 'deletes a nest (nest.deleted): its messages stay in the log, its id stays reserved; 400 todo, 404, 409 while work flies in it',
      handler: async ({ req, res, params, body }) => {
        const svc = await flocks.of(req);
        const nest_id = nestParam(svc.state, params.id);
        const why = nestDeleteRefusal(svc.state, nest_id);
        if (why === 'todo') throw bad('todo is the default nest and stays');
        if (why === 'busy') throw new HttpError(409, 'conflict', `nest "${nest_id}" has work in the air (a crow flying, or an unfinished list); delete it once that is done`);
        if (why === 'too many') throw new HttpError(409, 'conflict', `this project has deleted ${FLOCK_LIMITS.goneNests} nests, the most it keeps reserved`);
        const by = await decider(access, req, undefined);
        const reason = body.reason?.trim() ?? '';
        await svc.append([{ type: 'nest.deleted', nest_id, by, ...(reason ? { reason } : {}), ts: flockTs(Date.now()) }]);
        if (svc.state.nests.has(nest_id)) throw new HttpError(409, 'conflict', `nest "${nest_id}" got work meanwhile; try again once it is done`);
        sendJson(res, 200, { nest_id, by });
      },
    }),
    route({
      method: 'GET',
      path: '/api/nests/:id/messages',
      flock: true,
      auth: 'viewer',
      doc: 'the nest\'s records in msg_id order, resolved computed now; 404 unknown nest',
      handler: async ({ req, res, params }) => {
        const svc = await flocks.of(req);
        sendJson(res, 200, nestMessages(svc.state, nestParam(svc.state, params.id), Date.now()));
      },
    }),
    route({
      method: 'POST',
      path: '/api/nests/:id/messages',
      flock: true,
      auth: 'editor',
      body: PostBody,
      doc: '201 the stored record; 404, 400 {message}, 403 quarantined or an author not the caller\'s, 429 {message, cooldown_s}',
      handler: async ({ req, res, params, body, principal, grant }) => {
        const svc = await flocks.of(req);
        const nest_id = nestParam(svc.state, params.id);
        // Who speaks is the caller (docs/security.md "Who may speak for whom"): shared mode, the person's own label.
        const author = postAuthor(access.mode, grant?.role ?? '', principal?.name ?? '', body.author);
        const { ev, answer } = await checkPost(svc.state, nest_id, { ...body, author }, svc.jev, svc.settings.jevBand);
        // Limits, strikes and cooldowns are the person's (all their tokens and sign-ins); local mode: the author's.
        const poster = access.mode === 'shared' && principal ? principal.name : author;
        const now = Date.now();
        const cool = cooldownS(svc.state, poster, now);
        if (cool > 0) return void sendJson(res, 429, { message: `${poster} is cooling down after too many strikes; try again in ${cool} s.`, cooldown_s: cool });
        if (!ASKERS.includes(author) && overRate(svc.state, poster, now, 'post')) {
          const c = await svc.strike(poster, 'rate');
          const wait = c || 60;
          return void sendJson(res, 429, { message: `${poster} may post ${FLOCK_LIMITS.postsPerMinute} messages a minute; try again in ${wait} s.`, cooldown_s: wait });
        }
        // Shared mode: who stood behind the post (the record's author stays the contract's).
        if (access.mode === 'shared' && principal) ev.by = principal.name;
        // An ask's window is the flock's approval window (ROOST_FLOCK_WINDOW_MS), the same as a list's verdict.
        if (ev.kind === 'ask_owner') ev.window_ms = svc.settings.verdictWindowMs;
        const msg_id = await svc.postMessage(nest_id, () => ev);
        const rec = msg_id ? svc.state.nests.get(nest_id)?.messages.get(msg_id) : undefined;
        if (!rec) throw bad('the message was not accepted (the nest changed meanwhile: read it and post again)');
        // Every tag is logged with its probabilities (the calibration's data).
        if (answer) await svc.logJev(nest_id, msg_id, rec.kind === 'request', answer, { kind: body.kind?.trim() || undefined, mode: body.mode || undefined });
        sendJson(res, 201, nestRecordJSON(nest_id, rec, Date.now()));
      },
    }),
    route({
      method: 'POST',
      path: '/api/nests/:id/messages/:msg/kind',
      flock: true,
      auth: 'owner',
      body: KindBody,
      doc: 'the owner says what kind (and a request\'s mode) a message really was: logged as jev.truth, the calibration\'s truth; the record is unchanged',
      handler: async ({ req, res, params, body }) => {
        const svc = await flocks.of(req);
        const nest_id = nestParam(svc.state, params.id);
        const rec = svc.state.nests.get(nest_id)!.messages.get(params.msg);
        if (!rec) throw new HttpError(404, 'not_found', `no message "${params.msg.slice(0, 80)}" kept in nest "${nest_id}"`);
        if (body.kind === undefined && body.mode === undefined) throw bad('name the "kind" (and, for a request, the "mode") the message really was');
        if (body.mode !== undefined && (body.kind ?? rec.kind) !== 'request') throw bad('only a request has a mode');
        const by = await decider(access, req, undefined);
        const ts = flockTs(Date.now());
        const evs = [
          ...(body.kind !== undefined ? [{ type: 'jev.truth', nest_id, msg_id: rec.msg_id, question: 'kind', label: body.kind, by, ts }] : []),
          ...(body.mode !== undefined ? [{ type: 'jev.truth', nest_id, msg_id: rec.msg_id, question: 'mode', label: body.mode, by, ts }] : []),
        ];
        await svc.append(evs);
        sendJson(res, 200, { nest_id, msg_id: rec.msg_id, ...(body.kind !== undefined ? { kind: body.kind } : {}), ...(body.mode !== undefined ? { mode: body.mode } : {}), by });
      },
    }),
    route({
      method: 'GET',
      path: '/api/flock',
      flock: true,
      auth: 'viewer',
      doc: 'the models serving each role, and the lists with their status',
      handler: async ({ req, res }) => {
        const svc = await flocks.of(req);
        sendJson(res, 200, svc.overview());
      },
    }),
  ];
}
