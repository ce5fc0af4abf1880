// The flock's crows on the project's floor (docs/flock.md, "On the floor").
//
// Each crow is one floor agent, `flock:<crow>`, in the room of the nest it
// flies for ("flock · todo"), source `flock`, role its persona's. Its status
// is derived from the folded flock, never stored here:
// - `working` while one of its flights is in the air (the activity names the item);
// - `waiting` while an item's triage or output it asked a verdict for waits
//   (the event a held tool approval writes: `tool`, status `waiting`);
// - `done` otherwise (after a landing or a verdict); its parent is `flock`
//   (the flock itself, never an agent on the floor), so the floor's helper
//   lifetime walks it off 45 s later.
//
// Only the node driving the flock reports, through FloorService.post (the
// checks, caps and append of POST /events). What changed since the last
// report is sent at most every REPORT_MS (one post for every crow touched
// meanwhile, each as it stands then), not once per folded run: a busy flock
// folds hundreds of runs a second, and its crows' statuses are for a person's eyes.

import { crowAgentId } from '../../core/attention.js';
import type { FloorEvent } from '../../core/floor.js';
import { itemPhase, unfinishedLists, type FlockState, type VerdictTarget } from '../../core/flock.js';
import { personaOf } from '../../core/personas.js';
import type { FloorService } from '../floor.js';

export const FLOCK_SOURCE = 'flock';
/** The parent of every crow: the flock, which is not an agent on the floor. */
export const FLOCK_PARENT = 'flock';

/** A crow's floor agent id (the floor is the project's, so this is stable per project and crow): src/core/attention.ts, which maps a verdict to its crow's desk. */
export { crowAgentId } from '../../core/attention.js';

/** The room of a nest: `todo` → id `flock:todo`, name "flock · todo". */
export function nestTeam(s: FlockState, nest_id: string): { id: string; name: string } {
  return { id: `flock:${nest_id}`, name: `flock · ${s.nests.get(nest_id)?.name ?? nest_id}` };
}

interface Waiting {
  crow: string;
  nest_id: string;
  item_id: string;
  target: VerdictTarget;
  text: string;
}

type Obj = Record<string, unknown>;

/** How long changes gather before they are reported (one post). */
export const REPORT_MS = 100;

const line = (s: string): string => (s.length > 280 ? s.slice(0, 279) + '…' : s);

export class CrowsOnFloor {
  /** Verdicts waiting for a person, by `<item>\0<target>`: who asked. */
  private waiting = new Map<string, Waiting>();
  /** Each crow's latest nest and what it last did (the activity of a crow that is done). */
  private last = new Map<string, { nest_id: string; did: string }>();
  /** What each crow was last reported as (`status|activity|team`): unchanged crows are not sent again. */
  private sent = new Map<string, string>();
  private touched = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  /** The report gathering changes, and what it reports from. */
  private timer: NodeJS.Timeout | null = null;
  private pending: { s: FlockState; report: boolean } | null = null;

  constructor(private floor: () => Promise<FloorService>) {}

  /** A folded, accepted flock entry (on every node: the waiting verdicts are kept everywhere). */
  seen(s: FlockState, b: Obj): void {
    const crow = typeof b.crow === 'string' ? b.crow : '';
    const item_id = typeof b.item_id === 'string' ? b.item_id : '';
    const list = typeof b.list_id === 'string' ? s.lists.get(b.list_id) : undefined;
    const nest_id = list?.nest_id ?? (typeof b.nest_id === 'string' ? b.nest_id : '');
    const item = list?.items.find((i) => i.item_id === item_id);
    switch (b.type) {
      case 'crow.flying':
      case 'nest.flying':
        this.did(crow, nest_id, '');
        break;
      case 'crow.landed':
        this.did(crow, nest_id, `Back from ${item_id}${b.ok ? '' : ' without an answer'}`);
        break;
      case 'nest.landed':
        this.did(crow, nest_id, `Answered ${String(b.msg_id)} in ${nest_id}${b.ok ? '' : ' (failed)'}`);
        break;
      case 'item.triaged':
        if (b.needs_approval === true && item) this.wait({ crow: 'Sentry', nest_id, item_id, target: 'triage', text: item.text });
        break;
      case 'item.answered': {
        const asker = Array.isArray(b.crows) && typeof b.crows[0] === 'string' ? b.crows[0] : '';
        if (b.needs_approval === true && item && asker) this.wait({ crow: asker, nest_id, item_id, target: 'output', text: item.text });
        break;
      }
      case 'verdict': {
        const w = this.waiting.get(`${item_id}\u0000${String(b.target)}`);
        if (w) this.unwait(w, `The ${w.target} of ${item_id}: ${String(b.verdict)}`);
        break;
      }
      case 'item.skipped':
        for (const t of ['triage', 'output']) {
          const w = this.waiting.get(`${item_id}\u0000${t}`);
          if (w) this.unwait(w, `${item_id} skipped`);
        }
        break;
      case 'list.finished':
        for (const it of list?.items ?? []) for (const t of ['triage', 'output']) {
          const w = this.waiting.get(`${it.item_id}\u0000${t}`);
          if (w) this.unwait(w, `${it.item_id} closed`);
        }
        break;
      default:
        break;
    }
  }

