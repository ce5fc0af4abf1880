// The floor's visual vocabulary: colours, labels and glyphs per status and
// role. Kept apart from the drawing so the list view, the card and the legend
// say exactly what the canvas shows.

import type { Shown } from '../../../src/core/attention.js';
import type { Agent, Status } from '../../../src/core/floor.js';

export const STATUS_COLOR: Record<Status, string> = {
  idle: '#94a3b8',
  thinking: '#8b5cf6',
  working: '#16a34a',
  waiting: '#f59e0b',
  done: '#0284c7',
  error: '#dc2626',
  offline: '#6b7280',
};

/** An agent silent too long while working or thinking (quietSince): greyed, like idle. */
export const QUIET_COLOR = '#94a3b8';
/** An agent waiting in its own terminal (nothing to decide here): a darker amber, no pulse. */
export const TERMINAL_COLOR = '#b45309';

/** What a view shows (src/core/attention.ts): a status, quiet, or waiting in its terminal. */
export const SHOWN_COLOR: Record<Shown, string> = { ...STATUS_COLOR, quiet: QUIET_COLOR, terminal: TERMINAL_COLOR };

export const STATUS_LABEL: Record<Status, string> = {
  idle: 'Idle',
  thinking: 'Thinking',
  working: 'Working',
  waiting: 'Waiting for you',
  done: 'Done',
  error: 'Error',
  offline: 'Offline',
};

export const SHOWN_LABEL: Record<Shown, string> = { ...STATUS_LABEL, quiet: 'Quiet', terminal: 'Waiting in its terminal' };

/** What a sighted user sees, in words (the list view and the docs say the same). */
export const POSE_TEXT: Record<Status, string> = {
  idle: 'sits back, arms down, screen dimmed',
  thinking: 'hand on chin, thought dots above the head',
  working: 'types at the keyboard, code on the screen',
  waiting: 'stands with a hand up, amber "?" badge and a pulsing ring',
  done: 'leans back with arms up, a tick on the screen',
  error: 'holds its head, red "!" badge and a pulsing ring, red screen',
  offline: 'greyed out and asleep, screen off',
};

export const SHOWN_POSE: Record<Shown, string> = {
  ...POSE_TEXT,
  quiet: 'sits back, arms down, screen dimmed, a grey "…" badge and a dotted ring',
  terminal: 'stands with a hand up, dark amber ">" badge, a steady ring',
};

/** Badge glyph over the head, if any. */
export const STATUS_BADGE: Partial<Record<Shown, string>> = {
  waiting: '?',
  error: '!',
  done: '✓',
  quiet: '…',
  terminal: '>',
};

/** The status whose pose a shown state takes: quiet sits like idle, waiting in its terminal stands like waiting. */
export function poseOf(s: Shown): Status {
  return s === 'quiet' ? 'idle' : s === 'terminal' ? 'waiting' : s;
}

/** Order in which a person should look: the ones that need them first. */
export const ATTENTION: Record<Status, number> = {
  error: 0,
  waiting: 1,
  working: 2,
  thinking: 3,
  idle: 4,
  done: 5,
  offline: 6,
};

/** Most urgent first; among equals, the order they came in. */
export function byAttention(a: Agent, b: Agent): number {
  return ATTENTION[a.status] - ATTENTION[b.status] || a.seq - b.seq;
}

const ROLE_SHIRTS: Record<string, string> = {
  lead: '#1e3a8a',
  reviewer: '#7c3aed',
  'code-reviewer': '#7c3aed',
  tester: '#0f766e',
  qa: '#0f766e',
  coder: '#ea580c',
  implementer: '#ea580c',
  developer: '#ea580c',
  researcher: '#15803d',
  explorer: '#15803d',
  planner: '#be185d',
  designer: '#db2777',
  writer: '#a16207',
  docs: '#a16207',
  ops: '#475569',
  devops: '#475569',
};
const SHIRT_PALETTE = ['#c2410c', '#0369a1', '#4d7c0f', '#9333ea', '#b91c1c', '#0e7490', '#a16207', '#be123c'];

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function shirtColor(role: string): string {
  const r = role.trim().toLowerCase();
  if (!r) return '#64748b';
  return ROLE_SHIRTS[r] ?? SHIRT_PALETTE[hash(r) % SHIRT_PALETTE.length];
}

const SKINS = ['#f3d2b3', '#e0ac84', '#c68a62', '#8d5a3b', '#f6dcc4', '#b97a56'];
const HAIRS = ['#2b1d14', '#4a2f1b', '#1f2937', '#7c4a21', '#a16207', '#52525b', '#111827'];

/** A stable look per agent id, so a character keeps its face across reloads. */
export function faceOf(id: string): { skin: string; hair: string; hairStyle: number } {
  const h = hash(id);
  return { skin: SKINS[h % SKINS.length], hair: HAIRS[(h >>> 8) % HAIRS.length], hairStyle: (h >>> 16) % 3 };
}

const FLOORS = ['#f4ead8', '#e6efe4', '#e7ecf5', '#f3e6ea', '#efe9f6', '#e4f0f1', '#f5efdc', '#ebe8e4'];
export function floorColor(teamId: string, index: number): string {
  return FLOORS[(index + (hash(teamId) % 2)) % FLOORS.length];
}
