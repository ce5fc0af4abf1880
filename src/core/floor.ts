// The floor fold: events in, floor state and view effects out.
//
// The fold imports nothing outside itself (this module and its parts in
// src/core/floor/) and touches no clock, no I/O and no randomness: the server,
// the browser (/lib/floor.js, with its parts at /lib/floor/*.js) and anyone's
// script fold the same events into the same floor. Time arrives on the event (`ts`) or as the `now` of a sweep.
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
//
// This module composes the fold from its parts, one job each, in src/core/floor/:
//   model.ts       closed sets, LIMITS, LIFETIMES, the state's shape and index, effects, emptyFloor
//   read.ts        readers for hostile fields (an event's agent, team, time); tidyName
//   desks.ts       each team's desks: the lowest free one, seating and unseating
//   parents.ts     parents and subagent hints, indexed both ways
//   agents.ts      an agent arriving, its status, its removal; a full floor takes none
//   subagents.ts   a hint's helper, on a desk of its own next to its parent
//   arrivals.ts    how many agents a batch would bring (newAgentsIn, the edge's cap)
//   sweep.ts       lifetimes: who is forgotten when, and the sweep
//   snapshots.ts   the state as JSON and back (the index rebuilt)
//   views.ts       quiet agents, counts by status
// `applyEvent` below is the one reducer: it reads the event, seats its agent
// (and helper), then applies what the event's type says. Importers use this
// module only.

import { EVENT_TYPES, LIMITS, SWEEP, emptyIndex, type Effect, type FloorEvent, type FloorState } from './floor/model.js';
import { agentRef, isStatus, str, teamRef, tsOf } from './floor/read.js';
import { hasRoom, setStatus, touchAgent } from './floor/agents.js';
import { resolveHint } from './floor/subagents.js';
import { sweep } from './floor/sweep.js';
export { FLOOR_PROTOCOL_VERSION, STATUSES, type Status, EVENT_TYPES, type EventType, LIMITS, LIFETIMES, type Agent, type Team, type FloorState, type FloorIndex, type FloorEvent, type Effect, SWEEP, emptyFloor } from './floor/model.js';
export { tidyName, agentIdOf } from './floor/read.js';
export { newAgentsIn } from './floor/arrivals.js';
export { dueForSweep, sweep, nextSweepAt } from './floor/sweep.js';
export { type FloorJSON, floorToJSON, floorFromJSON, cloneFloor } from './floor/snapshots.js';
export { QUIET_AFTER_MS, quietSince, countByStatus } from './floor/views.js';

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
