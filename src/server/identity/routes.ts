// The identity endpoints (docs/security.md): sign-in and sign-out, passwords,
// accounts, invites, projects, members and tokens. Who may call each one, how
// its project is found and what its body is are declared in `routes()`; the
// route layer (src/server/route.ts) checks them before a handler runs.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import {
  IDENTITY_LIMITS,
  IDENTITY_STREAM,
  PROJECT_ID_PATTERN,
  lowerRole,
  memberRole,
  owners,
  roleAtLeast,
  type IdentityState,
  type Role,
} from '../../core/identity.js';
import { DEFAULT_PROJECT, type Principal } from '../access.js';
import { HttpError, sendJson } from '../http.js';
import type { RequestKey } from '../keys.js';
import { route, type Asking, type Ctx, type KeyRule, type Route } from '../route.js';
import { LOGIN, NAME, PASSWORD, PROJECT_ID, ROLE } from '../schemas.js';
import { SESSION_COOKIE, SESSION_DAYS, type SharedAccess } from './access.js';
import { ScryptBusy, hashPassword, needsRehash, newId, newSecret, scryptFull, sha256, verifyNobody, verifyPassword } from './secrets.js';
import type { IdentityService } from './service.js';
import { LoginBackoff } from './backoff.js';
import type { DeviceCookies } from './devices.js';
import { SIGNIN_PER_ADDRESS, SIGNIN_PER_DEVICE, SignInSlots } from './signin-limits.js';
import { LossyChannel, type ScopeSpec } from '../live/index.js';

const INVITE_DAYS = 7;

// ---------------------------------------------------------------- bodies

const Login = Type.Object({ login: Type.String({ maxLength: 200 }), password: Type.String({ maxLength: 1000 }) });
const ChangePassword = Type.Object({ current: Type.String({ maxLength: 1000 }), password: PASSWORD });
const NewUser = Type.Object({
  login: LOGIN,
  name: Type.Optional(NAME(IDENTITY_LIMITS.name)),
  password: PASSWORD,
  admin: Type.Optional(Type.Boolean()),
  project: Type.Optional(PROJECT_ID),
  role: Type.Optional(ROLE),
});
const NewInvite = Type.Object({
  project: Type.Optional(Type.Union([PROJECT_ID, Type.Null()], { hint: 'a project id, or null' })),
  role: Type.Optional(ROLE),
  days: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 90, hint: 'more than 0 and at most 90' })),
});
const Accept = Type.Object({ login: LOGIN, name: Type.Optional(NAME(IDENTITY_LIMITS.name)), password: PASSWORD });
const NewProject = Type.Object({ id: Type.Optional(Type.String({ maxLength: 64 })), name: Type.Optional(NAME(IDENTITY_LIMITS.projectName)) });
const MemberRole = Type.Object({ role: ROLE });
const NewToken = Type.Object({ project: Type.Optional(PROJECT_ID), role: Type.Optional(ROLE), label: Type.Optional(NAME(IDENTITY_LIMITS.label)) });

/**
 * An identity route's key (keys.ts): owned by the caller, or by what a public
 * route names (`owner`); `was` is the name the route scoped its keys by before,
 * as `identity:<was>:<key>` in the identity stream.
 */
function keyed(was: (c: { params: Record<string, string>; body: unknown; owner: string }) => string, owner?: KeyRule['owner']): KeyRule {
  return { owner, legacy: (_stream, key, c) => `${IDENTITY_STREAM}:${was(c)}:${key}` };
}
const byCaller = (what: string): KeyRule => keyed((c) => `${what}:${c.owner}`);
const loginOf = (body: unknown): string => String((body as { login?: unknown }).login ?? '').trim().toLowerCase();
const codeHashOf = (params: Record<string, string>): string => sha256(params.code ?? '');

/** Where the secrets cache keeps a key's answer: the key, its owner and its request. */
const secretKey = (k: RequestKey | null): string | undefined => (k ? `${k.owner}\n${k.key}\n${k.fingerprint ?? ''}` : undefined);

/** A name as stored: whitespace runs become one space, trimmed; empty is absent. */
function clean(v: string | null | undefined): string | undefined {
  return v?.replace(/\s+/g, ' ').trim() || undefined;
}

