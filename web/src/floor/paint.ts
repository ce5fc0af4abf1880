// The floor's pixels: the background layer (the building floor and the
// rooms), the sprites kept per agent (its desk, monitor and name tag; its
// seated character in a few animation frames) and per look (the token drawn
// far out), and one dirty box repainted from the background up. What each
// thing looks like is sprites.ts; which boxes to repaint, and when, is
// scene.ts.

import type { Shown } from '../../../src/core/attention.js';
import type { Agent, FloorState } from '../../../src/core/floor.js';
import { SHOWN_COLOR } from './look.js';
import { CELL_H, CELL_W, boardRect, speechRect, type Rect, type Room } from './layout.js';
import { CHAR_AX, CHAR_AY, CHAR_H, CHAR_W, drawCharacter, drawPlane, drawRing, drawSpeech, paintCharacterSprite, paintDesk, paintRoomLive, paintRooms, paintToken, roundRect } from './sprites.js';
import { PLANE_MS, isWalking, type FloorMotion, type Plane, type View } from './motion.js';

/** Seated animations (typing, waving, thought dots) loop once a second in this many cached frames. */
export const ANIM_FRAMES = 2;
export const ANIM_STEP_MS = 1000 / ANIM_FRAMES;

/** Where the world is on the canvas: CSS px per world unit, the offset in CSS px, device px per CSS px. */
export interface Placement {
  scale: number;
  offX: number;
  offY: number;
  dpr: number;
}

/** Everything one frame's boxes are painted from (made once per frame by the scene). */
export interface BoxFrame extends Placement {
  canvas: HTMLCanvasElement;
  /** The background layer (paintBackground), at the canvas's size. */
  bg: HTMLCanvasElement;
  /** Device px per world unit (scale × dpr). */
  k: number;
  rooms: ReadonlyMap<string, Room>;
  motion: FloorMotion;
  /** The views on screen this frame (what a dirty box is tested against, not all of them). */
  visible: readonly View[];
  /** Zoomed out past readable names: tokens, no desks, characters, bubbles or planes. */
  compact: boolean;
  selected: string | null;
  focused: string | null;
  /** This frame's box of each plane in flight (same order as `motion.planes`). */
  planeBoxes: readonly Rect[];
  s: FloorState;
  now: number;
}

/** Repaints one box (world units) completely: background, rooms, desks, characters, overlays. */
export function paintBox(ctx: CanvasRenderingContext2D, rect: Rect, f: BoxFrame): void {
  const { s, now, k, motion } = f;
  const W = f.canvas.width;
  const H = f.canvas.height;
  const x0 = Math.max(0, Math.floor((f.offX + rect.x * f.scale) * f.dpr) - 1);
  const y0 = Math.max(0, Math.floor((f.offY + rect.y * f.scale) * f.dpr) - 1);
  const x1 = Math.min(W, Math.ceil((f.offX + (rect.x + rect.w) * f.scale) * f.dpr) + 1);
  const y1 = Math.min(H, Math.ceil((f.offY + (rect.y + rect.h) * f.scale) * f.dpr) + 1);
  if (x1 <= x0 || y1 <= y0) return;
  const hit = (x: number, y: number, w: number, h: number) => x < rect.x + rect.w + 2 && x + w > rect.x - 2 && y < rect.y + rect.h + 2 && y + h > rect.y - 2;
  const world = () => ctx.setTransform(k, 0, 0, k, f.dpr * f.offX, f.dpr * f.offY);
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.beginPath();
  ctx.rect(x0, y0, x1 - x0, y1 - y0);
  ctx.clip();
  ctx.drawImage(f.bg, x0, y0, x1 - x0, y1 - y0, x0, y0, x1 - x0, y1 - y0);
  world();
  for (const r of f.rooms.values()) {
    if (!hit(r.x - 14, r.y - 14, r.w + 28, r.h + 28)) continue;
    // Most boxes are a desk cell well inside the room: no halo, no whiteboard there.
    const inside = rect.x > r.x + 4 && rect.y > r.y + 4 && rect.x + rect.w < r.x + r.w - 4 && rect.y + rect.h < r.y + r.h - 4;
    const b = boardRect(r);
    const board = hit(b.x, b.y, b.w, b.h);
    if (board || !inside) paintRoomLive(ctx, r, motion.boardFlash.has(r.team.id), !inside, board);
  }
  // Desks, monitors and name tags: sprites blitted at whole device pixels (a copy, not a resample).
  // Only the views on screen this frame (draw() lists them): most boxes are one cell, and a floor has hundreds.
  const visible = f.visible;
  const compact = f.compact;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  for (const v of visible) {
    const c = v.cell;
    const img = compact ? (isWalking(v) ? null : v.token) : v.sprite;
    if (!c || v.hidden || !img || !v.agent || !hit(c.x, c.y, CELL_W, CELL_H)) continue;
    if (v.phase === 'removing') ctx.globalAlpha = v.alpha;
    const dx = Math.round((f.offX + c.x * f.scale) * f.dpr);
    const dy = Math.round((f.offY + c.y * f.scale) * f.dpr);
    // A sprite of another scale (not rebuilt yet after a resize) is stretched into the cell, never beyond it.
    if (compact || v.spriteScale === k) ctx.drawImage(img, dx, dy);
    else ctx.drawImage(img, dx, dy, Math.ceil(CELL_W * k), Math.ceil(CELL_H * k));
    ctx.globalAlpha = 1;
  }
  world();
  for (const v of visible) {
    const c = v.cell;
    if (!c || v.hidden || (v.id !== f.selected && v.id !== f.focused) || !hit(c.x, c.y, CELL_W, CELL_H)) continue;
    ctx.strokeStyle = v.id === f.selected ? '#2563eb' : '#1d4ed8';
    // At least 2 CSS px wide, however far out.
    ctx.lineWidth = Math.max(3, 2 / f.scale);
    ctx.setLineDash(v.id === f.selected ? [] : [6, 4]);
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
      const pulse = pulsing && !motion.reducedMotion && v.phase !== 'removing' ? 0.5 + 0.5 * Math.sin(now / 220) : 0;
      drawRing(ctx, v.x, v.y + 22, v.look, pulse, v.alpha);
    }
    if (v.char) {
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.globalAlpha = v.alpha;
      ctx.drawImage(v.char, Math.round((f.offX + (v.x - CHAR_AX) * f.scale) * f.dpr), Math.round((f.offY + (v.y - CHAR_AY) * f.scale) * f.dpr));
      ctx.globalAlpha = 1;
    } else {
      world();
      if (!walking && !pulsing) drawRing(ctx, v.x, v.y + 22, v.look, 0, v.alpha);
      drawCharacter(ctx, v.x, v.y, walking, v.alpha, a, now, motion.reducedMotion, v.look);
    }
  }
  world();
  for (let i = 0; i < motion.planes.length; i++) {
    const b = f.planeBoxes[i];
    const p = motion.planes[i];
    if (motion.views.get(p.from)?.hidden || motion.views.get(p.to)?.hidden) continue;
    if (hit(b.x, b.y, b.w, b.h)) paintPlane(ctx, p, motion, s, now);
  }
  for (const [id, sp] of motion.speech) {
    const v = motion.views.get(id);
    if (!v || v.hidden || v.alpha <= 0.1) continue;
    const b = speechRect(v.x, v.y - 58);
    if (hit(b.x, b.y, b.w, b.h)) drawSpeech(ctx, v.x, v.y - 58, sp.text);
  }
  ctx.restore();
}

