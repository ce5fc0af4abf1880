// Outbound webhooks, folded: the targets an owner set per project, and every
// delivery with its attempts (docs/webhooks.md). Pure: time comes on the
// entry (`at`, the append's server time); the sender (src/server/webhooks/)
// reads this state to know what to send next, so a restart resumes from the
// log, not from timers in memory.
//
// One stream, `webhooks`, for every project (the sender is one per node and
// the lease is one for all):
//
//   target.added    { id, project, url, kinds, secret, slack, allow_private, by }
//   target.changed  { id, by, url?, kinds?, secret?, slack?, allow_private? }
//   target.removed  { id, by }                 its pending deliveries fail
//   delivery.enqueued { id, target, kind, body }   body: the exact JSON text sent
//   delivery.attempted { id, attempt, ok, status, error, retry_at }
//                   ok: delivered; else pending until retry_at (ms), or
//                   failed when retry_at is null (24 h of retries are over)
//   delivery.resent { id, by }                 back to pending, at the end of its target's queue
//   lease.claimed   { node, ttl_ms }           lease.released { node }
//
// Order: a target's pending deliveries form a queue in enqueue (or resend)
// order; the sender sends only its head, so a receiver sees them in order.

/** The kinds of event a target may ask for (docs/webhooks.md, "What is sent"). */
export const WEBHOOK_KINDS = ['approval.waiting', 'approval.decided', 'work.finished', 'list.finished', 'session.stopped'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export const WEBHOOK_LIMITS = {
  url: 1000,
  secret: { min: 16, max: 200 },
  targetsPerProject: 20,
  body: 16 * 1024,
  error: 300,
  node: 100,
  /** Finished deliveries kept per target for the log (pending ones are always kept). */
  keptPerTarget: 200,
  /** Deliveries waiting per target at most: a target down for a day under heavy traffic drops newer events beyond this. */
  pendingPerTarget: 10_000,
  minLeaseMs: 100,
  maxLeaseMs: 10 * 60_000,
};

export interface WebhookTarget {
  id: string;
  project: string;
  url: string;
  kinds: WebhookKind[];
  secret: string;
  /** The body is Slack's incoming-webhook shape (`{"text": ...}`). */
  slack: boolean;
  /** The owner allowed a loopback or private address (honoured in local mode only). */
  allowPrivate: boolean;
  createdAt: number;
  createdBy: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: string;
  target: string;
  project: string;
  kind: string;
  body: string;
  enqueuedAt: number;
  status: DeliveryStatus;
  /** Attempts since it was enqueued or resent. */
  attempts: number;
  /** When the current run of retries began (enqueued or resent): the 24 h count from here. */
  since: number;
  /** When the sender may try next (pending only). */
  nextAt: number;
  lastStatus: number | null;
  lastError: string;
  lastAt: number | null;
}

export interface WebhooksState {
  targets: Map<string, WebhookTarget>;
  deliveries: Map<string, WebhookDelivery>;
  /** Per target: its pending deliveries' ids, in send order. */
  queues: Map<string, string[]>;
  /** Per target: its finished deliveries' ids, oldest first (at most keptPerTarget). */
  done: Map<string, string[]>;
  lease: { node: string; since: number; until: number } | null;
}

export function emptyWebhooks(): WebhooksState {
  return { targets: new Map(), deliveries: new Map(), queues: new Map(), done: new Map(), lease: null };
}

type Obj = Record<string, unknown>;
const str = (v: unknown, max: number): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const idOf = (v: unknown): string | null => (typeof v === 'string' && ID.test(v) ? v : null);

export function isWebhookKind(k: unknown): k is WebhookKind {
  return typeof k === 'string' && (WEBHOOK_KINDS as readonly string[]).includes(k);
}

function kindsOf(v: unknown): WebhookKind[] | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  const out = WEBHOOK_KINDS.filter((k) => v.includes(k));
  return out.length ? out : null;
}

