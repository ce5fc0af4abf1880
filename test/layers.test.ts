// The layers point one way, in every folder of the repository:
//
//   src/core            the pure folds and wire types: imports only src/core
//                       (no package, no node builtin), and reads no clock and
//                       draws no random number
//   src/integrations    never storage, server, bridge or cli
//   src/models          never storage, server, bridge or cli
//   src/storage         never server, bridge or cli
//   src/server          never bridge or cli
//   src/bridge          never server, storage or cli (it talks HTTP)
//   src/cli             the top: anything in src
//   web/src             only src/core (and packages; no node builtins)
//   bin/*.js            only dist/src/{cli,core,integrations}
//   bench, test         anything
//
// and nothing under src imports from outside src. The fold modules that a
// browser or a script loads alone (fleet, identity, ...) import nothing at
// all; the floor and Work folds import only their own parts. This reads the import lines of every file; it runs nothing.
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
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
export function importsOf(code: string): string[] {
  // Line comments first: one may hold a `/*` (a glob such as `src/core/floor/*`)
  // that would otherwise open a block comment and hide the imports after it.
  const text = code.replace(/^\s*\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
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

/** Where a repository path lives: `src/<layer>`, `web`, `bin`, `bench`, `test`, `dist/src/<layer>`, or `other`. */
function placeOf(path: string): string {
  const parts = relative(ROOT, path).split(sep);
  if (parts[0] === 'src') return `src/${parts[1]}`;
  if (parts[0] === 'web' && parts[1] === 'src') return 'web';
  if (parts[0] === 'dist' && parts[1] === 'src') return `dist/src/${parts[2]}`;
  if (['bin', 'bench', 'test'].includes(parts[0])) return parts[0];
  return 'other';
}

/** The place a relative import lands in; `package` or `builtin` for the others. */
function targetOf(file: string, spec: string): string {
  if (spec.startsWith('node:')) return 'builtin';
  if (!spec.startsWith('.')) return 'package';
  return placeOf(resolve(dirname(file), spec));
}

/** The layer under src/ a relative import lands in, or null for packages and builtins (for the older checks below). */
function layerOfImport(file: string, spec: string): string | null {
  const t = targetOf(file, spec);
  if (t === 'package' || t === 'builtin') return null;
  return t.startsWith('src/') ? t.slice(4) : '<outside src>';
}

const ALL = ['src', 'web/src', 'bin', 'bench', 'test'].flatMap((d) => walk(join(ROOT, d)));
const everything = ALL.map((f) => ({ file: f, rel: relative(ROOT, f), place: placeOf(f), imports: importsOf(readFileSync(f, 'utf8')) }));
const files = everything.filter((f) => f.place.startsWith('src/')).map((f) => ({ ...f, rel: relative(SRC, f.file), layer: f.place.slice(4) }));

/** For each place, the places its relative imports may not land in (`*` for "anything but what is listed in `only`"). */
const RULES: Record<string, { never?: string[]; only?: string[]; builtins?: boolean; packages?: boolean }> = {
  'src/core': { only: ['src/core'], builtins: false, packages: false },
  'src/integrations': { never: ['src/storage', 'src/server', 'src/bridge', 'src/cli'] },
  'src/models': { never: ['src/storage', 'src/server', 'src/bridge', 'src/cli', 'src/web'] },
  'src/storage': { never: ['src/server', 'src/bridge', 'src/cli'] },
  'src/server': { never: ['src/bridge', 'src/cli'] },
  'src/bridge': { never: ['src/server', 'src/storage', 'src/cli'] },
  web: { only: ['web', 'src/core'], builtins: false },
  bin: { only: ['bin', 'dist/src/cli', 'dist/src/core', 'dist/src/integrations'], packages: false },
};

function violations(list: { file: string; rel: string; place: string; imports: string[] }[] = everything): string[] {
  const bad: string[] = [];
  for (const f of list) {
    for (const spec of f.imports) {
      const to = targetOf(f.file, spec);
      if (f.place.startsWith('src/') && !to.startsWith('src/') && to !== 'package' && to !== 'builtin') bad.push(`${f.rel} imports ${spec}, outside src`);
      const rule = RULES[f.place];
      if (!rule) continue;
      if (to === 'builtin') {
        if (rule.builtins === false) bad.push(`${f.rel} imports the builtin ${spec}`);
      } else if (to === 'package') {
        if (rule.packages === false) bad.push(`${f.rel} imports the package ${spec}`);
      } else if ((rule.only && !rule.only.includes(to)) || rule.never?.includes(to)) {
        bad.push(`${f.rel} (${f.place}) imports ${spec} (${to})`);
      }
    }
  }
  return bad;
}

test('the import parser sees the imports it must see (so the checks below cannot pass vacuously)', () => {
  const server = files.find((f) => f.rel === join('server', 'floor.ts'));
  assert.ok(server, 'src/server/floor.ts exists');
  assert.ok(server.imports.includes('../core/floor.js'));
  assert.ok(server.imports.includes('node:http'));
  assert.deepEqual(importsOf("import {\n  a,\n  b,\n} from './x.js';\nexport * from \"./y.js\";\nconst m = await import('../z.js');\nimport './side.js';"), ['./x.js', './y.js', './side.js', '../z.js']);
  assert.deepEqual(importsOf('// import x from "./no.js"\n/* import y from "./no.js" */'), []);
  // A glob in a line comment opens no block comment: the imports after it are still read.
  assert.deepEqual(importsOf("// the parts (src/core/floor/*)\nimport { a } from './a.js';\n/** b */\nimport { c } from '../c.js';"), ['./a.js', '../c.js']);
  // Every folder the rules speak of is read, and its imports are seen.
  for (const place of ['src/core', 'src/integrations', 'src/storage', 'src/server', 'src/bridge', 'src/cli', 'web', 'bin', 'bench', 'test']) {
    const here = everything.filter((f) => f.place === place);
    assert.ok(here.length > 0, `files in ${place}`);
    if (place !== 'src/core') assert.ok(here.some((f) => f.imports.length > 0), `imports seen in ${place}`);
  }
  const hook = everything.find((f) => f.rel === join('bin', 'roost-hook.js'));
  assert.ok(hook?.imports.includes('../dist/src/core/approvals.js'), 'the hook script’s dynamic import is seen');
  assert.equal(targetOf(hook!.file, '../dist/src/core/approvals.js'), 'dist/src/core');
  const view = everything.find((f) => f.place === 'web' && f.imports.some((i) => i.includes('/src/core/')));
  assert.ok(view, 'a web file importing src/core is seen');
});

test('the rules catch what they forbid (checked on made-up files)', () => {
  const fake = (path: string, imports: string[]) => ({ file: join(ROOT, path), rel: path, place: placeOf(join(ROOT, path)), imports });
  const cases: [ReturnType<typeof fake>, number][] = [
    [fake('src/bridge/x.ts', ['../server/app.js', '../storage/index.js', '../cli/main.js', '../core/fleet.js']), 3],
    [fake('src/integrations/x.ts', ['../storage/index.js', '../bridge/index.js', '../core/floor.js']), 2],
    [fake('src/server/x.ts', ['../cli/main.js', '../../test/support/server.js', '../storage/types.js']), 2],
    [fake('src/core/x.ts', ['node:fs', 'preact', '../server/app.js', './floor.js']), 3],
    [fake('web/src/floor/x.ts', ['../../../src/server/app.js', 'node:path', 'preact', '../../../src/core/floor.js', '../shared/api.js']), 2],
    [fake('bin/x.js', ['../dist/src/server/app.js', '../dist/src/core/approvals.js', 'node:http', 'pg']), 2],
    [fake('bench/x.ts', ['../src/server/index.js', '../src/storage/index.js']), 0],
    [fake('test/x.ts', ['../src/server/index.js', './support/server.js']), 0],
  ];
  for (const [f, n] of cases) assert.equal(violations([f]).length, n, `${f.rel}: ${violations([f]).join('; ')}`);
});

test('every folder imports only what its layer may: core, integrations, models, storage, server, bridge, web, bin', () => {
  assert.deepEqual(violations(), []);
});

test('the fold modules a browser or a script loads alone import nothing at all', () => {
  for (const name of ['fleet.ts', 'identity.ts', 'approval-rules.ts', 'personas.ts', 'window.ts']) {
    const f = files.find((x) => x.rel === join('core', name));
    assert.ok(f, `src/core/${name} exists`);
    assert.deepEqual(f.imports, [], `src/core/${name} imports nothing`);
  }
});

test('the floor and Work folds import nothing outside themselves: src/core/floor.ts and src/core/work.ts import only their parts (src/core/floor/, src/core/work/), and the parts only each other', () => {
  // /lib/floor.js is served with its parts beside it (/lib/floor/*.js) and the
  // web app bundles both folds, so neither may reach anything else.
  for (const name of ['floor', 'work']) {
    const index = files.find((f) => f.rel === join('core', `${name}.ts`));
    assert.ok(index, `src/core/${name}.ts exists`);
    const parts = files.filter((f) => f.rel.startsWith(join('core', name) + sep));
    assert.ok(parts.length >= 5, `src/core/${name}/ holds the fold's parts`);
    const imported = new Set<string>();
    for (const f of [index, ...parts])
      for (const spec of f.imports) {
        const target = resolve(dirname(f.file), spec.replace(/\.js$/, '.ts'));
        const part = parts.find((p) => p.file === target);
        assert.ok(part && part !== f, `${f.rel} imports ${spec}: only a part of the ${name} fold`);
        imported.add(part.file);
      }
    // Every part is reached from the fold (none left behind when a job moves).
    for (const p of parts) assert.ok(imported.has(p.file), `${p.rel} is imported by the fold`);
  }
});

test('every module in src/core reads no clock and draws no random number (time and ids arrive on the events)', () => {
  // The core project compiles with an ES-only lib and no types, so I/O,
  // timers and Node or browser globals do not even type-check there; what
  // ES itself offers is checked here.
  const impure = [/\bDate\.now\s*\(/, /\bnew\s+Date\s*\(\s*\)/, /\bMath\.random\s*\(/, /\bcrypto\b/];
  const bad = files
    .filter((f) => f.layer === 'core')
    .flatMap((f) => {
      const code = readFileSync(f.file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      return impure.filter((re) => re.test(code)).map((re) => `${f.rel}: ${re.source}`);
    });
  assert.deepEqual(bad, []);
  assert.ok(files.filter((f) => f.layer === 'core').length >= 10, 'the core modules are read');
});

test('the flock modules import only src/core: personas nothing at all, the fold (src/core/flock.ts and its parts in src/core/flock/) only its own parts, the personas, the fleet fold (for a code flight\'s session id shape), the bounded collections\' trim, the one trust ledger and the people\'s labels', () => {
  const of = (name: string) => files.find((f) => f.rel === join('core', name));
  for (const name of ['flock.ts', 'flock-wire.ts', 'personas.ts']) assert.ok(of(name), `src/core/${name} exists`);
  assert.deepEqual(of('personas.ts')!.imports, []);
  // The fleet fold owns SESSION_ID_PATTERN and imports nothing itself (/lib/fleet.js loads alone), nor does bounded.ts, so the flock fold stays two modules deep at most.
  assert.deepEqual(of('bounded.ts')!.imports, []);
  // The trust ledger (src/core/trust.ts) is shared by the flock and the coding agents' approvals, and imports nothing;
  // nest-people.ts (the author labels of people in nests) imports nothing either.
  assert.deepEqual(of('trust.ts')!.imports, []);
  assert.deepEqual(of('nest-people.ts')!.imports, []);
  const outside = new Set(['bounded.ts', 'fleet.ts', 'nest-people.ts', 'personas.ts', 'trust.ts']);
  const fold = files.filter((f) => f.rel === join('core', 'flock.ts') || f.rel.startsWith(join('core', 'flock') + sep));
  assert.ok(fold.length >= 10, 'the fold is read in its parts');
  const seen = new Set<string>();
  for (const f of fold)
    for (const spec of f.imports) {
      const target = relative(join(SRC, 'core'), resolve(dirname(f.file), spec)).replace(/\.js$/, '.ts');
      seen.add(target);
      assert.ok(outside.has(target) || target === 'flock.ts' || target.startsWith('flock' + sep), `${f.rel} imports ${spec}`);
    }
  for (const name of outside) assert.ok(seen.has(name), `the fold imports ${name}`);
  // No part keeps a ledger of its own: the levels and their rules are the one ledger's.
  for (const f of fold) assert.doesNotMatch(readFileSync(f.file, 'utf8'), /PROMOTE_AFTER\s*=|TRUST_LEVELS\s*=|function (?:judge|levelOf|ownerLowers)\b/, `${f.rel} keeps no second trust ledger`);
  assert.deepEqual(of('flock-wire.ts')!.imports.filter((i) => layerOfImport(of('flock-wire.ts')!.file, i) !== 'core'), []);
});

// No import circles (DESIGN.md, house style): a type two files share lives in
// the lower one, and routes depend on their service, never the reverse. The
// graph is every relative import (type-only ones too) between the files of
// src/ and web/src; its strongly connected components (Tarjan's algorithm,
// linear in files plus imports) must each be one file that does not import itself.

/** The file a relative import names (`./x.js` is `x.ts`, `x.tsx` or `x.js`; a folder its index), or null. */
function fileOfImport(from: string, spec: string, known: ReadonlySet<string>): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(js|mjs|jsx)$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.js`, `${stem}.mjs`, join(base, 'index.ts'), join(base, 'index.tsx')]) if (known.has(c)) return c;
  return null;
}

/** The import circles of a graph (node to the nodes it imports): each strongly connected component with a cycle, its members sorted. */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    // An explicit stack of (node, position in its edge list): deep import chains do not overflow the call stack.
    const work: [string, number][] = [[root, 0]];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1];
      const [v, i] = top;
      const edges = graph.get(v) ?? [];
      if (i < edges.length) {
        top[1]++;
        const w = edges[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1 || edges.includes(v)) out.push(scc.sort());
      }
    }
  }
  return out;
}

test('the circle finder finds every circle of a made-up graph, and none where there is none', () => {
  const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
  // a -> b -> c -> a is one circle; d imports into it and e -> f -> e is a second one; g imports itself.
  const made = g({ a: ['b'], b: ['c'], c: ['a', 'x'], d: ['a'], x: [], e: ['f'], f: ['e', 'x'], g: ['g'] });
  assert.deepEqual(circles(made).map((c) => c.join(' ')).sort(), ['a b c', 'e f', 'g']);
  // The same without the edges back: a diamond and a chain, no circle.
  assert.deepEqual(circles(g({ a: ['b', 'c'], b: ['d'], c: ['d'], d: [], e: ['a'] })), []);
  // A chain of 10,000 files is read without overflowing the stack, and one edge back makes it a single circle.
  const chain = new Map(Array.from({ length: 10_000 }, (_, i) => [`m${i}`, i + 1 < 10_000 ? [`m${i + 1}`] : []] as [string, string[]]));
  assert.deepEqual(circles(chain), []);
  chain.set('m9999', ['m0']);
  assert.equal(circles(chain)[0]?.length, 10_000);
  // A circle of real-looking files resolved the way the tree's are: a view and its component importing each other's type.
  const web = ['web/src/flock/A.tsx', 'web/src/flock/components/B.tsx'].map((p) => join(ROOT, p));
  const known = new Set(web);
  assert.equal(fileOfImport(web[0], './components/B.js', known), web[1]);
  assert.equal(fileOfImport(web[1], '../A.js', known), web[0]);
  assert.deepEqual(circles(new Map([[web[0], [web[1]]], [web[1], [web[0]]]])), [web.slice().sort()]);
});

test('no import circles in src/ or web/src', () => {
  const mine = everything.filter((f) => f.place.startsWith('src/') || f.place === 'web');
  const known = new Set(mine.map((f) => f.file));
  const graph = new Map(mine.map((f) => [f.file, f.imports.map((i) => fileOfImport(f.file, i, known)).filter((x): x is string => x !== null)]));
  const edges = [...graph.values()].reduce((n, e) => n + e.length, 0);
  assert.ok(graph.size > 200 && edges > 500, `the graph is read (${graph.size} files, ${edges} imports)`);
  assert.deepEqual(circles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' <-> ')), []);
});

// Inside web/src (docs/web.md, "Where the code is"): views never import each
// other. A view's folder (floor, fleet, approvals, work) imports live/,
// shared/ and its own files; shared/ imports live/ and shared/; live/ only
// live/; the shell (main.tsx, pages.ts) anything. src/core is open to all of
// them (the web rule above).
test('web/src: views never import each other; shared/ and live/ sit below them', () => {
  const WEB = join(ROOT, 'web', 'src');
  const folderOf = (path: string) => {
    const parts = relative(WEB, path).split(sep);
    return parts.length === 1 ? '.' : parts[0];
  };
  const may = (from: string, to: string) => from === '.' || to === from || to === 'live' || (to === 'shared' && from !== 'live');
  const web = everything.filter((f) => f.place === 'web');
  assert.ok(web.some((f) => folderOf(f.file) === 'floor' && f.imports.some((i) => i.startsWith('../shared/'))), 'the parser sees a view import shared/');
  const bad = web.flatMap((f) =>
    f.imports.filter((i) => targetOf(f.file, i) === 'web' && !may(folderOf(f.file), folderOf(resolve(dirname(f.file), i)))).map((i) => `${f.rel} imports ${i}`),
  );
  assert.deepEqual(bad, []);
});
