// The floor's geometry, in world units (the scene scales the world to the
// canvas): how big each team's room is, where the rooms go, where each desk,
// door and whiteboard is, and how the world fits a canvas. Pure: no canvas,
// no DOM, no clock; what it remembers between layouts (the rooms' high-water
// marks) is passed in. test/floor.layout.test.ts checks it.

import type { Agent, FloorState, Team } from '../../../src/core/floor.js';

/** A desk cell: desk, monitor, character and name tag. */
export const CELL_W = 124;
export const CELL_H = 150;
/** A room's inner margin, its top wall (name and whiteboard), its bottom (the door). */
export const PAD = 22;
export const HEADER = 78;
export const FOOT = 34;
/** Between rooms. */
export const GAP = 26;
/** The margin around the world on the canvas, and the largest zoom. */
const MARGIN = 16;
const MAX_SCALE = 1.15;

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Room {
  team: Team;
  index: number;
  x: number;
  y: number;
  w: number;
  h: number;
  cols: number;
  hasHead: boolean;
  attention: 'error' | 'waiting' | null;
  /** Whiteboard and halo as last painted (the scene's bookkeeping). */
  sig?: string;
}

/** What a team's room must hold: its highest desk, whether desk 0 (the lead's) is taken, and who needs a person. */
export interface TeamNeed {
  max: number;
  head: boolean;
  attention: Room['attention'];
}

export function teamNeeds(s: FloorState, shown: ((a: Agent) => boolean) | null = null): Map<string, TeamNeed> {
  const needs = new Map<string, TeamNeed>();
  // Filtered (camera.ts): only the rooms with someone shown, sized for who is shown.
  if (!shown) for (const t of s.teams.values()) needs.set(t.id, { max: 0, head: false, attention: null });
  for (const a of s.agents.values()) {
    if (shown && !shown(a)) continue;
    let p = needs.get(a.team);
    if (!p && shown && s.teams.has(a.team)) needs.set(a.team, (p = { max: 0, head: false, attention: null }));
    if (!p) continue;
    if (a.desk === 0) p.head = true;
    else if (a.desk > p.max) p.max = a.desk;
    if (a.leftAt === null) {
      if (a.status === 'error') p.attention = 'error';
      else if (a.status === 'waiting' && p.attention === null) p.attention = 'waiting';
    }
  }
  return needs;
}

/**
 * Rooms grow at once but shrink lazily (below 60% of their high-water mark),
 * so a helper leaving and another joining does not reshuffle the whole floor.
 * Replaces each need's `max` by the size kept, and updates `highWater`
 * (teams gone are forgotten).
 */
export function keepHighWater(needs: Map<string, TeamNeed>, highWater: Map<string, number>): void {
  for (const [id, p] of needs) {
    const hw = highWater.get(id) ?? 0;
    if (p.max > hw || p.max < hw * 0.6) highWater.set(id, p.max);
    else p.max = hw;
  }
  for (const id of highWater.keys()) if (!needs.has(id)) highWater.delete(id);
}

/** Equal keys: the same layout (the canvas size and every room's size). */
export function layoutKey(cssW: number, cssH: number, needs: Map<string, TeamNeed>): string {
  let key = `${cssW}x${cssH}|`;
  for (const [id, p] of needs) key += `${id}\u0000${p.max}${p.head ? 'h' : ''};`;
  return key;
}

/** Each team's room, sized for its needs (at its origin: `pack` places them). */
export function sizeRooms(teams: Iterable<Team>, needs: Map<string, TeamNeed>): Room[] {
  const rooms: Room[] = [];
  let i = 0;
  for (const t of teams) {
    const p = needs.get(t.id) ?? { max: 0, head: false, attention: null };
    const slots = Math.max(p.max, p.head ? 2 : 3);
    const cols = Math.max(2, Math.min(7, Math.ceil(Math.sqrt(slots * 1.2))));
    const rows = Math.max(1, Math.ceil(slots / cols));
    const w = Math.max(cols * CELL_W, 2 * CELL_W + 40) + 2 * PAD;
    const h = HEADER + (p.head ? CELL_H : 0) + rows * CELL_H + FOOT;
    rooms.push({ team: t, index: i++, x: 0, y: 0, w, h, cols, hasHead: p.head, attention: p.attention });
  }
  return rooms;
}

/** Rooms on shelves of at most `n`, in order: their positions and the world's size. */
export function shelves(rooms: Room[], n: number): { w: number; h: number; pos: [number, number][] } {
  const pos: [number, number][] = [];
  let x = 0,
    y = 0,
    shelfH = 0,
    inShelf = 0,
    W = 0;
  for (const r of rooms) {
    if (inShelf >= n) {
      y += shelfH + GAP;
      x = 0;
      shelfH = 0;
      inShelf = 0;
    }
    pos.push([x, y]);
    x += r.w + GAP;
    W = Math.max(W, x - GAP);
    shelfH = Math.max(shelfH, r.h);
    inShelf++;
  }
  return { w: W, h: y + shelfH, pos };
}

/**
 * Shelf packing: places the rooms (in order) on shelves of at most n rooms,
 * for every n, and keeps the arrangement that draws biggest on a canvas of
 * `aspect` (width / height). Returns the world's size.
 */
