// Rewind: a folded stream's state as it was at a past position or time
// (docs/floor.md, "Rewind"), for the floor's and the boards' time sliders.
//
// The state is folded by the app's own pure fold, on a private state, from
// the nearest stored snapshot at or before the position (the floor and the
// boards keep every snapshot they store: `stored.history`), then forward
// over the log up to the position. Nothing here touches the live state, and
// nothing is appended: a rewind is read-only.
//
// Bounded per request: a time is turned into a position by bisection over
// the log's append times (at most ~log2(head) reads of one entry); the fold
// reads at most REWIND_LIMITS.maxFold entries past its snapshot (a log
// stored before snapshots were kept has none to start near: 409), and at
// most REWIND_LIMITS.inFlight rewinds run at once per process (503 past it).

import type { EventStore, LogEntry } from '../storage/types.js';
import { HttpError } from './http.js';

/**
 * The floor keeps a snapshot at least every this many events (fewer when
 * the server's `snapshotEvery` is smaller): a rewind folds at most this many
 * past its snapshot. Chosen from bench/rewind.ts (docs/floor.md, "Rewind").
 */
export const FLOOR_REWIND_EVERY = 2_500;

export const REWIND_LIMITS = {
  /** Entries one rewind folds past its snapshot, at most. */
  maxFold: 50_000,
  /** Rewinds folding at once in this process, at most. */
  inFlight: 4,
  /** Entries read per read. */
  readBatch: 5_000,
} as const;

/** What a rewind asks for: a position, or a time (ms) turned into the last position appended at or before it. */
export type RewindAt = { position: number } | { time: number };

/**
 * Reads `?at=`: digits are a position, else an ISO date or date-time
 * (`2026-12-05`, `2026-12-05T14:02Z`, ...). 400 for what is neither.
 */
export function parseRewindAt(raw: string | null): RewindAt {
  if (raw === null || raw === '') throw new HttpError(400, 'bad_request', 'at: a position (digits) or an ISO time is required');
  if (raw.length > 64) throw new HttpError(400, 'bad_request', 'at: at most 64 characters');
  if (/^\d+$/.test(raw)) {
    const position = Number(raw);
    if (!Number.isSafeInteger(position)) throw new HttpError(400, 'bad_request', 'at: position out of range');
    return { position };
  }
  const time = /^\d{4}-\d{2}-\d{2}([T ]|$)/.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isFinite(time)) throw new HttpError(400, 'bad_request', 'at: neither a position nor a time');
  return { time };
}

/** How a rewind folds one stream: the app's empty state, its stored snapshot's loader and its pure fold step. */
export interface RewindSpec<S> {
  stream: string;
  empty(): S;
  load(text: string): { state: S; position: number };
  step(state: S, entry: LogEntry): S;
}

export interface Rewound<S> {
  state: S;
  /** The position folded up to (the entry shown last; 0: before the first). */
  position: number;
  /** That entry's append time, ms (null at position 0). */
  at: number | null;
  /** The stream's head when the rewind started (where "live" is). */
  head: number;
  /** The stream's first entry's append time, ms (null for an empty stream): the slider's left end. */
  first: number | null;
}

let inFlight = 0;

/** The stream's state at `at` (clamped to [0, head]). */
export async function rewind<S>(store: EventStore, spec: RewindSpec<S>, at: RewindAt): Promise<Rewound<S>> {
  if (inFlight >= REWIND_LIMITS.inFlight) throw new HttpError(503, 'unavailable', 'too many rewinds at once; try again', { retryAfterS: 1 });
  inFlight++;
  try {
    const head = await store.head(spec.stream);
    const firstEntry = head > 0 ? (await store.read(spec.stream, 0, 1))[0] : undefined;
    const first = firstEntry ? firstEntry.at : null;
    let target = 'position' in at ? Math.min(Math.max(0, at.position), head) : await positionAtTime(store, spec.stream, head, at.time);
    let from = { state: spec.empty(), position: 0 };
    if (target > 0) {
      const snap = await store.getSnapshot(spec.stream, target);
      if (snap) from = spec.load(snap.state);
    }
    if (target - from.position > REWIND_LIMITS.maxFold) {
      throw new HttpError(409, 'conflict', `no stored snapshot within ${REWIND_LIMITS.maxFold} events before position ${target} (the log is older than its kept snapshots); rewind to a later moment`);
    }
    let { state, position } = from;
    let lastAt: number | null = null;
    while (position < target) {
      const batch = await store.read(spec.stream, position, Math.min(REWIND_LIMITS.readBatch, target - position));
      if (batch.length === 0) break;
      for (const e of batch) {
        if (e.position > target) break;
        state = spec.step(state, e);
        position = e.position;
        lastAt = e.at;
      }
    }
    target = position;
    if (lastAt === null && position > 0) lastAt = (await store.read(spec.stream, position - 1, 1))[0]?.at ?? null;
    return { state, position, at: lastAt, head, first };
  } finally {
    inFlight--;
  }
}

/**
 * The last position appended at or before `time` (0 when none): bisection
 * over the append times, which grow with the positions on one node (on
 * several, the clocks of the nodes may disagree by a little: the answer is
 * then a position near the moment). One read of one entry per step.
 */
export async function positionAtTime(store: EventStore, stream: string, head: number, time: number): Promise<number> {
  let lo = 0; // at(lo) <= time (position 0: before everything)
  let hi = head + 1; // at(hi) > time
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const e = (await store.read(stream, mid - 1, 1))[0];
    if (e === undefined || e.at > time) hi = mid;
    else lo = mid;
  }
  return lo;
}
