// The floor drawn on one canvas, from the folded state plus a little
// animation state of its own (where each character is, planes in flight,
// bubbles, whiteboard flashes). Nothing here decides what is true about an
// agent: status, desk, team, tool and activity are read from the fold on
// every frame; the scene only decides where things are on the way there.
//
// Cost model (200 agents at 200 events/s): the rooms are drawn into a
// background layer only when the layout or the size changes; each agent's
// desk, monitor and name tag are a sprite re-rendered only when that agent's
// `rev` changes (a few per frame); per frame we blit the background, blit 200
// sprites and draw 200 small characters plus whatever flies.
//
// The geometry (rooms, desks, doors, fitting the canvas) is layout.ts, pure
// and unit-tested; the camera is camera.ts; what each thing looks like is
// sprites.ts; where each thing is on its way (walks, planes, bubbles) is
// motion.ts; the pixels of one box and the sprites are paint.ts. This file
// keeps the layout, the camera's state, the sprite caches and the dirty boxes.

import type { Shown } from '../../../src/core/attention.js';
import type { Agent, Effect, FloorState } from '../../../src/core/floor.js';
import { CELL_H, CELL_W, boardRect, cellOf, keepHighWater, layoutKey, seatIn, sizeRooms, speechRect, teamNeeds, walkerRect, type Rect, type Room } from './layout.js';
import { LOD_NAME_PX, MAX_ZOOM, arrange, cameraFor, clampCamera, keepInView, zoomAt, NAME_FONT_PX, READABLE_SCALE, type Camera } from './camera.js';
import { FloorMotion, isWalking, type Plane, type SceneCounters, type View } from './motion.js';
import { ANIM_FRAMES, ANIM_STEP_MS, characterSprite, paintBackground, paintBox, paintDeskSprite, tokenSprite, type BoxFrame } from './paint.js';

export type { SceneCounters } from './motion.js';

const MAX_SPRITE_BUILDS_PER_FRAME = 12;

export class FloorScene {
  rooms = new Map<string, Room>();
  selected: string | null = null;
  focused: string | null = null;
  /**
   * What to draw for an agent at `now` when that is not its stored status
   * (src/core/attention.ts: quiet, waiting in its terminal); the view sets
   * it, so the canvas says what the list and the card say.
   */
  lookOf: ((a: Agent, now: number) => Shown) | null = null;
  readonly counters: SceneCounters = { planesLaunched: 0, briefsLaunched: 0, speeches: 0, boardUpdates: 0, sprites: 0, draws: 0, fullPaints: 0, boxes: 0 };
  /** Where each character is on its way, what flies, what is said (motion.ts). */
  private readonly motion = new FloorMotion(this.rooms, this.counters);

  private ctx: CanvasRenderingContext2D;
  private bg: HTMLCanvasElement = document.createElement('canvas');
  private bgKey = '';
  private layoutKey = '';
  private highWater = new Map<string, number>();
  private prevOverlay: Rect[] = [];
  /** This frame's box of each plane in flight (same order as `planes`). */
  private planeBoxes: Rect[] = [];
  /** How many boxes the last frame repainted (for the bench and curiosity). */
  lastRects = 0;
  /** Zoomed out past readable names (LOD_NAME_PX): tokens, no desks, characters, bubbles or planes. */
  compact = false;
  /** Token sprites by look, at `tokenK`. */
  private tokens = new Map<Shown, HTMLCanvasElement>();
  private tokenK = 0;
  private worldW = 1;
  private worldH = 1;
  scale = 1;
  private offX = 0;
  private offY = 0;
  private cssW = 0;
  private cssH = 0;
  private dpr = 1;
  private dirty = true;
  /**
   * The camera (camera.ts): 'fit' follows the default view of the current
   * arrangement (it moves when rooms come and go); 'free' is where a person
   * zoomed or panned to, kept until they ask for the fit again.
   */
  mode: 'fit' | 'free' = 'fit';
  private fitCam: Camera = { scale: 1, offX: 0, offY: 0 };
  /** Whether the whole floor is on screen in the fit. */
  whole = true;
  /** Who the filters keep (null: everyone), and a key that changes with them. */
  private shown: ((a: Agent) => boolean) | null = null;
  private shownKey = '';
  /** A room to fit once the next layout has placed it (a focus asked before the room existed). */
  private focusAfterLayout: string | null = null;

