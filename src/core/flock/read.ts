// Field readers for hostile events: every reader takes `unknown` and answers a
// clean value or undefined, never throws; and the event time (`ts`, RFC 3339).

import { FLOCK_LIMITS } from './model.js';

// Every reader takes `unknown` and answers a clean value or undefined; none throws.

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Own property only (a JSON-parsed `__proto__` key is an own key; the prototype's never counts). */
export function get(o: Obj, k: string): unknown {
  return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;
}

/** Cuts to at most `cap` UTF-16 units without splitting a surrogate pair. */
export function cut(s: string, cap: number): string {
  if (s.length <= cap) return s;
  let end = cap;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

// Control characters other than tab and newline never reach a record.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
const LINE_BREAKS = /[\r\n\u2028\u2029]+/g;

/** Trimmed text, control characters removed, cut to `cap`; undefined when not a string or empty. */
export function text(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  // Cut first (bounded work on a huge string), then clean, then cut again.
  const t = cut(cut(v, cap * 2 + 64).replace(/\r\n?/g, '\n').replace(CONTROLS, '').trim(), cap);
  return t ? t : undefined;
}

/** One line of text (line breaks become spaces). */
export function line(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  return text(cut(v, cap * 2 + 64).replace(LINE_BREAKS, ' '), cap);
}

/** Text that may be empty: '' when absent or blank, undefined only when present and not a string. */
export function optText(v: unknown, cap: number): string | undefined {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') return undefined;
  return text(v, cap) ?? '';
}

const ID = /^[A-Za-z0-9_.:-]+$/;
/** A generated id: letters, digits and `_ . : -`, at most `cap` long. `__proto__` is a fine id. */
export function id(v: unknown, cap: number = FLOCK_LIMITS.id): string | undefined {
  return typeof v === 'string' && v.length > 0 && v.length <= cap && ID.test(v) ? v : undefined;
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export function slugId(v: unknown): string | undefined {
  return typeof v === 'string' && v.length <= FLOCK_LIMITS.nestName && SLUG.test(v) ? v : undefined;
}

/** A whole number in [min, max]; undefined otherwise. */
export function int(v: unknown, min: number, max: number): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;
}

/** A token count: a whole number ≥ 0, clamped to one call's cap; anything else is 0. */
export function tokens(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 0;
  return Math.min(FLOCK_LIMITS.callTokens, Math.floor(v));
}

export function oneOf<T extends string>(v: unknown, set: readonly T[]): T | undefined {
  return typeof v === 'string' && (set as readonly string[]).includes(v) ? (v as T) : undefined;
}

export function prob(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1 ? v : undefined;
}

/** The value of `n` ASCII digits of `s` at `i`, or -1. */
function digitsAt(s: string, i: number, n: number): number {
  let v = 0;
  for (let k = i; k < i + n; k++) {
    const c = s.charCodeAt(k) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days inverse; exact for every year 0000-9999). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp (`2026-12-01T10:00:00.000Z`,
 * `...+01:30`), or undefined when it is not one. Written out by hand (not
 * Date.parse, whose leniency differs between engines, and not a regular
 * expression, which cost ten times as much on every event): every host folds
 * the same time. A leap second (:60) reads as :59.
 */
export function flockTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v.length < 20 || v.length > 40) return undefined;
  const y = digitsAt(v, 0, 4);
  const mo = digitsAt(v, 5, 2);
  const d = digitsAt(v, 8, 2);
  const h = digitsAt(v, 11, 2);
  const mi = digitsAt(v, 14, 2);
  const sec = digitsAt(v, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60) return undefined;
  if (v[4] !== '-' || v[7] !== '-' || (v[10] !== 'T' && v[10] !== 't') || v[13] !== ':' || v[16] !== ':') return undefined;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && !leap ? 28 : DAYS_IN_MONTH[mo - 1])) return undefined;
  let i = 19;
  let ms = 0;
  if (v[i] === '.') {
    const from = ++i;
    while (i < v.length && i - from < 9 && v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57) i++;
    if (i === from) return undefined;
    // milliseconds: the first three digits, padded
    ms = digitsAt((v.slice(from, i) + '00').slice(0, 3), 0, 3);
  }
  let offset: number;
  const z = v[i];
  if ((z === 'Z' || z === 'z') && i + 1 === v.length) offset = 0;
  else if ((z === '+' || z === '-') && i + 6 === v.length && v[i + 3] === ':') {
    const oh = digitsAt(v, i + 1, 2);
    const om = digitsAt(v, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return undefined;
    offset = (z === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  } else return undefined;
  return daysFromCivil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + Math.min(sec, 59) * 1000 + ms - offset;
}

/** The RFC 3339 form of a time in ms (what the server puts in `ts`). */
export function flockTs(ms: number): string {
  // The events of one step share their time: one formatting for them all (the same text for the same ms).
  if (ms !== lastTs.ms) lastTs = { ms, text: new Date(ms).toISOString() };
  return lastTs.text;
}
let lastTs = { ms: NaN, text: '' };
