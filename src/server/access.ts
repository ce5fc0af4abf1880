// The access seam: who is calling, and what may they do in a project.
//
// Every service asks this one interface; none reads cookies, tokens or headers
// for identity itself. Local mode (loopback, no accounts) answers "the person
// at the machine, owner of everything"; shared mode (accounts, tokens, roles)
// implements the same interface.
//
// Invariants:
// - identity comes from the transport (cookie session or bearer token), never
//   from a payload field;
// - `require` throws HttpError 401 (nobody) or 403 (not enough role) with a
//   message a person can act on;
// - when a member's role in a project changes or they are removed, a token is
//   revoked or a sign-in ends, `onChange` listeners hear it at once, so the
//   live mechanism can re-check or close open streams (src/server/live/);
// - `roleIn` and `lost` answer for a principal found earlier (a stream's
//   holder) as a fresh request would: a revoked token or an ended sign-in has
//   no role anywhere.

import type { IncomingMessage } from 'node:http';
import { roleAtLeast, type Role } from '../core/identity.js';
import { HttpError } from './http.js';

// Roles and their order are the identity fold's (src/core/identity.ts): one rank.
export type { Role };

export interface Principal {
  /** `person` (browser session), `token` (bridge, hook, script), `local` (local mode). */
  kind: 'person' | 'token' | 'local';
  /** Stable id of the person (a token acts for the person who made it). */
  uid: string;
  /** Display name, used as the transport `name` of events. */
  name: string;
  /** A token is scoped to one project and at most one role. */
  scope?: { project: string; role: Role };
  /** The token's id, for a token (its streams close when it is revoked). */
  token?: string;
  /** The sign-in's hash, for a person (their streams close when they sign out). */
  session?: string;
}

export interface Grant extends Principal {
  project: string;
  role: Role;
}

export interface Access {
  readonly mode: 'local' | 'shared';
  /**
   * The caller, or null when the request carries no valid credentials.
   * Synchronous, like `require`: identity is folded into memory, and the
   * ingest path pays for every microtask (docs/architecture.md).
   */
  principal(req: IncomingMessage): Principal | null;
  /** The role of a principal in a project (a token's scope caps it), or null (also when `lost`). */
  roleIn(p: Principal, project: string): Role | null;
  /** Why a principal found earlier no longer stands (its token revoked, its sign-in ended or expired), or null while it does. */
  lost(p: Principal): string | null;
  /** The caller with at least `min` in `project`; throws 401/403 otherwise. */
  require(req: IncomingMessage, project: string, min: Role): Grant;
  /** Whether a principal administers this server (accounts, projects). Local mode: the owner does. */
  isAdmin(p: Principal): boolean;
  /** Hears role changes and removals, token changes and ended sign-ins. */
  onChange(listener: (change: AccessChange) => void): () => void;
  /**
   * The members of a project and their roles (shared mode), for apps that keep
   * their own durable copy of who may do what (Work's `member.changed`).
   * Absent, or null, where there are no members to list (local mode).
   */
  members?(project: string): { uid: string; name: string; role: Role }[] | null;
}

/** What changed in who may do what (`Access.onChange`). */
export type AccessChange =
  /** A member's role in a project changed, or they were removed from it. */
  | { kind: 'member'; project: string; uid: string; by?: { uid: string; name: string } }
  /** A token changed (revoked, or made). */
  | { kind: 'token'; token: string }
  /** A sign-in ended (signed out, or a password change ended the others). */
  | { kind: 'login'; session: string };

// A request's grant rides on the request itself, under a symbol: a WeakMap
// entry per request cost about 3 µs of CPU on the ingest path with the
// garbage collector's ephemeron work (docs/architecture.md).
const GRANT = Symbol('roost.grant');
type Granted = IncomingMessage & { [GRANT]?: Grant };

/**
 * The grant the access layer gave this request (set by `require`). Services
 * read the caller's identity and project from here, so the transport decides
 * who posted, never the payload.
 */
export function grantOf(req: IncomingMessage): Grant | undefined {
  return (req as Granted)[GRANT];
}

export function rememberGrant(req: IncomingMessage, g: Grant): Grant {
  (req as Granted)[GRANT] = g;
  return g;
}

/** Local mode's one person: the name every app shows for them (one constant, see docs/security.md). */
export const LOCAL_OWNER: Principal = Object.freeze({ kind: 'local', uid: 'local', name: 'local owner' });

const localGrants = new Map<string, Grant>();

/** The local owner's grant in a project (one shared, frozen object per project). */
export function localGrant(project: string): Grant {
  let g = localGrants.get(project);
  if (!g) localGrants.set(project, (g = Object.freeze({ ...LOCAL_OWNER, project, role: 'owner' as const })));
  return g;
}

/** Local mode: loopback only, no accounts; the person at the machine owns everything. */
export class LocalAccess implements Access {
  readonly mode = 'local' as const;

  principal(): Principal {
    return LOCAL_OWNER;
  }

  roleIn(): Role {
    return 'owner';
  }

  lost(): null {
    return null;
  }

  require(req: IncomingMessage, project: string): Grant {
    return rememberGrant(req, localGrant(project));
  }

  isAdmin(): boolean {
    return true;
  }

  onChange(): () => void {
    return () => {};
  }
}

export const DEFAULT_PROJECT = 'default';
export const PROJECT_PARAM = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The project a request is about, decided once for every app: a token names
 * its own project (asking for another one is refused); a person (or local
 * mode) names it with `?project=` or the `Roost-Project` header, and without
 * either it is the `default` project, so local mode's URLs keep working.
 */
export function projectOf(req: IncomingMessage, url: URL, p: Principal | null): string {
  const header = req.headers['roost-project'];
  // `searchParams` builds a URLSearchParams on first use: only when there is a query.
  const asked = (url.search === '' ? null : url.searchParams.get('project')) ?? (typeof header === 'string' ? header : null);
  if (asked !== null && !PROJECT_PARAM.test(asked)) throw new HttpError(400, 'bad_request', 'a project id is 1 to 64 lowercase letters, digits, "-" or "_"');
  if (p?.scope) {
    if (asked !== null && asked !== p.scope.project) throw new HttpError(403, 'forbidden', `this token is scoped to project "${p.scope.project}", not "${asked}"`);
    return p.scope.project;
  }
  return asked ?? DEFAULT_PROJECT;
}

/** Shared helper for implementations: the 401/403 decision with readable messages. */
export function decide(p: Principal | null, role: Role | null, project: string, min: Role): Grant {
  if (!p) throw new HttpError(401, 'unauthorized', 'sign in, or send a token (Authorization: Bearer ...)');
  if (!role) throw new HttpError(403, 'forbidden', `you are not a member of project "${project}"`);
  if (!roleAtLeast(role, min)) throw new HttpError(403, 'forbidden', `this needs the ${min} role in project "${project}"; you are ${role === 'viewer' ? 'a' : 'an'} ${role}`);
  return { ...p, project, role };
}

/**
 * A principal as the log names who asked or reported (approvals' `askedBy`,
 * usage's `reporter`): a token by its id (an agent's hook or `roost mcp`
 * holds one), a person by their uid; '' in local mode (one person at the
 * machine, who answers their own agents).
 */
export function principalKey(p: Principal | null): string {
  if (!p || p.kind === 'local') return '';
  return p.kind === 'token' && p.token ? `token:${p.token}` : `person:${p.uid}`;
}
