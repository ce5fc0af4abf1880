// Identity as a fold: people, invites, tokens, projects, memberships and
// sign-ins are events in the log's `identity` stream, and every node folds the
// same stream into the same state. The server's access checks read that state.
//
// Invariants:
// - pure: no I/O, no clock, no randomness, no crypto. Secrets never arrive
//   here; hashes are computed at the edge and stored as opaque strings. Time
//   arrives on the event (`ts`);
// - hostile or impossible events fold to nothing (a duplicate login, a member
//   of a project that does not exist, a second use of an invite), never throw;
// - `applyIdentity` reports what changed (a membership, a token, a sign-in) so
//   the server can re-check open streams at once.

export const IDENTITY_STREAM = 'identity';

export type Role = 'owner' | 'editor' | 'viewer';

export const IDENTITY_LIMITS = { login: 64, name: 80, label: 80, projectName: 80, hash: 400 } as const;
export const LOGIN_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export interface User {
  uid: string;
  login: string;
  name: string;
  passwordHash: string;
  /** Administers the server's accounts (the first owner is one). */
  admin: boolean;
  created: number;
}

export interface Invite {
  codeHash: string;
  project: string | null;
  role: Role;
  by: string;
  expires: number;
  usedBy: string | null;
}

export interface Token {
  id: string;
  hash: string;
  uid: string;
  project: string;
  role: Role;
  label: string;
  created: number;
  revoked: boolean;
}

export interface Project {
  id: string;
  name: string;
  by: string;
  created: number;
}

export interface Login {
  sessionHash: string;
  uid: string;
  expires: number;
}

export interface IdentityState {
  users: Map<string, User>;
  byLogin: Map<string, string>;
  invites: Map<string, Invite>;
  tokens: Map<string, Token>;
  tokenByHash: Map<string, string>;
  projects: Map<string, Project>;
  /** project → uid → role */
  members: Map<string, Map<string, Role>>;
  logins: Map<string, Login>;
}

export type IdentityChange =
  | { kind: 'user'; uid: string }
  /** `by`: the uid that made the change, when the event names one. */
  | { kind: 'member'; project: string; uid: string; by?: string }
  | { kind: 'token'; id: string }
  | { kind: 'login'; sessionHash: string }
  | { kind: 'project'; project: string };

function memberChange(project: string, uid: string, by: unknown): IdentityChange {
  return typeof by === 'string' && by ? { kind: 'member', project, uid, by } : { kind: 'member', project, uid };
}

export function emptyIdentity(): IdentityState {
  return {
    users: new Map(),
    byLogin: new Map(),
    invites: new Map(),
    tokens: new Map(),
    tokenByHash: new Map(),
    projects: new Map(),
    members: new Map(),
    logins: new Map(),
  };
}

export function isRole(v: unknown): v is Role {
  return v === 'owner' || v === 'editor' || v === 'viewer';
}

const RANK: Record<Role, number> = { viewer: 1, editor: 2, owner: 3 };

/** The lower of two roles (a token's scope caps its maker's role). */
export function lowerRole(a: Role, b: Role): Role {
  return RANK[a] <= RANK[b] ? a : b;
}

export function roleAtLeast(role: Role | null, min: Role): boolean {
  return role !== null && RANK[role] >= RANK[min];
}

function str(v: unknown, max: number): string | null {
  return typeof v === 'string' && v.length > 0 && v.length <= max ? v : null;
}

/**
 * A field that names something (an id, a hash, an author) as a string: a
 * non-string is '', which names nothing. (Not `String(v)`: that throws on an
 * object without a prototype, and turns `5` into an id.)
 */
function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** A member's role in a project, or null. */
export function memberRole(s: IdentityState, project: string, uid: string): Role | null {
  return s.members.get(project)?.get(uid) ?? null;
}

export function owners(s: IdentityState, project: string): string[] {
  const m = s.members.get(project);
  if (!m) return [];
  return [...m].filter(([, r]) => r === 'owner').map(([u]) => u);
}

