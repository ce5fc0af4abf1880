// The flock driver's pace (docs/flock.md, "Pacing"): the driver is background
// work on the event loop that also answers requests. Each step of the driver
// (a pass's step, a landing) asks for a turn first:
//
// - front: no other requests are being served, or the loop has room: every
//   turn is granted at once (no promise, no timer; what a lone flock costs);
// - back: requests other than the flock's own came in while the loop was
//   nearly full (event-loop utilisation over a window): turns wait in order
//   and are handed out on a tick, `allowance` per tick, at least `floor`
//   (the flock always moves, however busy the requests keep the loop). The
//   allowance doubles while the loop has room and halves while it is full;
//   once the requests stop, or the allowance grows past `frontAt`, every
//   waiting turn is granted and the pace is front again.
//
// What counts as a request: every HTTP request this process serves
// (`http.server.request.start`, node:diagnostics_channel), but the flock's
// own (a list, its stream, a verdict: the flock's, not the requests it must
// yield to): the routes the mounted table marks `flock` (Route.flock, set on
// every route of the flock's table), so a new flock route is classified where
// it is declared, and no list of paths here can go stale.

import dc from 'node:diagnostics_channel';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** What the pacer reads of a route (src/server/route.ts's Route). */
export interface PacedRoute {
  method: string;
  path: string;
  flock?: true;
}

/** The flock's own routes, as mounted: exact `METHOD path`s, and those with `:name` segments (prefix before the first). */
let ownExact = new Set<string>();
let ownPatterns: { method: string; prefix: string; parts: string[] }[] = [];

/** Takes the flock's own routes from the mounted route table (app.ts); every other request is counted. */
export function paceOwnRoutes(routes: readonly PacedRoute[]): void {
  const exact = new Set<string>();
  const patterns: typeof ownPatterns = [];
  for (const r of routes) {
    if (!r.flock) continue;
    const at = r.path.indexOf('/:');
    if (at < 0) exact.add(`${r.method} ${r.path}`);
    else patterns.push({ method: r.method, prefix: r.path.slice(0, at + 1), parts: r.path.split('/') });
  }
  ownExact = exact;
  ownPatterns = patterns;
}

/** Whether a request (method, target) is one of the flock's own routes. */
export function flockOwn(method: string, target: string): boolean {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const m = method === 'HEAD' ? 'GET' : method;
  if (ownExact.has(`${m} ${path}`)) return true;
  for (const p of ownPatterns) {
    if (p.method !== m || !path.startsWith(p.prefix)) continue;
    const segs = path.split('/');
    if (segs.length === p.parts.length && p.parts.every((want, i) => (want.startsWith(':') ? segs[i] !== '' : want === segs[i]))) return true;
  }
  return false;
}

/** Requests served by this process, but the flock's own (counted once for every pacer). */
let otherRequests = 0;
let listening = false;

function heard(message: unknown): void {
  const req = (message as { request?: { method?: string; url?: string } }).request;
  if (flockOwn(req?.method ?? 'GET', req?.url ?? '')) return;
  otherRequests++;
}

function listen(): void {
  if (listening) return;
  listening = true;
  dc.subscribe('http.server.request.start', heard);
}

export interface PaceSignals {
  /** Milliseconds, monotonic. */
  now(): number;
  /** The event loop's utilisation (0–1) since the last call. */
  utilisation(): number;
  /** Requests other than the flock's since the last call. */
  requests(): number;
}

/** The process's own signals: performance.now, eventLoopUtilization, the HTTP requests it serves. */
export function processSignals(): PaceSignals {
  listen();
  let elu: EventLoopUtilization = performance.eventLoopUtilization();
  let seen = otherRequests;
  return {
    now: () => performance.now(),
    utilisation() {
      const next = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(next, elu).utilization;
      elu = next;
      return u;
    },
    requests() {
      const n = otherRequests - seen;
      seen = otherRequests;
      return n;
    },
  };
}

export interface PaceSettings {
  /** How often the front pace looks at the loop, and the back pace's tick (ms). */
  windowMs: number;
  /** Utilisation at or above which requests are being held up (back: halve; front: go back). */
  busy: number;
  /** Utilisation below which the loop has room (back: double). */
  room: number;
  /** Requests in a window that make the flock yield (with the loop busy). */
  requests: number;
  /** Turns per tick, at least, in back (the flock's floor). */
  floor: number;
  /** An allowance this large is the front pace again. */
  frontAt: number;
}

export const PACE_DEFAULTS: PaceSettings = { windowMs: 50, busy: 0.9, room: 0.75, requests: 2, floor: 1, frontAt: 64 };

// Measured: unpaced, an instant-model flock took three quarters of the loop from floor ingest beside it; paced, ingest keeps 97.9% of its rate with 20 lists of 50 in flight (docs/flock.md, "Pacing").
export class Pacer {
  private waiting: (() => void)[] = [];
  private back = false;
  private allowance = 0;
  private lastLook: number;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** For the bench and the docs: turns that waited, and windows spent in back. */
  readonly stats = { waited: 0, backWindows: 0 };

  constructor(
    private signals: PaceSignals = processSignals(),
    private settings: PaceSettings = PACE_DEFAULTS,
  ) {
    this.lastLook = signals.now();
  }

  get inBack(): boolean {
    return this.back;
  }

  /** A driver step's turn: undefined when it may go now, else a promise that resolves when it may. */
  turn(): Promise<void> | undefined {
    if (this.stopped) return undefined;
    if (!this.back) {
      const now = this.signals.now();
      if (now - this.lastLook < this.settings.windowMs) return undefined;
      this.lastLook = now;
      const u = this.signals.utilisation();
      const r = this.signals.requests();
      if (r < this.settings.requests || u < this.settings.busy) return undefined;
      this.back = true;
      this.allowance = this.settings.floor;
      // Not unref'd: steps wait on it (a stop or the front pace clears it).
      this.timer = setInterval(this.tick, this.settings.windowMs);
    }
    this.stats.waited++;
    return new Promise((ok) => this.waiting.push(ok));
  }

  private tick = (): void => {
    this.stats.backWindows++;
    const u = this.signals.utilisation();
    const r = this.signals.requests();
    const s = this.settings;
    if (r < s.requests) return this.front();
    if (u >= s.busy) this.allowance = Math.max(s.floor, Math.floor(this.allowance / 2));
    else if (u < s.room) this.allowance *= 2;
    if (this.allowance >= s.frontAt) return this.front();
    for (let i = 0; i < this.allowance && this.waiting.length; i++) this.waiting.shift()!();
  };

  private front(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.back = false;
    this.lastLook = this.signals.now();
    const w = this.waiting;
    this.waiting = [];
    for (const ok of w) ok();
  }

  /** Grants every waiting turn and every later one (the service is stopping). */
  stop(): void {
    this.stopped = true;
    this.front();
  }
}