  constructor(private canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext('2d', { alpha: false })!;
  }

  /** The animation state, read by the view and the tests. */
  get views(): Map<string, View> {
    return this.motion.views;
  }

  get planes(): Plane[] {
    return this.motion.planes;
  }

  get speech(): Map<string, { text: string; until: number }> {
    return this.motion.speech;
  }

  get boardFlash(): Map<string, number> {
    return this.motion.boardFlash;
  }

  /** No walks, no flights, no pulses (the person's `prefers-reduced-motion`). */
  get reducedMotion(): boolean {
    return this.motion.reducedMotion;
  }

  set reducedMotion(on: boolean) {
    this.motion.reducedMotion = on;
  }

  /** Forget everything (a snapshot replaced the state). Characters already on the floor appear seated. */
  replaceState(s: FloorState): void {
    this.motion.clear();
    this.layoutKey = '';
    this.highWater.clear();
    this.layout(s);
    for (const a of s.agents.values()) this.views.set(a.id, this.motion.newView(a, s, 'seated', 0));
    this.dirty = true;
  }

  /** Set by user input (click, keys): the next frame draws even on a throttled floor. */
  pendingInput = false;

  markDirty(): void {
    this.dirty = true;
    this.pendingInput = true;
  }

  // ------------------------------------------------------------ layout

  /** Recomputes rooms when teams, desks or the canvas size changed (the geometry: layout.ts). */
  layout(s: FloorState): void {
    const needs = teamNeeds(s, this.shown);
    keepHighWater(needs, this.highWater);
    const key = this.shownKey + '|' + layoutKey(this.cssW, this.cssH, needs);
    for (const [id, p] of needs) {
      const r = this.rooms.get(id);
      if (r) r.attention = p.attention;
    }
    if (key === this.layoutKey) return;
    this.layoutKey = key;
    this.rooms.clear();
    const sized = sizeRooms(this.shown ? [...s.teams.values()].filter((t) => needs.has(t.id)) : s.teams.values(), needs);
    const world = arrange(sized, this.cssW, this.cssH);
    this.worldW = world.w;
    this.worldH = world.h;
    this.fitCam = world.fit;
    this.whole = world.whole;
    for (const r of sized) this.rooms.set(r.team.id, r);
    if (this.focusAfterLayout && this.rooms.has(this.focusAfterLayout)) {
      const id = this.focusAfterLayout;
      this.focusAfterLayout = null;
      this.focusRoom(id);
    }
    // Seated characters move with their desks at once (step() puts them there); the
    // whole floor is repainted anyway when the layout changes.
    this.dirty = true;
  }

  /** Where the character of `a` sits (its anchor: the middle of its torso). */
  deskAnchor(a: Agent): { x: number; y: number } | null {
    return seatIn(this.rooms, a);
  }


  // ------------------------------------------------------------ effects

  /** The fold's effects, after the layout is brought up to the state (motion.ts moves the views). */
  apply(effects: Effect[], s: FloorState, now: number): void {
    this.layout(s);
    if (this.motion.apply(effects, s, now)) this.dirty = true;
  }

  // ------------------------------------------------------------ geometry

