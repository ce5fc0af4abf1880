// The floor fold: events in, floor state and view effects out.
//
// This module has no imports and touches no clock, no I/O and no randomness:
// the server, the browser and anyone's script fold the same events into the
// same floor. Time arrives on the event (`ts`) or as the `now` of a sweep.
//
// Invariants kept by every function here:
// - a hostile event (wrong types, unknown type, huge strings, forged ids)
//   is clamped or ignored; nothing here throws on any input;
// - every agent belongs to exactly one existing team, and a team exists only
//   while it has at least one agent ("empty rooms vanish with their last agent");
// - within a team, desk numbers are unique; desk 0 is the head desk, which only
//   a lead sits at.
//
// The state is owned by whoever folds it and is updated in place (a fold over
// 1,000,000 events/s cannot copy maps per event). Use `cloneFloor` to fork it,
// and `floorToJSON` / `floorFromJSON` to move it over the wire.

export const FLOOR_PROTOCOL_VERSION = 1;

export const STATUSES = ['idle', 'thinking', 'working', 'waiting', 'done', 'error', 'offline'] as const;
export type Status = (typeof STATUSES)[number];
export const EVENT_TYPES = ['join', 'status', 'tool', 'message', 'task', 'leave', 'reset'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Caps applied by the fold (the HTTP edge rejects anything far beyond them). */
export const LIMITS = {
  id: 128,
  name: 80,
  role: 40,
  source: 40,
  teamName: 80,
  activity: 280,
  tool: 80,
  text: 2000,
  task: 1000,
  recipients: 50,
  subagentKey: 128,
} as const;

/** Lifetimes, in milliseconds, applied by `sweep`. */
export const LIFETIMES = {
  afterLeave: 6_000,
  helperAfterDone: 45_000,
  silent: 2 * 60 * 60 * 1000,
} as const;

export interface Agent {
  id: string;
  name: string;
  role: string;
  source: string;
  team: string;
  parent: string | null;
  status: Status;
  activity: string;
  tool: string;
  /** Last thing it said (a message's text), shown as a speech bubble. */
  said: string;
  desk: number;
  joinedAt: number;
  lastSeen: number;
  leftAt: number | null;
  doneAt: number | null;
  /** Order of arrival on this floor; "oldest" in the subagent rule means lowest. */
  seq: number;
  /** The floor revision at which this agent last changed (lets views redraw only what changed). */
  rev: number;
}

export interface Team {
  id: string;
  name: string;
  task: string;
  taskAt: number | null;
}

export interface FloorState {
  agents: Map<string, Agent>;
  teams: Map<string, Team>;
  /** `${parent}\u0000${key}` → helper id, from subagent hints. */
  hints: Map<string, string>;
  /** Bumped by every event that changes anything. */
  rev: number;
  /** Arrival counter used for `Agent.seq`. */
  seq: number;
}

/** The wire form of a floor event, after the HTTP edge has checked it. */
export interface FloorEvent {
  type: string;
  agent?: unknown;
  name?: unknown;
  role?: unknown;
  team?: unknown;
  parent?: unknown;
  source?: unknown;
  status?: unknown;
  activity?: unknown;
  tool?: unknown;
  to?: unknown;
  text?: unknown;
  task?: unknown;
  subagent?: unknown;
  ts?: unknown;
}

export type Effect =
  | { kind: 'enter'; agent: string; team: string }
  | { kind: 'brief'; from: string; to: string }
  | { kind: 'plane'; from: string; to: string; text: string }
  | { kind: 'speech'; agent: string; text: string }
  | { kind: 'whiteboard'; team: string; task: string }
  | { kind: 'status'; agent: string; status: Status }
  | { kind: 'exit'; agent: string }
  | { kind: 'remove'; agents: string[] }
  | { kind: 'reset' };

/** The internal event the server logs when lifetimes come due. Never accepted from clients. */
export const SWEEP = 'sweep';

export function emptyFloor(): FloorState {
  return { agents: new Map(), teams: new Map(), hints: new Map(), rev: 0, seq: 0 };
}

// ---------------------------------------------------------------- helpers

function str(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (t.length === 0) return undefined;
  return t.length > cap ? t.slice(0, cap) : t;
}

/** `code-reviewer_2` → `Code Reviewer 2`. */
export function tidyName(id: string): string {
  const words = id
    .replace(/[-_.:/]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim()
    .split(/\s+/);
  const out = words.map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w)).join(' ');
  return (out || id).slice(0, LIMITS.name);
}

function isLead(role: string): boolean {
  return role.toLowerCase() === 'lead';
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'string' && (STATUSES as readonly string[]).includes(v);
}

function tsOf(e: FloorEvent): number {
  const t = e.ts;
  return typeof t === 'number' && Number.isFinite(t) ? t : 0;
}

