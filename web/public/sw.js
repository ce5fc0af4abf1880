// Roost's service worker (docs/web.md, "Notifications"): it shows the push
// messages the server sends and opens the page a notification names when it
// is clicked. It caches nothing: the app is live or it says it is not.
//
// A push message's data is the server's PushPayload (src/server/push/service.ts),
// version 1: { v, kind, project, title, body, url, tag, waiting? }. Anything
// else shows a plain "Roost" notification that opens the inbox: a push
// service must never be able to make us open another site (the url must be
// a path of this origin).

/* global self, clients */

const ICON = '/icon-192.png';

/** A path of this origin, or the inbox. */
function samePath(url) {
  if (typeof url !== 'string' || !url.startsWith('/') || url.startsWith('//')) return '/inbox';
  try {
    const u = new URL(url, self.location.origin);
    return u.origin === self.location.origin ? u.pathname + u.search + u.hash : '/inbox';
  } catch {
    return '/inbox';
  }
}

function payloadOf(event) {
  try {
    const p = event.data ? event.data.json() : null;
    if (p && p.v === 1 && typeof p.title === 'string') return p;
  } catch {
    // Not JSON: shown as a plain notice.
  }
  return { v: 1, kind: 'approval', title: 'Roost', body: event.data ? String(event.data.text()).slice(0, 200) : 'Something needs you', url: '/inbox', tag: 'roost' };
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  const p = payloadOf(event);
  const shown = self.registration.showNotification(String(p.title).slice(0, 120), {
    body: typeof p.body === 'string' ? p.body.slice(0, 300) : '',
    tag: typeof p.tag === 'string' ? p.tag.slice(0, 200) : 'roost',
    icon: ICON,
    badge: ICON,
    renotify: false,
    requireInteraction: p.kind === 'approval' || p.kind === 'ask',
    data: { url: samePath(p.url), kind: p.kind, project: typeof p.project === 'string' ? p.project : 'default' },
  });
  // The installed app's badge: how many decisions wait (where the platform has one).
  const badge = typeof p.waiting === 'number' && self.navigator.setAppBadge ? self.navigator.setAppBadge(p.waiting).catch(() => {}) : Promise.resolve();
  event.waitUntil(Promise.all([shown, badge]));
});

/**
 * A click opens the notification's page: in a window of the app that is
 * already open (it is focused and goes there in the page, keeping its live
 * connection), else in a new window.
 */
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = samePath(event.notification.data && event.notification.data.url);
  const opened = (async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const client = open.find((c) => new URL(c.url).origin === self.location.origin);
    if (client) {
      client.postMessage({ type: 'roost.open', url });
      try {
        await client.focus();
      } catch {
        // Focus needs the click's user activation; a page that stays behind still shows the decision.
      }
      return;
    }
    await self.clients.openWindow(url);
  })();
  try {
    event.waitUntil(opened);
  } catch {
    // An event the page dispatched itself (a test's click, isTrusted false) cannot be extended; it opens all the same.
  }
});

/** The push service replaced the subscription: subscribe again with the server's key and tell the server. */
self.addEventListener('pushsubscriptionchange', (event) => {
  event.waitUntil(
    (async () => {
      const info = await (await fetch('/push', { headers: { accept: 'application/json' } })).json();
      const key = Uint8Array.from(atob(info.publicKey.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
      const sub = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      await fetch('/push/subscriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sub.toJSON()) });
    })(),
  );
});