/** Folds one event into `s` (mutated in place) and says what changed. Never throws. */
export function applyIdentity(s: IdentityState, raw: unknown): IdentityChange[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const e = raw as Record<string, unknown>;
  const ts = num(e.ts);
  switch (e.type) {
    case 'user.created': {
      const uid = str(e.uid, 64);
      const login = str(e.login, IDENTITY_LIMITS.login);
      const hash = str(e.passwordHash, IDENTITY_LIMITS.hash);
      if (!uid || !ID_PATTERN.test(uid) || !login || !LOGIN_PATTERN.test(login) || !hash) return [];
      if (s.users.has(uid) || s.byLogin.has(login)) return [];
      // An account made through an invite exists only if that invite was used by this uid just before.
      if (e.via !== undefined && s.invites.get(text(e.via))?.usedBy !== uid) return [];
      const name = str(e.name, IDENTITY_LIMITS.name) ?? login;
      s.users.set(uid, { uid, login, name, passwordHash: hash, admin: e.admin === true, created: ts });
      s.byLogin.set(login, uid);
      return [{ kind: 'user', uid }];
    }
    case 'user.password': {
      const u = s.users.get(text(e.uid));
      const hash = str(e.passwordHash, IDENTITY_LIMITS.hash);
      if (!u || !hash) return [];
      // A rehash at sign-in names the hash it replaces: a password changed in between wins.
      if (e.replaces !== undefined && e.replaces !== u.passwordHash) return [];
      u.passwordHash = hash;
      return [{ kind: 'user', uid: u.uid }];
    }
    case 'invite.created': {
      const codeHash = str(e.codeHash, IDENTITY_LIMITS.hash);
      if (!codeHash || s.invites.has(codeHash) || !isRole(e.role)) return [];
      const project = e.project === undefined || e.project === null ? null : str(e.project, 64);
      if (project !== null && !s.projects.has(project)) return [];
      s.invites.set(codeHash, { codeHash, project, role: e.role, by: text(e.by), expires: num(e.expires), usedBy: null });
      return [];
    }
    case 'invite.used': {
      const inv = s.invites.get(text(e.codeHash));
      const uid = str(e.uid, 64);
      if (!inv || !uid || inv.usedBy !== null || ts > inv.expires) return [];
      inv.usedBy = uid;
      return [];
    }
    case 'token.created': {
      const id = str(e.id, 64);
      const hash = str(e.hash, IDENTITY_LIMITS.hash);
      const uid = text(e.uid);
      const project = text(e.project);
      if (!id || !hash || s.tokens.has(id) || s.tokenByHash.has(hash) || !isRole(e.role)) return [];
      if (!s.users.has(uid) || !s.projects.has(project)) return [];
      s.tokens.set(id, { id, hash, uid, project, role: e.role, label: str(e.label, IDENTITY_LIMITS.label) ?? '', created: ts, revoked: false });
      s.tokenByHash.set(hash, id);
      return [{ kind: 'token', id }];
    }
    case 'token.revoked': {
      const t = s.tokens.get(text(e.id));
      if (!t || t.revoked) return [];
      t.revoked = true;
      s.tokenByHash.delete(t.hash);
      return [{ kind: 'token', id: t.id }];
    }
    case 'project.created': {
      const id = str(e.id, 64);
      if (!id || !PROJECT_ID_PATTERN.test(id) || s.projects.has(id)) return [];
      s.projects.set(id, { id, name: str(e.name, IDENTITY_LIMITS.projectName) ?? id, by: text(e.by), created: ts });
      return [{ kind: 'project', project: id }];
    }
    case 'member.set': {
      const project = text(e.project);
      const uid = text(e.uid);
      if (!s.projects.has(project) || !s.users.has(uid) || !isRole(e.role)) return [];
      if (e.via !== undefined && s.invites.get(text(e.via))?.usedBy !== uid) return [];
      let m = s.members.get(project);
      if (!m) s.members.set(project, (m = new Map()));
      // A project keeps at least one owner: demoting the last one folds to nothing.
      if (m.get(uid) === 'owner' && e.role !== 'owner' && owners(s, project).length === 1) return [];
      if (m.get(uid) === e.role) return [];
      m.set(uid, e.role);
      return [memberChange(project, uid, e.by)];
    }
    case 'member.removed': {
      const project = text(e.project);
      const uid = text(e.uid);
      const m = s.members.get(project);
      if (!m || !m.has(uid)) return [];
      if (m.get(uid) === 'owner' && owners(s, project).length === 1) return [];
      m.delete(uid);
      return [memberChange(project, uid, e.by)];
    }
    case 'login.opened': {
      const sessionHash = str(e.sessionHash, IDENTITY_LIMITS.hash);
      const uid = text(e.uid);
      if (!sessionHash || s.logins.has(sessionHash) || !s.users.has(uid)) return [];
      s.logins.set(sessionHash, { sessionHash, uid, expires: num(e.expires) });
      return [];
    }
    case 'login.closed': {
      const h = text(e.sessionHash);
      if (!s.logins.delete(h)) return [];
      return [{ kind: 'login', sessionHash: h }];
    }
    default:
      return [];
  }
}

// ---------------------------------------------------------------- wire form

/**
 * The state as plain JSON (a snapshot's body): the lookups `byLogin` and
 * `tokenByHash` are left out, since they follow from users and tokens.
 */
export interface IdentityJSON {
  users: User[];
  invites: Invite[];
  tokens: Token[];
  projects: Project[];
  /** project → [uid, role] pairs, in the order they were set. */
  members: [string, [string, Role][]][];
  logins: Login[];
}

export function identityToJSON(s: IdentityState): IdentityJSON {
  return {
    users: [...s.users.values()],
    invites: [...s.invites.values()],
    tokens: [...s.tokens.values()],
    projects: [...s.projects.values()],
    members: [...s.members].map(([p, m]) => [p, [...m]]),
    logins: [...s.logins.values()],
  };
}

/** A state from its JSON form; owns what it holds. */
export function identityFromJSON(j: IdentityJSON): IdentityState {
  const s = emptyIdentity();
  for (const u of j.users ?? []) {
    s.users.set(u.uid, { ...u });
    s.byLogin.set(u.login, u.uid);
  }
  for (const i of j.invites ?? []) s.invites.set(i.codeHash, { ...i });
  for (const t of j.tokens ?? []) {
    s.tokens.set(t.id, { ...t });
    // A revoked token's hash no longer opens anything (token.revoked took it out).
    if (!t.revoked) s.tokenByHash.set(t.hash, t.id);
  }
  for (const p of j.projects ?? []) s.projects.set(p.id, { ...p });
  for (const [p, list] of j.members ?? []) s.members.set(p, new Map(list));
  for (const l of j.logins ?? []) s.logins.set(l.sessionHash, { ...l });
  return s;
}