/**
 * Secrets shown once: kept briefly so a retry with the same key (a lost
 * answer) sees them again. Only the same request gets them: the entry is
 * bound to a fingerprint of the request's body (which holds the password,
 * where there is one), so knowing a key is not enough to read a secret.
 */
class SecretCache {
  private m = new Map<string, { at: number; fp: string; body: unknown; cookie?: string | string[] }>();
  get(key: string | undefined, fp: string): { body: unknown; cookie?: string | string[] } | undefined {
    if (!key) return undefined;
    const e = this.m.get(key);
    if (!e || e.fp !== fp || Date.now() - e.at > 10 * 60_000) return undefined;
    return e;
  }
  put(key: string | undefined, fp: string, body: unknown, cookie?: string | string[]): void {
    if (!key) return;
    if (this.m.size > 10_000) for (const [k, v] of this.m) if (Date.now() - v.at > 10 * 60_000) this.m.delete(k);
    this.m.set(key, { at: Date.now(), fp, body, cookie });
  }
}

const fingerprint = (b: unknown): string => sha256(JSON.stringify(b));

export class IdentityRoutes {
  private secrets = new SecretCache();
  private backoff: LoginBackoff;
  /** The public origin is https (a TLS proxy in front): cookies are Secure whatever this socket is. */
  private secureCookies: boolean;
  /** Browsers that signed in before (devices.ts); none: every sign-in is a stranger's. */
  private devices: DeviceCookies | null;
  /** Sign-ins in the password-check gate per address and per known browser (signin-limits.ts). */
  private slots = new SignInSlots();

  constructor(
    private id: IdentityService,
    private access: SharedAccess,
    opts: { loginFailuresFree: number; loginBackoffMs: number; secureCookies?: boolean; tokensPerPerson?: number; devices?: DeviceCookies } = { loginFailuresFree: 5, loginBackoffMs: 1000 },
  ) {
    this.backoff = new LoginBackoff(opts.loginFailuresFree, opts.loginBackoffMs);
    this.secureCookies = opts.secureCookies === true;
    this.tokensPerPerson = opts.tokensPerPerson ?? 50;
    this.devices = opts.devices ?? null;
  }

  /** Live tokens one person may hold (each is a caller the limits count as that person; docs/security.md, "Limits"). */
  private tokensPerPerson: number;

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

  /** Validation failed: without a key, refuse; with one, it may be a retry of a request that succeeded. */
  private async commit(events: Record<string, unknown>[], key: RequestKey | null, conflict: HttpError | null) {
    if (conflict && !key) throw conflict;
    const r = await this.id.append(events, key);
    // A new request whose events folded to nothing (the conflict stands): refuse it.
    if (conflict && !r.duplicate) throw conflict;
    return r;
  }

