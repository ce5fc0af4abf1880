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
//   a lead sits at;
// - a floor holds at most `LIMITS.agents` agents: an event that would bring one
//   more is ignored (a recipient or a helper beyond it is not created);
// - no step costs more than the team or the parent it touches: desks come
//   from a per-team free list, helpers from a per-parent index, hints are
//   indexed by the agents they name (`FloorIndex`), so no event walks the
//   whole floor (a sweep walks it once).
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
  /** Agents on one floor (docs/floor.md, "Limits"). */
  agents: 10_000,
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
  /** Derived from the fields above, kept by the fold; never on the wire (`floorFromJSON` rebuilds it). */
  index: FloorIndex;
}

/** One team's desks: which are taken, and the free ones below `next` (a min-heap), so the lowest free desk costs O(log team). */
interface Seats {
  members: number;
  taken: Set<number>;
  /** Exactly the free desks in [1, next), as a binary min-heap. */
  free: number[];
  /** Every desk from here up is free. */
  next: number;
}

/**
 * Lookups the fold needs so that no event walks the whole floor. Invariants:
 * `seats` has an entry per team, counting its agents and their desks;
 * `children.get(p)` is the set of agents whose `parent` is `p`;
 * `hintsByHelper.get(h)` is the set of hint keys whose helper is `h`;
 * `hintsByPrefix.get(x)` is the set of hint keys that start with `x + "\u0000"`
 * (what removing agent `x` forgets; a key is filed under each such prefix).
 */
