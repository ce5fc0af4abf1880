// The web app's build: one single-page app for every view, bundled from
// web/ into dist/web/, which the server serves (with index.html for the app's
// pages). The folds are imported from src/core/ and bundled, so the browser
// folds with exactly the server's code.
//
// `npx vite --config web/vite.config.ts` serves the app from source for
// hacking on the UI, against a running `roost serve` (ROOST_URL, default
// http://127.0.0.1:4319): Vite answers its own module paths and a browser
// loading one of the app's pages; every other request (the API, the streams,
// the sign-in pages) goes to Roost as it is. No list of API paths to go stale.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';
import { isPage } from './src/pages.js';

const ROOST = process.env.ROOST_URL ?? 'http://127.0.0.1:4319';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: {
      // Everything but Vite's own paths (/@vite/…, /@id/…, /@fs/…, /src/…, /node_modules/…).
      '^/(?!@|src/|node_modules/)': {
        target: ROOST,
        // A page load of the app (Accept names text/html first, as the server checks) is Vite's.
        bypass: (req) => {
          const pathname = new URL(req.url ?? '/', 'http://x').pathname;
          return /^\s*text\/html\s*(,|;|$)/i.test(req.headers.accept ?? '') && isPage(pathname) ? '/index.html' : undefined;
        },
      },
    },
  },
});
