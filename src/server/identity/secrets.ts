// Shared mode's secrets: password hashes, random secrets and their digests.
//
// Secrets (passwords, tokens, session ids, invite codes) never reach the log:
// passwords are stored as scrypt strings (salt and parameters inside), the
// rest as sha256 of 32 random bytes. A secret is shown once, in the answer of
// the request that made it.

import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

let runs = 0;
/** How many scrypt computations this process has started (tests read it: an unknown login must run one too). */
export function scryptRuns(): number {
  return runs;
}

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  runs++;
  return new Promise((ok, fail) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? fail(err) : ok(key))));
}

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64url');
  const want = Buffer.from(parts[5], 'base64url');
  if (!(N >= 2 && N <= 1 << 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16) || want.length < 16) return false;
  const got = await scrypt(password, salt, want.length, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return timingSafeEqual(got, want);
}

/**
 * A stored-hash stand-in for a login nobody has: the current parameters, a
 * random salt and a random key. Checking a password against it costs one
 * scrypt, exactly like a wrong password for a real account, and never matches.
 */
function dummyHash(): string {
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${randomBytes(16).toString('base64url')}$${randomBytes(SCRYPT.keylen).toString('base64url')}`;
}

/** A password check for a login with no account: the same cost as a wrong password, always false. */
export async function verifyNobody(password: string): Promise<false> {
  await verifyPassword(password, dummyHash());
  return false;
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A random id with a readable prefix (`u_`, `tk_`): letters and digits only. */
export function newId(prefix: string): string {
  return prefix + randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
}

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 200;

export function checkPassword(pw: unknown): string | null {
  if (typeof pw !== 'string') return '"password" must be a string';
  if (pw.length < PASSWORD_MIN) return `a password has at least ${PASSWORD_MIN} characters`;
  if (pw.length > PASSWORD_MAX) return `a password has at most ${PASSWORD_MAX} characters`;
  return null;
}
