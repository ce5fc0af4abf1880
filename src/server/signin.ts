// The sign-in and invite pages of shared mode: two small self-contained HTML
// pages (no build step, no third-party code), so a person can sign in from a
// browser before the web app knows who they are. They post JSON to
// /auth/login and /auth/invites/:code/accept from this server's own origin
// (the Origin check passes), and the session cookie they receive is HttpOnly:
// no script, these pages included, can read it.
//
// Where the page goes after signing in (`?next=`) is decided here, on the
// server, and written into the page as data: only a path of this server
// (`safeNext`), else `/`. The browser never interprets the raw value.

import type { IncomingMessage, ServerResponse } from 'node:http';

const STYLE = `
  body{font:15px/1.45 system-ui,sans-serif;background:#0f1418;color:#e8edf0;display:grid;place-items:center;min-height:100vh;margin:0}
  form{background:#182027;padding:28px 32px;border-radius:10px;width:320px;box-shadow:0 8px 30px #0008}
  h1{font-size:20px;margin:0 0 16px} label{display:block;margin:12px 0 4px;color:#9fb0bb}
  input{width:100%;box-sizing:border-box;padding:8px 10px;border-radius:6px;border:1px solid #33424d;background:#0f1418;color:inherit;font:inherit}
  button{margin-top:18px;width:100%;padding:9px;border:0;border-radius:6px;background:#3b82f6;color:#fff;font:inherit;cursor:pointer}
  #msg{min-height:1.4em;margin-top:12px;color:#f59e9e}`;

/** A path as `next=` may name it: one "/" not followed by "/" or "\\", and no backslash or control character anywhere. */
const PATH_ONLY = /^\/(?![/\\])[^\\\x00-\x1f\x7f]*$/;

/**
 * Where to go after signing in: `next` when it is a path of this server
 * (`origin`), else `/`. The value is checked as given and once more decoded
 * (a double-encoded link such as `/%5Cevil`), then parsed with the URL API
 * against our own origin: it must keep that origin and a path that starts
 * with a single `/`. Only the path, query and fragment are returned.
 */
export function safeNext(next: string | null, origin: string): string {
  if (!next || next.length > 2000 || !PATH_ONLY.test(next)) return '/';
  let decoded: string;
  try {
    decoded = decodeURIComponent(next);
  } catch {
    return '/';
  }
  if (!PATH_ONLY.test(decoded.split(/[?#]/, 1)[0])) return '/';
  let u: URL;
  try {
    u = new URL(next, origin);
  } catch {
    return '/';
  }
  if (u.origin !== new URL(origin).origin || !/^\/(?![/\\])/.test(u.pathname)) return '/';
  return u.pathname + u.search + u.hash;
}

/** A string as a JavaScript literal inside an inline script: it cannot close the element. */
function scriptString(s: string): string {
  return JSON.stringify(s).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function page(title: string, fields: string, script: string, next: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · Roost</title><style>${STYLE}</style></head><body>
<form id="f"><h1>${title}</h1>${fields}<button type="submit">${title}</button><div id="msg" role="alert"></div></form>
<script>
const f = document.getElementById('f'), msg = document.getElementById('msg');
const next = ${scriptString(next)};
const go = () => location.assign(next);
f.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  msg.textContent = '';
  const body = Object.fromEntries(new FormData(f));
  ${script}
  try {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(body), credentials: 'same-origin' });
    if (r.ok) return go();
    msg.textContent = (await r.json().catch(() => ({}))).message || ('failed: ' + r.status);
  } catch (e) { msg.textContent = 'the server cannot be reached'; }
});
</script></body></html>`;
}

const signIn = (next: string) => page(
  'Sign in',
  `<label for="login">Login</label><input id="login" name="login" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>`,
  `const url = '/auth/login';`,
  next,
);

const accept = (next: string) => page(
  'Join Roost',
  `<label for="login">Choose a login</label><input id="login" name="login" autocomplete="username" required autofocus pattern="[a-z0-9][a-z0-9._\\-]{0,63}">
<label for="name">Your name</label><input id="name" name="name" autocomplete="name">
<label for="password">Password (8 characters or more)</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required>`,
  `const code = location.pathname.split('/').pop(); const url = '/auth/invites/' + encodeURIComponent(code) + '/accept';`,
  next,
);

function html(res: ServerResponse, body: string): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-cache',
    // Not framable: a sign-in form inside a foreign page is how clickjacking starts.
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  });
  res.end(body);
}

/** This server's origin as the request reached it (the edge has checked its Host). */
function ownOrigin(req: IncomingMessage): string {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  try {
    return new URL(`${scheme}://${req.headers.host ?? 'localhost'}`).origin;
  } catch {
    return `${scheme}://localhost`;
  }
}

/** GET /signin[?next=/path] */
export const signInPage = (req: IncomingMessage, res: ServerResponse, url: URL): void => html(res, signIn(safeNext(url.searchParams.get('next'), ownOrigin(req))));
/** GET /invite/:code[?next=/path] */
export const invitePage = (req: IncomingMessage, res: ServerResponse, url: URL): void => html(res, accept(safeNext(url.searchParams.get('next'), ownOrigin(req))));