export interface FloorIndex {
  seats: Map<string, Seats>;
  children: Map<string, Set<string>>;
  hintsByHelper: Map<string, Set<string>>;
  hintsByPrefix: Map<string, Set<string>>;
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

function emptyIndex(): FloorIndex {
  return { seats: new Map(), children: new Map(), hintsByHelper: new Map(), hintsByPrefix: new Map() };
}

export function emptyFloor(): FloorState {
  return { agents: new Map(), teams: new Map(), hints: new Map(), rev: 0, seq: 0, index: emptyIndex() };
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

/** The id of the agent an event names (as the fold reads it: trimmed, clamped), before any subagent hint; undefined for none. */
export function agentIdOf(e: FloorEvent): string | undefined {
  return agentRef(e)?.id;
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

// ---------------------------------------------------------------- index

function heapPush(h: number[], v: number): void {
  let i = h.push(v) - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (h[p] <= v) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = v;
}

function heapPop(h: number[]): number {
  const top = h[0];
  const last = h.pop()!;
  if (h.length > 0) {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l;
      if (h[c] >= last) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = last;
  }
  return top;
}

function seatsOf(s: FloorState, team: string): Seats {
  let st = s.index.seats.get(team);
  if (!st) s.index.seats.set(team, (st = { members: 0, taken: new Set(), free: [], next: 1 }));
  return st;
}

/** Takes the lowest free desk of a team: 0 for a lead when it is free, else the lowest from 1. */
function takeDesk(st: Seats, lead: boolean): number {
  let d: number;
  if (lead && !st.taken.has(0)) d = 0;
  else if (st.free.length > 0) d = heapPop(st.free);
  else d = st.next++;
  st.taken.add(d);
  return d;
}

function releaseDesk(st: Seats, d: number): void {
  if (!st.taken.delete(d)) return;
  if (d >= 1) heapPush(st.free, d);
}

/** Seats `a` in `team` (its desk and the member count); creates nothing else. */
function seat(s: FloorState, a: Agent, team: string, lead: boolean): void {
  const st = seatsOf(s, team);
  st.members++;
  a.team = team;
  a.desk = takeDesk(st, lead);
}

/** Frees `a`'s desk in its team; the team goes when its last agent does. */
function unseat(s: FloorState, a: Agent): void {
  const st = s.index.seats.get(a.team);
  if (!st) return;
  releaseDesk(st, a.desk);
  if (--st.members <= 0) {
    s.index.seats.delete(a.team);
    s.teams.delete(a.team);
  }
}

function setParent(s: FloorState, a: Agent, parent: string | null): void {
  if (a.parent === parent) return;
  if (a.parent !== null) {
    const kids = s.index.children.get(a.parent);
    if (kids && kids.delete(a.id) && kids.size === 0) s.index.children.delete(a.parent);
  }
  a.parent = parent;
  if (parent !== null) {
    let kids = s.index.children.get(parent);
    if (!kids) s.index.children.set(parent, (kids = new Set()));
    kids.add(a.id);
  }
}

function fileUnder(m: Map<string, Set<string>>, k: string, key: string): void {
  let set = m.get(k);
  if (!set) m.set(k, (set = new Set()));
  set.add(key);
}

function unfile(m: Map<string, Set<string>>, k: string, key: string): void {
  const set = m.get(k);
  if (set && set.delete(key) && set.size === 0) m.delete(k);
}

/** Every `x` such that `key` starts with `x + "\u0000"` (one, unless an id itself holds a NUL). */
function prefixesOf(key: string): string[] {
  const out: string[] = [];
  for (let i = key.indexOf('\u0000'); i >= 0; i = key.indexOf('\u0000', i + 1)) out.push(key.slice(0, i));
  return out;
}

function setHint(s: FloorState, key: string, helper: string): void {
  const old = s.hints.get(key);
  if (old === helper) return;
  if (old === undefined) for (const x of prefixesOf(key)) fileUnder(s.index.hintsByPrefix, x, key);
  else unfile(s.index.hintsByHelper, old, key);
  s.hints.set(key, helper);
  fileUnder(s.index.hintsByHelper, helper, key);
}

function deleteHint(s: FloorState, key: string): void {
  const helper = s.hints.get(key);
  if (helper === undefined) return;
  s.hints.delete(key);
  unfile(s.index.hintsByHelper, helper, key);
  for (const x of prefixesOf(key)) unfile(s.index.hintsByPrefix, x, key);
}

/** Rebuilds the index from agents, teams and hints (after `floorFromJSON`). Linear in the floor. */
function reindex(s: FloorState): void {
  s.index = emptyIndex();
  const byTeam = new Map<string, Agent[]>();
  for (const a of s.agents.values()) {
    const list = byTeam.get(a.team);
    if (list) list.push(a);
    else byTeam.set(a.team, [a]);
    if (a.parent !== null) fileUnder(s.index.children, a.parent, a.id);
  }
  for (const [team, list] of byTeam) {
    const st = seatsOf(s, team);
    st.members = list.length;
    let max = 0;
    let sane = true;
    for (const a of list) {
      if (!Number.isInteger(a.desk) || a.desk < 0 || a.desk > 2 * list.length + 64 || st.taken.has(a.desk) || (a.desk === 0 && !isLead(a.role))) sane = false;
      st.taken.add(a.desk);
      if (a.desk > max) max = a.desk;
    }
    if (!sane) {
      // Not a state this fold made (desks clash or run far past the team's
      // size): seat the team again in arrival order, which is valid and cheap.
      st.taken.clear();
      st.next = 1;
      for (const a of list.sort((x, y) => x.seq - y.seq)) a.desk = takeDesk(st, isLead(a.role));
      continue;
    }
    st.next = max + 1;
    for (let d = 1; d < st.next; d++) if (!st.taken.has(d)) st.free.push(d); // ascending: already a heap
  }
  for (const [key, helper] of s.hints) {
    fileUnder(s.index.hintsByHelper, helper, key);
    for (const x of prefixesOf(key)) fileUnder(s.index.hintsByPrefix, x, key);
  }
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

function removeAgent(s: FloorState, id: string): void {
  const a = s.agents.get(id);
  if (!a) return;
  s.agents.delete(id);
  setParent(s, a, null);
  const keys = [...(s.index.hintsByHelper.get(id) ?? []), ...(s.index.hintsByPrefix.get(id) ?? [])];
  for (const k of keys) deleteHint(s, k);
  unseat(s, a);
}

/** Whether the floor has room for one more agent. */
function hasRoom(s: FloorState): boolean {
  return s.agents.size < LIMITS.agents;
}

/** Creates the agent if it does not exist (and the floor has room); returns it, or undefined for a new agent on a full floor. */
function touchAgent(
  s: FloorState,
  ref: AgentRef,
  opts: { team?: { id: string; name: string }; parent?: string | null; ts: number },
  fx: Effect[],
): Agent | undefined {
  let a = s.agents.get(ref.id);
  if (!a) {
    if (!hasRoom(s)) return undefined;
    const parent = opts.parent && opts.parent !== ref.id ? opts.parent : null;
    const parentAgent = parent !== null ? s.agents.get(parent) : undefined;
    const team = opts.team ? ensureTeam(s, opts.team) : parentAgent ? s.teams.get(parentAgent.team)! : ensureTeam(s, { id: 'default', name: 'default' });
    const role = ref.role ?? '';
    a = {
      id: ref.id,
      name: ref.name ?? tidyName(ref.id),
      role,
      source: ref.source ?? '',
      team: team.id,
      parent: null,
      status: 'idle',
      activity: '',
      tool: '',
      said: '',
      desk: 0,
      joinedAt: opts.ts,
      lastSeen: opts.ts,
      leftAt: null,
      doneAt: null,
      seq: ++s.seq,
      rev: s.rev,
    };
    seat(s, a, team.id, isLead(role));
    setParent(s, a, parent);
    s.agents.set(a.id, a);
    fx.push({ kind: 'enter', agent: a.id, team: a.team });
    return a;
  }
  if (ref.name && ref.name !== a.name) a.name = ref.name;
  if (ref.source && ref.source !== a.source) a.source = ref.source;
  if (opts.parent !== undefined && opts.parent !== a.id && opts.parent !== null) setParent(s, a, opts.parent);
  if (opts.team && opts.team.id !== a.team) {
    ensureTeam(s, opts.team);
    // Seated in the new room before leaving the old one, which vanishes if that was its last agent.
    const old = { ...a };
    seat(s, a, opts.team.id, isLead(ref.role ?? a.role));
    unseat(s, old);
  } else if (opts.team) {
    ensureTeam(s, opts.team);
  }
  if (ref.role !== undefined && ref.role !== a.role) {
    a.role = ref.role;
    const lead = isLead(a.role);
    if ((lead && a.desk !== 0) || (!lead && a.desk === 0)) {
      // Its own desk counts as free: a promotion with desk 0 taken may keep it.
      const st = s.index.seats.get(a.team)!;
      releaseDesk(st, a.desk);
      a.desk = takeDesk(st, lead);
    }
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

/** An id for a new helper desk: `base`, else `'` appended until unique (bounded: a numbered suffix when that runs out). */
function helperId(s: FloorState, base: string): string {
  let id = base;
  for (let i = 0; i <= LIMITS.id && s.agents.has(id); i++) id = (id + "'").slice(-LIMITS.id);
  // At the length cap, appending a prime ends at a string of primes; if even
  // that is taken, count (at most one more than the floor's size tries).
  for (let n = 2; s.agents.has(id); n++) id = base.slice(0, LIMITS.id - String(n).length - 1) + '~' + n;
  return id;
}

/**
 * Resolves a subagent hint to the helper the event is about (creating its desk
 * if needed). Looks only at the parent's own children. Undefined when a new
 * desk is needed and the floor is full.
 */
function resolveHint(s: FloorState, parent: Agent, hint: Record<string, unknown>, ts: number, fx: Effect[]): Agent | undefined {
  const key = str(hint.key, LIMITS.subagentKey);
  const type = str(hint.type, LIMITS.role) ?? 'subagent';
  const hintKey = key !== undefined ? parent.id + '\u0000' + key : undefined;
  if (hintKey) {
    const bound = s.hints.get(hintKey);
    const helper = bound !== undefined ? s.agents.get(bound) : undefined;
    if (helper) return helper;
  }
  let best: Agent | undefined;
  let fallback: Agent | undefined;
  for (const id of s.index.children.get(parent.id) ?? []) {
    const a = s.agents.get(id);
    if (!a || a.role !== type) continue;
    if (!s.index.hintsByHelper.has(a.id)) {
      if (!best || a.seq < best.seq) best = a;
    } else if (!hintKey && (!fallback || a.seq < fallback.seq)) {
      fallback = a;
    }
  }
  let helper = best ?? fallback;
  if (!helper) {
    helper = touchAgent(
      s,
      { id: helperId(s, (parent.id + '/' + type + (key !== undefined ? '-' + key : '')).slice(0, LIMITS.id)), name: tidyName(type), role: type, source: parent.source || undefined },
      { team: { id: parent.team, name: s.teams.get(parent.team)!.name }, parent: parent.id, ts },
      fx,
    );
    if (!helper) return undefined;
    fx.push({ kind: 'brief', from: parent.id, to: helper.id });
  }
  if (hintKey) setHint(s, hintKey, helper.id);
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
    s.index = emptyIndex();
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
  // A full floor ignores an event about an agent it does not hold.
  if (!hasRoom(s) && !s.agents.has(ref.id)) return [];
  s.rev++;
  const team = teamRef(e.team);
  const parent = str(e.parent, LIMITS.id);
  let a = touchAgent(s, ref, { team, parent: parent ?? undefined, ts }, fx)!;
  a.lastSeen = Math.max(a.lastSeen, ts);
  a.rev = s.rev;

  // A hint moves the event onto the helper's desk, whatever its type: a `leave`
  // with a hint is the helper walking out, never its parent. With no room for
  // a new helper desk, the rest of the event is dropped (the parent was seen).
  const hint = e.subagent;
  if (hint && typeof hint === 'object' && !Array.isArray(hint)) {
    const helper = resolveHint(s, a, hint as Record<string, unknown>, ts, fx);
    if (!helper) return fx;
    a = helper;
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
          // A recipient not on a full floor gets no desk and no plane.
          const r = touchAgent(s, { id }, { team: { id: sender.team, name: s.teams.get(sender.team)!.name }, ts }, fx);
          if (!r) continue;
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

/**
 * How many agents these events would bring onto the floor `s` if folded in
 * order: each event's agent and each message recipient that is neither on the
 * floor nor brought by an earlier event (a `reset` empties the floor for the
 * events after it). A subagent hint may open one helper desk more per event;
 * those are not counted. The HTTP edge uses this to refuse a batch that brings
 * too many at once; it costs a lookup per id, not a fold, and stops counting
 * once past `upTo` (the answer is then `upTo + 1`).
 */
export function newAgentsIn(s: FloorState, events: readonly FloorEvent[], upTo = Infinity): number {
  let n = 0;
  let cleared = false;
  let seen: Set<string> | null = null;
  const count = (id: string | undefined): void => {
    if (id === undefined || (!cleared && s.agents.has(id)) || seen?.has(id)) return;
    (seen ??= new Set()).add(id);
    n++;
  };
  for (const e of events) {
    if (n > upTo) return n;
    if (!e || typeof e !== 'object') continue;
    if (e.type === 'reset') {
      cleared = true;
      seen = null;
      continue;
    }
    const ref = agentRef(e);
    if (!ref) continue;
    count(ref.id);
    if (e.type !== 'message') continue;
    if (e.to === undefined) {
      // No `to`: the plane goes to the parent, which is created if it is not on the floor.
      const parent = str(e.parent, LIMITS.id) ?? (cleared ? undefined : (s.agents.get(ref.id)?.parent ?? undefined));
      if (parent !== ref.id) count(parent);
      continue;
    }
    const raw = Array.isArray(e.to) ? e.to : [e.to];
    for (let i = 0; i < raw.length && i < LIMITS.recipients && n <= upTo; i++) {
      const id = str(raw[i], LIMITS.id);
      if (id !== ref.id) count(id);
    }
  }
  return Math.min(n, upTo + 1);
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
  reindex(s);
  return s;
}

export function cloneFloor(s: FloorState): FloorState {
  return floorFromJSON(floorToJSON(s));
}

/**
 * How long a working or thinking agent may say nothing before views show it
 * as quiet (docs/floor.md, "Quiet agents"). A setting of each view; this is
 * the default.
 */
export const QUIET_AFTER_MS = 2 * 60 * 1000;

/**
 * When the agent was last heard from, if at `now` it is working or thinking
 * but has been silent for `quietAfterMs` or more (so "working" would be a
 * guess: it may have ended while the server was away); null otherwise.
 * Pure: the clock comes in as `now`.
 */
export function quietSince(a: Agent, now: number, quietAfterMs: number = QUIET_AFTER_MS): number | null {
  if (a.leftAt !== null || (a.status !== 'working' && a.status !== 'thinking')) return null;
  return now - a.lastSeen >= quietAfterMs ? a.lastSeen : null;
}

/** Counts agents by status (for headers and /health). */
export function countByStatus(s: FloorState): Record<Status, number> {
  const c = { idle: 0, thinking: 0, working: 0, waiting: 0, done: 0, error: 0, offline: 0 } as Record<Status, number>;
  for (const a of s.agents.values()) c[a.status]++;
  return c;
}
