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

import type { Agent, Effect, FloorState, Team } from '../../../src/core/floor.js';
import { STATUS_BADGE, STATUS_COLOR, faceOf, floorColor, shirtColor } from './look.js';

const CELL_W = 124;
const CELL_H = 150;
const PAD = 22;
const HEADER = 78;
const FOOT = 34;
const GAP = 26;
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
/** A character sprite's box around the anchor. */
const CHAR_W = 76;
const CHAR_H = 92;
const CHAR_AX = 38;
const CHAR_AY = 58;

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
  /** Whiteboard and halo as last painted. */
  sig?: string;
}

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

const bbox = (ax: number, ay: number, bx: number, by: number, pad: number): Rect => ({
  x: Math.min(ax, bx) - pad,
  y: Math.min(ay, by) - pad,
  w: Math.abs(bx - ax) + 2 * pad,
  h: Math.abs(by - ay) + 2 * pad,
});
/** On its way in, or on its way out and still visible. */
const isWalking = (v: { phase: string; alpha: number }) => v.phase === 'in' || (v.phase === 'out' && v.alpha > 0.01);
const walkerRect = (x: number, y: number): Rect => ({ x: x - 42, y: y - 68, w: 84, h: 104 });
const speechRect = (x: number, y: number): Rect => ({ x: x - 76, y: y - 30, w: 194, h: 42 });

interface View {
  id: string;
  /** The agent as last seen in the state (kept to draw its fade after removal). */
  agent: Agent | null;
  /** Its desk cell as last drawn. */
  cell: { x: number; y: number } | null;
  /** The character sprite chosen this frame (null: drawn live). */
  char: HTMLCanvasElement | null;
  /** What was painted last, to tell whether the cell must be repainted. */
  drawn: { desk: HTMLCanvasElement | null; rev: number; k: number; char: HTMLCanvasElement | null; x: number; y: number; alpha: number; sel: number; cx: number; cy: number } | null;
  x: number;
  y: number;
  phase: 'in' | 'seated' | 'out' | 'removing';
  from: { x: number; y: number };
  t0: number;
  alpha: number;
  sprite: HTMLCanvasElement | null;
  spriteRev: number;
  spriteScale: number;
  spriteCtx: CanvasRenderingContext2D | null;
  /** Character sprites by `status|role|frame|scale`. */
  chars: Map<string, HTMLCanvasElement>;
  /** The last character sprite drawn and what it showed (the common case: unchanged). */
  charLast: { status: string; role: string; f: number; k: number; sprite: HTMLCanvasElement } | null;
  charK: number;
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

const ease = (t: number) => (t < 0 ? 0 : t > 1 ? 1 : t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2);

export class FloorScene {
  rooms = new Map<string, Room>();
  views = new Map<string, View>();
  planes: Plane[] = [];
  speech = new Map<string, { text: string; until: number }>();
  boardFlash = new Map<string, number>();
  selected: string | null = null;
  focused: string | null = null;
  reducedMotion = false;
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
  private worldW = 1;
  private worldH = 1;
  scale = 1;
  private offX = 0;
  private offY = 0;
  private cssW = 0;
  private cssH = 0;
  private dpr = 1;
  private dirty = true;

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

  /** Recomputes rooms when teams, desks or the canvas size changed. */
  layout(s: FloorState): void {
    const perTeam = new Map<string, { max: number; head: boolean; att: Room['attention'] }>();
    for (const t of s.teams.values()) perTeam.set(t.id, { max: 0, head: false, att: null });
    for (const a of s.agents.values()) {
      const p = perTeam.get(a.team);
      if (!p) continue;
      if (a.desk === 0) p.head = true;
      else if (a.desk > p.max) p.max = a.desk;
      if (a.leftAt === null) {
        if (a.status === 'error') p.att = 'error';
        else if (a.status === 'waiting' && p.att === null) p.att = 'waiting';
      }
    }
    // Rooms grow at once but shrink lazily (below 60% of their high-water mark), so a
    // helper leaving and another joining does not reshuffle the whole floor.
    for (const [id, p] of perTeam) {
      const hw = this.highWater.get(id) ?? 0;
      if (p.max > hw || p.max < hw * 0.6) this.highWater.set(id, p.max);
      else p.max = hw;
    }
    for (const id of this.highWater.keys()) if (!perTeam.has(id)) this.highWater.delete(id);
    let key = `${this.cssW}x${this.cssH}|`;
    for (const [id, p] of perTeam) key += `${id}\u0000${p.max}${p.head ? 'h' : ''};`;
    for (const [id, p] of perTeam) {
      const r = this.rooms.get(id);
      if (r) r.attention = p.att;
    }
    if (key === this.layoutKey) return;
    this.layoutKey = key;
    this.rooms.clear();
    const sized: Room[] = [];
    let i = 0;
    for (const t of s.teams.values()) {
      const p = perTeam.get(t.id)!;
      const slots = Math.max(p.max, p.head ? 2 : 3);
      const cols = Math.max(2, Math.min(7, Math.ceil(Math.sqrt(slots * 1.2))));
      const rows = Math.max(1, Math.ceil(slots / cols));
      const w = Math.max(cols * CELL_W, 2 * CELL_W + 40) + 2 * PAD;
      const h = HEADER + (p.head ? CELL_H : 0) + rows * CELL_H + FOOT;
      sized.push({ team: t, index: i++, x: 0, y: 0, w, h, cols, hasHead: p.head, attention: p.att });
    }
    this.pack(sized);
    for (const r of sized) this.rooms.set(r.team.id, r);
    // Seated characters move with their desks at once (step() puts them there); the
    // whole floor is repainted anyway when the layout changes.
    this.dirty = true;
  }

