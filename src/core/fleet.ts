// The fleet fold: the board of shared remote Claude Code sessions, one board
// per thread (the app is "fleet" everywhere; its events keep the contract's
// wire names, `session.*`).
//
// The workstation bridge and the members post durable `session.*` events to a
// thread's stream (`sessions:<thread>`, the name it always had in the log); every reader (server, browser, anyone's script)
// folds them with this module into the same board and the same chat lines.
// The contract is `spec/agents-fold.vectors.json`: its state shape, its notes
// (rules) and its 13 vectors, which pass here byte for byte as data.
//
// This module has no imports and touches no clock, no I/O and no randomness.
// Time arrives on the event (`ts`, set by the transport).
//
// Invariants kept by every function here, whatever the input:
// - nothing throws; a hostile event (wrong types, unknown type, bad id, huge
//   strings, forged fields) is clamped or folds to a no-op;
// - `reduceSessions` never mutates its input: it returns a new state when the
//   event changes something and the very same object when it does not, so
//   `reduceSessions(s, e) === s` is the test for "this event was a no-op";
// - a thread holds at most `SESSION_LIMITS.sessions` sessions;
// - `ended` is terminal: once a session is ended, no event changes it again
//   (while it is on the board; an evicted session is forgotten entirely);
// - an approval that was allowed or denied never changes again, and an
//   approval exists only once the bridge has posted it as pending;
// - `name`, `uid` and `ts` of an event are the transport's (who posted it and
//   when), never payload: the session's human name rides as `session`.

/** Wire protocol version of the fleet app. History: 1 — the contract's 13 vectors. */
export const FLEET_PROTOCOL_VERSION = 1;

/** Durable event types: stored in the log and folded. */
export const SESSION_EVENT_TYPES = [
  'session.spawn',
  'session.status',
  'session.prompt',
  'session.turn',
  'session.approval',
  'session.result',
  'session.end',
] as const;
export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];

/** Ephemeral types: relayed live on the lossy channel, never stored; a stored copy folds to a no-op. */
export const SESSION_EPHEMERAL_TYPES = ['session.tool', 'session.stream'] as const;

export const SESSION_STATES = ['running', 'idle', 'waiting', 'dead', 'ended'] as const;
export type SessionState = (typeof SESSION_STATES)[number];
/** The states a `session.status` may set: `ended` only comes with `session.end`. */
export const SESSION_STATUS_STATES = ['running', 'idle', 'waiting', 'dead'] as const;

export const SESSION_FLAVORS = ['scoped', 'plain'] as const;
export type SessionFlavor = (typeof SESSION_FLAVORS)[number];

