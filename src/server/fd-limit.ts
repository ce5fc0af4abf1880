// The process's open-file limit, and the cap on live connections it allows.
// Every SSE connection holds a socket (a file descriptor) for as long as it
// is open; a process whose descriptors run out cannot accept a request, open
// the log or answer /health, and new connections hang (issue 37, point 9).
// The live mechanism therefore refuses a connection past its cap with a 503
// (src/server/live/), and the cap leaves half of the descriptors for the rest.

import { readFileSync } from 'node:fs';

/** The soft limit on open files (Linux: /proc/self/limits), or null where it cannot be read. */
export function openFileLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!m || m[1] === 'unlimited') return null;
    return Number(m[1]);
  } catch {
    return null;
  }
}

/** The live connections one process holds at most: the setting, and never more than half the open-file limit. */
export function liveConnectionCap(setting: number, limit: number | null = openFileLimit()): number {
  return limit === null ? setting : Math.max(1, Math.min(setting, Math.floor(limit / 2)));
}
