// A push service stand-in that speaks the Web Push protocol (RFC 8030) as a
// browser vendor's would, for the server's half of the push path: it makes
// subscriptions the way a browser does (a P-256 key pair and a 16-byte auth
// secret per subscription, an endpoint URL), and for every message POSTed to
// an endpoint it
// - checks the VAPID authorization (RFC 8292): `vapid t=<JWT>, k=<key>`, the
//   JWT signed ES256 by that key, `aud` the endpoint's origin, `exp` in the
//   future and at most 24 h away, `sub` a mailto: or https: contact, and the
//   key the one the subscription was made with (when one was given);
// - checks TTL, Urgency and `Content-Encoding: aes128gcm`;
// - decrypts the body (RFC 8188 + RFC 8291) with the subscription's private
//   key and auth secret, using node:crypto only;
// - answers 201, or what a test told it to (410 for a subscription it has
//   "forgotten").
// Every message (decrypted, or the reason it was refused) is recorded with
// its arrival time.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createCipheriv, createDecipheriv, createECDH, createHmac, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';

export interface StandinSubscription {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The subscription's private half (the browser keeps it). */
  ecdh: ECDH;
  authSecret: Buffer;
  /** The applicationServerKey it was made with (base64url), when given. */
  serverKey?: string;
}

export interface PushMessage {
  subscription: string;
  at: number;
  ok: boolean;
  /** Why it was refused (ok false). */
  error?: string;
  status: number;
  payload?: unknown;
  text?: string;
  headers: IncomingMessage['headers'];
  jwt?: { aud: string; exp: number; sub: string };
}

const b64u = (b: Buffer) => b.toString('base64url');

function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** RFC 8291 §3.4 and RFC 8188 §2.2: the content key and nonce of one message. */
function deriveKeys(uaPrivate: ECDH, authSecret: Buffer, asPublic: Buffer, salt: Buffer): { cek: Buffer; nonce: Buffer } {
  const uaPublic = uaPrivate.getPublicKey();
  const ecdhSecret = uaPrivate.computeSecret(asPublic);
  const prkKey = hmac(authSecret, ecdhSecret);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
  const ikm = hmac(prkKey, Buffer.concat([keyInfo, Buffer.from([1])])).subarray(0, 32);
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12);
  return { cek, nonce };
}

/** Decrypts an aes128gcm Web Push body with the subscription's private key and auth secret (one record, as a push message is). */
export function decryptAes128gcm(body: Buffer, uaPrivate: ECDH, authSecret: Buffer): Buffer {
  if (body.length < 21 + 65 + 17) throw new Error(`body too short (${body.length} bytes)`);
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not the sender's 65-byte public key`);
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  if (record.length > rs) throw new Error(`record of ${record.length} bytes exceeds rs ${rs}`);
  const { cek, nonce } = deriveKeys(uaPrivate, authSecret, asPublic, salt);
  const d = createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(record.subarray(record.length - 16));
  const plain = Buffer.concat([d.update(record.subarray(0, record.length - 16)), d.final()]);
  // Padding: the data, then a delimiter (2: the last record), then zeros.
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (end < 0 || plain[end] !== 2) throw new Error('no last-record delimiter');
  return plain.subarray(0, end);
}

/** Encrypts like a Web Push sender (used to check decryptAes128gcm against itself in the stand-in's own test). */
export function encryptAes128gcm(plain: Buffer, uaPublic: Buffer, authSecret: Buffer): Buffer {
  const as = createECDH('prime256v1');
  as.generateKeys();
  const salt = randomBytes(16);
  const ecdhSecret = as.computeSecret(uaPublic);
  const prkKey = hmac(authSecret, ecdhSecret);
  const ikm = hmac(prkKey, Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, as.getPublicKey(), Buffer.from([1])])).subarray(0, 32);
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12);
  const c = createCipheriv('aes-128-gcm', cek, nonce);
  const enc = Buffer.concat([c.update(Buffer.concat([plain, Buffer.from([2])])), c.final(), c.getAuthTag()]);
  const header = Buffer.alloc(21);
  salt.copy(header, 0);
  header.writeUInt32BE(4096, 16);
  header[20] = 65;
  return Buffer.concat([header, as.getPublicKey(), enc]);
}

