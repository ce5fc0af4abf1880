// How a floor of any size is looked at: which agents are shown (the filters,
// the search, a focused team), how the rooms are arranged for the canvas
// (a fit that keeps names readable and uses the whole width), and the camera
// (zoom and pan). Pure: no canvas, no DOM, no clock; test/floor.camera.test.ts
// checks it, the scene (scene.ts) and the controls (components/FloorControls)
// use it.
//
// Why a readable fit rather than "everything on one screen": with 60 agents
// at 1440×900 the whole floor on one screen drew names 4 to 5 px high. The
// default view now never draws a name smaller than MIN_NAME_PX: when the whole
// floor would be smaller, the rooms are arranged to fill the canvas's width
// at a readable scale and the rest is a pan (drag, keys, wheel) away, as a
// map or a long page is. Zooming out further is a person's choice.

import type { Agent, FloorState, Status } from '../../../src/core/floor.js';
import { shelves, type Room } from './layout.js';

/** The name tag's font size in world units (sprites.ts paints it with this). */
export const NAME_FONT_PX = 13;
/** The smallest name, in CSS pixels, the default view draws. */
export const MIN_NAME_PX = 11.5;
/** The scale at which names are MIN_NAME_PX high. */
export const READABLE_SCALE = MIN_NAME_PX / NAME_FONT_PX;
/**
 * Below this name height on screen (CSS px) a name cannot be read, and the
 * floor is drawn as one token per agent (its status as a colour) instead of
 * desks, characters, names, bubbles and planes: level of detail for a floor
 * zoomed out to see all of it (scene.ts).
 */
export const LOD_NAME_PX = 6;
/** Zoom limits (a person may zoom out below readable to see the whole floor). */
export const MIN_ZOOM = 0.08;
export const MAX_ZOOM = 3;
/** The margin around the world in a fit, CSS px. */
export const MARGIN = 16;
/** Never zoom a small floor past this in a fit. */
const MAX_FIT = 1.15;

export interface Camera {
  scale: number;
  offX: number;
  offY: number;
}

// ---------------------------------------------------------------- what is shown

/** The filters a person set: each empty means "all". */
export interface Filters {
  statuses: Status[];
  team: string;
  role: string;
  /** A name (or id) contains this, ignoring case. */
  search: string;
}

export const NO_FILTERS: Filters = { statuses: [], team: '', role: '', search: '' };

export function isFiltered(f: Filters): boolean {
  return f.statuses.length > 0 || f.team !== '' || f.role !== '' || f.search.trim() !== '';
}

/** A key that changes whenever the filters do. */
export function filtersKey(f: Filters): string {
  return `${f.statuses.join(',')}\u0000${f.team}\u0000${f.role}\u0000${f.search.trim().toLowerCase()}`;
}

/**
 * The predicate of the filters (null: everyone is shown). Search is a plain
 * substring of the name or the id, ignoring case: linear, no pattern language.
 * An agent on its way out is shown while it walks.
 */
export function matcher(f: Filters): ((a: Agent) => boolean) | null {
  if (!isFiltered(f)) return null;
  const statuses = f.statuses.length ? new Set<string>(f.statuses) : null;
  const q = f.search.trim().toLowerCase();
  const role = f.role.toLowerCase();
  return (a) =>
    (statuses === null || statuses.has(a.status)) &&
    (f.team === '' || a.team === f.team) &&
    (role === '' || a.role.toLowerCase() === role) &&
    (q === '' || a.name.toLowerCase().includes(q) || a.id.toLowerCase().includes(q));
}

/** The roles on the floor, sorted (for the role filter). */
export function rolesOf(s: FloorState): string[] {
  const roles = new Set<string>();
  for (const a of s.agents.values()) if (a.role) roles.add(a.role.toLowerCase());
  return [...roles].sort();
}

/** Agents whose name or id contains `q` (ignoring case), best first: a name that starts with it, then the rest by name; at most `max`. */
export function searchAgents(s: FloorState, q: string, max = 8): Agent[] {
  const n = q.trim().toLowerCase();
  if (!n) return [];
  const hits: Agent[] = [];
  for (const a of s.agents.values()) if (a.leftAt === null && (a.name.toLowerCase().includes(n) || a.id.toLowerCase().includes(n))) hits.push(a);
  const starts = (a: Agent) => (a.name.toLowerCase().startsWith(n) ? 0 : 1);
  hits.sort((a, b) => starts(a) - starts(b) || a.name.localeCompare(b.name));
  return hits.slice(0, max);
}

// ---------------------------------------------------------------- arranging the rooms


export interface Arranged {
  /** The world's size. */
  w: number;
  h: number;
  /** The default view of it on this canvas. */
  fit: Camera;
  /** Whether the whole world is on screen in the fit (else it fills the width and the rest is a pan away). */
  whole: boolean;
}

