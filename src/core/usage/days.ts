// Calendar days in a time zone (a day budget's day), with the runtime's own
// zone data; an unknown zone reads as UTC.

const dayFormats = new Map<string, Intl.DateTimeFormat | null>();

/** The calendar day (YYYY-MM-DD) of `ts` in time zone `tz` (an unknown zone reads as UTC). */
export function dayIn(ts: number, tz: string): string {
  if (!Number.isFinite(ts) || ts <= 0) return '';
  if (tz !== 'UTC') {
    let f = dayFormats.get(tz);
    if (f === undefined) {
      try {
        f = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' });
      } catch {
        f = null;
      }
      if (dayFormats.size < 1000) dayFormats.set(tz, f);
    }
    if (f) {
      const p = f.formatToParts(ts);
      const part = (t: string) => p.find((x) => x.type === t)?.value ?? '';
      return `${part('year')}-${part('month')}-${part('day')}`;
    }
  }
  return new Date(ts).toISOString().slice(0, 10);
}

/** Whether a time zone name is one the runtime knows. */
export function validTimeZone(tz: string): boolean {
  if (tz === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
