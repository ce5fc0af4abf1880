// One service per project, started on first use. The floor and the approvals
// of a project live on their own log streams; this keeps the per-project
// instances in one place so the routes ask for "the floor of this request's
// project" and nothing else.

import { grantOf, DEFAULT_PROJECT } from './access.js';
import type { IncomingMessage } from 'node:http';

export interface Startable {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

export class PerProject<T extends Startable> {
  private started = new Map<string, Promise<T>>();
  private ready = new Map<string, T>();

  constructor(private make: (project: string) => T) {}

  /** The project's instance, started on first use (a failed start is forgotten, so the next request retries). */
  get(project: string): Promise<T> {
    let p = this.started.get(project);
    if (!p) {
      const t = this.make(project);
      p = Promise.resolve(t.start()).then(
        () => {
          this.ready.set(project, t);
          return t;
        },
        (e) => {
          this.started.delete(project);
          void Promise.resolve(t.stop()).catch(() => {});
          throw e;
        },
      );
      this.started.set(project, p);
    }
    return p;
  }

  /** The instance of the project the access layer resolved for this request. */
  of(req: IncomingMessage): Promise<T> {
    return this.get(grantOf(req)?.project ?? DEFAULT_PROJECT);
  }

  /**
   * Runs `f` with this request's instance: at once when it is started (no
   * promise in between: the ingest path), else once it has started.
   */
  with(req: IncomingMessage, f: (t: T) => void | Promise<void>): void | Promise<void> {
    const t = this.ready.get(grantOf(req)?.project ?? DEFAULT_PROJECT);
    return t ? f(t) : this.of(req).then(f);
  }

  async stopAll(): Promise<void> {
    const all = await Promise.allSettled([...this.started.values()]);
    for (const r of all) if (r.status === 'fulfilled') await r.value.stop();
  }
}