  /** Shelf packing; tries a few widths and keeps the one that draws biggest. */
  private pack(rooms: Room[]): void {
    if (rooms.length === 0) {
      this.worldW = this.worldH = 1;
      return;
    }
    const aspect = this.cssW > 0 && this.cssH > 0 ? this.cssW / this.cssH : 1.6;
    const widest = Math.max(...rooms.map((r) => r.w));
    let best: { W: number; H: number; pos: [number, number][] } | null = null;
    let bestScale = -1;
    for (let n = 1; n <= rooms.length; n++) {
      // Candidate: at most n rooms per shelf.
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
      const H = y + shelfH;
      W = Math.max(W, widest);
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
    this.worldW = best!.W;
    this.worldH = best!.H;
  }

  /** Where the character of `a` sits (its anchor: the middle of its torso). */
  deskAnchor(a: Agent): { x: number; y: number } | null {
    const r = this.rooms.get(a.team);
    if (!r) return null;
    const c = this.cellOf(r, a.desk);
    return { x: c.x + CELL_W / 2, y: c.y + 92 };
  }

  private cellOf(r: Room, desk: number): { x: number; y: number } {
    if (desk === 0) return { x: r.x + r.w / 2 - CELL_W / 2, y: r.y + HEADER };
    const i = desk - 1;
    const col = i % r.cols;
    const row = Math.floor(i / r.cols);
    const gx = r.x + (r.w - r.cols * CELL_W) / 2;
    return { x: gx + col * CELL_W, y: r.y + HEADER + (r.hasHead ? CELL_H : 0) + row * CELL_H };
  }

  private doorOf(r: Room): { x: number; y: number } {
    return { x: r.x + PAD + 26, y: r.y + r.h + 12 };
  }

  private newView(a: Agent, s: FloorState, phase: View['phase'], now: number): View {
    const at = this.deskAnchor(a) ?? { x: 0, y: 0 };
    const r = this.rooms.get(a.team);
    if (phase === 'in' && r && !this.reducedMotion) {
      const d = this.doorOf(r);
      return { id: a.id, x: d.x, y: d.y, phase, from: d, t0: now, alpha: 1, sprite: null, spriteRev: -1, spriteScale: 0, spriteCtx: null, chars: new Map(), charLast: null, charK: 0, agent: a, cell: null, char: null, drawn: null };
    }
    void s;
    const gone = a.leftAt !== null;
    return { id: a.id, x: at.x, y: at.y, phase: gone ? 'out' : 'seated', from: at, t0: gone ? -Infinity : now, alpha: gone ? 0 : 1, sprite: null, spriteRev: -1, spriteScale: 0, spriteCtx: null, chars: new Map(), charLast: null, charK: 0, agent: a, cell: null, char: null, drawn: null };
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
              const d = this.doorOf(r);
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
    const m = 16;
    const sc = Math.min((this.cssW - 2 * m) / this.worldW, (this.cssH - 2 * m) / this.worldH, 1.15);
    this.scale = Math.max(0.05, sc);
    this.offX = (this.cssW - this.worldW * this.scale) / 2;
    this.offY = Math.max(m, (this.cssH - this.worldH * this.scale) / 2);
  }

  /** Canvas CSS pixel → the agent under it (desk cell), if any. */
  hit(px: number, py: number, s: FloorState): string | null {
    const wx = (px - this.offX) / this.scale;
    const wy = (py - this.offY) / this.scale;
    let best: string | null = null;
    let bestD = Infinity;
    for (const v of this.views.values()) {
      if (v.alpha < 0.2 || !s.agents.has(v.id)) continue;
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
        const door = r ? this.doorOf(r) : desk;
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
      this.drawBackground(s, bgKey);
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
          rects.push(att ? { x: r.x - 14, y: r.y - 14, w: r.w + 28, h: r.h + 28 } : this.boardRect(r));
        }
        r.sig = sig;
      }
    }

