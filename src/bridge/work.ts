// The bridge as a member's Space in Work (docs/work.md): the Space's
// registration and contribution, its observations of agents, the command
// feed, and the reports of executions. It knows nothing of Claude Code; the
// bridge tells it what it runs and hears which commands are due.
//
// The cycle, and why it is safe to repeat:
// - register under a key derived from the Space's name, so a restart (or a
//   second start) finds the same Space, never a second one;
// - on every (re)connect of the feed, before anything else, report the FULL
//   snapshot of what this Space observes: agents the server still shows but
//   the bridge does not run are ended, not deleted, so a reconnect never
//   leaves ghosts and never duplicates a chat; the same report is sent when
//   the feed says the Space was contributed to the project meanwhile;
// - the feed sends the whole due set (the head of each idle agent's queue) on
//   connect and on every change, so a reconnect replays exactly what has not
//   started; `started` acknowledges a command, and the server refuses a second
//   start, so nothing runs twice;
// - every execution report is keyed by stable facts (`<command>:started`,
//   `:output:<n>`, `:blocked:<rid>`, `:finished`) and retried with its key, so
//   nothing is stored twice.

import { randomBytes } from 'node:crypto';
import type { Connection, PostResult } from './client.js';

/**
 * The key of a post that is one request of its own (a contribution, an
 * observation): new per call, the same across the connection's retries of it.
 * An execution's report is keyed by its facts instead (`<command>:<event>`).
 */
function once(): string {
  return 'w-' + randomBytes(12).toString('base64url');
}

export interface Observation {
  /** The stable key: Claude Code's session id. */
  session: string;
  label?: string;
  pane?: string;
  cwd?: string;
  origin?: 'bridge' | 'hook';
  mode?: string;
  state?: 'idle' | 'working' | 'blocked';
  ended?: boolean;
  reason?: string;
}

export interface DueCommand {
  project: string;
  id: string;
  agent: string;
  session: string;
  text: string;
  by: { uid: string; name: string };
}

export interface SpaceLinkOptions {
  conn: Connection;
  /** The Space's name; also the key of its registration. */
  name: string;
  /** The project it reports into (omitted: the Space's only contribution). */
  project?: string;
  /** Contribute the Space to `project` at start. */
  contribute?: boolean;
  log: (line: string) => void;
  /** Everything the Space observes now (the full snapshot). */
  observations: () => Observation[];
  /** The due set changed (called in order, awaited). */
  onDue: (commands: DueCommand[]) => Promise<void> | void;
}

export class SpaceLink {
  id = '';
  /** The projects the Space acts in, as the feed last said. */
  projects: string[] = [];
  private following: Promise<void> | null = null;
  /** Whether the last full snapshot reached the project (reports before it would be refused or lost). */
  private reconciled = false;

  /** Resolves once a full snapshot has reached the project (the Space's agents are visible there). */
  ready: Promise<void>;
  private markReady!: () => void;

  constructor(private opts: SpaceLinkOptions) {
    this.ready = new Promise((ok) => (this.markReady = ok));
  }

  /** The project reports go to, when the Space acts in it. */
  get target(): string | null {
    if (this.opts.project) return this.projects.includes(this.opts.project) ? this.opts.project : null;
    return this.projects.length === 1 ? this.projects[0] : null;
  }

  private body(extra: Record<string, unknown>): Record<string, unknown> {
    const target = this.target;
    return target ? { project: target, ...extra } : extra;
  }

