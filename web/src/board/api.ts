// What a member's browser posts to the fleet board. Every write is a POST
// whose answer only says whether it was accepted: what it changed arrives
// like everyone else's changes, on the thread's stream, folded by the shared
// fold. The page never applies its own writes locally (no optimistic copy):
// the board and the chat a member sees are the ones everybody sees.
//
// Identity: the server stamps `name`, `uid` and `ts` from the transport. In
// local mode a tab may label itself with the `Roost-Name` header (the name
// its person typed in the board's bar); with accounts, the session cookie
// rides along and the label is ignored by the server.

import { SESSION_ID_PATTERN, type SessionFlavor } from '../../../src/core/fleet.js';

export type Posted = { ok: true; duplicate: boolean } | { ok: false; status: number; kind: string; message: string };

const NAME_KEY = 'roost.name';

export function myName(): string {
  try {
    return localStorage.getItem(NAME_KEY) ?? '';
  } catch {
    return '';
  }
}

export function setMyName(name: string): void {
  try {
    if (name.trim()) localStorage.setItem(NAME_KEY, name.trim());
    else localStorage.removeItem(NAME_KEY);
  } catch {
    // Private mode without storage: the name lasts as long as the page.
  }
}

function randomKey(): string {
  const a = new Uint8Array(9);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(36).padStart(2, '0')).join('').slice(0, 12);
}

/**
 * A new session id from its human name: readable in URLs and logs, unique by
 * a random tail, always inside the id pattern.
 */
export function newSessionId(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const id = `${slug || 'session'}-${randomKey().slice(0, 6)}`;
  return SESSION_ID_PATTERN.test(id) ? id : `session-${randomKey()}`;
}

/** Set once the server says it runs in shared mode: the label is then meaningless and not sent. */
let sharedMode = false;

async function postJson(url: string, body: unknown, name = myName()): Promise<Posted> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': randomKey() };
  if (name && !sharedMode) headers['roost-name'] = name;
  let r: Response;
  try {
    r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  } catch {
    return { ok: false, status: 0, kind: 'network', message: 'the server cannot be reached; try again' };
  }
  let j: { message?: unknown; kind?: unknown; duplicate?: unknown } = {};
  try {
    j = await r.json();
  } catch {
    // A proxy's HTML error page: the status says enough.
  }
  if (r.ok) return { ok: true, duplicate: j.duplicate === true };
  return {
    ok: false,
    status: r.status,
    kind: typeof j.kind === 'string' ? j.kind : 'error',
    message: typeof j.message === 'string' ? j.message : `the server answered ${r.status}`,
  };
}

const board = (thread: string) => `/fleet/${encodeURIComponent(thread)}`;

/** The project of the page (`?project=` in its URL, shared mode); the default one when absent. */
export function projectOfPage(): string {
  const p = new URLSearchParams(location.search).get('project') ?? '';
  return /^[A-Za-z0-9_-]{1,64}$/.test(p) ? p : '';
}

/** The project rides every request as `?project=` (the streams cannot carry a header). */
function scoped(path: string, project = projectOfPage()): string {
  return project ? `${path}?project=${encodeURIComponent(project)}` : path;
}

/** Posts one durable session event as this member (prompt, decision, close), on the board of `project` (default: the page's). */
export function postSessionEvent(thread: string, event: Record<string, unknown>, project?: string): Promise<Posted> {
  return postJson(scoped(board(thread), project), event);
}

export function prompt(thread: string, id: string, text: string): Promise<Posted> {
  return postSessionEvent(thread, { type: 'session.prompt', id, text });
}

/**
 * A member's decision on a pending approval: the board's `session.approval`
 * post, the one path for the board, the approvals inbox and the Work view
 * (which names the board's project, since its page has no `?project=`). The
 * server checks the role (editor) and the first decision wins: a later one
 * is a 409 that says who was first.
 */
export function decide(thread: string, id: string, rid: string, allow: boolean, project?: string): Promise<Posted> {
  return postSessionEvent(thread, { type: 'session.approval', id, rid, state: allow ? 'allowed' : 'denied' }, project);
}

/** Closing is a member's `session.end`: the board shows it closed at once, and the bridge ends the process and removes a scoped worktree. */
export function close(thread: string, id: string): Promise<Posted> {
  return postSessionEvent(thread, { type: 'session.end', id, reason: 'closed' });
}

export interface StartRequest {
  id: string;
  session: string;
  flavor: SessionFlavor;
  root: string;
}

/**
 * Asks the thread's workstation bridge to start a session. The board shows it
 * once the bridge has started the process and posted `session.spawn` with
 * this id.
 */
export function requestStart(thread: string, req: StartRequest): Promise<Posted> {
  const body: Record<string, unknown> = { type: 'request.start', id: req.id, session: req.session, flavor: req.flavor };
  if (req.root) body.root = req.root;
  return postJson(scoped(`${board(thread)}/requests`), body);
}

export type Me = { mode: 'local' | 'shared'; name: string } | { mode: 'unknown'; name: '' };

/** Who the server takes this browser for (`GET /auth/me`); `unknown` when it cannot say (not signed in, or an older server). */
export async function whoAmI(): Promise<Me> {
  try {
    const r = await fetch('/auth/me', { headers: { accept: 'application/json' } });
    if (!r.ok) return { mode: 'unknown', name: '' };
    const b = (await r.json()) as { mode?: unknown; user?: { name?: unknown } };
    const name = typeof b.user?.name === 'string' ? b.user.name : '';
    sharedMode = b.mode === 'shared';
    return sharedMode ? { mode: 'shared', name } : { mode: 'local', name };
  } catch {
    return { mode: 'unknown', name: '' };
  }
}