    // Agents: pick (and build, within a budget) their sprites, and see what changed.
    let builds = 0;
    const frame = this.reducedMotion ? 0 : Math.floor(now / ANIM_STEP_MS) % ANIM_FRAMES;
    for (const v of this.views.values()) {
      const a = s.agents.get(v.id) ?? (v.phase === 'removing' ? v.agent : undefined);
      if (!a) continue;
      v.agent = a;
      const r = this.rooms.get(a.team);
      const cell = r ? this.cellOf(r, a.desk) : v.cell;
      if (!cell) continue;
      if (!v.sprite || ((v.spriteRev !== a.rev || v.spriteScale !== k) && builds < MAX_SPRITE_BUILDS_PER_FRAME)) {
        this.buildSprite(v, a, k);
        builds++;
      }
      const walking = isWalking(v);
      const pulses = !walking && !this.reducedMotion && (a.status === 'waiting' || a.status === 'error') && v.phase !== 'removing';
      let sprite: HTMLCanvasElement | null = null;
      if (!walking) {
        const f = a.status === 'working' || a.status === 'thinking' || a.status === 'waiting' ? frame : 0;
        const last = v.charLast;
        if (last && last.status === a.status && last.role === a.role && last.f === f && last.k === k) sprite = last.sprite;
        else {
          if (v.charK !== k) {
            v.chars.clear();
            v.charK = k;
          }
          // Keyed by what the sprite shows; a string is built only when the look changes.
          const key = `${a.status}|${a.role}|${f}`;
          sprite = v.chars.get(key) ?? null;
          if (!sprite && builds < MAX_SPRITE_BUILDS_PER_FRAME * 2) {
            sprite = this.buildCharSprite(v, a, f, k, !(a.status === 'waiting' || a.status === 'error'));
            // A few looks per agent at most (the oldest goes first): canvases are not free.
            if (v.chars.size >= 10) v.chars.delete(v.chars.keys().next().value!);
            v.chars.set(key, sprite);
            builds++;
          }
          v.charLast = sprite ? { status: a.status, role: a.role, f, k, sprite } : null;
        }
      }
      v.char = sprite;
      const sel = v.id === this.selected ? 1 : v.id === this.focused ? 2 : 0;
      const d = v.drawn;
      const changed =
        !d ||
        d.desk !== v.sprite ||
        d.rev !== v.spriteRev ||
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
      v.drawn = { desk: v.sprite, rev: v.spriteRev, k: v.spriteScale, char: sprite, x: Math.round(v.x * 2), y: Math.round(v.y * 2), alpha: Math.round(v.alpha * 50), sel, cx: cell.x, cy: cell.y };
    }

    // Things that move across cells: where they were and where they are.
    const overlay: Rect[] = [];
    for (const v of this.views.values()) if (isWalking(v)) overlay.push(walkerRect(v.x, v.y));
    this.planeBoxes.length = 0;
    for (const p of this.planes) {
      const b = this.planeRect(p, s, now);
      this.planeBoxes.push(b);
      overlay.push(b);
    }
    // A bubble over a walker moves with it.
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
      const b = this.boardRect(r);
      const board = hit(b.x, b.y, b.w, b.h);
      if (board || !inside) this.drawRoomLive(ctx, r, now, !inside, board);
    }
    // Desks, monitors and name tags: sprites blitted at whole device pixels (a copy, not a resample).
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    for (const v of this.views.values()) {
      const c = v.cell;
      if (!c || !v.sprite || !v.agent || !hit(c.x, c.y, CELL_W, CELL_H)) continue;
      if (v.phase === 'removing') ctx.globalAlpha = v.alpha;
      const dx = Math.round((this.offX + c.x * this.scale) * this.dpr);
      const dy = Math.round((this.offY + c.y * this.scale) * this.dpr);
      // A sprite of another scale (not rebuilt yet after a resize) is stretched into the cell, never beyond it.
      if (v.spriteScale === k) ctx.drawImage(v.sprite, dx, dy);
      else ctx.drawImage(v.sprite, dx, dy, Math.ceil(CELL_W * k), Math.ceil(CELL_H * k));
      ctx.globalAlpha = 1;
    }
    world();
    for (const v of this.views.values()) {
      const c = v.cell;
      if (!c || (v.id !== this.selected && v.id !== this.focused) || !hit(c.x, c.y, CELL_W, CELL_H)) continue;
      ctx.strokeStyle = v.id === this.selected ? '#2563eb' : '#1d4ed8';
      ctx.lineWidth = 3;
      ctx.setLineDash(v.id === this.selected ? [] : [6, 4]);
      roundRect(ctx, c.x + 3, c.y + 2, CELL_W - 6, CELL_H - 4, 12);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    // Characters: seated ones from their sprites; walkers and pulsing rings live.
    for (const v of this.views.values()) {
      const a = v.agent;
      if (!a || v.alpha <= 0.01) continue;
      const walking = isWalking(v);
      if (!(walking ? hit(v.x - 40, v.y - 66, 80, 100) : v.cell && hit(v.cell.x, v.cell.y, CELL_W, CELL_H))) continue;
      const pulsing = !walking && (a.status === 'waiting' || a.status === 'error');
      if (walking || pulsing) {
        world();
        const pulse = pulsing && !this.reducedMotion && v.phase !== 'removing' ? 0.5 + 0.5 * Math.sin(now / 220) : 0;
        drawRing(ctx, v.x, v.y + 22, a.status, pulse, v.alpha);
      }
      if (v.char) {
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.globalAlpha = v.alpha;
        ctx.drawImage(v.char, Math.round((this.offX + (v.x - CHAR_AX) * this.scale) * this.dpr), Math.round((this.offY + (v.y - CHAR_AY) * this.scale) * this.dpr));
        ctx.globalAlpha = 1;
      } else {
        world();
        if (!walking && !pulsing) drawRing(ctx, v.x, v.y + 22, a.status, 0, v.alpha);
        this.drawCharacter(ctx, v.x, v.y, walking, v.alpha, a, now);
      }
    }
    world();
    for (let i = 0; i < this.planes.length; i++) {
      const b = this.planeBoxes[i];
      if (hit(b.x, b.y, b.w, b.h)) this.drawPlane(ctx, this.planes[i], s, now);
    }
    for (const [id, sp] of this.speech) {
      const v = this.views.get(id);
      if (!v || v.alpha <= 0.1) continue;
      const b = speechRect(v.x, v.y - 58);
      if (hit(b.x, b.y, b.w, b.h)) this.drawSpeech(ctx, v.x, v.y - 58, sp.text);
    }
    ctx.restore();
  }