function finish(s: WebhooksState, d: WebhookDelivery): void {
  const q = s.queues.get(d.target);
  if (q) {
    const i = q.indexOf(d.id);
    if (i >= 0) q.splice(i, 1);
    if (q.length === 0) s.queues.delete(d.target);
  }
  let done = s.done.get(d.target);
  if (!done) s.done.set(d.target, (done = []));
  done.push(d.id);
  // The log keeps the newest finished ones; older ones leave memory (still in the event log).
  while (done.length > WEBHOOK_LIMITS.keptPerTarget) s.deliveries.delete(done.shift()!);
}

function enqueue(s: WebhooksState, d: WebhookDelivery): void {
  let q = s.queues.get(d.target);
  if (!q) s.queues.set(d.target, (q = []));
  q.push(d.id);
}

/** Folds one entry of the `webhooks` stream (`at`: its append time, ms). Returns whether it changed anything. */
export function foldWebhooks(s: WebhooksState, type: string, o: Obj, at: number): boolean {
  switch (type) {
    case 'target.added': {
      const id = idOf(o.id);
      const project = idOf(o.project);
      const url = str(o.url, WEBHOOK_LIMITS.url);
      const kinds = kindsOf(o.kinds);
      const secret = str(o.secret, WEBHOOK_LIMITS.secret.max);
      if (!id || !project || !url || !kinds || !secret || s.targets.has(id)) return false;
      s.targets.set(id, { id, project, url, kinds, secret, slack: o.slack === true, allowPrivate: o.allow_private === true, createdAt: at, createdBy: str(o.by, 200) ?? '' });
      return true;
    }
    case 'target.changed': {
      const t = s.targets.get(idOf(o.id) ?? '');
      if (!t) return false;
      const url = str(o.url, WEBHOOK_LIMITS.url);
      const kinds = kindsOf(o.kinds);
      const secret = str(o.secret, WEBHOOK_LIMITS.secret.max);
      if (url) t.url = url;
      if (kinds) t.kinds = kinds;
      if (secret) t.secret = secret;
      if (typeof o.slack === 'boolean') t.slack = o.slack;
      if (typeof o.allow_private === 'boolean') t.allowPrivate = o.allow_private;
      return true;
    }
    case 'target.removed': {
      const id = idOf(o.id) ?? '';
      if (!s.targets.delete(id)) return false;
      for (const did of [...(s.queues.get(id) ?? [])]) {
        const d = s.deliveries.get(did)!;
        d.status = 'failed';
        d.lastError = 'the target was removed';
        d.lastAt = at;
        finish(s, d);
      }
      return true;
    }
    case 'delivery.enqueued': {
      const id = idOf(o.id);
      const t = s.targets.get(idOf(o.target) ?? '');
      const kind = str(o.kind, 64);
      const body = str(o.body, WEBHOOK_LIMITS.body);
      if (!id || !t || !kind || !body || s.deliveries.has(id)) return false;
      const d: WebhookDelivery = { id, target: t.id, project: t.project, kind, body, enqueuedAt: at, status: 'pending', attempts: 0, since: at, nextAt: at, lastStatus: null, lastError: '', lastAt: null };
      s.deliveries.set(id, d);
      enqueue(s, d);
      return true;
    }
    case 'delivery.attempted': {
      const d = s.deliveries.get(idOf(o.id) ?? '');
      // An attempt is counted once: a second report of the same attempt (a node that lost the lease mid-send) changes nothing.
      if (!d || d.status !== 'pending' || o.attempt !== d.attempts + 1) return false;
      d.attempts++;
      d.lastAt = at;
      d.lastStatus = typeof o.status === 'number' && Number.isInteger(o.status) ? o.status : null;
      d.lastError = typeof o.error === 'string' ? o.error.slice(0, WEBHOOK_LIMITS.error) : '';
      if (o.ok === true) {
        d.status = 'delivered';
        d.lastError = '';
        finish(s, d);
      } else if (typeof o.retry_at === 'number' && Number.isFinite(o.retry_at)) {
        d.nextAt = o.retry_at;
      } else {
        d.status = 'failed';
        finish(s, d);
      }
      return true;
    }
    case 'delivery.resent': {
      const d = s.deliveries.get(idOf(o.id) ?? '');
      if (!d || d.status === 'pending' || !s.targets.has(d.target)) return false;
      const done = s.done.get(d.target);
      const i = done ? done.indexOf(d.id) : -1;
      if (done && i >= 0) done.splice(i, 1);
      d.status = 'pending';
      d.attempts = 0;
      d.since = at;
      d.nextAt = at;
      enqueue(s, d);
      return true;
    }
    case 'lease.claimed': {
      const node = str(o.node, WEBHOOK_LIMITS.node);
      const ttl = typeof o.ttl_ms === 'number' && Number.isInteger(o.ttl_ms) && o.ttl_ms >= WEBHOOK_LIMITS.minLeaseMs && o.ttl_ms <= WEBHOOK_LIMITS.maxLeaseMs ? o.ttl_ms : null;
      if (!node || ttl === null) return false;
      const l = s.lease;
      // A claim wins when nobody holds the lease at the claim's time, or it renews the holder's own.
      if (l && l.node !== node && at < l.until) return false;
      s.lease = { node, since: l && l.node === node && at < l.until ? l.since : at, until: at + ttl };
      return true;
    }
    case 'lease.released': {
      const node = str(o.node, WEBHOOK_LIMITS.node);
      if (!node || !s.lease || s.lease.node !== node) return false;
      s.lease = null;
      return true;
    }
    default:
      return false;
  }
}

