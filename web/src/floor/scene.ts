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
// and unit-tested; what each thing looks like is sprites.ts. This file keeps
// the animation state, the sprite caches and the dirty boxes.

import type { Shown } from '../../../src/core/attention.js';
import type { Agent, Effect, FloorState } from '../../../src/core/floor.js';
import { SHOWN_COLOR } from './look.js';
import {
  CELL_H,
  CELL_W,
  bbox,
  boardRect,
  cellOf,
  doorOf,
  ease,
  keepHighWater,
  layoutKey,
  planeArc,
  seatIn,
  sizeRooms,
  speechRect,
  teamNeeds,
  walkerRect,
  type Rect,
  type Room,
} from './layout.js';
import { LOD_NAME_PX, MAX_ZOOM, arrange, cameraFor, clampCamera, keepInView, zoomAt, NAME_FONT_PX, READABLE_SCALE, type Camera } from './camera.js';
import { CHAR_AX, CHAR_AY, CHAR_H, CHAR_W, drawCharacter, drawPlane, drawRing, drawSpeech, paintCharacterSprite, paintDesk, paintRoomLive, paintRooms, paintToken, roundRect } from './sprites.js';

const WALK_MS = 1100;
const FADE_MS = 600;
const PLANE_MS = 1300;
const SPEECH_MS = 4500;
const BOARD_FLASH_MS = 1600;
const MAX_PLANES = 24;
/** Bubbles on screen at once (the newest win): more is noise, not information. */
const MAX_SPEECH = 16;
const MAX_SPRITE_BUILDS_PER_FRAME = 12;
/** Seated animations (typing, waving, thought dots) loop once a second in this many cached frames. */
const ANIM_FRAMES = 2;
const ANIM_STEP_MS = 1000 / ANIM_FRAMES;

/** On its way in, or on its way out and still visible. */
const isWalking = (v: { phase: string; alpha: number }) => v.phase === 'in' || (v.phase === 'out' && v.alpha > 0.01);

interface View {
  id: string;
  /** The agent as last seen in the state (kept to draw its fade after removal). */
  agent: Agent | null;
  /** Its desk cell as last drawn. */
  cell: { x: number; y: number } | null;
  /** The character sprite chosen this frame (null: drawn live). */
  char: HTMLCanvasElement | null;
  /** What was painted last, to tell whether the cell must be repainted. */
  drawn: { desk: HTMLCanvasElement | null; rev: number; look: Shown | null; k: number; char: HTMLCanvasElement | null; x: number; y: number; alpha: number; sel: number; cx: number; cy: number } | null;
  x: number;
  y: number;
  phase: 'in' | 'seated' | 'out' | 'removing';
  from: { x: number; y: number };
  t0: number;
  alpha: number;
  sprite: HTMLCanvasElement | null;
  spriteRev: number;
  /** What the desk sprite shows (the agent's status, or quiet, or waiting in its terminal). */
  spriteLook: Shown | null;
  /** What the view shows this frame (`FloorScene.lookOf`). */
  look: Shown;
  spriteScale: number;
  spriteCtx: CanvasRenderingContext2D | null;
  /** Character sprites by `status|role|frame|scale`. */
  chars: Map<string, HTMLCanvasElement>;
  /** The last character sprite drawn and what it showed (the common case: unchanged). */
  charLast: { status: Shown; role: string; f: number; k: number; sprite: HTMLCanvasElement } | null;
  charK: number;
  /** Left out by the filters or the room's absence: not drawn, not hit. */
  hidden: boolean;
  /** Zoomed far out: the token drawn for it this frame (else null). */
  token: HTMLCanvasElement | null;
}

interface Plane {
  from: string;
  to: string;
  t0: number;
  brief: boolean;
  /** Last known ends, so a plane whose recipient vanished still lands. */
  fx: number;
  fy: number;
  tx: number;
  ty: number;
}

export interface SceneCounters {
  planesLaunched: number;
  briefsLaunched: number;
  speeches: number;
  boardUpdates: number;
  sprites: number;
  draws: number;
  /** Draws that repainted the whole canvas, and boxes repainted in all. */
  fullPaints: number;
  boxes: number;
}

