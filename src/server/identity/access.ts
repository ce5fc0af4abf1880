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
//   budget are checked, so no app can forget them;
// - every change of access (a role, a removal, a revoked token, a sign-out)
//   is told to the listeners; the live mechanism (src/server/live/) closes
//   what a change takes away, on every stream of every app, and counts the
//   open streams per caller.

import type { IncomingMessage } from 'node:http';
import { lowerRole, memberRole, type IdentityChange, type Role } from '../../core/identity.js';
import { LOCAL_OWNER, decide, localGrant, rememberGrant, type Access, type AccessChange, type Grant, type Principal } from '../access.js';
import { HttpError } from '../http.js';
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
  /** The id of the known browser a request comes from (a device cookie, devices.ts): an anonymous caller's budget is then its own, not its address's. */
  device?: (req: IncomingMessage) => string | null;
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

/**
 * The caller key for limits: one per person (all of their sign-ins and tokens
 * together: a person who mints more tokens gets no more budget), one per
 * address for the anonymous.
 */
function callerKey(p: Principal | null, req: IncomingMessage): string {
  if (!p) return 'ip:' + (req.socket.remoteAddress ?? '?');
  return 'user:' + p.uid;
}

/**
 * The `Access` of a server that may have accounts. Without accounts (and not
 * forced) it answers exactly like `LocalAccess`.
 */
export class SharedAccess implements Access {
  /** Each request's principal, once found, rides on the request under this instance's symbol (no WeakMap: see access.ts). */
  private seen = Symbol('roost.principal');
  private limiter: RateLimiter;
  private listeners = new Set<(c: AccessChange) => void>();

  constructor(
    readonly identity: IdentityService,
    private opts: SharedOptions,
  ) {
    this.limiter = new RateLimiter(opts.requestsPerMinute);
    identity.onChange((c) => this.changed(c));
  }

  stop(): void {}

  get mode(): 'local' | 'shared' {
    return this.opts.forced || this.identity.state.users.size > 0 ? 'shared' : 'local';
  }

  /** Spends one request of the caller's budget; 429 when it is empty. */
  spend(key: string): void {
    if (!this.limiter.take(key)) {
      throw new HttpError(429, 'too_many', `too many requests: at most ${this.opts.requestsPerMinute} a minute per person (all of your sign-ins and tokens); slow down and retry`);
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
    const device = p ? null : (this.opts.device?.(req) ?? null);
    this.spend(device ? 'device:' + device : callerKey(p, req));
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
    if (this.lost(p) !== null) return null;
    const r = memberRole(this.identity.state, project, p.uid);
    if (!r) return null;
    if (p.scope) return p.scope.project === project ? lowerRole(r, p.scope.role) : null;
    return r;
  }

  /**
   * Why a principal found earlier no longer stands, as `principal` would
   * decide for a fresh request: its token revoked, its sign-in ended or
   * expired, its account gone. A stream holds its principal for hours.
   */
  lost(p: Principal): string | null {
    if (p.kind === 'local') return null;
    const s = this.identity.state;
    if (!s.users.has(p.uid)) return 'your account is gone';
    if (p.token !== undefined) {
      const t = s.tokens.get(p.token);
      return !t || t.revoked ? 'the token was revoked' : null;
    }
    if (p.session !== undefined) {
      const l = s.logins.get(p.session);
      if (!l) return 'signed out';
      if (l.expires <= Date.now()) return 'your sign-in has expired; sign in again';
    }
    return null;
  }

  require(req: IncomingMessage, project: string, min: Role): Grant {
    if (this.mode === 'local') return rememberGrant(req, localGrant(project));
    const p = this.principal(req);
    return rememberGrant(req, decide(p, p ? this.roleIn(p, project) : null, project, min));
  }

  isAdmin(p: Principal): boolean {
    return p.kind === 'local' || (p.kind === 'person' && !!this.identity.state.users.get(p.uid)?.admin);
  }

  members(project: string): { uid: string; name: string; role: Role }[] | null {
    // Local mode: the person at the machine owns everything; nobody is listed.
    if (this.mode === 'local') return null;
    const s = this.identity.state;
    return [...(s.members.get(project) ?? [])].map(([uid, role]) => ({ uid, name: s.users.get(uid)?.name ?? uid, role }));
  }

  onChange(listener: (c: AccessChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The identity fold's changes, told to the listeners (the live mechanism closes what they take away). */
  private changed(c: IdentityChange): void {
    let a: AccessChange;
    if (c.kind === 'member') {
      const by = c.by ? this.identity.state.users.get(c.by) : undefined;
      a = by ? { kind: 'member', project: c.project, uid: c.uid, by: { uid: by.uid, name: by.name } } : { kind: 'member', project: c.project, uid: c.uid };
    }
    else if (c.kind === 'token') a = { kind: 'token', token: c.id };
    else if (c.kind === 'login') a = { kind: 'login', session: c.sessionHash };
    else return;
    for (const l of this.listeners) l(a);
  }
}
