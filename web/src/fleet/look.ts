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