export const APPROVAL_STATES = ['pending', 'allowed', 'denied'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/**
 * The name on the board's echo of an outcome nobody decided (the request's
 * window passed, or it was withdrawn: its bridge went away, the bridge's own
 * window ended): the server writes it, and a bridge reads it as "no decision"
 * (docs/approvals.md). A decision by a person carries the decider's name.
 */
export const FLEET_NO_DECISION = 'Roost';

/** Session ids and approval request ids. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Caps from the contract's state shape, plus the few it leaves open (see docs/fleet.md). */
export const SESSION_LIMITS = {
  name: 80,
  root: 300,
  worktree: 300,
  by: 80,
  activity: 200,
  result: 500,
  tool: 120,
  digest: 200,
  reason: 120,
  /** Prompt and turn text (not kept on the board, only projected into the chat). */
  text: 20_000,
  /** Sessions per thread. */
  sessions: 50,
  /** Approvals kept per session. */
  approvals: 100,
} as const;

export interface Approval {
  rid: string;
  tool: string;
  digest: string;
  state: ApprovalState;
  /** Who decided (the transport name of the decider); empty while pending. */
  by: string;
}

export interface Session {
  id: string;
  name: string;
  flavor: SessionFlavor;
  root: string;
  worktree: string;
  by: string;
  ts: number;
  state: SessionState;
  activity: string;
  statusTs: number;
  prompts: number;
  turns: number;
  result: string;
  approvals: Approval[];
  endedAt: number;
  reason: string;
}

/** The board of one thread. Plain JSON: it is the snapshot's wire form as is. */
export interface SessionsState {
  sessions: Session[];
}

/** A session event as it arrives (every field untrusted). */
export interface SessionEvent {
  type?: unknown;
  id?: unknown;
  session?: unknown;
  flavor?: unknown;
  root?: unknown;
  worktree?: unknown;
  by?: unknown;
  state?: unknown;
  activity?: unknown;
  text?: unknown;
  rid?: unknown;
  tool?: unknown;
  digest?: unknown;
  summary?: unknown;
  reason?: unknown;
  name?: unknown;
  uid?: unknown;
  ts?: unknown;
  [k: string]: unknown;
}

/** A chat line projected from an event; its author is the event's (transport) `name`. */
export interface SessionChatLine {
  text: string;
  /** true: an action line ("Paul asked …"); false: a bubble in the author's voice. */
  action: boolean;
}

export function emptySessions(): SessionsState {
  return { sessions: [] };
}

// ---------------------------------------------------------------- helpers

export function isOneOf<T extends string>(list: readonly T[], v: unknown): v is T {
  return typeof v === 'string' && (list as readonly string[]).includes(v);
}

function validId(v: unknown): v is string {
  return typeof v === 'string' && SESSION_ID_PATTERN.test(v);
}

/** Cuts to at most `cap` UTF-16 units without splitting a surrogate pair. */
export function clampUnits(s: string, cap: number): string {
  if (s.length <= cap) return s;
  let end = cap;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

// Control characters (and, for one-liners, line breaks) become spaces: a
// board field can never break the card's layout or smuggle terminal escapes.
const CONTROL_ONE_LINE = /[\u0000-\u001f\u007f\u2028\u2029]+/g;
const CONTROL_MULTI_LINE = /[\u0000-\u0009\u000b-\u001f\u007f]+/g;

/** A one-line field: string or nothing, cleaned, trimmed, clamped (exported: Work compares against what the board stored). */
export function line(v: unknown, cap: number): string {
  if (typeof v !== 'string') return '';
  return clampUnits(v.replace(CONTROL_ONE_LINE, ' ').trim(), cap);
}

/** A multi-line field (line breaks kept). */
export function para(v: unknown, cap: number): string {
  if (typeof v !== 'string') return '';
  return clampUnits(v.replace(/\r\n?/g, '\n').replace(CONTROL_MULTI_LINE, ' ').trim(), cap);
}

function tsOf(e: SessionEvent): number {
  const t = e.ts;
  return typeof t === 'number' && Number.isFinite(t) ? t : 0;
}

function asEvent(e: unknown): SessionEvent | null {
  return e !== null && typeof e === 'object' && !Array.isArray(e) ? (e as SessionEvent) : null;
}

function sessionsOf(s: unknown): Session[] {
  const list = s !== null && typeof s === 'object' ? (s as { sessions?: unknown }).sessions : undefined;
  return Array.isArray(list) ? (list as Session[]) : [];
}

function indexOf(list: Session[], id: string): number {
  for (let i = 0; i < list.length; i++) if (list[i] && list[i].id === id) return i;
  return -1;
}

/** A new state with the session at `i` replaced by `next`. */
function replaceAt(list: Session[], i: number, next: Session): SessionsState {
  const out = list.slice();
  out[i] = next;
  return { sessions: out };
}

/** Which ended session a full board gives up for a new one: the one that ended first. */
function evictionIndex(list: Session[]): number {
  let best = -1;
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x.state !== 'ended') continue;
    if (best < 0 || x.endedAt < list[best].endedAt) best = i;
  }
  return best;
}

// ---------------------------------------------------------------- the fold

/**
 * Folds one event into the board. Returns a new state when the event changes
 * something, and `state` itself when it is a no-op (unknown type, bad id,
 * unknown or ended session, impossible transition, ephemeral type).
 */