/**
 * Places the rooms (sets their x, y) for a canvas of cssW × cssH, and says
 * the default view. When the whole floor fits at a readable scale it is
 * shown whole, centred (the arrangement that draws biggest). Otherwise the
 * rooms are arranged to fill the canvas's width at READABLE_SCALE or more,
 * choosing, among the arrangements that do, the one with the least to pan
 * through; the view starts at the top.
 */
export function arrange(rooms: Room[], cssW: number, cssH: number): Arranged {
  if (rooms.length === 0) return { w: 1, h: 1, fit: { scale: 1, offX: 0, offY: 0 }, whole: true };
  const aw = Math.max(1, cssW - 2 * MARGIN);
  const ah = Math.max(1, cssH - 2 * MARGIN);
  let best: ReturnType<typeof shelves> | null = null;
  let bestScale = -1;
  let wide: ReturnType<typeof shelves> | null = null;
  let wideScale = 0;
  let wideH = Infinity;
  let widest: ReturnType<typeof shelves> | null = null;
  let widestScale = -1;
  for (let n = 1; n <= rooms.length; n++) {
    const a = shelves(rooms, n);
    const sw = Math.min(aw / a.w, MAX_FIT);
    const sc = Math.min(sw, ah / a.h);
    if (sc > bestScale) {
      bestScale = sc;
      best = a;
    }
    if (sw >= READABLE_SCALE && a.h * sw < wideH) {
      wideH = a.h * sw;
      wide = a;
      wideScale = sw;
    }
    if (sw > widestScale) {
      widestScale = sw;
      widest = a;
    }
    // More rooms per shelf than fit the width at a readable scale only get wider.
    if (sw < READABLE_SCALE && wide) break;
  }
  let pick: ReturnType<typeof shelves>;
  let fit: Camera;
  let whole = false;
  if (bestScale >= READABLE_SCALE || cssW <= 0 || cssH <= 0) {
    pick = best!;
    const scale = Math.max(MIN_ZOOM, bestScale);
    fit = { scale, offX: (cssW - pick.w * scale) / 2, offY: Math.max(MARGIN, (cssH - pick.h * scale) / 2) };
    whole = true;
  } else if (wide) {
    pick = wide;
    fit = { scale: wideScale, offX: (cssW - pick.w * wideScale) / 2, offY: MARGIN };
  } else {
    // Even one room per shelf is wider than the canvas at a readable scale (a phone): readable, from the top left.
    pick = widest!;
    fit = { scale: READABLE_SCALE, offX: MARGIN, offY: MARGIN };
  }
  rooms.forEach((r, i) => {
    r.x = pick.pos[i][0];
    r.y = pick.pos[i][1];
  });
  return { w: pick.w, h: pick.h, fit, whole };
}

// ---------------------------------------------------------------- the camera

/** The view that shows `rect` (world units) whole, centred, with a margin, at most MAX_ZOOM. */
export function cameraFor(rect: { x: number; y: number; w: number; h: number }, cssW: number, cssH: number, maxScale = MAX_ZOOM): Camera {
  const scale = Math.max(MIN_ZOOM, Math.min(maxScale, (cssW - 2 * MARGIN) / rect.w, (cssH - 2 * MARGIN) / rect.h));
  return { scale, offX: cssW / 2 - (rect.x + rect.w / 2) * scale, offY: cssH / 2 - (rect.y + rect.h / 2) * scale };
}

/** Zooms by `factor` keeping the world point under (px, py) where it is. */
export function zoomAt(c: Camera, factor: number, px: number, py: number): Camera {
  const scale = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, c.scale * factor));
  const k = scale / c.scale;
  return { scale, offX: px - (px - c.offX) * k, offY: py - (py - c.offY) * k };
}

/**
 * Keeps some of the world on screen: the world may not be panned further
 * than leaves a quarter of the canvas (or all of a world smaller than that)
 * showing, so the floor cannot be lost off screen.
 */
export function clampCamera(c: Camera, cssW: number, cssH: number, worldW: number, worldH: number): Camera {
  const ww = worldW * c.scale;
  const wh = worldH * c.scale;
  const keepX = Math.min(ww, cssW / 4);
  const keepY = Math.min(wh, cssH / 4);
  const offX = Math.min(cssW - keepX, Math.max(keepX - ww, c.offX));
  const offY = Math.min(cssH - keepY, Math.max(keepY - wh, c.offY));
  return { scale: c.scale, offX, offY };
}

/** The camera moved the least so that the point (wx, wy) is at least `pad` CSS px inside the canvas. */
export function keepInView(c: Camera, wx: number, wy: number, cssW: number, cssH: number, pad = 90): Camera {
  const sx = c.offX + wx * c.scale;
  const sy = c.offY + wy * c.scale;
  let { offX, offY } = c;
  if (sx < pad) offX += pad - sx;
  else if (sx > cssW - pad) offX -= sx - (cssW - pad);
  if (sy < pad) offY += pad - sy;
  else if (sy > cssH - pad) offY -= sy - (cssH - pad);
  return { scale: c.scale, offX, offY };
}
