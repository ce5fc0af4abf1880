// Nest messages: who may post what, a message folded into its nest, the
// crows flying for it, Jev's tags and the watchdog's scores; and the queries
// (records, open asks, pending responses) the nest view and the driver read.

import { isMemberAuthor } from '../nest-people.js';
import { isServiceRole } from '../personas.js';
import { CROW_KINDS, FLOCK_LIMITS, JEV_QUESTIONS, NEST_KINDS, NEST_MODES, TAGGED_BY, TODO_NEST, type FlockEffect, type FlockState, type Nest, type NestKind, type NestMode, type NestRecord, type TaggedBy, type WatchRecord, type FlockStep } from './model.js';
import { flockSaturated, isBorrowed, isCrow, isWorkerCrow, land, nestKey, rotated, takeOff } from './crows.js';
import { get, int, isObj, line, oneOf, optText, prob, slugId, text, tokens, type Obj } from './read.js';
import { pushBounded, requesterOf } from './lookups.js';
import { posterOf } from './nests.js';

/** Who may post a message of `kind` (the contract's guardrails; membership is checked apart). */
function mayPost(kind: NestKind, author: string): boolean {
  switch (kind) {
    case 'nudge':
      return author === 'harness';
    case 'flag':
      return author === 'Sentry';
    case 'ask_owner':
      return author === 'owner' || author === 'Quill' || author === 'Sentry' || author === 'harness';
    default:
      return true;
  }
}

function isMember(s: FlockState, nest: Nest, author: string): boolean {
  // People: the owner, and in shared mode the project's other members (nest-people.ts).
  if (author === 'owner' || isMemberAuthor(author) || author === 'harness' || isServiceRole(author)) return true;
  if (!isWorkerCrow(s, author)) return false;
  return nest.nest_id === TODO_NEST || nest.core.includes(author) || nest.invited.has(author);
}

