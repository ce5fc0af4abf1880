// A Work server for tests: the real WorkService and its routes over a real
// SQLite file, behind a small multi-person Access (`Authorization: Bearer
// <uid>`, roles per project set by the test) so roles, removals and stream
// closing can be exercised before and independently of the accounts layer.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { SqliteStore } from '../../src/storage/index.js';
import { Router } from '../../src/server/http.js';
import { mountRoutes } from '../../src/server/route.js';
import { WorkService } from '../../src/server/work/service.js';
import { FleetService } from '../../src/server/fleet.js';
import { decide, type Access, type AccessChange, type Grant, type Principal, type Role } from '../../src/server/access.js';
import { Live } from '../../src/server/live.js';
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
  setRole(project: string, uid: string, role: Role | null): void {
    let m = this.roles.get(project);
    if (!m) this.roles.set(project, (m = new Map()));
    if (role) m.set(uid, role);
    else m.delete(uid);
    for (const l of this.listeners) l({ kind: 'member', project, uid });
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
  store: SqliteStore;
  dataDir: string;
  close(): Promise<void>;
}

export async function workServer(access: Access, projects = ['alpha', 'beta'], dataDir = tempDir()): Promise<WorkServer> {
  const store = new SqliteStore({ path: join(dataDir, 'roost.db') });
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
  const router = mountRoutes(new Router(), work.routes(), { access, space: (id, p) => work.needSpace(id, p) });
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
    post: (path: string, body: unknown = {}, key?: string) => call('POST', path, body, key ? { 'idempotency-key': key } : {}),
    auth: uid ? { authorization: `Bearer ${uid}` } : ({} as Record<string, string>),
  };
}
