// The web app's build: one single-page app for every view, bundled from
// web/ into dist/web/, which the server serves (with an index.html fallback
// for app routes). The floor fold is imported from src/core/ and bundled, so
// the browser folds with exactly the server's code.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

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
    // `npx vite --config web/vite.config.ts` for hacking on the UI against a running `roost serve`.
    proxy: {
      '/stream': 'http://127.0.0.1:4319',
      '/events': 'http://127.0.0.1:4319',
      '/state': 'http://127.0.0.1:4319',
      '/health': 'http://127.0.0.1:4319',
      '/reset': 'http://127.0.0.1:4319',
      // The approvals inbox's API and stream (the page itself is /inbox, served by Vite).
      '/approvals': 'http://127.0.0.1:4319',
    },
  },
});
