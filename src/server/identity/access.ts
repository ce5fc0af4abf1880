// Shared mode's `Access`: who the caller is (a sign-in cookie or a bearer
// token), their role in a project, the per-caller request budget, and the
// closing of streams when access is lost.
//
// Why it is shaped like this:
// - the mode is read from the folded identity state: with no accounts (and no
//   `--shared`) the server is in local mode and the person at the machine is
//   the owner of everything, exactly as before accounts existed;
// - one place decides who the caller is (`principal`), and it is also where
//   the Origin of a cookie-authenticated write and the per-caller request
//   budget are checked, so no app can forget them.

import type { IncomingMessage } from 'node:http';
import { lowerRole, memberRole, type IdentityChange, type Role } from '../../core/identity.js';
import { LOCAL_OWNER, decide, localGrant, rememberGrant, type Access, type Grant, type Principal } from '../access.js';
import { HttpError } from '../http.js';
import { StreamHub, claimStream, type StreamOwner } from '../live.js';
import { sha256 } from './secrets.js';
import type { IdentityService } from './service.js';

/** A token bucket per caller: `perMinute` requests, refilled continuously; in memory, per node. */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private perMinute: number) {}

  take(key: string, now = Date.now()): boolean {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size > 50_000) this.prune(now);
      this.buckets.set(key, (b = { tokens: this.perMinute, at: now }));
    }
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.at > 60_000) this.buckets.delete(k);
  }
}

export interface SharedOptions {
  /** Shared mode even before any account exists (`roost serve --shared`). */
  forced: boolean;
  /** Origins besides the server's own that may write with a cookie (e.g. behind a TLS proxy). */
  origins: string[];
  requestsPerMinute: number;
  streamsPerCaller: number;
}

export const SESSION_COOKIE = 'roost_session';
export const SESSION_DAYS = 30;

function cookieValue(req: IncomingMessage, name: string): string | null {
  const raw = req.headers.cookie;
  if (!raw) return null;
  for (const part of raw.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || null;
  }
  return null;
}