/** A plane in flight, from where its ends are now. */
function paintPlane(ctx: CanvasRenderingContext2D, p: Plane, motion: FloorMotion, s: FloorState, now: number): void {
  motion.endsOf(p, s);
  drawPlane(ctx, p, Math.min(1, (now - p.t0) / PLANE_MS), motion.reducedMotion);
}

/** The background layer: the building floor's tiles and the rooms, at `at`, the canvas's size. */
export function paintBackground(bg: HTMLCanvasElement, canvas: HTMLCanvasElement, at: Placement, rooms: ReadonlyMap<string, Room>): void {
  bg.width = canvas.width;
  bg.height = canvas.height;
  const g = bg.getContext('2d')!;
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.fillStyle = '#d9d4cb';
  g.fillRect(0, 0, bg.width, bg.height);
  // A faint tile grid on the building floor.
  g.strokeStyle = 'rgba(0,0,0,0.035)';
  g.lineWidth = 1;
  const step = 40 * at.scale * at.dpr;
  if (step > 6) {
    g.beginPath();
    for (let x = (at.offX * at.dpr) % step; x < bg.width; x += step) {
      g.moveTo(x, 0);
      g.lineTo(x, bg.height);
    }
    for (let y = (at.offY * at.dpr) % step; y < bg.height; y += step) {
      g.moveTo(0, y);
      g.lineTo(bg.width, y);
    }
    g.stroke();
  }
  g.setTransform(at.dpr * at.scale, 0, 0, at.dpr * at.scale, at.dpr * at.offX, at.dpr * at.offY);
  paintRooms(g, rooms.values());
}

/** The token of a look at device scale `k` (one per look, shared by every agent). */
export function tokenSprite(look: Shown, k: number): HTMLCanvasElement {
  const c = document.createElement('canvas');
  c.width = Math.max(1, Math.ceil(CELL_W * k));
  c.height = Math.max(1, Math.ceil(CELL_H * k));
  const g = c.getContext('2d')!;
  g.setTransform(k, 0, 0, k, 0, 0);
  paintToken(g, look);
  return c;
}

/** Paints an agent's desk, monitor and name tag into its view's sprite (made on first use, its context kept). */
export function paintDeskSprite(v: View, a: Agent, scale: number, look: Shown): void {
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

/** One frame of a seated character, at device scale `k`. */
export function characterSprite(a: Agent, frame: number, k: number, withRing: boolean, look: Shown, reducedMotion: boolean): HTMLCanvasElement {
  const c = document.createElement('canvas');
  c.width = Math.max(1, Math.ceil(CHAR_W * k));
  c.height = Math.max(1, Math.ceil(CHAR_H * k));
  const g = c.getContext('2d')!;
  g.setTransform(k, 0, 0, k, 0, 0);
  paintCharacterSprite(g, a, frame * ANIM_STEP_MS, withRing, reducedMotion, look);
  return c;
}