export function reduceSessions(state: SessionsState, event: unknown): SessionsState {
  const e = asEvent(event);
  if (!e) return state;
  const type = e.type;
  if (!isOneOf(SESSION_EVENT_TYPES, type)) return state; // unknown and ephemeral types alike
  if (!validId(e.id)) return state;
  const id = e.id;
  const list = sessionsOf(state);
  const i = indexOf(list, id);
  const ts = tsOf(e);

  if (type === 'session.spawn') {
    // Idempotent by id and never replacing: history can't be rewritten by a later spawn.
    if (i >= 0) return state;
    const created: Session = {
      id,
      name: line(e.session, SESSION_LIMITS.name) || id,
      flavor: e.flavor === 'plain' ? 'plain' : 'scoped', // anything else reads as the safe flavor
      root: line(e.root, SESSION_LIMITS.root),
      worktree: line(e.worktree, SESSION_LIMITS.worktree),
      by: line(e.by, SESSION_LIMITS.by),
      ts,
      state: 'running',
      activity: '',
      statusTs: ts,
      prompts: 0,
      turns: 0,
      result: '',
      approvals: [],
      endedAt: 0,
      reason: '',
    };
    let kept = list;
    if (list.length >= SESSION_LIMITS.sessions) {
      // A full board makes room only by forgetting an ended session; live
      // sessions are never pushed off the board, so the spawn is dropped instead.
      const victim = evictionIndex(list);
      if (victim < 0) return state;
      kept = list.filter((_, k) => k !== victim);
    }
    return { sessions: [...kept, created] };
  }

  if (i < 0) return state;
  const cur = list[i];
  if (cur.state === 'ended') return state; // terminal: nothing resurrects or edits an ended session

  switch (type) {
    case 'session.status': {
      if (!isOneOf(SESSION_STATUS_STATES, e.state)) return state;
      const activity = line(e.activity, SESSION_LIMITS.activity);
      if (cur.state === e.state && cur.activity === activity && cur.statusTs === ts) return state;
      return replaceAt(list, i, { ...cur, state: e.state, activity, statusTs: ts });
    }
    case 'session.prompt': {
      if (para(e.text, SESSION_LIMITS.text) === '') return state;
      return replaceAt(list, i, { ...cur, prompts: cur.prompts + 1 });
    }
    case 'session.turn':
      // A turn with no text (tool calls only) still counts as a turn; it just says nothing in the chat.
      return replaceAt(list, i, { ...cur, turns: cur.turns + 1 });
    case 'session.result': {
      const result = para(e.summary, SESSION_LIMITS.result);
      if (result === '' || result === cur.result) return state;
      return replaceAt(list, i, { ...cur, result });
    }
    case 'session.approval': {
      if (!validId(e.rid) || !isOneOf(APPROVAL_STATES, e.state)) return state;
      const rid = e.rid;
      const approvals = Array.isArray(cur.approvals) ? cur.approvals : [];
      const k = approvals.findIndex((a) => a.rid === rid);
      if (e.state === 'pending') {
        if (k >= 0) return state; // a re-post never replaces the request nor reopens a decision
        let kept = approvals;
        if (approvals.length >= SESSION_LIMITS.approvals) {
          const oldestDecided = approvals.findIndex((a) => a.state !== 'pending');
          // All pending: the new request is dropped, and the bridge's window denies it (fail safe).
          if (oldestDecided < 0) return state;
          kept = approvals.filter((_, n) => n !== oldestDecided);
        }
        const request: Approval = {
          rid,
          tool: line(e.tool, SESSION_LIMITS.tool),
          digest: line(e.digest, SESSION_LIMITS.digest),
          state: 'pending',
          by: '',
        };
        return replaceAt(list, i, { ...cur, approvals: [...kept, request] });
      }
      // A decision: only onto a posted, still pending request; the first one wins.
      if (k < 0 || approvals[k].state !== 'pending') return state;
      const decided: Approval = { ...approvals[k], state: e.state, by: line(e.name, SESSION_LIMITS.by) };
      const next = approvals.slice();
      next[k] = decided;
      return replaceAt(list, i, { ...cur, approvals: next });
    }
    case 'session.end': {
      const approvals = (Array.isArray(cur.approvals) ? cur.approvals : []).filter((a) => a.state !== 'pending');
      return replaceAt(list, i, {
        ...cur,
        state: 'ended',
        approvals,
        endedAt: ts,
        reason: line(e.reason, SESSION_LIMITS.reason),
      });
    }
  }
  return state;
}

/** Folds a sequence of events. */
export function foldSessions(state: SessionsState, events: Iterable<unknown>): SessionsState {
  let s = state;
  for (const e of events) s = reduceSessions(s, e);
  return s;
}

// ---------------------------------------------------------------- the chat projection

/**
 * The chat line an event speaks in its thread, or null.
 *
 * With `before` (the board before this event, as the server and the browser
 * always pass it): an event that folds to a no-op says nothing, and the
 * session's name is the board's, not the payload's. Without it, the line is
 * built from the event alone (a preview: a forged duplicate would still speak).
 */
export function projectSession(event: unknown, before?: SessionsState): SessionChatLine | null {
  if (before !== undefined && reduceSessions(before, event) === before) return null;
  return chatLine(event, before);
}

