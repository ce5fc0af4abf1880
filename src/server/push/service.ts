// Web Push on the server (docs/web.md, "Notifications"): the VAPID key pair,
// members' subscriptions and choices, and the sending of one notice to every
// member of a project who wants it.
//
// Why it is shaped like this:
// - everything is an event of the `push` stream (src/core/push.ts), folded
//   on every node: the key pair is made at the first start and kept with the
//   data (the first `push.keys` in the log wins, so nodes that start together
//   agree on one pair); subscriptions and choices survive restarts and reach
//   every node;
// - one notice is sent once, by one node: the sender first logs `push.sent`
//   keyed by the notice's key (the store's idempotency), and only the node
//   whose append was not a duplicate sends;
// - who hears a notice is decided at send time: a subscription's member must
//   still be a member of the project (a removed member's browser hears
//   nothing), and in shared mode local mode's subscriptions are silent;
// - a push service that answers 404 or 410 has forgotten the subscription:
//   it is removed (`push.unsubscribed`), like a member's own removal;
// - the payload is small and carries no secret: a title, a line, the page to
//   open and the waiting count, never the tool call's input.

import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import webpush from 'web-push';
import { quietAllows, validTimeZone } from '../../core/notify.js';
import { applyPush, emptyPush, prefsOf, quietOf, projectSubscriptions, subscriptionsOf, PUSH_LIMITS, PUSH_STREAM, type NoticeKind, type PushState, type QuietHours, type PushSubscription } from '../../core/push.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import { StreamFollower } from '../follower.js';
import { LOCAL_OWNER, type Access, type Principal } from '../access.js';
import { HttpError, sendJson } from '../http.js';
import { route, type Route } from '../route.js';
import { checkEndpoint, deliver, type EndpointPolicy } from './endpoint.js';

/** A notice worth a notification, as the sources (src/server/push/notices.ts) make it. */
export interface Notice {
  kind: NoticeKind;
  project: string;
  /** Unique per notice across nodes and restarts (`approval:<project>:<id>`): it is sent once. */
  key: string;
  title: string;
  body: string;
  /** The page the notification opens (same origin, a path). */
  url: string;
  /** When it happened (server time, ms): a notice older than PushOptions.freshMs is not sent. */
  at: number;
  /** Replaces an earlier notification with the same tag on the device. */
  tag: string;
  /** How many approvals wait in the project now (the app badge). */
  waiting?: number;
  /** Seconds a push service keeps it for a device that is offline. */
  ttl: number;
  urgency: 'high' | 'normal';
}

/** What the service worker receives (web/public/sw.js reads it): version 1. */
export interface PushPayload {
  v: 1;
  kind: NoticeKind;
  project: string;
  title: string;
  body: string;
  url: string;
  tag: string;
  waiting?: number;
}

export interface PushOptions {
  access: Access;
  /** VAPID `sub`: a mailto: or https: contact for push services. */
  subject: string;
  /** Shared mode only: endpoints on loopback or private addresses are allowed (tests; a push service on the same network). */
  privateEndpoints: boolean;
  /** One send's time limit, ms. */
  timeoutMs: number;
  /** Notices older than this when folded are not sent (a restart or a slow catch-up does not replay old news), ms. */
  freshMs: number;
}

export const PUSH_DEFAULTS = { timeoutMs: 10_000, freshMs: 60_000 } as const;

const B64URL = (min: number, max: number) => Type.String({ minLength: min, maxLength: max, pattern: '^[A-Za-z0-9_-]+={0,2}$', hint: 'base64url' });

const Subscribe = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: PUSH_LIMITS.endpoint }),
  keys: Type.Object({ p256dh: B64URL(80, PUSH_LIMITS.p256dh + 2), auth: B64URL(16, PUSH_LIMITS.auth) }),
  expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});

