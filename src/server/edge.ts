// The server's edge: what every request passes before any route sees it, and
// what every response says about how it may be used (docs/security.md).
//
// Why: local mode has no credentials at all (the person at the machine is
// the owner), so "only this machine can reach it" must hold against a web
// page in that person's browser too:
// - DNS rebinding: a page at evil.example whose name later resolves to
//   127.0.0.1 talks to us as a same-origin page of evil.example; its requests
//   carry `Host: evil.example:PORT`. We answer only the Host values we listen
//   on, so a rebound page reads and writes nothing (421);
// - cross-site writes: a page may post a form (or a "simple" fetch) to any
//   address. Browsers send `Origin` with them; a POST/PUT/DELETE whose Origin
//   is not this server's own (or a configured one) is refused here (403). A
//   write with no Origin at all must not be one a form could make: a route
//   with a JSON body refuses any other content type (415), and a route
//   without one wants `Content-Type: application/json` or a `Roost-*` or
//   `Authorization` header (route.ts `notAForm`; a cross-site page can send
//   none of these without a CORS preflight, which we never grant);
// - framing: no page of ours may be framed (`frame-ancestors 'none'`,
//   `X-Frame-Options: DENY`), so a click on a framed inbox cannot decide an
//   approval; the content security policy lets the built app load only its
//   own scripts, styles and connections; `nosniff`; `Referrer-Policy:
//   same-origin` (DOCUMENT_HEADERS, on everything a browser renders; API
//   answers carry `nosniff`).
//
// Invariants: the checks are synchronous and allocate nothing on the common
// path (the ingest path pays for every microsecond); the Host check runs
// before the router, so a refused request reaches no handler, no file and no
// stream.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { HttpError, sendError } from './http.js';

/**
 * The policy for everything we serve (the sign-in pages set their own, stricter on scripts' origin, for their inline code).
 * `worker-src 'self'` lets the app register its service worker (/sw.js, push notifications) and nothing else's;
 * `manifest-src 'self'` its web app manifest.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; " +
  "worker-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The headers of what a browser may render or run (the app's pages, its
 * scripts and styles, every file the server serves): not framable, not
 * sniffed, its own scripts only, no referrer beyond this origin. API answers
 * (JSON, event streams) carry `nosniff` only (`http.ts`, `live/serve.ts`): a browser
 * renders neither, so framing and script rules mean nothing there, and the
 * ingest path pays for every header it writes (setting these four on every
 * response cost about 8% of single-event ingest, docs/architecture.md).
 */
export const DOCUMENT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
});

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function isUnspecified(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || h === '::' || h === '';
}

/** `host:port` as a Host header spells it (IPv6 in brackets; the port left out when it is the scheme's default). */
function hostHeader(host: string, port: number): string[] {
  const h = isIP(host) === 6 ? `[${host}]` : host;
  return port === 80 ? [`${h}:80`, h] : [`${h}:${port}`];
}

export interface EdgeOptions {
  /** The address the server listens on, as configured (`127.0.0.1`, `0.0.0.0`, a name). */
  listenHost: string;
  /** Origins besides the server's own that may write (a public origin behind a proxy). */
  origins: string[];
}

/**
 * The Host and Origin rules of one server. `listening(port)` fixes the port
 * once the server is bound; until then every request is refused.
 */
export class Edge {
  /** The Host values answered, lowercased; null: any (shared mode on every interface with no configured origin). */
  private hosts: Set<string> | null = new Set();
  private origins: Set<string>;

  constructor(private opts: EdgeOptions) {
    this.origins = new Set(opts.origins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  }

  /**
   * The allowed Hosts:
   * - listening on loopback: 127.0.0.1, localhost and [::1] with the port;
   * - listening on a named address: that address with the port;
   * - listening on every interface (0.0.0.0, ::): the loopback names, plus
   *   the hosts of the configured origins; with no configured origin any Host
   *   is answered (the server is in shared mode there, where every request is
   *   authenticated and a rebound page has no credentials; configure
   *   `--origin` to pin the Host);
   * - and always the hosts of the configured origins (a proxy that keeps the
   *   public Host).
   */
  listening(port: number): void {
    const hosts = new Set<string>();
    const lh = this.opts.listenHost.toLowerCase();
    if (isLoopbackHost(lh) || isUnspecified(lh)) for (const n of LOOPBACK_NAMES) for (const h of hostHeader(n.replace(/^\[|\]$/g, ''), port)) hosts.add(h);
    if (!isUnspecified(lh)) for (const h of hostHeader(lh, port)) hosts.add(h);
    for (const o of this.origins) {
      try {
        hosts.add(new URL(o).host.toLowerCase());
      } catch {}
    }
    this.hosts = isUnspecified(lh) && this.origins.size === 0 ? null : hosts;
  }

  /** The Host values answered (for messages and docs), or null for any. */
  get allowedHosts(): string[] | null {
    return this.hosts ? [...this.hosts] : null;
  }

  /**
   * Checks the request's Host and Origin. Returns true when the request may
   * go on; otherwise the refusal has been sent. (The response headers are the
   * responders': DOCUMENT_HEADERS for what a browser renders, `nosniff` on
   * every API answer.)
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    const refusal = this.check(req);
    if (refusal === null) return true;
    sendError(res, refusal);
    req.resume();
    return false;
  }

  private check(req: IncomingMessage): HttpError | null {
    const host = req.headers.host;
    if (this.hosts !== null && (typeof host !== 'string' || !this.hosts.has(host.toLowerCase()))) {
      return new HttpError(
        421,
        'misdirected',
        `this server answers only to ${[...this.hosts].join(', ')}, not to Host ${JSON.stringify(String(host ?? '').slice(0, 100))} (a page that reached it under another name is refused)`,
      );
    }
    const m = req.method;
    if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return null;
    const origin = req.headers.origin;
    if (origin === undefined || this.ownOrigin(req, origin)) return null;
    return new HttpError(403, 'forbidden', `a write must come from this server's own pages or a configured origin; Origin ${String(origin).slice(0, 100)} is not allowed`);
  }

  private ownOrigin(req: IncomingMessage, origin: string): boolean {
    const o = origin.toLowerCase();
    if (this.origins.has(o)) return true;
    const host = req.headers.host;
    if (typeof host !== 'string') return false;
    const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    return o === `${scheme}://${host.toLowerCase()}`;
  }
}