export function nestMessage(s: FlockState, o: Obj, at: number, ts: string): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  if (!nest) return [];
  const msg_id = `${nest.nest_id}-${nest.count + 1}`;
  const kind = oneOf(get(o, 'kind'), NEST_KINDS);
  const author = get(o, 'author');
  const body = text(get(o, 'text'), FLOCK_LIMITS.messageText);
  const tagged_by = oneOf(get(o, 'tagged_by'), TAGGED_BY);
  if (get(o, 'msg_id') !== msg_id || !kind || typeof author !== 'string' || !body || !tagged_by) return [];
  if (!isMember(s, nest, author) || !mayPost(kind, author)) return [];
  // A crow posts only crow kinds, and a quarantined crow posts nothing.
  if (isWorkerCrow(s, author) && (!(CROW_KINDS as readonly string[]).includes(kind) || s.quarantine.has(author))) return [];
  const to = optText(get(o, 'to'), FLOCK_LIMITS.to);
  const refers = get(o, 'refers_to');
  const refers_to = refers === undefined || refers === '' ? '' : typeof refers === 'string' && nest.messages.has(refers) ? refers : undefined;
  if (to === undefined || refers_to === undefined) return [];
  let mode: NestMode | '' = '';
  let mode_tagged_by: TaggedBy | '' = '';
  let invited = 0;
  if (kind === 'request') {
    const m = get(o, 'mode');
    if (m !== undefined && m !== '') {
      const mm = oneOf(m, NEST_MODES);
      const mt = oneOf(get(o, 'mode_tagged_by'), TAGGED_BY);
      if (!mm || !mt) return [];
      mode = mm;
      mode_tagged_by = mt;
    }
    if (mode === 'conspiracy') invited = int(get(o, 'invited'), 1, FLOCK_LIMITS.murderSize) ?? FLOCK_LIMITS.murderSize;
  }
  let approval_phrase = '';
  let window_ms = 0;
  if (kind === 'ask_owner') {
    approval_phrase = line(get(o, 'approval_phrase'), FLOCK_LIMITS.phrase) ?? '';
    const w = get(o, 'window_ms');
    window_ms = typeof w === 'number' && Number.isFinite(w) ? Math.min(FLOCK_LIMITS.maxWindowMs, Math.max(FLOCK_LIMITS.minWindowMs, Math.round(w))) : FLOCK_LIMITS.defaultWindowMs;
  }
  let flagged: string | undefined;
  if (kind === 'flag') {
    // A flag names the crow in `to` and the message it is about in `refers_to`: at most one per pair.
    if (!isWorkerCrow(s, to) || !refers_to || nest.flags.has(`${to}\u0000${refers_to}`)) return [];
    flagged = to;
  }
  const record: NestRecord = {
    msg_id,
    n: nest.count + 1,
    kind,
    author,
    text: body,
    to,
    refers_to,
    tagged_by,
    mode,
    mode_tagged_by,
    invited,
    approval_phrase,
    ts,
    at,
    window_ms,
    decision: null,
    jev: {},
    watch: null,
    responders: [],
    sent: [],
  };
  nest.count++;
  nest.messages.set(msg_id, record);
  if (nest.messages.size > FLOCK_LIMITS.keepMessages) {
    const old = nest.messages.keys().next().value as string;
    nest.messages.delete(old);
    nest.open.delete(old);
  }
  if (kind === 'request' || kind === 'nudge') nest.open.add(msg_id);
  // A response: a crow's claim, deliver or decline, or anything a service role posts about it.
  if (refers_to && author !== 'owner' && author !== 'harness' && (kind === 'claim' || kind === 'deliver' || kind === 'decline' || isServiceRole(author))) {
    const target = nest.messages.get(refers_to)!;
    if (nest.open.has(refers_to) && !target.responders.includes(author)) {
      target.responders.push(author);
      if (target.responders.length >= respondersNeeded(target)) nest.open.delete(refers_to);
    }
  }
  // Posts per minute are kept per poster: the person behind a person's post (`by`, shared mode; the
  // record's author otherwise), a crow by its name. The harness and service roles are not rate-limited.
  if (author !== 'harness' && !isServiceRole(author)) pushBounded(requesterOf(s, posterOf(o, author)).posts, at, FLOCK_LIMITS.postsPerMinute);
  const fx: FlockEffect[] = [{ kind: 'nest', nest_id: nest.nest_id, msg_id }];
  // An owner reply to an open ask whose text is the phrase approves it. Any other reply is not a yes
  // and leaves it open (a right reply later in the window still approves; silence rejects at the end),
  // except a no decided in the approvals inbox, which the server posts as the owner's reply tagged
  // `harness` (no HTTP post is): that one rejects it.
  if (author === 'owner' && refers_to) {
    const ask = nest.messages.get(refers_to);
    if (ask && ask.kind === 'ask_owner' && !ask.decision && at < ask.at + ask.window_ms) {
      const yes = ask.approval_phrase !== '' && body.toLowerCase() === ask.approval_phrase.trim().toLowerCase();
      if (yes || tagged_by === 'harness') {
        ask.decision = { resolved: yes ? 'approved' : 'rejected', by: msg_id, at };
        fx.push({ kind: 'nest', nest_id: nest.nest_id, msg_id: ask.msg_id });
      }
    }
  }
  if (flagged) {
    nest.flags.add(`${flagged}\u0000${refers_to}`);
    if (!s.quarantine.has(flagged)) s.quarantine.set(flagged, { crow: flagged, since: at, nest_id: nest.nest_id, flag: msg_id, refers_to });
    fx.push({ kind: 'crow', crow: flagged });
  }
  return fx;
}

export function nestFlying(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const msg_id = get(o, 'msg_id');
  const crow = get(o, 'crow');
  if (!nest || typeof msg_id !== 'string' || !nest.messages.has(msg_id) || !isCrow(s, crow)) return [];
  const key = `${msg_id}\u0000${crow}`;
  if (nest.flights.has(key)) return [];
  const worker = isWorkerCrow(s, crow);
  const borrowed = worker && isBorrowed(nest, crow);
  nest.flights.set(key, { msg_id, crow, borrowed, state: 'flying', tokens: 0, error: '', since: at });
  const rec = nest.messages.get(msg_id)!;
  if (rec.sent.length < 64) rec.sent.push(crow);
  takeOff(s, nestKey(nest.nest_id, msg_id, crow), crow, at);
  if (worker) {
    rotated(nest, crow);
    if (!nest.core.includes(crow)) nest.invited.add(crow);
  }
  return [{ kind: 'nest', nest_id: nest.nest_id, msg_id }];
}

/**
 * The Boss works through the flock like any crow: a request to it found while
 * the flock is saturated is dropped (no reply, no registry write, ever). The
 * fold checks the saturation at the event's place in the log.
 */
