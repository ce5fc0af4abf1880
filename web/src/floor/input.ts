// Zoom and pan by hand on the floor's canvas: the wheel (and a trackpad's
// pinch, which Chromium and Safari send as a wheel with ctrlKey) zooms around
// the pointer; a drag pans; two fingers pinch-zoom and pan together. A press
// that did not move is a click (the page's own click handler selects), one
// that panned is not. The keys are FloorView's (onCanvasKey).

import type { FloorScene } from './scene.js';

/** How far a press may move and still be a click, CSS px. */
const SLOP = 5;

export interface FloorInput {
  /** True once, right after a press that panned or pinched (its click is not a selection). */
  swallowClick(): boolean;
  detach(): void;
}

export function attachFloorInput(canvas: HTMLCanvasElement, scene: FloorScene): FloorInput {
  const pointers = new Map<number, { x: number; y: number }>();
  let moved = false;
  let swallow = false;
  let start: { x: number; y: number } | null = null;
  const local = (e: { clientX: number; clientY: number }) => {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };

  const onWheel = (e: WheelEvent) => {
    e.preventDefault();
    const p = local(e);
    const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
    // A pinch sends small deltas with ctrlKey; a mouse wheel's notch is about 100.
    const k = e.ctrlKey ? 0.01 : 0.0015;
    const dy = Math.max(-300, Math.min(300, e.deltaY * unit));
    if (dy !== 0) scene.zoomBy(Math.exp(-dy * k), p.x, p.y);
  };
  const onDown = (e: PointerEvent) => {
    if (e.button !== 0 && e.pointerType === 'mouse') return;
    pointers.set(e.pointerId, local(e));
    if (pointers.size === 1) {
      moved = false;
      start = local(e);
    } else moved = true; // a second finger: a pinch, never a click
  };
  const onMove = (e: PointerEvent) => {
    const prev = pointers.get(e.pointerId);
    if (!prev) return;
    const p = local(e);
    if (pointers.size === 1) {
      if (!moved && start && Math.hypot(p.x - start.x, p.y - start.y) < SLOP) return;
      if (!moved) canvas.setPointerCapture?.(e.pointerId);
      moved = true;
      scene.panBy(p.x - prev.x, p.y - prev.y);
    } else if (pointers.size === 2) {
      const [a, b] = [...pointers.entries()].map(([id, q]) => (id === e.pointerId ? p : q));
      const [pa, pb] = [...pointers.values()];
      const d0 = Math.hypot(pa.x - pb.x, pa.y - pb.y);
      const d1 = Math.hypot(a.x - b.x, a.y - b.y);
      const mid0 = { x: (pa.x + pb.x) / 2, y: (pa.y + pb.y) / 2 };
      const mid1 = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
      if (d0 > 0 && d1 > 0) scene.zoomBy(d1 / d0, mid1.x, mid1.y);
      scene.panBy(mid1.x - mid0.x, mid1.y - mid0.y);
    }
    pointers.set(e.pointerId, p);
  };
  const onUp = (e: PointerEvent) => {
    if (!pointers.delete(e.pointerId)) return;
    if (pointers.size === 0) {
      swallow = moved;
      start = null;
    }
  };
  canvas.addEventListener('wheel', onWheel, { passive: false });
  canvas.addEventListener('pointerdown', onDown);
  canvas.addEventListener('pointermove', onMove);
  canvas.addEventListener('pointerup', onUp);
  canvas.addEventListener('pointercancel', onUp);
  return {
    swallowClick() {
      const s = swallow;
      swallow = false;
      return s;
    },
    detach() {
      canvas.removeEventListener('wheel', onWheel);
      canvas.removeEventListener('pointerdown', onDown);
      canvas.removeEventListener('pointermove', onMove);
      canvas.removeEventListener('pointerup', onUp);
      canvas.removeEventListener('pointercancel', onUp);
    },
  };
}
