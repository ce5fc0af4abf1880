// The files the server serves itself: the built web app (dist/web) with its
// single-page fallback, and the shared folds at stable URLs (/lib/*.js) for
// browsers and scripts.
//
// Invariants:
// - nothing outside dist/web (or the named /lib files, and a fold's parts in
//   its own folder beside it) is ever read: the path is normalized and must
//   stay under the web root;
// - hashed assets (dist/web/assets/*) are immutable; everything else is
//   revalidated (`no-cache`);
// - an app route (no file extension) is the single page; in shared mode a
//   browser that is not signed in is sent to the sign-in page first;
// - every file goes out with a strong ETag (a hash of its bytes), and a
//   request that names it in If-None-Match gets a 304, so `no-cache` files
//   are revalidated, not downloaded again;
// - text (HTML, scripts, styles, JSON, SVG) of 1 KB or more is sent brotli-
//   or gzip-compressed when the request accepts it (`Vary: Accept-Encoding`):
//   the app's scripts are about a quarter of their size on the wire. Each
//   file is read and compressed once per build (on the pool, not the event
//   loop) and kept while its size and mtime stay the same; what is kept is
//   bounded by the built files, since only a file that exists is.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
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
 * loads alone or with the files served here (fleet-wire.js imports fleet.js;
 * floor.js imports its parts, ./floor/*.js). The fleet fold was
 * /lib/sessions.js before the app was named "fleet" everywhere; that URL is
 * gone with the old /threads/.../sessions API.
 */
const LIB_FILES: Record<string, string> = {
  '/lib/floor.js': 'dist/src/core/floor.js',
  '/lib/floor-wire.js': 'dist/src/core/floor-wire.js',
  '/lib/fleet.js': 'dist/src/core/fleet.js',
  '/lib/fleet-wire.js': 'dist/src/core/fleet-wire.js',
};

/**
 * A fold's parts, served beside it at the URL its relative imports name
 * (/lib/floor.js imports ./floor/model.js, ...): any built `.js` file directly
 * in the folder, so a part added to the fold is served without a list to keep.
 */
const LIB_FOLDERS: Record<string, string> = {
  '/lib/floor/': 'dist/src/core/floor',
};

/** The built file a /lib URL names (relative to the package root), or null. */
function libFile(pathname: string): string | null {
  if (Object.hasOwn(LIB_FILES, pathname)) return LIB_FILES[pathname];
  const slash = pathname.lastIndexOf('/') + 1;
  const folder = pathname.slice(0, slash);
  const name = pathname.slice(slash);
  return Object.hasOwn(LIB_FOLDERS, folder) && /^[a-z0-9-]+\.js$/.test(name) ? `${LIB_FOLDERS[folder]}/${name}` : null;
}

/** Text worth compressing, from this size on. */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.webmanifest', '.svg']);
const COMPRESS_FROM = 1024;
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

type Coding = 'br' | 'gzip';

interface Kept {
  mtimeMs: number;
  size: number;
  body: Buffer;
  etag: string;
  compressible: boolean;
  /** Each coding's bytes, made on first use (null: it came out no smaller). */
  coded: Map<Coding, Promise<Buffer | null>>;
}

/** The codings a request accepts, best first (Accept-Encoding; `q=0` refuses one). */
export function acceptedCodings(header: string | undefined): Coding[] {
  if (!header) return [];
  const ok = new Set<string>();
  for (const part of header.slice(0, 512).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    ok.add(name);
  }
  const out: Coding[] = [];
  if (ok.has('br')) out.push('br');
  if (ok.has('gzip')) out.push('gzip');
  return out;
}

/** Whether If-None-Match names this ETag (or is `*`). */
function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .slice(0, 2048)
    .split(',')
    .some((t) => {
      const v = t.trim();
      return v === '*' || v === etag || v === `W/${etag}`;
    });
}

/** The built files as read, with their validators and compressed forms. */
class Files {
  private kept = new Map<string, Kept>();

  /** The file (read again when its size or mtime changed), or null when it is not a file. */
  async get(path: string): Promise<Kept | null> {
    let st;
    try {
      st = await stat(path);
    } catch {
      return null;
    }
    if (!st.isFile()) return null;
    const had = this.kept.get(path);
    if (had && had.mtimeMs === st.mtimeMs && had.size === st.size) return had;
    const body = await readFile(path);
    const k: Kept = {
      mtimeMs: st.mtimeMs,
      size: st.size,
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      compressible: COMPRESSIBLE.has(extname(path)) && body.length >= COMPRESS_FROM,
      coded: new Map(),
    };
    this.kept.set(path, k);
    return k;
  }

  /** The file's bytes in `coding`, or null when that is no smaller. */
  coded(k: Kept, coding: Coding): Promise<Buffer | null> {
    let p = k.coded.get(coding);
    if (!p) {
      const made =
        coding === 'br'
          ? brotli(k.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: k.body.length } })
          : gzipped(k.body, { level: 9 });
      p = made.then(
        (b) => (b.length < k.body.length ? b : null),
        () => null,
      );
      k.coded.set(coding, p);
    }
    return p;
  }
}

async function serveFile(files: Files, req: IncomingMessage, res: ServerResponse, path: string, cache: string): Promise<boolean> {
  const k = await files.get(path);
  if (!k) return false;
  const headers: Record<string, string | number> = {
    ...DOCUMENT_HEADERS,
    'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
    'cache-control': cache,
    etag: k.etag,
  };
  if (k.compressible) headers.vary = 'Accept-Encoding';
  if (notModified(req.headers['if-none-match'], k.etag)) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  let body = k.body;
  if (k.compressible) {
    for (const coding of acceptedCodings(req.headers['accept-encoding'])) {
      const b = await files.coded(k, coding);
      if (!b) continue;
      body = b;
      headers['content-encoding'] = coding;
      break;
    }
  }
  headers['content-length'] = body.length;
  res.writeHead(200, headers);
  res.end(body);
  return true;
}

/** The GET handler for every path no route claims. */
export function staticFiles(packageRoot: string, access: Access) {
  const webRoot = join(packageRoot, 'dist', 'web');
  const files = new Files();
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const lib = libFile(url.pathname);
    if (lib) {
      if (await serveFile(files, req, res, join(packageRoot, lib), 'no-cache')) return;
      throw new HttpError(404, 'not_found', `${url.pathname} is not built; run npm run build`);
    }
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '');
    const file = join(webRoot, rel);
    if (!file.startsWith(webRoot + sep) && file !== webRoot) throw new HttpError(404, 'not_found', 'not found');
    const immutable = rel.startsWith('assets' + sep) || rel.startsWith('assets/');
    // The service worker is revalidated on every load (`no-cache`, like the
    // page), so a new build's worker replaces the old one at once; it may
    // control the whole origin (its scope is `/`, where it is served).
    if (rel && (await serveFile(files, req, res, file, immutable ? 'public, max-age=31536000, immutable' : 'no-cache'))) return;
    if (extname(rel)) throw new HttpError(404, 'not_found', `no such file: ${url.pathname}`);
    // Shared mode: a browser that is not signed in is sent to the sign-in page first.
    if (access.mode === 'shared' && !access.principal(req)) {
      res.writeHead(302, { ...DOCUMENT_HEADERS, location: `/signin?next=${encodeURIComponent(url.pathname + url.search)}`, 'cache-control': 'no-cache' });
      res.end();
      return;
    }
    // App routes fall back to the single page.
    if (await serveFile(files, req, res, join(webRoot, 'index.html'), 'no-cache')) return;
    throw new HttpError(404, 'not_found', 'the web app is not built; run npm run build');
  };
}
