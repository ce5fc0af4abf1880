// `window.__roost`: the floor page's read-only window for tests and the bench.
// The one declaration of its shape: the browser tests and bench/browser.ts
// import this module's types (`import type {} from`), so what they read from
// the page is checked against what the page sets (FloorView.tsx).

import type { FloorState } from '../../../src/core/floor.js';
import type { FloorClient } from '../live/floor.js';
import type { FloorScene } from './scene.js';

declare global {
  interface Window {
    __roost?: RoostHook;
  }
}

/** A read-only window for tests and the bench: what the page folded and drew. */
export interface RoostHook {
  client: FloorClient;
  scene: FloorScene;
  readonly state: FloorState;
  /** Canvas-relative position of an agent's character, in CSS pixels, plus the canvas's page offset. */
  where(id: string, part?: 'body' | 'ring'): { x: number; y: number } | null;
  /** Called after each drawn frame with the events it folded (the bench times POST → drawn with it). */
  afterDraw: ((events: { ts?: unknown; activity?: unknown }[], at: number) => void) | null;
  /** Per-frame work (fold + draw) in ms, a ring of the last 4096 frames. */
  frameWork: Float64Array;
  frameCount: number;
  /** The same, for the frames that drew (the others only folded). */
  drawWork: Float64Array;
  drawCount: number;
}
