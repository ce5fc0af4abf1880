// Shared mode: accounts, sign-ins, tokens, projects and memberships, and the
// `Access` implementation every app asks (`SharedAccess`).
//
// Why it is shaped like this:
// - identity is durable state, so it is events in the log's `identity` stream,
//   folded by the pure `src/core/identity.ts` on every node. A change made on
//   one node reaches the others through the store's commit wake-up, and the
//   fold's change list closes the streams it concerns there too;
// - secrets (passwords, tokens, session ids, invite codes) never reach the
//   log: passwords are stored as scrypt strings (salt and parameters inside),
//   the rest as sha256 of 32 random bytes. A secret is shown once, in the
//   answer of the request that made it;
// - the mode is read from the folded state: with no accounts (and no
//   `--shared`) the server is in local mode and the person at the machine is
//   the owner of everything, exactly as before accounts existed;
// - one place decides who the caller is (`principal`), and it is also where
//   the Origin of a cookie-authenticated write and the per-caller request
//   budget are checked, so no app can forget them.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import {
  IDENTITY_LIMITS,
  IDENTITY_STREAM,
  LOGIN_PATTERN,
  PROJECT_ID_PATTERN,
  applyIdentity,
  emptyIdentity,
  isRole,
  lowerRole,
  memberRole,
  owners,
  roleAtLeast,
  type IdentityChange,
  type IdentityState,
  type Role,
} from '../core/identity.js';
import type { EventStore, LogEntry } from '../storage/types.js';
import { DEFAULT_PROJECT, LOCAL_OWNER, decide, localGrant, rememberGrant, type Access, type Grant, type Principal } from './access.js';
import { HttpError, idempotencyKeyOf, readJson, sendJson } from './http.js';
import { StreamHub, claimStream, type StreamOwner } from './live.js';
import { StreamFollower } from './follower.js';

