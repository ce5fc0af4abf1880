// The HTTP edge's checks for the fleet app: strict where the fold is
// forgiving. The fold clamps anything; these say "no" with a reason, so a
// client learns what it sent wrong and nothing of a bad batch is stored (as
// floor-wire.ts does for the floor). Three kinds of input arrive on a thread:
//
// - durable `session.*` events (`checkSessionEvent`), stored and folded;
// - requests to the thread's workstation bridge (`checkRequest`). The
//   contract has no event for "a member asks the bridge to start a session":
//   `session.spawn` is the bridge's, once the process runs. So a member posts
//   a `request.start` to the thread's own stream, and the bridge, which
//   follows that stream with exact replay, acts on it. The fold ignores
//   `request.*` types (unknown types fold to a no-op), so the board and the
//   chat do not change; the request is an ordered, durable fact that a bridge
//   cannot miss:
//
//     request.start   { id, session, flavor, root }   a member: start a session with this id
//     request.refused { id, reason }                  the bridge: it will not (bad root, no git, ...)
//
//   Closing is not a request: a member posts `session.end`, which the board
//   shows at once and the bridge obeys (docs/bridge.md);
// - lossy frames (`session.tool`, `session.stream`, `checkLive`), never
//   stored: checked here and relayed live to the readers of the thread.
//
// Pure: imports only the fold's constants; no clock, no I/O.

import {
  APPROVAL_STATES,
  SESSION_EPHEMERAL_TYPES,
  SESSION_EVENT_TYPES,
  SESSION_FLAVORS,
  SESSION_ID_PATTERN,
  SESSION_LIMITS,
  SESSION_STATUS_STATES,
  clampUnits,
  isOneOf,
  para,
  type SessionEvent,
} from './fleet.js';

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

// ---------------------------------------------------------------- durable events

const EDGE_CAPS: Record<string, number> = {
  session: SESSION_LIMITS.name,
  root: SESSION_LIMITS.root,
  worktree: SESSION_LIMITS.worktree,
  by: SESSION_LIMITS.by,
  activity: SESSION_LIMITS.activity,
  summary: SESSION_LIMITS.result,
  tool: SESSION_LIMITS.tool,
  digest: SESSION_LIMITS.digest,
  reason: SESSION_LIMITS.reason,
  text: SESSION_LIMITS.text,
  flavor: 40,
  state: 40,
  rid: 64,
};

/** The longest shell command a bridge sends beside a request's digest (a longer one is not sent, and never runs on trust). */
export const BOARD_COMMAND_MAX = 8_000;

/**
 * Why a posted durable session event is not acceptable, or null when it is.
 * Strict where the fold is forgiving: a client learns what it sent wrong and
 * nothing is stored. `name`, `uid` and `ts` are not checked: the transport
 * overwrites them (`withSessionIdentity`).
 */
export function checkSessionEvent(x: unknown): string | null {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return `an event must be a JSON object, got ${describe(x)}`;
  const e = x as Record<string, unknown>;
  const types = SESSION_EVENT_TYPES.join(', ');
  if (typeof e.type !== 'string') return `"type" is required and must be one of ${types}`;
  if (isOneOf(SESSION_EPHEMERAL_TYPES, e.type)) return `"${e.type}" is ephemeral: it is relayed live, never stored`;
  if (!isOneOf(SESSION_EVENT_TYPES, e.type)) return `unknown type "${clampUnits(e.type, 40)}"; expected one of ${types}`;
  if (e.id === undefined) return '"id" is required';
  if (typeof e.id !== 'string') return `"id" must be a string, got ${describe(e.id)}`;
  if (!SESSION_ID_PATTERN.test(e.id)) return '"id" must be 1 to 64 letters, digits, "-" or "_"';
  for (const f of Object.keys(EDGE_CAPS)) {
    const v = e[f];
    if (v === undefined) continue;
    if (typeof v !== 'string') return `"${f}" must be a string, got ${describe(v)}`;
    if (v.length > EDGE_CAPS[f]) return `"${f}" is longer than ${EDGE_CAPS[f]} characters`;
  }
  switch (e.type) {
    case 'session.spawn':
      if (e.flavor !== undefined && !isOneOf(SESSION_FLAVORS, e.flavor)) return `"flavor" must be one of ${SESSION_FLAVORS.join(', ')}`;
      break;
    case 'session.status':
      if (e.state === 'ended') return '"state" ended is set by session.end, not by session.status';
      if (!isOneOf(SESSION_STATUS_STATES, e.state)) return `"state" is required and must be one of ${SESSION_STATUS_STATES.join(', ')}`;
      break;
    case 'session.prompt':
      if (para(e.text, SESSION_LIMITS.text) === '') return '"text" is required: the prompt to send';
      break;
    case 'session.approval':
      if (e.rid === undefined) return '"rid" is required: the approval request id';
      if (!SESSION_ID_PATTERN.test(e.rid as string)) return '"rid" must be 1 to 64 letters, digits, "-" or "_"';
      if (!isOneOf(APPROVAL_STATES, e.state)) return `"state" is required and must be one of ${APPROVAL_STATES.join(', ')}`;
      // A shell call's command, for its action class (earned trust); read at the edge, never stored on the board.
      if (e.command !== undefined && (typeof e.command !== 'string' || e.command.length > BOARD_COMMAND_MAX)) return `"command" must be a string of at most ${BOARD_COMMAND_MAX} characters`;
      break;
    case 'session.result':
      if (para(e.summary, SESSION_LIMITS.result) === '') return '"summary" is required';
      if (e.usage !== undefined) return checkResultUsage(e.usage);
      break;
  }
  if (e.usage !== undefined) return '"usage" belongs to session.result only';
  return null;
}

