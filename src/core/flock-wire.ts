// The flock's edge checks: what the HTTP edge does with a caller's text before
// anything is stored. Pure (imports only src/core), so the web can run the
// same check before it sends.

import { FLOCK_LIMITS, type StrikeReason } from './flock.js';

/** Largest accepted body of POST /api/lists, in bytes. */
export const LIST_BODY_MAX = 64 * 1024;

export type ParsedList = { ok: true; items: string[] } | { ok: false; message: string; strike: StrikeReason };

// A leading list marker: bullets (-, *, +, •, ‣, ◦, ·), numbers (1. 1) (1)),
// lowercase letters with a parenthesis (a) (b)), and Markdown checkboxes
// ([ ], [x], [X]) after or instead of a marker. A marker alone is a blank line.
// ("A. Smith to call" keeps its initial: letters need the parenthesis.)
const BULLET = /^(?:[-*+\u2022\u2023\u25e6\u00b7](?:\s+|$)|\(?\d{1,4}[.)](?:\s+|$)|\(?[a-z]\)(?:\s+|$))/;
const CHECKBOX = /^\[[ xX]?\]\s*/;
// A line that is only a Markdown rule or decoration counts as blank.
const RULE = /^(?:[-*_=~]\s*){3,}$/;
const WORDLIKE = /[\p{L}\p{N}]/u;

/**
 * Turns a todo list into items: one per line, list markers and checkboxes
 * stripped, blank lines (and Markdown rules) skipped, each item 1 to
 * FLOCK_LIMITS.itemText characters after trimming, at most FLOCK_LIMITS.maxItems.
 * A list with no item is `empty`; one with an item that has no letter or digit
 * in it, an item over the length cap, or too many items is `garbage` (both are
 * requester strikes, docs/flock.md).
 */
export function parseListText(text: string): ParsedList {
  const items: string[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i].replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').trim();
    if (!l || RULE.test(l)) continue;
    // Strip at most one bullet and then one checkbox ("- [ ] ship it", "1. [x] done", "[ ] todo").
    l = l.replace(BULLET, '');
    l = l.replace(CHECKBOX, '').trim();
    if (!l) continue;
    if (l.length > FLOCK_LIMITS.itemText) return { ok: false, strike: 'garbage', message: `line ${i + 1} is ${l.length} characters long; an item may have at most ${FLOCK_LIMITS.itemText}` };
    if (!WORDLIKE.test(l)) return { ok: false, strike: 'garbage', message: `line ${i + 1} has no letter or digit in it` };
    items.push(l);
    if (items.length > FLOCK_LIMITS.maxItems) return { ok: false, strike: 'garbage', message: `a list may have at most ${FLOCK_LIMITS.maxItems} items` };
  }
  if (items.length === 0) return { ok: false, strike: 'empty', message: 'the list has no items: write one task per line' };
  return { ok: true, items };
}

/** The 403 message for a quarantined crow's post (the contract's words). */
export function quarantineMessage(author: string): string {
  return `${author} is quarantined pending the owner's decision.`;
}
