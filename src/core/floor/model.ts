// The floor's closed sets (statuses, event types), its caps (LIMITS) and
// lifetimes, the state's shape with its index, the effects a view animates,
// and the empty floor: what every other part of the fold (src/core/floor/*)
// reads. Imports nothing.

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
export interface Seats {
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

export function emptyIndex(): FloorIndex {
  return { seats: new Map(), children: new Map(), hintsByHelper: new Map(), hintsByPrefix: new Map() };
}

export function emptyFloor(): FloorState {
  return { agents: new Map(), teams: new Map(), hints: new Map(), rev: 0, seq: 0, index: emptyIndex() };
}