  private boardRect(r: Room): Rect {
    const bw = boardWidth(r);
    return { x: r.x + r.w - PAD - bw - 4, y: r.y + 8, w: bw + 8, h: 60 };
  }

  /** The box a plane covers this frame (its trail included). */
  private planeRect(p: Plane, s: FloorState, now: number): Rect {
    this.endsOf(p, s);
    if (this.reducedMotion) return bbox(p.fx, p.fy, p.tx, p.ty, 26);
    const e = ease(Math.min(1, (now - p.t0) / PLANE_MS));
    const e0 = Math.max(0, e - 0.25);
    const mx = (p.fx + p.tx) / 2;
    const my = Math.min(p.fy, p.ty) - 60 - Math.hypot(p.tx - p.fx, p.ty - p.fy) * 0.15;
    const q = (t: number, a: number, b: number, c: number) => (1 - t) * (1 - t) * a + 2 * (1 - t) * t * b + t * t * c;
    return bbox(q(e0, p.fx, mx, p.tx), q(e0, p.fy, my, p.ty), q(e, p.fx, mx, p.tx), q(e, p.fy, my, p.ty), 28);
  }

  // ------------------------------------------------------------ painters

  private drawBackground(s: FloorState, key: string): void {
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
    for (const r of this.rooms.values()) {
      // Shadow, floor, walls.
      g.fillStyle = 'rgba(60,50,40,0.18)';
      roundRect(g, r.x + 4, r.y + 6, r.w, r.h, 14);
      g.fill();
      g.fillStyle = floorColor(r.team.id, r.index);
      roundRect(g, r.x, r.y, r.w, r.h, 14);
      g.fill();
      g.strokeStyle = '#6b5b4b';
      g.lineWidth = 6;
      roundRect(g, r.x, r.y, r.w, r.h, 14);
      g.stroke();
      // Door: a gap in the bottom wall with a mat.
      const d = this.doorOf(r);
      g.fillStyle = floorColor(r.team.id, r.index);
      g.fillRect(d.x - 26, r.y + r.h - 5, 52, 10);
      g.fillStyle = '#a8896b';
      roundRect(g, d.x - 20, r.y + r.h - 18, 40, 10, 3);
      g.fill();
      g.strokeStyle = '#6b5b4b';
      g.lineWidth = 3;
      g.beginPath();
      g.moveTo(d.x - 26, r.y + r.h);
      g.lineTo(d.x - 40, r.y + r.h + 16);
      g.stroke();
      // Team name.
      g.fillStyle = '#2d2a26';
      g.font = '700 19px system-ui, -apple-system, "Segoe UI", sans-serif';
      g.textBaseline = 'alphabetic';
      g.fillText(fitText(g, r.team.name, r.w - 2 * PAD - boardWidth(r) - 12), r.x + PAD, r.y + 34);
      // A rug under the head desk.
      if (r.hasHead) {
        g.fillStyle = 'rgba(30,58,138,0.08)';
        const c = this.cellOf(r, 0);
        roundRect(g, c.x - 6, c.y + 2, CELL_W + 12, CELL_H - 6, 16);
        g.fill();
      }
    }
    void s;
  }

  private drawRoomLive(ctx: CanvasRenderingContext2D, r: Room, now: number, halo = true, board = true): void {
    void now;
    // The attention halo: rooms with a waiting or failed agent are outlined so the eye goes there.
    if (r.attention && halo) {
      const col = r.attention === 'error' ? STATUS_COLOR.error : STATUS_COLOR.waiting;
      // Steady, not pulsing: the halo is repainted piecemeal, and the rings already pulse.
      ctx.strokeStyle = col;
      ctx.globalAlpha = 0.75;
      ctx.lineWidth = 5;
      roundRect(ctx, r.x - 7, r.y - 7, r.w + 14, r.h + 14, 18);
      ctx.stroke();
      ctx.globalAlpha = 1;
    }
    if (!board) return;
    // Whiteboard on the top wall.
    const bw = boardWidth(r);
    const bx = r.x + r.w - PAD - bw;
    const by = r.y + 12;
    const flash = this.boardFlash.get(r.team.id);
    ctx.fillStyle = '#fdfdfb';
    ctx.strokeStyle = flash ? '#f59e0b' : '#9ca3af';
    ctx.lineWidth = flash ? 4 : 2;
    roundRect(ctx, bx, by, bw, 52, 4);
    ctx.fill();
    ctx.stroke();
    ctx.fillStyle = '#475569';
    ctx.font = '600 9px system-ui, sans-serif';
    ctx.fillText('TASK', bx + 7, by + 13);
    ctx.fillStyle = '#1e293b';
    ctx.font = '12px "Comic Sans MS", "Segoe Print", system-ui, sans-serif';
    const task = r.team.task || '—';
    const lines = wrap2(ctx, task, bw - 14);
    ctx.fillText(lines[0], bx + 7, by + 29);
    if (lines[1]) ctx.fillText(lines[1], bx + 7, by + 44);
  }

