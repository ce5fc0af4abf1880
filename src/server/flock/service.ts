// The flock of one project (docs/flock.md): its stream `flock` (default
// project) or `flock:<project>`, folded on the fold host by the pure fold
// (src/core/flock.ts), served live on two kinds of scope, and driven.
//
// - `flock:<project>`: every folded entry (`{event, effects}`), a snapshot of
//   the whole state first (the flock view, on /live).
// - `flock.list:<project>/<list_id>`: one list's contract events, each frame
//   `event: <type>` with the stored body as data (spec/flock-events.md), what
//   `GET /api/events?list_id=` serves. A subscriber without a cursor gets the
//   list's events so far as its first frame; `Last-Event-ID` resumes after it.
// - `flock.nest:<project>/<nest_id>`: one nest's `nest.message` records, what
//   `GET /api/events?nest_id=` serves, replayed in msg_id order.
//
// The driver: the node holding the project's lease (`lease.claimed`) reads
// the fold's queries (itemPhase, toFly, pickCrows, draftAnswer, listStatus)
// after every change of a list and appends what comes next; model calls run
// beside it and land as `crow.landed`. Each pending verdict is an approval of
// kind `verdict` in the one approvals model; its close is appended as the
// verdict (keyed, so once). A restart resumes from the log: flights with no
// landing are flown again, open banter is dropped, unannounced trust changes
// are announced.
//
// The service is one class built by job, each a file that extends the one
// before: streams.ts (the stream, fold, snapshots and channels; every field)
// < nest-posts.ts < verdicts.ts < lease.ts < calls.ts < drive.ts (the list
// driver) < this file (a list's intake, strikes, the project's budget).
// settings.ts holds the settings and the types they share.

import { randomUUID } from 'node:crypto';
import { flockTs, type FlockItem, cooldownS, FLOCK_LIMITS, flyingListsOf } from '../../core/flock.js';
import { HttpError } from '../http.js';
import type { ModelRequest } from '../../models/index.js';
import { triageRequest, worstCase } from './prompts.js';
import { rateRefusalS, type Obj } from './settings.js';
import { FlockDriver } from './drive.js';
export { FLOCK_STREAM, flockStream, type FlockSettings, rateRefusalS, FLOCK_DEFAULTS, type FlockOptions, verdictApprovalId } from './settings.js';

export class FlockService extends FlockDriver {

  // ------------------------------------------------------------ lists

  /** Resolves once the list is finished (at once when it is). */
  finished(list_id: string): Promise<void> {
    if (this.state.lists.get(list_id)?.finished || this.state.forgottenLists.has(list_id)) return Promise.resolve();
    return new Promise((ok) => {
      let ws = this.finishWaiters.get(list_id);
      if (!ws) this.finishWaiters.set(list_id, (ws = []));
      ws.push(ok);
    });
  }

  /** A new list (already checked by the route): resolves with its id once folded. */
  async startList(requester: string, items: string[], nest_id: string, token_budget?: number): Promise<string> {
    const list_id = `l-${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const ev: Obj = {
      type: 'list.started',
      list_id,
      ts: flockTs(Date.now()),
      requester,
      nest_id,
      items: items.map((text, i) => ({ item_id: `${list_id}-${i + 1}`, text })),
      token_budget: token_budget ?? this.state.budget.project,
    };
    const sentry = this.sentryFlights(list_id, items, ev.token_budget as number, ev.ts as string);
    // Appended lazily and folded at its commit, so the Sentry takes off at
    // once; the 202 waits for the list to be durable (the store's sync: on
    // SQLite an fdatasync off the event loop, which the first steps overlap).
    try {
      await this.step([ev, ...sentry.events]);
    } catch (e) {
      sentry.launch();
      throw e;
    }
    sentry.launch();
    if (!this.state.lists.has(list_id)) throw new HttpError(400, 'bad_request', 'the list was not accepted');
    await this.store.sync();
    return list_id;
  }

  /**
   * The Sentry's flights of a new list's items, appended with its
   * `list.started` when this node drives and the pace is front: the pass that
   * would fly them one step each after the list is folded (the same budget
   * check, in item order, up to the first item that does not fit: the pass
   * takes the rest). The launch flies those the fold accepted and releases the others.
   */
  protected sentryFlights(list_id: string, texts: string[], token_budget: number, ts: string): { events: Obj[]; launch: () => void } {
    if (!this.driving || this.pace.inBack) return { events: [], launch: () => {} };
    const planned: { n: number; item_id: string; req: ModelRequest }[] = [];
    let reserved = 0;
    for (let i = 0; i < texts.length; i++) {
      const item: FlockItem = { item_id: `${list_id}-${i + 1}`, n: i + 1, text: texts[i], triage: null, triageVerdict: null, flights: new Map(), answer: null, outputVerdict: null, skipped: null };
      const req = triageRequest(this.state, item);
      const worst = worstCase(req);
      if (reserved + worst > token_budget) break;
      reserved += worst;
      this.reserve(list_id, item.item_id, 'Sentry', worst);
      planned.push({ n: i, item_id: item.item_id, req });
    }
    return {
      events: planned.map((p) => ({ type: 'crow.flying', list_id, item_id: p.item_id, crow: 'Sentry', borrowed: false, ts })),
      launch: () => {
        const list = this.state.lists.get(list_id);
        for (const p of planned) {
          const item = list?.items[p.n];
          if (item?.item_id === p.item_id && item.flights.get('Sentry')?.state === 'flying' && this.driving) this.fly(list_id, p.item_id, 'Sentry', 'sentry', p.req);
          else this.release(`${p.item_id}\u0000Sentry`);
        }
      },
    };
  }

  /**
   * A strike against a requester. When it is answered 429 (it starts a
   * cooldown, or it is a refused rate), that is a prank: `requester.pranked`
   * goes to each of their lists still flying, with the 429's `cooldown_s`.
   * Resolves with the cooldown (s) now running.
   */
  async strike(requester: string, reason: 'rate' | 'empty' | 'garbage'): Promise<number> {
    const now = Date.now();
    const before = cooldownS(this.state, requester, now);
    await this.append([{ type: 'requester.strike', requester, reason, ts: flockTs(now) }]);
    const after = cooldownS(this.state, requester, now);
    const cooldown_s = after > before ? after : reason === 'rate' ? rateRefusalS(after) : 0;
    if (cooldown_s > 0) {
      const message =
        after > before
          ? `${requester} sent too many lists or lists without work in them; new lists are refused for ${after} s.`
          : `${requester} may start ${FLOCK_LIMITS.listsPerMinute} lists a minute; new lists are refused for ${cooldown_s} s.`;
      const ts = flockTs(Date.now());
      await this.append(flyingListsOf(this.state, requester).map((list_id) => ({ type: 'requester.pranked', list_id, message, cooldown_s, ts })));
    }
    return after;
  }

  async setProjectBudget(token_budget: number, by: string): Promise<void> {
    await this.append([{ type: 'budget.set', token_budget, by, ts: flockTs(Date.now()) }]);
  }
}
