// How many sign-ins one caller may have in the password-check gate at once
// (docs/security.md, "Signing in"), checked before the gate: an address at
// most `SIGNIN_PER_ADDRESS` running or waiting, a known browser (a device
// cookie, devices.ts) at most `SIGNIN_PER_DEVICE`. So one address cannot
// fill the gate's queue of 32 (it takes at least 9), and a known browser,
// counted apart from its address, is not refused because a stranger behind
// the same address floods it. Past the limit: 429 with Retry-After, before
// anything is counted against the login. In memory, per node; an entry lives
// only while its sign-ins are in flight.

export const SIGNIN_PER_ADDRESS = 4;
export const SIGNIN_PER_DEVICE = 2;

export class SignInSlots {
  private held = new Map<string, number>();

  /** Takes a slot for `key` when it holds fewer than `max`; false when it is full. */
  take(key: string, max: number): boolean {
    const n = this.held.get(key) ?? 0;
    if (n >= max) return false;
    this.held.set(key, n + 1);
    return true;
  }

  give(key: string): void {
    const n = (this.held.get(key) ?? 1) - 1;
    if (n <= 0) this.held.delete(key);
    else this.held.set(key, n);
  }
}