// ---------------------------------------------------------------- a result's usage

/**
 * What a bridge's `session.result` may carry besides the board's fields: the
 * tokens and Claude Code's own cost of the prompt, per model. Never stored on
 * the board (not in SESSION_WIRE_FIELDS): the server counts it on the
 * project's usage (docs/integrations.md, "Tokens and cost").
 *
 *   usage { claude: Claude Code's session id, models: [{ model, input, output, cacheRead, cacheWrite, costUsd? }] }
 */
export interface ResultUsage {
  claude: string;
  models: { model: string; input: number; output: number; cacheRead: number; cacheWrite: number; costUsd?: number }[];
}

export const RESULT_USAGE_LIMITS = {
  claude: 64,
  models: 16,
  model: 120,
  /** Tokens of one kind, one model, one result. */
  tokens: 1_000_000_000,
  /** USD, one model, one result. */
  costUsd: 100_000,
} as const;

function checkResultUsage(u: unknown): string | null {
  if (u === null || typeof u !== 'object' || Array.isArray(u)) return `"usage" must be an object, got ${describe(u)}`;
  const o = u as Record<string, unknown>;
  if (typeof o.claude !== 'string' || !SESSION_ID_PATTERN.test(o.claude)) return '"usage.claude" must be the Claude Code session id (1 to 64 letters, digits, "-" or "_")';
  if (!Array.isArray(o.models) || o.models.length > RESULT_USAGE_LIMITS.models) return `"usage.models" must be an array of at most ${RESULT_USAGE_LIMITS.models}`;
  for (const [i, m] of o.models.entries()) {
    const at = `"usage.models[${i}]`;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return `${at}" must be an object`;
    const f = m as Record<string, unknown>;
    if (typeof f.model !== 'string' || !f.model || f.model.length > RESULT_USAGE_LIMITS.model) return `${at}.model" must be a string of 1 to ${RESULT_USAGE_LIMITS.model} characters`;
    for (const k of ['input', 'output', 'cacheRead', 'cacheWrite']) {
      const v = f[k];
      if (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) > RESULT_USAGE_LIMITS.tokens) return `${at}.${k}" must be a whole number from 0 to ${RESULT_USAGE_LIMITS.tokens}`;
    }
    if (f.costUsd !== undefined && (typeof f.costUsd !== 'number' || !Number.isFinite(f.costUsd) || f.costUsd < 0 || f.costUsd > RESULT_USAGE_LIMITS.costUsd)) return `${at}.costUsd" must be a number from 0 to ${RESULT_USAGE_LIMITS.costUsd}`;
  }
  return null;
}

/** A checked event's usage (checkSessionEvent passed), or null. */
export function resultUsageOf(e: Record<string, unknown>): ResultUsage | null {
  return e.type === 'session.result' && e.usage !== undefined ? (e.usage as ResultUsage) : null;
}

/** The fields a stored session event keeps; anything else in a payload is dropped. */
export const SESSION_WIRE_FIELDS = [
  'type', 'id', 'session', 'flavor', 'root', 'worktree', 'by', 'state', 'activity',
  'text', 'rid', 'tool', 'digest', 'summary', 'reason', 'name', 'uid', 'ts',
] as const;

/** The stored form of a checked event: known fields only. */
export function normalizeSessionEvent(x: Record<string, unknown>): SessionEvent {
  const out: Record<string, unknown> = {};
  for (const k of SESSION_WIRE_FIELDS) if (x[k] !== undefined) out[k] = x[k];
  return out;
}

