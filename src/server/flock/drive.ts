// The list driver: one pass over a list reads the fold's queries (itemPhase,
// toFly, pickCrows, draftAnswer) and appends each item's next step; flights
// are flown against the list's budget (reserved while in the air), banter
// is planned, and a list is finished once every item is closed.

import { type FlockList, leaseHolder, flockTs, itemPhase, draftAnswer, outputNeedsApproval, type FlockItem, type Triage, toFly, FLOCK_LIMITS, pickCrows, triageNeedsApproval, itemsClosed } from '../../core/flock.js';
import { triageRequest, worstCase, mergeRequest, workRequest, CODE_RESERVE, normalTriage, type TriageInput, banterRequest, banterLine } from './prompts.js';
import type { ModelRole } from '../../models/config.js';
import type { ModelRequest, ModelOutcome } from '../../models/index.js';
import { STEPS, type Obj } from './settings.js';
import { FlockCalls } from './calls.js';

export abstract class FlockDriver extends FlockCalls {

  // ------------------------------------------------------------ the driver

  kick(list_id: string): void {
    this.lists.kick(list_id);
  }

  /** Whether a call of this worst case still fits the list's budget, counting calls in the air. */
  protected fits(list: FlockList, worst: number): boolean {
    return list.tokens_used + (this.reserved.get(list.list_id) ?? 0) + worst <= list.token_budget;
  }