interface AgentRef {
  id: string;
  name?: string;
  role?: string;
  source?: string;
}

function agentRef(e: FloorEvent): AgentRef | undefined {
  const a = e.agent;
  let ref: AgentRef | undefined;
  if (typeof a === 'string') {
    const id = str(a, LIMITS.id);
    if (id) ref = { id };
  } else if (a && typeof a === 'object' && !Array.isArray(a)) {
    const o = a as Record<string, unknown>;
    const id = str(o.id, LIMITS.id);
    if (id) ref = { id, name: str(o.name, LIMITS.name), role: str(o.role, LIMITS.role), source: str(o.source, LIMITS.source) };
  }
  if (!ref) return undefined;
  // Top-level fields win over the agent object's.
  ref.name = str(e.name, LIMITS.name) ?? ref.name;
  ref.role = str(e.role, LIMITS.role) ?? ref.role;
  ref.source = str(e.source, LIMITS.source) ?? ref.source;
  return ref;
}

function teamRef(v: unknown): { id: string; name: string } | undefined {
  if (typeof v === 'string') {
    const n = str(v, LIMITS.teamName);
    return n ? { id: n, name: n } : undefined;
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const name = str(o.name, LIMITS.teamName);
    const id = str(o.id, LIMITS.id) ?? name;
    if (!id) return undefined;
    return { id, name: name ?? id };
  }
  return undefined;
}

function freeDesk(s: FloorState, team: string, lead: boolean, except?: string): number {
  const used = new Set<number>();
  for (const a of s.agents.values()) if (a.team === team && a.id !== except) used.add(a.desk);
  if (lead && !used.has(0)) return 0;
  let d = 1;
  while (used.has(d)) d++;
  return d;
}

function ensureTeam(s: FloorState, ref: { id: string; name: string }): Team {
  let t = s.teams.get(ref.id);
  if (!t) {
    t = { id: ref.id, name: ref.name, task: '', taskAt: null };
    s.teams.set(ref.id, t);
  } else if (ref.name !== ref.id && t.name !== ref.name) {
    t.name = ref.name;
  }
  return t;
}

function dropTeamIfEmpty(s: FloorState, team: string): void {
  for (const a of s.agents.values()) if (a.team === team) return;
  s.teams.delete(team);
}

function removeAgent(s: FloorState, id: string): void {
  const a = s.agents.get(id);
  if (!a) return;
  s.agents.delete(id);
  for (const [k, v] of s.hints) if (v === id || k.startsWith(id + '\u0000')) s.hints.delete(k);
  dropTeamIfEmpty(s, a.team);
}

/** Creates the agent if it does not exist; returns it. */
function touchAgent(
  s: FloorState,
  ref: AgentRef,
  opts: { team?: { id: string; name: string }; parent?: string | null; ts: number },
  fx: Effect[],
): Agent {
  let a = s.agents.get(ref.id);
  if (!a) {
    const parent = opts.parent && opts.parent !== ref.id ? opts.parent : null;
    const teamRefV = opts.team ?? (parent && s.agents.get(parent) ? { id: s.agents.get(parent)!.team, name: '' } : { id: 'default', name: 'default' });
    const team = teamRefV.name ? ensureTeam(s, teamRefV) : s.teams.get(teamRefV.id)!;
    const role = ref.role ?? '';
    a = {
      id: ref.id,
      name: ref.name ?? tidyName(ref.id),
      role,
      source: ref.source ?? '',
      team: team.id,
      parent,
      status: 'idle',
      activity: '',
      tool: '',
      said: '',
      desk: freeDesk(s, team.id, isLead(role)),
      joinedAt: opts.ts,
      lastSeen: opts.ts,
      leftAt: null,
      doneAt: null,
      seq: ++s.seq,
      rev: s.rev,
    };
    s.agents.set(a.id, a);
    fx.push({ kind: 'enter', agent: a.id, team: a.team });
    return a;
  }
  if (ref.name && ref.name !== a.name) a.name = ref.name;
  if (ref.source && ref.source !== a.source) a.source = ref.source;
  if (opts.parent !== undefined && opts.parent !== a.id && opts.parent !== null) a.parent = opts.parent;
  if (opts.team && opts.team.id !== a.team) {
    const old = a.team;
    ensureTeam(s, opts.team);
    a.team = opts.team.id;
    a.desk = freeDesk(s, a.team, isLead(ref.role ?? a.role), a.id);
    dropTeamIfEmpty(s, old);
  } else if (opts.team) {
    ensureTeam(s, opts.team);
  }
  if (ref.role !== undefined && ref.role !== a.role) {
    a.role = ref.role;
    const lead = isLead(a.role);
    if ((lead && a.desk !== 0) || (!lead && a.desk === 0)) a.desk = freeDesk(s, a.team, lead, a.id);
  }
  if (a.leftAt !== null) {
    // Came back before being forgotten: it walks in again.
    a.leftAt = null;
    fx.push({ kind: 'enter', agent: a.id, team: a.team });
  }
  return a;
}

