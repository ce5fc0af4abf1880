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

import { WORKER_NAMES, isServiceRole, isTakenPersonaName, isWorkerPersona } from './personas.js';
import { SESSION_ID_PATTERN } from './fleet.js';
import { trimOldest } from './bounded.js';
import {
  MAX_TRUST,
  PROMOTE_AFTER,
  TRUST_LEVELS,
  announce,
  copyChange,
  entryOf as ledgerEntry,
  judge,
  levelOf,
  ownerLowers,
  recordChange as ledgerRecord,
  trustKey,
  trustRules,
  type LedgerChange,
  type LedgerEntry,
  type TrustName,
} from './trust.js';
import { isMemberAuthor } from './nest-people.js';

export const FLOCK_PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------- closed sets

/** The task types the Sentry may give an item (docs/flock.md says what each means). */
export const TASK_TYPES = ['code', 'research', 'writing', 'review', 'planning', 'data', 'other'] as const;
export type TaskType = (typeof TASK_TYPES)[number];
export const TRIAGE_MODES = ['solo', 'split', 'murder'] as const;
export type TriageMode = (typeof TRIAGE_MODES)[number];
export const VERDICT_TARGETS = ['triage', 'output'] as const;
export type VerdictTarget = (typeof VERDICT_TARGETS)[number];
export const VERDICTS = ['approved', 'rejected', 'auto', 'timeout'] as const;
export type VerdictValue = (typeof VERDICTS)[number];
export const SKIP_REASONS = ['rejected', 'budget', 'failure'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];
export const STRIKE_REASONS = ['rate', 'empty', 'garbage'] as const;
export type StrikeReason = (typeof STRIKE_REASONS)[number];
/** Trust levels by number (0 stranger, 1 regular, 2 trusted) and the rules' numbers: the one ledger's (src/core/trust.ts). */
export { TRUST_LEVELS, PROMOTE_AFTER, MAX_TRUST, type TrustName };

export const NEST_KINDS = ['say', 'request', 'claim', 'deliver', 'refer', 'decline', 'ask_owner', 'nudge', 'flag'] as const;
export type NestKind = (typeof NEST_KINDS)[number];
/** The kinds a crow may post (the others belong to the harness, the Sentry and the owner-facing roles). */
export const CROW_KINDS = ['say', 'request', 'claim', 'deliver', 'refer', 'decline'] as const;
export const TAGGED_BY = ['jev', 'header', 'disagreement', 'default', 'harness'] as const;
export type TaggedBy = (typeof TAGGED_BY)[number];
export const NEST_MODES = ['solo', 'conspiracy', 'split'] as const;
export type NestMode = (typeof NEST_MODES)[number];
export const JEV_QUESTIONS = ['kind', 'mode'] as const;
export type JevQuestion = (typeof JEV_QUESTIONS)[number];
export const WATCH_SCORES = ['answers_request', 'states_fact_without_source', 'contradicts_earlier'] as const;

/** The default nest: empty core, its crows come from the whole flock. Exists from the start. */
export const TODO_NEST = 'todo';

export const FLOCK_LIMITS = {
  /** list_id and other generated ids. */
  id: 80,
  requester: 120,
  crowName: 24,
  itemText: 2000,
  maxItems: 100,
  answer: 20_000,
  /** A crow's own output carried on its landing (kept to build the answer after a restart). */
  output: 20_000,
  reason: 500,
  error: 500,
  subtask: 500,
  maxSubtasks: 4,
  /** How many crows a murder item sends (and a conspiracy request invites by default): the MurderSize cap. */
  murderSize: 3,
  banterText: 300,
  banterPerList: 2,
  /** Tokens of one call are clamped to this. */
  callTokens: 10_000_000,
  minBudget: 1_000,
  maxBudget: 100_000_000,
  defaultBudget: 200_000,
  /** Open flights per working crow, per service role, and for the whole flock. */
  crowFlights: 4,
  serviceFlights: 16,
  flockFlights: 64,
  nestName: 40,
  /** Nests, `todo` counted. */
  maxNests: 20,
  /** Ids of deleted nests kept reserved (a deletion past it is refused). */
  goneNests: 1000,
  nestCrows: 8,
  /** MaxSpunCrows: the registry's default cap (a server's setting may lower or raise it, up to maxSpunCap; `crow.spun` carries it). */
  maxSpun: 8,
  maxSpunCap: 64,
  messageText: 2000,
  phrase: 200,
  to: 40,
  /** Approval window of an ask_owner, clamped; default 10 minutes (the contract's). */
  minWindowMs: 1_000,
  maxWindowMs: 24 * 60 * 60 * 1000,
  defaultWindowMs: 10 * 60 * 1000,
  /** Lists per requester per minute, nest posts per author per minute. */
  listsPerMinute: 5,
  postsPerMinute: 20,
  strikeWindowMs: 10 * 60 * 1000,
  strikesForCooldown: 3,
  firstCooldownS: 60,
  maxCooldownS: 3600,
  strikesKept: 16,
  requesters: 10_000,
  /** Finished lists kept in full; older ones are forgotten (the log keeps them). */
  keepFinishedLists: 500,
  /**
   * Ids of forgotten lists remembered as used (a list.started that names one
   * is refused); older ones are let go, so the state and its snapshots stay
   * bounded however many lists a server has run. Ids are minted by the server
   * (48 random bits), so an old one named again can only be a replayed event.
   */
  rememberForgottenLists: 10_000,
  /** Trust changes kept in the ledger's history (the log keeps them all). */
  keepHistory: 1000,
  /** Records kept per nest (older ones stay in the log and its replay). */
  keepMessages: 5000,
  minLeaseMs: 1_000,
  maxLeaseMs: 5 * 60 * 1000,
  node: 120,
} as const;

// ---------------------------------------------------------------- state

export interface VerdictRef {
  list_id: string;
  item_id: string;
  target: VerdictTarget;
  verdict: VerdictValue;
  /** The person who decided (approved/rejected): who earned the level (owners see it in the history). */
  by?: string;
}

export interface Flight {
  crow: string;
  role: 'triage' | 'work' | 'merge';
  /** Split items: the subtask this flight takes (1-based); 0 otherwise. */
  subtask: number;
  borrowed: boolean;
  state: 'flying' | 'ok' | 'failed';
  tokens: number;
  error: string;
  /** What the crow brought back (kept so the answer can be built after a restart). */
  output: string;
  since: number;
  /** A code flight's board session (`crow.flying`'s `board`: a Claude Code session on a fleet board); absent for a model crow's. */
  board?: FlightBoard;
}

/** Where a code flight runs: a fleet board's thread and the session's id on it. */
export interface FlightBoard {
  thread: string;
  session: string;
}

export interface Triage {
  mode: TriageMode;
  task_type: TaskType;
  subtasks: string[];
  reason: string;
  needs_approval: boolean;
}

export interface VerdictRecord {
  verdict: VerdictValue;
  by: string;
  at: number;
}

export interface FlockItem {
  item_id: string;
  n: number;
  text: string;
  triage: Triage | null;
  triageVerdict: VerdictRecord | null;
  /** Flights by crow name: a crow flies an item at most once. */
  flights: Map<string, Flight>;
  answer: { text: string; crows: string[]; needs_approval: boolean; at: number } | null;
  outputVerdict: VerdictRecord | null;
  skipped: { reason: SkipReason; at: number } | null;
}

export interface FlockList {
  list_id: string;
  nest_id: string;
  requester: string;
  startedAt: number;
  ts: string;
  items: FlockItem[];
  token_budget: number;
  tokens_used: number;
  banter: { started: number; lines: number; open: { item_id: string; crow: string; to: string; at: number }[] };
  /** The banter lines spoken (at most banterPerList), for the view; absent in states folded before they were kept. */
  said?: { item_id: string; crow: string; to: string; text: string; at: number }[];
  pranks: number;
  /** The latest `requester.pranked` on this list, for the view. */
  prank?: { message: string; cooldown_s: number; at: number };
  finished: { at: number; tokens_used: number; token_budget: number } | null;
}

export interface NestRecord {
  msg_id: string;
  n: number;
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
  ts: string;
  at: number;
  /** ask_owner: its approval window (ms). */
  window_ms: number;
  /** ask_owner: the first owner reply referring to it within the window decides it. */
  decision: { resolved: 'approved' | 'rejected'; by: string; at: number } | null;
  jev: { kind?: JevTag; mode?: JevTag };
  watch: WatchRecord | null;
  /** request/nudge: who responded (claim, deliver, decline; a service role: any message referring to it). */
  responders: string[];
  /** request/nudge: every crow sent to respond to it (nest.flying), in order. */
  sent: string[];
}

export interface JevTag {
  probs: Record<string, number>;
  band: number;
  source: 'embedded' | 'model';
}

export interface WatchRecord {
  crow: string;
  scores: { answers_request: number; states_fact_without_source: number; contradicts_earlier: number };
  band: number;
  breach: boolean;
}

export interface NestFlight {
  msg_id: string;
  crow: string;
  borrowed: boolean;
  state: 'flying' | 'ok' | 'failed';
  tokens: number;
  error: string;
  since: number;
}