  private did(crow: string, nest_id: string, did: string): void {
    if (!crow) return;
    const prev = this.last.get(crow);
    this.last.set(crow, { nest_id: nest_id || prev?.nest_id || 'todo', did: did || prev?.did || '' });
    this.touched.add(crow);
  }

  private wait(w: Waiting): void {
    this.waiting.set(`${w.item_id}\u0000${w.target}`, w);
    this.touched.add(w.crow);
  }

  private unwait(w: Waiting, did: string): void {
    this.waiting.delete(`${w.item_id}\u0000${w.target}`);
    this.did(w.crow, w.nest_id, did);
  }

  /**
   * This node took the lease: the waiting verdicts are read again from the
   * folded lists (a restart folded them without `seen`), and every crow the
   * floor shows or the flock has in the air is reported afresh.
   */
  resync(s: FlockState, floor: FloorService | null): void {
    this.waiting.clear();
    this.sent.clear();
    for (const id of unfinishedLists(s)) {
      const list = s.lists.get(id)!;
      for (const item of list.items) {
        const phase = itemPhase(item);
        if (phase === 'triage_verdict' && item.triage?.needs_approval) this.wait({ crow: 'Sentry', nest_id: list.nest_id, item_id: item.item_id, target: 'triage', text: item.text });
        if (phase === 'output_verdict' && item.answer?.needs_approval && item.answer.crows[0]) this.wait({ crow: item.answer.crows[0], nest_id: list.nest_id, item_id: item.item_id, target: 'output', text: item.text });
      }
    }
    for (const key of s.airborne.keys()) this.touched.add(key.slice(key.lastIndexOf('\u0000') + 1));
    for (const a of floor?.state.agents.values() ?? []) if (a.source === FLOCK_SOURCE && a.id.startsWith('flock:') && a.leftAt === null) this.touched.add(a.id.slice(6));
  }

  /** Reports the crows touched since the last report within REPORT_MS (only the driving node calls it with `report`). */
  flush(s: FlockState, report: boolean): void {
    if (this.touched.size === 0) return;
    this.pending = { s, report };
    if (this.timer) return;
    this.timer = setTimeout(this.report, REPORT_MS);
    this.timer.unref();
  }

  private report = (): void => {
    this.timer = null;
    const p = this.pending;
    this.pending = null;
    if (p) this.flushNow(p.s, p.report);
  };

  /** Reports the crows touched since the last report, now. */
  flushNow(s: FlockState, report: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    if (this.touched.size === 0) return;
    const crows = [...this.touched];
    this.touched.clear();
    if (!report) return;
    const events: FloorEvent[] = [];
    for (const crow of crows) {
      const e = this.view(s, crow);
      const sig = `${String(e.status)}|${String(e.activity)}|${(e.team as { id: string }).id}`;
      if (this.sent.get(crow) === sig) continue;
      this.sent.set(crow, sig);
      events.push(e);
    }
    if (events.length === 0) return;
    this.queue = this.queue
      .then(async () => (await this.floor()).post(events, { lazy: true }))
      .catch((e) => {
        // Not reported: sent again with the crow's next change.
        for (const ev of events) this.sent.delete(String((ev.agent as { name: string }).name));
        console.error('roost: the flock could not report its crows to the floor', e);
      });
  }

  /** Reports what is gathering now; resolves once every report made so far is appended (tests, shutdown). */
  settled(): Promise<void> {
    if (this.pending) this.flushNow(this.pending.s, this.pending.report);
    return this.queue;
  }

  /** A crow's floor event now: working, waiting or done. */
  private view(s: FlockState, crow: string): FloorEvent {
    const persona = personaOf(s.spun.get(crow)?.persona ?? crow);
    const base = { agent: { id: crowAgentId(crow), name: crow, role: persona?.role ?? 'worker', source: FLOCK_SOURCE }, parent: FLOCK_PARENT };
    for (const key of s.airborne.keys()) {
      if (!key.endsWith(`\u0000${crow}`)) continue;
      const [kind, id, sub] = key.split('\u0000');
      if (kind === 'L') {
        const list = s.lists.get(id);
        const item = list?.items.find((i) => i.item_id === sub);
        if (!list || !item) continue;
        const f = item.flights.get(crow);
        const what = f?.role === 'triage' ? 'Triaging' : f?.role === 'merge' ? 'Merging' : 'Flying';
        return { type: 'status', ...base, team: nestTeam(s, list.nest_id), status: 'working', activity: line(`${what} ${sub}${f?.subtask ? ` (subtask ${f.subtask})` : ''}: ${item.text}`) };
      }
      return { type: 'status', ...base, team: nestTeam(s, id), status: 'working', activity: line(`Answering ${sub} in ${id}`) };
    }
    for (const w of this.waiting.values()) {
      if (w.crow !== crow) continue;
      // The event a held tool approval writes (src/integrations: waitingEvent).
      return { type: 'tool', ...base, team: nestTeam(s, w.nest_id), tool: w.target, status: 'waiting', activity: line(`Waiting for approval: the ${w.target} of ${w.item_id}: ${w.text}`) };
    }
    const last = this.last.get(crow);
    return { type: 'status', ...base, team: nestTeam(s, last?.nest_id ?? 'todo'), status: 'done', activity: line(last?.did ?? '') };
  }
}
