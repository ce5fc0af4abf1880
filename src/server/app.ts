// Wires the store, the apps and the routes into one HTTP server.

import { createServer, type Server } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventStore } from '../storage/types.js';
import { FloorService } from './floor.js';
import { ApprovalService } from './approvals.js';
import { SessionsService } from './sessions.js';
import { HookService } from './hooks.js';
import { WorkService } from './work.js';
import { HttpError, Router } from './http.js';

export interface RoostConfig {
  host: string;
  port: number;
  heartbeatMs: number;
  sweepEveryMs: number;
  snapshotEvery: number;
  ringSize: number;
  maxBufferedBytes: number;
  maxReplay: number;
  minFlushIntervalMs: number;
}

export const DEFAULTS: RoostConfig = {
  host: '127.0.0.1',
  port: 4319,
  heartbeatMs: 15_000,
  sweepEveryMs: 1_000,
  snapshotEvery: 10_000,
  ringSize: 10_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  maxReplay: 200_000,
  minFlushIntervalMs: 5,
};

/** The package root (this file lives at dist/src/server/app.js, or src/server/app.ts under tsx). */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), ...(import.meta.url.includes('/dist/') ? ['..', '..', '..'] : ['..', '..']));

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** The shared folds, served as is to browsers and scripts at stable URLs. */
const LIB_FILES: Record<string, string> = {
  '/lib/floor.js': 'dist/src/core/floor.js',
  '/lib/floor-wire.js': 'dist/src/core/floor-wire.js',
  '/lib/sessions.js': 'dist/src/core/sessions.js',
};

async function serveFile(res: import('node:http').ServerResponse, path: string, cache: string): Promise<boolean> {
  try {
    const st = await stat(path);
    if (!st.isFile()) return false;
    const body = await readFile(path);
    res.writeHead(200, {
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

export interface Roost {
  server: Server;
  floor: FloorService;
  approvals: ApprovalService;
  sessions: SessionsService;
  work: WorkService;
  store: EventStore;
  url: string;
  close(): Promise<void>;
}

export async function startRoost(store: EventStore, partial: Partial<RoostConfig> = {}): Promise<Roost> {
  const cfg: RoostConfig = { ...DEFAULTS, ...partial };
  const floor = new FloorService(store, {
    live: { heartbeatMs: cfg.heartbeatMs, maxBufferedBytes: cfg.maxBufferedBytes, ringSize: cfg.ringSize, minFlushIntervalMs: cfg.minFlushIntervalMs },
    sweepEveryMs: cfg.sweepEveryMs,
    snapshotEvery: cfg.snapshotEvery,
    maxReplay: cfg.maxReplay,
    version: VERSION,
  });
  await floor.start();
  // Approvals and agent hooks (docs/integrations.md).
  const approvals = new ApprovalService(store, {
    live: { heartbeatMs: cfg.heartbeatMs, maxBufferedBytes: cfg.maxBufferedBytes, ringSize: 1000, minFlushIntervalMs: cfg.minFlushIntervalMs },
    maxReplay: cfg.maxReplay,
  });
  await approvals.start();
  const hooks = new HookService(store, floor, approvals);
  // The fleet board: one sessions stream per thread (docs/sessions.md).
  const sessions = new SessionsService(store, {
    live: { heartbeatMs: cfg.heartbeatMs, maxBufferedBytes: cfg.maxBufferedBytes, ringSize: 1000, minFlushIntervalMs: cfg.minFlushIntervalMs },
    snapshotEvery: Math.min(cfg.snapshotEvery, 1000),
    maxReplay: cfg.maxReplay,
  });
  sessions.start();
  // Work: conversations, Spaces' agents, commands and results (docs/work.md).
  const work = new WorkService(store, {
    live: { heartbeatMs: cfg.heartbeatMs, maxBufferedBytes: cfg.maxBufferedBytes, ringSize: 1000, minFlushIntervalMs: cfg.minFlushIntervalMs },
    maxReplay: cfg.maxReplay,
  });
  await work.start();

  const webRoot = join(PACKAGE_ROOT, 'dist', 'web');
  const router = new Router()
    .on('POST', '/events', floor.postEvents)
    .on('GET', '/stream', floor.getStream)
    .on('GET', '/state', floor.getState)
    .on('GET', '/health', floor.getHealth)
    .on('POST', '/reset', floor.postReset)
    .on('GET', '/approvals', approvals.getApprovals)
    .on('GET', '/approvals/stream', approvals.getStream)
    .on('GET', '/approvals/:id', approvals.getApproval)
    .on('POST', '/approvals/:id/decision', approvals.postDecision)
    .on('GET', '/threads/:thread/sessions', sessions.getState)
    .on('POST', '/threads/:thread/sessions', sessions.post)
    .on('GET', '/threads/:thread/sessions/stream', sessions.getStream)
    .on('POST', '/threads/:thread/sessions/requests', sessions.postRequest)
    .on('POST', '/threads/:thread/sessions/live', sessions.postLive)
    .on('POST', '/hooks/:tool', hooks.post)
    .otherwise(async (_req, res, url) => {
      const lib = LIB_FILES[url.pathname];
      if (lib) {
        if (await serveFile(res, join(PACKAGE_ROOT, lib), 'no-cache')) return;
        throw new HttpError(404, 'not_found', `${url.pathname} is not built; run npm run build`);
      }
      const rel = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '');
      const file = join(webRoot, rel);
      if (!file.startsWith(webRoot + sep) && file !== webRoot) throw new HttpError(404, 'not_found', 'not found');
      const immutable = rel.startsWith('assets' + sep) || rel.startsWith('assets/');
      if (rel && (await serveFile(res, file, immutable ? 'public, max-age=31536000, immutable' : 'no-cache'))) return;
      if (extname(rel)) throw new HttpError(404, 'not_found', `no such file: ${url.pathname}`);
      // App routes fall back to the single page.
      if (await serveFile(res, join(webRoot, 'index.html'), 'no-cache')) return;
      throw new HttpError(404, 'not_found', 'the web app is not built; run npm run build');
    });

  work.mount(router);

  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, router.handle);
  server.on('clientError', (err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy(err);
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(cfg.port, cfg.host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
  const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  return {
    server,
    floor,
    approvals,
    sessions,
    work,
    store,
    url: `http://${host}:${port}`,
    async close() {
      await floor.stop();
      await approvals.stop();
      await sessions.stop();
      await work.stop();
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await store.close();
    },
  };
}

