// The push fold: who gets Web Push notifications, for what, and with which
// keys (docs/web.md, "Notifications"). One `push` stream for the whole
// server, folded on every node.
//
// Events:
//   push.keys         { publicKey, privateKey, ts }   the server's VAPID key pair (base64url, raw P-256);
//                                                     the first one in the log is kept, later ones are no-ops
//   push.subscribed   { id, project, uid, endpoint, p256dh, auth, ts }
//                                                     a browser's subscription for a member in a project; the
//                                                     same id again replaces it (the browser's endpoint and keys
//                                                     change, or another person signs in on that browser)
//   push.unsubscribed { id, reason, ts }              removed by its member, or by the push service (404/410)
//   push.prefs        { project, uid, prefs, quiet?, ts }
//                                                     what reaches a member in a project (NOTICE_KINDS: on/off);
//                                                     `quiet` (the member's quiet hours, every project; null
//                                                     clears them) when given
//   push.sent         { key, ts }                     one notice claimed for sending (folds to nothing: its
//                                                     idempotency key is what makes one node send it)
//
// Pure: imports nothing, reads no clock. Hostile input (wrong types, long
// strings, unknown kinds) folds to a no-op or a clamp; nothing throws.
// Bounded: at most PUSH_LIMITS.perMember subscriptions per member and
// project (the oldest goes), PUSH_LIMITS.subscriptions in all (a new one is
// dropped once full; the server refuses it before it is stored).

export const PUSH_STREAM = 'push';

/** What a member may choose to hear about, per project. */
export const NOTICE_KINDS = ['approval', 'ask', 'failed', 'finished', 'done', 'budget'] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];
export type PushPrefs = Record<NoticeKind, boolean>;

/** Every kind on: what a member hears until they choose. */
export const DEFAULT_PREFS: Readonly<PushPrefs> = Object.freeze({ approval: true, ask: true, failed: true, finished: true, done: true, budget: true });

/**
 * A member's quiet hours: nothing is pushed from `start` to `end` (minutes
 * since midnight in `timeZone`, an IANA name; a window may wrap past
 * midnight), except what waits for a person when `letWaiting`.
 */
export interface QuietHours {
  timeZone: string;
  start: number;
  end: number;
  letWaiting: boolean;
}

export const PUSH_LIMITS = {
  endpoint: 1000,
  /** A P-256 public key, uncompressed (65 bytes), base64url: 87 characters. */
  p256dh: 87,
  /** The auth secret: 16 bytes, base64url (22); a little room for other lengths. */
  auth: 44,
  id: 64,
  uid: 64,
  project: 64,
  key: 200,
  reason: 200,
  perMember: 10,
  subscriptions: 10_000,
} as const;

export const PUSH_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const B64URL_PATTERN = /^[A-Za-z0-9_-]+$/;

export interface PushSubscription {
  id: string;
  project: string;
  uid: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  at: number;
}

export interface PushState {
  keys: { publicKey: string; privateKey: string } | null;
  subs: Map<string, PushSubscription>;
  /** `project\nuid` → prefs (absent: DEFAULT_PREFS). */
  prefs: Map<string, PushPrefs>;
  /** uid → quiet hours (absent: none). */
  quiet: Map<string, QuietHours>;
}

export function emptyPush(): PushState {
  return { keys: null, subs: new Map(), prefs: new Map(), quiet: new Map() };
}

const prefsKey = (project: string, uid: string) => `${project}\n${uid}`;

export function prefsOf(s: PushState, project: string, uid: string): PushPrefs {
  return s.prefs.get(prefsKey(project, uid)) ?? DEFAULT_PREFS;
}

export function quietOf(s: PushState, uid: string): QuietHours | null {
  return s.quiet.get(uid) ?? null;
}

