#!/usr/bin/env node
// The checks `npm test` runs with the tests, side by side: they are
// independent, and each is one process that keeps one core busy, so on a small
// machine they take the time of the longest instead of the sum.
// - `tsc -b tsconfig.json test bin`: the build (src/core, web's types, the Node
//   build to dist/) and the tests' type-check, one build graph, each project once;
// - `vite build`: the web bundle the browser tests load;
// - `eslint --max-warnings 0 .`: the lint (eslint.config.js).
// scripts/test.mjs (`--checks`, as `npm test` runs it) starts them and the
// tests once the build and the bundle are done, while the lint, the longest,
// still runs; a failed build or bundle stops the run, a failed lint fails it
// at the end. Run alone (`node scripts/check.mjs`) it runs the three and
// prints each one's output whole when it ends; any failure fails the lot.
// `npm run build`, `npm run typecheck` and `npm run lint` still run one each.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
export const checks = {
  build: ['build + typecheck', bin('tsc'), ['-b', 'tsconfig.json', 'test', 'bin']],
  bundle: ['web bundle', bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']],
  lint: ['lint', bin('eslint'), ['--max-warnings', '0', '.']],
};

/** Starts one check; resolves to its name, exit code and output (printed with a ✔ or ✖ line when it ends). */
export function runCheck(key, t0 = Date.now()) {
  const [name, cmd, args] = checks[key];
  return new Promise((done) => {
    const p = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    p.stdout.on('data', (d) => out.push(d));
    p.stderr.on('data', (d) => out.push(d));
    p.on('error', (e) => out.push(Buffer.from(String(e) + '\n')));
    p.on('close', (code) => {
      const said = Buffer.concat(out).toString('utf8');
      process.stdout.write(`${code === 0 ? '✔' : '✖'} ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n${said}`);
      done({ name, code: code ?? 1, said });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const t0 = Date.now();
  const results = await Promise.all(Object.keys(checks).map((k) => runCheck(k, t0)));
  process.exit(results.every((r) => r.code === 0) ? 0 : 1);
}
