// The flock fold: lists handed to crows, triage, flights, answers, verdicts,
// the trust ledger, pranks, budgets, banter, nests and their messages, the
// watchdog, quarantine, spun crows and the driver's lease. One stream per
// project (`flock:<project>`) holds every fact below in order; this module
// turns that stream into the state the flock service drives lists from, and
// answers the queries it needs.
//
// Pure and shared: it imports only src/core (the personas), reads no clock,
// does no I/O, draws no random numbers. Time arrives on the event (`ts`,
// RFC 3339, set by the server) or as the `now` of a query (ms since epoch).
// The log position arrives as an argument and is recorded on trust changes.
//
// This module composes the fold from its parts, one job each, in src/core/flock/:
//   model.ts       closed sets, FLOCK_LIMITS, the state's shape, emptyFlock
//   read.ts        readers for hostile fields; event times
//   crows.ts       who is a crow; flight caps, saturation, take-off and landing
//   lookups.ts     lookups the handlers share (a live list, an item, a requester)
//   lists.ts       lists and items, and the queries the driver reads (itemPhase, toFly, listStatus)
//   flights.ts     a crow flying for an item, and landing
//   verdicts.ts    verdicts judged into the one trust ledger (src/core/trust.ts), the ledger's view
//   requesters.ts  strikes, cooldowns, pranks
//   budgets.ts     the project's and a list's token budget
//   banter.ts      a line between two crows
//   nests.ts       nests, their names, and which crows a message goes to (pickCrows)
//   messages.ts    nest messages, Jev's tags, the watchdog's scores; the nest queries
//   spun.ts        spun crows and quarantine
//   lease.ts       the driver's lease
//   seed.ts        a list's stream alone (what a browser seeds)
//   snapshots.ts   the state as JSON and back
// Each part names its handlers in a table (`LIST_STEPS`, ...); `applyFlock`
// below dispatches on the event's type. Importers use this module only.
//
// Events (payloads are the contract's, spec/flock-events.md, plus the extra
// fields named here; docs/flock.md has the full table):
//   contract, streamed on a list's SSE stream:
//     list.started      { list_id, items:[{item_id,text}], requester, nest_id, token_budget? }
//     item.triaged      { list_id, item_id, mode, task_type, subtasks[], reason, needs_approval }
//     crow.flying       { list_id, item_id, crow, borrowed, subtask?, board? }   (board: {thread, session}, a code flight's)
//     crow.landed       { list_id, item_id, crow, ok, tokens, error?, output? }
//     item.answered     { list_id, item_id, answer, crows[], needs_approval }
//     verdict           { list_id, item_id, target, verdict, by? }
//     trust.changed     { list_id, holder, task_type, from, to, because[] }      (announces a change the fold computed)
//                       { list_id:'', holder, task_type, from, to, by, reason }   (an owner's demotion or reset)
//     item.skipped      { list_id, item_id, reason }
//     requester.pranked { list_id, message, cooldown_s }
//     list.finished     { list_id, tokens_used, token_budget }
//     crow.banter       { list_id, item_id, crow, to, text, tokens? }
//   contract, streamed on a nest's SSE stream:
//     nest.message      { nest_id, ...record, window_ms? }
//   internal (never sent on a list or nest stream):
//     nest.created { nest_id, name, crows[], by }     nest.flying { nest_id, msg_id, crow }
//     nest.landed { nest_id, msg_id, crow, ok, tokens, error? }
//     nest.dropped { nest_id, msg_id, crow: 'Boss', reason: 'saturated' }
//     jev.tag { nest_id, msg_id, question, probs, band, source, tokens? }
//     watch { nest_id, msg_id, crow, scores, band, tokens? }
//     quarantine.lifted { crow, by, ask? | reason? }  crow.spun { name, persona, trust, by, nest_id?, msg_id?, cap? }
//     nest.renamed { nest_id, name, by }              nest.deleted { nest_id, by }
//     crow.removed { name, by, reason }               (the owner's direct actions: docs/flock.md)
//     requester.strike { requester, reason }          budget.set { token_budget, by }
//     list.budget { list_id, token_budget, by }       banter.started { list_id, item_id, crow, to }
//     banter.dropped { list_id, item_id, crow, tokens?, reason }
//     lease.claimed { node, ttl_ms }                  lease.released { node }
//   Every event carries `type` and `ts`.
//
// Invariants, whatever the input (the property tests check them):
// - `applyFlock` never throws; an event that is not well formed, names an
//   unknown id, or would be an impossible transition changes nothing and
//   returns no effects;
// - every id-keyed table is a Map (ids such as `__proto__` are ordinary);
// - each step costs time linear in the event's own size (bounded by the caps
//   in FLOCK_LIMITS), never in the size of the history;
// - every target of every item gets at most one verdict, and an item is
//   closed (answered or skipped) only when none of its flights is in the air;
// - trust levels are a function of the verdicts and owner actions alone:
//   `trust.changed` announcements never move a level (a forged one is a no-op),
//   so the ledger cannot be talked up;
// - folding a prefix, shipping the state as JSON (`flockToJSON` /
//   `flockFromJSON`), then folding the rest equals folding everything.