/** Who posted an event and when, as the transport knows it. */
export interface SessionIdentity {
  name: string;
  uid?: string;
  ts: number;
}

/**
 * The event with the transport's identity: `name`, `uid` and `ts` overwritten
 * from the authenticated caller, whatever the payload said (a payload `uid`
 * is removed when the caller has none). Returns a new object.
 */
export function withSessionIdentity<T extends object>(event: T, who: SessionIdentity): T & { name: string; uid?: string; ts: number } {
  const out: Record<string, unknown> = { ...(event as Record<string, unknown>) };
  out.name = who.name;
  if (who.uid === undefined) delete out.uid;
  else out.uid = who.uid;
  out.ts = who.ts;
  return out as T & { name: string; uid?: string; ts: number };
}

// ---------------------------------------------------------------- requests and lossy frames

export const REQUEST_TYPES = ['request.start', 'request.refused'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

export const REQUEST_LIMITS = {
  session: 80,
  root: 300,
  reason: 120,
  /** Text of a lossy frame (tool output, partial text). */
  liveText: 4000,
  tool: 120,
} as const;

export interface StartRequest {
  type: 'request.start';
  id: string;
  session: string;
  flavor: 'scoped' | 'plain';
  root: string;
}

export interface RefusedRequest {
  type: 'request.refused';
  id: string;
  reason: string;
}

function str(o: Record<string, unknown>, k: string, cap: number): string | { error: string } {
  const v = o[k];
  if (v === undefined) return '';
  if (typeof v !== 'string') return { error: `"${k}" must be a string` };
  if (v.length > cap) return { error: `"${k}" is longer than ${cap} characters` };
  return v.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/**
 * Checks a posted request. `newId` supplies an id when a start request has
 * none. Returns the stored form (known fields only) or why it is refused.
 */
export function checkRequest(x: unknown, newId: () => string): { ok: StartRequest | RefusedRequest } | { error: string } {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return { error: 'a request must be a JSON object' };
  const o = x as Record<string, unknown>;
  const type = o.type ?? 'request.start';
  if (type !== 'request.start' && type !== 'request.refused') return { error: `"type" must be one of ${REQUEST_TYPES.join(', ')}` };
  if (o.id !== undefined && (typeof o.id !== 'string' || !SESSION_ID_PATTERN.test(o.id))) return { error: '"id" must be 1 to 64 letters, digits, "-" or "_"' };
  if (type === 'request.refused') {
    if (o.id === undefined) return { error: '"id" is required: the request refused' };
    const reason = str(o, 'reason', REQUEST_LIMITS.reason);
    if (typeof reason !== 'string') return reason;
    return { ok: { type, id: o.id, reason: reason || 'refused' } };
  }
  const session = str(o, 'session', REQUEST_LIMITS.session);
  if (typeof session !== 'string') return session;
  if (!session) return { error: '"session" is required: the name of the session' };
  if (o.flavor !== undefined && o.flavor !== 'scoped' && o.flavor !== 'plain') return { error: '"flavor" must be scoped or plain' };
  const root = str(o, 'root', REQUEST_LIMITS.root);
  if (typeof root !== 'string') return root;
  return { ok: { type, id: (o.id) ?? newId(), session, flavor: o.flavor === 'plain' ? 'plain' : 'scoped', root } };
}

/** Checks a lossy frame: `{type: session.tool|session.stream, id, tool?, text?}`; returns its relayed form or why not. */
export function checkLive(x: unknown): { ok: { type: string; id: string; tool?: string; text?: string } } | { error: string } {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return { error: 'a live frame must be a JSON object' };
  const o = x as Record<string, unknown>;
  if (o.type !== 'session.tool' && o.type !== 'session.stream') return { error: `"type" must be one of ${SESSION_EPHEMERAL_TYPES.join(', ')}` };
  if (typeof o.id !== 'string' || !SESSION_ID_PATTERN.test(o.id)) return { error: '"id" must be 1 to 64 letters, digits, "-" or "_"' };
  const out: { type: string; id: string; tool?: string; text?: string } = { type: o.type, id: o.id };
  if (o.tool !== undefined) {
    if (typeof o.tool !== 'string') return { error: '"tool" must be a string' };
    out.tool = o.tool.slice(0, REQUEST_LIMITS.tool);
  }
  if (o.text !== undefined) {
    if (typeof o.text !== 'string') return { error: '"text" must be a string' };
    out.text = o.text.slice(0, REQUEST_LIMITS.liveText);
  }
  return { ok: out };
}
