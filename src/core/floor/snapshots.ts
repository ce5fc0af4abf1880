// The floor as JSON and back (`floorToJSON` / `floorFromJSON`), and the index
// rebuilt from what the JSON holds (the index never goes on the wire).

import { emptyFloor, emptyIndex, type Agent, type FloorState, type Team } from './model.js';
import { isLead } from './read.js';
import { seatsOf, takeDesk } from './desks.js';
import { fileUnder, prefixesOf } from './parents.js';

/** Rebuilds the index from agents, teams and hints (after `floorFromJSON`). Linear in the floor. */
export function reindex(s: FloorState): void {
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
