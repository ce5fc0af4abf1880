// Shared mode's secrets: password hashes, random secrets and their digests.
//
// Secrets (passwords, tokens, session ids, invite codes) never reach the log:
// passwords are stored as scrypt strings (salt and parameters inside), the
// rest as sha256 of 32 random bytes. A secret is shown once, in the answer of
// the request that made it.

import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { HttpError } from '../http.js';

/** scrypt's cost parameters: N (CPU and memory), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * The production cost: N=2^17, r=8, p=1 (128 MiB and about 250 to 500 ms per
 * hash on a small server), OWASP's floor for scrypt. Stored hashes with a
 * lower cost are upgraded at their owner's next sign-in (`needsRehash`).
 */
export const SCRYPT_COST: Readonly<ScryptCost> = Object.freeze({ N: 1 << 17, r: 8, p: 1 });
const KEYLEN = 32;
/** The largest N a stored hash may name (a hash is ours, but a bad one must not take gigabytes). */
const MAX_N = 1 << 20;

let cost: Readonly<ScryptCost> = SCRYPT_COST;

/**
 * Test-only: lowers the cost of new hashes (and of the dummy hash of an
 * unknown login) in this process, so a suite that makes hundreds of accounts
 * runs in seconds; `null` restores production. scripts/test.mjs loads
 * test/support/scrypt-cost.ts, which calls it; nothing under src/ ever does
 * (test/identity.scrypt.test.ts checks).
 */
export function setScryptCostForTests(c: ScryptCost | null): void {
  cost = c ? Object.freeze({ ...c }) : SCRYPT_COST;
}

/** The cost new hashes are made with now. */
export function currentScryptCost(): Readonly<ScryptCost> {
  return cost;
}

/** scrypt needs 128·N·r bytes; Node refuses above `maxmem`, so allow twice that. */
const maxmemOf = (c: ScryptCost): number => 2 * 128 * c.N * c.r + 1024 * 1024;

let runs = 0;
/** How many scrypt computations this process has started (tests read it: an unknown login must run one too). */
export function scryptRuns(): number {
  return runs;
}

/**
 * How many scrypt computations run at once, and how many may wait for one.
 * Each holds 128 MiB at the production cost and one of libuv's four pool
 * threads (which file reads and DNS share) for a quarter to half a second,
 * so sign-ins from many addresses at once must not take them all: with two
 * running the server holds at most 256 MiB for passwords and keeps two pool
 * threads for everything else (one more for a known browser, below). Past the queue a password check is refused
 * at once with 503 and `Retry-After` (`ScryptBusy`), before anything is
 * counted; a queue of 32 is a few seconds of waiting at most.
 */
export const SCRYPT_RUNNING = 2;
export const SCRYPT_WAITING = 32;
/**
 * The share of the gate kept for sign-ins from a browser that signed in
 * before (a device cookie, devices.ts): one computation of its own and a
 * queue of 8, apart from the two above and their 32, so a flood of
 * strangers' sign-ins that fills those never makes a known browser wait for
 * them. At most 3 run at once then (384 MiB).
 */
export const SCRYPT_RUNNING_KNOWN = 1;
export const SCRYPT_WAITING_KNOWN = 8;
/** Whose password check it is: `known` a sign-in from a browser that signed in before (its own share of the gate). */
export type GateLane = 'anyone' | 'known';

interface Pool {
  max: number;
  queue: number;
  running: number;
  waiting: (() => void)[];
}
const pools: Record<GateLane, Pool> = {
  anyone: { max: SCRYPT_RUNNING, queue: SCRYPT_WAITING, running: 0, waiting: [] },
  known: { max: SCRYPT_RUNNING_KNOWN, queue: SCRYPT_WAITING_KNOWN, running: 0, waiting: [] },
};

/** A password check refused because too many are running and waiting already. */
export class ScryptBusy extends HttpError {
  constructor() {
    super(503, 'unavailable', 'too many password checks at once; retry in a moment', { retryAfterS: 1 });
  }
}

/** Whether a password check started now in `lane` would be refused (its share of the gate is full). */
export function scryptFull(lane: GateLane = 'anyone'): boolean {
  const p = pools[lane];
  return p.running >= p.max && p.waiting.length >= p.queue;
}

/** How many password checks run and wait now, strangers' (`running`, `waiting`) and known browsers' (tests and the bench read it). */
export function scryptLoad(): { running: number; waiting: number; runningKnown: number; waitingKnown: number } {
  return { running: pools.anyone.running, waiting: pools.anyone.waiting.length, runningKnown: pools.known.running, waitingKnown: pools.known.waiting.length };
}

function release(p: Pool): void {
  const next = p.waiting.shift();
  if (next) next();
  else p.running--;
}

function scrypt(password: string, salt: Buffer, keylen: number, c: ScryptCost, lane: GateLane = 'anyone'): Promise<Buffer> {
  if (scryptFull(lane)) return Promise.reject(new ScryptBusy());
  const pool = pools[lane];
  const opts: ScryptOptions = { N: c.N, r: c.r, p: c.p, maxmem: maxmemOf(c) };
  const run = (ok: (b: Buffer) => void, fail: (e: Error) => void) => {
    runs++;
    scryptCb(password, salt, keylen, opts, (err, key) => {
      release(pool);
      if (err) fail(err);
      else ok(key);
    });
  };
  return new Promise((ok, fail) => {
    // A slot passes from one computation to the next waiting one (release), so `running` counts slots held.
    if (pool.running < pool.max) {
      pool.running++;
      run(ok, fail);
    } else pool.waiting.push(() => run(ok, fail));
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string, c: ScryptCost = cost): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEYLEN, c);
  return `scrypt$${c.N}$${c.r}$${c.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** The parameters a stored hash names, or null when it is not one of ours. */
function parse(stored: string): { c: ScryptCost; salt: Buffer; want: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64url');
  const want = Buffer.from(parts[5], 'base64url');
  if (!(Number.isInteger(N) && N >= 2 && N <= MAX_N && (N & (N - 1)) === 0 && r >= 1 && r <= 32 && p >= 1 && p <= 16) || want.length < 16) return null;
  return { c: { N, r, p }, salt, want };
}

export async function verifyPassword(password: string, stored: string, lane: GateLane = 'anyone'): Promise<boolean> {
  const h = parse(stored);
  if (!h) return false;
  const got = await scrypt(password, h.salt, h.want.length, h.c, lane);
  return timingSafeEqual(got, h.want);
}

/** Whether a stored hash was made with less than the current cost (it is made again at its owner's next sign-in). */
export function needsRehash(stored: string): boolean {
  const h = parse(stored);
  if (!h) return false;
  return h.c.N < cost.N || h.c.r < cost.r || h.c.p < cost.p;
}

/**
 * A stored-hash stand-in for a login nobody has: the current parameters, a
 * random salt and a random key. Checking a password against it costs one
 * scrypt, exactly like a wrong password for a real account, and never matches.
 */
function dummyHash(): string {
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${randomBytes(16).toString('base64url')}$${randomBytes(KEYLEN).toString('base64url')}`;
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