/** Who holds the sender's lease at `now` ('' when nobody). */
export function webhookLeaseHolder(s: WebhooksState, now: number): string {
  return s.lease && now < s.lease.until ? s.lease.node : '';
}

/** The head of every target's queue: what may be sent next (one per target, so each target's order holds). */
export function queueHeads(s: WebhooksState): WebhookDelivery[] {
  const out: WebhookDelivery[] = [];
  for (const q of s.queues.values()) if (q.length) out.push(s.deliveries.get(q[0])!);
  return out;
}

export function pendingCount(s: WebhooksState): number {
  let n = 0;
  for (const q of s.queues.values()) n += q.length;
  return n;
}

/**
 * When a failed attempt (`attempts` made so far, this one included) is tried
 * again: `base` doubled per attempt, at most an hour apart, and never after
 * `since + windowMs` (null: give up). Exponential backoff for 24 h by default.
 */
export function retryAt(d: Pick<WebhookDelivery, 'since'>, attempts: number, now: number, baseMs: number, windowMs: number): number | null {
  const delay = Math.min(baseMs * 2 ** Math.min(attempts - 1, 30), 3_600_000);
  const at = now + delay;
  return at <= d.since + windowMs ? at : null;
}

/** A project's targets and newest deliveries (newest first, at most `limit`), as the API shows them (no secret). */
export function webhooksView(s: WebhooksState, project: string, limit = 100): { targets: Obj[]; deliveries: Obj[] } {
  const targets = [...s.targets.values()].filter((t) => t.project === project);
  const ids = new Set(targets.map((t) => t.id));
  const deliveries = [...s.deliveries.values()].filter((d) => ids.has(d.target)).sort((a, b) => b.enqueuedAt - a.enqueuedAt || (a.id < b.id ? 1 : -1));
  return {
    targets: targets.map((t) => ({ id: t.id, url: t.url, kinds: t.kinds, slack: t.slack, allow_private: t.allowPrivate, created_at: t.createdAt, created_by: t.createdBy, pending: s.queues.get(t.id)?.length ?? 0 })),
    deliveries: deliveries.slice(0, limit).map((d) => ({
      id: d.id,
      target: d.target,
      kind: d.kind,
      status: d.status,
      attempts: d.attempts,
      enqueued_at: d.enqueuedAt,
      next_at: d.status === 'pending' ? d.nextAt : null,
      last_status: d.lastStatus,
      last_error: d.lastError,
      last_at: d.lastAt,
    })),
  };
}