  resize(cssW: number, cssH: number, dpr: number): void {
    if (cssW === this.cssW && cssH === this.cssH && dpr === this.dpr) return;
    this.cssW = cssW;
    this.cssH = cssH;
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(cssW * dpr));
    this.canvas.height = Math.max(1, Math.round(cssH * dpr));
    this.layoutKey = '';
    this.dirty = true;
  }

  private fit(): void {
    const f = this.mode === 'fit' ? this.fitCam : clampCamera({ scale: this.scale, offX: this.offX, offY: this.offY }, this.cssW, this.cssH, this.worldW, this.worldH);
    this.scale = f.scale;
    this.offX = f.offX;
    this.offY = f.offY;
  }

  // ------------------------------------------------------------ the camera and the filters (camera.ts)

  /** The camera now. */
  get camera(): Camera {
    return { scale: this.scale, offX: this.offX, offY: this.offY };
  }

  private setCamera(c: Camera): void {
    const k = clampCamera(c, this.cssW, this.cssH, this.worldW, this.worldH);
    this.mode = 'free';
    this.scale = k.scale;
    this.offX = k.offX;
    this.offY = k.offY;
    this.markDirty();
  }

  /** Zooms by `factor` around (px, py) in canvas CSS px (default: the middle). */
  zoomBy(factor: number, px = this.cssW / 2, py = this.cssH / 2): void {
    this.setCamera(zoomAt(this.camera, factor, px, py));
  }

  /** Moves the floor by (dx, dy) CSS px. */
  panBy(dx: number, dy: number): void {
    this.setCamera({ scale: this.scale, offX: this.offX + dx, offY: this.offY + dy });
  }

  /** Back to the default view. */
  fitNow(): void {
    this.mode = 'fit';
    this.markDirty();
  }

  /** Fits one team's room to the canvas (others stay, a pan away). False when it has no room (filtered out or gone). */
  focusRoom(team: string): boolean {
    const r = this.rooms.get(team);
    if (!r) {
      this.focusAfterLayout = team;
      return false;
    }
    this.setCamera(cameraFor({ x: r.x - 14, y: r.y - 14, w: r.w + 28, h: r.h + 40 }, this.cssW, this.cssH, 1.6));
    return true;
  }

  /** Brings an agent's desk into view, zooming in to a readable scale if the view is further out. */
  reveal(id: string): void {
    const v = this.views.get(id);
    const a = v?.agent;
    const at = a ? this.deskAnchor(a) : null;
    if (!at) return;
    let c = this.camera;
    if (c.scale < READABLE_SCALE) c = zoomAt(c, READABLE_SCALE / c.scale, this.offX + at.x * c.scale, this.offY + at.y * c.scale);
    c = keepInView(c, at.x, at.y - 20, this.cssW, this.cssH, Math.min(160, this.cssW / 3, this.cssH / 3));
    if (c.scale !== this.scale || c.offX !== this.offX || c.offY !== this.offY) this.setCamera(c);
  }

  /** Sets who is shown (camera.ts `matcher`); `key` changes with the filters. */
  setFilter(key: string, shown: ((a: Agent) => boolean) | null): void {
    if (key === this.shownKey) return;
    this.shownKey = key;
    this.shown = shown;
    this.layoutKey = '';
    this.mode = 'fit';
    this.dirty = true;
    this.pendingInput = true;
  }

  /** Whether an agent is drawn: its room is laid out and the filters keep it. */
  isShown(a: Agent): boolean {
    return this.rooms.has(a.team) && (this.shown === null || this.shown(a));
  }

  /** How high a name tag's letters are on screen now, CSS px. */
  namePx(): number {
    return NAME_FONT_PX * this.scale;
  }

  /** The room under a canvas point, if any. */
  roomAt(px: number, py: number): string | null {
    const wx = (px - this.offX) / this.scale;
    const wy = (py - this.offY) / this.scale;
    for (const r of this.rooms.values()) if (wx >= r.x && wx <= r.x + r.w && wy >= r.y && wy <= r.y + r.h) return r.team.id;
    return null;
  }

  /** The world's size and the canvas's (for the controls and tests). */
  get extent(): { worldW: number; worldH: number; cssW: number; cssH: number; maxZoom: number } {
    return { worldW: this.worldW, worldH: this.worldH, cssW: this.cssW, cssH: this.cssH, maxZoom: MAX_ZOOM };
  }

  /** Canvas CSS pixel → the agent under it (desk cell), if any. */
  hit(px: number, py: number, s: FloorState): string | null {
    const wx = (px - this.offX) / this.scale;
    const wy = (py - this.offY) / this.scale;
    let best: string | null = null;
    let bestD = Infinity;
    for (const v of this.views.values()) {
      if (v.alpha < 0.2 || v.hidden || !s.agents.has(v.id)) continue;
      const dx = wx - v.x;
      const dy = wy - (v.y - 30);
      if (Math.abs(dx) < CELL_W / 2 && dy > -60 && dy < 80) {
        const d = dx * dx + dy * dy;
        if (d < bestD) {
          bestD = d;
          best = v.id;
        }
      }
    }
    return best;
  }

  /** Where an agent's character is, in CSS pixels of the canvas (for tests and the card). */
  screenOf(id: string, part: 'body' | 'ring' = 'body'): { x: number; y: number } | null {
    const v = this.views.get(id);
    if (!v) return null;
    // 'ring': the right-most point of the floor ring's outline (its colour is the status).
    const dx = part === 'ring' ? 24 : 0;
    const dy = part === 'ring' ? 22 : -10;
    return { x: this.offX + (v.x + dx) * this.scale, y: this.offY + (v.y + dy) * this.scale };
  }

  // ------------------------------------------------------------ frame

  /**
   * Draws one frame, repainting only what changed: each agent's cell when its
   * desk sprite, character sprite, position, selection or pulse changed; the
   * boxes of whatever flies or walks (where it was and where it is); a room's
   * whiteboard or halo when they changed. Each dirty box is repainted from the
   * background up, clipped, so the result is the same as a full redraw.
   * A layout change, a resize, a new state or input repaints everything.
   * Returns whether anything was painted.
   */
  draw(s: FloorState, now: number): boolean {
    this.motion.step(s, now);
    this.layout(s);
    this.fit();
    const ctx = this.ctx;
    const k = this.scale * this.dpr;
    const bgKey = `${this.layoutKey}|${this.scale}|${this.offX}|${this.offY}|${this.dpr}`;
    let full = this.dirty;
    if (bgKey !== this.bgKey) {
      this.drawBackground(bgKey);
      full = true;
    }
    this.dirty = false;
    this.pendingInput = false;
    const rects: Rect[] = full ? [] : this.motion.pendingRects;
    this.motion.pendingRects = [];

    // Rooms: whiteboard text and flash, attention halo.
    for (const r of this.rooms.values()) {
      const flash = this.boardFlash.has(r.team.id);
      const sig = `${r.team.task}\u0000${flash ? 1 : 0}\u0000${r.attention ?? ''}`;
      if (r.sig !== sig) {
        if (!full) {
          const att = (r.sig ?? '').split('\u0000')[2] !== (r.attention ?? '');
          rects.push(att ? { x: r.x - 14, y: r.y - 14, w: r.w + 28, h: r.h + 28 } : boardRect(r));
        }
        r.sig = sig;
      }
    }

    // Agents: pick (and build, within a budget) their sprites, and see what changed.
    let builds = 0;
    const frame = this.reducedMotion ? 0 : Math.floor(now / ANIM_STEP_MS) % ANIM_FRAMES;
    const compact = (this.compact = this.scale * NAME_FONT_PX < LOD_NAME_PX);
    if (this.tokenK !== k) {
      this.tokens.clear();
      this.tokenK = k;
    }
    // The views this frame paints (on screen, shown): what a dirty box is tested against, not all of them.
    const visible: View[] = [];
    for (const v of this.views.values()) {
      const a = s.agents.get(v.id) ?? (v.phase === 'removing' ? v.agent : undefined);
      if (!a) continue;
      v.agent = a;
      const r = this.rooms.get(a.team);
      const hidden = !r || (this.shown !== null && !this.shown(a));
      if (hidden) {
        // Left out by the filters (or its room is not laid out): its cell, if painted, is cleared.
        if (!v.hidden && v.drawn && !full) rects.push({ x: v.drawn.cx, y: v.drawn.cy, w: CELL_W, h: CELL_H });
        v.hidden = true;
        v.drawn = null;
        v.cell = null;
        continue;
      }
      v.hidden = false;
      const cell = cellOf(r, a.desk);
      // Off screen: nothing to paint or build now (a pan or a zoom repaints everything when it comes into view).
      const sx = this.offX + cell.x * this.scale;
      const sy = this.offY + cell.y * this.scale;
      const offscreen = sx > this.cssW || sy > this.cssH || sx + CELL_W * this.scale < 0 || sy + CELL_H * this.scale < 0;
      if (offscreen && !isWalking(v)) {
        v.cell = cell;
        v.drawn = null;
        continue;
      }
      const look = (v.look = this.lookOf ? this.lookOf(a, now) : a.status);
      visible.push(v);
      if (compact) {
        // Far out: a token per look, no desk or character sprites (they are rebuilt when zoomed back in).
        const token = this.tokenOf(look, k);
        const walking = isWalking(v);
        const sel = v.id === this.selected ? 1 : v.id === this.focused ? 2 : 0;
        const d = v.drawn;
        const x = Math.round(v.x * 2);
        const y = Math.round(v.y * 2);
        const alpha = Math.round(v.alpha * 50);
        const changed = !d || d.desk !== token || d.x !== x || d.y !== y || d.alpha !== alpha || d.sel !== sel || d.cx !== cell.x || d.cy !== cell.y || walking;
        if (changed && !full) {
          rects.push({ x: cell.x, y: cell.y, w: CELL_W, h: CELL_H });
          if (d && (d.cx !== cell.x || d.cy !== cell.y)) rects.push({ x: d.cx, y: d.cy, w: CELL_W, h: CELL_H });
        }
        v.token = token;
        v.char = null;
        v.cell = cell;
        v.drawn = { desk: token, rev: -1, look, k, char: null, x, y, alpha, sel, cx: cell.x, cy: cell.y };
        continue;
      }
      v.token = null;
      if (!v.sprite || ((v.spriteRev !== a.rev || v.spriteLook !== look || v.spriteScale !== k) && builds < MAX_SPRITE_BUILDS_PER_FRAME)) {
        this.buildSprite(v, a, k, look);
        builds++;
      }
      const walking = isWalking(v);
      const pulses = !walking && !this.reducedMotion && (look === 'waiting' || look === 'error') && v.phase !== 'removing';
      let sprite: HTMLCanvasElement | null = null;
      if (!walking) {
        const f = look === 'working' || look === 'thinking' || look === 'waiting' || look === 'terminal' ? frame : 0;
        const last = v.charLast;
        if (last && last.status === look && last.role === a.role && last.f === f && last.k === k) sprite = last.sprite;
        else {
          if (v.charK !== k) {
            v.chars.clear();
            v.charK = k;
          }
          // Keyed by what the sprite shows; a string is built only when the look changes.
          const key = `${look}|${a.role}|${f}`;
          sprite = v.chars.get(key) ?? null;
          if (!sprite && builds < MAX_SPRITE_BUILDS_PER_FRAME * 2) {
            sprite = this.buildCharSprite(a, f, k, !(look === 'waiting' || look === 'error'), look);
            // A few looks per agent at most (the oldest goes first): canvases are not free.
            if (v.chars.size >= 10) v.chars.delete(v.chars.keys().next().value!);
            v.chars.set(key, sprite);
            builds++;
          }
          v.charLast = sprite ? { status: look, role: a.role, f, k, sprite } : null;
        }
      }
      v.char = sprite;
      const sel = v.id === this.selected ? 1 : v.id === this.focused ? 2 : 0;
      const d = v.drawn;
      const changed =
        !d ||
        d.desk !== v.sprite ||
        d.rev !== v.spriteRev ||
        d.look !== v.spriteLook ||
        d.k !== v.spriteScale ||
        d.char !== sprite ||
        d.x !== Math.round(v.x * 2) ||
        d.y !== Math.round(v.y * 2) ||
        d.alpha !== Math.round(v.alpha * 50) ||
        d.sel !== sel ||
        d.cx !== cell.x ||
        d.cy !== cell.y ||
        pulses ||
        walking;
      if (changed && !full) {
        rects.push({ x: cell.x, y: cell.y, w: CELL_W, h: CELL_H });
        if (d && (d.cx !== cell.x || d.cy !== cell.y)) rects.push({ x: d.cx, y: d.cy, w: CELL_W, h: CELL_H });
      }
      v.cell = cell;
      v.drawn = { desk: v.sprite, rev: v.spriteRev, look: v.spriteLook, k: v.spriteScale, char: sprite, x: Math.round(v.x * 2), y: Math.round(v.y * 2), alpha: Math.round(v.alpha * 50), sel, cx: cell.x, cy: cell.y };
    }

    // Things that move across cells: where they were and where they are.
    const overlay: Rect[] = [];
    for (const v of this.views.values()) if (!v.hidden && isWalking(v)) overlay.push(walkerRect(v.x, v.y));
    this.planeBoxes.length = 0;
    // Far out, planes and bubbles are not drawn (too small to read): no boxes for them.
    if (!compact) for (const p of this.planes) {
      const b = this.motion.planeRect(p, s, now);
      this.planeBoxes.push(b);
      overlay.push(b);
    }
    // A bubble over a walker moves with it.
    if (!compact)
      for (const id of this.speech.keys()) {
        const v = this.views.get(id);
        if (v && isWalking(v)) overlay.push(speechRect(v.x, v.y - 58));
      }
    if (!full) for (const r of this.prevOverlay) rects.push(r);
    for (const r of overlay) if (!full) rects.push(r);
    this.prevOverlay = overlay;

    if (full) rects.push({ x: -this.offX / this.scale, y: -this.offY / this.scale, w: this.cssW / this.scale, h: this.cssH / this.scale });
    if (rects.length === 0) return false;
    this.counters.draws++;
    this.lastRects = rects.length;
    let area = 0;
    for (const r of rects) area += r.w * r.h;
    if (!full && area * this.scale * this.scale > 0.6 * this.cssW * this.cssH) {
      // So much changed that one repaint is cheaper than many.
      rects.length = 0;
      rects.push({ x: -this.offX / this.scale, y: -this.offY / this.scale, w: this.cssW / this.scale, h: this.cssH / this.scale });
      full = true;
    }
    if (full) this.counters.fullPaints++;
    this.counters.boxes += rects.length;
    const f: BoxFrame = { canvas: this.canvas, bg: this.bg, scale: this.scale, offX: this.offX, offY: this.offY, dpr: this.dpr, k, rooms: this.rooms, motion: this.motion, visible, compact, selected: this.selected, focused: this.focused, planeBoxes: this.planeBoxes, s, now };
    for (const r of rects) paintBox(ctx, r, f);
    return true;
  }

  // ------------------------------------------------------------ painters (the pictures: sprites.ts)

  private drawBackground(key: string): void {
    this.bgKey = key;
    paintBackground(this.bg, this.canvas, { scale: this.scale, offX: this.offX, offY: this.offY, dpr: this.dpr }, this.rooms);
  }

  /** The token of a look at device scale `k` (one per look, shared by every agent). */
  private tokenOf(look: Shown, k: number): HTMLCanvasElement {
    let c = this.tokens.get(look);
    if (c) return c;
    this.counters.sprites++;
    c = tokenSprite(look, k);
    this.tokens.set(look, c);
    return c;
  }

  private buildSprite(v: View, a: Agent, scale: number, look: Shown): void {
    this.counters.sprites++;
    paintDeskSprite(v, a, scale, look);
  }

  private buildCharSprite(a: Agent, frame: number, k: number, withRing: boolean, look: Shown): HTMLCanvasElement {
    this.counters.sprites++;
    return characterSprite(a, frame, k, withRing, look, this.reducedMotion);
  }
}