  private buildSprite(v: View, a: Agent, scale: number): void {
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
    const cx = CELL_W / 2;
    const status = a.status;
    const col = STATUS_COLOR[status];
    // Monitor.
    const mx = cx - 38,
      my = 4,
      mw = 76,
      mh = 48;
    g.fillStyle = '#1f2937';
    roundRect(g, mx - 3, my - 3, mw + 6, mh + 6, 5);
    g.fill();
    let screen = '#0f172a';
    if (status === 'error') screen = '#450a0a';
    else if (status === 'offline') screen = '#030712';
    else if (status === 'idle') screen = '#1e293b';
    else if (status === 'done') screen = '#082f49';
    else if (status === 'waiting') screen = '#422006';
    g.fillStyle = screen;
    g.fillRect(mx, my, mw, mh);
    if (status !== 'offline') {
      // Title bar: the tool.
      g.fillStyle = status === 'error' ? '#991b1b' : '#334155';
      g.fillRect(mx, my, mw, 11);
      g.fillStyle = '#e2e8f0';
      g.font = '600 8px ui-monospace, Menlo, Consolas, monospace';
      g.textBaseline = 'middle';
      g.fillText(fitText(g, a.tool || status, mw - 6), mx + 3, my + 6);
      g.textBaseline = 'alphabetic';
      if (status === 'done') {
        g.strokeStyle = '#7dd3fc';
        g.lineWidth = 4;
        g.beginPath();
        g.moveTo(cx - 10, my + 30);
        g.lineTo(cx - 3, my + 37);
        g.lineTo(cx + 11, my + 21);
        g.stroke();
      } else if (status === 'error') {
        g.fillStyle = '#fca5a5';
        g.font = '700 8px ui-monospace, monospace';
        const l = wrap2(g, a.activity || 'error', mw - 6);
        g.fillText(l[0], mx + 3, my + 24);
        if (l[1]) g.fillText(l[1], mx + 3, my + 35);
      } else {
        // The activity, as lines of text on the screen.
        g.fillStyle = status === 'idle' ? '#64748b' : status === 'waiting' ? '#fcd34d' : '#a7f3d0';
        g.font = '8px ui-monospace, Menlo, Consolas, monospace';
        const l = wrap2(g, a.activity || (status === 'idle' ? '' : '…'), mw - 6);
        g.fillText(l[0], mx + 3, my + 23);
        if (l[1]) g.fillText(l[1], mx + 3, my + 33);
        if (status === 'working') {
          g.fillStyle = 'rgba(134,239,172,0.35)';
          g.fillRect(mx + 3, my + 39, 22, 2);
          g.fillRect(mx + 28, my + 39, 30, 2);
        }
      }
    }
    // Stand and desk.
    g.fillStyle = '#374151';
    g.fillRect(cx - 5, my + mh + 3, 10, 6);
    g.fillStyle = '#b08962';
    roundRect(g, cx - 54, my + mh + 8, 108, 13, 4);
    g.fill();
    g.fillStyle = '#8c6a4a';
    g.fillRect(cx - 54, my + mh + 18, 108, 3);
    // Name tag.
    const ty = 131;
    g.font = '700 11px system-ui, -apple-system, "Segoe UI", sans-serif';
    const name = fitText(g, a.name, CELL_W - 16);
    const nw = Math.min(CELL_W - 4, g.measureText(name).width + 14);
    const attention = status === 'waiting' || status === 'error';
    g.fillStyle = attention ? col : '#ffffff';
    g.strokeStyle = attention ? col : 'rgba(0,0,0,0.18)';
    g.lineWidth = 1;
    roundRect(g, cx - nw / 2, ty - 11, nw, 15, 7);
    g.fill();
    g.stroke();
    g.fillStyle = attention ? '#ffffff' : '#111827';
    g.textAlign = 'center';
    g.fillText(name, cx, ty);
    g.font = '9.5px system-ui, -apple-system, "Segoe UI", sans-serif';
    g.fillStyle = attention ? col : '#4b5563';
    const sub = a.activity || (a.role ? a.role : '');
    g.fillText(fitText(g, sub, CELL_W - 6), cx, ty + 14);
    g.textAlign = 'left';
    v.sprite = c;
    v.spriteRev = a.rev;
    v.spriteScale = scale;
  }