const PrefsBody = Type.Object(
  {
    approval: Type.Optional(Type.Boolean()),
    ask: Type.Optional(Type.Boolean()),
    failed: Type.Optional(Type.Boolean()),
    finished: Type.Optional(Type.Boolean()),
    done: Type.Optional(Type.Boolean()),
    budget: Type.Optional(Type.Boolean()),
    // The caller's quiet hours (every project), "HH:MM" in their IANA time zone; null clears them.
    quiet: Type.Optional(
      Type.Union([
        Type.Object(
          {
            timeZone: Type.String({ minLength: 1, maxLength: 64 }),
            start: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', hint: 'HH:MM' }),
            end: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', hint: 'HH:MM' }),
            letWaiting: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

const SUB_ID = { id: { pattern: /^ps_[a-f0-9]{24}$/, message: 'a subscription id is ps_ and 24 hex digits' } };

/** A subscription's id: one per endpoint and project, whoever subscribed it last. */
export function subscriptionId(project: string, endpoint: string): string {
  return 'ps_' + createHash('sha256').update(`${project}\n${endpoint}`).digest('hex').slice(0, 24);
}

/** What a member sees of a subscription: never its keys, and only the push service's origin. */
function shown(s: PushSubscription) {
  let service = '';
  try {
    service = new URL(s.endpoint).origin;
  } catch {}
  return { id: s.id, service, at: s.at };
}

const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

/** Quiet hours as the route takes them ("HH:MM"), or null. */
function shownQuiet(q: QuietHours | null) {
  return q ? { timeZone: q.timeZone, start: hhmm(q.start), end: hhmm(q.end), letWaiting: q.letWaiting } : null;
}

export class PushService {
  state: PushState = emptyPush();
  private follower: StreamFollower;
  /** Deliveries made by this node (tests and the bench read it). */
  readonly stats = { sent: 0, failed: 0, gone: 0 };

  constructor(
    private store: EventStore,
    private opts: PushOptions,
  ) {
    this.follower = new StreamFollower(store, PUSH_STREAM, { apply: (e) => this.applyEntry(e) });
  }

  private applyEntry(entry: LogEntry): void {
    let event: unknown = null;
    try {
      event = JSON.parse(entry.body);
    } catch {}
    applyPush(this.state, event);
  }

  /** Folds the stream, then makes the key pair if the log has none (the first one logged wins on every node). */
  async start(): Promise<void> {
    this.follower.listen();
    await this.follower.catchUp();
    if (!this.state.keys) {
      const k = webpush.generateVAPIDKeys();
      const r = await this.append([{ type: 'push.keys', publicKey: k.publicKey, privateKey: k.privateKey }], 'push.keys');
      await this.follower.folded(r);
      if (!this.state.keys) await this.follower.catchUp();
    }
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  /** The public half of the VAPID pair (the browser's `applicationServerKey`). */
  get publicKey(): string {
    return this.state.keys?.publicKey ?? '';
  }

  private async append(events: Record<string, unknown>[], key?: string): Promise<number> {
    const at = Date.now();
    const r = await this.store.append(
      PUSH_STREAM,
      events.map((e) => ({ type: e.type as string, body: JSON.stringify({ ...e, ts: at }) })),
      key ? { idempotencyKey: key } : undefined,
    );
    await this.follower.folded(r.last);
    return r.last;
  }

  private policy(): EndpointPolicy {
    return this.opts.access.mode === 'local' ? { httpsOnly: false, privateOk: true } : { httpsOnly: true, privateOk: this.opts.privateEndpoints };
  }

  /** Whether a subscription's member may hear about a project now. */
  private mayHear(uid: string, project: string): boolean {
    const a = this.opts.access;
    if (a.mode === 'local') return uid === LOCAL_OWNER.uid;
    if (uid === LOCAL_OWNER.uid) return false;
    const p: Principal = { kind: 'person', uid, name: uid };
    return a.roleIn(p, project) !== null;
  }

  /**
   * Sends a notice to every subscription of its project whose member wants
   * its kind. Resolves with how many push services accepted it (0 when
   * another node sends it, when it is stale or when nobody listens).
   */
  async notify(n: Notice): Promise<number> {
    if (Date.now() - n.at > this.opts.freshMs) return 0;
    const keys = this.state.keys;
    if (!keys) return 0;
    const now = Date.now();
    const to = projectSubscriptions(this.state, n.project).filter(
      (s) => prefsOf(this.state, s.project, s.uid)[n.kind] && quietAllows(quietOf(this.state, s.uid), n.kind, now) && this.mayHear(s.uid, s.project),
    );
    if (to.length === 0) return 0;
    // One node sends: the one whose claim is not a duplicate.
    const claim = await this.store.append(PUSH_STREAM, [{ type: 'push.sent', body: JSON.stringify({ type: 'push.sent', key: n.key.slice(0, PUSH_LIMITS.key), ts: Date.now() }) }], {
      idempotencyKey: `sent:${n.key}`.slice(0, PUSH_LIMITS.key + 5),
    });
    if (claim.duplicate) return 0;
    const payload: PushPayload = { v: 1, kind: n.kind, project: n.project, title: n.title, body: n.body, url: n.url, tag: n.tag, ...(n.waiting !== undefined ? { waiting: n.waiting } : {}) };
    const text = JSON.stringify(payload);
    const results = await Promise.all(to.map((s) => this.sendOne(s, text, n, keys)));
    return results.filter(Boolean).length;
  }

  private async sendOne(s: PushSubscription, text: string, n: Notice, keys: { publicKey: string; privateKey: string }): Promise<boolean> {
    const policy = this.policy();
    const url = checkEndpoint(s.endpoint, policy);
    if (typeof url === 'string') {
      this.stats.failed++;
      return false;
    }
    try {
      const d = webpush.generateRequestDetails({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }, text, {
        vapidDetails: { subject: this.opts.subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
        TTL: n.ttl,
        urgency: n.urgency,
        contentEncoding: 'aes128gcm',
      });
      const r = await deliver(url, d.headers, (d.body) ?? null, policy, this.opts.timeoutMs);
      if (r.status >= 200 && r.status < 300) {
        this.stats.sent++;
        return true;
      }
      if (r.status === 404 || r.status === 410) {
        this.stats.gone++;
        await this.append([{ type: 'push.unsubscribed', id: s.id, reason: `the push service answered ${r.status}: the subscription is gone` }]);
        return false;
      }
      this.stats.failed++;
      console.error(`roost: push to ${url.origin} answered ${r.status}: ${r.body.slice(0, 200)}`);
      return false;
    } catch (e) {
      this.stats.failed++;
      console.error(`roost: push to ${url.origin} failed: ${(e as Error).message}`);
      return false;
    }
  }

  // ------------------------------------------------------------ routes

  routes(): Route[] {
    const mine = (grant: Principal) => grant.uid;
    return [
      route({
        method: 'GET',
        path: '/push',
        auth: 'viewer',
        tokens: false,
        doc: "the server's public VAPID key, the caller's subscriptions in the project and their choices",
        handler: ({ res, grant }) =>
          sendJson(res, 200, {
            publicKey: this.publicKey,
            prefs: prefsOf(this.state, grant!.project, mine(grant!)),
            quiet: shownQuiet(quietOf(this.state, mine(grant!))),
            subscriptions: subscriptionsOf(this.state, grant!.project, mine(grant!)).map(shown),
          }),
      }),
      route({
        method: 'POST',
        path: '/push/subscriptions',
        auth: 'viewer',
        tokens: false,
        body: Subscribe,
        doc: "a browser's PushSubscription for the caller in the project (endpoint rules: docs/security.md)",
        handler: async ({ res, body, grant }) => {
          const url = checkEndpoint(body.endpoint, this.policy());
          if (typeof url === 'string') throw new HttpError(400, 'bad_request', url);
          const p256dh = body.keys.p256dh.replace(/=+$/, '');
          const auth = body.keys.auth.replace(/=+$/, '');
          if (Buffer.from(p256dh, 'base64url').length !== 65) throw new HttpError(400, 'bad_request', '"keys.p256dh" must be an uncompressed P-256 public key (65 bytes)');
          if (Buffer.from(auth, 'base64url').length !== 16) throw new HttpError(400, 'bad_request', '"keys.auth" must be 16 bytes');
          const id = subscriptionId(grant!.project, url.href);
          if (!this.state.subs.has(id) && this.state.subs.size >= PUSH_LIMITS.subscriptions) throw new HttpError(503, 'unavailable', 'this server holds as many push subscriptions as it may; try later');
          await this.append([{ type: 'push.subscribed', id, project: grant!.project, uid: mine(grant!), endpoint: url.href, p256dh, auth }]);
          sendJson(res, 200, { ok: true, id, prefs: prefsOf(this.state, grant!.project, mine(grant!)) });
        },
      }),
      route({
        method: 'DELETE',
        path: '/push/subscriptions/:id',
        auth: 'viewer',
        tokens: false,
        params: SUB_ID,
        doc: "the caller's own subscription",
        handler: async ({ res, params, grant }) => {
          const s = this.state.subs.get(params.id);
          if (!s || s.project !== grant!.project || s.uid !== mine(grant!)) throw new HttpError(404, 'not_found', 'no such subscription of yours in this project');
          await this.append([{ type: 'push.unsubscribed', id: s.id, reason: 'removed by its member' }]);
          sendJson(res, 200, { ok: true });
        },
      }),
      route({
        method: 'PUT',
        path: '/push/prefs',
        auth: 'viewer',
        tokens: false,
        body: PrefsBody,
        doc: "what reaches the caller in the project: approval, ask, failed, finished, done, budget (on or off); the caller's quiet hours",
        handler: async ({ res, body, grant }) => {
          const { quiet, ...prefs } = body;
          const ev: Record<string, unknown> = { type: 'push.prefs', project: grant!.project, uid: mine(grant!), prefs };
          if (quiet === null) ev.quiet = null;
          else if (quiet) {
            if (!validTimeZone(quiet.timeZone)) throw new HttpError(400, 'bad_request', '"quiet.timeZone" must be an IANA time zone name, such as Europe/Paris');
            const min = (hm: string) => Number(hm.slice(0, 2)) * 60 + Number(hm.slice(3, 5));
            ev.quiet = { timeZone: quiet.timeZone, start: min(quiet.start), end: min(quiet.end), letWaiting: quiet.letWaiting === true };
          }
          await this.append([ev]);
          sendJson(res, 200, { ok: true, prefs: prefsOf(this.state, grant!.project, mine(grant!)), quiet: shownQuiet(quietOf(this.state, mine(grant!))) });
        },
      }),
    ];
  }
}
