// The identity endpoints (docs/security.md): sign-in and sign-out, passwords,
// accounts, invites, projects, members and tokens.

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  IDENTITY_LIMITS,
  IDENTITY_STREAM,
  LOGIN_PATTERN,
  PROJECT_ID_PATTERN,
  isRole,
  lowerRole,
  memberRole,
  owners,
  roleAtLeast,
  type IdentityState,
  type Role,
} from '../../core/identity.js';
import { DEFAULT_PROJECT, type Principal } from '../access.js';
import { HttpError, idempotencyKeyOf, readJson, sendJson } from '../http.js';
import { SESSION_COOKIE, SESSION_DAYS, type SharedAccess } from './access.js';
import { checkPassword, hashPassword, newId, newSecret, sha256, verifyPassword } from './secrets.js';
import type { IdentityService } from './service.js';

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