export interface Nest {
  nest_id: string;
  name: string;
  /** Core crows in the order given at creation (empty for `todo`). */
  core: string[];
  createdAt: number;
  by: string;
  /** Messages by msg_id, in nest order (the oldest are dropped past keepMessages). */
  messages: Map<string, NestRecord>;
  /** Messages ever posted (msg_id numbering continues from here). */
  count: number;
  /** Crows invited to respond here (members besides the core). */
  invited: Set<string>;
  /** Flights by `${msg_id}\u0000${crow}`. */
  flights: Map<string, NestFlight>;
  /** `${crow}\u0000${refers_to}` of every flag posted (at most one flag per crow per referent). */
  flags: Set<string>;
  /** Requests and nudges still short of responders (pendingResponses looks only at these). */
  open: Set<string>;
  /** Rotation: the core crow and the borrowed crow picked last. */
  lastCore: string;
  lastBorrowed: string;
  tokens: number;
}

/** A holder's entry in the one ledger (src/core/trust.ts), per task type, judged by verdicts. */
export type TrustEntry = LedgerEntry<TaskType, VerdictRef>;

/** A change in the ledger, plus the list of the last verdict in `because` ('' for an owner's action). */
export type TrustChange = LedgerChange<TaskType, VerdictRef> & { list_id: string };

export interface SpunCrow {
  name: string;
  persona: string;
  /** The level it started at: 0 stranger or 1 regular (never trusted). */
  trust: number;
  by: string;
  nest_id: string;
  at: number;
}

export interface Quarantine {
  crow: string;
  since: number;
  nest_id: string;
  /** The flag message that quarantined it and the message that flag was about. */
  flag: string;
  refers_to: string;
}

export interface RequesterRecord {
  strikes: { at: number; reason: StrikeReason }[];
  /** Start times of the latest lists (at most listsPerMinute kept). */
  lists: number[];
  /** Times of the latest nest posts (at most postsPerMinute kept). */
  posts: number[];
  cooldownUntil: number;
}

export interface FlockState {
  lists: Map<string, FlockList>;
  /** Ids of lists no longer kept (so an old id stays unique). */
  forgottenLists: Set<string>;
  /** Finished lists, oldest first (for forgetting). */
  finishedOrder: Map<string, true>;
  nests: Map<string, Nest>;
  /** Ids of deleted nests (reserved: their messages stay in the log under them). */
  goneNests: Set<string>;
  spun: Map<string, SpunCrow>;
  trust: Map<string, TrustEntry>;
  history: TrustChange[];
  changes: number;
  requesters: Map<string, RequesterRecord>;
  quarantine: Map<string, Quarantine>;
  /** Open flights by crow (list and nest flights together). */
  busy: Map<string, number>;
  /** Every open flight: `L\u0000list\u0000item\u0000crow` or `N\u0000nest\u0000msg\u0000crow`. */
  airborne: Map<string, { since: number }>;
  budget: { project: number };
  lease: { node: string; since: number; until: number } | null;
  rev: number;
}

export type FlockEffect =
  | { kind: 'list'; list_id: string }
  | { kind: 'nest'; nest_id: string; msg_id?: string }
  | { kind: 'trust'; change: TrustChange }
  | { kind: 'crow'; crow: string }
  | { kind: 'requester'; requester: string }
  | { kind: 'budget' }
  | { kind: 'lease' };

function emptyNest(nest_id: string, name: string, core: string[], at: number, by: string): Nest {
  return {
    nest_id,
    name,
    core,
    createdAt: at,
    by,
    messages: new Map(),
    count: 0,
    invited: new Set(),
    flights: new Map(),
    flags: new Set(),
    open: new Set(),
    lastCore: '',
    lastBorrowed: '',
    tokens: 0,
  };
}

export function emptyFlock(): FlockState {
  return {
    lists: new Map(),
    forgottenLists: new Set(),
    finishedOrder: new Map(),
    nests: new Map([[TODO_NEST, emptyNest(TODO_NEST, 'todo', [], 0, '')]]),
    goneNests: new Set(),
    spun: new Map(),
    trust: new Map(),
    history: [],
    changes: 0,
    requesters: new Map(),
    quarantine: new Map(),
    busy: new Map(),
    airborne: new Map(),
    budget: { project: FLOCK_LIMITS.defaultBudget },
    lease: null,
    rev: 0,
  };
}

