// A Work server for tests: the real WorkService and its routes over a real
// SQLite file, behind a small multi-person Access (`Authorization: Bearer
// <uid>`, roles per project set by the test) so roles, removals and stream
// closing can be exercised before and independently of the accounts layer.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteStore } from '../../src/storage/index.js';
import type { EventStore } from '../../src/storage/types.js';
import { Router } from '../../src/server/http.js';
import { mountRoutes } from '../../src/server/route.js';
import { WorkService } from '../../src/server/work/service.js';
import { WorkRoutes } from '../../src/server/work/routes.js';
import { FleetService } from '../../src/server/fleet/service.js';
import { decide, type Access, type AccessChange, type Grant, type Principal, type Role } from '../../src/server/access.js';
import { Live } from '../../src/server/live/index.js';
import { answer, tempDir } from './server.js';

export class TestAccess implements Access {
  readonly mode = 'shared' as const;
  roles = new Map<string, Map<string, Role>>();
  names = new Map<string, string>();
  private listeners = new Set<(c: AccessChange) => void>();

  person(uid: string, name: string): this {
    this.names.set(uid, name);
    return this;
  }
  /** Sets (or, with null, removes) a member's role; `by` is who did it, as the identity app says. */
  setRole(project: string, uid: string, role: Role | null, by?: string): void {
    let m = this.roles.get(project);
    if (!m) this.roles.set(project, (m = new Map()));
    if (role) m.set(uid, role);
    else m.delete(uid);
    const change: AccessChange = by ? { kind: 'member', project, uid, by: { uid: by, name: this.names.get(by) ?? by } } : { kind: 'member', project, uid };
    for (const l of this.listeners) l(change);
  }
  principal(req: IncomingMessage): Principal | null {
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    if (!m || !this.names.has(m[1])) return null;
    return { kind: 'person', uid: m[1], name: this.names.get(m[1])! };
  }
  roleIn(p: Principal, project: string): Role | null {
    return this.roles.get(project)?.get(p.uid) ?? null;
  }
  lost(): null {
    return null;
  }
  require(req: IncomingMessage, project: string, min: Role): Grant {
    const p = this.principal(req);
    return decide(p, p ? this.roleIn(p, project) : null, project, min);
  }
  isAdmin(): boolean {
    return false;
  }
  members(project: string): { uid: string; name: string; role: Role }[] {
    return [...(this.roles.get(project) ?? [])].map(([uid, role]) => ({ uid, name: this.names.get(uid) ?? uid, role }));
  }
  onChange(l: (c: AccessChange) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

export interface WorkServer {
  url: string;
  work: WorkService;
  /** The fleet boards a blocked execution's pointer is checked against (no routes: tests append board events to the store). */
  fleet: FleetService;
  store: EventStore;
  dataDir: string;
  close(): Promise<void>;
}

/** The store a test server runs on: SQLite in `dataDir` unless the test opens another (PostgreSQL). */
export type OpenStore = (dataDir: string) => Promise<EventStore>;
const sqlite: OpenStore = (dataDir) => Promise.resolve(new SqliteStore({ path: join(dataDir, 'roost.db') }));

export async function workServer(access: Access, projects = ['alpha', 'beta'], dataDir = tempDir(), open: OpenStore = sqlite): Promise<WorkServer> {
  const store = await open(dataDir);
  const live = new Live(access, { epoch: store.epoch });
  const channel = { ringSize: 1000, minFlushIntervalMs: 1 };
  const fleet = new FleetService(store, { live, channel, snapshotEvery: 1000, maxReplay: 100_000 });
  fleet.start();
  const work = new WorkService(store, {
    live,
    channel,
    maxReplay: 100_000,
    access,
    boards: fleet,
    projects: () => projects.map((id) => ({ id, name: id.toUpperCase() })),
  });
  await work.start();
  live.declare('fleet', fleet.scope);
  for (const [app, spec] of Object.entries(work.scopes())) live.declare(app, spec);
  const router = mountRoutes(new Router(), new WorkRoutes(work).routes(), { access, space: (id, p) => work.needSpace(id, p) });
  const server: Server = createServer(router.handle);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    work,
    fleet,
    store,
    dataDir,
    async close() {
      live.stop();
      await work.stop();
      await fleet.stop();
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await store.close();
    },
  };
}

/** JSON over HTTP as a given person (or nobody). */
export function client(base: string, uid: string | null) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(base + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(uid ? { authorization: `Bearer ${uid}` } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return answer(r);
  };
  return {
    get: (path: string) => call('GET', path),
    /** A POST with an Idempotency-Key: `key`, else a new one (every Work mutation needs one). */
    post: (path: string, body: unknown = {}, key?: string) => call('POST', path, body, { 'idempotency-key': key ?? randomUUID() }),
    /** A POST without an Idempotency-Key. */
    postBare: (path: string, body: unknown = {}) => call('POST', path, body),
    auth: uid ? { authorization: `Bearer ${uid}` } : ({} as Record<string, string>),
  };
}