export class FloorScene {
  rooms = new Map<string, Room>();
  views = new Map<string, View>();
  planes: Plane[] = [];
  speech = new Map<string, { text: string; until: number }>();
  boardFlash = new Map<string, number>();
  selected: string | null = null;
  focused: string | null = null;
  reducedMotion = false;
  /**
   * What to draw for an agent at `now` when that is not its stored status
   * (src/core/attention.ts: quiet, waiting in its terminal); the view sets
   * it, so the canvas says what the list and the card say.
   */
  lookOf: ((a: Agent, now: number) => Shown) | null = null;
  readonly counters: SceneCounters = { planesLaunched: 0, briefsLaunched: 0, speeches: 0, boardUpdates: 0, sprites: 0, draws: 0, fullPaints: 0, boxes: 0 };

  private ctx: CanvasRenderingContext2D;
  private bg: HTMLCanvasElement = document.createElement('canvas');
  private bgKey = '';
  private layoutKey = '';
  private highWater = new Map<string, number>();
  /** Boxes to repaint next frame (cells of views that went away). */
  private pendingRects: Rect[] = [];
  private prevOverlay: Rect[] = [];
  /** This frame's box of each plane in flight (same order as `planes`). */
  private planeBoxes: Rect[] = [];
  /** How many boxes the last frame repainted (for the bench and curiosity). */
  lastRects = 0;
  /** The views this frame paints (on screen, shown): what a dirty box is tested against, not all of them. */
  private visible: View[] = [];
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

