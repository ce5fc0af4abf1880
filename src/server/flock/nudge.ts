// Nudges (issue 36 point 4; spec/flock-events.md, the `nudge` kind;
// docs/flock.md, "Nudges"): the harness hands a crow that missed an
// expectation (src/core/nudge.ts: a claim not delivered, or a request
// addressed to it neither claimed nor declined, within `nudgeAfterMs`) one
// `nudge`: author `harness`, `to` the crow, `refers_to` the request, its
// text Jev's verdict on the request, `tagged_by: "jev"`. At most one per
// crow per request: the tracker skips a pair that has one, and the post is
// keyed `nudge:<nest>:<request>:<crow>`, so several nodes post it once. The
// nudge is an open message like a request (the fold), so with a model the
// must-respond loop invokes that crow (nest-driver.ts).
//
// Time: a timer wakes at the next due expectation (at most every 30 s and at
// most `nudgeAfterMs` apart, so a claim made meanwhile is never late by more
// than that), reads the fold with `now`, and posts what is due.

import { flockTs, type FlockState, type NestRecord } from '../../core/flock.js';
import { expectations, type DueNudge } from '../../core/nudge.js';
import { argmax } from './jev.js';
import type { Jev } from './jev.js';

/** The default expectation: ten minutes, like an approval's window. */
export const NUDGE_AFTER_MS = 10 * 60 * 1000;
const MAX_WAIT_MS = 30_000;
const MIN_WAIT_MS = 50;

const pct = (p: number) => `${Math.round(p * 100)}%`;

/** What the nudger needs of the flock service (the service provides it; the type lives here so this file never imports the service). */
export interface NudgeHost {
  readonly state: FlockState;
  readonly jev: Jev;
  postMessage(nest_id: string, build: () => Record<string, unknown>, opts?: { key?: string }): Promise<string>;
}

export class Nudger {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private svc: NudgeHost,
    readonly afterMs: number,
  ) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((e) => {
          if (!this.stopped) console.error('roost: flock nudges failed', e);
        })
        .finally(() => (this.running = null));
    }, ms);
    this.timer.unref();
  }

  /** Posts every nudge due now, then sleeps until the next one falls due. */
  async tick(): Promise<void> {
    const now = Date.now();
    const { due, next } = expectations(this.svc.state, now, this.afterMs);
    for (const d of due) {
      if (this.stopped) return;
      await this.nudge(d);
    }
    const wait = next === null ? MAX_WAIT_MS : next - Date.now();
    this.schedule(Math.max(MIN_WAIT_MS, Math.min(wait, MAX_WAIT_MS, this.afterMs)));
  }

  /** Jev's verdict on the request: its logged tag, else a fresh one. */
  private async verdict(req: NestRecord): Promise<string> {
    let probs = req.jev.kind?.probs;
    let mode = req.mode;
    if (!probs) {
      const a = await this.svc.jev.tag(req.text).catch(() => null);
      probs = a?.kindProbs;
      if (!mode && a?.mode) mode = a.mode;
    }
    if (!probs) return `Jev reads ${req.msg_id} as a ${req.kind}${mode ? ` (${mode})` : ''}`;
    const top = argmax(probs);
    return `Jev reads ${req.msg_id} as a ${top} (${pct(probs[top])})${mode ? `, to be taken ${mode}` : ''}`;
  }

  private async nudge(d: DueNudge): Promise<void> {
    const req = this.svc.state.nests.get(d.nest_id)?.messages.get(d.request);
    if (!req) return;
    const mins = Math.max(1, Math.round(this.afterMs / 60_000));
    const expected =
      d.why === 'undelivered'
        ? `you claimed it and nothing was delivered within ${this.afterMs < 60_000 ? `${Math.round(this.afterMs / 1000)} s` : `${mins} min`}: deliver it, or decline with a reason.`
        : `it was addressed to you and you neither claimed nor declined it within ${this.afterMs < 60_000 ? `${Math.round(this.afterMs / 1000)} s` : `${mins} min`}: claim it, or decline with a reason.`;
    const text = `${await this.verdict(req)}; ${expected}`;
    const id = await this.svc.postMessage(d.nest_id, () => ({ kind: 'nudge', author: 'harness', to: d.crow, refers_to: d.request, text, tagged_by: 'jev', ts: flockTs(Date.now()) }), {
      key: `nudge:${d.nest_id}:${d.request}:${d.crow}`,
    });
    if (id) console.log(`roost: flock nudged ${d.crow} in ${d.nest_id} about ${d.request} (${d.why}): ${id}`);
  }
}