/** The line of an event that is known to change `before` (or of an event alone, without a board). */
function chatLine(event: unknown, before: SessionsState | undefined): SessionChatLine | null {
  const e = asEvent(event);
  if (!e || !isOneOf(SESSION_EVENT_TYPES, e.type) || !validId(e.id)) return null;
  let known: Session | undefined;
  if (before !== undefined) {
    const list = sessionsOf(before);
    const i = indexOf(list, e.id);
    known = i >= 0 ? list[i] : undefined;
  }
  const name = known ? known.name : line(e.session, SESSION_LIMITS.name) || e.id;
  switch (e.type) {
    case 'session.spawn': {
      const root = line(e.root, SESSION_LIMITS.root);
      return { text: root ? `started session “${name}” on ${root}` : `started session “${name}”`, action: true };
    }
    case 'session.status':
      return null; // board truth only; a status line per frame would drown the chat
    case 'session.prompt': {
      const text = para(e.text, SESSION_LIMITS.text);
      return text ? { text: `asked ${name}: “${text}”`, action: true } : null;
    }
    case 'session.turn': {
      const text = para(e.text, SESSION_LIMITS.text);
      return text ? { text: `[${name}] ${text}`, action: false } : null;
    }
    case 'session.result': {
      const summary = para(e.summary, SESSION_LIMITS.result);
      return summary ? { text: `[${name}] ✅ ${summary}`, action: false } : null;
    }
    case 'session.approval': {
      if (!validId(e.rid) || !isOneOf(APPROVAL_STATES, e.state)) return null;
      const posted = known && Array.isArray(known.approvals) ? known.approvals.find((a) => a.rid === e.rid) : undefined;
      if (e.state === 'pending') {
        const tool = line(e.tool, SESSION_LIMITS.tool) || 'a tool';
        const digest = line(e.digest, SESSION_LIMITS.digest);
        return { text: `[${name}] needs approval to run ${tool}${digest ? `: ${digest}` : ''}`, action: false };
      }
      const tool = (posted ? posted.tool : line(e.tool, SESSION_LIMITS.tool)) || 'a tool';
      return { text: `${e.state === 'allowed' ? 'allowed' : 'denied'} ${tool} in ${name}`, action: true };
    }
    case 'session.end': {
      const reason = line(e.reason, SESSION_LIMITS.reason);
      if (reason === '' || reason === 'closed') return { text: `closed session “${name}”`, action: true };
      return { text: `ended session “${name}” (${reason})`, action: true };
    }
  }
  return null;
}

/** Folds one event and projects it against the board before it: what a reader of the stream does per event. */
export function applySessionEvent(state: SessionsState, event: unknown): { state: SessionsState; chat: SessionChatLine | null } {
  const next = reduceSessions(state, event);
  return { state: next, chat: next === state ? null : chatLine(event, state) };
}

// ---------------------------------------------------------------- conflicts with the board

/** What the server answers when a well-formed event makes no sense on the current board. */
export interface SessionConflict {
  status: 404 | 409;
  kind: 'not_found' | 'conflict';
  message: string;
}

/**
 * Checks a well-formed event (see `checkSessionEvent`) against the board it
 * would fold into: null when it would change the board, otherwise why not.
 * Two posts can race past this check; the fold still decides (first wins).
 */
export function sessionEventConflict(state: SessionsState, event: unknown): SessionConflict | null {
  const e = asEvent(event);
  if (!e || !isOneOf(SESSION_EVENT_TYPES, e.type) || !validId(e.id)) return null;
  const list = sessionsOf(state);
  const i = indexOf(list, e.id);
  if (e.type === 'session.spawn') {
    if (i >= 0) return { status: 409, kind: 'conflict', message: `session "${e.id}" already exists; a new session needs a new id` };
    if (list.length >= SESSION_LIMITS.sessions && evictionIndex(list) < 0) {
      return { status: 409, kind: 'conflict', message: `this thread already has ${SESSION_LIMITS.sessions} open sessions; close one first` };
    }
    return null;
  }
  if (i < 0) return { status: 404, kind: 'not_found', message: `no session "${e.id}" on this board` };
  const cur = list[i];
  if (cur.state === 'ended') return { status: 409, kind: 'conflict', message: `session "${cur.name}" has ended` };
  if (e.type === 'session.approval' && validId(e.rid)) {
    const approvals = Array.isArray(cur.approvals) ? cur.approvals : [];
    const a = approvals.find((x) => x.rid === e.rid);
    if (e.state === 'pending') {
      if (a) return { status: 409, kind: 'conflict', message: `approval "${e.rid}" was already posted` };
      if (approvals.length >= SESSION_LIMITS.approvals && approvals.every((x) => x.state === 'pending')) {
        return { status: 409, kind: 'conflict', message: `session "${cur.name}" already has ${SESSION_LIMITS.approvals} pending approvals` };
      }
    } else {
      if (!a) return { status: 404, kind: 'not_found', message: `no approval "${e.rid}" in session "${cur.name}"` };
      if (a.state !== 'pending') return { status: 409, kind: 'conflict', message: `approval "${e.rid}" was already ${a.state}${a.by ? ` by ${a.by}` : ''}` };
    }
  }
  return null;
}