  private buildCharSprite(v: View, a: Agent, frame: number, k: number, withRing: boolean): HTMLCanvasElement {
    this.counters.sprites++;
    void v;
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.ceil(CHAR_W * k));
    c.height = Math.max(1, Math.ceil(CHAR_H * k));
    const g = c.getContext('2d')!;
    g.setTransform(k, 0, 0, k, 0, 0);
    if (withRing) drawRing(g, CHAR_AX, CHAR_AY + 22, a.status, 0, 1);
    this.drawCharacter(g, CHAR_AX, CHAR_AY, false, 1, a, frame * ANIM_STEP_MS);
    return c;
  }

  /** A character of `a` around its anchor (x, y). `now` only sets the phase of its little animations. */
  private drawCharacter(ctx: CanvasRenderingContext2D, x0: number, y0: number, walking: boolean, alpha: number, a: Agent, now: number): void {
    const status = a.status;
    const col = STATUS_COLOR[status];
    const standing = walking || status === 'waiting';
    const calm = this.reducedMotion;
    const face = faceOf(a.id);
    const shirt = status === 'offline' ? '#9ca3af' : shirtColor(a.role);
    const x = x0;
    const y = y0 - (standing ? 8 : 0);
    ctx.globalAlpha = alpha * (status === 'offline' ? 0.55 : 1);

    // Chair (seated only).
    if (!standing) {
      ctx.fillStyle = '#4b5563';
      roundRect(ctx, x - 16, y - 2, 32, 20, 6);
      ctx.fill();
    }
    // Legs.
    ctx.strokeStyle = '#334155';
    ctx.lineWidth = 5;
    ctx.lineCap = 'round';
    ctx.beginPath();
    if (walking && !calm) {
      const sw = Math.sin(now / 90) * 5;
      ctx.moveTo(x - 4, y + 10);
      ctx.lineTo(x - 4 + sw, y + 24);
      ctx.moveTo(x + 4, y + 10);
      ctx.lineTo(x + 4 - sw, y + 24);
    } else if (standing) {
      ctx.moveTo(x - 4, y + 10);
      ctx.lineTo(x - 5, y + 24);
      ctx.moveTo(x + 4, y + 10);
      ctx.lineTo(x + 5, y + 24);
    } else {
      ctx.moveTo(x - 5, y + 10);
      ctx.lineTo(x - 7, y + 18);
      ctx.moveTo(x + 5, y + 10);
      ctx.lineTo(x + 7, y + 18);
    }
    ctx.stroke();

    // Torso.
    const lean = status === 'done' && !walking ? 2 : status === 'offline' ? 3 : 0;
    ctx.fillStyle = shirt;
    roundRect(ctx, x - 12, y - 9 + lean, 24, 22, 7);
    ctx.fill();

    // Head.
    const hx = x + (status === 'offline' ? 2 : 0);
    const hy = y - 19 + lean + (status === 'offline' ? 3 : 0);
    ctx.fillStyle = status === 'offline' ? '#d1d5db' : face.skin;
    ctx.beginPath();
    ctx.arc(hx, hy, 10, 0, Math.PI * 2);
    ctx.fill();
    // Hair.
    ctx.fillStyle = status === 'offline' ? '#6b7280' : face.hair;
    ctx.beginPath();
    if (face.hairStyle === 0) ctx.arc(hx, hy - 2, 10, Math.PI * 1.05, Math.PI * 1.95);
    else if (face.hairStyle === 1) {
      ctx.arc(hx, hy - 1, 10.5, Math.PI * 0.95, Math.PI * 2.05);
    } else {
      ctx.ellipse(hx, hy - 6, 10, 5, 0, Math.PI, Math.PI * 2);
    }
    ctx.fill();
    // Eyes (closed when offline or done: a content squint).
    ctx.fillStyle = '#1f2937';
    ctx.strokeStyle = '#1f2937';
    ctx.lineWidth = 1.4;
    if (status === 'offline' || status === 'done') {
      ctx.beginPath();
      ctx.moveTo(hx - 5, hy + 1);
      ctx.lineTo(hx - 2, hy + 1);
      ctx.moveTo(hx + 2, hy + 1);
      ctx.lineTo(hx + 5, hy + 1);
      ctx.stroke();
    } else {
      ctx.fillRect(hx - 4.5, hy - 0.5, 2, 2.5);
      ctx.fillRect(hx + 2.5, hy - 0.5, 2, 2.5);
    }
    if (status === 'error') {
      ctx.beginPath();
      ctx.arc(hx, hy + 7, 2.5, Math.PI * 1.1, Math.PI * 1.9);
      ctx.stroke();
    }

    // Headset for the lead.
    if (a.role.toLowerCase() === 'lead') {
      ctx.strokeStyle = '#111827';
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(hx, hy, 12, Math.PI * 1.05, Math.PI * 1.95);
      ctx.stroke();
      ctx.fillStyle = '#111827';
      ctx.fillRect(hx - 13, hy - 3, 4, 7);
      ctx.fillRect(hx + 9, hy - 3, 4, 7);
      ctx.beginPath();
      ctx.moveTo(hx - 11, hy + 4);
      ctx.quadraticCurveTo(hx - 10, hy + 10, hx - 3, hy + 9);
      ctx.stroke();
    }

    // Arms, by pose.
    ctx.strokeStyle = shirt;
    ctx.lineWidth = 5;
    ctx.lineCap = 'round';
    ctx.fillStyle = status === 'offline' ? '#d1d5db' : face.skin;
    const sy = y - 5 + lean;
    const hand = (hx2: number, hy2: number) => {
      ctx.beginPath();
      ctx.arc(hx2, hy2, 3, 0, Math.PI * 2);
      ctx.fill();
    };
    const arm = (x1: number, y1: number, x2: number, y2: number, x3: number, y3: number) => {
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x2, y2);
      ctx.lineTo(x3, y3);
      ctx.stroke();
      hand(x3, y3);
    };
    if (walking) {
      const sw = calm ? 0 : Math.sin(now / 90) * 4;
      arm(x - 12, sy, x - 15, sy + 8, x - 15 - sw, sy + 15);
      arm(x + 12, sy, x + 15, sy + 8, x + 15 + sw, sy + 15);
    } else if (status === 'working') {
      const ph = (now / 1000) * Math.PI * 2 * 3;
      const b1 = calm ? 0 : Math.sin(ph + a.seq) * 1.8;
      const b2 = calm ? 0 : Math.sin(ph + a.seq + 2) * 1.8;
      arm(x - 12, sy, x - 16, sy - 4, x - 8, y - 14 + b1);
      arm(x + 12, sy, x + 16, sy - 4, x + 8, y - 14 + b2);
    } else if (status === 'thinking') {
      arm(x - 12, sy, x - 16, sy + 9, x - 13, sy + 15);
      arm(x + 12, sy, x + 14, sy + 4, hx + 4, hy + 11);
      // Thought dots.
      const k = calm ? 3 : 1 + (Math.floor(now / 334) % 3);
      ctx.fillStyle = '#ffffff';
      ctx.strokeStyle = STATUS_COLOR.thinking;
      ctx.lineWidth = 1.2;
      for (let i = 0; i < k; i++) {
        ctx.beginPath();
        ctx.arc(hx + 13 + i * 6, hy - 14 - i * 5, 2 + i * 0.8, 0, Math.PI * 2);
        ctx.fill();
        ctx.stroke();
      }
    } else if (status === 'waiting') {
      const wave = calm ? 0 : Math.sin((now / 1000) * Math.PI * 2) * 3;
      arm(x - 12, sy, x - 16, sy + 9, x - 14, sy + 16);
      arm(x + 12, sy, x + 17, sy - 12, x + 17 + wave, sy - 26);
    } else if (status === 'done') {
      arm(x - 12, sy, x - 19, sy - 9, x - 17, sy - 20);
      arm(x + 12, sy, x + 19, sy - 9, x + 17, sy - 20);
    } else if (status === 'error') {
      arm(x - 12, sy, x - 17, sy - 8, hx - 10, hy - 2);
      arm(x + 12, sy, x + 17, sy - 8, hx + 10, hy - 2);
    } else {
      // idle and offline: arms down.
      arm(x - 12, sy, x - 15, sy + 8, x - 13, sy + 15);
      arm(x + 12, sy, x + 15, sy + 8, x + 13, sy + 15);
    }
    if (status === 'offline' && !walking) {
      ctx.fillStyle = '#6b7280';
      ctx.font = '700 10px system-ui, sans-serif';
      ctx.fillText('z', hx + 11, hy - 8);
      ctx.font = '700 8px system-ui, sans-serif';
      ctx.fillText('z', hx + 17, hy - 14);
    }

    // Badge.
    const badge = STATUS_BADGE[status];
    if (badge && !walking) {
      const bx = hx - 15;
      const by = hy - 16;
      const r = status === 'done' ? 6.5 : 8.5;
      ctx.fillStyle = col;
      ctx.beginPath();
      ctx.arc(bx, by, r, 0, Math.PI * 2);
      ctx.fill();
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 1.5;
      ctx.stroke();
      ctx.fillStyle = '#ffffff';
      ctx.font = `800 ${status === 'done' ? 9 : 12}px system-ui, sans-serif`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(badge, bx, by + 0.5);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'alphabetic';
    }
    ctx.globalAlpha = 1;
  }

  private drawPlane(ctx: CanvasRenderingContext2D, p: Plane, s: FloorState, now: number): void {
    this.endsOf(p, s);
    const k = Math.min(1, (now - p.t0) / PLANE_MS);
    if (this.reducedMotion) {
      // No flight: a quiet dotted line and a folded note at the recipient.
      ctx.strokeStyle = p.brief ? 'rgba(30,58,138,0.45)' : 'rgba(71,85,105,0.4)';
      ctx.lineWidth = 1.5;
      ctx.setLineDash([3, 5]);
      ctx.beginPath();
      ctx.moveTo(p.fx, p.fy);
      ctx.lineTo(p.tx, p.ty);
      ctx.stroke();
      ctx.setLineDash([]);
      drawPaperPlane(ctx, p.tx, p.ty, 0, p.brief);
      return;
    }
    const e = ease(k);
    const mx = (p.fx + p.tx) / 2;
    const my = Math.min(p.fy, p.ty) - 60 - Math.hypot(p.tx - p.fx, p.ty - p.fy) * 0.15;
    // Quadratic Bezier arc.
    const q = (a: number, b: number, c: number) => (1 - e) * (1 - e) * a + 2 * (1 - e) * e * b + e * e * c;
    const x = q(p.fx, mx, p.tx);
    const y = q(p.fy, my, p.ty);
    const dx = 2 * (1 - e) * (mx - p.fx) + 2 * e * (p.tx - mx);
    const dy = 2 * (1 - e) * (my - p.fy) + 2 * e * (p.ty - my);
    // A short dashed trail.
    ctx.strokeStyle = p.brief ? 'rgba(30,58,138,0.35)' : 'rgba(71,85,105,0.3)';
    ctx.lineWidth = 1.5;
    ctx.setLineDash([4, 5]);
    ctx.beginPath();
    const e0 = Math.max(0, e - 0.25);
    const q0 = (a: number, b: number, c: number) => (1 - e0) * (1 - e0) * a + 2 * (1 - e0) * e0 * b + e0 * e0 * c;
    ctx.moveTo(q0(p.fx, mx, p.tx), q0(p.fy, my, p.ty));
    ctx.quadraticCurveTo((q0(p.fx, mx, p.tx) + x) / 2, (q0(p.fy, my, p.ty) + y) / 2 - 4, x, y);
    ctx.stroke();
    ctx.setLineDash([]);
    drawPaperPlane(ctx, x, y, Math.atan2(dy, dx), p.brief);
  }

  private drawSpeech(ctx: CanvasRenderingContext2D, x: number, y: number, text: string): void {
    ctx.font = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
    const w = Math.min(180, ctx.measureText(text).width + 16);
    const t = fitText(ctx, text, w - 14);
    const bx = x - w / 2 + 20;
    const by = y - 26;
    ctx.fillStyle = '#ffffff';
    ctx.strokeStyle = '#334155';
    ctx.lineWidth = 1.5;
    roundRect(ctx, bx, by, w, 22, 10);
    ctx.fill();
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(x + 2, by + 21);
    ctx.lineTo(x - 4, by + 30);
    ctx.lineTo(x + 10, by + 21);
    ctx.closePath();
    ctx.fill();
    ctx.beginPath();
    ctx.moveTo(x + 2, by + 22);
    ctx.lineTo(x - 4, by + 30);
    ctx.lineTo(x + 10, by + 22);
    ctx.stroke();
    ctx.fillStyle = '#0f172a';
    ctx.fillText(t, bx + 8, by + 15);
  }
}