function setStatus(a: Agent, status: Status, ts: number, fx: Effect[]): void {
  if (a.status === status) return;
  a.status = status;
  a.doneAt = status === 'done' ? ts : null;
  fx.push({ kind: 'status', agent: a.id, status });
}

/** Resolves a subagent hint to the helper the event is about (creating its desk if needed). */
function resolveHint(s: FloorState, parent: Agent, hint: Record<string, unknown>, ts: number, fx: Effect[]): Agent {
  const key = str(hint.key, LIMITS.subagentKey);
  const type = str(hint.type, LIMITS.role) ?? 'subagent';
  const hintKey = key !== undefined ? parent.id + '\u0000' + key : undefined;
  if (hintKey) {
    const bound = s.hints.get(hintKey);
    const helper = bound !== undefined ? s.agents.get(bound) : undefined;
    if (helper) return helper;
  }
  const boundIds = new Set(s.hints.values());
  let best: Agent | undefined;
  let fallback: Agent | undefined;
  for (const a of s.agents.values()) {
    if (a.parent !== parent.id || a.role !== type) continue;
    if (!boundIds.has(a.id)) {
      if (!best || a.seq < best.seq) best = a;
    } else if (!hintKey && (!fallback || a.seq < fallback.seq)) {
      fallback = a;
    }
  }
  let helper = best ?? fallback;
  if (!helper) {
    let id = (parent.id + '/' + type + (key !== undefined ? '-' + key : '')).slice(0, LIMITS.id);
    while (s.agents.has(id)) id = (id + "'").slice(-LIMITS.id);
    helper = touchAgent(
      s,
      { id, name: tidyName(type), role: type, source: parent.source || undefined },
      { team: { id: parent.team, name: s.teams.get(parent.team)!.name }, parent: parent.id, ts },
      fx,
    );
    fx.push({ kind: 'brief', from: parent.id, to: helper.id });
  }
  if (hintKey) s.hints.set(hintKey, helper.id);
  return helper;
}

// ---------------------------------------------------------------- the fold

/**
 * Folds one event into `s` (in place) and returns the effects a view animates.
 * Unknown or malformed events change nothing and return no effects.
 */
export function applyEvent(s: FloorState, e: FloorEvent): Effect[] {
  if (!e || typeof e !== 'object') return [];
  const fx: Effect[] = [];
  const ts = tsOf(e);
  const type = e.type;
  if (type === 'reset') {
    if (s.agents.size === 0 && s.teams.size === 0) return [];
    s.agents.clear();
    s.teams.clear();
    s.hints.clear();
    s.rev++;
    return [{ kind: 'reset' }];
  }
  if (type === SWEEP) {
    const removed = sweep(s, ts);
    return removed.length ? [{ kind: 'remove', agents: removed }] : [];
  }
  if (typeof type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(type)) return [];
  const ref = agentRef(e);
  if (!ref) return [];
  s.rev++;
  const team = teamRef(e.team);
  const parent = str(e.parent, LIMITS.id);
  let a = touchAgent(s, ref, { team, parent: parent ?? undefined, ts }, fx);
  a.lastSeen = Math.max(a.lastSeen, ts);
  a.rev = s.rev;

  // A hint moves the event onto the helper's desk, whatever its type: a `leave`
  // with a hint is the helper walking out, never its parent.
  const hint = e.subagent;
  if (hint && typeof hint === 'object' && !Array.isArray(hint)) {
    a = resolveHint(s, a, hint as Record<string, unknown>, ts, fx);
    a.lastSeen = Math.max(a.lastSeen, ts);
    a.rev = s.rev;
  }

  const activity = typeof e.activity === 'string' ? e.activity.slice(0, LIMITS.activity) : undefined;
  if (activity !== undefined) a.activity = activity;

  switch (type) {
    case 'join': {
      if (isStatus(e.status)) setStatus(a, e.status, ts, fx);
      const isNew = fx.some((f) => f.kind === 'enter' && f.agent === a.id);
      const briefed = fx.some((f) => f.kind === 'brief' && f.to === a.id);
      if (isNew && !briefed && a.parent && s.agents.has(a.parent)) fx.push({ kind: 'brief', from: a.parent, to: a.id });
      break;
    }
    case 'status':
      if (isStatus(e.status)) setStatus(a, e.status, ts, fx);
      break;
    case 'tool': {
      const tool = str(e.tool, LIMITS.tool);
      if (tool !== undefined) a.tool = tool;
      setStatus(a, isStatus(e.status) ? e.status : 'working', ts, fx);
      break;
    }
    case 'message': {
      if (isStatus(e.status)) setStatus(a, e.status, ts, fx);
      const text = typeof e.text === 'string' ? e.text.slice(0, LIMITS.text) : '';
      const raw = Array.isArray(e.to) ? e.to : e.to === undefined ? [] : [e.to];
      const recipients: string[] = [];
      for (const r of raw.slice(0, LIMITS.recipients)) {
        const id = str(r, LIMITS.id);
        if (id && id !== a.id && !recipients.includes(id)) recipients.push(id);
      }
      if (recipients.length === 0 && e.to === undefined && a.parent) recipients.push(a.parent);
      const sender = a;
      for (const id of recipients) {
        if (!s.agents.has(id)) {
          const r = touchAgent(s, { id }, { team: { id: sender.team, name: s.teams.get(sender.team)!.name }, ts }, fx);
          r.rev = s.rev;
        }
        fx.push({ kind: 'plane', from: sender.id, to: id, text });
      }
      if (text) {
        sender.said = text;
        fx.push({ kind: 'speech', agent: sender.id, text });
      }
      break;
    }
    case 'task': {
      if (isStatus(e.status)) setStatus(a, e.status, ts, fx);
      const task = typeof e.task === 'string' ? e.task.slice(0, LIMITS.task) : undefined;
      const t = s.teams.get(a.team)!;
      if (task !== undefined && task !== t.task) {
        t.task = task;
        t.taskAt = ts;
        fx.push({ kind: 'whiteboard', team: t.id, task });
      }
      break;
    }
    case 'leave':
      if (isStatus(e.status)) setStatus(a, e.status, ts, fx);
      a.leftAt = ts;
      fx.push({ kind: 'exit', agent: a.id });
      break;
  }
  return fx;
}