/** Checks a VAPID `Authorization` header (RFC 8292); returns the claims or throws with the reason. */
export function checkVapid(header: string | undefined, audience: string, serverKey?: string): { aud: string; exp: number; sub: string; k: string } {
  const m = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) throw new Error(`Authorization is not "vapid t=..., k=...": ${String(header).slice(0, 80)}`);
  const [jwt, k] = [m[1], m[2]];
  const raw = Buffer.from(k, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('k is not an uncompressed P-256 key');
  if (serverKey && k !== serverKey) throw new Error("k is not the applicationServerKey the subscription was made with");
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33)) }, format: 'jwk' });
  const [h, p, s] = jwt.split('.');
  const head = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string; typ?: string };
  if (head.alg !== 'ES256') throw new Error(`JWT alg ${head.alg}, not ES256`);
  if (!verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))) throw new Error('JWT signature does not verify with k');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud?: string; exp?: number; sub?: string };
  if (claims.aud !== audience) throw new Error(`JWT aud ${claims.aud}, not ${audience}`);
  const now = Date.now() / 1000;
  if (typeof claims.exp !== 'number' || claims.exp <= now || claims.exp > now + 24 * 3600 + 60) throw new Error(`JWT exp ${claims.exp} is not in the next 24 h`);
  if (typeof claims.sub !== 'string' || !/^(mailto:|https:)/.test(claims.sub)) throw new Error(`JWT sub ${claims.sub} is not mailto: or https:`);
  return { aud: claims.aud, exp: claims.exp, sub: claims.sub, k };
}

export class PushServiceStandin {
  readonly messages: PushMessage[] = [];
  private subs = new Map<string, StandinSubscription>();
  /** Subscriptions that answer this status instead of 201 (410: "gone"). */
  readonly answers = new Map<string, number>();
  private waiters: (() => void)[] = [];
  private server: Server;
  url = '';
  private n = 0;

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }

  /** A browser's subscription: its key pair, its auth secret, its endpoint here. */
  subscribe(serverKey?: string): StandinSubscription {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const authSecret = randomBytes(16);
    const id = `s${++this.n}-${randomBytes(6).toString('hex')}`;
    const s: StandinSubscription = { id, endpoint: `${this.url}/push/${id}`, keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(authSecret) }, ecdh, authSecret, serverKey };
    this.subs.set(id, s);
    return s;
  }

  /** The JSON a browser's `PushSubscription.toJSON()` gives. */
  static json(s: StandinSubscription) {
    return { endpoint: s.endpoint, expirationTime: null, keys: s.keys };
  }

  /** Messages that reached a subscription (ok or not). */
  to(id: string): PushMessage[] {
    return this.messages.filter((m) => m.subscription === id);
  }

  /** Resolves once `pred` holds over the messages (checked after each one arrives), or rejects after `ms`. */
  until(pred: (messages: PushMessage[]) => boolean, ms = 5000): Promise<void> {
    if (pred(this.messages)) return Promise.resolve();
    return new Promise((ok, fail) => {
      const t = setTimeout(() => fail(new Error(`push stand-in: not within ${ms} ms; got ${JSON.stringify(this.messages.map((m) => ({ s: m.subscription, ok: m.ok, error: m.error, payload: m.payload })))}`)), ms);
      const check = () => {
        if (pred(this.messages)) {
          clearTimeout(t);
          ok();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const id = /^\/push\/([A-Za-z0-9-]+)$/.exec(req.url ?? '')?.[1] ?? '';
      const s = this.subs.get(id);
      const msg: PushMessage = { subscription: id, at, ok: false, status: 0, headers: req.headers };
      const answer = (status: number, error?: string) => {
        msg.status = status;
        if (error) msg.error = error;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(error ?? '');
        this.messages.push(msg);
        const w = this.waiters.splice(0);
        for (const f of w) f();
      };
      if (req.method !== 'POST') return answer(405, 'POST only');
      if (!s) return answer(404, 'no such subscription');
      try {
        const claims = checkVapid(req.headers.authorization, this.url, s.serverKey);
        msg.jwt = { aud: claims.aud, exp: claims.exp, sub: claims.sub };
        const ttl = Number(req.headers.ttl);
        if (!Number.isInteger(ttl) || ttl < 0) throw new Error(`TTL ${req.headers.ttl} is not a whole number`);
        if (req.headers.urgency && !['very-low', 'low', 'normal', 'high'].includes(String(req.headers.urgency))) throw new Error(`Urgency ${req.headers.urgency}`);
        if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`Content-Encoding ${req.headers['content-encoding']}, not aes128gcm`);
        const body = Buffer.concat(chunks);
        if (body.length > 4096) throw new Error(`body of ${body.length} bytes: over the 4096 a push service takes`);
        msg.text = decryptAes128gcm(body, s.ecdh, s.authSecret).toString('utf8');
        msg.payload = JSON.parse(msg.text);
      } catch (e) {
        return answer(400, (e as Error).message);
      }
      const status = this.answers.get(id) ?? 201;
      msg.ok = status === 201;
      if (status !== 201) return answer(status, 'push subscription has unsubscribed or expired');
      answer(201);
    });
  }
}
