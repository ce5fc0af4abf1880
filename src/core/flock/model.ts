// The flock's closed sets, its caps (FLOCK_LIMITS), the state's shape and the
// empty state: what every other part of the fold (src/core/flock/*) reads.

import type { LedgerEntry, LedgerChange } from '../trust.js';

export const FLOCK_PROTOCOL_VERSION = 1;


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
  /**
   * The crows that have flown in this nest in the rotation's current round. A
   * pick takes the others first (then these, in rotation order): which crows
   * flew does not depend on the order concurrent steps were appended, as the
   * last-picked pointer alone does. A crow flying again starts a new round of
   * its group (the core, or the crows outside it): crows.ts, rotated.
   */
  round: Set<string>;
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

export function emptyNest(nest_id: string, name: string, core: string[], at: number, by: string): Nest {
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
    round: new Set(),
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

/**
 * One event type's handler: folds the event (`o`, its time `at` in ms and
 * `ts` as written, its log position when known) into `s` in place and says
 * what changed; [] when the event changes nothing. Each part of the fold
 * names its handlers in a table (`*_STEPS`); src/core/flock.ts composes them.
 */
export type FlockStep = (s: FlockState, o: Record<string, unknown>, at: number, ts: string, position: number | null) => FlockEffect[];
