// A shared-mode server for tests (an owner account made before it starts) and
// the few calls every shared-mode test makes: sign in, make a member, mint a
// token, call an endpoint as someone, open a stream as someone.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../../src/storage/index.js';
import { startRoost, type Roost, type RoostConfig } from '../../src/server/index.js';
import { createOwner } from '../../src/cli/owner.js';
import { tempDir } from './server.js';
import { openSse, type SseReader } from './sse.js';

export type Res = { status: number; json: any; headers: Headers };

/** Somebody calling the server: a cookie (a person), a bearer token, or nothing. */
export interface Caller {
  cookie?: string;
  token?: string;
  uid?: string;
  /** A token's id (for revoking it). */
  tokenId?: string;
}

export const ANON: Caller = {};

export type SharedServer = Roost & { owner: Caller };

export async function sharedServer(cfg: Partial<RoostConfig> = {}): Promise<SharedServer> {
  const dir = tempDir();
  const store = new SqliteStore({ path: join(dir, 'roost.db') });
  await createOwner(store, 'ann', 'ann-password', 'Ann');
  const roost = await startRoost(store, { port: 0, ...cfg });
  const owner = await login(roost.url, 'ann', 'ann-password');
  return Object.assign(roost, { owner });
}

export function headersOf(who: Caller, url: string, method = 'GET'): Record<string, string> {
  const headers: Record<string, string> = {};
  if (who.cookie) {
    headers.cookie = who.cookie;
    // A browser sends its page's Origin with every write.
    if (method !== 'GET') headers.origin = url;
  }
  if (who.token) headers.authorization = `Bearer ${who.token}`;
  return headers;
}

export async function call(url: string, who: Caller, method: string, path: string, body?: unknown): Promise<Res> {
  const headers = headersOf(who, url, method);
  // Every write carries a JSON body (a bodiless one an empty object), as our clients send.
  if (method !== 'GET') headers['content-type'] = 'application/json';
  // And an Idempotency-Key, as our clients send (Work refuses a mutation without one).
  if (method === 'POST') headers['idempotency-key'] = crypto.randomUUID();
  const r = await fetch(url + path, { method, headers, body: method === 'GET' ? undefined : JSON.stringify(body ?? {}) });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, headers: r.headers };
}

export async function login(url: string, loginName: string, password: string): Promise<Caller> {
  const r = await call(url, ANON, 'POST', '/auth/login', { login: loginName, password });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const m = /roost_session=([^;]+)/.exec(r.headers.get('set-cookie') ?? '');
  assert.ok(m, 'the sign-in sets the session cookie');
  return { cookie: `roost_session=${m[1]}`, uid: r.json.user.uid };
}

export async function makeUser(srv: SharedServer, loginName: string, project: string | null, role?: string): Promise<Caller> {
  const r = await call(srv.url, srv.owner, 'POST', '/users', { login: loginName, name: loginName[0].toUpperCase() + loginName.slice(1), password: `${loginName}-password`, ...(project ? { project, role } : {}) });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return login(srv.url, loginName, `${loginName}-password`);
}

export async function mintToken(srv: Roost, who: Caller, project: string, role: string, label = 'test'): Promise<Caller> {
  const r = await call(srv.url, who, 'POST', '/tokens', { project, role, label });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return { token: r.json.secret, uid: who.uid, tokenId: r.json.token?.id ?? r.json.id };
}

export function stream(url: string, who: Caller, path: string): Promise<SseReader> {
  return openSse(url + path, headersOf(who, url));
}

/** Opens a stream expecting a refusal; resolves with its status. */
export async function refused(url: string, who: Caller, path: string): Promise<number> {
  const r = await fetch(url + path, { headers: { accept: 'text/event-stream', ...headersOf(who, url) } });
  await r.body?.cancel();
  return r.status;
}