  private sessionCookie(req: IncomingMessage, secret: string | null): string {
    const secure = this.secureCookies || (req.socket as { encrypted?: boolean }).encrypted ? '; Secure' : '';
    if (secret === null) return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure}`;
    return `${SESSION_COOKIE}=${secret}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${SESSION_DAYS * 86400}${secure}`;
  }

  private send(res: ServerResponse, status: number, body: unknown, cookie?: string | string[]): void {
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

  /** The identity routes: who may call each one is declared here and checked by the route layer. */
  routes(): Route[] {
    return [
      route({ method: 'POST', path: '/auth/login', auth: 'public', shared: 'signing in', body: Login, doc: 'spends the caller\'s budget', key: keyed((c) => c.owner, (c) => `login:${loginOf(c.body)}`), handler: this.login }),
      route({ method: 'POST', path: '/auth/logout', auth: 'public', doc: 'closes the cookie\'s sign-in if there is one', handler: this.logout }),
      route({ method: 'POST', path: '/auth/password', auth: 'person', shared: 'passwords', body: ChangePassword, doc: 'for themselves; their other sign-ins end', key: byCaller('password'), handler: this.changePassword }),
      route({ method: 'GET', path: '/auth/me', auth: 'principal', handler: this.me }),
      route({
        method: 'POST',
        path: '/auth/invites',
        // An invite into a project needs its owner; one without a project, an administrator.
        auth: (a) => (projectField(a) ? 'owner' : 'admin'),
        project: (a) => projectField(a)!,
        tokens: false,
        shared: 'inviting people',
        body: NewInvite,
        doc: 'owner of `project`, a person; without one, admin',
        key: byCaller('invites'),
        handler: this.createInvite,
      }),
      route({ method: 'POST', path: '/auth/invites/:code/accept', auth: 'public', shared: 'accepting invites', body: Accept, doc: 'spends the caller\'s budget', key: keyed((c) => c.owner, (c) => `accept:${codeHashOf(c.params)}`), handler: this.acceptInvite }),
      route({
        method: 'POST',
        path: '/users',
        auth: (a) => (projectField(a) ? 'owner' : 'admin'),
        project: (a) => projectField(a)!,
        tokens: false,
        shared: 'creating accounts',
        body: NewUser,
        doc: 'admin; with `project`, its owner too',
        key: byCaller('users'),
        handler: this.createUser,
      }),
      route({ method: 'GET', path: '/projects', auth: 'principal', handler: this.listProjects }),
      route({ method: 'POST', path: '/projects', auth: 'person', body: NewProject, key: byCaller('projects'), handler: this.createProject }),
      route({ method: 'GET', path: '/projects/:id/members', auth: 'viewer', project: (a) => a.params.id, handler: this.listMembers }),
      route({ method: 'GET', path: '/projects/:id/members/:uid', auth: 'viewer', project: (a) => a.params.id, handler: this.getMember }),
      route({ method: 'PUT', path: '/projects/:id/members/:uid', auth: 'owner', project: (a) => a.params.id, tokens: false, shared: 'managing members', body: MemberRole, key: keyed((c) => `members:${c.params.id}:${c.owner}`), handler: this.putMember }),
      route({
        method: 'DELETE',
        path: '/projects/:id/members/:uid',
        // A member may leave; removing someone else needs the owner role.
        auth: (a) => (this.leaving(a) ? 'viewer' : 'owner'),
        project: (a) => a.params.id,
        tokens: false,
        shared: 'managing members',
        doc: 'owner, or the member themselves (leaving); a person',
        key: keyed((c) => `members:${c.params.id}:${c.owner}`),
        handler: this.deleteMember,
      }),
      route({
        method: 'GET',
        path: '/tokens',
        // Your own tokens; with ?project=, that project's (all of them for its owner).
        auth: (a) => (a.url.searchParams.get('project') ? 'viewer' : 'person'),
        project: (a) => a.url.searchParams.get('project')!,
        tokens: false,
        doc: 'a person; with `?project=`, a member there',
        handler: this.listTokens,
      }),
      route({
        method: 'POST',
        path: '/tokens',
        auth: 'viewer',
        project: (a) => projectField(a) ?? DEFAULT_PROJECT,
        tokens: false,
        shared: 'tokens',
        body: NewToken,
        doc: 'in `project`; the token gets at most the maker\'s role',
        key: byCaller('tokens'),
        handler: this.createToken,
      }),
      route({ method: 'DELETE', path: '/tokens/:id', auth: 'person', shared: 'tokens', doc: 'its maker, or an owner of its project', key: byCaller('tokens'), handler: this.revokeToken }),
    ];
  }

  /** A person removing themselves from a project. */
  private leaving(a: Asking): boolean {
    const p = a.principal;
    if (!p || p.kind !== 'person') return false;
    const raw = a.params.uid ?? '';
    return raw === p.uid || this.s.byLogin.get(raw) === p.uid;
  }

  // POST /auth/login {login, password}
  login = async (c: Ctx<{ login: string; password: string }>): Promise<void> => {
    const login = c.body.login.trim().toLowerCase();
    // A browser this person signed in from before (a device cookie naming them): its own limits and
    // its own share of the password-check gate, apart from its address (devices.ts, signin-limits.ts).
    const device = this.devices?.verify(c.req) ?? null;
    const known = device && this.s.byLogin.get(login) === device.uid ? device : null;
    const slot = known ? `device:${known.id}` : `ip:${c.req.socket.remoteAddress ?? '?'}`;
    if (!this.slots.take(slot, known ? SIGNIN_PER_DEVICE : SIGNIN_PER_ADDRESS)) {
      c.res.setHeader('retry-after', '1');
      throw new HttpError(429, 'too_many', `too many sign-ins at once from ${known ? 'this browser' : 'your address'} (at most ${known ? SIGNIN_PER_DEVICE : SIGNIN_PER_ADDRESS}); retry in a moment`);
    }
    try {
      await this.signIn(c, login, known ? known.id : null);
    } finally {
      this.slots.give(slot);
    }
  };

  /** A sign-in past the per-caller limits; `device`: the known browser's id (its own gate share and backoff). */
  private async signIn({ req, res, body: b, key }: Ctx<{ login: string; password: string }>, login: string, device: string | null): Promise<void> {
    const lane = device ? 'known' : 'anyone';
    // Too many password checks at once (secrets.ts): refused before anything is counted against the login.
    if (scryptFull(lane)) throw new ScryptBusy();
    // One login failing from many addresses waits (backoff.ts), before any password is checked. A known
    // browser's failures are counted on the browser, so strangers failing at this login do not lock it out.
    const wait = this.backoff.begin(device ? `device:${device}` : login);
    if (wait > 0) {
      const s = Math.ceil(wait / 1000);
      res.setHeader('retry-after', String(s));
      throw new HttpError(429, 'too_many', `too many failed sign-ins for this login; try again in ${s} s`);
    }
    const uid = this.s.byLogin.get(login);
    const u = uid ? this.s.users.get(uid) : undefined;
    // An unknown login costs one scrypt too (against a dummy hash of the
    // current parameters) and answers the same: neither its time nor its
    // answer tells whether the account exists.
    const ok = u ? await verifyPassword(b.password, u.passwordHash, lane) : await verifyNobody(b.password);
    if (!u || !ok) throw new HttpError(401, 'unauthorized', 'wrong login or password');
    this.backoff.succeeded(device ? `device:${device}` : login);
    // A hash made with less than the current cost is made again now, while the password is at hand.
    if (needsRehash(u.passwordHash)) {
      await this.id.append([{ type: 'user.password', uid: u.uid, passwordHash: await hashPassword(b.password), replaces: u.passwordHash, reason: 'rehash' }]);
    }
    const fp = fingerprint(b);
    const again = this.secrets.get(secretKey(key), fp);
    if (again) return this.send(res, 200, again.body, again.cookie);
    // This browser is known from now on (a new device cookie unless it carries one of this person's).
    if (!device) await this.devices?.ensure();
    const known = device || !this.devices ? [] : [this.devices.header(u.uid, this.secureCookies || !!(req.socket as { encrypted?: boolean }).encrypted)];
    let { event, cookie } = this.openLogin(req, u.uid);
    const r = await this.id.append([event], key);
    if (r.duplicate) {
      // The first answer's secret is gone (another node, or long ago): its
      // session cannot be handed out again, so this retry gets a new one.
      ({ event, cookie } = this.openLogin(req, u.uid));
      await this.id.append([event]);
    }
    const body = { ok: true, user: this.userView(u.uid), projects: this.projectsOf({ kind: 'person', uid: u.uid, name: u.name }) };
    this.secrets.put(secretKey(key), fp, body, [cookie, ...known]);
    this.send(res, 200, body, [cookie, ...known]);
  }

  // POST /auth/logout
  logout = async ({ req, res, principal: p }: Ctx): Promise<void> => {
    if (p?.session) await this.id.append([{ type: 'login.closed', sessionHash: p.session }]);
    this.send(res, 200, { ok: true }, this.sessionCookie(req, null));
  };

  // POST /auth/password {current, password}: a person changes their own; their other sign-ins end.
  changePassword = async ({ res, principal, body: b, key }: Ctx<{ current: string; password: string }>): Promise<void> => {
    const p = principal!;
    const u = this.s.users.get(p.uid)!;
    const ok = await verifyPassword(b.current, u.passwordHash);
    const events: Record<string, unknown>[] = [{ type: 'user.password', uid: p.uid, passwordHash: await hashPassword(b.password) }];
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
  me = ({ res, principal }: Ctx): void => {
    const p = principal!;
    sendJson(res, 200, {
      mode: this.access.mode,
      kind: p.kind,
      user: p.kind === 'local' ? { uid: p.uid, login: null, name: p.name, admin: true } : this.userView(p.uid),
      scope: p.scope ?? null,
      projects: this.projectsOf(p),
    });
  };

  // POST /users {login, name?, password, admin?, project?, role?}
  createUser = async ({ res, principal, body: b, key }: Ctx<{ login: string; name?: string; password: string; admin?: boolean; project?: string; role?: Role }>): Promise<void> => {
    const by = principal!;
    // With a project the route checked its owner role; the account itself still needs an administrator.
    if (!this.access.isAdmin(by)) throw new HttpError(403, 'forbidden', 'only a server administrator (the first owner, or one they made) may do this');
    const login = b.login;
    const name = clean(b.name) ?? login;
    const project = b.project;
    const role = project ? (b.role ?? 'editor') : undefined;
    if (project && !this.s.projects.has(project)) throw new HttpError(404, 'not_found', `no project "${project}"`);
    const uid = newId('u_');
    const events: Record<string, unknown>[] = [{ type: 'user.created', uid, login, name, passwordHash: await hashPassword(b.password), admin: b.admin === true, by: by.uid }];
    if (project) events.push({ type: 'member.set', project, uid, role, by: by.uid });
    const conflict = this.s.byLogin.has(login) ? new HttpError(409, 'conflict', `the login "${login}" is taken`) : null;
    const r = await this.commit(events, key, conflict);
    const made = r.events[0];
    sendJson(res, 201, { ok: true, user: this.userView(String(made.uid)), duplicate: r.duplicate });
  };

  // POST /auth/invites {project?, role?, days?}
  createInvite = async ({ res, principal, body: b, key }: Ctx<{ project?: string | null; role?: Role; days?: number }>): Promise<void> => {
    const by = principal!;
    const project = b.project ?? null;
    const role = b.role ?? 'viewer';
    if (project && !this.s.projects.has(project)) throw new HttpError(404, 'not_found', `no project "${project}"`);
    const days = b.days ?? INVITE_DAYS;
    const fp = fingerprint(b);
    const again = this.secrets.get(secretKey(key), fp);
    if (again) return sendJson(res, 201, again.body);
    const code = newSecret();
    const expires = Date.now() + days * 86_400_000;
    const r = await this.id.append([{ type: 'invite.created', codeHash: sha256(code), project, role, by: by.uid, expires }], key);
    const e = r.events[0];
    const body = r.duplicate
      ? { ok: true, duplicate: true, project: e.project, role: e.role, expires: e.expires, message: 'this invite was made by an earlier request with this key; its code was shown then' }
      : { ok: true, code, link: `/invite/${code}`, accept: `/auth/invites/${code}/accept`, project, role, expires };
    if (!r.duplicate) this.secrets.put(secretKey(key), fp, body);
    sendJson(res, 201, body);
  };

  // POST /auth/invites/:code/accept {login, name?, password}
  acceptInvite = async ({ req, res, params, body: b, key }: Ctx<{ login: string; name?: string; password: string }>): Promise<void> => {
    const login = b.login;
    const name = clean(b.name) ?? login;
    const codeHash = sha256(params.code ?? '');
    const fp = fingerprint(b);
    const again = this.secrets.get(secretKey(key), fp);
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
      { type: 'user.created', uid, login, name, passwordHash: await hashPassword(b.password), admin: false, via: codeHash },
    ];
    if (inv?.project) events.push({ type: 'member.set', project: inv.project, uid, role: inv.role, by: inv.by, via: codeHash });
    events.push(opened);
    const r = await this.commit(events, key, conflict);
    const made = String(r.events[0].uid);
    const body = { ok: true, user: this.userView(made), projects: this.projectsOf({ kind: 'person', uid: made, name }), duplicate: r.duplicate };
    if (!r.duplicate) this.secrets.put(secretKey(key), fp, body, cookie);
    this.send(res, 201, body, r.duplicate ? undefined : cookie);
  };

  // GET /projects
  listProjects = ({ res, principal }: Ctx): void => {
    sendJson(res, 200, { projects: this.projectsOf(principal!) });
  };

  // POST /projects {id?, name}
  createProject = async ({ res, principal, body: b, key }: Ctx<{ id?: string; name?: string }>): Promise<void> => {
    const by = principal!;
    const name = clean(b.name);
    let id = clean(b.id);
    if (!id && name) id = name.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
    if (!id || !PROJECT_ID_PATTERN.test(id)) throw new HttpError(400, 'bad_request', 'a project needs an "id" (1 to 64 lowercase letters, digits, "-" or "_") or a "name"');
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

  /** A project's members as GET /projects/:id/members answers, and as the `members:<project>` scope sends them. */
  private membersOf(project: string) {
    const m = this.s.members.get(project) ?? new Map<string, Role>();
    return { project, members: [...m.keys()].map((uid) => this.memberView(project, uid)) };
  }

  // GET /projects/:id/members
  listMembers = ({ res, params }: Ctx): void => {
    sendJson(res, 200, this.membersOf(params.id));
  };

  /** The `members:<project>` channels, one per project someone has read (bounded by the projects). */
  private memberChannels = new Map<string, LossyChannel>();

  /**
   * The live scope `members:<project>` (docs/web.md, "/manage follows
   * changes"): a lossy scope of the one live connection whose every frame,
   * `members`, is the whole list GET /projects/:id/members answers, sent when
   * the scope opens and again whenever the identity fold changes a
   * membership of the project (a role set, a member removed, an invite
   * accepted, the CLI's `member.set`) or a member's account (a new name), on
   * every node (each folds the identity log). Readable by a viewer of the
   * project, like the GET; a member who loses the project has the scope
   * closed by the live mechanism, and a frame goes only to subscriptions
   * whose holder still has a role there.
   */
  membersScope(epoch: string): ScopeSpec {
    this.id.onChange((c) => {
      if (this.memberChannels.size === 0) return;
      if (c.kind === 'member' || c.kind === 'project') this.sendMembers(c.project);
      else if (c.kind === 'user') for (const project of this.memberChannels.keys()) if (this.s.members.get(project)?.has(c.uid)) this.sendMembers(project);
    });
    return {
      need: (key) => {
        if (!PROJECT_ID_PATTERN.test(key)) throw new HttpError(400, 'bad_request', '"members:<project>": a project id is 1 to 64 lowercase letters, digits, "-" or "_"');
        return { project: key, min: 'viewer' };
      },
      open: (key) => {
        if (key !== DEFAULT_PROJECT && !this.s.projects.has(key)) throw new HttpError(404, 'not_found', `no project "${key}"`);
        let ch = this.memberChannels.get(key);
        if (!ch) {
          const made = new LossyChannel(`members:${key}`, epoch);
          made.opened = (sub) => made.send(sub, 'members', JSON.stringify(this.membersOf(key)));
          this.memberChannels.set(key, (ch = made));
        }
        return ch;
      },
    };
  }

  private sendMembers(project: string): void {
    const ch = this.memberChannels.get(project);
    if (!ch || ch.subscriberCount === 0) return;
    ch.broadcast('members', JSON.stringify(this.membersOf(project)), (sub) => this.access.roleIn(sub.who, project) !== null);
  }

  // GET /projects/:id/members/:uid
  getMember = ({ res, params }: Ctx): void => {
    const uid = this.memberUid(params.uid);
    if (!memberRole(this.s, params.id, uid)) throw new HttpError(404, 'not_found', `${this.userView(uid).login} is not a member of project "${params.id}"`);
    sendJson(res, 200, this.memberView(params.id, uid));
  };

  // PUT /projects/:id/members/:uid {role}
  putMember = async ({ res, params, grant, body: b, key }: Ctx<{ role: Role }>): Promise<void> => {
    const g = grant!;
    const role = b.role;
    const uid = this.memberUid(params.uid);
    const last = memberRole(this.s, params.id, uid) === 'owner' && role !== 'owner' && owners(this.s, params.id).length === 1;
    const conflict = last ? new HttpError(409, 'conflict', `project "${params.id}" keeps at least one owner; make someone else owner first`) : null;
    const r = await this.commit([{ type: 'member.set', project: params.id, uid, role, by: g.uid }], key, conflict);
    sendJson(res, 200, { ok: true, member: { ...this.userView(uid), project: params.id, role: r.events[0].role }, duplicate: r.duplicate });
  };

  // DELETE /projects/:id/members/:uid (owner, or a member leaving)
  deleteMember = async ({ res, params, grant, key }: Ctx): Promise<void> => {
    const g = grant!;
    const uid = this.memberUid(params.uid);
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
  listTokens = ({ res, url, principal, grant }: Ctx): void => {
    const p = principal!;
    const project = url.searchParams.get('project');
    let list = [...this.s.tokens.values()];
    if (project) list = list.filter((t) => t.project === project && (grant!.role === 'owner' || t.uid === p.uid));
    else list = list.filter((t) => t.uid === p.uid);
    sendJson(res, 200, { tokens: list.map((t) => this.tokenView(t.id)) });
  };

  // POST /tokens {project, role, label}: a member mints a token for themselves, up to their own role.
  createToken = async ({ res, principal, grant, body: b, key }: Ctx<{ project?: string; role?: Role; label?: string }>): Promise<void> => {
    const p = principal!;
    const g = grant!;
    const project = g.project;
    const role = b.role ?? lowerRole(g.role, 'editor');
    if (!roleAtLeast(g.role, role)) throw new HttpError(403, 'forbidden', `a token can have at most your own role in project "${project}" (${g.role})`);
    const label = clean(b.label) ?? '';
    const fp = fingerprint(b);
    const again = this.secrets.get(secretKey(key), fp);
    if (again) return sendJson(res, 201, again.body);
    let held = 0;
    for (const t of this.s.tokens.values()) if (t.uid === p.uid && !t.revoked) held++;
    if (held >= this.tokensPerPerson) throw new HttpError(409, 'conflict', `you hold ${held} live tokens, the most one person may (${this.tokensPerPerson}); revoke one first (DELETE /tokens/:id)`);
    const secret = 'rst_' + newSecret();
    const r = await this.id.append([{ type: 'token.created', id: newId('tk_'), hash: sha256(secret), uid: p.uid, project, role, label }], key);
    const id = String(r.events[0].id);
    const body = r.duplicate
      ? { ok: true, duplicate: true, token: this.tokenView(id), message: 'this token was made by an earlier request with this key; its secret was shown then' }
      : { ok: true, token: this.tokenView(id), secret };
    if (!r.duplicate) this.secrets.put(secretKey(key), fp, body);
    sendJson(res, 201, body);
  };

  // DELETE /tokens/:id: its maker, or an owner of its project.
  revokeToken = async ({ res, params, principal, key }: Ctx): Promise<void> => {
    const p = principal!;
    const t = this.s.tokens.get(params.id);
    if (!t) throw new HttpError(404, 'not_found', `no token "${params.id.slice(0, 64)}"`);
    if (t.uid !== p.uid && this.access.roleIn(p, t.project) !== 'owner') throw new HttpError(403, 'forbidden', `revoking someone else's token needs the owner role in project "${t.project}"`);
    const r = await this.id.append([{ type: 'token.revoked', id: t.id, by: p.uid }], key);
    sendJson(res, 200, { ok: true, token: this.tokenView(t.id), duplicate: r.duplicate });
  };
}

/** The `project` field of a body (the route layer reads it before the body's shape is checked). */
function projectField(a: Asking): string | undefined {
  const v = a.raw !== null && typeof a.raw === 'object' ? (a.raw as Record<string, unknown>).project : undefined;
  if (v === undefined || v === null) return undefined;
  // A malformed id is refused here, before any role is looked up (the schema would say the same later).
  if (typeof v !== 'string' || !PROJECT_ID_PATTERN.test(v)) throw new HttpError(400, 'bad_request', '"project" must be a project id (1 to 64 lowercase letters, digits, "-" or "_")');
  return v;
}