// ---------------------------------------------------------------- field readers
// Every reader takes `unknown` and answers a clean value or undefined; none throws.

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Own property only (a JSON-parsed `__proto__` key is an own key; the prototype's never counts). */
function get(o: Obj, k: string): unknown {
  return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;
}

/** Cuts to at most `cap` UTF-16 units without splitting a surrogate pair. */
function cut(s: string, cap: number): string {
  if (s.length <= cap) return s;
  let end = cap;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

// Control characters other than tab and newline never reach a record.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
const LINE_BREAKS = /[\r\n\u2028\u2029]+/g;

/** Trimmed text, control characters removed, cut to `cap`; undefined when not a string or empty. */
function text(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  // Cut first (bounded work on a huge string), then clean, then cut again.
  const t = cut(cut(v, cap * 2 + 64).replace(/\r\n?/g, '\n').replace(CONTROLS, '').trim(), cap);
  return t ? t : undefined;
}

/** One line of text (line breaks become spaces). */
function line(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  return text(cut(v, cap * 2 + 64).replace(LINE_BREAKS, ' '), cap);
}

/** Text that may be empty: '' when absent or blank, undefined only when present and not a string. */
function optText(v: unknown, cap: number): string | undefined {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') return undefined;
  return text(v, cap) ?? '';
}

const ID = /^[A-Za-z0-9_.:-]+$/;
/** A generated id: letters, digits and `_ . : -`, at most `cap` long. `__proto__` is a fine id. */
function id(v: unknown, cap: number = FLOCK_LIMITS.id): string | undefined {
  return typeof v === 'string' && v.length > 0 && v.length <= cap && ID.test(v) ? v : undefined;
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
function slugId(v: unknown): string | undefined {
  return typeof v === 'string' && v.length <= FLOCK_LIMITS.nestName && SLUG.test(v) ? v : undefined;
}

/** A whole number in [min, max]; undefined otherwise. */
function int(v: unknown, min: number, max: number): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;
}

/** A token count: a whole number ≥ 0, clamped to one call's cap; anything else is 0. */
function tokens(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 0;
  return Math.min(FLOCK_LIMITS.callTokens, Math.floor(v));
}

function oneOf<T extends string>(v: unknown, set: readonly T[]): T | undefined {
  return typeof v === 'string' && (set as readonly string[]).includes(v) ? (v as T) : undefined;
}

function prob(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1 ? v : undefined;
}

/** The value of `n` ASCII digits of `s` at `i`, or -1. */
function digitsAt(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) {
    const c = s.charCodeAt(k) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days inverse; exact for every year 0000-9999). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp (`2026-12-01T10:00:00.000Z`,
 * `...+01:30`), or undefined when it is not one. Written out by hand (not
 * Date.parse, whose leniency differs between engines, and not a regular
 * expression, which cost ten times as much on every event): every host folds
 * the same time. A leap second (:60) reads as :59.
 */
export function flockTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v.length < 20 || v.length > 40) return undefined;
  const y = digitsAt(v, 0, 4);
  const mo = digitsAt(v, 5, 2);
  const d = digitsAt(v, 8, 2);
  const h = digitsAt(v, 11, 2);
  const mi = digitsAt(v, 14, 2);
  const sec = digitsAt(v, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60) return undefined;
  if (v[4] !== '-' || v[7] !== '-' || (v[10] !== 'T' && v[10] !== 't') || v[13] !== ':' || v[16] !== ':') return undefined;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && !leap ? 28 : DAYS_IN_MONTH[mo - 1])) return undefined;
  let i = 19;
  let ms = 0;
  if (v[i] === '.') {
    const from = ++i;
    while (i < v.length && i - from < 9 && v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57) i++;
    if (i === from) return undefined;
    // milliseconds: the first three digits, padded
    ms = digitsAt((v.slice(from, i) + '00').slice(0, 3), 0, 3);
  }
  let offset: number;
  const z = v[i];
  if ((z === 'Z' || z === 'z') && i + 1 === v.length) offset = 0;
  else if ((z === '+' || z === '-') && i + 6 === v.length && v[i + 3] === ':') {
    const oh = digitsAt(v, i + 1, 2);
    const om = digitsAt(v, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return undefined;
    offset = (z === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  } else return undefined;
  return daysFromCivil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + Math.min(sec, 59) * 1000 + ms - offset;
}

/** The RFC 3339 form of a time in ms (what the server puts in `ts`). */
export function flockTs(ms: number): string {
  // The events of one step share their time: one formatting for them all (the same text for the same ms).
  if (ms !== lastTs.ms) lastTs = { ms, text: new Date(ms).toISOString() };
  return lastTs.text;
}
let lastTs = { ms: NaN, text: '' };

// ---------------------------------------------------------------- crows

/** A crow that takes work: one of the eight worker personas or a spun crow. */
export function isWorkerCrow(s: FlockState, name: unknown): name is string {
  return typeof name === 'string' && (isWorkerPersona(name) || s.spun.has(name));
}

/** Any crow: a worker, a spun crow, or a service role (Sentry, Elder, Quill, Boss). */
export function isCrow(s: FlockState, name: unknown): name is string {
  return isWorkerCrow(s, name) || isServiceRole(name);
}

/** A holder in the trust ledger: `flock` (the Sentry's triage) or a working crow. */
export function isTrustHolder(s: FlockState, name: unknown): name is string {
  return name === 'flock' || isWorkerCrow(s, name);
}

function flightCap(name: string): number {
  return isServiceRole(name) ? FLOCK_LIMITS.serviceFlights : FLOCK_LIMITS.crowFlights;
}

/** True when `crow` may be sent now: not quarantined, below its flight cap, and the flock is not saturated. */
export function crowAvailable(s: FlockState, crow: string): boolean {
  if (!isCrow(s, crow) || s.quarantine.has(crow)) return false;
  if (s.airborne.size >= FLOCK_LIMITS.flockFlights) return false;
  return (s.busy.get(crow) ?? 0) < flightCap(crow);
}

/** True when no more flights may start anywhere in the flock. */
export function flockSaturated(s: FlockState): boolean {
  return s.airborne.size >= FLOCK_LIMITS.flockFlights;
}

function takeOff(s: FlockState, key: string, crow: string, at: number): void {
  s.airborne.set(key, { since: at });
  s.busy.set(crow, (s.busy.get(crow) ?? 0) + 1);
}

function land(s: FlockState, key: string, crow: string): void {
  s.airborne.delete(key);
  const n = (s.busy.get(crow) ?? 1) - 1;
  if (n > 0) s.busy.set(crow, n);
  else s.busy.delete(crow);
}

const listKey = (list_id: string, item_id: string, crow: string) => `L\u0000${list_id}\u0000${item_id}\u0000${crow}`;
const nestKey = (nest_id: string, msg_id: string, crow: string) => `N\u0000${nest_id}\u0000${msg_id}\u0000${crow}`;

/** Rotation: remember who flew last, in the core or borrowed from outside it. */
function rotated(nest: Nest, crow: string): void {
  if (nest.core.includes(crow)) nest.lastCore = crow;
  else nest.lastBorrowed = crow;
}

function isBorrowed(nest: Nest | undefined, crow: string): boolean {
  return !!nest && nest.core.length > 0 && !nest.core.includes(crow);
}

// ---------------------------------------------------------------- trust

function baseLevel(s: FlockState, holder: string): number {
  return s.spun.get(holder)?.trust ?? 0;
}

/** The level of `holder` at `task_type` (0 stranger, 1 regular, 2 trusted). */
export function trustLevel(s: FlockState, holder: string, task_type: string): number {
  return levelOf(s, holder, task_type, baseLevel(s, holder));
}

/** Triage needs a person's approval unless the flock is trusted at that task type. */
export function triageNeedsApproval(s: FlockState, task_type: string): boolean {
  return trustLevel(s, 'flock', task_type) < MAX_TRUST;
}

/** An output needs a person's approval unless every crow whose work is in it is trusted at that task type. */
export function outputNeedsApproval(s: FlockState, task_type: string, crows: readonly string[]): boolean {
  return crows.length === 0 || crows.some((c) => trustLevel(s, c, task_type) < MAX_TRUST);
}

function entryOf(s: FlockState, holder: string, task_type: TaskType): TrustEntry {
  return ledgerEntry(s, holder, task_type, baseLevel(s, holder));
}

function recordChange(s: FlockState, c: Omit<TrustChange, 'id'>): TrustChange {
  return ledgerRecord(s, c, FLOCK_LIMITS.keepHistory);
}

/**
 * The verdict's reference as the ledger keeps it, and whether it earns
 * nothing: an approval by the list's requester (the principal who handed the
 * list over) is a yes to one's own work (docs/flock.md "Trust", rule 8).
 */
function verdictRef(ctx: VerdictContext, by: string): { ref: VerdictRef; self: boolean } {
  const ref: VerdictRef = { list_id: ctx.list.list_id, item_id: ctx.item.item_id, target: ctx.target, verdict: ctx.verdict, ...(by ? { by } : {}) };
  return { ref, self: ctx.verdict === 'approved' && by !== '' && by === ctx.list.requester };
}

/** The decider a verdict event names (approved/rejected only). */
function verdictBy(o: Obj, verdict: VerdictValue): string {
  return verdict === 'approved' || verdict === 'rejected' ? (line(get(o, 'by'), FLOCK_LIMITS.requester) ?? '') : '';
}

interface VerdictContext {
  list: FlockList;
  item: FlockItem;
  target: VerdictTarget;
  verdict: VerdictValue;
  holders: string[];
  task_type: TaskType;
}

/** Checks a verdict event against the state: what it judges, or undefined when it is not admissible. */
function verdictContext(s: FlockState, o: Obj): VerdictContext | undefined {
  const list = liveList(s, get(o, 'list_id'));
  if (!list) return undefined;
  const item = itemOf(list, get(o, 'item_id'));
  const target = oneOf(get(o, 'target'), VERDICT_TARGETS);
  const verdict = oneOf(get(o, 'verdict'), VERDICTS);
  if (!item || !target || !verdict || !item.triage || item.skipped) return undefined;
  // `auto` is the verdict exactly when no approval was asked for, and a person's
  // verdict (or a timeout) exactly when one was: every target gets one verdict.
  if (target === 'triage') {
    if (item.triageVerdict) return undefined;
    if (item.triage.needs_approval === (verdict === 'auto')) return undefined;
    return { list, item, target, verdict, holders: ['flock'], task_type: item.triage.task_type };
  }
  if (!item.answer || item.outputVerdict) return undefined;
  if (item.answer.needs_approval === (verdict === 'auto')) return undefined;
  return { list, item, target, verdict, holders: item.answer.crows, task_type: item.triage.task_type };
}

/**
 * The trust changes folding `e` (a `verdict` event) would make, without
 * changing `s`: the service appends the verdict and these `trust.changed`
 * announcements together, in one append.
 */
export function previewTrust(s: FlockState, e: unknown): { holder: string; task_type: TaskType; from: number; to: number; because: VerdictRef[]; list_id: string }[] {
  if (!isObj(e) || get(e, 'type') !== 'verdict') return [];
  const ctx = verdictContext(s, e);
  if (!ctx) return [];
  const out: { holder: string; task_type: TaskType; from: number; to: number; because: VerdictRef[]; list_id: string }[] = [];
  const { ref, self } = verdictRef(ctx, verdictBy(e, ctx.verdict));
  for (const holder of ctx.holders) {
    const j = judge(entryOf(s, holder, ctx.task_type), ref, self);
    if (j.to !== j.from) out.push({ holder, task_type: ctx.task_type, from: j.from, to: j.to, because: j.because, list_id: ctx.list.list_id });
  }
  return out;
}

/** The `trust.changed` event announcing a change the fold computed (what the service appends). */
export function trustChangedEvent(c: { holder: string; task_type: string; from: number; to: number; because: VerdictRef[]; list_id: string }, ts: string): Record<string, unknown> {
  return { type: 'trust.changed', list_id: c.list_id, ts, holder: c.holder, task_type: c.task_type, from: c.from, to: c.to, because: c.because };
}

// ---------------------------------------------------------------- lookups

function liveList(s: FlockState, v: unknown): FlockList | undefined {
  const lid = id(v);
  if (!lid) return undefined;
  const list = s.lists.get(lid);
  return list && !list.finished ? list : undefined;
}

/** The item of `list` named by `v` (`<list_id>-<n>`), found by its number: O(1). */
function itemOf(list: FlockList, v: unknown): FlockItem | undefined {
  if (typeof v !== 'string' || v.length > list.list_id.length + 5) return undefined;
  const prefix = `${list.list_id}-`;
  if (!v.startsWith(prefix)) return undefined;
  const rest = v.slice(prefix.length);
  if (!/^[1-9][0-9]{0,2}$/.test(rest)) return undefined;
  const item = list.items[Number(rest) - 1];
  return item && item.item_id === v ? item : undefined;
}

function triagePassed(item: FlockItem): boolean {
  return item.triageVerdict !== null && (item.triageVerdict.verdict === 'approved' || item.triageVerdict.verdict === 'auto');
}

function workers(item: FlockItem): Flight[] {
  const out: Flight[] = [];
  for (const f of item.flights.values()) if (f.role === 'work') out.push(f);
  return out;
}

function anyFlying(item: FlockItem): boolean {
  for (const f of item.flights.values()) if (f.state === 'flying') return true;
  return false;
}

/** How many worker flights an item wants: 1 solo, one per subtask split, MurderSize murder. */
function wanted(t: Triage): number {
  return t.mode === 'solo' ? 1 : t.mode === 'split' ? t.subtasks.length : FLOCK_LIMITS.murderSize;
}

function requesterOf(s: FlockState, name: string): RequesterRecord {
  let r = s.requesters.get(name);
  if (r) {
    // Most recently active last, so the oldest is dropped first past the cap.
    s.requesters.delete(name);
  } else {
    r = { strikes: [], lists: [], posts: [], cooldownUntil: 0 };
  }
  s.requesters.set(name, r);
  trimOldest(s.requesters, FLOCK_LIMITS.requesters);
  return r;
}

function pushBounded(a: number[], v: number, cap: number): void {
  a.push(v);
  if (a.length > cap) a.shift();
}

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

function step(s: FlockState, type: string, o: Obj, at: number, ts: string, position: number | null): FlockEffect[] {
  switch (type) {
    case 'list.started':
      return listStarted(s, o, at, ts);
    case 'item.triaged':
      return itemTriaged(s, o);
    case 'crow.flying':
      return crowFlying(s, o, at);
    case 'crow.landed':
      return crowLanded(s, o);
    case 'item.answered':
      return itemAnswered(s, o, at);
    case 'verdict':
      return verdictEvent(s, o, at, ts, position);
    case 'trust.changed':
      return trustChanged(s, o, at, ts, position);
    case 'item.skipped':
      return itemSkipped(s, o, at);
    case 'requester.pranked': {
      const list = s.lists.get(id(get(o, 'list_id')) ?? '');
      const cooldown_s = int(get(o, 'cooldown_s'), 0, 1e9);
      if (!list || list.finished || cooldown_s === undefined) return [];
      list.pranks++;
      list.prank = { message: text(get(o, 'message'), FLOCK_LIMITS.reason) ?? '', cooldown_s, at };
      return [{ kind: 'list', list_id: list.list_id }];
    }
    case 'list.finished':
      return listFinished(s, o, at);
    case 'crow.banter':
      return banter(s, o, at);
    case 'banter.started':
      return banterStarted(s, o, at);
    case 'banter.dropped':
      return banterDropped(s, o);
    case 'requester.strike':
      return strike(s, o, at);
    case 'budget.set': {
      const b = int(get(o, 'token_budget'), FLOCK_LIMITS.minBudget, FLOCK_LIMITS.maxBudget);
      if (b === undefined || b === s.budget.project) return [];
      s.budget.project = b;
      return [{ kind: 'budget' }];
    }
    case 'list.budget': {
      const list = liveList(s, get(o, 'list_id'));
      const b = int(get(o, 'token_budget'), FLOCK_LIMITS.minBudget, FLOCK_LIMITS.maxBudget);
      if (!list || b === undefined) return [];
      list.token_budget = b;
      return [{ kind: 'list', list_id: list.list_id }];
    }
    case 'nest.created':
      return nestCreated(s, o, at);
    case 'nest.message':
      return nestMessage(s, o, at, ts);
    case 'nest.flying':
      return nestFlying(s, o, at);
    case 'nest.dropped':
      return nestDropped(s, o);
    case 'nest.landed':
      return nestLanded(s, o);
    case 'jev.tag':
      return jevTag(s, o);
    case 'watch':
      return watch(s, o);
    case 'nest.renamed':
      return nestRenamed(s, o);
    case 'nest.deleted':
      return nestDeleted(s, o);
    case 'crow.removed':
      return crowRemoved(s, o);
    case 'quarantine.lifted': {
      const crow = get(o, 'crow');
      const by = line(get(o, 'by'), FLOCK_LIMITS.requester);
      if (typeof crow !== 'string' || !s.quarantine.has(crow) || !by) return [];
      s.quarantine.delete(crow);
      return [{ kind: 'crow', crow }];
    }
    case 'crow.spun':
      return crowSpun(s, o, at);
    case 'lease.claimed': {
      const node = line(get(o, 'node'), FLOCK_LIMITS.node);
      const ttl = int(get(o, 'ttl_ms'), FLOCK_LIMITS.minLeaseMs, FLOCK_LIMITS.maxLeaseMs);
      if (!node || ttl === undefined) return [];
      const l = s.lease;
      // A claim wins when nobody holds the lease at the claim's time, or it renews the holder's own.
      if (l && l.node !== node && at < l.until) return [];
      s.lease = { node, since: l && l.node === node && at < l.until ? l.since : at, until: at + ttl };
      return [{ kind: 'lease' }];
    }
    case 'lease.released': {
      const node = line(get(o, 'node'), FLOCK_LIMITS.node);
      if (!node || !s.lease || s.lease.node !== node) return [];
      s.lease = null;
      return [{ kind: 'lease' }];
    }
    default:
      return [];
  }
}

function listStarted(s: FlockState, o: Obj, at: number, ts: string): FlockEffect[] {
  const list_id = id(get(o, 'list_id'));
  if (!list_id || s.lists.has(list_id) || s.forgottenLists.has(list_id)) return [];
  const rawNest = get(o, 'nest_id');
  const nest_id = rawNest === undefined ? TODO_NEST : slugId(rawNest);
  if (!nest_id || !s.nests.has(nest_id)) return [];
  const requester = line(get(o, 'requester'), FLOCK_LIMITS.requester);
  const raw = get(o, 'items');
  if (!requester || !Array.isArray(raw) || raw.length < 1 || raw.length > FLOCK_LIMITS.maxItems) return [];
  const items: FlockItem[] = [];
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i];
    if (!isObj(r) || get(r, 'item_id') !== `${list_id}-${i + 1}`) return [];
    const t = text(get(r, 'text'), FLOCK_LIMITS.itemText);
    if (!t) return [];
    items.push({ item_id: `${list_id}-${i + 1}`, n: i + 1, text: t, triage: null, triageVerdict: null, flights: new Map(), answer: null, outputVerdict: null, skipped: null });
  }
  const b = get(o, 'token_budget');
  const token_budget = b === undefined ? s.budget.project : int(b, FLOCK_LIMITS.minBudget, FLOCK_LIMITS.maxBudget);
  if (token_budget === undefined) return [];
  s.lists.set(list_id, {
    list_id,
    nest_id,
    requester,
    startedAt: at,
    ts,
    items,
    token_budget,
    tokens_used: 0,
    banter: { started: 0, lines: 0, open: [] },
    pranks: 0,
    finished: null,
  });
  pushBounded(requesterOf(s, requester).lists, at, FLOCK_LIMITS.listsPerMinute);
  return [{ kind: 'list', list_id }];
}