  /** One pass over a list: each item's next step, appended; model calls started. */
  protected async drive(list_id: string): Promise<void> {
    if (!this.driving) {
      // Nobody drives (an idle flock lets its lease lapse): take it; taking it resumes every unfinished list.
      if (this.settings.models && !this.stopped && leaseHolder(this.state, Date.now()) === '' && this.state.lists.get(list_id)?.finished === null) await this.claimLease();
      return;
    }
    const list = this.state.lists.get(list_id);
    if (!list || list.finished) return;
    const ts = () => flockTs(Date.now());
    this.starved.delete(list_id);
    for (const item of list.items) {
      if (!this.driving) return;
      let phase = itemPhase(item);
      // A step that appends waits for its turn (pace.ts); the item is read again after the wait.
      if (STEPS.has(phase) || (phase === 'triage_verdict' && !item.triage!.needs_approval) || (phase === 'output_verdict' && !item.answer!.needs_approval)) {
        const turn = this.pace.turn();
        if (turn) {
          await turn;
          if (!this.driving || list.finished || this.state.lists.get(list_id) !== list) return;
          phase = itemPhase(item);
        }
      }
      switch (phase) {
        case 'triage': {
          const req = triageRequest(this.state, item);
          if (!this.fits(list, worstCase(req))) {
            await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'budget', ts: ts() }]);
            break;
          }
          this.reserve(list_id, item.item_id, 'Sentry', worstCase(req));
          await this.step([{ type: 'crow.flying', list_id, item_id: item.item_id, crow: 'Sentry', borrowed: false, ts: ts() }]);
          this.fly(list_id, item.item_id, 'Sentry', 'sentry', req);
          break;
        }
        case 'triaging':
        case 'flying':
        case 'merging':
          // Flights in the log with no call here: a restart. Fly them again.
          for (const f of item.flights.values()) {
            if (f.state !== 'flying' || this.calls.has(`${item.item_id}\u0000${f.crow}`)) continue;
            const req = f.role === 'triage' ? triageRequest(this.state, item) : f.role === 'merge' ? mergeRequest(this.state, item) : workRequest(this.state, item, f.crow, f.subtask);
            // A coding agent's flight rejoins its session (keyed steps: nothing is started or prompted twice).
            const board = f.role === 'work' ? this.flightBoard(list_id, item.item_id, f.crow) : null;
            this.reserve(list_id, item.item_id, f.crow, board ? CODE_RESERVE : worstCase(req));
            this.fly(list_id, item.item_id, f.crow, f.role === 'triage' ? 'sentry' : f.role === 'merge' ? 'elder' : 'crow', req, this.agentRun(item, f.crow, f.subtask, board));
          }
          break;
        case 'triage_verdict':
          if (!item.triage!.needs_approval) await this.writeVerdict(list_id, item.item_id, 'triage', 'auto', '');
          else await this.ensureApproval(list, item, 'triage');
          break;
        case 'output_verdict':
          if (!item.answer!.needs_approval) await this.writeVerdict(list_id, item.item_id, 'output', 'auto', '');
          else await this.ensureApproval(list, item, 'output');
          break;
        case 'rejected':
          await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'rejected', ts: ts() }]);
          break;
        case 'failed':
          await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'failure', ts: ts() }]);
          break;
        case 'work':
          await this.work(list, item);
          break;
        case 'merge': {
          const req = mergeRequest(this.state, item);
          if (!this.fits(list, worstCase(req))) {
            await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'budget', ts: ts() }]);
            break;
          }
          this.reserve(list_id, item.item_id, 'Elder', worstCase(req));
          await this.step([{ type: 'crow.flying', list_id, item_id: item.item_id, crow: 'Elder', borrowed: false, ts: ts() }]);
          this.fly(list_id, item.item_id, 'Elder', 'elder', req);
          break;
        }
        case 'answer': {
          const { answer, crows } = draftAnswer(item);
          if (!answer.trim()) {
            // Nothing usable came back: a failure, not an empty answer.
            await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'failure', ts: ts() }]);
            break;
          }
          const needs = outputNeedsApproval(this.state, item.triage!.task_type, crows);
          const at = ts();
          // When trust skips the approval, the answer and its `auto` verdict are one append.
          const banter = this.banterPlan(list, item, crows, at);
          try {
            await this.step([
              { type: 'item.answered', list_id, item_id: item.item_id, answer, crows, needs_approval: needs, ts: at },
              ...(needs ? [] : [{ type: 'verdict', list_id, item_id: item.item_id, target: 'output', verdict: 'auto', ts: at }]),
              ...(banter ? [banter.event] : []),
            ]);
          } finally {
            banter?.launch();
          }
          break;
        }
        default:
          break;
      }
    }
    await this.maybeFinish(list);
  }

  /** Sends the crows an item wants (one per open subtask of a split; up to MurderSize for a murder). */
  protected async work(list: FlockList, item: FlockItem): Promise<void> {
    const plan = this.planWork(list, item, item.triage!, flockTs(Date.now()));
    if (plan === 'starved') return void this.starved.add(list.list_id);
    if (plan === 'budget') return void (await this.step([{ type: 'item.skipped', list_id: list.list_id, item_id: item.item_id, reason: 'budget', ts: flockTs(Date.now()) }]));
    try {
      await this.step(plan.events);
    } finally {
      plan.launch();
    }
  }

  /**
   * The worker flights an item wants under triage `t` (which may not be
   * folded yet: the Sentry's landing carries them when no approval is asked):
   * their `crow.flying` events, their calls reserved, and the launch to run
   * once appended (only flights the fold accepted fly; the others are released).
   */
  protected planWork(list: FlockList, item: FlockItem, t: Triage, ts: string): { events: Obj[]; launch: () => void } | 'budget' | 'starved' {
    const want = item.triage ? toFly(item) : t.mode === 'split' ? { subtasks: t.subtasks.map((_, i) => i + 1), crows: t.subtasks.length } : { subtasks: [], crows: t.mode === 'solo' ? 1 : FLOCK_LIMITS.murderSize };
    const view: FlockItem = item.triage ? item : { ...item, triage: { ...t } };
    const picked = pickCrows(this.state, list.nest_id, want.crows, [...item.flights.keys()], this.planned);
    if (picked.length === 0) return 'starved';
    const flights = t.mode === 'split' ? picked.slice(0, want.subtasks.length).map((p, i) => ({ ...p, subtask: want.subtasks[i] })) : picked.map((p) => ({ ...p, subtask: 0 }));
    const reqs = flights.map((f) => workRequest(this.state, view, f.crow, f.subtask));
    // A code item goes to a coding agent when a bridge follows one of the project's boards (docs/flock.md, "Code items").
    const thread = t.task_type === 'code' ? (this.opts.agents?.thread() ?? null) : null;
    const boards = flights.map((f) => (thread ? this.opts.agents!.ref(thread, item.item_id, f.crow) : null));
    const worst = (i: number) => (boards[i] ? CODE_RESERVE : worstCase(reqs[i]));
    if (!this.fits(list, flights.reduce((n, _, i) => n + worst(i), 0))) return 'budget';
    flights.forEach((f, i) => this.reserve(list.list_id, item.item_id, f.crow, worst(i)));
    const mine = flights.map((f) => ({ crow: f.crow, nest_id: list.nest_id }));
    this.planned.push(...mine);
    return {
      events: flights.map((f, i) => ({ type: 'crow.flying', list_id: list.list_id, item_id: item.item_id, crow: f.crow, borrowed: f.borrowed, ...(f.subtask ? { subtask: f.subtask } : {}), ...(boards[i] ? { board: boards[i] } : {}), ts })),
      // Run once the step is folded (or failed): the picks are in the state now, or gone.
      launch: () => {
        this.planned = this.planned.filter((p) => !mine.includes(p));
        flights.forEach((f, i) => {
          if (item.flights.get(f.crow)?.state === 'flying' && this.driving) this.fly(list.list_id, item.item_id, f.crow, 'crow', reqs[i], this.agentRun(view, f.crow, f.subtask, boards[i]));
          else this.release(`${item.item_id}\u0000${f.crow}`);
        });
      },
    };
  }

  protected reserve(list_id: string, item_id: string, crow: string, worst: number): void {
    this.calls.set(`${item_id}\u0000${crow}`, { list_id, reserve: worst });
    this.reserved.set(list_id, (this.reserved.get(list_id) ?? 0) + worst);
  }

  protected release(key: string): void {
    const r = this.calls.get(key);
    if (!r) return;
    this.calls.delete(key);
    const left = (this.reserved.get(r.list_id) ?? 0) - r.reserve;
    if (left > 0) this.reserved.set(r.list_id, left);
    else this.reserved.delete(r.list_id);
  }

  /** One flight's model call (or `run`, a coding agent's session), landed when it returns (the provider retries; a failure lands ok:false). */
  protected fly(list_id: string, item_id: string, crow: string, role: ModelRole, req: ModelRequest, run?: () => Promise<ModelOutcome>): void {
    const key = `${item_id}\u0000${crow}`;
    void (async () => {
      let out: ModelOutcome;
      try {
        out = await (run ? run() : this.call(role, req, { crow, list_id, item_id }));
      } catch (e) {
        out = { ok: false, error: { kind: 'bad_response', message: (e as Error).message, retryable: false }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false }, model: '' };
      }
      if (this.stopped) return;
      // The landing is a step: it waits for its turn (pace.ts), and is composed after it.
      const turn = this.pace.turn();
      if (turn) await turn;
      if (this.stopped) return;
      const ts = flockTs(Date.now());
      const tokens = Math.max(0, Math.min(FLOCK_LIMITS.callTokens, Math.round(out.usage.total)));
      const events: Obj[] = [];
      let after: (() => void) | undefined;
      if (!out.ok) {
        events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: `${out.error.kind}: ${out.error.message}`.slice(0, FLOCK_LIMITS.error), ts });
      } else if (crow === 'Sentry') {
        if (out.kind !== 'tool') {
          events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: 'bad_response: the Sentry did not call the triage tool', ts });
        } else {
          const t = normalTriage(out.input as TriageInput);
          const needs = triageNeedsApproval(this.state, t.task_type);
          events.push({ type: 'item.triaged', list_id, item_id, ...t, needs_approval: needs, ts });
          events.push({ type: 'crow.landed', list_id, item_id, crow, ok: true, tokens, ts });
          if (!needs) {
            events.push({ type: 'verdict', list_id, item_id, target: 'triage', verdict: 'auto', ts });
            // No approval asked: the crows take off in the same append.
            const list = this.state.lists.get(list_id);
            const item = list?.items.find((i) => i.item_id === item_id);
            const plan = list && item && this.driving ? this.planWork(list, item, { ...t, needs_approval: false }, ts) : null;
            if (plan && typeof plan === 'object') {
              events.push(...plan.events);
              after = plan.launch;
            }
          }
        }
      } else if (crow === 'Elder') {
        const answer = out.kind === 'tool' ? String((out.input as { answer?: unknown }).answer ?? '') : out.text;
        if (!answer.trim()) events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: 'bad_response: the Elder merged nothing', ts });
        else events.push({ type: 'crow.landed', list_id, item_id, crow, ok: true, tokens, output: answer.slice(0, FLOCK_LIMITS.output), ts });
      } else {
        const text = out.kind === 'text' ? out.text : out.text || JSON.stringify(out.input);
        if (!text.trim()) events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: 'bad_response: the answer was empty', ts });
        else {
          const output = text.slice(0, FLOCK_LIMITS.output);
          events.push({ type: 'crow.landed', list_id, item_id, crow, ok: true, tokens, output, ts });
          // A solo item's one crow came back: its answer goes in the same append.
          const list = this.state.lists.get(list_id);
          const item = list?.items.find((i) => i.item_id === item_id);
          if (list && item?.triage?.mode === 'solo' && !item.answer && this.driving && ![...item.flights.values()].some((f) => f.state === 'flying' && f.crow !== crow)) {
            const needs = outputNeedsApproval(this.state, item.triage.task_type, [crow]);
            events.push({ type: 'item.answered', list_id, item_id, answer: output, crows: [crow], needs_approval: needs, ts });
            if (!needs) events.push({ type: 'verdict', list_id, item_id, target: 'output', verdict: 'auto', ts });
            const banter = this.banterPlan(list, item, [crow], ts);
            if (banter) {
              events.push(banter.event);
              after = banter.launch;
            }
          }
        }
      }
      // Released once the landing is folded: a pass in between must not take the flight for one to fly again.
      try {
        await this.step(events);
      } finally {
        this.release(key);
        after?.();
      }
    })().catch((e) => {
      this.release(key);
      if (!this.stopped) console.error(`roost: flock flight ${crow} of ${item_id}`, e);
    });
  }

  // ------------------------------------------------------------ banter

  /**
   * Banter for an item being answered: at most two lines per list, never
   * blocking. The answer's first crow speaks to another crow that worked the
   * list (else the Sentry, or the Elder for a murder). Returns the
   * `banter.started` event (appended with the answer, so the list waits for
   * the line) and the call to make once it is folded; null when no slot, no
   * model or no budget.
   */
  protected banterPlan(list: FlockList, item: FlockItem, crows: string[], ts: string): { event: Obj; launch: () => void } | null {
    if (list.banter.started >= FLOCK_LIMITS.banterPerList || !this.provider('banter')) return null;
    const speaker = crows[0];
    if (!speaker) return null;
    let to = '';
    for (const it of list.items) for (const f of it.flights.values()) if (!to && f.role === 'work' && f.crow !== speaker) to = f.crow;
    if (!to) to = item.triage?.mode === 'murder' ? 'Elder' : 'Sentry';
    const req = banterRequest(this.state, item, speaker, to, this.recent.get(list.list_id) ?? []);
    const worst = worstCase(req);
    if (!this.fits(list, worst)) return null;
    const key = `banter\u0000${item.item_id}\u0000${speaker}`;
    const base = { list_id: list.list_id, item_id: item.item_id, crow: speaker, to };
    this.calls.set(key, { list_id: list.list_id, reserve: worst });
    this.reserved.set(list.list_id, (this.reserved.get(list.list_id) ?? 0) + worst);
    const launch = () => {
      if (!list.banter.open.some((b) => b.item_id === item.item_id && b.crow === speaker)) return this.release(key);
      void (async () => {
        const out = await this.call('banter', req, { crow: speaker, list_id: list.list_id, item_id: item.item_id });
        this.release(key);
        if (this.stopped || this.droppedBanter.has(key)) return;
        const turn = this.pace.turn();
        if (turn) {
          await turn;
          if (this.stopped || this.droppedBanter.has(key)) return;
        }
        const tokens = Math.max(0, Math.round(out.usage.total));
        const line = out.ok && out.kind === 'text' ? banterLine(out.text) : '';
        const at = flockTs(Date.now());
        const ev: Obj = line ? { type: 'crow.banter', ...base, text: line, tokens, ts: at } : { type: 'banter.dropped', ...base, tokens, reason: out.ok ? 'unusable' : 'failed', ts: at };
        // The last thing a list waited for: its finish goes in the same append.
        const l = this.state.lists.get(list.list_id);
        const last = l && !l.finished && l.banter.open.length === 1 && itemsClosed(l);
        await this.step(last ? [ev, { type: 'list.finished', list_id: l.list_id, tokens_used: l.tokens_used + tokens, token_budget: l.token_budget, ts: at }] : [ev]);
      })().catch((e) => {
        this.release(key);
        if (!this.stopped) console.error('roost: flock banter', e);
      });
    };
    return { event: { type: 'banter.started', ...base, ts }, launch };
  }

  /** Finishes a list whose items are all closed, once its banter landed (or after the wait, dropped as late). */
  protected async maybeFinish(list: FlockList): Promise<void> {
    if (list.finished || this.state.lists.get(list.list_id) !== list) return;
    // Finished once every item is closed and no banter is open either.
    if (!itemsClosed(list)) return;
    if (list.banter.open.length === 0) {
      const t = this.finishTimers.get(list.list_id);
      if (t) clearTimeout(t);
      this.finishTimers.delete(list.list_id);
      await this.step([{ type: 'list.finished', list_id: list.list_id, tokens_used: list.tokens_used, token_budget: list.token_budget, ts: flockTs(Date.now()) }]);
      return;
    }
    if (this.finishTimers.has(list.list_id)) return;
    const timer = setTimeout(() => {
      void (async () => {
        const l = this.state.lists.get(list.list_id);
        if (!l || l.finished || !this.driving) return;
        const ts = flockTs(Date.now());
        for (const b of l.banter.open) this.droppedBanter.add(`banter\u0000${b.item_id}\u0000${b.crow}`);
        await this.step(l.banter.open.map((b) => ({ type: 'banter.dropped', list_id: l.list_id, item_id: b.item_id, crow: b.crow, to: b.to, reason: 'late', ts })));
        this.finishTimers.delete(list.list_id);
        this.kick(list.list_id);
      })().catch((e) => console.error('roost: flock banter wait', e));
    }, this.settings.banterWaitMs);
    timer.unref();
    this.finishTimers.set(list.list_id, timer);
  }
}
