// What enqueues a webhook delivery, decided in one place (docs/webhooks.md,
// "What is sent"): each kind from the fold that already knows it happened,
// as the push notices are (src/server/push/notices.ts). Every event is told
// with a key that names it, so a node replaying its log after a restart, or
// every node of several folding the same event, enqueues it once per target.
//
//   kind               source
//   approval.waiting   approvals fold: a request waits for a person
//   approval.decided   approvals fold: a request was allowed, denied, expired or withdrawn
//   work.finished      a Work command's execution finished (done or failed)
//   list.finished      flock: a list's items are all done or skipped
//   session.stopped    floor: a top-level agent's status became done (Claude Code's Stop)

import type { Approval } from '../../core/approvals.js';
import type { WebhookKind } from '../../core/webhooks.js';
import type { EventStore } from '../../storage/types.js';
import type { ApprovalService } from '../approvals.js';
import type { FloorService } from '../floor.js';
import type { FlockService } from '../flock/service.js';
import type { WebhookService } from './service.js';

const WORK_PREFIX = 'work:';
const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

export class WebhookTriggers {
  private inflight = new Set<Promise<unknown>>();
  private unlisten: (() => void) | null = null;

  constructor(private hooks: WebhookService) {}

  private tell(project: string, kind: WebhookKind, key: string, at: number, data: Record<string, unknown>, text: string): void {
    // Nothing to do (the common case) costs one scan of the targets, no promise.
    if (this.hooks.targetsFor(project, kind).length === 0) return;
    const p = this.hooks.enqueue(project, kind, `${kind}:${project}:${key}`, at, data, text).catch((e) => console.error('roost: a webhook delivery was not enqueued', e));
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /** Resolves when every enqueue started so far is done. */
  async settled(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  stop(): void {
    this.unlisten?.();
  }

  approvals(project: string, s: ApprovalService): void {
    const data = (a: Approval) => ({ approval: a.id, kind: a.kind, asker: a.asker, asker_name: a.askerName, tool: a.tool, input: clip(a.input, 500), status: a.status, requested_at: a.requestedAt });
    s.onRequested((a) => this.tell(project, 'approval.waiting', a.id, a.requestedAt, data(a), `${clip(a.askerName || a.asker, 60)} waits for you: allow ${clip(a.tool, 60)}? (${project})`));
    s.onClosed((a) =>
      this.tell(project, 'approval.decided', a.id, a.decidedAt ?? a.requestedAt, { ...data(a), decided_by: a.decidedBy, decided_at: a.decidedAt, reason: clip(a.reason, 500) }, `${clip(a.tool, 60)} for ${clip(a.askerName || a.asker, 60)}: ${a.status}${a.decidedBy ? ` by ${clip(a.decidedBy, 60)}` : ''} (${project})`),
    );
  }

  floor(project: string, f: FloorService): void {
    f.onStatus((agent, status, at) => {
      if (status !== 'done') return;
      const a = f.state.agents.get(agent);
      if (!a || a.parent !== null) return; // a sub-agent's end is its session's business
      this.tell(project, 'session.stopped', `${agent}:${at}`, at, { agent, name: a.name, source: a.source, team: a.team, status }, `${clip(a.name || agent, 60)} finished (${project})`);
    });
  }

  flock(project: string, f: FlockService): void {
    f.onListFinished((list, at) => this.tell(project, 'list.finished', list, at, { list }, `List ${clip(list, 60)} is finished (${project})`));
  }

  /** Work: an execution.finished committed on this node (the node that took the bridge's report tells it). */
  work(store: EventStore): void {
    this.unlisten = store.onCommit((stream, _head, entries) => {
      if (!entries || !stream.startsWith(WORK_PREFIX)) return;
      const project = stream.slice(WORK_PREFIX.length);
      for (const e of entries) {
        if (e.type !== 'execution.finished') continue;
        const o = (e.value ?? JSON.parse(e.body)) as { command?: unknown; status?: unknown; agent?: unknown };
        if (typeof o.command !== 'string') continue;
        const status = o.status === 'failed' ? 'failed' : 'done';
        this.tell(project, 'work.finished', o.command, e.at, { command: o.command, status }, `A Work command ${status === 'done' ? 'finished' : 'failed'} (${project})`);
      }
    });
  }
}
