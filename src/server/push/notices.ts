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
//   done /    Work: an execution.finished committed on  /work
//   failed    this node (done or failed), once per
//             execution
//   budget    usage: a budget.crossed committed on this  /usage
//             node (80% and 100%, once per budget
//             version and threshold)
//
// Every notice names its project, and its page carries `?project=` when it
// is not the default one.

import type { Approval } from '../../core/approvals.js';
import { waitingForYou } from '../../core/attention.js';
import { phaseOf, transitionNotice, type AgentPhase } from '../../core/notify.js';
import type { ApprovalService } from '../approvals.js';
import type { FloorService } from '../floor.js';
import type { FlockService } from '../flock/service.js';
import type { EventStore } from '../../storage/types.js';
import { USAGE_STREAM } from '../usage.js';
import type { Notice, PushService } from './service.js';

/** `path` in `project`: `?project=` added unless it is the default one. */
export function pageIn(path: string, project: string): string {
  return project === 'default' ? path : `${path}${path.includes('?') ? '&' : '?'}project=${encodeURIComponent(project)}`;
}

const WORK_PREFIX = 'work:';

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

  /**
   * Commits this node makes that are a transition of their own: a Work
   * execution that finished or failed, a budget threshold crossed. Each is
   * logged once (the folds and the store's idempotency see to it), so each
   * is one notice. Returns the way to stop listening.
   */
  commits(store: EventStore): () => void {
    return store.onCommit((stream, _head, entries) => {
      if (!entries) return;
      const work = stream.startsWith(WORK_PREFIX);
      const usage = stream === USAGE_STREAM || stream.startsWith(USAGE_STREAM + ':');
      if (!work && !usage) return;
      const project = work ? stream.slice(WORK_PREFIX.length) : stream === USAGE_STREAM ? 'default' : stream.slice(USAGE_STREAM.length + 1);
      for (const e of entries) {
        if (e.type !== 'execution.finished' && e.type !== 'budget.crossed') continue;
        let o: Record<string, unknown>;
        try {
          o = (e.value ?? JSON.parse(e.body)) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (e.type === 'execution.finished' && work) {
          const id = typeof o.execution === 'string' ? o.execution : typeof o.command === 'string' ? o.command : null;
          if (!id) continue;
          const kind = o.status === 'failed' ? 'failed' : 'done';
          this.send({
            kind,
            project,
            key: `work:${project}:${id}`,
            title: kind === 'done' ? 'A Work command is done' : 'A Work command failed',
            body: `Its result is in the conversation (${project}).`,
            url: pageIn('/work', project),
            tag: `work:${id}`,
            at: e.at,
            ttl: 3600,
            urgency: 'normal',
          });
        } else if (e.type === 'budget.crossed' && usage) {
          const th = o.threshold === 100 ? 100 : 80;
          // Which budget (src/core/usage.ts, "Budgets"): `<scope>:<target>:<period>`; none is the project's total.
          const bkey = typeof o.budget === 'string' ? o.budget.slice(0, 200) : '';
          const [scope, ...rest] = bkey ? bkey.split(':') : ['project'];
          const period = rest.length ? rest.pop() : 'total';
          const whose = scope === 'team' ? `Team ${clip(rest.join(':'), 60)}` : scope === 'agent' ? `Agent ${clip(rest.join(':'), 60)}` : `Project ${clip(project, 60)}`;
          const day = period === 'day' ? ' for today' : '';
          this.send({
            kind: 'budget',
            project,
            key: bkey ? `budget:${project}:${bkey}:${String(o.version).slice(0, 20)}:${String(o.day ?? '').slice(0, 10)}:${th}` : `budget:${project}:${String(o.version).slice(0, 20)}:${th}`,
            title: th === 100 ? 'The budget is spent' : 'The budget is 80% spent',
            body: `${whose} reached ${th}% of its budget${day}${th === 100 ? '; its agents are paused until an owner raises or lifts it' : ''}.`,
            url: pageIn('/cost', project),
            tag: `budget:${project}`,
            at: e.at,
            ttl: 24 * 3600,
            urgency: th === 100 ? 'high' : 'normal',
          });
        }
      }
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
