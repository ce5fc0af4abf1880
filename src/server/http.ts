// HTTP plumbing shared by every app: errors as values with a kind, JSON bodies
// with limits, and a tiny exact-path router. No framework: the ingest path is
// the hot path and is measured against bare node:http in the bench.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { StoreError } from '../storage/types.js';

/** The closed set of error kinds on the wire: `{"message", "kind"}`. */
export type ErrorKind =
  | 'bad_request'
  | 'unsupported_media_type'
  | 'too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'misdirected'
  | 'conflict'
  | 'unprocessable'
  | 'too_many'
  | 'unavailable'
  | 'internal';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown; retryAfterS?: number },
  ) {
    super(message, options);
    this.retryAfterS = options?.retryAfterS;
  }
  /** Sent as `Retry-After` (seconds) with a 429 or 503. */
  readonly retryAfterS: number | undefined;
}

export const MAX_BODY_BYTES = 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Sends JSON the caller has already written as text (the ingest answer is built without JSON.stringify). */
export function sendJsonText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'x-content-type-options': 'nosniff' });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof HttpError) {
    if (err.retryAfterS !== undefined) res.setHeader('retry-after', String(err.retryAfterS));
    sendJson(res, err.status, { message: err.message, kind: err.kind });
    return;
  }
  if (err instanceof StoreError && err.kind !== 'internal') {
    const e = httpOfStore(err);
    sendJson(res, e.status, { message: e.message, kind: e.kind });
    return;
  }
  console.error('roost: internal error', err);
  sendJson(res, 500, { message: 'internal error', kind: 'internal' });
}

/**
 * What the caller is told of a store's refusal (StoreError kinds, storage/types.ts):
 * an Idempotency-Key used for a different request is 422; a database that
 * cannot be reached or a store that is closing is 503 (a retry with the same
 * key is safe); what no store can hold is 400.
 */
export function httpOfStore(err: StoreError): HttpError {
  switch (err.kind) {
    case 'conflict':
      return new HttpError(422, 'unprocessable', 'this Idempotency-Key was used for a different request', { cause: err });
    case 'unavailable':
      return new HttpError(503, 'unavailable', 'the database is unavailable; retry shortly (with the same Idempotency-Key)', { cause: err });
    case 'closed':
      return new HttpError(503, 'unavailable', 'the server is shutting down; retry shortly (with the same Idempotency-Key)', { cause: err });
    case 'bad_input':
      return new HttpError(400, 'bad_request', err.message, { cause: err });
    default:
      return new HttpError(500, 'internal', 'internal error', { cause: err });
  }
}

/**
 * Reads a JSON body, enforcing the content type and the size limit, and calls
 * `done` once: with the parsed value, or with an HttpError. (The callback form
 * is the ingest path's: no promise per request.)
 */
export function readJsonBody(req: IncomingMessage, limit: number, done: (err: HttpError | null, value?: unknown) => void): void {
  const ct = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(ct)) {
    req.resume();
    return done(new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json'));
  }
  if (Number(req.headers['content-length']) > limit) {
    req.resume();
    return done(new HttpError(413, 'too_large', `body is larger than ${limit} bytes`));
  }
  let first: Buffer | null = null;
  let more: Buffer[] | null = null;
  let size = 0;
  let settled = false;
  req.on('data', (c: Buffer) => {
    if (settled) return;
    size += c.length;
    if (size > limit) {
      settled = true;
      return done(new HttpError(413, 'too_large', `body is larger than ${limit} bytes`));
    }
    if (first === null) first = c;
    else (more ??= [first]).push(c);
  });
  req.on('end', () => {
    if (settled) return;
    settled = true;
    const text = more ? Buffer.concat(more).toString('utf8') : first ? first.toString('utf8') : '';
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return done(new HttpError(400, 'bad_request', `body is not valid JSON: ${(e as Error).message}`));
    }
    done(null, value);
  });
  req.on('error', (e) => {
    if (settled) return;
    settled = true;
    done(new HttpError(400, 'bad_request', 'request body could not be read', { cause: e }));
  });
}

/**
 * The request's Idempotency-Key, or undefined when it has none (or an empty
 * one); 400 when it is longer than 200 characters. Callers scope it to their stream.
 */
export function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || !key) return undefined;
  if (key.length > 200) throw new HttpError(400, 'bad_request', 'Idempotency-Key is longer than 200 characters');
  return key;
}

/** `readJsonBody` as a promise. */
export function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  return new Promise((resolve, reject) => readJsonBody(req, limit, (err, value) => (err ? reject(err) : resolve(value))));
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** A browser loading a page (its Accept names text/html first), not a script asking for data. */
function isNavigation(req: IncomingMessage): boolean {
  const a = req.headers.accept;
  return typeof a === 'string' && /^\s*text\/html\s*(,|;|$)/i.test(a);
}