// ------------------------------------------------------------------ secrets

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((ok, fail) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? fail(err) : ok(key))));
}

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64url');
  const want = Buffer.from(parts[5], 'base64url');
  if (!(N >= 2 && N <= 1 << 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16) || want.length < 16) return false;
  const got = await scrypt(password, salt, want.length, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return timingSafeEqual(got, want);
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newId(prefix: string): string {
  return prefix + randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
}

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 200;

export function checkPassword(pw: unknown): string | null {
  if (typeof pw !== 'string') return '"password" must be a string';
  if (pw.length < PASSWORD_MIN) return `a password has at least ${PASSWORD_MIN} characters`;
  if (pw.length > PASSWORD_MAX) return `a password has at most ${PASSWORD_MAX} characters`;
  return null;
}

// ------------------------------------------------------------------ limits

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

// ------------------------------------------------------------------ the fold on the server

/** A stored identity event as the handlers see it. */
type Stored = Record<string, unknown> & { type: string; ts: number };

export class IdentityService {
  state: IdentityState = emptyIdentity();
  private changeListeners = new Set<(c: IdentityChange) => void>();
  private follower: StreamFollower;

  constructor(private store: EventStore) {
    this.follower = new StreamFollower(store, IDENTITY_STREAM, { apply: (e) => this.applyEntry(e) });
  }

  get position(): number {
    return this.follower.position;
  }

  async start(): Promise<void> {
    this.follower.listen();
    await this.follower.catchUp();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  onChange(l: (c: IdentityChange) => void): () => void {
    this.changeListeners.add(l);
    return () => this.changeListeners.delete(l);
  }

  /** Folds one entry (the follower calls it in position order) and tells the change listeners. */
  private applyEntry(entry: LogEntry): void {
    let event: unknown = null;
    try {
      event = JSON.parse(entry.body);
    } catch {}
    const changes = applyIdentity(this.state, event);
    for (const c of changes) for (const l of this.changeListeners) l(c);
  }

  private folded(position: number): Promise<void> {
    return this.follower.folded(position);
  }

  /**
   * Appends events (stamped with the server's time) and waits until this node
   * has folded them. With a key already used, nothing is stored and the events
   * of the first request are returned, so the caller answers what it answered then.
   */
  async append(events: Record<string, unknown>[], idempotencyKey?: string): Promise<{ events: Stored[]; duplicate: boolean }> {
    const ts = Date.now();
    const bodies = events.map((e) => ({ ...e, ts }) as Stored);
    const r = await this.store.append(
      IDENTITY_STREAM,
      bodies.map((b) => ({ type: b.type, body: JSON.stringify(b) })),
      { idempotencyKey },
    );
    await this.folded(r.last);
    if (!r.duplicate) return { events: bodies, duplicate: false };
    const entries = await this.store.read(IDENTITY_STREAM, r.first - 1, r.last - r.first + 1);
    return { events: entries.map((e) => JSON.parse(e.body) as Stored), duplicate: true };
  }
}

// ------------------------------------------------------------------ access

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

// ------------------------------------------------------------------ endpoints

const MAX_BODY = 16 * 1024;
const INVITE_DAYS = 7;

function idempotencyKey(req: IncomingMessage, scope: string): string | undefined {
  const k = idempotencyKeyOf(req);
  return k && `${IDENTITY_STREAM}:${scope}:${k}`;
}

async function objectBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const b = await readJson(req, MAX_BODY);
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new HttpError(400, 'bad_request', 'the body must be a JSON object');
  return b as Record<string, unknown>;
}

function optString(b: Record<string, unknown>, k: string, max: number): string | undefined {
  const v = b[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new HttpError(400, 'bad_request', `"${k}" must be a string`);
  const t = v.replace(/\s+/g, ' ').trim();
  if (t.length > max) throw new HttpError(400, 'bad_request', `"${k}" has at most ${max} characters`);
  return t || undefined;
}

function checkLogin(v: unknown): string {
  if (typeof v !== 'string' || !LOGIN_PATTERN.test(v)) {
    throw new HttpError(400, 'bad_request', '"login" is 1 to 64 lowercase letters, digits, ".", "-" or "_", starting with a letter or digit');
  }
  return v;
}

function roleParam(v: unknown, dflt?: Role): Role {
  if (v === undefined && dflt) return dflt;
  if (!isRole(v)) throw new HttpError(400, 'bad_request', '"role" must be "owner", "editor" or "viewer"');
  return v;
}

const localOnly = (what: string) =>
  new HttpError(409, 'conflict', `${what} needs shared mode; this server runs in local mode (loopback, no accounts). Create the first owner with \`roost admin create-owner --login NAME\` and restart`);

/**
 * Secrets shown once: kept briefly so a retry with the same key (a lost
 * answer) sees them again. Only the same request gets them: the entry is
 * bound to a fingerprint of the request's body (which holds the password,
 * where there is one), so knowing a key is not enough to read a secret.
 */
class SecretCache {
  private m = new Map<string, { at: number; fp: string; body: unknown; cookie?: string }>();
  get(key: string | undefined, fp: string): { body: unknown; cookie?: string } | undefined {
    if (!key) return undefined;
    const e = this.m.get(key);
    if (!e || e.fp !== fp || Date.now() - e.at > 10 * 60_000) return undefined;
    return e;
  }
  put(key: string | undefined, fp: string, body: unknown, cookie?: string): void {
    if (!key) return;
    if (this.m.size > 10_000) for (const [k, v] of this.m) if (Date.now() - v.at > 10 * 60_000) this.m.delete(k);
    this.m.set(key, { at: Date.now(), fp, body, cookie });
  }
}

const fingerprint = (b: unknown): string => sha256(JSON.stringify(b));

export class IdentityRoutes {
  private secrets = new SecretCache();

  constructor(
    private id: IdentityService,
    private access: SharedAccess,
  ) {}

  private get s(): IdentityState {
    return this.id.state;
  }

  private userView(uid: string) {
    const u = this.s.users.get(uid);
    return u ? { uid: u.uid, login: u.login, name: u.name, admin: u.admin } : { uid, login: null, name: uid, admin: false };
  }

  private projectsOf(p: Principal): { id: string; name: string; role: Role }[] {
    const out: { id: string; name: string; role: Role }[] = [];
    if (p.kind === 'local') {
      out.push({ id: DEFAULT_PROJECT, name: DEFAULT_PROJECT, role: 'owner' });
      for (const pr of this.s.projects.values()) if (pr.id !== DEFAULT_PROJECT) out.push({ id: pr.id, name: pr.name, role: 'owner' });
      return out;
    }
    for (const pr of this.s.projects.values()) {
      const r = this.access.roleIn(p, pr.id);
      if (r) out.push({ id: pr.id, name: pr.name, role: r });
    }
    return out;
  }

  /** A signed-in person (not a token): tokens cannot manage accounts or mint tokens. */
  private async person(req: IncomingMessage): Promise<Principal> {
    const p = await this.access.principal(req);
    if (!p) throw new HttpError(401, 'unauthorized', 'sign in first (POST /auth/login)');
    if (p.kind === 'token') throw new HttpError(403, 'forbidden', 'a token cannot do this; sign in as a person');
    return p;
  }

  private async admin(req: IncomingMessage): Promise<Principal> {
    const p = await this.person(req);
    if (p.kind !== 'local' && !this.s.users.get(p.uid)?.admin) throw new HttpError(403, 'forbidden', 'only a server administrator (the first owner, or one they made) may do this');
    return p;
  }

  /** Validation failed: without a key, refuse; with one, it may be a retry of a request that succeeded. */
  private async commit(events: Record<string, unknown>[], key: string | undefined, conflict: HttpError | null) {
    if (conflict && !key) throw conflict;
    const r = await this.id.append(events, key);
    // A new request whose events folded to nothing (the conflict stands): refuse it.
    if (conflict && !r.duplicate) throw conflict;
    return r;
  }

  private sessionCookie(req: IncomingMessage, secret: string | null): string {
    const secure = (req.socket as { encrypted?: boolean }).encrypted ? '; Secure' : '';
    if (secret === null) return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure}`;
    return `${SESSION_COOKIE}=${secret}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${SESSION_DAYS * 86400}${secure}`;
  }

  private send(res: ServerResponse, status: number, body: unknown, cookie?: string): void {
    if (cookie) res.setHeader('set-cookie', cookie);
    sendJson(res, status, body);
  }

  /** A new sign-in for `uid`: the login event and the cookie carrying its secret. */
  private openLogin(req: IncomingMessage, uid: string): { event: Record<string, unknown>; cookie: string } {
    const secret = newSecret();
    return {
      event: { type: 'login.opened', sessionHash: sha256(secret), uid, expires: Date.now() + SESSION_DAYS * 86_400_000 },
      cookie: this.sessionCookie(req, secret),
    };
  }

  // POST /auth/login {login, password}
  login = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('signing in');
    // Guessing passwords costs the caller's budget (per address).
    await this.access.principal(req);
    // A foreign page must not sign a browser in (to an account of its choosing).
    if (req.headers.origin !== undefined) this.access.checkOrigin(req);
    const b = await objectBody(req);
    const login = typeof b.login === 'string' ? b.login.trim().toLowerCase() : '';
    const key = idempotencyKey(req, `login:${login}`);
    const uid = this.s.byLogin.get(login);
    const u = uid ? this.s.users.get(uid) : undefined;
    const ok = u && typeof b.password === 'string' ? await verifyPassword(b.password, u.passwordHash) : false;
    if (!u || !ok) throw new HttpError(401, 'unauthorized', 'wrong login or password');
    const fp = fingerprint(b);
    const again = this.secrets.get(key, fp);
    if (again) return this.send(res, 200, again.body, again.cookie);
    let { event, cookie } = this.openLogin(req, u.uid);
    const r = await this.id.append([event], key);
    if (r.duplicate) {
      // The first answer's secret is gone (another node, or long ago): its
      // session cannot be handed out again, so this retry gets a new one.
      ({ event, cookie } = this.openLogin(req, u.uid));
      await this.id.append([event]);
    }
    const body = { ok: true, user: this.userView(u.uid), projects: this.projectsOf({ kind: 'person', uid: u.uid, name: u.name }) };
    this.secrets.put(key, fp, body, cookie);
    this.send(res, 200, body, cookie);
  };

  // POST /auth/logout
  logout = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.resume();
    const p = await this.access.principal(req);
    if (p?.session) await this.id.append([{ type: 'login.closed', sessionHash: p.session }]);
    this.send(res, 200, { ok: true }, this.sessionCookie(req, null));
  };

  // POST /auth/password {current, password}: a person changes their own; their other sign-ins end.
  changePassword = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('passwords');
    const p = await this.person(req);
    const b = await objectBody(req);
    const why = checkPassword(b.password);
    if (why) throw new HttpError(400, 'bad_request', why);
    const key = idempotencyKey(req, `password:${p.uid}`);
    const u = this.s.users.get(p.uid)!;
    const ok = typeof b.current === 'string' && (await verifyPassword(b.current, u.passwordHash));
    const events: Record<string, unknown>[] = [{ type: 'user.password', uid: p.uid, passwordHash: await hashPassword(b.password as string) }];
    for (const l of this.s.logins.values()) if (l.uid === p.uid && l.sessionHash !== p.session) events.push({ type: 'login.closed', sessionHash: l.sessionHash });
    if (!ok) {
      // A retry of a change that went through no longer knows the old password: the key says so.
      if (!key) throw new HttpError(403, 'forbidden', 'the current password is wrong');
      const r = await this.id.append([{ type: 'request.refused' }], key);
      if (!r.duplicate) throw new HttpError(403, 'forbidden', 'the current password is wrong');
      return sendJson(res, 200, { ok: true, duplicate: true });
    }
    const r = await this.id.append(events, key);
    sendJson(res, 200, { ok: true, signedOut: r.events.filter((e) => e.type === 'login.closed').length, duplicate: r.duplicate });
  };

  // GET /auth/me
  me = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const p = await this.access.principal(req);
    if (!p) throw new HttpError(401, 'unauthorized', 'not signed in (POST /auth/login), and no token sent');
    sendJson(res, 200, {
      mode: this.access.mode,
      kind: p.kind,
      user: p.kind === 'local' ? { uid: p.uid, login: null, name: p.name, admin: true } : this.userView(p.uid),
      scope: p.scope ?? null,
      projects: this.projectsOf(p),
    });
  };

  // POST /users {login, name?, password, admin?, project?, role?}
  createUser = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('creating accounts');
    const by = await this.admin(req);
    const b = await objectBody(req);
    const login = checkLogin(b.login);
    const why = checkPassword(b.password);
    if (why) throw new HttpError(400, 'bad_request', why);
    const name = optString(b, 'name', IDENTITY_LIMITS.name) ?? login;
    const project = optString(b, 'project', 64);
    const role = project ? roleParam(b.role, 'editor') : undefined;
    if (project && !this.s.projects.has(project)) throw new HttpError(404, 'not_found', `no project "${project}"`);
    if (project && this.access.roleIn(by, project) !== 'owner') throw new HttpError(403, 'forbidden', `adding someone to project "${project}" needs the owner role there`);
    const key = idempotencyKey(req, `users:${by.uid}`);
    const uid = newId('u_');
    const events: Record<string, unknown>[] = [
      { type: 'user.created', uid, login, name, passwordHash: await hashPassword(b.password as string), admin: b.admin === true, by: by.uid },
    ];
    if (project) events.push({ type: 'member.set', project, uid, role, by: by.uid });
    const conflict = this.s.byLogin.has(login) ? new HttpError(409, 'conflict', `the login "${login}" is taken`) : null;
    const r = await this.commit(events, key, conflict);
    const made = r.events[0];
    sendJson(res, 201, { ok: true, user: this.userView(String(made.uid)), duplicate: r.duplicate });
  };

  // POST /auth/invites {project?, role?, days?}
  createInvite = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('inviting people');
    const by = await this.person(req);
    const b = await objectBody(req);
    const project = optString(b, 'project', 64) ?? null;
    const role = roleParam(b.role, 'viewer');
    if (project) {
      if (!this.s.projects.has(project)) throw new HttpError(404, 'not_found', `no project "${project}"`);
      if (this.access.roleIn(by, project) !== 'owner') throw new HttpError(403, 'forbidden', `inviting people to project "${project}" needs the owner role there`);
    } else if (!this.s.users.get(by.uid)?.admin) {
      throw new HttpError(403, 'forbidden', 'an invite without a project needs a server administrator; name a project you own');
    }
    const days = b.days === undefined ? INVITE_DAYS : Number(b.days);
    if (!(days > 0 && days <= 90)) throw new HttpError(400, 'bad_request', '"days" is between 0 and 90');
    const key = idempotencyKey(req, `invites:${by.uid}`);
    const fp = fingerprint(b);
    const again = this.secrets.get(key, fp);
    if (again) return sendJson(res, 201, again.body);
    const code = newSecret();
    const expires = Date.now() + days * 86_400_000;
    const r = await this.id.append([{ type: 'invite.created', codeHash: sha256(code), project, role, by: by.uid, expires }], key);
    const e = r.events[0];
    const body = r.duplicate
      ? { ok: true, duplicate: true, project: e.project, role: e.role, expires: e.expires, message: 'this invite was made by an earlier request with this key; its code was shown then' }
      : { ok: true, code, link: `/invite/${code}`, accept: `/auth/invites/${code}/accept`, project, role, expires };
    if (!r.duplicate) this.secrets.put(key, fp, body);
    sendJson(res, 201, body);
  };

  // POST /auth/invites/:code/accept {login, name?, password}
  acceptInvite = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('accepting invites');
    await this.access.principal(req); // spends the caller's budget: codes are not for guessing
    if (req.headers.origin !== undefined) this.access.checkOrigin(req);
    const b = await objectBody(req);
    const login = checkLogin(b.login);
    const why = checkPassword(b.password);
    if (why) throw new HttpError(400, 'bad_request', why);
    const name = optString(b, 'name', IDENTITY_LIMITS.name) ?? login;
    const codeHash = sha256(params.code ?? '');
    const key = idempotencyKey(req, `accept:${codeHash}`);
    const fp = fingerprint(b);
    const again = this.secrets.get(key, fp);
    if (again) return this.send(res, 201, again.body, again.cookie);
    const inv = this.s.invites.get(codeHash);
    let conflict: HttpError | null = null;
    if (!inv) conflict = new HttpError(404, 'not_found', 'no such invite; ask for a new link');
    else if (inv.usedBy) conflict = new HttpError(409, 'conflict', 'this invite was used already; ask for a new link');
    else if (inv.expires < Date.now()) conflict = new HttpError(409, 'conflict', 'this invite has expired; ask for a new link');
    else if (this.s.byLogin.has(login)) conflict = new HttpError(409, 'conflict', `the login "${login}" is taken`);
    if (conflict && (!key || !inv)) throw conflict;
    const uid = newId('u_');
    const { event: opened, cookie } = this.openLogin(req, uid);
    const events: Record<string, unknown>[] = [
      { type: 'invite.used', codeHash, uid },
      { type: 'user.created', uid, login, name, passwordHash: await hashPassword(b.password as string), admin: false, via: codeHash },
    ];
    if (inv?.project) events.push({ type: 'member.set', project: inv.project, uid, role: inv.role, by: inv.by, via: codeHash });
    events.push(opened);
    const r = await this.commit(events, key, conflict);
    const made = String(r.events[0].uid);
    const body = { ok: true, user: this.userView(made), projects: this.projectsOf({ kind: 'person', uid: made, name }), duplicate: r.duplicate };
    if (!r.duplicate) this.secrets.put(key, fp, body, cookie);
    this.send(res, 201, body, r.duplicate ? undefined : cookie);
  };

  // GET /projects
  listProjects = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const p = await this.access.principal(req);
    if (!p) throw new HttpError(401, 'unauthorized', 'sign in, or send a token (Authorization: Bearer ...)');
    sendJson(res, 200, { projects: this.projectsOf(p) });
  };

  // POST /projects {id?, name}
  createProject = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const by = await this.person(req);
    const b = await objectBody(req);
    const name = optString(b, 'name', IDENTITY_LIMITS.projectName);
    let id = optString(b, 'id', 64);
    if (!id && name) id = name.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
    if (!id || !PROJECT_ID_PATTERN.test(id)) throw new HttpError(400, 'bad_request', 'a project needs an "id" (1 to 64 lowercase letters, digits, "-" or "_") or a "name"');
    const key = idempotencyKey(req, `projects:${by.uid}`);
    const events: Record<string, unknown>[] = [{ type: 'project.created', id, name: name ?? id, by: by.uid }];
    if (by.kind !== 'local') events.push({ type: 'member.set', project: id, uid: by.uid, role: 'owner', by: by.uid });
    const conflict = this.s.projects.has(id) ? new HttpError(409, 'conflict', `project "${id}" exists already`) : null;
    const r = await this.commit(events, key, conflict);
    const e = r.events[0];
    sendJson(res, 201, { ok: true, project: { id: e.id, name: e.name, role: 'owner' }, duplicate: r.duplicate });
  };

  /** The member a `:uid` names: a uid, or a login. */
  private memberUid(raw: string): string {
    if (this.s.users.has(raw)) return raw;
    const byLogin = this.s.byLogin.get(raw);
    if (byLogin) return byLogin;
    throw new HttpError(404, 'not_found', `no account "${raw.slice(0, 64)}"`);
  }

  private memberView(project: string, uid: string) {
    return { ...this.userView(uid), project, role: memberRole(this.s, project, uid) };
  }

  // GET /projects/:id/members
  listMembers = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    const project = params.id;
    await this.access.require(req, project, 'viewer');
    const m = this.s.members.get(project) ?? new Map<string, Role>();
    sendJson(res, 200, { project, members: [...m.keys()].map((uid) => this.memberView(project, uid)) });
  };

  // GET /projects/:id/members/:uid
  getMember = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    await this.access.require(req, params.id, 'viewer');
    const uid = this.memberUid(params.uid);
    if (!memberRole(this.s, params.id, uid)) throw new HttpError(404, 'not_found', `${this.userView(uid).login} is not a member of project "${params.id}"`);
    sendJson(res, 200, this.memberView(params.id, uid));
  };

  // PUT /projects/:id/members/:uid {role}
  putMember = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('managing members');
    const g = await this.access.require(req, params.id, 'owner');
    if (g.kind === 'token') throw new HttpError(403, 'forbidden', 'a token cannot manage members; sign in as a person');
    const b = await objectBody(req);
    const role = roleParam(b.role);
    const uid = this.memberUid(params.uid);
    const key = idempotencyKey(req, `members:${params.id}:${g.uid}`);
    const last = memberRole(this.s, params.id, uid) === 'owner' && role !== 'owner' && owners(this.s, params.id).length === 1;
    const conflict = last ? new HttpError(409, 'conflict', `project "${params.id}" keeps at least one owner; make someone else owner first`) : null;
    const r = await this.commit([{ type: 'member.set', project: params.id, uid, role, by: g.uid }], key, conflict);
    sendJson(res, 200, { ok: true, member: { ...this.userView(uid), project: params.id, role: r.events[0].role }, duplicate: r.duplicate });
  };

  // DELETE /projects/:id/members/:uid (owner, or a member leaving)
  deleteMember = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    req.resume();
    if (this.access.mode === 'local') throw localOnly('managing members');
    const uid = this.memberUid(params.uid);
    const p = await this.access.principal(req);
    const self = p && p.kind === 'person' && p.uid === uid;
    const g = await this.access.require(req, params.id, self ? 'viewer' : 'owner');
    if (g.kind === 'token') throw new HttpError(403, 'forbidden', 'a token cannot manage members; sign in as a person');
    const key = idempotencyKey(req, `members:${params.id}:${g.uid}`);
    const role = memberRole(this.s, params.id, uid);
    let conflict: HttpError | null = null;
    if (!role) conflict = new HttpError(404, 'not_found', `${this.userView(uid).login} is not a member of project "${params.id}"`);
    else if (role === 'owner' && owners(this.s, params.id).length === 1) conflict = new HttpError(409, 'conflict', `project "${params.id}" keeps at least one owner`);
    const r = await this.commit([{ type: 'member.removed', project: params.id, uid, by: g.uid }], key, conflict);
    sendJson(res, 200, { ok: true, removed: { uid, project: params.id }, duplicate: r.duplicate });
  };

  private tokenView(id: string) {
    const t = this.s.tokens.get(id)!;
    return { id: t.id, project: t.project, role: t.role, label: t.label, uid: t.uid, created: t.created, revoked: t.revoked };
  }

  // GET /tokens[?project=P]: your own tokens; a project's owner sees all of that project's.
  listTokens = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const p = await this.person(req);
    const project = url.searchParams.get('project');
    let list = [...this.s.tokens.values()];
    if (project) {
      const r = p.kind === 'local' ? 'owner' : this.access.roleIn(p, project);
      if (!r) throw new HttpError(403, 'forbidden', `you are not a member of project "${project}"`);
      list = list.filter((t) => t.project === project && (r === 'owner' || t.uid === p.uid));
    } else list = list.filter((t) => t.uid === p.uid);
    sendJson(res, 200, { tokens: list.map((t) => this.tokenView(t.id)) });
  };

  // POST /tokens {project, role, label}: a member mints a token for themselves, up to their own role.
  createToken = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (this.access.mode === 'local') throw localOnly('tokens');
    const p = await this.person(req);
    const b = await objectBody(req);
    const project = optString(b, 'project', 64) ?? DEFAULT_PROJECT;
    const g = await this.access.require(req, project, 'viewer');
    const role = roleParam(b.role, lowerRole(g.role, 'editor'));
    if (!roleAtLeast(g.role, role)) throw new HttpError(403, 'forbidden', `a token can have at most your own role in project "${project}" (${g.role})`);
    const label = optString(b, 'label', IDENTITY_LIMITS.label) ?? '';
    const key = idempotencyKey(req, `tokens:${p.uid}`);
    const fp = fingerprint(b);
    const again = this.secrets.get(key, fp);
    if (again) return sendJson(res, 201, again.body);
    const secret = 'rst_' + newSecret();
    const r = await this.id.append([{ type: 'token.created', id: newId('tk_'), hash: sha256(secret), uid: p.uid, project, role, label }], key);
    const id = String(r.events[0].id);
    const body = r.duplicate
      ? { ok: true, duplicate: true, token: this.tokenView(id), message: 'this token was made by an earlier request with this key; its secret was shown then' }
      : { ok: true, token: this.tokenView(id), secret };
    if (!r.duplicate) this.secrets.put(key, fp, body);
    sendJson(res, 201, body);
  };

  // DELETE /tokens/:id: its maker, or an owner of its project.
  revokeToken = async (req: IncomingMessage, res: ServerResponse, _url: URL, params: Record<string, string>): Promise<void> => {
    req.resume();
    const p = await this.person(req);
    const t = this.s.tokens.get(params.id);
    if (!t) throw new HttpError(404, 'not_found', `no token "${params.id.slice(0, 64)}"`);
    if (t.uid !== p.uid && this.access.roleIn(p, t.project) !== 'owner') throw new HttpError(403, 'forbidden', `revoking someone else's token needs the owner role in project "${t.project}"`);
    const key = idempotencyKey(req, `tokens:${p.uid}`);
    const r = await this.id.append([{ type: 'token.revoked', id: t.id, by: p.uid }], key);
    sendJson(res, 200, { ok: true, token: this.tokenView(t.id), duplicate: r.duplicate });
  };
}

/** Reads the identity stream once (for the CLI: is there an account yet?). */
export async function loadIdentity(store: EventStore): Promise<IdentityState> {
  const s = emptyIdentity();
  let pos = 0;
  for (;;) {
    const batch = await store.read(IDENTITY_STREAM, pos, 5000);
    for (const e of batch) {
      try {
        applyIdentity(s, JSON.parse(e.body));
      } catch {}
      pos = e.position;
    }
    if (batch.length < 5000) return s;
  }
}

/** The first owner: an administrator who owns the `default` project. Written straight to the store. */
export async function createOwner(store: EventStore, login: string, password: string, name?: string): Promise<{ uid: string }> {
  if (!LOGIN_PATTERN.test(login)) throw new Error('the login is 1 to 64 lowercase letters, digits, ".", "-" or "_"');
  const why = checkPassword(password);
  if (why) throw new Error(why);
  const s = await loadIdentity(store);
  if (s.byLogin.has(login)) throw new Error(`the login "${login}" exists already`);
  const uid = newId('u_');
  const ts = Date.now();
  const events: Record<string, unknown>[] = [{ type: 'user.created', uid, login, name: name ?? login, passwordHash: await hashPassword(password), admin: true, by: 'cli', ts }];
  if (!s.projects.has(DEFAULT_PROJECT)) events.push({ type: 'project.created', id: DEFAULT_PROJECT, name: 'Default', by: uid, ts });
  events.push({ type: 'member.set', project: DEFAULT_PROJECT, uid, role: 'owner', by: 'cli', ts });
  await store.append(IDENTITY_STREAM, events.map((e) => ({ type: String(e.type), body: JSON.stringify(e) })));
  return { uid };
}