export function nestDropped(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const msg_id = get(o, 'msg_id');
  if (!nest || typeof msg_id !== 'string' || !nest.open.has(msg_id) || get(o, 'crow') !== 'Boss' || get(o, 'reason') !== 'saturated') return [];
  const rec = nest.messages.get(msg_id);
  if (!rec || rec.kind !== 'request' || rec.to !== 'Boss' || rec.sent.includes('Boss') || !flockSaturated(s)) return [];
  nest.open.delete(msg_id);
  return [{ kind: 'nest', nest_id: nest.nest_id, msg_id }];
}

export function nestLanded(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const msg_id = get(o, 'msg_id');
  const crow = get(o, 'crow');
  const ok = get(o, 'ok');
  if (!nest || typeof msg_id !== 'string' || typeof crow !== 'string' || typeof ok !== 'boolean') return [];
  const f = nest.flights.get(`${msg_id}\u0000${crow}`);
  if (!f || f.state !== 'flying') return [];
  f.state = ok ? 'ok' : 'failed';
  f.tokens = tokens(get(o, 'tokens'));
  f.error = ok ? '' : (line(get(o, 'error'), FLOCK_LIMITS.error) ?? 'failed');
  nest.tokens += f.tokens;
  land(s, nestKey(nest.nest_id, msg_id, crow), crow);
  return [{ kind: 'nest', nest_id: nest.nest_id, msg_id }];
}

export function jevTag(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const rec = nest && nest.messages.get(typeof get(o, 'msg_id') === 'string' ? (get(o, 'msg_id') as string) : '');
  const question = oneOf(get(o, 'question'), JEV_QUESTIONS);
  const band = prob(get(o, 'band'));
  const source = oneOf(get(o, 'source'), ['embedded', 'model'] as const);
  const raw = get(o, 'probs');
  if (!nest || !rec || !question || band === undefined || !source || !isObj(raw) || rec.jev[question]) return [];
  const labels: readonly string[] = question === 'kind' ? NEST_KINDS : NEST_MODES;
  const probs: Record<string, number> = {};
  let any = false;
  for (const l of labels) {
    const p = prob(get(raw, l));
    if (p !== undefined) {
      probs[l] = p;
      any = true;
    }
  }
  if (!any) return [];
  rec.jev[question] = { probs, band, source };
  nest.tokens += tokens(get(o, 'tokens'));
  return [{ kind: 'nest', nest_id: nest.nest_id, msg_id: rec.msg_id }];
}

/**
 * The watchdog's band rule (the contract's): a breach when any "bad" score is
 * at or above the band, or `answers_request` is at or below 1 − band.
 */
export function isBreach(scores: WatchRecord['scores'], band: number): boolean {
  // 1 − band in floating point can land a hair below the decimal value (1 − 0.8 = 0.19999…96):
  // compare with a tolerance far below any meaningful score difference.
  const EPS = 1e-9;
  return scores.states_fact_without_source >= band - EPS || scores.contradicts_earlier >= band - EPS || scores.answers_request <= 1 - band + EPS;
}

export function watch(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const rec = nest && nest.messages.get(typeof get(o, 'msg_id') === 'string' ? (get(o, 'msg_id') as string) : '');
  const band = prob(get(o, 'band'));
  const raw = get(o, 'scores');
  if (!nest || !rec || rec.watch || band === undefined || !isObj(raw) || !isWorkerCrow(s, rec.author)) return [];
  const a = prob(get(raw, 'answers_request'));
  const f = prob(get(raw, 'states_fact_without_source'));
  const c = prob(get(raw, 'contradicts_earlier'));
  if (a === undefined || f === undefined || c === undefined) return [];
  const scores = { answers_request: a, states_fact_without_source: f, contradicts_earlier: c };
  rec.watch = { crow: rec.author, scores, band, breach: isBreach(scores, band) };
  nest.tokens += tokens(get(o, 'tokens'));
  return [{ kind: 'nest', nest_id: nest.nest_id, msg_id: rec.msg_id }];
}

export type Resolved = '' | 'approved' | 'rejected';

/** `resolved` of a record at `now`: decided by the first owner reply, else rejected once the window passed. */
export function resolvedAt(r: NestRecord, now: number): Resolved {
  if (r.kind !== 'ask_owner') return '';
  if (r.decision) return r.decision.resolved;
  return now >= r.at + r.window_ms ? 'rejected' : '';
}