import { TRUST_LEVELS, PROMOTE_AFTER, MAX_TRUST, type TrustName } from './trust.js';
import type { FlockEffect, FlockState, FlockStep } from './flock/model.js';
import { flockTime, get, isObj, type Obj } from './flock/read.js';
import { LIST_STEPS } from './flock/lists.js';
import { FLIGHT_STEPS } from './flock/flights.js';
import { VERDICT_STEPS } from './flock/verdicts.js';
import { REQUESTER_STEPS } from './flock/requesters.js';
import { BUDGET_STEPS } from './flock/budgets.js';
import { BANTER_STEPS } from './flock/banter.js';
import { NEST_STEPS } from './flock/nests.js';
import { MESSAGE_STEPS } from './flock/messages.js';
import { SPUN_STEPS } from './flock/spun.js';
import { LEASE_STEPS } from './flock/lease.js';
export { FLOCK_PROTOCOL_VERSION, TASK_TYPES, type TaskType, TRIAGE_MODES, type TriageMode, VERDICT_TARGETS, type VerdictTarget, VERDICTS, type VerdictValue, SKIP_REASONS, type SkipReason, STRIKE_REASONS, type StrikeReason, NEST_KINDS, type NestKind, CROW_KINDS, TAGGED_BY, type TaggedBy, NEST_MODES, type NestMode, JEV_QUESTIONS, type JevQuestion, WATCH_SCORES, TODO_NEST, FLOCK_LIMITS, type VerdictRef, type Flight, type FlightBoard, type Triage, type VerdictRecord, type FlockItem, type FlockList, type NestRecord, type JevTag, type WatchRecord, type NestFlight, type Nest, type TrustEntry, type TrustChange, type SpunCrow, type Quarantine, type RequesterRecord, type FlockState, type FlockEffect, emptyFlock } from './flock/model.js';
export { flockTime, flockTs } from './flock/read.js';
export { isWorkerCrow, isCrow, isTrustHolder, crowAvailable, flockSaturated } from './flock/crows.js';
export { trustLevel, triageNeedsApproval, outputNeedsApproval, previewTrust, trustChangedEvent, type LedgerJSON, flockLedger, unannouncedTrust } from './flock/verdicts.js';
export { itemsClosed, type ItemPhase, itemPhase, toFly, draftAnswer, type ItemStatus, type ListStatus, listStatus, unfinishedLists, flyingListsOf, inFlight } from './flock/lists.js';
export { nestSlug, cleanNestName, nestDeleteRefusal, nestsIndex, nestRefusal, pickCrows } from './flock/nests.js';
export { crowRemoveRefusal, spinRefusal, quarantined, spunCrows } from './flock/spun.js';
export { isBreach, type Resolved, resolvedAt, type NestMessageJSON, nestRecordJSON, nestMessages, openAsks, type PendingResponse, pendingResponses, messageDetail } from './flock/messages.js';
export { cooldownS, overRate, strikesOf } from './flock/requesters.js';
export { leaseHolder } from './flock/lease.js';
export { seedFlock } from './flock/seed.js';
export { flockReplacer, flockToJSON, flockFromJSON } from './flock/snapshots.js';

/** Trust levels by number (0 stranger, 1 regular, 2 trusted) and the rules' numbers: the one ledger's (src/core/trust.ts). */
export { TRUST_LEVELS, PROMOTE_AFTER, MAX_TRUST, type TrustName };

// ---------------------------------------------------------------- the fold

/**
 * Folds one event into `s` (in place). `position` is the event's log
 * position when known. Returns what changed; an empty array means the event
 * changed nothing (not well formed, unknown ids, or an impossible transition).
 */
export function applyFlock(s: FlockState, e: unknown, position: number | null = null): FlockEffect[] {
  if (!isObj(e)) return [];
  const type = get(e, 'type');
  const ts = get(e, 'ts');
  const at = flockTime(ts);
  if (typeof type !== 'string' || at === undefined) return [];
  const fx = step(s, type, e, at, ts as string, position);
  if (fx.length) s.rev++;
  return fx;
}

/**
 * Every event type's handler, composed from the parts' tables (one job each,
 * src/core/flock/*). A Map: an event's `type` is the caller's, so a type such
 * as `constructor` or `__proto__` must find nothing rather than a prototype's
 * member. Composing checks that no two parts claim one type.
 */
const STEPS: ReadonlyMap<string, FlockStep> = compose([LIST_STEPS, FLIGHT_STEPS, VERDICT_STEPS, REQUESTER_STEPS, BUDGET_STEPS, BANTER_STEPS, NEST_STEPS, MESSAGE_STEPS, SPUN_STEPS, LEASE_STEPS]);

function compose(tables: readonly Readonly<Record<string, FlockStep>>[]): Map<string, FlockStep> {
  const out = new Map<string, FlockStep>();
  for (const t of tables)
    for (const [type, f] of Object.entries(t)) {
      if (out.has(type)) throw new Error(`two handlers for ${type}`);
      out.set(type, f);
    }
  return out;
}

function step(s: FlockState, type: string, o: Obj, at: number, ts: string, position: number | null): FlockEffect[] {
  const f = STEPS.get(type);
  return f ? f(s, o, at, ts, position) : [];
}