  /**
   * Registers (and contributes, when asked). Returns false when the server
   * has no Work API (the board still works without it).
   */
  async register(): Promise<boolean> {
    const reg = await this.opts.conn.post('/api/v2/spaces', { name: this.opts.name }, `space:${this.opts.name}`);
    if (reg.status === 404) {
      this.opts.log('this server has no Work API: running board sessions only');
      return false;
    }
    if (reg.status !== 200) throw new Error(`could not register the Space "${this.opts.name}": ${reg.json?.message ?? reg.status}`);
    const id = reg.json?.id;
    if (typeof id !== 'string' || !id) throw new Error(`could not register the Space "${this.opts.name}": the server answered no id`);
    this.id = id;
    if (this.opts.contribute && this.opts.project) {
      const c = await this.opts.conn.post(`/api/v2/projects/${encodeURIComponent(this.opts.project)}/spaces`, { space: this.id }, once());
      if (c.status !== 200 && c.status !== 409) throw new Error(`could not contribute the Space to ${this.opts.project}: ${c.json?.message ?? c.status}`);
      if (c.status === 200) this.projects = [this.opts.project];
    }
    this.opts.log(`Space "${this.opts.name}" is ${this.id}${this.opts.contribute && this.opts.project ? `, contributed to ${this.opts.project}` : ''}`);
    return true;
  }

  /** Follows the command feed until the connection closes. */
  start(): void {
    let fresh = true;
    this.following = this.opts.conn.follow(`/api/v2/spaces/${encodeURIComponent(this.id)}/commands`, {
      // The feed sends frames only on change (and heartbeats every 15 s).
      idleMs: 40_000,
      onState: (s, why) => {
        if (s === 'connected') {
          fresh = true;
          this.opts.log('following the command feed');
        } else this.opts.log(`command feed down (${why}); reconnecting`);
      },
      onFrame: async (f) => {
        if (f.event !== 'commands') return;
        let data: { commands?: DueCommand[]; projects?: string[] };
        try {
          data = JSON.parse(f.data);
        } catch {
          return;
        }
        const before = this.target;
        if (Array.isArray(data.projects)) this.projects = data.projects.filter((p) => typeof p === 'string');
        // Reconcile before acting: after every connect, and when the Space starts acting in a project.
        if (fresh || this.target !== before) {
          fresh = false;
          await this.reconcile();
        }
        // Acting in no project (never contributed, revoked, or its owner removed): nothing is due here.
        await this.opts.onDue(this.reconciled && Array.isArray(data.commands) ? data.commands : []);
      },
    });
  }

  /** The full snapshot: agents missing from it are ended by the server, never deleted. */
  async reconcile(): Promise<void> {
    if (!this.target) {
      this.reconciled = false;
      return;
    }
    const r = await this.opts.conn.post(`/api/v2/spaces/${this.id}/agents`, this.body({ full: true, agents: this.opts.observations() }), once());
    this.reconciled = r.status === 200;
    if (this.reconciled) {
      this.opts.log(`reported the Space's ${this.opts.observations().length} agent(s) to ${this.target}`);
      this.markReady();
    }
  }

  /** Reports what changed about some agents (dropped while the Space acts in no project: the next full snapshot has it). */
  observe(...agents: Observation[]): void {
    if (!this.id || !this.reconciled) return;
    void this.opts.conn.post(`/api/v2/spaces/${this.id}/agents`, this.body({ agents }), once());
  }

  /** An execution's lifecycle event, keyed `<command>:<event>[:<n>]`. */
  execution(command: string, event: 'started' | 'blocked' | 'resumed' | 'output' | 'finished', extra: Record<string, unknown> = {}, key = `${command}:${event}`): Promise<PostResult> {
    return this.opts.conn.post(`/api/v2/spaces/${this.id}/executions`, { command, event, ...extra }, key);
  }

  /** Lossy terminal text of an agent: one attempt, failures dropped. */
  terminal(session: string, data: string): void {
    if (!this.id || !this.reconciled) return;
    void this.opts.conn.postOnce(`/api/v2/spaces/${this.id}/terminal`, { session, data: data.slice(0, 8000) }).catch(() => undefined);
  }

  /** Waits for the feed loop to end (after the connection is closed). */
  async stopped(): Promise<void> {
    await this.following?.catch(() => undefined);
  }
}
