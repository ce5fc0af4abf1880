// Words and colours of the fleet board. Colour is never the only cue: every
// state has a label, and waiting sessions also say so in words.
import type { SessionState } from '../../../src/core/fleet.js';

export const STATE_LABEL: Record<SessionState, string> = {
  running: 'Running',
  idle: 'Idle',
  waiting: 'Waiting',
  dead: 'Process died',
  ended: 'Ended',
};

export const STATE_COLOR: Record<SessionState, string> = {
  running: '#16a34a',
  idle: '#64748b',
  waiting: '#f59e0b',
  dead: '#dc2626',
  ended: '#94a3b8',
};

export const FLAVOR_TEXT = {
  scoped: 'its own git worktree of the root (branch kept after close)',
  plain: 'the root folder itself',
} as const;

export function clock(ts: number): string {
  if (!ts) return '';
  const d = new Date(ts);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

const THREAD_KEY = 'roost.fleet.thread';
export const DEFAULT_THREAD = 'default';

/** The thread a member looked at last (the board and the inbox follow it). */
export function lastThread(): string {
  try {
    return localStorage.getItem(THREAD_KEY) || DEFAULT_THREAD;
  } catch {
    return DEFAULT_THREAD;
  }
}

export function rememberThread(t: string): void {
  try {
    localStorage.setItem(THREAD_KEY, t);
  } catch {
    // No storage: the URL still carries the thread.
  }
}

/** Client-side navigation (the shell listens to popstate). */
export function go(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}
