// Outbound webhooks: the sender (docs/webhooks.md). Everything it knows is
// folded from the `webhooks` stream (src/core/webhooks.ts): the targets, the
// deliveries waiting, each attempt's outcome. Nothing waits in memory that the
// log does not hold, so a restart resumes every pending delivery where it was.
//
// - Enqueueing: the triggers (src/server/webhooks/triggers.ts) call
//   `enqueue` with a key naming the event (`approval:<id>`); the delivery's id
//   and the append's idempotency key are made from the target and that key,
//   so every node that folds the same event (several share PostgreSQL), and a
//   node replaying it after a restart, enqueue it once.
// - Sending: only the node holding the lease (`lease.claimed` in the same
//   stream, renewed every third of its time, taken by any node once it ran
//   out) sends. It sends the head of each target's queue, one at a time per
//   target (a receiver sees its deliveries in order), records the attempt
//   (synced) before it sends the next, and retries a failed head with
//   exponential backoff for 24 h (`backoffMs` doubles per attempt, at most an
//   hour apart). A delivery is sent again only when its attempt was not
//   recorded (the node died between the answer and the append): receivers
//   deduplicate on `Roost-Delivery`.
// - Every send resolves the target's host, checks every address it has
//   (src/server/net-address.ts) and connects to the checked address only.

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { hostname } from 'node:os';
import type { EventStore } from '../../storage/types.js';
import { StreamFollower } from '../follower.js';
import { resolveChecked, type Resolver } from '../net-address.js';
import { WEBHOOK_LIMITS, emptyWebhooks, foldWebhooks, pendingCount, queueHeads, retryAt, webhookLeaseHolder, type WebhookDelivery, type WebhookKind, type WebhooksState, type WebhookTarget } from '../../core/webhooks.js';

export const WEBHOOKS_STREAM = 'webhooks';

export interface WebhookSettings {
  /** The first retry's delay; each further one doubles (ROOST_WEBHOOK_BACKOFF_MS). */
  backoffMs: number;
  /** How long a delivery is retried before it is marked failed. */
  windowMs: number;
  /** One attempt's time limit. */
  timeoutMs: number;
  /** The sender's lease. */
  leaseMs: number;
  /** This node's name in the lease (default: a fresh one per process). */
  node?: string;
  /** Resolves a target's host name (tests inject one; default: the system's resolver). */
  resolve: Resolver;
  /** Whether the server runs in local mode now (a target's allow_private counts only then). */
  localMode: () => boolean;
  /** Sent as User-Agent. */
  version: string;
}

export const WEBHOOK_DEFAULTS = {
  backoffMs: 10_000,
  windowMs: 24 * 3_600_000,
  timeoutMs: 10_000,
  leaseMs: 30_000,
};

export const systemResolver: Resolver = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family }));

/** The `Roost-Signature` header's value for a body sent at `t` (unix seconds): docs/webhooks.md, "Signature". */
export function signature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** The outcome of one attempt. */
export interface Attempt {
  ok: boolean;
  status: number | null;
  error: string;
}

export class WebhookService {
  state: WebhooksState = emptyWebhooks();
  private follower: StreamFollower;
  private stopped = false;
  private leaseTimer: NodeJS.Timeout | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;
  /** Targets with a send in flight on this node. */
  private busy = new Set<string>();
  private inflight = new Set<Promise<unknown>>();
  private claiming: Promise<void> | null = null;
  /** Counters for tests and the bench. */
  readonly stats = { attempts: 0, delivered: 0, refused: 0, dropped: 0 };

  constructor(
    private store: EventStore,
    readonly settings: WebhookSettings,
  ) {
    this.node = settings.node ?? `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(4).toString('hex')}`;
    this.follower = new StreamFollower(store, WEBHOOKS_STREAM, {
      apply: (e) => {
        foldWebhooks(this.state, e.type, JSON.parse(e.body) as Record<string, unknown>, e.at);
      },
      afterFold: () => this.pump(),
    });
  }

  readonly node: string;

