// One route table per app: each route declares its method, path, who may call
// it, how its project is found and what its body is; `mountRoutes` applies
// the checks in one order for every app, so no handler checks its own role
// or parses its own body (Hono's habit, on our own small router).
//
// The order, for every route (docs/security.md):
//   1. the edge (edge.ts, before any route): Host, Origin of a state-changing
//      request, the response's security headers;
//   2. who calls: the principal (a cookie or a token; the caller's request
//      budget is spent here), 401 when the route needs one and there is none;
//      409 when the route needs shared mode and the server runs in local mode;
//   3. the body, when the route has one: Content-Type (415), size (413),
//      JSON (400);
//   4. the route's minimum: a role in the request's project (403; the grant
//      is remembered on the request and claims its stream), a person rather
//      than a token, an administrator, or the owner of the Space the path names;
//   5. the path's `:name` values against their rules (400), then the body's shape: a TypeBox schema compiled once, or the app's own wire
//      check (the fleet's, shared with browsers in src/core) (400; 413 for a
//      batch over its count);
//   6. the Idempotency-Key of a keyed route (`key`): its owner and the
//      request's fingerprint, computed here once (keys.ts; 400 for a key over
//      200 characters, or none where the route needs one);
//   7. the handler, with the typed body, the grant, the params, the URL and the key.
//
// Errors are the same everywhere: 400 bad_request for a bad field (an
// over-long string included), 413 too_large only for a body over its byte
// limit or a batch over its count, 415 for a wrong content type.
//
// The floor's `POST /events` (`body: 'raw'`) reads its own body with its
// hand-written, measured check: for it the route layer adds no promise and no
// read, only the same checks 1, 2 and 4, synchronously.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { projectOf, type Access, type Grant, type Principal } from './access.js';
import { HttpError, MAX_BODY_BYTES, idempotencyKeyOf, readJsonBody, type Handler, type Router } from './http.js';
import { RequestKey, fingerprintOf, type LegacyKey } from './keys.js';

/**
 * Who may call a route (a small closed set):
 * - `public`: anyone (a caller's budget is still spent);
 * - `principal`: any signed-in person or token (local mode: the owner);
 * - `person`: a signed-in person, not a token (accounts, tokens);
 * - `admin`: an instance administrator (local mode: the owner);
 * - `viewer` | `editor` | `owner`: at least that role in the request's project;
 * - `space`: the owner of the Space named by the path's `:id` (its bridge).
 */
export type Auth = 'public' | 'principal' | 'person' | 'admin' | 'viewer' | 'editor' | 'owner' | 'space';
export type ProjectRole = 'viewer' | 'editor' | 'owner';
export const AUTHS: readonly Auth[] = ['public', 'principal', 'person', 'admin', 'viewer', 'editor', 'owner', 'space'];

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What the route layer knows before the minimum is decided (the body is parsed but not yet checked). */
export interface Asking {
  req: IncomingMessage;
  url: URL;
  params: Record<string, string>;
  principal: Principal | null;
  /** The parsed JSON body (unchecked), or undefined for a route without one. */
  raw: unknown;
}

export interface Ctx<B = undefined> {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  /** The checked body (`undefined` for a route without one). */
  body: B;
  /** The caller: null only on a public route called by nobody. */
  principal: Principal | null;
  /** The grant of a role route (project and role), else null. */
  grant: Grant | null;
  /** A keyed route's Idempotency-Key (null when the request has none); always null on a route without `key`. */
  key: RequestKey | null;
}

/** What a route's Idempotency-Key is (keys.ts): the route layer reads it, the handler passes it to the store. */
export interface KeyRule {
  /** A request without one is refused, 400 with this message. */
  required?: string;
  /** Whose key it is when not the caller's uid (a public route: the login a sign-in names). */
  owner?: (c: { params: Record<string, string>; body: unknown; url: URL }) => string;
  /** No fingerprint: a retry with another body gets the first answer (the floor's contract). */
  fingerprint?: false;
  /** The key's text as the route stored it before keys were scoped here, so a retry across the upgrade is recognised. */
  legacy?: (stream: string, key: string, c: { params: Record<string, string>; body: unknown; owner: string; project: string }) => string;
}

/** A body checked by the app's own wire check (throws HttpError), for shapes the pure core checks. */
export interface WireBody<B> {
  wire: (value: unknown) => B;
}

