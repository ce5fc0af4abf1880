// A webhook receiver written from docs/webhooks.md ("Signature"), as a user
// of Roost would write one: it checks `Roost-Signature` (t=<unix seconds>,
// v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>) in constant
// time, refuses a timestamp more than five minutes off, and records what it
// accepted. It can go down (its port stays reserved for coming back) and answer
// errors on purpose.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface Received {
  id: string;
  /** The request's path (one receiver can stand for several targets). */
  path: string;
  kind: string;
  body: string;
  json: any;
  at: number;
}

/** Checks a Roost-Signature header against the raw body, as docs/webhooks.md says to. */
export function verifySignature(header: string | undefined, body: string, secret: string, nowSec = Math.floor(Date.now() / 1000), toleranceSec = 300): boolean {
  if (!header) return false;
  let t = NaN;
  const sigs: string[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.split('=', 2);
    if (k === 't') t = Number(v);
    else if (k === 'v1' && v) sigs.push(v);
  }
  if (!Number.isInteger(t) || Math.abs(nowSec - t) > toleranceSec) return false;
  const want = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return sigs.some((s) => {
    const got = Buffer.from(s, 'hex');
    return got.length === want.length && timingSafeEqual(got, want);
  });
}

export class Receiver {
  readonly got: Received[] = [];
  readonly refusedSignatures: string[] = [];
  /** Answer this status instead of 200 while set. */
  failWith: number | null = null;
  private server: Server | null = null;
  port = 0;

  constructor(private secret: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (!verifySignature(req.headers['roost-signature'] as string | undefined, body, this.secret)) {
          this.refusedSignatures.push(body);
          res.writeHead(401).end('bad signature');
          return;
        }
        if (this.failWith !== null) {
          res.writeHead(this.failWith).end('not now');
          return;
        }
        this.got.push({ id: String(req.headers['roost-delivery']), path: req.url ?? '', kind: String(req.headers['roost-event']), body, json: JSON.parse(body), at: Date.now() });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((ok, fail) => {
      this.server!.once('error', fail);
      this.server!.listen(port || this.port, '127.0.0.1', () => ok());
    });
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Goes down: refuses connections until started again on the same port. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((ok) => s.close(() => ok()));
  }

  /** Ids received more than once. */
  twice(): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const g of this.got) {
      if (seen.has(g.id)) out.push(g.id);
      seen.add(g.id);
    }
    return out;
  }
}
