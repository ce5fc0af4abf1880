// What is worth a notification, decided in one place: every source of a
// notice is wired here, each from the fold that already knows it happened,
// never from a handler (a decision or an event that came in on another node
// is folded here too; the push service's claim makes one node send it).
//
//   kind      source                                    opens
//   approval  approvals fold: a request of kind tool,   /inbox/<id>  (the decision)
//             fleet or verdict waits
//   ask       approvals fold: a request of kind ask     /inbox/<id>
//             (ask_owner) waits
//   failed    floor fold: an agent's phase became       /?agent=<id> (the floor)
//             failed (status error)
//   done      floor fold: an agent's phase became done  /?agent=<id>
//             (Claude Code's Stop, a Work command done,
//             a flock agent's item done)
//   finished  flock: list.finished folded               /flock?list=<id>
//
// Every notice names its project, and its page carries `?project=` when it
// is not the default one.

import type { Approval } from '../../core/approvals.js';
import { waitingForYou } from '../../core/attention.js';
import { phaseOf, transitionNotice, type AgentPhase } from '../../core/notify.js';
import type { ApprovalService } from '../approvals.js';
import type { FloorService } from '../floor.js';
import type { FlockService } from '../flock/service.js';
import type { Notice, PushService } from './service.js';

/** `path` in `project`: `?project=` added unless it is the default one. */
export function pageIn(path: string, project: string): string {
  return project === 'default' ? path : `${path}${path.includes('?') ? '&' : '?'}project=${encodeURIComponent(project)}`;
}

/** Agents whose last phase one floor's notices remember. */
const PHASES_MAX = 10_000;

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

export class Notices {
  /** Sends in flight (close waits for them; tests and the bench may too). */
  private inflight = new Set<Promise<unknown>>();

  constructor(private push: PushService) {}

  private send(n: Notice): void {
    const p = this.push.notify(n).catch((e) => console.error('roost: a push notice was not sent', e));
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /** Resolves when every send started so far is done. */
  async settled(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /** A project's approvals: every request that waits (an ask is its own kind). */
  approvals(project: string, s: ApprovalService): void {
    s.onRequested((a: Approval) => {
      const ask = a.kind === 'ask';
      const who = clip(a.askerName || a.asker, 60);
      this.send({
        kind: ask ? 'ask' : 'approval',
        project,
        key: `approval:${project}:${a.id}`,
        title: ask ? `${who} asks you` : `${who} waits for you`,
        body: ask ? `A question needs your answer (${project}).` : `Allow ${clip(a.tool, 60)}? (${project})`,
        url: pageIn(`/inbox/${encodeURIComponent(a.id)}`, project),
        tag: `approval:${a.id}`,
        at: a.requestedAt,
        // The one waiting list (src/core/attention.ts): what the nav badge and the tab's title count.
        waiting: waitingForYou(s.state).length,
        // Kept no longer than the request waits: after its window it is denied anyway.
        ttl: Math.max(1, Math.ceil((a.deadline - Date.now()) / 1000)),
        urgency: 'high',
      });
    });
  }

  /**
   * A project's floor: an agent that finished or failed, once per transition
   * (src/core/notify.ts): a burst of events in the same phase sends nothing
   * more. The last phase is kept per agent on this node (bounded: the oldest
   * goes past PHASES_MAX); a node that starts folds the log first, so it
   * knows each agent's phase before any fresh notice.
   */
  floor(project: string, f: FloorService): void {
    const phases = new Map<string, AgentPhase>();
    f.onStatus((agent, status, at) => {
      const next = phaseOf(status);
      const kind = transitionNotice(phases.get(agent), next);
      phases.delete(agent);
      phases.set(agent, next);
      if (phases.size > PHASES_MAX) phases.delete(phases.keys().next().value!);
      if (!kind) return;
      const a = f.state.agents.get(agent);
      // A sub-agent's end is its session's business: its session's own Stop says the work is done.
      if (kind === 'done' && a && a.parent !== null) return;
      const name = clip(a?.name || agent, 60);
      this.send({
        kind,
        project,
        key: `${kind}:${project}:${agent}:${at}`,
        title: kind === 'done' ? `${name} is done` : `${name} failed`,
        body: kind === 'done' ? `It finished its turn (${project}).` : `Its status is error (${project}).`,
        url: pageIn(`/?agent=${encodeURIComponent(agent)}`, project),
        tag: `${kind}:${agent}`,
        at,
        ttl: 3600,
        urgency: 'normal',
      });
    });
  }

  /** A project's flock: a list that finished. */
  flock(project: string, f: FlockService): void {
    f.onListFinished((list, at) => {
      this.send({
        kind: 'finished',
        project,
        key: `finished:${project}:${list}`,
        title: 'A list is finished',
        body: `Every item of list ${clip(list, 60)} is done or skipped (${project}).`,
        url: pageIn(`/flock?list=${encodeURIComponent(list)}`, project),
        tag: `finished:${list}`,
        at,
        ttl: 24 * 3600,
        urgency: 'normal',
      });
    });
  }
}