  /** Whether this node sends now. */
  get driving(): boolean {
    return !this.stopped && webhookLeaseHolder(this.state, Date.now()) === this.node;
  }

  async start(): Promise<void> {
    this.follower.listen();
    await this.follower.start();
    await this.tickLease();
    this.leaseTimer = setInterval(() => void this.tickLease().catch((e) => console.error('roost: webhook lease failed', e)), Math.max(50, Math.floor(this.settings.leaseMs / 3)));
    this.leaseTimer.unref();
  }

  /** Stops sending; waits for sends in flight (their outcomes are recorded), then gives the lease back. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
    if (webhookLeaseHolder(this.state, Date.now()) === this.node) {
      await this.store.append(WEBHOOKS_STREAM, [ev({ type: 'lease.released', node: this.node })]).catch(() => {});
    }
    await this.follower.stop();
  }

  /** Appends events and waits until this node folded them. */
  async append(events: Record<string, unknown>[], key?: string): Promise<{ duplicate: boolean }> {
    const r = await this.store.append(WEBHOOKS_STREAM, events.map(ev), key ? { idempotencyKey: key } : undefined);
    await this.follower.folded(r.last);
    return { duplicate: r.duplicate };
  }

  /** Catches up with the log (another node's appends). */
  fresh(): Promise<void> {
    return this.follower.fresh();
  }

  /** The targets of a project that want this kind of event. */
  targetsFor(project: string, kind: WebhookKind): WebhookTarget[] {
    const out: WebhookTarget[] = [];
    for (const t of this.state.targets.values()) if (t.project === project && t.kinds.includes(kind)) out.push(t);
    return out;
  }

  /**
   * Enqueues one event for every target of the project that wants its kind
   * and existed when it happened (`at`). `key` names the event: the same key
   * enqueues once per target, on any node, however often it is told.
   * `data` is the event's JSON; `text` its one line for a Slack-shaped body.
   */
  async enqueue(project: string, kind: WebhookKind, key: string, at: number, data: Record<string, unknown>, text: string): Promise<number> {
    if (this.stopped) return 0;
    // What is older than the retry window would be given up at once; a replay after a restart tells old events again.
    if (at < Date.now() - this.settings.windowMs) return 0;
    let n = 0;
    for (const t of this.targetsFor(project, kind)) {
      if (at < t.createdAt) continue;
      const id = 'd' + createHash('sha256').update(`${t.id}\0${key}`).digest('base64url').slice(0, 22);
      if (this.state.deliveries.has(id)) continue;
      if ((this.state.queues.get(t.id)?.length ?? 0) >= WEBHOOK_LIMITS.pendingPerTarget) {
        this.stats.dropped++;
        continue;
      }
      const body = t.slack ? JSON.stringify({ text }) : JSON.stringify({ id, kind, project, at: new Date(at).toISOString(), data });
      const r = await this.append([{ type: 'delivery.enqueued', id, target: t.id, kind, body }], `webhook:${id}`);
      if (!r.duplicate) n++;
    }
    return n;
  }