function bearer(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : null;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The caller key for limits: one per person, one per token, one per address for the anonymous. */
function callerKey(p: Principal | null, req: IncomingMessage): string {
  if (!p) return 'ip:' + (req.socket.remoteAddress ?? '?');
  return p.token ? 'token:' + p.token : 'user:' + p.uid;
}

/**
 * The `Access` of a server that may have accounts. Without accounts (and not
 * forced) it answers exactly like `LocalAccess`.
 */
export class SharedAccess implements Access {
  readonly hub: StreamHub;
  /** Each request's principal, once found, rides on the request under this instance's symbol (no WeakMap: see access.ts). */
  private seen = Symbol('roost.principal');
  private limiter: RateLimiter;
  private listeners = new Set<(project: string, uid: string) => void>();
  private expiry: NodeJS.Timeout;

  constructor(
    readonly identity: IdentityService,
    private opts: SharedOptions,
  ) {
    this.hub = new StreamHub(opts.streamsPerCaller);
    this.limiter = new RateLimiter(opts.requestsPerMinute);
    identity.onChange((c) => this.changed(c));
    // A sign-in that expires ends its streams too (requests are refused at once; streams within a minute).
    this.expiry = setInterval(() => {
      const now = Date.now();
      this.hub.closeWhere((o) => !!o.session && (this.identity.state.logins.get(o.session)?.expires ?? 0) <= now, 'your sign-in has expired; sign in again');
    }, 60_000);
    this.expiry.unref();
  }

  stop(): void {
    clearInterval(this.expiry);
  }

  get mode(): 'local' | 'shared' {
    return this.opts.forced || this.identity.state.users.size > 0 ? 'shared' : 'local';
  }

  /** Spends one request of the caller's budget; 429 when it is empty. */
  spend(key: string): void {
    if (!this.limiter.take(key)) {
      throw new HttpError(429, 'too_many', `too many requests: at most ${this.opts.requestsPerMinute} a minute per caller; slow down and retry`);
    }
  }

  principal(req: IncomingMessage): Principal | null {
    if (this.mode === 'local') return LOCAL_OWNER;
    const cached = (req as unknown as Record<symbol, Principal | null | undefined>)[this.seen];
    if (cached !== undefined) return cached;
    const s = this.identity.state;
    let p: Principal | null = null;
    let viaCookie = false;
    const tok = bearer(req);
    if (tok) {
      const id = s.tokenByHash.get(sha256(tok));
      const t = id ? s.tokens.get(id) : undefined;
      const u = t && !t.revoked ? s.users.get(t.uid) : undefined;
      if (t && u) p = { kind: 'token', uid: u.uid, name: u.name, scope: { project: t.project, role: t.role }, token: t.id };
    } else {
      const sid = cookieValue(req, SESSION_COOKIE);
      if (sid) {
        const hash = sha256(sid);
        const l = s.logins.get(hash);
        const u = l && l.expires > Date.now() ? s.users.get(l.uid) : undefined;
        if (l && u) {
          p = { kind: 'person', uid: u.uid, name: u.name, session: hash };
          viaCookie = true;
        }
      }
    }
    (req as unknown as Record<symbol, Principal | null>)[this.seen] = p;
    this.spend(callerKey(p, req));
    // A cookie rides along on any request the browser makes, including one a
    // foreign page triggers: a write with a cookie must come from our own pages.
    if (viaCookie && !SAFE.has(req.method ?? 'GET')) this.checkOrigin(req);
    return p;
  }

  /** 403 unless the request's Origin is this server's own or a configured one. */
  checkOrigin(req: IncomingMessage): void {
    const origin = req.headers.origin;
    const own = `${(req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'}://${req.headers.host ?? ''}`;
    if (typeof origin === 'string' && (origin === own || this.opts.origins.includes(origin))) return;
    throw new HttpError(
      403,
      'forbidden',
      typeof origin === 'string'
        ? `a write signed in with a cookie must come from this server's pages; Origin ${origin.slice(0, 100)} is not allowed`
        : 'a write signed in with a cookie must carry an Origin header (browsers send it); scripts use a token instead',
    );
  }

  roleIn(p: Principal, project: string): Role | null {
    if (p.kind === 'local') return 'owner';
    if (!this.identity.state.users.has(p.uid)) return null;
    const r = memberRole(this.identity.state, project, p.uid);
    if (!r) return null;
    if (p.scope) return p.scope.project === project ? lowerRole(r, p.scope.role) : null;
    return r;
  }

  require(req: IncomingMessage, project: string, min: Role): Grant {
    if (this.mode === 'local') return rememberGrant(req, localGrant(project));
    const p = this.principal(req);
    const g = rememberGrant(req, decide(p, p ? this.roleIn(p, project) : null, project, min));
    if (g.kind !== 'local') {
      claimStream(req, this.hub, { caller: callerKey(g, req), uid: g.uid, project, token: g.token, session: g.session });
    }
    return g;
  }

  isAdmin(p: Principal): boolean {
    return p.kind === 'local' || (p.kind === 'person' && !!this.identity.state.users.get(p.uid)?.admin);
  }

  onChange(listener: (project: string, uid: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The role a stream's holder has now, as `roleIn` would answer a fresh request. */
  private roleNow(o: StreamOwner): Role | null {
    const s = this.identity.state;
    if (o.token) {
      const t = s.tokens.get(o.token);
      if (!t || t.revoked) return null;
      return this.roleIn({ kind: 'token', uid: o.uid, name: '', scope: { project: t.project, role: t.role } }, o.project);
    }
    if (o.session && !s.logins.has(o.session)) return null;
    return this.roleIn({ kind: 'person', uid: o.uid, name: '' }, o.project);
  }

  private changed(c: IdentityChange): void {
    if (c.kind === 'member') {
      for (const l of this.listeners) l(c.project, c.uid);
      this.hub.closeWhere(
        (o) => o.uid === c.uid && o.project === c.project && this.roleNow(o) === null,
        `you are no longer a member of project "${c.project}"`,
      );
    } else if (c.kind === 'token') {
      this.hub.closeWhere((o) => o.token === c.id && this.roleNow(o) === null, 'the token was revoked');
    } else if (c.kind === 'login') {
      this.hub.closeWhere((o) => o.session === c.sessionHash, 'signed out');
    }
  }
}
