// What each thing on the floor looks like, painted on a 2D canvas context in
// world units: the rooms (walls, door, name, whiteboard, attention halo), a
// desk cell (monitor, desk, name tag), the characters in their poses, rings,
// paper planes and speech bubbles. Where things are is layout.ts's; when
// they are painted (sprites cached, dirty boxes) is scene.ts's.

import type { Shown } from '../../../src/core/attention.js';
import type { Agent } from '../../../src/core/floor.js';
import { CELL_H, CELL_W, PAD, boardWidth, cellOf, doorOf, ease, planeArc, type Room } from './layout.js';
import { NAME_FONT_PX } from './camera.js';
import { SHOWN_COLOR, STATUS_BADGE, STATUS_COLOR, faceOf, floorColor, poseOf, shirtColor } from './look.js';

/** A character sprite's box around its anchor (the middle of the torso). */
export const CHAR_W = 76;
export const CHAR_H = 92;
export const CHAR_AX = 38;
export const CHAR_AY = 58;

// ------------------------------------------------------------ rooms

/** The floor of the building and every room's shell (shadow, floor, walls, door, name, the lead's rug): the scene's background layer. */
export function paintRooms(g: CanvasRenderingContext2D, rooms: Iterable<Room>): void {
  for (const r of rooms) {
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
    const d = doorOf(r);
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
      const c = cellOf(r, 0);
      roundRect(g, c.x - 6, c.y + 2, CELL_W + 12, CELL_H - 6, 16);
      g.fill();
    }
  }
}