/** The floor ring under a character: its colour is the status; `pulse` (0..1) swells it. */
function drawRing(ctx: CanvasRenderingContext2D, x: number, y: number, status: Agent['status'], pulse: number, alpha: number): void {
  const col = STATUS_COLOR[status];
  ctx.fillStyle = col;
  ctx.globalAlpha = alpha * (0.22 + 0.25 * pulse);
  ctx.beginPath();
  ctx.ellipse(x, y, 24 + pulse * 5, 7 + pulse * 1.5, 0, 0, Math.PI * 2);
  ctx.fill();
  ctx.globalAlpha = alpha * (status === 'offline' ? 0.55 : 1);
  ctx.strokeStyle = col;
  ctx.lineWidth = status === 'waiting' || status === 'error' ? 3 : 2;
  if (status === 'offline') ctx.setLineDash([4, 3]);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
}

function drawPaperPlane(ctx: CanvasRenderingContext2D, x: number, y: number, angle: number, brief: boolean): void {
  ctx.save();
  ctx.translate(x, y);
  ctx.rotate(angle);
  const s = brief ? 1.9 : 1.45;
  ctx.scale(s, s);
  ctx.fillStyle = brief ? '#dbeafe' : '#ffffff';
  ctx.strokeStyle = brief ? '#1e3a8a' : '#334155';
  ctx.lineWidth = 1.3;
  ctx.beginPath();
  ctx.moveTo(11, 0);
  ctx.lineTo(-9, -7);
  ctx.lineTo(-4, 0);
  ctx.lineTo(-9, 7);
  ctx.closePath();
  ctx.fill();
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(11, 0);
  ctx.lineTo(-4, 0);
  ctx.stroke();
  ctx.restore();
}

