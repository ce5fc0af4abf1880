// Agents on the floor: an agent arriving (or coming back) with its team,
// parent and role; its status; and its removal (its desk, parent link and
// hints go with it). A full floor (LIMITS.agents) takes no new agent.

import { LIMITS, type Agent, type Effect, type FloorState, type Status, type Team } from './model.js';
import { isLead, tidyName, type AgentRef } from './read.js';
import { releaseDesk, seat, takeDesk, unseat } from './desks.js';
import { deleteHint, setParent } from './parents.js';

export function ensureTeam(s: FloorState, ref: { id: string; name: string }): Team {
  let t = s.teams.get(ref.id);
  if (!t) {
    t = { id: ref.id, name: ref.name, task: '', taskAt: null };
    s.teams.set(ref.id, t);
  } else if (ref.name !== ref.id && t.name !== ref.name) {
    t.name = ref.name;
  }
  return t;
}

export function removeAgent(s: FloorState, id: string): void {
  const a = s.agents.get(id);
  if (!a) return;
  s.agents.delete(id);
  setParent(s, a, null);
  const keys = [...(s.index.hintsByHelper.get(id) ?? []), ...(s.index.hintsByPrefix.get(id) ?? [])];
  for (const k of keys) deleteHint(s, k);
  unseat(s, a);
}

/** Whether the floor has room for one more agent. */
export function hasRoom(s: FloorState): boolean {
  return s.agents.size < LIMITS.agents;
}

/** Creates the agent if it does not exist (and the floor has room); returns it, or undefined for a new agent on a full floor. */
export function touchAgent(
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

export function setStatus(a: Agent, status: Status, ts: number, fx: Effect[]): void {
  if (a.status === status) return;
  a.status = status;
  a.doneAt = status === 'done' ? ts : null;
  fx.push({ kind: 'status', agent: a.id, status });
}