/** Quiet hours from anything, or null (none, or not well formed; the zone's validity is the server's check). */
export function cleanQuiet(raw: unknown): QuietHours | null {
  if (!raw || typeof raw !== 'object') return null;
  const q = raw as Record<string, unknown>;
  const minute = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 1440;
  if (typeof q.timeZone !== 'string' || q.timeZone.length === 0 || q.timeZone.length > 64 || !minute(q.start) || !minute(q.end)) return null;
  return { timeZone: q.timeZone, start: q.start as number, end: q.end as number, letWaiting: q.letWaiting === true };
}

/** A member's subscriptions in a project, oldest first. */
export function subscriptionsOf(s: PushState, project: string, uid: string): PushSubscription[] {
  const out: PushSubscription[] = [];
  for (const x of s.subs.values()) if (x.project === project && x.uid === uid) out.push(x);
  return out;
}

/** Every subscription of a project, oldest first. */
export function projectSubscriptions(s: PushState, project: string): PushSubscription[] {
  const out: PushSubscription[] = [];
  for (const x of s.subs.values()) if (x.project === project) out.push(x);
  return out;
}

const str = (v: unknown, max: number): string | null => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : null);
const ts = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A prefs object from anything: each known kind a boolean (a missing one keeps `base`), unknown keys dropped. */
export function cleanPrefs(raw: unknown, base: Readonly<PushPrefs> = DEFAULT_PREFS): PushPrefs {
  const out = { ...base };
  if (raw && typeof raw === 'object') for (const k of NOTICE_KINDS) if (typeof (raw as Record<string, unknown>)[k] === 'boolean') out[k] = (raw as Record<string, boolean>)[k];
  return out;
}

/** Folds one event into the state, in place. */
export function applyPush(s: PushState, raw: unknown): void {
  if (!raw || typeof raw !== 'object') return;
  const e = raw as Record<string, unknown>;
  switch (e.type) {
    case 'push.keys': {
      if (s.keys) return;
      const publicKey = str(e.publicKey, 200);
      const privateKey = str(e.privateKey, 200);
      if (publicKey && privateKey && B64URL_PATTERN.test(publicKey) && B64URL_PATTERN.test(privateKey)) s.keys = { publicKey, privateKey };
      return;
    }
    case 'push.subscribed': {
      const id = str(e.id, PUSH_LIMITS.id);
      const project = str(e.project, PUSH_LIMITS.project);
      const uid = str(e.uid, PUSH_LIMITS.uid);
      const endpoint = str(e.endpoint, PUSH_LIMITS.endpoint);
      const p256dh = str(e.p256dh, PUSH_LIMITS.p256dh);
      const auth = str(e.auth, PUSH_LIMITS.auth);
      if (!id || !PUSH_ID_PATTERN.test(id) || !project || !uid || !endpoint || !p256dh || !auth || !B64URL_PATTERN.test(p256dh) || !B64URL_PATTERN.test(auth)) return;
      const known = s.subs.has(id);
      if (!known && s.subs.size >= PUSH_LIMITS.subscriptions) return;
      // Replacing keeps nothing of the old one, and moves it to the end (newest).
      s.subs.delete(id);
      s.subs.set(id, { id, project, uid, endpoint, p256dh, auth, at: ts(e.ts) });
      const mine = subscriptionsOf(s, project, uid);
      for (let i = 0; i < mine.length - PUSH_LIMITS.perMember; i++) s.subs.delete(mine[i].id);
      return;
    }
    case 'push.unsubscribed': {
      const id = str(e.id, PUSH_LIMITS.id);
      if (id) s.subs.delete(id);
      return;
    }
    case 'push.prefs': {
      const project = str(e.project, PUSH_LIMITS.project);
      const uid = str(e.uid, PUSH_LIMITS.uid);
      if (!project || !uid) return;
      s.prefs.set(prefsKey(project, uid), cleanPrefs(e.prefs, prefsOf(s, project, uid)));
      if (e.quiet === null) s.quiet.delete(uid);
      else if (e.quiet !== undefined) {
        const q = cleanQuiet(e.quiet);
        if (q) s.quiet.set(uid, q);
      }
      return;
    }
    default:
      return;
  }
}
