// The HTTP edge's check of floor events: strict where the fold is forgiving.
// The fold clamps anything; this says "no" with a reason, so a client learns
// what it sent wrong and nothing of a bad batch is stored. No imports beyond
// the fold's constants.

import { EVENT_TYPES, STATUSES, type FloorEvent } from './floor.js';

export const MAX_BATCH = 200;
/**
 * Agents one request may bring onto a floor (its events' agents and message
 * recipients not yet there). One hostile batch of 200 messages to 50 new
 * recipients each would otherwise bring 10,000 at once.
 */
export const MAX_NEW_AGENTS_PER_BATCH = 200;
/** Longest string accepted in any field at the edge; the fold then clamps to its own caps. */
export const MAX_FIELD_CHARS = 65_536;

const STRING_FIELDS = ['name', 'role', 'parent', 'source', 'activity', 'tool', 'text', 'task'] as const;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function checkString(field: string, v: unknown, required = false): string | null {
  if (v === undefined) return required ? `"${field}" is required` : null;
  if (typeof v !== 'string') return `"${field}" must be a string, got ${describe(v)}`;
  if (v.length > MAX_FIELD_CHARS) return `"${field}" is longer than ${MAX_FIELD_CHARS} characters`;
  if (required && v.trim() === '') return `"${field}" must not be empty`;
  return null;
}

/** Returns why the event is not acceptable, or null when it is. */
export function checkFloorEvent(x: unknown): string | null {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return `an event must be a JSON object, got ${describe(x)}`;
  const e = x as Record<string, unknown>;
  if (typeof e.type !== 'string') return `"type" is required and must be one of ${EVENT_TYPES.join(', ')}`;
  if (!(EVENT_TYPES as readonly string[]).includes(e.type)) return `unknown type "${e.type.slice(0, 40)}"; expected one of ${EVENT_TYPES.join(', ')}`;
  if (e.type !== 'reset' || e.agent !== undefined) {
    const a = e.agent;
    if (a === undefined) return '"agent" is required';
    if (typeof a === 'object' && a !== null && !Array.isArray(a)) {
      const o = a as Record<string, unknown>;
      const err = checkString('agent.id', o.id, true) ?? checkString('agent.name', o.name) ?? checkString('agent.role', o.role) ?? checkString('agent.source', o.source);
      if (err) return err;
    } else {
      const err = checkString('agent', a, true);
      if (err) return err.replace('must be a string', 'must be a string or an object with an id');
    }
  }
  for (const f of STRING_FIELDS) {
    const err = checkString(f, e[f]);
    if (err) return err;
  }
  if (e.team !== undefined) {
    if (typeof e.team === 'object' && e.team !== null && !Array.isArray(e.team)) {
      const t = e.team as Record<string, unknown>;
      const err = checkString('team.id', t.id) ?? checkString('team.name', t.name);
      if (err) return err;
      if (t.id === undefined && t.name === undefined) return '"team" needs a name or an id';
    } else {
      const err = checkString('team', e.team);
      if (err) return err.replace('must be a string', 'must be a string or an object with a name');
    }
  }
  if (e.status !== undefined && !(typeof e.status === 'string' && (STATUSES as readonly string[]).includes(e.status))) {
    return `"status" must be one of ${STATUSES.join(', ')}`;
  }
  if (e.to !== undefined) {
    const list = Array.isArray(e.to) ? e.to : [e.to];
    if (list.length > 50) return '"to" lists more than 50 recipients';
    for (const r of list) {
      const err = checkString('to', r, true);
      if (err) return err.replace('must be a string', 'must be an agent id or an array of them');
    }
  }
  if (e.subagent !== undefined) {
    if (typeof e.subagent !== 'object' || e.subagent === null || Array.isArray(e.subagent)) return '"subagent" must be an object { key?, type? }';
    const h = e.subagent as Record<string, unknown>;
    const err = checkString('subagent.key', h.key) ?? checkString('subagent.type', h.type);
    if (err) return err;
  }
  if (e.ts !== undefined && (typeof e.ts !== 'number' || !Number.isFinite(e.ts))) return '"ts" must be a number of milliseconds';
  return null;
}

const KEEP = ['type', 'agent', 'name', 'role', 'team', 'parent', 'source', 'status', 'activity', 'tool', 'to', 'text', 'task', 'subagent', 'ts'] as const;

const KEEP_IN: Record<string, readonly string[]> = {
  agent: ['id', 'name', 'role', 'source'],
  team: ['id', 'name'],
  subagent: ['key', 'type'],
};

/**
 * The stored form of a checked event: known fields only, at every level, and
 * `ts` defaulted to `now`. Unknown keys inside `agent`, `team` or `subagent`
 * are dropped too: otherwise they would be stored and sent in every frame, and
 * a deeply nested one would overflow the stack of JSON.stringify (a 500).
 */
export function normalizeFloorEvent(x: Record<string, unknown>, now: number): FloorEvent {
  const out: Record<string, unknown> = {};
  for (const k of KEEP) {
    const v = x[k];
    if (v === undefined) continue;
    const sub = KEEP_IN[k];
    if (sub && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      const kept: Record<string, unknown> = {};
      for (const f of sub) if (o[f] !== undefined) kept[f] = o[f];
      out[k] = kept;
    } else {
      out[k] = v;
    }
  }
  if (out.ts === undefined) out.ts = now;
  return out as unknown as FloorEvent;
}

// ---------------------------------------------------------------- history (GET /floor/timeline, src/server/timeline.ts)

export type TimelineKind = 'join' | 'status' | 'tool' | 'message' | 'heard' | 'task' | 'leave' | 'approval';

export interface TimelineItem {
  /** `f:<position>` (the floor's log) or `a:<position>` (the approvals' log): unique, stable. */
  key: string;
  /** The server's time of the append, ms. */
  at: number;
  kind: TimelineKind;
  status?: string;
  tool?: string;
  activity?: string;
  text?: string;
  /** A message's recipients (sent) or its sender (heard). */
  to?: string[];
  from?: string;
  task?: string;
  team?: string;
  approval?: {
    id: string;
    tool: string;
    input: string;
    /** pending, allowed, denied, expired, withdrawn; unknown when its outcome is further up the log than a page looks. */
    outcome: string;
    by: string;
    decidedAt: number | null;
    reason: string;
  };
}

export interface TimelinePage {
  agent: string;
  items: TimelineItem[];
  /** Where the next (older) page starts; null when the log has nothing older. */
  next: string | null;
}
