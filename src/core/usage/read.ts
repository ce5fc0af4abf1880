// Readers for hostile event fields: each answers a clean value ('' or 0 for
// anything else), never throws.

export function str(v: unknown, max: number): string {
  return typeof v === 'string' ? v.slice(0, max) : '';
}

/** A count: a finite number, floored, within [0, cap]; anything else is 0. */
export function count(v: unknown, cap: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 0;
  return Math.min(Math.floor(v), cap);
}

/** A calendar day, YYYY-MM-DD. */
export const DAY = /^\d{4}-\d{2}-\d{2}$/;