function itemTriaged(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  if (!list || !item || item.triage || item.skipped) return [];
  // The Sentry's call arrives while its flight is in the air or after it landed well.
  const sentry = item.flights.get('Sentry');
  if (!sentry || sentry.state === 'failed') return [];
  const mode = oneOf(get(o, 'mode'), TRIAGE_MODES);
  const task_type = oneOf(get(o, 'task_type'), TASK_TYPES);
  const needs = get(o, 'needs_approval');
  const reason = optText(get(o, 'reason'), FLOCK_LIMITS.reason);
  const raw = get(o, 'subtasks');
  if (!mode || !task_type || typeof needs !== 'boolean' || reason === undefined) return [];
  if (raw !== undefined && !Array.isArray(raw)) return [];
  const subtasks: string[] = [];
  for (const r of (raw as unknown[] | undefined) ?? []) {
    if (subtasks.length >= FLOCK_LIMITS.maxSubtasks) return [];
    const t = text(r, FLOCK_LIMITS.subtask);
    if (!t) return [];
    subtasks.push(t);
  }
  if (mode === 'split' && subtasks.length < 2) return [];
  item.triage = { mode, task_type, subtasks, reason, needs_approval: needs };
  return [{ kind: 'list', list_id: list.list_id }];
}

function crowFlying(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  if (!list || !item || item.skipped || item.answer || typeof crow !== 'string' || item.flights.has(crow)) return [];
  const nest = s.nests.get(list.nest_id);
  let role: Flight['role'];
  let subtask = 0;
  if (crow === 'Sentry') {
    if (item.triage) return [];
    role = 'triage';
  } else if (crow === 'Elder') {
    // The Elder merges a murder's answers once every crow of it has landed and two or more came back well.
    if (!item.triage || item.triage.mode !== 'murder' || !triagePassed(item) || anyFlying(item)) return [];
    if (workers(item).filter((f) => f.state === 'ok').length < 2) return [];
    role = 'merge';
  } else if (isWorkerCrow(s, crow)) {
    const t = item.triage;
    if (!t || !triagePassed(item) || item.flights.has('Elder')) return [];
    const ws = workers(item);
    if (ws.length >= wanted(t)) return [];
    if (t.mode === 'split') {
      const n = int(get(o, 'subtask'), 1, t.subtasks.length);
      if (n === undefined || ws.some((f) => f.subtask === n)) return [];
      subtask = n;
    }
    role = 'work';
  } else {
    return [];
  }
  const borrowed = role === 'work' && isBorrowed(nest, crow);
  const board = role === 'work' ? boardOf(get(o, 'board')) : undefined;
  item.flights.set(crow, { crow, role, subtask, borrowed, state: 'flying', tokens: 0, error: '', output: '', since: at, ...(board ? { board } : {}) });
  takeOff(s, listKey(list.list_id, item.item_id, crow), crow, at);
  if (role === 'work' && nest) rotated(nest, crow);
  return [{ kind: 'list', list_id: list.list_id }];
}

/** A `crow.flying`'s `board`, when it names a thread and a session as the fleet fold spells them. */
function boardOf(v: unknown): FlightBoard | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const thread = get(v as Obj, 'thread');
  const session = get(v as Obj, 'session');
  return typeof thread === 'string' && typeof session === 'string' && SESSION_ID_PATTERN.test(thread) && SESSION_ID_PATTERN.test(session) ? { thread, session } : undefined;
}

