// The layers point down only: core ← storage ← server ← cli. The floor fold
// imports nothing at all, so anyone (a browser, a script) can load it alone.
// This reads the import lines of every source file; it does not run them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
export function importsOf(code: string): string[] {
  const text = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, // import x from '..', export * from '..', import type ...
    /\bimport\s*['"]([^'"]+)['"]/g, // import '..' (side effects)
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, // import('..')
    /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]);
  return out;
}

/** The top-level folder under src/ a relative import lands in, or null for packages and builtins. */
function layerOfImport(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const target = relative(SRC, resolve(dirname(file), spec));
  if (target.startsWith('..')) return '<outside src>';
  return target.split(sep)[0];
}

const files = walk(SRC).map((f) => ({ file: f, rel: relative(SRC, f), layer: relative(SRC, f).split(sep)[0], imports: importsOf(readFileSync(f, 'utf8')) }));

test('the import parser sees the imports it must see (so the checks below cannot pass vacuously)', () => {
  const server = files.find((f) => f.rel === join('server', 'floor.ts'));
  assert.ok(server, 'src/server/floor.ts exists');
  assert.ok(server.imports.includes('../core/floor.js'));
  assert.ok(server.imports.includes('node:http'));
  assert.deepEqual(importsOf("import {\n  a,\n  b,\n} from './x.js';\nexport * from \"./y.js\";\nconst m = await import('../z.js');\nimport './side.js';"), ['./x.js', './y.js', './side.js', '../z.js']);
  assert.deepEqual(importsOf('// import x from "./no.js"\n/* import y from "./no.js" */'), []);
});

test('src/core/floor.ts has no import at all', () => {
  const floor = files.find((f) => f.rel === join('core', 'floor.ts'));
  assert.ok(floor);
  assert.deepEqual(floor.imports, []);
});

test('src/core imports only src/core (no packages, no node builtins)', () => {
  const bad = files
    .filter((f) => f.layer === 'core')
    .flatMap((f) => f.imports.filter((i) => layerOfImport(f.file, i) !== 'core').map((i) => `${f.rel} imports ${i}`));
  assert.deepEqual(bad, []);
});

test('the flock modules import only src/core: personas nothing at all, the fold only the personas', () => {
  const of = (name: string) => files.find((f) => f.rel === join('core', name));
  for (const name of ['flock.ts', 'flock-wire.ts', 'personas.ts']) assert.ok(of(name), `src/core/${name} exists`);
  assert.deepEqual(of('personas.ts')!.imports, []);
  assert.deepEqual(of('flock.ts')!.imports, ['./personas.js']);
  assert.deepEqual(of('flock-wire.ts')!.imports.filter((i) => layerOfImport(of('flock-wire.ts')!.file, i) !== 'core'), []);
});

test('layers point down only: storage never imports server or cli; server never imports cli', () => {
  const forbidden: Record<string, string[]> = {
    // src/models (model providers) sits beside integrations: it talks to the outside and knows nothing of storage or the server.
    models: ['storage', 'server', 'cli', 'bridge', 'web'],
    core: ['storage', 'server', 'cli', 'web', 'models'],
    storage: ['server', 'cli', 'web'],
    server: ['cli'],
  };
  const bad = files.flatMap((f) =>
    f.imports
      .filter((i) => {
        const to = layerOfImport(f.file, i);
        return to !== null && (forbidden[f.layer] ?? []).includes(to);
      })
      .map((i) => `${f.rel} imports ${i}`),
  );
  assert.deepEqual(bad, []);
});
