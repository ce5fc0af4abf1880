// Browsers that have signed in before (docs/security.md, "Signing in"): a
// successful sign-in sets `roost_device`, an HttpOnly cookie naming the
// person and signed by the server (HMAC-SHA256). It grants no access at all:
// it only lets that person's next sign-ins from that browser skip the
// per-address limits and use the share of the password-check gate kept for
// known browsers, so a flood of wrong logins from strangers cannot lock the
// people who use Roost out. A forged or foreign cookie is ignored.
//
// The signing key is made at the first start and kept in the log (stream
// `devices`; the first `device.key` wins, so nodes that start together agree,
// as the push keys do). Whoever reads the log can forge a device cookie, and
// with it gets that same priority, never a sign-in: the password is still
// checked.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { EventStore } from '../../storage/types.js';

export const DEVICE_STREAM = 'devices';
export const DEVICE_COOKIE = 'roost_device';
/** How long a browser stays known without signing in again (Chromium keeps a cookie at most 400 days). */
export const DEVICE_DAYS = 400;

/** A known browser: whose it is, and the cookie's own id (its limits are per browser). */
export interface Device {
  uid: string;
  id: string;
}

function cookieValue(req: IncomingMessage, name: string): string | null {
  const raw = req.headers.cookie;
  if (typeof raw !== 'string' || raw.length > 8192) return null;
  for (const part of raw.split(';')) {
    const i = part.indexOf('=');
    if (i >= 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || null;
  }
  return null;
}

export class DeviceCookies {
  /** The signing key, once read from the log (null before the first sign-in anywhere: nothing is known yet). */
  private key: Buffer | null = null;

  private constructor(private store: EventStore) {}

  /** Reads the signing key when there is one (a local server never writes one). */
  static async open(store: EventStore): Promise<DeviceCookies> {
    const d = new DeviceCookies(store);
    await d.read();
    return d;
  }

  private async read(): Promise<void> {
    const e = (await this.store.read(DEVICE_STREAM, 0, 1))[0];
    if (!e) return;
    const key = Buffer.from(String((JSON.parse(e.body) as { key?: unknown }).key ?? ''), 'base64url');
    if (key.length < 32) throw new Error('the device key in the log is malformed');
    this.key = key;
  }

  /** The signing key, made and stored by the first node that needs one (the first `device.key` wins). */
  async ensure(): Promise<void> {
    if (this.key) return;
    await this.read();
    if (this.key) return;
    const key = randomBytes(32).toString('base64url');
    await this.store.append(DEVICE_STREAM, [{ type: 'device.key', body: JSON.stringify({ type: 'device.key', key }) }], { idempotencyKey: 'device.key' });
    await this.read();
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key!).update(payload).digest('base64url');
  }

  /** The value of a new device cookie for `uid` (after `ensure`). */
  issue(uid: string): string {
    const payload = `${uid}.${randomBytes(9).toString('base64url')}.${Date.now()}`;
    return `${payload}.${this.sign(payload)}`;
  }

  /** The `Set-Cookie` header of a new device cookie (HttpOnly, sent only to /auth). */
  header(uid: string, secure: boolean): string {
    return `${DEVICE_COOKIE}=${this.issue(uid)}; HttpOnly; SameSite=Strict; Path=/auth; Max-Age=${DEVICE_DAYS * 86_400}${secure ? '; Secure' : ''}`;
  }

  /** The request's known browser, when it carries a device cookie this server signed and that has not expired. */
  verify(req: IncomingMessage, now = Date.now()): Device | null {
    const v = this.key ? cookieValue(req, DEVICE_COOKIE) : null;
    if (!v || v.length > 300) return null;
    const parts = v.split('.');
    if (parts.length !== 4) return null;
    const [uid, id, at, mac] = parts;
    const want = Buffer.from(this.sign(`${uid}.${id}.${at}`));
    const got = Buffer.from(mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
    const t = Number(at);
    if (!Number.isFinite(t) || now - t > DEVICE_DAYS * 86_400_000) return null;
    return { uid, id };
  }
}