/** `params` holds the values of a route's `:name` segments (empty for exact routes). */
export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>) => void | Promise<void>;

/**
 * Routes by method; 404 and 405 with the error shape. A path is exact
 * (`/events`, a map lookup: the hot path stays one lookup) or has `:name`
 * segments (`/approvals/:id/decision`), tried in order after the exact routes.
 * A `:name` segment matches one non-empty segment, percent-decoded.
 */
export class Router {
  private routes = new Map<string, Map<string, Handler>>();
  private patterns: { parts: string[]; methods: Map<string, Handler> }[] = [];
  private fallback: Handler | null = null;
  /** GET handlers whose path is also a page of the web app (see `page`). */
  private pages = new Set<Handler>();

  /**
   * `page`: this GET route's path is also the URL of a view of the web app
   * (`GET /fleet/:thread` is the board's JSON and the board's page). A browser
   * navigation (its Accept names text/html first; fetch, EventSource and
   * scripts never do) gets the app (the fallback); everything else gets the
   * route. Both answers say `Vary: Accept`.
   */
  on(method: string, path: string, handler: Handler, opts: { page?: boolean } = {}): this {
    if (opts.page) this.pages.add(handler);
    if (path.includes('/:')) {
      const parts = path.split('/');
      let p = this.patterns.find((x) => x.parts.join('/') === path);
      if (!p) this.patterns.push((p = { parts, methods: new Map() }));
      p.methods.set(method, handler);
      return this;
    }
    let m = this.routes.get(path);
    if (!m) this.routes.set(path, (m = new Map()));
    m.set(method, handler);
    return this;
  }

  /** The methods and `:name` values of the first pattern matching `path`, or null. */
  private matchPattern(path: string): { methods: Map<string, Handler>; params: Record<string, string> } | null {
    const segs = path.split('/');
    outer: for (const p of this.patterns) {
      if (p.parts.length !== segs.length) continue;
      // Null prototype: a `:name` is never looked up on Object.prototype.
      const params: Record<string, string> = Object.create(null);
      for (let i = 0; i < segs.length; i++) {
        const want = p.parts[i];
        if (want.startsWith(':')) {
          if (!segs[i]) continue outer;
          // The whole path decoded already (handle), so each segment does.
          params[want.slice(1)] = decodeURIComponent(segs[i]);
        } else if (want !== segs[i]) continue outer;
      }
      return { methods: p.methods, params };
    }
    return null;
  }

  /** Called for GET requests that match no route (static files). */
  otherwise(handler: Handler): this {
    this.fallback = handler;
    return this;
  }

  handle = (req: IncomingMessage, res: ServerResponse): void => {
    const raw = req.url ?? '/';
    let url: URL;
    try {
      // A path is parsed as one string (about twice as fast as a path against
      // a base, and `//host` stays a path); anything else against the base.
      url = raw.startsWith('/') ? new URL('http://localhost' + raw) : new URL(raw, 'http://localhost');
    } catch {
      sendError(res, new HttpError(400, 'bad_request', 'the request target is not a valid URL'));
      req.resume();
      return;
    }
    // A path must decode (a `:name` segment is percent-decoded, and so is a
    // file's path): a malformed escape is the caller's mistake, a 400 on
    // every path, never a silent mismatch. Checked only when there is a `%`.
    if (url.pathname.includes('%') && !decodes(url.pathname)) {
      sendError(res, new HttpError(400, 'bad_request', 'the path is not valid percent-encoding (a "%" must start an escape like %2F of UTF-8 bytes)'));
      req.resume();
      return;
    }
    let m = this.routes.get(url.pathname);
    let params: Record<string, string> = {};
    if (!m && this.patterns.length) {
      const hit = this.matchPattern(url.pathname);
      if (hit) ({ methods: m, params } = hit);
    }
    let h: Handler | undefined;
    if (m) {
      h = m.get(req.method ?? 'GET') ?? (req.method === 'HEAD' ? m.get('GET') : undefined);
      if (h && this.pages.has(h) && this.fallback) {
        res.setHeader('vary', 'Accept');
        if (isNavigation(req)) h = this.fallback;
      }
      if (!h) {
        res.setHeader('allow', [...m.keys()].join(', '));
        sendError(res, new HttpError(405, 'method_not_allowed', `${req.method} is not allowed on ${url.pathname}`));
        req.resume();
        return;
      }
    } else if (this.fallback && (req.method === 'GET' || req.method === 'HEAD')) {
      h = this.fallback;
    } else {
      sendError(res, new HttpError(404, 'not_found', `no such endpoint: ${req.method} ${url.pathname}`));
      req.resume();
      return;
    }
    try {
      const r = h(req, res, url, params);
      if (r) r.catch((e) => sendError(res, e));
    } catch (e) {
      sendError(res, e);
    }
  };
}