function crowLanded(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  const ok = get(o, 'ok');
  if (!list || !item || typeof crow !== 'string' || typeof ok !== 'boolean') return [];
  const f = item.flights.get(crow);
  if (!f || f.state !== 'flying') return [];
  f.state = ok ? 'ok' : 'failed';
  f.tokens = tokens(get(o, 'tokens'));
  f.error = ok ? '' : (line(get(o, 'error'), FLOCK_LIMITS.error) ?? 'failed');
  f.output = ok ? (text(get(o, 'output'), FLOCK_LIMITS.output) ?? '') : '';
  list.tokens_used += f.tokens;
  land(s, listKey(list.list_id, item.item_id, crow), crow);
  return [{ kind: 'list', list_id: list.list_id }];
}

function itemAnswered(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  if (!list || !item || item.answer || item.skipped || !triagePassed(item) || anyFlying(item)) return [];
  const answer = text(get(o, 'answer'), FLOCK_LIMITS.answer);
  const needs = get(o, 'needs_approval');
  const raw = get(o, 'crows');
  if (!answer || typeof needs !== 'boolean' || !Array.isArray(raw) || raw.length > FLOCK_LIMITS.nestCrows + 4) return [];
  // Only crows that worked this item and came back well are credited (and judged).
  const crows: string[] = [];
  for (const c of raw) {
    if (typeof c !== 'string' || crows.includes(c)) continue;
    const f = item.flights.get(c);
    if (f && f.role === 'work' && f.state === 'ok') crows.push(c);
  }
  if (crows.length === 0) return [];
  item.answer = { text: answer, crows, needs_approval: needs, at };
  return [{ kind: 'list', list_id: list.list_id }];
}

function verdictEvent(s: FlockState, o: Obj, at: number, ts: string, position: number | null): FlockEffect[] {
  const ctx = verdictContext(s, o);
  if (!ctx) return [];
  const { list, item, target, verdict } = ctx;
  const by = verdictBy(o, verdict);
  const record: VerdictRecord = { verdict, by, at };
  if (target === 'triage') item.triageVerdict = record;
  else item.outputVerdict = record;
  const fx: FlockEffect[] = [{ kind: 'list', list_id: list.list_id }];
  const { ref, self } = verdictRef(ctx, by);
  for (const holder of ctx.holders) {
    const j = judge(entryOf(s, holder, ctx.task_type), ref, self);
    s.trust.set(trustKey(holder, ctx.task_type), j.next);
    if (j.to !== j.from) {
      const change = recordChange(s, {
        holder,
        task_type: ctx.task_type,
        from: j.from,
        to: j.to,
        because: j.because,
        list_id: list.list_id,
        by: '',
        reason: '',
        ts,
        at,
        position,
        announced: false,
      });
      fx.push({ kind: 'trust', change: copyChange(change) });
    }
  }
  return fx;
}

function trustChanged(s: FlockState, o: Obj, at: number, ts: string, position: number | null): FlockEffect[] {
  const holder = get(o, 'holder');
  const task_type = oneOf(get(o, 'task_type'), TASK_TYPES);
  const from = int(get(o, 'from'), 0, MAX_TRUST);
  const to = int(get(o, 'to'), 0, MAX_TRUST);
  if (!isTrustHolder(s, holder) || !task_type || from === undefined || to === undefined || from === to) return [];
  const rawBy = get(o, 'by');
  if (rawBy === undefined) {
    // An announcement: it marks the earliest matching change the fold computed
    // from verdicts as announced. It never moves a level by itself.
    const c = announce(s, (c) => c.holder === holder && c.task_type === task_type && c.from === from && c.to === to);
    return c ? [{ kind: 'trust', change: copyChange(c) }] : [];
  }
  // An owner's action: demote or reset, with a reason. Trust is earned, so
  // nobody raises a level by hand.
  const by = line(rawBy, FLOCK_LIMITS.requester);
  const reason = line(get(o, 'reason'), FLOCK_LIMITS.reason);
  if (!by || !reason || !ownerLowers(s, holder, task_type, from, to, baseLevel(s, holder))) return [];
  const change = recordChange(s, { holder, task_type, from, to, because: [], list_id: '', by, reason, ts, at, position, announced: true });
  return [{ kind: 'trust', change: copyChange(change) }];
}

function itemSkipped(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const reason = oneOf(get(o, 'reason'), SKIP_REASONS);
  // Every target that arose gets its one verdict (an answered item its output
  // verdict, a triaged one its triage verdict) before the item can close, and
  // nothing is dropped mid-air.
  if (!list || !item || !reason || item.skipped || item.answer || (item.triage && !item.triageVerdict) || anyFlying(item)) return [];
  item.skipped = { reason, at };
  return [{ kind: 'list', list_id: list.list_id }];
}

function listFinished(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  if (!list || !listDone(list)) return [];
  list.finished = { at, tokens_used: list.tokens_used, token_budget: list.token_budget };
  s.finishedOrder.set(list.list_id, true);
  if (s.finishedOrder.size > FLOCK_LIMITS.keepFinishedLists) {
    const old = s.finishedOrder.keys().next().value as string;
    s.finishedOrder.delete(old);
    s.lists.delete(old);
    s.forgottenLists.add(old);
    trimOldest(s.forgottenLists, FLOCK_LIMITS.rememberForgottenLists);
  }
  return [{ kind: 'list', list_id: list.list_id }];
}

/** Every item of the list is closed: done (its output verdict in) or skipped (itemPhase). */
export function itemsClosed(list: FlockList): boolean {
  for (const it of list.items) if (!it.skipped && !it.outputVerdict) return false;
  return true;
}

function listDone(list: FlockList): boolean {
  return list.banter.open.length === 0 && itemsClosed(list);
}

function banterStarted(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  const to = get(o, 'to');
  if (!list || !item || !isCrow(s, crow) || !isCrow(s, to) || crow === to) return [];
  if (list.banter.started >= FLOCK_LIMITS.banterPerList) return [];
  list.banter.started++;
  list.banter.open.push({ item_id: item.item_id, crow, to, at });
  return [{ kind: 'list', list_id: list.list_id }];
}

function openBanter(list: FlockList, item_id: string, crow: string): number {
  return list.banter.open.findIndex((b) => b.item_id === item_id && b.crow === crow);
}

function banter(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const item = list && itemOf(list, get(o, 'item_id'));
  const crow = get(o, 'crow');
  const to = get(o, 'to');
  const t = line(get(o, 'text'), FLOCK_LIMITS.banterText);
  if (!list || !item || !t || !isCrow(s, crow) || !isCrow(s, to) || crow === to) return [];
  const i = openBanter(list, item.item_id, crow);
  if (i >= 0) list.banter.open.splice(i, 1);
  else if (list.banter.started >= FLOCK_LIMITS.banterPerList) return [];
  else list.banter.started++; // a line whose start was not logged (a client folding the list stream alone)
  list.banter.lines++;
  (list.said ??= []).push({ item_id: item.item_id, crow, to, text: t, at });
  list.tokens_used += tokens(get(o, 'tokens'));
  return [{ kind: 'list', list_id: list.list_id }];
}

function banterDropped(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const crow = get(o, 'crow');
  if (!list || typeof crow !== 'string') return [];
  const i = openBanter(list, typeof get(o, 'item_id') === 'string' ? (get(o, 'item_id') as string) : '', crow);
  if (i < 0) return [];
  list.banter.open.splice(i, 1);
  list.tokens_used += tokens(get(o, 'tokens'));
  return [{ kind: 'list', list_id: list.list_id }];
}

function strike(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const requester = line(get(o, 'requester'), FLOCK_LIMITS.requester);
  const reason = oneOf(get(o, 'reason'), STRIKE_REASONS);
  if (!requester || !reason) return [];
  const r = requesterOf(s, requester);
  r.strikes.push({ at, reason });
  if (r.strikes.length > FLOCK_LIMITS.strikesKept) r.strikes.shift();
  // Strikes within the window, this one included, decide the cooldown: the
  // third starts one of firstCooldownS, each further one doubles it.
  let n = 0;
  for (const k of r.strikes) if (k.at > at - FLOCK_LIMITS.strikeWindowMs && k.at <= at) n++;
  if (n >= FLOCK_LIMITS.strikesForCooldown) {
    const secs = Math.min(FLOCK_LIMITS.maxCooldownS, FLOCK_LIMITS.firstCooldownS * 2 ** (n - FLOCK_LIMITS.strikesForCooldown));
    r.cooldownUntil = Math.max(r.cooldownUntil, at + secs * 1000);
  }
  return [{ kind: 'requester', requester }];
}

// ---------------------------------------------------------------- nests

/** The nest id of a name: lowercase, runs of anything but a-z0-9 become one `-`, trimmed of dashes. */
export function nestSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * A nest's name as kept: one line, control characters removed, runs of
 * white space one space, trimmed; undefined when empty or longer than
 * nestName. The route and the fold clean a name with this one function, so
 * a name the route accepts is the name the fold keeps (and its slug the id).
 */
export function cleanNestName(v: unknown): string | undefined {
  const n = line(v, FLOCK_LIMITS.nestName + 1)?.replace(/\s+/g, ' ');
  return n && n.length <= FLOCK_LIMITS.nestName ? n : undefined;
}