/** Why an agent would be forgotten at `now`, or null if it stays. */
function expired(a: Agent, now: number): boolean {
  if (a.leftAt !== null && now - a.leftAt >= LIFETIMES.afterLeave) return true;
  if (a.parent !== null && a.status === 'done' && a.doneAt !== null && now - a.doneAt >= LIFETIMES.helperAfterDone) return true;
  return now - a.lastSeen >= LIFETIMES.silent;
}

/** Ids of the agents a sweep at `now` would remove, without changing anything. */
export function dueForSweep(s: FloorState, now: number): string[] {
  const out: string[] = [];
  for (const a of s.agents.values()) if (expired(a, now)) out.push(a.id);
  return out;
}

/** Applies the lifetimes at `now`; returns the removed agent ids (rooms left empty vanish too). */
export function sweep(s: FloorState, now: number): string[] {
  const removed = dueForSweep(s, now);
  if (removed.length === 0) return removed;
  for (const id of removed) removeAgent(s, id);
  s.rev++;
  return removed;
}

/** The earliest time at which some agent will be due for a sweep (or null with an empty floor). */
export function nextSweepAt(s: FloorState): number | null {
  let next: number | null = null;
  for (const a of s.agents.values()) {
    let t = a.lastSeen + LIFETIMES.silent;
    if (a.leftAt !== null) t = Math.min(t, a.leftAt + LIFETIMES.afterLeave);
    if (a.parent !== null && a.status === 'done' && a.doneAt !== null) t = Math.min(t, a.doneAt + LIFETIMES.helperAfterDone);
    if (next === null || t < next) next = t;
  }
  return next;
}

// ---------------------------------------------------------------- wire form

export interface FloorJSON {
  agents: Agent[];
  teams: Team[];
  hints: [string, string][];
  rev: number;
  seq: number;
}

export function floorToJSON(s: FloorState): FloorJSON {
  return {
    agents: [...s.agents.values()],
    teams: [...s.teams.values()],
    hints: [...s.hints.entries()],
    rev: s.rev,
    seq: s.seq,
  };
}

export function floorFromJSON(j: FloorJSON): FloorState {
  const s = emptyFloor();
  for (const a of j.agents ?? []) s.agents.set(a.id, { ...a });
  for (const t of j.teams ?? []) s.teams.set(t.id, { ...t });
  for (const [k, v] of j.hints ?? []) s.hints.set(k, v);
  s.rev = j.rev ?? 0;
  s.seq = j.seq ?? 0;
  return s;
}

export function cloneFloor(s: FloorState): FloorState {
  return floorFromJSON(floorToJSON(s));
}

/** Counts agents by status (for headers and /health). */
export function countByStatus(s: FloorState): Record<Status, number> {
  const c = { idle: 0, thinking: 0, working: 0, waiting: 0, done: 0, error: 0, offline: 0 } as Record<Status, number>;
  for (const a of s.agents.values()) c[a.status]++;
  return c;
}