export interface Route<B = any> {
  method: Method;
  path: string;
  /** The minimum, or a choice of it from the request (then `doc` says it in words). */
  auth: Auth | ((a: Asking) => Auth);
  /** For the docs table: the minimum in words, when `auth` is a choice, or a note after it. */
  doc?: string;
  /**
   * The project a role route is about. Default: the token's own project, or
   * `?project=` / `Roost-Project`, else `default` (`projectOf`).
   */
  project?: (a: Asking) => string;
  /** A token is refused even with the role (managing people and tokens is a person's act). */
  tokens?: false;
  /** This needs shared mode: what it is, for the 409 in local mode ("inviting people"). */
  shared?: string;
  /** Rules for the path's `:name` values (a 400 with the rule's message when one does not match). */
  params?: Record<string, ParamRule>;
  /** The body: a TypeBox schema, the app's wire check, or `raw` (the handler reads it itself). */
  body?: TSchema | WireBody<B> | 'raw';
  /** The body's byte limit (default 16 KiB). */
  maxBody?: number;
  /** This GET's path is also a page of the web app (see Router.on). */
  page?: boolean;
  /** A long-lived response (SSE): in the docs, and exempt from nothing else (requests are short either way). */
  stream?: boolean;
  /** The flock's own request: its driver's pacer (flock/pace.ts) does not yield to it. Every route of the flock's table says so. */
  flock?: true;
  /** The route takes an Idempotency-Key: the handler gets it as `key` (see KeyRule). */
  key?: KeyRule;
  handler(c: Ctx<B>): void | Promise<void>;
}

/** What a path's `:name` must look like, and what a caller is told when it does not. */
export interface ParamRule {
  pattern: RegExp;
  message: string;
}

/** Declares a route with a TypeBox body: the handler sees `Static<S>`. */
export function route<S extends TSchema>(r: Omit<Route<Static<S>>, 'body'> & { body: S }): Route;
/** Declares a route with a wire-checked body, a raw body, or none. */
export function route<B = undefined>(r: Route<B>): Route;
export function route(r: Route): Route {
  return r;
}

/** What the route layer needs from the rest of the server. */
export interface RouteEnv {
  access: Access;
  /** Resolves the Space a `space` route names for its caller: throws 404 (no such Space) or 403 (not theirs). */
  space?: (id: string, p: Principal) => Promise<unknown>;
}

const DEFAULT_MAX_BODY = 16 * 1024;

const localOnly = (what: string) =>
  new HttpError(409, 'conflict', `${what} needs shared mode; this server runs in local mode (loopback, no accounts). Create the first owner with \`roost admin create-owner --login NAME\` and restart`);

const NOBODY = () => new HttpError(401, 'unauthorized', 'sign in, or send a token (Authorization: Bearer ...)');

// ---------------------------------------------------------------- body errors

/** `/agents/3/session` → `agents[3].session` */
function fieldName(path: string): string {
  return path
    .split('/')
    .slice(1)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : (i ? '.' : '') + p.replace(/~1/g, '/').replace(/~0/g, '~')))
    .join('');
}

function constsOf(schema: TSchema): string[] | null {
  const any = (schema as { anyOf?: TSchema[] }).anyOf;
  if (!any) return null;
  const out: string[] = [];
  for (const s of any) {
    if (!('const' in s)) return null;
    out.push(JSON.stringify((s as unknown as { const: unknown }).const));
  }
  return out;
}

/**
 * The first thing wrong with a body, in words a person can act on. A schema
 * may carry `hint` (what the field is, e.g. '1 to 64 letters, digits, "-" or
 * "_"'), used for a pattern or a type it does not match.
 */
