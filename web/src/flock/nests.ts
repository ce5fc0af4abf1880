// What the nest view reads off the folded flock (the `flock:<project>` scope
// of the one live connection): who is in a nest (core, borrowed, spun,
// quarantined), a message's replies, and the words for how a kind was
// tagged. Plain functions of the state; the fold itself is src/core/flock.ts.
//
// The whole-flock scope carries every event of the project, so the records,
// Jev's probabilities (`jev.tag`), the watchdog's scores (`watch`), flags and
// quarantines, spun crows (`crow.spun`) and the crows answering in a nest
// (`nest.flying`) all arrive on it: the view needs no other read route.

import { personWords } from '../../../src/core/nest-people.js';
import type { Who } from '../shared/projects.js';
import { pageProject } from '../shared/scope.js';
import { resolvedAt, type FlockState, type JevTag, type NestRecord, type Quarantine, type TaggedBy } from '../../../src/core/flock.js';
import { personaOf } from '../../../src/core/personas.js';

export interface CrowMark {
  name: string;
  /** The persona's epithet (a spun crow: its backing persona's). */
  epithet: string;
  quarantine: Quarantine | null;
  /** In the air for this nest now (a message or a list item). */
  flying: string;
}

export interface BorrowedCrow extends CrowMark {
  /** What it was borrowed for: `#<msg_id>` or an item id. */
  for: string[];
}

export interface SpunMark extends CrowMark {
  persona: string;
  trust: 'stranger' | 'regular';
  by: string;
  /** Spun from this nest. */
  here: boolean;
}

export interface NestCrows {
  core: CrowMark[];
  borrowed: BorrowedCrow[];
  spun: SpunMark[];
  quarantined: Quarantine[];
}

const MAX_FOR = 6;

/**
 * The crows of a nest: its core (in creation order), the crows borrowed from
 * outside it (invited to answer a message here, or flown on a list of this
 * nest with `borrowed`), the project's spun crows (the registry, by name), and
 * every quarantined crow of the project (a flag quarantines project-wide).
 * Costs time in the nest's flights and the kept lists of this nest.
 */
export function nestCrows(s: FlockState, nest_id: string): NestCrows | null {
  const nest = s.nests.get(nest_id);
  if (!nest) return null;
  const flying = new Map<string, string>();
  const borrowed = new Map<string, string[]>();
  const lend = (crow: string, what: string) => {
    let a = borrowed.get(crow);
    if (!a) borrowed.set(crow, (a = []));
    if (a.length < MAX_FOR && !a.includes(what)) a.push(what);
  };
  for (const f of nest.flights.values()) {
    if (f.state === 'flying' && !flying.has(f.crow)) flying.set(f.crow, `#${f.msg_id}`);
    if (f.borrowed) lend(f.crow, `#${f.msg_id}`);
  }
  // Invited crows outside a core (todo has none: nothing there is borrowed) whose flight is no longer kept.
  if (nest.core.length > 0) for (const c of nest.invited) if (!nest.core.includes(c) && !borrowed.has(c)) lend(c, 'a message');
  for (const list of s.lists.values()) {
    if (list.nest_id !== nest_id) continue;
    for (const item of list.items)
      for (const f of item.flights.values()) {
        if (f.state === 'flying' && !flying.has(f.crow)) flying.set(f.crow, item.item_id);
        if (f.borrowed) lend(f.crow, item.item_id);
      }
  }
  const mark = (name: string, persona = name): CrowMark => ({
    name,
    epithet: personaOf(persona)?.epithet ?? '',
    quarantine: s.quarantine.get(name) ?? null,
    flying: flying.get(name) ?? '',
  });
  const spun = [...s.spun.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((c): SpunMark => ({ ...mark(c.name, c.persona), persona: c.persona, trust: c.trust === 1 ? 'regular' : 'stranger', by: c.by, here: c.nest_id === nest_id }));
  return {
    core: nest.core.map((c) => mark(c)),
    borrowed: [...borrowed].map(([name, why]) => ({ ...mark(name, s.spun.get(name)?.persona ?? name), for: why })),
    spun,
    quarantined: [...s.quarantine.values()],
  };
}

/** msg_id → the msg_ids of the kept messages that refer to it, in nest order. */
export function repliesOf(s: FlockState, nest_id: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const nest = s.nests.get(nest_id);
  if (!nest) return out;
  for (const r of nest.messages.values()) {
    if (!r.refers_to) continue;
    let a = out.get(r.refers_to);
    if (!a) out.set(r.refers_to, (a = []));
    a.push(r.msg_id);
  }
  return out;
}

/** A label's probability as a whole percent (`97%`; `<1%` for a trace). */
export function pct(p: number): string {
  if (p > 0 && p < 0.005) return '<1%';
  return `${Math.round(p * 100)}%`;
}

/** The `n` most probable labels, most probable first (ties by label). */
export function topProbs(t: JevTag | undefined, n = 3): [string, number][] {
  if (!t) return [];
  return Object.entries(t.probs)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n);
}

/** How a kind (or mode) was decided, in words (`tagged_by` / `mode_tagged_by`). */
export const TAGGED_WORDS: Record<TaggedBy, string> = {
  jev: 'Jev',
  header: 'header (Jev unsure)',
  disagreement: 'Jev over the header',
  default: 'default (nothing fit)',
  harness: 'harness',
};

/** Who a message is from, for people: the owner is "owner", another member by name (`member:Bob`: Bob), a crow by name. */
export function authorWords(author: string): string {
  return personWords(author);
}

/** Whether this browser answers (and parks) asks: local mode (one person, the owner), or the owner role in the page's project. */
export function answersAsks(who: Who): boolean {
  // Until the server answered, as local mode (the server refuses a wrong answerer anyway).
  if (who.mode !== 'shared') return true;
  return who.projects.find((p) => p.id === pageProject())?.role === 'owner';
}

export type AskState = { state: 'pending'; deadline: number } | { state: 'approved' | 'rejected'; deadline: number; reply: string };

/** An ask_owner's state at `now` (the contract's `resolved`, computed as the server does), with its deadline and the reply that decided it. */
export function askState(r: NestRecord, now: number): AskState {
  const deadline = r.at + r.window_ms;
  const res = resolvedAt(r, now);
  if (res === '') return { state: 'pending', deadline };
  return { state: res, deadline, reply: r.decision?.by ?? '' };
}

/** Whether `text` answers an ask yes: trimmed and lowercased, it equals the phrase (the fold's rule). */
export function matchesPhrase(text: string, phrase: string): boolean {
  return phrase !== '' && text.replace(/\r\n?/g, '\n').trim().toLowerCase() === phrase.trim().toLowerCase();
}

/** The watchdog's state as `GET /api/flock` gives it (the flock view's header and a nest's crows panel show it). */
export interface Watchdog {
  on: boolean;
  /** Who scores: the model, or the embedded scorer on a server with no model. */
  scorer?: 'model' | 'embedded';
  model: string | null;
  band: number;
  reason: string;
}

/** How much of a message a reply quotes. */
const QUOTE = 90;

/** A message on one line, cut to `n` characters (a reply's quote). */
export function snippet(text: string, n = QUOTE): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}