export function pack(rooms: Room[], aspect: number): { w: number; h: number } {
  if (rooms.length === 0) return { w: 1, h: 1 };
  const widest = Math.max(...rooms.map((r) => r.w));
  let best: { W: number; H: number; pos: [number, number][] } | null = null;
  let bestScale = -1;
  for (let n = 1; n <= rooms.length; n++) {
    const { w, h: H, pos } = shelves(rooms, n);
    const W = Math.max(w, widest);
    const sc = Math.min((aspect * 1000) / W, 1000 / H);
    if (sc > bestScale) {
      bestScale = sc;
      best = { W, H, pos };
    }
  }
  rooms.forEach((r, i) => {
    r.x = best!.pos[i][0];
    r.y = best!.pos[i][1];
  });
  return { w: best!.W, h: best!.H };
}

/** A desk's cell: desk 0 (the lead's) centred under the top wall, the others in rows below. */
export function cellOf(r: Room, desk: number): { x: number; y: number } {
  if (desk === 0) return { x: r.x + r.w / 2 - CELL_W / 2, y: r.y + HEADER };
  const i = desk - 1;
  const col = i % r.cols;
  const row = Math.floor(i / r.cols);
  const gx = r.x + (r.w - r.cols * CELL_W) / 2;
  return { x: gx + col * CELL_W, y: r.y + HEADER + (r.hasHead ? CELL_H : 0) + row * CELL_H };
}

/** Where a character sits at its desk (its anchor: the middle of its torso). */
export function seatOf(r: Room, desk: number): { x: number; y: number } {
  const c = cellOf(r, desk);
  return { x: c.x + CELL_W / 2, y: c.y + 92 };
}

/** The room's door, in its bottom wall near the left corner (arrivals walk in from here). */
export function doorOf(r: Room): { x: number; y: number } {
  return { x: r.x + PAD + 26, y: r.y + r.h + 12 };
}

/** The whiteboard's width on the room's top wall. */
export function boardWidth(r: Room): number {
  return Math.min(220, Math.max(120, r.w * 0.46));
}

/** The box the whiteboard is painted in (its border included). */
export function boardRect(r: Room): Rect {
  const bw = boardWidth(r);
  return { x: r.x + r.w - PAD - bw - 4, y: r.y + 8, w: bw + 8, h: 60 };
}

/** How the world fits a canvas of cssW × cssH: centred, with a margin, never zoomed past MAX_SCALE. */
export function fitView(cssW: number, cssH: number, worldW: number, worldH: number): { scale: number; offX: number; offY: number } {
  const sc = Math.min((cssW - 2 * MARGIN) / worldW, (cssH - 2 * MARGIN) / worldH, MAX_SCALE);
  const scale = Math.max(0.05, sc);
  return { scale, offX: (cssW - worldW * scale) / 2, offY: Math.max(MARGIN, (cssH - worldH * scale) / 2) };
}

/** The box around two points, grown by `pad`. */
export const bbox = (ax: number, ay: number, bx: number, by: number, pad: number): Rect => ({
  x: Math.min(ax, bx) - pad,
  y: Math.min(ay, by) - pad,
  w: Math.abs(bx - ax) + 2 * pad,
  h: Math.abs(by - ay) + 2 * pad,
});
/** The box a walking character covers around its anchor. */
export const walkerRect = (x: number, y: number): Rect => ({ x: x - 42, y: y - 68, w: 84, h: 104 });
/** The box of a speech bubble drawn at (x, y). */
export const speechRect = (x: number, y: number): Rect => ({ x: x - 76, y: y - 30, w: 194, h: 42 });

/** Ease in and out over 0..1 (clamped). */
export const ease = (t: number) => (t < 0 ? 0 : t > 1 ? 1 : t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2);

/** A paper plane's flight between its ends: a quadratic curve whose top rises with the distance. */
export interface Arc {
  /** The point at t (0: the sender, 1: the recipient). */
  at(t: number): { x: number; y: number };
  /** The direction of flight at t, in radians. */
  angle(t: number): number;
}

export function planeArc(p: { fx: number; fy: number; tx: number; ty: number }): Arc {
  const mx = (p.fx + p.tx) / 2;
  const my = Math.min(p.fy, p.ty) - 60 - Math.hypot(p.tx - p.fx, p.ty - p.fy) * 0.15;
  const q = (t: number, a: number, b: number, c: number) => (1 - t) * (1 - t) * a + 2 * (1 - t) * t * b + t * t * c;
  return {
    at: (t) => ({ x: q(t, p.fx, mx, p.tx), y: q(t, p.fy, my, p.ty) }),
    angle: (t) => Math.atan2(2 * (1 - t) * (my - p.fy) + 2 * t * (p.ty - my), 2 * (1 - t) * (mx - p.fx) + 2 * t * (p.tx - mx)),
  };
}

/** The seat of `a`, given the rooms by team (null when its team has no room yet). */
export function seatIn(rooms: Map<string, Room>, a: Agent): { x: number; y: number } | null {
  const r = rooms.get(a.team);
  return r ? seatOf(r, a.desk) : null;
}
