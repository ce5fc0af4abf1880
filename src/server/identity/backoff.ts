// Per-login backoff for sign-in (docs/security.md, "Signing in"): besides the
// per-address request budget, one login that fails again and again is made to
// wait, from every address at once, so guessing one person's password from
// many addresses gains nothing.
//
// The rule (numbers are RoostConfig's `loginFailuresFree` and `loginBackoffMs`):
// - `free` failed sign-ins in a row cost nothing;
// - the next attempt starts a wait of `base`, and each failed one after it
//   doubles the wait, up to 15 minutes; while it lasts every attempt for that
//   login, right password or not, is refused with 429 and Retry-After,
//   before any password is checked;
// - a successful sign-in clears the count; a login with no failure for an
//   hour is forgotten;
// - an attempt counts as a failure from the moment it starts (a success then
//   clears it), so parallel guesses cannot all slip in before the first fails;
// - unknown logins are counted the same way: the answers never tell whether
//   an account exists.
//
// In memory, per node (like the request budget): with several nodes an
// attacker gets each node's free attempts. Bounded: at most 100,000 logins are
// remembered; past that the oldest are dropped.

export const BACKOFF_MAX_MS = 15 * 60_000;
export const BACKOFF_FORGET_MS = 60 * 60_000;
const MAX_ENTRIES = 100_000;

interface Entry {
  failures: number;
  /** No attempt before this (ms since the epoch). */
  until: number;
  last: number;
}

export class LoginBackoff {
  private m = new Map<string, Entry>();

  constructor(
    private free: number,
    private baseMs: number,
  ) {}

  /**
   * Starts an attempt for `login`: the ms to wait when it must wait (nothing
   * is counted then), else 0 and the attempt is counted as a failure until
   * `succeeded` clears it.
   */
  begin(login: string, now = Date.now()): number {
    let e = this.m.get(login);
    if (e && now - e.last > BACKOFF_FORGET_MS && now >= e.until) {
      this.m.delete(login);
      e = undefined;
    }
    if (e && now < e.until) return e.until - now;
    if (!e) {
      if (this.m.size >= MAX_ENTRIES) this.prune(now);
      e = { failures: 0, until: 0, last: now };
    } else this.m.delete(login);
    // (Re)inserted last: the Map's order is oldest-first for pruning.
    this.m.set(login, e);
    e.failures++;
    e.last = now;
    if (e.failures > this.free) e.until = now + Math.min(BACKOFF_MAX_MS, this.baseMs * 2 ** Math.min(30, e.failures - this.free - 1));
    return 0;
  }

  /** The attempt signed in: the login's count starts again. */
  succeeded(login: string): void {
    this.m.delete(login);
  }

  private prune(now: number): void {
    for (const [k, e] of this.m) if (now - e.last > BACKOFF_FORGET_MS && now >= e.until) this.m.delete(k);
    for (const k of this.m.keys()) {
      if (this.m.size < MAX_ENTRIES) break;
      this.m.delete(k);
    }
  }
}
