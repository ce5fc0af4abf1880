// The floor's animation state: where each character is on its way to or from
// its desk, the planes in flight, the speech bubbles and the whiteboard
// flashes. Nothing here decides what is true about an agent (status, desk,
// team are read from the fold); it decides only where things are on the way
// there, and which boxes of the canvas must be repainted when a thing that
// stands still (a bubble, a character that left) appears or goes.
//
// Drawn by scene.ts (which boxes, when) and paint.ts (the pixels).

import type { Shown } from '../../../src/core/attention.js';
import type { Agent, Effect, FloorState } from '../../../src/core/floor.js';
import { CELL_H, CELL_W, bbox, doorOf, ease, planeArc, seatIn, speechRect, type Rect, type Room } from './layout.js';

const WALK_MS = 1100;
const FADE_MS = 600;
export const PLANE_MS = 1300;
const SPEECH_MS = 4500;
const BOARD_FLASH_MS = 1600;
const MAX_PLANES = 24;
/** Bubbles on screen at once (the newest win): more is noise, not information. */
const MAX_SPEECH = 16;

/** On its way in, or on its way out and still visible. */
export const isWalking = (v: { phase: string; alpha: number }) => v.phase === 'in' || (v.phase === 'out' && v.alpha > 0.01);

export interface View {
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

export interface Plane {
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

/** The views, planes, bubbles and flashes of one floor, moved by the fold's effects and by time. */
export class FloorMotion {
  views = new Map<string, View>();
  planes: Plane[] = [];
  speech = new Map<string, { text: string; until: number }>();
  boardFlash = new Map<string, number>();
  reducedMotion = false;
  /** Boxes to repaint next frame (cells of views that went away, bubbles that came or went). */
  pendingRects: Rect[] = [];

  constructor(
    /** The scene's rooms (the same Map, laid out by the scene). */
    private rooms: Map<string, Room>,
    private counters: SceneCounters,
  ) {}

  /** Forgets every view, plane, bubble and flash. */
  clear(): void {
    this.views.clear();
    this.planes.length = 0;
    this.speech.clear();
    this.boardFlash.clear();
  }

  /** Where the character of `a` sits (its anchor: the middle of its torso). */
  deskAnchor(a: Agent): { x: number; y: number } | null {
    return seatIn(this.rooms, a);
  }

  newView(a: Agent, s: FloorState, phase: View['phase'], now: number): View {
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

  /** Moves the views by the fold's effects (the rooms laid out already); returns true when one was a reset (everything repaints). */
  apply(effects: Effect[], s: FloorState, now: number): boolean {
    let reset = false;
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
          reset = true;
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
    return reset;
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

  endsOf(p: Plane, s: FloorState): void {
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

  /** Advances animations; returns true when something moves (so the next frame must draw). */
  step(s: FloorState, now: number): boolean {
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

  /** The box a plane covers this frame (its trail included). */
  planeRect(p: Plane, s: FloorState, now: number): Rect {
    this.endsOf(p, s);
    if (this.reducedMotion) return bbox(p.fx, p.fy, p.tx, p.ty, 26);
    const arc = planeArc(p);
    const e = ease(Math.min(1, (now - p.t0) / PLANE_MS));
    const a = arc.at(Math.max(0, e - 0.25));
    const b = arc.at(e);
    return bbox(a.x, a.y, b.x, b.y, 28);
  }
}