export function describeBodyError(e: ValueError): HttpError {
  const name = fieldName(e.path);
  const f = name ? `"${name}"` : 'the body';
  const s = e.schema as TSchema & { hint?: string; maxLength?: number; minLength?: number; maxItems?: number; minimum?: number; maximum?: number; batch?: boolean };
  const hint = s.hint ? ` (${s.hint})` : '';
  const bad = (m: string) => new HttpError(400, 'bad_request', m);
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return bad(`${f} is required`);
    case ValueErrorType.Object:
      return bad(name ? `${f} must be a JSON object` : 'the body must be a JSON object');
    case ValueErrorType.String:
      return bad(`${f} must be a string${hint}`);
    case ValueErrorType.StringMaxLength:
      return bad(`${f} is longer than ${s.maxLength} characters`);
    case ValueErrorType.StringMinLength:
      return bad(s.minLength === 1 ? `${f} must not be empty` : `${f} has at least ${s.minLength} characters`);
    case ValueErrorType.StringPattern:
      return bad(`${f} must be ${s.hint ?? 'of the documented form'}`);
    case ValueErrorType.Boolean:
      return bad(`${f} must be true or false`);
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
      return bad(`${f} must be ${e.type === ValueErrorType.Integer ? 'an integer' : 'a number'}${hint}`);
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerExclusiveMaximum:
      return bad(`${f} must be ${s.hint ?? `between ${s.minimum ?? '-∞'} and ${s.maximum ?? '∞'}`}`);
    case ValueErrorType.Array:
      return bad(`${f} must be a list${hint}`);
    case ValueErrorType.ArrayMaxItems:
      // A batch over its count is the one 413 besides the byte limit.
      return s.batch ? new HttpError(413, 'too_large', `${f} holds at most ${s.maxItems} items, got ${Array.isArray(e.value) ? e.value.length : '?'}`) : bad(`${f} holds at most ${s.maxItems} items`);
    case ValueErrorType.Union: {
      const c = constsOf(e.schema);
      return bad(c ? `${f} must be one of ${c.join(', ')}` : `${f} must be ${s.hint ?? 'of the documented form'}`);
    }
    case ValueErrorType.Literal:
      return bad(`${f} must be ${JSON.stringify((e.schema as unknown as { const: unknown }).const)}`);
    default:
      return bad(`${f}: ${e.message}`);
  }
}

// ---------------------------------------------------------------- bodiless writes

/**
 * A write without a body and without an Origin (the edge refused a foreign
 * one already) must show it is not a cross-site form or an old browser's
 * form post: `Content-Type: application/json`, or a `Roost-*` header
 * (`Roost-Client: cli`), or `Authorization`. A page on another site can send
 * none of these without a CORS preflight, which this server never grants.
 * (A route with a JSON body has this from its 415 already.)
 */
function notAForm(req: IncomingMessage): void {
  if (req.headers.origin !== undefined) return;
  const ct = req.headers['content-type'];
  if (typeof ct === 'string' && /^application\/json\s*(;|$)/i.test(ct)) return;
  if (req.headers.authorization !== undefined) return;
  for (const k in req.headers) if (k.startsWith('roost-')) return;
  throw new HttpError(
    403,
    'forbidden',
    'a write without a body and without an Origin header must say Content-Type: application/json or carry a Roost-* header (e.g. Roost-Client: cli): a cross-site form can do neither',
  );
}

// ---------------------------------------------------------------- mounting

/**
 * Mounts an app's table on the router: every route through the same checks,
 * in the same order (see the top of this file).
 */
export function mountRoutes(router: Router, routes: readonly Route[], env: RouteEnv): Router {
  for (const r of routes) router.on(r.method, r.path, compile(r, env), { page: r.page });
  return router;
}