export interface NestMessageJSON {
  nest_id: string;
  ts: string;
  msg_id: string;
  kind: NestKind;
  author: string;
  text: string;
  to: string;
  refers_to: string;
  tagged_by: TaggedBy;
  mode: NestMode | '';
  mode_tagged_by: TaggedBy | '';
  invited: number;
  approval_phrase: string;
  resolved: Resolved;
}

/** One record exactly as the contract gives it, with `resolved` computed at `now`. */
export function nestRecordJSON(nest_id: string, r: NestRecord, now: number): NestMessageJSON {
  return {
    nest_id,
    ts: r.ts,
    msg_id: r.msg_id,
    kind: r.kind,
    author: r.author,
    text: r.text,
    to: r.to,
    refers_to: r.refers_to,
    tagged_by: r.tagged_by,
    mode: r.mode,
    mode_tagged_by: r.mode_tagged_by,
    invited: r.invited,
    approval_phrase: r.approval_phrase,
    resolved: resolvedAt(r, now),
  };
}

/** A nest's records in msg_id order (the kept ones), or undefined for an unknown nest. */
export function nestMessages(s: FlockState, nest_id: string, now: number): NestMessageJSON[] | undefined {
  const nest = s.nests.get(nest_id);
  if (!nest) return undefined;
  const out: NestMessageJSON[] = [];
  for (const r of nest.messages.values()) out.push(nestRecordJSON(nest_id, r, now));
  return out;
}

/** Open asks at `now` (what the inbox shows and what the approvals window closes). */
export function openAsks(s: FlockState, now: number): { nest_id: string; msg_id: string; approval_phrase: string; deadline: number }[] {
  const out: { nest_id: string; msg_id: string; approval_phrase: string; deadline: number }[] = [];
  for (const n of s.nests.values())
    for (const r of n.messages.values()) if (r.kind === 'ask_owner' && resolvedAt(r, now) === '') out.push({ nest_id: n.nest_id, msg_id: r.msg_id, approval_phrase: r.approval_phrase, deadline: r.at + r.window_ms });
  return out;
}

export interface PendingResponse {
  msg_id: string;
  kind: NestKind;
  /** The addressed member ('' for the room). */
  to: string;
  /** How many distinct responders it wants (conspiracy: `invited`, else 1). */
  needed: number;
  /** Crows that responded (claim, deliver or decline; a service role: any message referring to it). */
  responders: string[];
  /** Crows in the air for it now, and every crow ever sent for it. */
  flying: string[];
  sent: string[];
}

/** How many distinct responders a request wants: `invited` for a conspiracy, else 1. */
function respondersNeeded(r: NestRecord): number {
  return r.mode === 'conspiracy' ? r.invited : 1;
}

/**
 * Messages of a nest that call for a response and do not have enough of one
 * (responders plus crows in the air): a `request`, or a `nudge` to its crow.
 * The service invokes exactly one crow per missing response; nothing polls.
 * Costs time in the number of such open messages, not in the nest's history.
 */
export function pendingResponses(s: FlockState, nest_id: string): PendingResponse[] {
  const nest = s.nests.get(nest_id);
  if (!nest) return [];
  const out: PendingResponse[] = [];
  for (const id of nest.open) {
    const r = nest.messages.get(id);
    if (!r) continue;
    const needed = respondersNeeded(r);
    const flying = r.sent.filter((c) => nest.flights.get(`${id}\u0000${c}`)?.state === 'flying');
    if (r.responders.length + flying.filter((c) => !r.responders.includes(c)).length >= needed) continue;
    out.push({ msg_id: id, kind: r.kind, to: r.to, needed, responders: r.responders.slice(), flying, sent: r.sent.slice() });
  }
  return out;
}

/** A record's tagger probabilities and watchdog scores (the nest view shows them). */
export function messageDetail(s: FlockState, nest_id: string, msg_id: string): { jev: NestRecord['jev']; watch: WatchRecord | null } | undefined {
  const r = s.nests.get(nest_id)?.messages.get(msg_id);
  return r ? { jev: r.jev, watch: r.watch } : undefined;
}

/** The handlers of nest messages, their flights, tags and scores. */
export const MESSAGE_STEPS: Readonly<Record<string, FlockStep>> = {
  'nest.message': nestMessage,
  'nest.flying': nestFlying,
  'nest.dropped': nestDropped,
  'nest.landed': nestLanded,
  'jev.tag': jevTag,
  watch,
};