/** What changes on a room: the attention halo (`halo`) and the whiteboard with its task (`board`; `flash`: just updated). */
export function paintRoomLive(ctx: CanvasRenderingContext2D, r: Room, flash: boolean, halo = true, board = true): void {
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

// ------------------------------------------------------------ desks and characters

/**
 * A desk cell, in world units (the caller scales): the monitor (its tool in the
 * title bar, its activity as lines of text, a tick when done, the error in red),
 * the desk, and the name tag with the activity or role below it.
 */
export function paintDesk(g: CanvasRenderingContext2D, a: Agent, look: Shown = a.status): void {
  const cx = CELL_W / 2;
  // Quiet: the screen of an idle agent (its last activity, dimmed); in its terminal: a waiting one's.
  const status = poseOf(look);
  const col = SHOWN_COLOR[look];
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
    g.fillText(fitText(g, look === 'quiet' ? 'quiet' : look === 'terminal' ? 'in its terminal' : a.tool || status, mw - 6), mx + 3, my + 6);
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
  // Name tag: NAME_FONT_PX, which the default view keeps readable (camera.ts).
  const ty = 131;
  g.font = `700 ${NAME_FONT_PX}px system-ui, -apple-system, "Segoe UI", sans-serif`;
  const name = fitText(g, a.name, CELL_W - 12);
  const nw = Math.min(CELL_W - 2, g.measureText(name).width + 12);
  const attention = status === 'waiting' || status === 'error';
  g.fillStyle = attention ? col : '#ffffff';
  g.strokeStyle = attention ? col : 'rgba(0,0,0,0.18)';
  g.lineWidth = 1;
  roundRect(g, cx - nw / 2, ty - 13, nw, 18, 8);
  g.fill();
  g.stroke();
  g.fillStyle = attention ? '#ffffff' : '#111827';
  g.textAlign = 'center';
  g.fillText(name, cx, ty);
  g.font = '9.5px system-ui, -apple-system, "Segoe UI", sans-serif';
  g.fillStyle = attention ? col : '#4b5563';
  const sub = a.activity || (a.role ? a.role : '');
  g.fillText(fitText(g, sub, CELL_W - 6), cx, ty + 15.5);
  g.textAlign = 'left';
}

/**
 * A desk cell far zoomed out (names too small to read, camera.ts LOD_NAME_PX):
 * one token per agent instead of the desk, monitor, name tag and character: a
 * tile outlined in the colour of what it shows and a disc of that colour where
 * the character sits (a heavier ring when it needs a person, dimmed when
 * offline or quiet). World units, like paintDesk.
 */
export function paintToken(g: CanvasRenderingContext2D, look: Shown): void {
  const col = SHOWN_COLOR[look];
  const status = poseOf(look);
  const dim = status === 'offline' || status === 'idle';
  const urgent = status === 'waiting' || status === 'error';
  g.globalAlpha = dim ? 0.6 : 1;
  g.fillStyle = '#ffffff';
  roundRect(g, 12, 10, CELL_W - 24, CELL_H - 20, 18);
  g.fill();
  g.strokeStyle = col;
  g.lineWidth = urgent ? 14 : 7;
  g.stroke();
  g.fillStyle = col;
  g.beginPath();
  g.arc(CELL_W / 2, CELL_H / 2, urgent ? 36 : 30, 0, Math.PI * 2);
  g.fill();
  g.globalAlpha = 1;
}

/** A seated character as a sprite (its anchor at CHAR_AX, CHAR_AY): ring (unless it pulses, drawn live) and pose. */
export function paintCharacterSprite(g: CanvasRenderingContext2D, a: Agent, now: number, withRing: boolean, calm: boolean, look: Shown = a.status): void {
  if (withRing) drawRing(g, CHAR_AX, CHAR_AY + 22, look, 0, 1);
  drawCharacter(g, CHAR_AX, CHAR_AY, false, 1, a, now, calm, look);
}

/** A character of `a` around its anchor (x, y). `now` only sets the phase of its little animations; `calm` (reduced motion) stills them. */
export function drawCharacter(ctx: CanvasRenderingContext2D, x0: number, y0: number, walking: boolean, alpha: number, a: Agent, now: number, calm: boolean, look: Shown = a.status): void {
  const status = poseOf(look);
  const col = SHOWN_COLOR[look];
  const standing = walking || status === 'waiting';
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
  const badge = STATUS_BADGE[look];
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

/** The floor ring under a character: its colour is the status; `pulse` (0..1) swells it. */
export function drawRing(ctx: CanvasRenderingContext2D, x: number, y: number, status: Shown, pulse: number, alpha: number): void {
  const col = SHOWN_COLOR[status];
  ctx.fillStyle = col;
  ctx.globalAlpha = alpha * (0.22 + 0.25 * pulse);
  ctx.beginPath();
  ctx.ellipse(x, y, 24 + pulse * 5, 7 + pulse * 1.5, 0, 0, Math.PI * 2);
  ctx.fill();
  ctx.globalAlpha = alpha * (status === 'offline' ? 0.55 : 1);
  ctx.strokeStyle = col;
  ctx.lineWidth = status === 'waiting' || status === 'error' || status === 'terminal' ? 3 : 2;
  if (status === 'offline') ctx.setLineDash([4, 3]);
  else if (status === 'quiet') ctx.setLineDash([2, 3]);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
}

export function drawPaperPlane(ctx: CanvasRenderingContext2D, x: number, y: number, angle: number, brief: boolean): void {
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

// ------------------------------------------------------------ what flies

/**
 * A paper plane `k` (0..1) of the way along its flight, with a short dashed
 * trail; `calm` (reduced motion): no flight, a quiet dotted line and a folded
 * note at the recipient.
 */
export function drawPlane(ctx: CanvasRenderingContext2D, p: { fx: number; fy: number; tx: number; ty: number; brief: boolean }, k: number, calm: boolean): void {
  if (calm) {
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
  const arc = planeArc(p);
  const e = ease(k);
  const { x, y } = arc.at(e);
  // A short dashed trail.
  ctx.strokeStyle = p.brief ? 'rgba(30,58,138,0.35)' : 'rgba(71,85,105,0.3)';
  ctx.lineWidth = 1.5;
  ctx.setLineDash([4, 5]);
  ctx.beginPath();
  const t0 = arc.at(Math.max(0, e - 0.25));
  ctx.moveTo(t0.x, t0.y);
  ctx.quadraticCurveTo((t0.x + x) / 2, (t0.y + y) / 2 - 4, x, y);
  ctx.stroke();
  ctx.setLineDash([]);
  drawPaperPlane(ctx, x, y, arc.angle(e), p.brief);
}

/** A speech bubble whose tail points at (x, y). */
export function drawSpeech(ctx: CanvasRenderingContext2D, x: number, y: number, text: string): void {
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

// ------------------------------------------------------------ text

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
export function wrap2(ctx: CanvasRenderingContext2D, text: string, max: number): [string, string] {
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