  /** Resolves when every send started so far is done. */
  async settled(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  // ------------------------------------------------------------ the lease

  private async tickLease(): Promise<void> {
    if (this.stopped) return;
    const holder = webhookLeaseHolder(this.state, Date.now());
    if (holder !== '' && holder !== this.node) return;
    // Held only while something waits: an idle sender writes nothing.
    if (pendingCount(this.state) === 0 && holder === '') return;
    if (pendingCount(this.state) === 0 && holder === this.node) {
      await this.append([{ type: 'lease.released', node: this.node }]);
      return;
    }
    this.claiming ??= this.append([{ type: 'lease.claimed', node: this.node, ttl_ms: this.settings.leaseMs }])
      .then(() => this.pump())
      .finally(() => (this.claiming = null));
    await this.claiming;
  }

  // ------------------------------------------------------------ sending

  /** Starts a send for every target whose head is due; arms a timer for the earliest one that is not. */
  private pump(): void {
    if (this.stopped) return;
    if (!this.driving) {
      // Work arrived and nobody sends: take the lease now rather than at the next tick.
      if (pendingCount(this.state) > 0 && webhookLeaseHolder(this.state, Date.now()) === '' && !this.claiming) void this.tickLease().catch((e) => console.error('roost: webhook lease failed', e));
      return;
    }
    const now = Date.now();
    let next = Infinity;
    for (const d of queueHeads(this.state)) {
      if (this.busy.has(d.target)) continue;
      if (d.nextAt > now) {
        next = Math.min(next, d.nextAt);
        continue;
      }
      this.busy.add(d.target);
      const p = this.sendHead(d)
        .catch((e) => console.error('roost: a webhook delivery failed to record', e))
        .finally(() => {
          this.busy.delete(d.target);
          this.inflight.delete(p);
          this.pump();
        });
      this.inflight.add(p);
    }
    if (next < this.wakeAt) {
      if (this.wakeTimer) clearTimeout(this.wakeTimer);
      this.wakeAt = next;
      this.wakeTimer = setTimeout(
        () => {
          this.wakeAt = Infinity;
          this.wakeTimer = null;
          this.pump();
        },
        Math.max(0, next - now),
      );
      this.wakeTimer.unref();
    }
  }

  private async sendHead(d: WebhookDelivery): Promise<void> {
    const t = this.state.targets.get(d.target);
    if (!t || !this.driving) return;
    const attempt = d.attempts + 1;
    const out = await this.attempt(t, d);
    this.stats.attempts++;
    if (out.ok) this.stats.delivered++;
    const retry = out.ok ? null : retryAt(d, attempt, Date.now(), this.settings.backoffMs, this.settings.windowMs);
    await this.append([{ type: 'delivery.attempted', id: d.id, attempt, ok: out.ok, status: out.status, error: out.error, retry_at: retry }]);
  }

  /** One POST of a delivery's body to its target, under the address rule. */
  async attempt(t: WebhookTarget, d: WebhookDelivery): Promise<Attempt> {
    let url: URL;
    try {
      url = new URL(t.url);
    } catch {
      return { ok: false, status: null, error: 'the target URL is not valid' };
    }
    const allowPrivate = t.allowPrivate && this.settings.localMode();
    const checked = await resolveChecked(url.hostname, this.settings.resolve, allowPrivate);
    if (!checked.ok) {
      this.stats.refused++;
      return { ok: false, status: null, error: `refused: ${checked.reason}` };
    }
    // Connect to the address just checked, whatever the name resolves to by now.
    const pinned: LookupFunction = (_host, opts, cb) => {
      if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: checked.address, family: checked.family }]);
      else cb(null, checked.address, checked.family);
    };
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(d.body),
      'user-agent': `Roost/${this.settings.version}`,
      'roost-delivery': d.id,
      'roost-event': d.kind,
      'roost-signature': signature(t.secret, ts, d.body),
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Attempt>((ok) => {
      const req = send(url, { method: 'POST', headers, lookup: pinned, timeout: this.settings.timeoutMs, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (text.length < 300) text += c.slice(0, 300 - text.length);
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          // 2xx only; a redirect is not followed (it would be a second, unchecked target).
          ok(status >= 200 && status < 300 ? { ok: true, status, error: '' } : { ok: false, status, error: `answered ${status}${text ? `: ${text.replace(/\s+/g, ' ').trim()}` : ''}` });
        });
        res.on('error', (e) => ok({ ok: false, status: res.statusCode ?? null, error: e.message }));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.settings.timeoutMs} ms`)));
      req.on('error', (e: NodeJS.ErrnoException) => ok({ ok: false, status: null, error: e.code ? `${e.code}: ${e.message}` : e.message }));
      req.end(d.body);
    });
  }
}

/** A new target's id, and a secret when the owner gave none. */
export function newTargetId(): string {
  return 'wh' + randomBytes(9).toString('base64url');
}
export function newSecret(): string {
  return 'whsec_' + randomBytes(24).toString('base64url');
}

function ev(e: Record<string, unknown>): { type: string; body: string } {
  return { type: e.type as string, body: JSON.stringify(e) };
}
