// The files the server serves itself: the built web app (dist/web) with its
// single-page fallback, and the shared folds at stable URLs (/lib/*.js) for
// browsers and scripts.
//
// Invariants:
// - nothing outside dist/web (or the named /lib files) is ever read: the
//   path is normalized and must stay under the web root;
// - hashed assets (dist/web/assets/*) are immutable; everything else is
//   revalidated (`no-cache`);
// - an app route (no file extension) is the single page; in shared mode a
//   browser that is not signed in is sent to the sign-in page first.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Access } from './access.js';
import { HttpError } from './http.js';
import { DOCUMENT_HEADERS } from './edge.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/**
 * The shared folds, served as is to browsers and scripts at stable URLs. Each
 * loads alone or with the files listed here (fleet-wire.js imports fleet.js).
 * The fleet fold was /lib/sessions.js before the app was named "fleet"
 * everywhere; that URL is gone with the old /threads/.../sessions API.
 */
const LIB_FILES: Record<string, string> = {
  '/lib/floor.js': 'dist/src/core/floor.js',
  '/lib/floor-wire.js': 'dist/src/core/floor-wire.js',
  '/lib/fleet.js': 'dist/src/core/fleet.js',
  '/lib/fleet-wire.js': 'dist/src/core/fleet-wire.js',
};

async function serveFile(res: ServerResponse, path: string, cache: string): Promise<boolean> {
  try {
    const st = await stat(path);
    if (!st.isFile()) return false;
    const body = await readFile(path);
    res.writeHead(200, {
      ...DOCUMENT_HEADERS,
      'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
      'content-length': body.length,
      'cache-control': cache,
    });
    res.end(body);
    return true;
  } catch {
    return false;
  }
}

/** The GET handler for every path no route claims. */
export function staticFiles(packageRoot: string, access: Access) {
  const webRoot = join(packageRoot, 'dist', 'web');
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const lib = LIB_FILES[url.pathname];
    if (lib) {
      if (await serveFile(res, join(packageRoot, lib), 'no-cache')) return;
      throw new HttpError(404, 'not_found', `${url.pathname} is not built; run npm run build`);
    }
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '');
    const file = join(webRoot, rel);
    if (!file.startsWith(webRoot + sep) && file !== webRoot) throw new HttpError(404, 'not_found', 'not found');
    const immutable = rel.startsWith('assets' + sep) || rel.startsWith('assets/');
    // The service worker is revalidated on every load (`no-cache`, like the
    // page), so a new build's worker replaces the old one at once; it may
    // control the whole origin (its scope is `/`, where it is served).
    if (rel && (await serveFile(res, file, immutable ? 'public, max-age=31536000, immutable' : 'no-cache'))) return;
    if (extname(rel)) throw new HttpError(404, 'not_found', `no such file: ${url.pathname}`);
    // Shared mode: a browser that is not signed in is sent to the sign-in page first.
    if (access.mode === 'shared' && !access.principal(req)) {
      res.writeHead(302, { ...DOCUMENT_HEADERS, location: `/signin?next=${encodeURIComponent(url.pathname + url.search)}`, 'cache-control': 'no-cache' });
      res.end();
      return;
    }
    // App routes fall back to the single page.
    if (await serveFile(res, join(webRoot, 'index.html'), 'no-cache')) return;
    throw new HttpError(404, 'not_found', 'the web app is not built; run npm run build');
  };
}