  /** Forget everything (a snapshot replaced the state). Characters already on the floor appear seated. */
  replaceState(s: FloorState): void {
    this.views.clear();
    this.planes.length = 0;
    this.speech.clear();
    this.boardFlash.clear();
    this.layoutKey = '';
    this.highWater.clear();
    this.layout(s);
    for (const a of s.agents.values()) this.views.set(a.id, this.newView(a, s, 'seated', 0));
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

  private newView(a: Agent, s: FloorState, phase: View['phase'], now: number): View {
    const at = this.deskAnchor(a) ?? { x: 0, y: 0 };
    const r = this.rooms.get(a.team);
    if (phase === 'in' && r && !this.reducedMotion) {
      const d = doorOf(r);
      return { id: a.id, x: d.x, y: d.y, phase, from: d, t0: now, alpha: 1, sprite: null, spriteRev: -1, spriteLook: null, look: a.status, spriteScale: 0, spriteCtx: null, chars: new Map(), charLast: null, charK: 0, agent: a, cell: null, char: null, drawn: null, hidden: false, token: null };
    }
    void s;
    const gone = a.leftAt !== null;
    return { id: a.id, x: at.x, y: at.y, phase: gone ? 'out' : 'seated', from: at, t0: gone ? -Infinity : now, alpha: gone ? 0 : 1, sprite: null, spriteRev: -1, spriteLook: null, look: a.status, spriteScale: 0, spriteCtx: null, chars: new Map(), charLast: null, charK: 0, agent: a, cell: null, char: null, drawn: null, hidden: false, token: null };
  }

  // ------------------------------------------------------------ effects

  apply(effects: Effect[], s: FloorState, now: number): void {
    this.layout(s);
    for (const f of effects) {
      switch (f.kind) {
        case 'enter': {
          const a = s.agents.get(f.agent);
          if (!a) break;
          const v = this.views.get(f.agent);
          if (v && v.phase !== 'removing') {
            // Came back: walk in again from the door.
            const r = this.rooms.get(a.team);
            if (r && !this.reducedMotion) {
              const d = doorOf(r);
              Object.assign(v, { x: d.x, y: d.y, from: d, t0: now, phase: 'in', alpha: 1 });
            } else Object.assign(v, { phase: 'seated', alpha: 1 });
          } else this.views.set(f.agent, this.newView(a, s, 'in', now));
          break;
        }
        case 'exit': {
          const v = this.views.get(f.agent);
          if (v) Object.assign(v, { phase: 'out', from: { x: v.x, y: v.y }, t0: now });
          break;
        }
        case 'remove':
          for (const id of f.agents) {
            const v = this.views.get(id);
            if (v) Object.assign(v, { phase: 'removing', t0: now });
            this.dropSpeech(id);
          }
          break;
        case 'reset':
          this.dirty = true;
          this.views.clear();
          this.planes.length = 0;
          this.speech.clear();
          this.boardFlash.clear();
          break;
        case 'brief':
        case 'plane': {
          const brief = f.kind === 'brief';
          this.counters[brief ? 'briefsLaunched' : 'planesLaunched']++;
          const p: Plane = { from: f.from, to: f.to, t0: now, brief, fx: 0, fy: 0, tx: 0, ty: 0 };
          this.endsOf(p, s);
          this.planes.push(p);
          if (this.planes.length > MAX_PLANES) this.planes.shift();
          break;
        }
        case 'speech':
          this.counters.speeches++;
          this.dropSpeech(f.agent);
          this.speech.set(f.agent, { text: f.text.length > 60 ? f.text.slice(0, 59) + '…' : f.text, until: now + SPEECH_MS });
          this.speechDirty(f.agent);
          if (this.speech.size > MAX_SPEECH) this.dropSpeech(this.speech.keys().next().value!);
          break;
        case 'whiteboard':
          this.counters.boardUpdates++;
          this.boardFlash.set(f.team, now + BOARD_FLASH_MS);
          break;
        case 'status':
          break;
      }
    }
    // Agents the effects did not mention but the state has (e.g. moved teams) get a view.
    if (this.views.size !== s.agents.size) {
      for (const a of s.agents.values()) if (!this.views.has(a.id)) this.views.set(a.id, this.newView(a, s, 'seated', now));
    }
  }

  /** Bubbles stand still: their box is repainted when one appears or goes, not every frame. */
  private speechDirty(id: string): void {
    const v = this.views.get(id);
    if (v) this.pendingRects.push(speechRect(v.x, v.y - 58));
  }

  private dropSpeech(id: string): void {
    if (!this.speech.has(id)) return;
    this.speechDirty(id);
    this.speech.delete(id);
  }

  private endsOf(p: Plane, s: FloorState): void {
    const fv = this.views.get(p.from);
    const tv = this.views.get(p.to);
    const fa = s.agents.get(p.from);
    const ta = s.agents.get(p.to);
    const f = fv ? { x: fv.x, y: fv.y } : fa ? this.deskAnchor(fa) : null;
    const t = tv && tv.phase !== 'in' ? { x: tv.x, y: tv.y } : ta ? this.deskAnchor(ta) : null;
    if (f) {
      p.fx = f.x;
      p.fy = f.y - 30;
    }
    if (t) {
      p.tx = t.x;
      p.ty = t.y - 30;
    }
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

  /** Advances animations; returns true when something moves (so the next frame must draw). */
  private step(s: FloorState, now: number): boolean {
    let moving = false;
    for (const v of this.views.values()) {
      const a = s.agents.get(v.id);
      if (v.phase === 'removing') {
        const k = this.reducedMotion ? 1 : (now - v.t0) / FADE_MS;
        v.alpha = Math.min(v.alpha, Math.max(0, 1 - k));
        if (k >= 1 || a) {
          // Gone (or back in the state under the same id: a fresh view takes over).
          this.views.delete(v.id);
          if (v.cell) this.pendingRects.push({ x: v.cell.x, y: v.cell.y, w: CELL_W, h: CELL_H });
          if (a) this.views.set(a.id, this.newView(a, s, 'seated', now));
        }
        moving = true;
        continue;
      }
      if (!a) {
        // The fold forgot it without a remove effect (cannot happen today); let it fade.
        Object.assign(v, { phase: 'removing', t0: now });
        continue;
      }
      const desk = this.deskAnchor(a);
      if (!desk) continue;
      if (v.phase === 'in') {
        const k = this.reducedMotion ? 1 : (now - v.t0) / WALK_MS;
        const e = ease(k);
        v.x = v.from.x + (desk.x - v.from.x) * e;
        v.y = v.from.y + (desk.y - v.from.y) * e;
        if (k >= 1) v.phase = 'seated';
        moving = true;
      } else if (v.phase === 'out') {
        const r = this.rooms.get(a.team);
        const door = r ? doorOf(r) : desk;
        const k = this.reducedMotion ? 1 : (now - v.t0) / WALK_MS;
        const e = ease(k);
        v.x = v.from.x + (door.x - v.from.x) * e;
        v.y = v.from.y + (door.y + 20 - v.from.y) * e;
        v.alpha = k >= 1 ? 0 : Math.min(1, 1.6 - 1.6 * k);
        if (k < 1.05) moving = true;
      } else {
        v.x = desk.x;
        v.y = desk.y;
      }
    }
    const planeMs = this.reducedMotion ? 1500 : PLANE_MS;
    let w = 0;
    for (const p of this.planes) if (now - p.t0 < planeMs) this.planes[w++] = p;
    this.planes.length = w;
    if (w) moving = true;
    for (const [id, sp] of this.speech) if (sp.until < now) this.dropSpeech(id);
    for (const [id, until] of this.boardFlash) if (until < now) this.boardFlash.delete(id);
    if (this.speech.size || this.boardFlash.size) moving = true;
    return moving;
  }

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
    this.step(s, now);
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
    const rects: Rect[] = full ? [] : this.pendingRects;
    this.pendingRects = [];

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
    const visible: View[] = (this.visible = []);
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
      const b = this.planeRect(p, s, now);
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
    for (const r of rects) this.paint(ctx, r, s, now, k);
    return true;
  }

  /** Repaints one box (world units) completely: background, rooms, desks, characters, overlays. */
  private paint(ctx: CanvasRenderingContext2D, rect: Rect, s: FloorState, now: number, k: number): void {
    const W = this.canvas.width;
    const H = this.canvas.height;
    const x0 = Math.max(0, Math.floor((this.offX + rect.x * this.scale) * this.dpr) - 1);
    const y0 = Math.max(0, Math.floor((this.offY + rect.y * this.scale) * this.dpr) - 1);
    const x1 = Math.min(W, Math.ceil((this.offX + (rect.x + rect.w) * this.scale) * this.dpr) + 1);
    const y1 = Math.min(H, Math.ceil((this.offY + (rect.y + rect.h) * this.scale) * this.dpr) + 1);
    if (x1 <= x0 || y1 <= y0) return;
    const hit = (x: number, y: number, w: number, h: number) => x < rect.x + rect.w + 2 && x + w > rect.x - 2 && y < rect.y + rect.h + 2 && y + h > rect.y - 2;
    const world = () => ctx.setTransform(k, 0, 0, k, this.dpr * this.offX, this.dpr * this.offY);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.beginPath();
    ctx.rect(x0, y0, x1 - x0, y1 - y0);
    ctx.clip();
    ctx.drawImage(this.bg, x0, y0, x1 - x0, y1 - y0, x0, y0, x1 - x0, y1 - y0);
    world();
    for (const r of this.rooms.values()) {
      if (!hit(r.x - 14, r.y - 14, r.w + 28, r.h + 28)) continue;
      // Most boxes are a desk cell well inside the room: no halo, no whiteboard there.
      const inside = rect.x > r.x + 4 && rect.y > r.y + 4 && rect.x + rect.w < r.x + r.w - 4 && rect.y + rect.h < r.y + r.h - 4;
      const b = boardRect(r);
      const board = hit(b.x, b.y, b.w, b.h);
      if (board || !inside) paintRoomLive(ctx, r, this.boardFlash.has(r.team.id), !inside, board);
    }
    // Desks, monitors and name tags: sprites blitted at whole device pixels (a copy, not a resample).
    // Only the views on screen this frame (draw() lists them): most boxes are one cell, and a floor has hundreds.
    const visible = this.visible;
    const compact = this.compact;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    for (const v of visible) {
      const c = v.cell;
      const img = compact ? (isWalking(v) ? null : v.token) : v.sprite;
      if (!c || v.hidden || !img || !v.agent || !hit(c.x, c.y, CELL_W, CELL_H)) continue;
      if (v.phase === 'removing') ctx.globalAlpha = v.alpha;
      const dx = Math.round((this.offX + c.x * this.scale) * this.dpr);
      const dy = Math.round((this.offY + c.y * this.scale) * this.dpr);
      // A sprite of another scale (not rebuilt yet after a resize) is stretched into the cell, never beyond it.
      if (compact || v.spriteScale === k) ctx.drawImage(img, dx, dy);
      else ctx.drawImage(img, dx, dy, Math.ceil(CELL_W * k), Math.ceil(CELL_H * k));
      ctx.globalAlpha = 1;
    }
    world();
    for (const v of visible) {
      const c = v.cell;
      if (!c || v.hidden || (v.id !== this.selected && v.id !== this.focused) || !hit(c.x, c.y, CELL_W, CELL_H)) continue;
      ctx.strokeStyle = v.id === this.selected ? '#2563eb' : '#1d4ed8';
      // At least 2 CSS px wide, however far out.
      ctx.lineWidth = Math.max(3, 2 / this.scale);
      ctx.setLineDash(v.id === this.selected ? [] : [6, 4]);
      roundRect(ctx, c.x + 3, c.y + 2, CELL_W - 6, CELL_H - 4, 12);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (compact) {
      // Far out, a walker is a disc of its colour on its way (its token appears when it sits).
      for (const v of visible) {
        if (v.hidden || v.alpha <= 0.01 || !isWalking(v) || !hit(v.x - 40, v.y - 66, 80, 100)) continue;
        ctx.globalAlpha = v.alpha;
        ctx.fillStyle = SHOWN_COLOR[v.look];
        ctx.beginPath();
        ctx.arc(v.x, v.y - 10, 30, 0, Math.PI * 2);
        ctx.fill();
        ctx.globalAlpha = 1;
      }
      ctx.restore();
      return;
    }
    // Characters: seated ones from their sprites; walkers and pulsing rings live.
    for (const v of visible) {
      const a = v.agent;
      if (!a || v.hidden || v.alpha <= 0.01) continue;
      const walking = isWalking(v);
      if (!(walking ? hit(v.x - 40, v.y - 66, 80, 100) : v.cell && hit(v.cell.x, v.cell.y, CELL_W, CELL_H))) continue;
      const pulsing = !walking && (v.look === 'waiting' || v.look === 'error');
      if (walking || pulsing) {
        world();
        const pulse = pulsing && !this.reducedMotion && v.phase !== 'removing' ? 0.5 + 0.5 * Math.sin(now / 220) : 0;
        drawRing(ctx, v.x, v.y + 22, v.look, pulse, v.alpha);
      }
      if (v.char) {
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.globalAlpha = v.alpha;
        ctx.drawImage(v.char, Math.round((this.offX + (v.x - CHAR_AX) * this.scale) * this.dpr), Math.round((this.offY + (v.y - CHAR_AY) * this.scale) * this.dpr));
        ctx.globalAlpha = 1;
      } else {
        world();
        if (!walking && !pulsing) drawRing(ctx, v.x, v.y + 22, v.look, 0, v.alpha);
        drawCharacter(ctx, v.x, v.y, walking, v.alpha, a, now, this.reducedMotion, v.look);
      }
    }
    world();
    for (let i = 0; i < this.planes.length; i++) {
      const b = this.planeBoxes[i];
      const p = this.planes[i];
      if (this.views.get(p.from)?.hidden || this.views.get(p.to)?.hidden) continue;
      if (hit(b.x, b.y, b.w, b.h)) this.drawPlane(ctx, p, s, now);
    }
    for (const [id, sp] of this.speech) {
      const v = this.views.get(id);
      if (!v || v.hidden || v.alpha <= 0.1) continue;
      const b = speechRect(v.x, v.y - 58);
      if (hit(b.x, b.y, b.w, b.h)) drawSpeech(ctx, v.x, v.y - 58, sp.text);
    }
    ctx.restore();
  }

  /** The box a plane covers this frame (its trail included). */
  private planeRect(p: Plane, s: FloorState, now: number): Rect {
    this.endsOf(p, s);
    if (this.reducedMotion) return bbox(p.fx, p.fy, p.tx, p.ty, 26);
    const arc = planeArc(p);
    const e = ease(Math.min(1, (now - p.t0) / PLANE_MS));
    const a = arc.at(Math.max(0, e - 0.25));
    const b = arc.at(e);
    return bbox(a.x, a.y, b.x, b.y, 28);
  }

  // ------------------------------------------------------------ painters (the pictures: sprites.ts)

  private drawBackground(key: string): void {
    this.bgKey = key;
    const bg = this.bg;
    bg.width = this.canvas.width;
    bg.height = this.canvas.height;
    const g = bg.getContext('2d')!;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = '#d9d4cb';
    g.fillRect(0, 0, bg.width, bg.height);
    // A faint tile grid on the building floor.
    g.strokeStyle = 'rgba(0,0,0,0.035)';
    g.lineWidth = 1;
    const step = 40 * this.scale * this.dpr;
    if (step > 6) {
      g.beginPath();
      for (let x = (this.offX * this.dpr) % step; x < bg.width; x += step) {
        g.moveTo(x, 0);
        g.lineTo(x, bg.height);
      }
      for (let y = (this.offY * this.dpr) % step; y < bg.height; y += step) {
        g.moveTo(0, y);
        g.lineTo(bg.width, y);
      }
      g.stroke();
    }
    g.setTransform(this.dpr * this.scale, 0, 0, this.dpr * this.scale, this.dpr * this.offX, this.dpr * this.offY);
    paintRooms(g, this.rooms.values());
  }

  /** The token of a look at device scale `k` (one per look, shared by every agent). */
  private tokenOf(look: Shown, k: number): HTMLCanvasElement {
    let c = this.tokens.get(look);
    if (c) return c;
    this.counters.sprites++;
    c = document.createElement('canvas');
    c.width = Math.max(1, Math.ceil(CELL_W * k));
    c.height = Math.max(1, Math.ceil(CELL_H * k));
    const g = c.getContext('2d')!;
    g.setTransform(k, 0, 0, k, 0, 0);
    paintToken(g, look);
    this.tokens.set(look, c);
    return c;
  }

  private buildSprite(v: View, a: Agent, scale: number, look: Shown): void {
    this.counters.sprites++;
    const c = v.sprite ?? document.createElement('canvas');
    const w = Math.max(1, Math.ceil(CELL_W * scale));
    const h = Math.max(1, Math.ceil(CELL_H * scale));
    if (c.width !== w || c.height !== h) {
      c.width = w;
      c.height = h;
    }
    // getContext is not free in Chromium; keep the sprite's context with it.
    const g = v.spriteCtx ?? (v.spriteCtx = c.getContext('2d')!);
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, w, h);
    g.setTransform(scale, 0, 0, scale, 0, 0);
    paintDesk(g, a, look);
    v.sprite = c;
    v.spriteRev = a.rev;
    v.spriteLook = look;
    v.spriteScale = scale;
  }

  private drawPlane(ctx: CanvasRenderingContext2D, p: Plane, s: FloorState, now: number): void {
    this.endsOf(p, s);
    drawPlane(ctx, p, Math.min(1, (now - p.t0) / PLANE_MS), this.reducedMotion);
  }

  private buildCharSprite(a: Agent, frame: number, k: number, withRing: boolean, look: Shown): HTMLCanvasElement {
    this.counters.sprites++;
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.ceil(CHAR_W * k));
    c.height = Math.max(1, Math.ceil(CHAR_H * k));
    const g = c.getContext('2d')!;
    g.setTransform(k, 0, 0, k, 0, 0);
    paintCharacterSprite(g, a, frame * ANIM_STEP_MS, withRing, this.reducedMotion, look);
    return c;
  }
}