function compile(r: Route, env: RouteEnv): Handler {
  const { access } = env;
  const fixed = typeof r.auth === 'string' ? r.auth : null;
  const max = r.maxBody ?? DEFAULT_MAX_BODY;
  if (max > MAX_BODY_BYTES && r.body !== 'raw') throw new Error(`${r.method} ${r.path}: maxBody above ${MAX_BODY_BYTES}`);
  const schema = r.body && r.body !== 'raw' && !('wire' in r.body) ? TypeCompiler.Compile(r.body) : null;
  const wire = r.body && r.body !== 'raw' && 'wire' in r.body ? r.body.wire : null;
  const reads = schema !== null || wire !== null;

  /** Steps 4 to 6, once the body (if any) is parsed. */
  const finish = (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>, principal: Principal | null, raw: unknown): void | Promise<void> => {
    // Built only for a route that decides from the request (not on the ingest path).
    const asking: Asking | null = fixed === null || r.project ? { req, url, params, principal, raw } : null;
    const auth = fixed ?? (r.auth as (a: Asking) => Auth)(asking!);
    let grant: Grant | null = null;
    let space: Promise<unknown> | null = null;
    switch (auth) {
      case 'public':
        break;
      case 'principal':
        if (!principal) throw NOBODY();
        break;
      case 'person':
      case 'admin':
        if (!principal) throw NOBODY();
        if (principal.kind === 'token') throw new HttpError(403, 'forbidden', 'a token cannot do this; sign in as a person');
        if (auth === 'admin' && !access.isAdmin(principal)) throw new HttpError(403, 'forbidden', 'only a server administrator (the first owner, or one they made) may do this');
        break;
      case 'space':
        if (!principal) throw NOBODY();
        if (!env.space) throw new HttpError(404, 'not_found', 'this server has no Spaces');
        space = env.space(params.id ?? '', principal);
        break;
      default: {
        const project = r.project ? r.project(asking!) : projectOf(req, url, principal);
        grant = access.require(req, project, auth);
        if (r.tokens === false && grant.kind === 'token') throw new HttpError(403, 'forbidden', 'a token cannot do this; sign in as a person');
      }
    }
    const run = (): void | Promise<void> => {
      if (r.params) for (const k in r.params) if (!r.params[k].pattern.test(params[k] ?? '')) throw new HttpError(400, 'bad_request', r.params[k].message);
      let body: unknown = undefined;
      if (schema) {
        if (!schema.Check(raw)) throw describeBodyError(schema.Errors(raw).First()!);
        body = raw;
      } else if (wire) body = wire(raw);
      const key = r.key ? keyOf(r.key, r.method, req, url, params, principal, grant, raw) : null;
      return r.handler({ req, res, url, params, body, principal, grant, key });
    };
    return space ? space.then(run) : run();
  };

  return (req, res, url, params) => {
    // Who calls (every request spends its caller's budget), then shared-mode-only routes.
    const principal = access.principal(req);
    if (r.shared && access.mode === 'local') {
      req.resume();
      throw localOnly(r.shared);
    }
    if (fixed !== 'public' && typeof r.auth === 'string' && !principal) {
      req.resume();
      throw NOBODY();
    }
    if (!reads) {
      // No body to read here (a GET, a bodiless POST, or `raw`: the handler reads it).
      if (r.body !== 'raw') {
        req.resume();
        if (r.method !== 'GET') notAForm(req);
      }
      return finish(req, res, url, params, principal, undefined);
    }
    return new Promise<void>((ok, fail) =>
      readJsonBody(req, max, (err, value) => {
        if (err) return fail(err);
        try {
          Promise.resolve(finish(req, res, url, params, principal, value)).then(ok, fail);
        } catch (e) {
          fail(e);
        }
      }),
    );
  };
}

/** A keyed route's key: the header, its owner, the request's fingerprint (keys.ts). */
function keyOf(k: KeyRule, method: string, req: IncomingMessage, url: URL, params: Record<string, string>, principal: Principal | null, grant: Grant | null, raw: unknown): RequestKey | null {
  const key = idempotencyKeyOf(req);
  if (!key) {
    if (k.required) throw new HttpError(400, 'bad_request', k.required);
    return null;
  }
  const owner = k.owner ? k.owner({ params, body: raw, url }) : (principal?.uid ?? '');
  const fp = k.fingerprint === false ? undefined : fingerprintOf(method, url.pathname, raw);
  const legacy: LegacyKey | null = k.legacy ? (stream, key) => k.legacy!(stream, key, { params, body: raw, owner, project: grant?.project ?? projectOf(req, url, principal) }) : null;
  return new RequestKey(key, owner, fp, legacy);
}

/** One row of the docs' route table: the method, the path and the minimum in words. */
export function routeRows(routes: readonly Route[]): { method: string; path: string; minimum: string }[] {
  return routes.map((r) => {
    const fixed = typeof r.auth === 'string';
    const notes: string[] = [];
    if (fixed && r.tokens === false) notes.push('a person, not a token');
    if (fixed && r.doc) notes.push(r.doc);
    if (r.shared) notes.push('shared mode only');
    const minimum = (fixed ? (r.auth as string) : (r.doc ?? 'decided per request')) + (notes.length ? ` (${notes.join('; ')})` : '');
    return { method: r.method, path: r.path, minimum };
  });
}

/** The route table as docs/security.md holds it (test/routes.http.test.ts compares; scripts/route-doc.mjs writes it). */
export function routeTableMarkdown(routes: readonly Route[]): string {
  const rows = routeRows(routes);
  return ['| method | path | minimum |', '|---|---|---|', ...rows.map((r) => `| ${r.method} | \`${r.path}\` | ${r.minimum} |`)].join('\n');
}