function nestCreated(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const nest_id = slugId(get(o, 'nest_id'));
  const name = cleanNestName(get(o, 'name'));
  const raw = get(o, 'crows');
  // At most maxNests nests, todo counted; an id once deleted stays its old nest's (its messages are in the log).
  if (!nest_id || !name || nestSlug(name) !== nest_id || s.nests.has(nest_id) || s.goneNests.has(nest_id) || s.nests.size >= FLOCK_LIMITS.maxNests) return [];
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > FLOCK_LIMITS.nestCrows) return [];
  const core: string[] = [];
  for (const c of raw) {
    if (!isWorkerPersona(c) || core.includes(c as string)) return [];
    core.push(c as string);
  }
  s.nests.set(nest_id, emptyNest(nest_id, name, core, at, line(get(o, 'by'), FLOCK_LIMITS.requester) ?? ''));
  return [{ kind: 'nest', nest_id }];
}

/** Whose rate a post counts against: the person behind it (`by`) when the event names one, else its author. */
function posterOf(o: Obj, author: string): string {
  const by = get(o, 'by');
  return typeof by === 'string' && by !== '' && by.length <= FLOCK_LIMITS.requester ? by : author;
}

/** Whether a nest may be deleted or a spun crow removed now: none of its flights in the air. */
function nestBusy(s: FlockState, nest: Nest): boolean {
  for (const f of nest.flights.values()) if (f.state === 'flying') return true;
  for (const l of s.lists.values()) if (!l.finished && l.nest_id === nest.nest_id) return true;
  return false;
}

/** Why the owner may not delete a nest now, or '' (the route answers 404, 400 or 409 with it). */
export function nestDeleteRefusal(s: FlockState, nest_id: string): '' | 'unknown' | 'todo' | 'busy' | 'too many' {
  const nest = s.nests.get(nest_id);
  if (!nest) return 'unknown';
  if (nest_id === TODO_NEST) return 'todo';
  if (nestBusy(s, nest)) return 'busy';
  if (s.goneNests.size >= FLOCK_LIMITS.goneNests) return 'too many';
  return '';
}

/** Why the owner may not remove a spun crow now, or '' (it is unknown, or has flights in the air). */
export function crowRemoveRefusal(s: FlockState, name: string): '' | 'unknown' | 'busy' {
  if (!s.spun.has(name)) return 'unknown';
  if ((s.busy.get(name) ?? 0) > 0) return 'busy';
  return '';
}

function nestRenamed(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const name = cleanNestName(get(o, 'name'));
  // The id stays (every msg_id is built on it); todo keeps its name.
  if (!nest || nest.nest_id === TODO_NEST || !name || !nestSlug(name) || name === nest.name || !line(get(o, 'by'), FLOCK_LIMITS.requester)) return [];
  nest.name = name;
  return [{ kind: 'nest', nest_id: nest.nest_id }];
}

function nestDeleted(s: FlockState, o: Obj): FlockEffect[] {
  const nest_id = slugId(get(o, 'nest_id')) ?? '';
  if (nestDeleteRefusal(s, nest_id) !== '' || !line(get(o, 'by'), FLOCK_LIMITS.requester)) return [];
  s.nests.delete(nest_id);
  s.goneNests.add(nest_id);
  // A quarantine started there stays (the crow's breach does not go away with the room): the owner lifts it directly.
  return [{ kind: 'nest', nest_id }];
}

function crowRemoved(s: FlockState, o: Obj): FlockEffect[] {
  const name = get(o, 'name');
  if (typeof name !== 'string' || crowRemoveRefusal(s, name) !== '' || !line(get(o, 'by'), FLOCK_LIMITS.requester)) return [];
  s.spun.delete(name);
  s.quarantine.delete(name);
  for (const n of s.nests.values()) n.invited.delete(name);
  // Its trust goes with it: a crow spun later under the name starts afresh (the history keeps what it earned).
  for (const k of [...s.trust.keys()]) if (k.startsWith(`${name}\u0000`)) s.trust.delete(k);
  return [{ kind: 'crow', crow: name }];
}

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

