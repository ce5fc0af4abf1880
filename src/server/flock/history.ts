// A nest stream's history for new readers (`GET /api/events?nest_id=`), at a
// bounded cost: a nest keeps up to FLOCK_LIMITS.keepMessages records, and a
// reader without a cursor gets all of them, one frame each (its own id). The
// frames of one build are shared by every reader that opens while the nest's
// records have not changed (and for at most 5 s, since `resolved` is computed
// when a frame is first written: an ask that runs out meanwhile reads as it
// did, as it does for a reader already connected, who gets no frame for it), and each frame's bytes are made once, when the
// first reader is written it, and then written to every reader: a hundred
// readers opening at once cost one build, not a hundred, and a build costs
// only what is read of it (docs/security.md, "Limits"). The writing itself is paced to each
// reader (src/server/live/).

import type { Frame } from '../live/index.js';

/** How long one build of a nest's history frames is served, ms. */
export const NEST_HISTORY_TTL_MS = 5000;

/** The `history` of a nest's channel: `frames()` are its kept records in msg_id (= position) order; `make` builds one's frame. */
export function nestHistory<F extends { position: number }>(
  frames: () => readonly F[],
  make: (f: F) => Frame,
  stats: { nestHistoryBuilds: number },
  now: () => number = Date.now,
): (upTo: number) => Frame[] {
  let built: { at: number; last: number; count: number; frames: Frame[] } | null = null;
  return (upTo) => {
    const all = frames();
    const last = all.length ? all[all.length - 1].position : 0;
    const t = now();
    if (!built || built.last !== last || built.count !== all.length || t - built.at > NEST_HISTORY_TTL_MS) {
      built = { at: t, last, count: all.length, frames: all.map(make) };
      stats.nestHistoryBuilds++;
    }
    return built.frames.filter((f) => f.position <= upTo);
  };
}
