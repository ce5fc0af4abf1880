// Notifications in the browser (docs/web.md, "Notifications"): the service
// worker (/sw.js) is registered on every load, so Roost installs as an app and
// a push message is shown even with no tab open; turning notifications on
// for a project asks the browser's permission, subscribes with the server's
// VAPID key and hands the subscription to the server (`POST
// /push/subscriptions`), which keeps it for this member and project. What
// reaches the member is their choice per project (`PUT /push/prefs`).
//
// A click on a notification opens its page: the worker tells an open window
// (`roost.open`), which goes there in the page; with none open it opens one.

import { getJson, postJson, sendJson, type Answer } from './api.js';
import { navigate } from './navigate.js';
import { inProject } from './scope.js';

export type NoticeKind = 'approval' | 'ask' | 'failed' | 'finished' | 'done' | 'budget';
export type PushPrefs = Record<NoticeKind, boolean>;
/** The member's quiet hours (every project), "HH:MM" in their IANA time zone. */
export interface QuietHours {
  timeZone: string;
  start: string;
  end: string;
  letWaiting: boolean;
}

export interface PushInfo {
  publicKey: string;
  prefs: PushPrefs;
  quiet: QuietHours | null;
  subscriptions: { id: string; service: string; at: number }[];
}

/** Whether this browser can receive push at all (a service worker, the Push API and notifications). */
export function pushSupported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

let registration: Promise<ServiceWorkerRegistration | null> | null = null;

/** Registers /sw.js once per page, and follows its requests to open a page. */
export function registerWorker(): Promise<ServiceWorkerRegistration | null> {
  if (registration) return registration;
  if (!('serviceWorker' in navigator)) return (registration = Promise.resolve(null));
  navigator.serviceWorker.addEventListener('message', (e: MessageEvent<{ type?: unknown; url?: unknown }>) => {
    const url = e.data?.url;
    // Only a path of this origin (the worker checks too).
    if (e.data?.type === 'roost.open' && typeof url === 'string' && url.startsWith('/') && !url.startsWith('//')) navigate(url);
  });
  // Messages are held until the page says it listens (addEventListener alone does not).
  navigator.serviceWorker.startMessages();
  registration = navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((e: unknown) => {
    console.warn('roost: the service worker was not registered', e);
    return null;
  });
  return registration;
}

export function pushInfo(project?: string): Promise<Answer<PushInfo>> {
  return getJson<PushInfo>(inProject('/push', project));
}

export function savePrefs(prefs: Partial<PushPrefs> & { quiet?: QuietHours | null }, project?: string): Promise<Answer<{ prefs: PushPrefs; quiet: QuietHours | null }>> {
  return sendJson<{ prefs: PushPrefs; quiet: QuietHours | null }>('PUT', inProject('/push/prefs', project), prefs);
}

function b64urlBytes(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Turns notifications on for a project on this device: permission, the
 * browser's subscription (made with the server's key), then the server's.
 * Resolves with what went wrong in words, or null.
 */
export async function enablePush(publicKey: string, project?: string): Promise<string | null> {
  if (!pushSupported()) return 'this browser cannot receive notifications';
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') return permission === 'denied' ? 'notifications are blocked for this site in the browser’s settings' : 'notifications were not allowed';
  const reg = await registerWorker();
  if (!reg) return 'the service worker could not start';
  await navigator.serviceWorker.ready;
  let sub: PushSubscription;
  try {
    sub = (await reg.pushManager.getSubscription()) ?? (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64urlBytes(publicKey) }));
  } catch (e) {
    return `the browser could not subscribe: ${(e as Error).message}`;
  }
  const r = await postJson(inProject('/push/subscriptions', project), sub.toJSON());
  return r.ok ? null : r.message;
}

/** Turns this device's notifications off for a project (the server forgets the subscription). */
export async function disablePush(id: string, project?: string): Promise<string | null> {
  const r = await sendJson('DELETE', inProject(`/push/subscriptions/${encodeURIComponent(id)}`, project));
  return r.ok ? null : r.message;
}

// ------------------------------------------------------------ sound

const SOUND_KEY = 'roost.sound';

/** The sound for a new decision waiting: off unless the member turned it on (this browser only). */
export function soundOn(): boolean {
  try {
    return localStorage.getItem(SOUND_KEY) === 'on';
  } catch {
    return false;
  }
}

export function setSound(on: boolean): void {
  try {
    if (on) localStorage.setItem(SOUND_KEY, 'on');
    else localStorage.removeItem(SOUND_KEY);
  } catch {
    // No storage: off.
  }
}

let audio: AudioContext | null = null;

/** A short two-note chime (Web Audio, no file): played when a new decision starts to wait and the sound is on. */
export function chime(): void {
  try {
    audio ??= new AudioContext();
    const t = audio.currentTime;
    for (const [i, f] of [660, 880].entries()) {
      const o = audio.createOscillator();
      const g = audio.createGain();
      o.frequency.value = f;
      g.gain.setValueAtTime(0.0001, t + i * 0.12);
      g.gain.exponentialRampToValueAtTime(0.15, t + i * 0.12 + 0.02);
      g.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.12 + 0.2);
      o.connect(g).connect(audio.destination);
      o.start(t + i * 0.12);
      o.stop(t + i * 0.12 + 0.22);
    }
  } catch {
    // No audio (a browser that blocks it until a gesture): silent.
  }
}
