#!/usr/bin/env node
// The checks `npm test` runs before the tests, side by side: they are
// independent, and each is one process that keeps one core busy, so on a small
// machine they take the time of the longest instead of the sum.
// - `tsc -b tsconfig.json test bin`: the build (src/core, web's types, the Node
//   build to dist/) and the tests' type-check, one build graph, each project once;
// - `vite build`: the web bundle the browser tests load;
// - `eslint --max-warnings 0 .`: the lint (eslint.config.js).
// Each one's output is printed whole when it ends; any failure fails the lot.
// `npm run build`, `npm run typecheck` and `npm run lint` still run one each.
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
const checks = [
  ['build + typecheck', bin('tsc'), ['-b', 'tsconfig.json', 'test', 'bin']],
  ['web bundle', bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']],
  ['lint', bin('eslint'), ['--max-warnings', '0', '.']],
];
const t0 = Date.now();
const codes = await Promise.all(
  checks.map(
    ([name, cmd, args]) =>
      new Promise((done) => {
        const p = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
        const out = [];
        p.stdout.on('data', (d) => out.push(d));
        p.stderr.on('data', (d) => out.push(d));
        p.on('error', (e) => out.push(Buffer.from(String(e) + '\n')));
        p.on('close', (code) => {
          process.stdout.write(`${code === 0 ? '✔' : '✖'} ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
          for (const d of out) process.stdout.write(d);
          done(code ?? 1);
        });
      }),
  ),
);
process.exit(codes.every((c) => c === 0) ? 0 : 1);
