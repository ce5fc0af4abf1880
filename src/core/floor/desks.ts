// Desks: each team's taken desks and free list (a min-heap), so the lowest
// free desk costs O(log team); seating an agent in a team and freeing its desk
// (a team goes with its last agent).

import type { Agent, FloorState, Seats } from './model.js';

export function heapPush(h: number[], v: number): void {
  let i = h.push(v) - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (h[p] <= v) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = v;
}

export function heapPop(h: number[]): number {
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

export function seatsOf(s: FloorState, team: string): Seats {
  let st = s.index.seats.get(team);
  if (!st) s.index.seats.set(team, (st = { members: 0, taken: new Set(), free: [], next: 1 }));
  return st;
}

/** Takes the lowest free desk of a team: 0 for a lead when it is free, else the lowest from 1. */
export function takeDesk(st: Seats, lead: boolean): number {
  let d: number;
  if (lead && !st.taken.has(0)) d = 0;
  else if (st.free.length > 0) d = heapPop(st.free);
  else d = st.next++;
  st.taken.add(d);
  return d;
}

export function releaseDesk(st: Seats, d: number): void {
  if (!st.taken.delete(d)) return;
  if (d >= 1) heapPush(st.free, d);
}

/** Seats `a` in `team` (its desk and the member count); creates nothing else. */
export function seat(s: FloorState, a: Agent, team: string, lead: boolean): void {
  const st = seatsOf(s, team);
  st.members++;
  a.team = team;
  a.desk = takeDesk(st, lead);
}

/** Frees `a`'s desk in its team; the team goes when its last agent does. */
export function unseat(s: FloorState, a: Agent): void {
  const st = s.index.seats.get(a.team);
  if (!st) return;
  releaseDesk(st, a.desk);
  if (--st.members <= 0) {
    s.index.seats.delete(a.team);
    s.teams.delete(a.team);
  }
}