function nestMessage(s: FlockState, o: Obj, at: number, ts: string): FlockEffect[] {
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

function nestFlying(s: FlockState, o: Obj, at: number): FlockEffect[] {
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
function nestDropped(s: FlockState, o: Obj): FlockEffect[] {
  const nest = s.nests.get(slugId(get(o, 'nest_id')) ?? '');
  const msg_id = get(o, 'msg_id');
  if (!nest || typeof msg_id !== 'string' || !nest.open.has(msg_id) || get(o, 'crow') !== 'Boss' || get(o, 'reason') !== 'saturated') return [];
  const rec = nest.messages.get(msg_id);
  if (!rec || rec.kind !== 'request' || rec.to !== 'Boss' || rec.sent.includes('Boss') || !flockSaturated(s)) return [];
  nest.open.delete(msg_id);
  return [{ kind: 'nest', nest_id: nest.nest_id, msg_id }];
}

function nestLanded(s: FlockState, o: Obj): FlockEffect[] {
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

function jevTag(s: FlockState, o: Obj): FlockEffect[] {
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

function watch(s: FlockState, o: Obj): FlockEffect[] {
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

const SPUN_NAME = /^[A-Za-z][A-Za-z0-9' -]*$/;

/** Why a spin-up would be refused under a registry cap of `cap` (MaxSpunCrows), or '' when it may go ahead (the Boss's reply names the reason). */
export function spinRefusal(s: FlockState, name: unknown, persona: unknown, cap: number = FLOCK_LIMITS.maxSpun): '' | 'cap reached' | 'name taken' | 'persona unknown' | 'bad name' {
  if (s.spun.size >= Math.min(cap, FLOCK_LIMITS.maxSpunCap)) return 'cap reached';
  const n = line(name, FLOCK_LIMITS.crowName);
  if (!n || n !== name || !SPUN_NAME.test(n)) return 'bad name';
  if (isTakenPersonaName(n)) return 'name taken';
  const low = n.toLowerCase();
  for (const k of s.spun.keys()) if (k.toLowerCase() === low) return 'name taken';
  if (!isWorkerPersona(persona)) return 'persona unknown';
  return '';
}

function crowSpun(s: FlockState, o: Obj, at: number): FlockEffect[] {
  const name = get(o, 'name');
  const persona = get(o, 'persona');
  // The cap is the server's setting when the Boss spun it (on the event), so every node folds the same registry.
  const cap = int(get(o, 'cap'), 0, FLOCK_LIMITS.maxSpunCap) ?? FLOCK_LIMITS.maxSpun;
  if (spinRefusal(s, name, persona, cap) !== '') return [];
  // Earned trust cannot be minted: a spun crow starts at stranger or regular.
  const t = get(o, 'trust');
  const trust = t === 'regular' || t === 'trusted' || t === 1 || t === 2 ? 1 : 0;
  const rawNest = slugId(get(o, 'nest_id'));
  s.spun.set(name as string, {
    name: name as string,
    persona: persona as string,
    trust,
    by: line(get(o, 'by'), FLOCK_LIMITS.requester) ?? 'Boss',
    nest_id: rawNest && s.nests.has(rawNest) ? rawNest : '',
    at,
  });
  return [{ kind: 'crow', crow: name as string }];
}

// ---------------------------------------------------------------- queries: lists

export type ItemPhase =
  /** Needs the Sentry. */
  | 'triage'
  | 'triaging'
  /** Triaged; waits for its triage verdict (a person's when needs_approval, else `auto` to write). */
  | 'triage_verdict'
  /** Triage rejected or timed out: skip it with reason `rejected`. */
  | 'rejected'
  /** Needs worker flights (see `toFly`). */
  | 'work'
  | 'flying'
  /** A murder with two or more answers: needs the Elder. */
  | 'merge'
  | 'merging'
  /** Everything landed: write item.answered (see `draftAnswer`). */
  | 'answer'
  /** Answered; waits for its output verdict. */
  | 'output_verdict'
  | 'done'
  | 'skipped'
  /** A flight failed (or the log is inconsistent): skip it with reason `failure`. */
  | 'failed';

/** Where an item stands, derived from its facts (never stored). */
export function itemPhase(item: FlockItem): ItemPhase {
  if (item.skipped) return 'skipped';
  if (item.outputVerdict) return 'done';
  if (item.answer) return 'output_verdict';
  if (!item.triage) {
    const sentry = item.flights.get('Sentry');
    return !sentry ? 'triage' : sentry.state === 'flying' ? 'triaging' : 'failed';
  }
  if (!item.triageVerdict) return 'triage_verdict';
  if (!triagePassed(item)) return 'rejected';
  const elder = item.flights.get('Elder');
  if (elder) return elder.state === 'flying' ? 'merging' : elder.state === 'ok' ? 'answer' : 'failed';
  const ws = workers(item);
  if (ws.some((f) => f.state === 'flying')) return 'flying';
  const t = item.triage;
  if (ws.length === 0) return 'work';
  const ok = ws.filter((f) => f.state === 'ok').length;
  if (t.mode === 'split') {
    if (ws.some((f) => f.state === 'failed')) return 'failed';
    return ws.length < t.subtasks.length ? 'work' : 'answer';
  }
  if (ok === 0) return 'failed';
  if (t.mode === 'murder' && ok >= 2) return 'merge';
  return 'answer';
}

/** Split subtasks (1-based) no crow has taken yet; for solo/murder, how many crows are still wanted. */
export function toFly(item: FlockItem): { subtasks: number[]; crows: number } {
  const t = item.triage;
  if (!t) return { subtasks: [], crows: 0 };
  const ws = workers(item);
  if (t.mode === 'split') {
    const out: number[] = [];
    for (let n = 1; n <= t.subtasks.length; n++) if (!ws.some((f) => f.subtask === n)) out.push(n);
    return { subtasks: out, crows: out.length };
  }
  return { subtasks: [], crows: Math.max(0, wanted(t) - ws.length) };
}

/**
 * The answer an item in phase `answer` should carry, and the crows whose work
 * is in it: solo, the crow's output; split, the subtasks' outputs in order
 * under their subtask; murder, the Elder's merge (or the one answer that came back).
 */
export function draftAnswer(item: FlockItem): { answer: string; crows: string[] } {
  const ok = workers(item).filter((f) => f.state === 'ok');
  const crows = ok.map((f) => f.crow);
  const t = item.triage;
  let answer: string;
  if (t?.mode === 'split') {
    answer = ok
      .slice()
      .sort((a, b) => a.subtask - b.subtask)
      .map((f) => `${f.subtask}. ${t.subtasks[f.subtask - 1] ?? ''}\n${f.output}`)
      .join('\n\n');
  } else if (t?.mode === 'murder' && item.flights.get('Elder')?.state === 'ok') {
    answer = item.flights.get('Elder')!.output;
  } else {
    answer = ok[0]?.output ?? '';
  }
  return { answer: cut(answer, FLOCK_LIMITS.answer), crows };
}

export interface ItemStatus {
  item_id: string;
  text: string;
  phase: ItemPhase;
  triage: Triage | null;
  triage_verdict: VerdictValue | null;
  output_verdict: VerdictValue | null;
  skipped: SkipReason | null;
  flights: { crow: string; role: Flight['role']; subtask: number; borrowed: boolean; state: Flight['state']; tokens: number; error: string; board?: FlightBoard }[];
  answer: string | null;
  crows: string[];
}

export interface ListStatus {
  list_id: string;
  nest_id: string;
  requester: string;
  ts: string;
  token_budget: number;
  tokens_used: number;
  items: ItemStatus[];
  /** Item ids by what they wait for. */
  waiting: { triage: string[]; verdict: string[]; flight: string[]; skip: string[]; answer: string[] };
  banter: { started: number; lines: number; open: number };
  pranks: number;
  /** Every item is done or skipped and no banter is in the air: list.finished may be written. */
  can_finish: boolean;
  finished: boolean;
}

/** A list's status, or undefined when the list is unknown (or forgotten). */
export function listStatus(s: FlockState, list_id: string): ListStatus | undefined {
  const list = s.lists.get(list_id);
  if (!list) return undefined;
  const waiting: ListStatus['waiting'] = { triage: [], verdict: [], flight: [], skip: [], answer: [] };
  const items = list.items.map((it): ItemStatus => {
    const phase = itemPhase(it);
    switch (phase) {
      case 'triage':
      case 'triaging':
        waiting.triage.push(it.item_id);
        break;
      case 'triage_verdict':
      case 'output_verdict':
        waiting.verdict.push(it.item_id);
        break;
      case 'work':
      case 'flying':
      case 'merge':
      case 'merging':
        waiting.flight.push(it.item_id);
        break;
      case 'rejected':
      case 'failed':
        waiting.skip.push(it.item_id);
        break;
      case 'answer':
        waiting.answer.push(it.item_id);
        break;
    }
    return {
      item_id: it.item_id,
      text: it.text,
      phase,
      triage: it.triage,
      triage_verdict: it.triageVerdict?.verdict ?? null,
      output_verdict: it.outputVerdict?.verdict ?? null,
      skipped: it.skipped?.reason ?? null,
      flights: [...it.flights.values()].map(({ crow, role, subtask, borrowed, state, tokens, error, board }) => ({ crow, role, subtask, borrowed, state, tokens, error, ...(board ? { board } : {}) })),
      answer: it.answer?.text ?? null,
      crows: it.answer?.crows ?? [],
    };
  });
  return {
    list_id: list.list_id,
    nest_id: list.nest_id,
    requester: list.requester,
    ts: list.ts,
    token_budget: list.token_budget,
    tokens_used: list.tokens_used,
    items,
    waiting,
    banter: { started: list.banter.started, lines: list.banter.lines, open: list.banter.open.length },
    pranks: list.pranks,
    can_finish: !list.finished && listDone(list),
    finished: list.finished !== null,
  };
}

/** Lists not finished yet, oldest first (what a driver resumes after a restart). */
export function unfinishedLists(s: FlockState): string[] {
  const out: string[] = [];
  for (const l of s.lists.values()) if (!l.finished) out.push(l.list_id);
  return out;
}

/** The requester's lists still flying (where a `requester.pranked` goes). */
export function flyingListsOf(s: FlockState, requester: string): string[] {
  const out: string[] = [];
  for (const l of s.lists.values()) if (!l.finished && l.requester === requester) out.push(l.list_id);
  return out;
}

/**
 * What a restart must redo or fail: flights in the air (a `crow.flying` or
 * `nest.flying` with no landing) and banter started but neither spoken nor dropped.
 */
export function inFlight(s: FlockState): {
  flights: { list_id: string; item_id: string; crow: string; role: Flight['role']; subtask: number; since: number }[];
  nestFlights: { nest_id: string; msg_id: string; crow: string; since: number }[];
  banter: { list_id: string; item_id: string; crow: string; to: string; since: number }[];
} {
  const flights: ReturnType<typeof inFlight>['flights'] = [];
  const nestFlights: ReturnType<typeof inFlight>['nestFlights'] = [];
  for (const key of s.airborne.keys()) {
    const [kind, a, b, crow] = key.split('\u0000');
    if (kind === 'L') {
      const f = s.lists.get(a)?.items.find((i) => i.item_id === b)?.flights.get(crow);
      if (f) flights.push({ list_id: a, item_id: b, crow, role: f.role, subtask: f.subtask, since: f.since });
    } else {
      const f = s.nests.get(a)?.flights.get(`${b}\u0000${crow}`);
      if (f) nestFlights.push({ nest_id: a, msg_id: b, crow, since: f.since });
    }
  }
  const banter: ReturnType<typeof inFlight>['banter'] = [];
  for (const l of s.lists.values()) for (const b of l.banter.open) banter.push({ list_id: l.list_id, item_id: b.item_id, crow: b.crow, to: b.to, since: b.at });
  return { flights, nestFlights, banter };
}

// ---------------------------------------------------------------- queries: requesters

/** Seconds of cooldown left for `requester` at `now` (0: none). */
export function cooldownS(s: FlockState, requester: string, now: number): number {
  const r = s.requesters.get(requester);
  if (!r || r.cooldownUntil <= now) return 0;
  return Math.ceil((r.cooldownUntil - now) / 1000);
}

/**
 * True when one more list (or nest post) by `requester` at `now` would pass
 * the per-minute rate: the service refuses it with a `rate` strike.
 */
export function overRate(s: FlockState, requester: string, now: number, what: 'list' | 'post'): boolean {
  const r = s.requesters.get(requester);
  if (!r) return false;
  const times = what === 'list' ? r.lists : r.posts;
  const cap = what === 'list' ? FLOCK_LIMITS.listsPerMinute : FLOCK_LIMITS.postsPerMinute;
  let n = 0;
  for (const t of times) if (t > now - 60_000 && t <= now) n++;
  return n >= cap;
}

/** A requester's strikes (newest last) and cooldown, for the ledger view. */
export function strikesOf(s: FlockState, requester: string): { strikes: { at: number; reason: StrikeReason }[]; cooldownUntil: number } {
  const r = s.requesters.get(requester);
  return { strikes: r ? r.strikes.slice() : [], cooldownUntil: r?.cooldownUntil ?? 0 };
}

// ---------------------------------------------------------------- queries: trust

export interface LedgerJSON {
  protocol: number;
  levels: readonly string[];
  rules: ReturnType<typeof trustRules>;
  holders: {
    holder: string;
    task_type: TaskType;
    level: number;
    level_name: TrustName;
    run: number;
    approved: number;
    rejected: number;
    timeout: number;
    auto: number;
  }[];
  starting: { holder: string; level: number }[];
  history: {
    id: number;
    holder: string;
    task_type: TaskType;
    from: number;
    to: number;
    because: VerdictRef[];
    list_id: string;
    by?: string;
    reason?: string;
    ts: string;
  }[];
}

/** The ledger as `GET /api/trust` serves it (docs/flock.md): entries sorted by holder then task type; history oldest first. */
export function flockLedger(s: FlockState): LedgerJSON {
  const holders = [...s.trust.values()]
    .sort((a, b) => (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : TASK_TYPES.indexOf(a.task_type) - TASK_TYPES.indexOf(b.task_type)))
    .map((e) => ({
      holder: e.holder,
      task_type: e.task_type,
      level: e.level,
      level_name: TRUST_LEVELS[e.level],
      run: e.run,
      approved: e.approved,
      rejected: e.rejected,
      timeout: e.timeout,
      auto: e.auto,
    }));
  const starting = [...s.spun.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((c) => ({ holder: c.name, level: c.trust }));
  const history = s.history.map((c) => ({
    id: c.id,
    holder: c.holder,
    task_type: c.task_type,
    from: c.from,
    to: c.to,
    because: c.because,
    list_id: c.list_id,
    ...(c.by ? { by: c.by, reason: c.reason } : {}),
    ts: c.ts,
  }));
  return {
    protocol: FLOCK_PROTOCOL_VERSION,
    levels: TRUST_LEVELS,
    rules: trustRules(),
    holders,
    starting,
    history,
  };
}

/** Changes computed from verdicts whose `trust.changed` is not in the log yet (a restart appends them). */
export function unannouncedTrust(s: FlockState): TrustChange[] {
  return s.history.filter((c) => !c.announced);
}

// ---------------------------------------------------------------- queries: nests and crows

/** `GET /api/nests`: the roster (the eight workers) and every nest with its core, `todo` first. */
export function nestsIndex(s: FlockState): { roster: string[]; nests: { nest_id: string; name: string; crows: string[] }[] } {
  return {
    roster: [...WORKER_NAMES],
    nests: [...s.nests.values()].map((n) => ({ nest_id: n.nest_id, name: n.name, crows: n.core.slice() })),
  };
}

/** Why a nest could not be created, or '' (the edge answers 400 or 409 with this). */
export function nestRefusal(s: FlockState, name: unknown, crows: unknown): '' | 'bad name' | 'taken' | 'too many nests' | 'bad crows' {
  const n = cleanNestName(name);
  if (!n || !nestSlug(n)) return 'bad name';
  if (!Array.isArray(crows) || crows.length < 1 || crows.length > FLOCK_LIMITS.nestCrows) return 'bad crows';
  const seen = new Set<string>();
  for (const c of crows) {
    if (!isWorkerPersona(c) || seen.has(c as string)) return 'bad crows';
    seen.add(c as string);
  }
  if (s.nests.has(nestSlug(n)) || s.goneNests.has(nestSlug(n))) return 'taken';
  if (s.nests.size >= FLOCK_LIMITS.maxNests) return 'too many nests';
  return '';
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

/** Quarantined crows, in the order they were flagged. */
export function quarantined(s: FlockState): Quarantine[] {
  return [...s.quarantine.values()];
}

/** `GET /api/crows`: the spun-crow registry sorted by name, with the level each started at. */
export function spunCrows(s: FlockState): { name: string; persona: string; trust: 'stranger' | 'regular' }[] {
  return [...s.spun.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((c) => ({ name: c.name, persona: c.persona, trust: c.trust === 1 ? 'regular' : 'stranger' }));
}

function rotate(names: readonly string[], last: string): string[] {
  const i = names.indexOf(last);
  return i < 0 ? names.slice() : [...names.slice(i + 1), ...names.slice(0, i + 1)];
}

/**
 * Picks up to `n` working crows for a job in `nest_id`: the nest's core first,
 * rotating from after the core crow that flew last; then, when the core is
 * short, crows from outside it (the roster in order, then spun crows by name),
 * rotating from after the one borrowed last. Quarantined crows, crows at their
 * flight cap and `exclude` are skipped; a saturated flock yields nothing. In
 * `todo` (empty core) every crow comes from the whole flock and none is
 * "borrowed". `pending` are flights already picked but not folded yet (a
 * driver composes several steps from one state): each counts as in the air
 * and advances its nest's rotation, so two picks from one state do not both
 * take the same crow. A pure function of its arguments.
 */
export function pickCrows(s: FlockState, nest_id: string, n: number, exclude: readonly string[] = [], pending: readonly { crow: string; nest_id: string }[] = []): { crow: string; borrowed: boolean }[] {
  const nest = s.nests.get(nest_id) ?? s.nests.get(TODO_NEST)!;
  const out: { crow: string; borrowed: boolean }[] = [];
  if (n <= 0) return out;
  const free = FLOCK_LIMITS.flockFlights - s.airborne.size - pending.length;
  const want = Math.min(n, free);
  let lastCore = nest.lastCore;
  let lastBorrowed = nest.lastBorrowed;
  const planned = new Map<string, number>();
  for (const p of pending) {
    planned.set(p.crow, (planned.get(p.crow) ?? 0) + 1);
    if (p.nest_id !== nest.nest_id) continue;
    if (nest.core.includes(p.crow)) lastCore = p.crow;
    else lastBorrowed = p.crow;
  }
  const ok = (c: string) => !exclude.includes(c) && crowAvailable(s, c) && (s.busy.get(c) ?? 0) + (planned.get(c) ?? 0) < flightCap(c);
  for (const c of rotate(nest.core, lastCore)) {
    if (out.length >= want) return out;
    if (ok(c)) out.push({ crow: c, borrowed: false });
  }
  const spun = [...s.spun.keys()].sort();
  const outside = [...WORKER_NAMES, ...spun].filter((c) => !nest.core.includes(c));
  for (const c of rotate(outside, lastBorrowed)) {
    if (out.length >= want) return out;
    if (ok(c)) out.push({ crow: c, borrowed: nest.core.length > 0 });
  }
  return out;
}

/** Who drives the flock at `now` (its lease holder), or '' when nobody holds a live lease. */
export function leaseHolder(s: FlockState, now: number): string {
  return s.lease && now < s.lease.until ? s.lease.node : '';
}

// ---------------------------------------------------------------- a list's stream alone

/**
 * Seeds a state with the context a list's own stream does not carry: the
 * nests (`GET /api/nests`'s `nests`) and the spun crows (`GET /api/crows`'s
 * `crows`), which the server folds from internal events that are never sent
 * on a list stream. A browser seeds an empty state this way, then folds the
 * list's stream from its start, and sees the list as the server does (trust
 * announcements aside: the ledger comes from `GET /api/trust`). Entries that
 * are not well formed, or already known, are skipped; returns how many were added.
 */
export function seedFlock(s: FlockState, ctx: { nests?: unknown; crows?: unknown }): number {
  let added = 0;
  if (Array.isArray(ctx.nests))
    for (const n of ctx.nests.slice(0, FLOCK_LIMITS.maxNests + 1)) {
      if (!isObj(n)) continue;
      const nest_id = slugId(get(n, 'nest_id'));
      const name = line(get(n, 'name'), FLOCK_LIMITS.nestName);
      const crows = get(n, 'crows');
      if (!nest_id || !name || s.nests.has(nest_id) || !Array.isArray(crows) || crows.length > FLOCK_LIMITS.nestCrows) continue;
      const core = [...new Set(crows.filter((c): c is string => isWorkerPersona(c)))];
      s.nests.set(nest_id, emptyNest(nest_id, name, core, 0, ''));
      added++;
    }
  if (Array.isArray(ctx.crows))
    for (const c of ctx.crows.slice(0, FLOCK_LIMITS.maxSpunCap)) {
      if (!isObj(c) || spinRefusal(s, get(c, 'name'), get(c, 'persona'), FLOCK_LIMITS.maxSpunCap) !== '') continue;
      const name = get(c, 'name') as string;
      s.spun.set(name, { name, persona: get(c, 'persona') as string, trust: get(c, 'trust') === 'regular' ? 1 : 0, by: '', nest_id: '', at: 0 });
      added++;
    }
  if (added) s.rev++;
  return added;
}

// ---------------------------------------------------------------- snapshots

// Maps and Sets are written as tagged arrays; everything else in the state is
// plain data built by this module, so the tags cannot collide with it.
function dec(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dec);
  if (v && typeof v === 'object') {
    const o = v as Obj;
    if (Array.isArray(get(o, '$map'))) return new Map((o.$map as [string, unknown][]).map(([k, x]) => [k, dec(x)]));
    if (Array.isArray(get(o, '$set'))) return new Set(o.$set as unknown[]);
    // Records keyed by label (probabilities) get a null prototype, so no key reaches Object.prototype.
    const out: Record<string, unknown> = Object.create(null);
    for (const k of Object.keys(o)) out[k] = dec(o[k]);
    return { ...out };
  }
  return v;
}

/**
 * `JSON.stringify`'s replacer for the flock's state (or anything holding it):
 * Maps and Sets as `{$map: [[key, value], …]}` and `{$set: […]}`, what
 * `flockFromJSON` reads. A snapshot is written with it in one pass, with no
 * copy of the state built first.
 */
export function flockReplacer(_key: string, v: unknown): unknown {
  if (v instanceof Map) return { $map: [...v] };
  if (v instanceof Set) return { $set: [...v] };
  return v;
}

/** The state as plain JSON (a snapshot, as an object: the server writes its text with `flockReplacer`). */
export function flockToJSON(s: FlockState): unknown {
  return JSON.parse(JSON.stringify(s, flockReplacer));
}

/** The state back from `flockToJSON`'s output. */
export function flockFromJSON(j: unknown): FlockState {
  const s = dec(j) as FlockState;
  // Snapshots from before nests could be deleted.
  if (!(s.goneNests instanceof Set)) s.goneNests = new Set();
  return s;
}