function boardWidth(r: Room): number {
  return Math.min(220, Math.max(120, r.w * 0.46));
}

export function roundRect(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number, r: number): void {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, r);
}

const fitCache = new Map<string, string>();

/** `text` cut with an ellipsis to `max` px in the current font (memoized: measuring is the costly part). */
export function fitText(ctx: CanvasRenderingContext2D, text: string, max: number): string {
  const key = ctx.font + '\u0000' + max + '\u0000' + text;
  const hit = fitCache.get(key);
  if (hit !== undefined) return hit;
  let out = text;
  if (ctx.measureText(text).width > max) {
    let lo = 0,
      hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= max) lo = mid;
      else hi = mid - 1;
    }
    out = text.slice(0, lo).trimEnd() + '…';
  }
  if (fitCache.size > 4000) fitCache.clear();
  fitCache.set(key, out);
  return out;
}

const wrapCache = new Map<string, [string, string]>();

/** Up to two lines of `text` within `max` px (memoized like fitText). */
function wrap2(ctx: CanvasRenderingContext2D, text: string, max: number): [string, string] {
  const key = ctx.font + '\u0000' + max + '\u0000' + text;
  let hit = wrapCache.get(key);
  if (!hit) {
    hit = wrapUncached(ctx, text, max);
    if (wrapCache.size > 4000) wrapCache.clear();
    wrapCache.set(key, hit);
  }
  return hit;
}

function wrapUncached(ctx: CanvasRenderingContext2D, text: string, max: number): [string, string] {
  if (ctx.measureText(text).width <= max) return [text, ''];
  const words = text.split(/\s+/);
  let first = '';
  let i = 0;
  for (; i < words.length; i++) {
    const next = first ? first + ' ' + words[i] : words[i];
    if (ctx.measureText(next).width > max) break;
    first = next;
  }
  if (!first) return [fitText(ctx, text, max), ''];
  return [first, fitText(ctx, words.slice(i).join(' '), max)];
}
