// The built web app as the server sends it (src/server/static.ts): compressed
// when the browser accepts it, byte for byte the file once decoded, with an
// ETag that makes a revalidation a 304 instead of a download.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { inProcess } from './support/server.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { acceptedCodings } from '../src/server/static.js';

const roost = await inProcess();
after(() => roost.close());

const ASSETS = join(PACKAGE_ROOT, 'dist', 'web', 'assets');
// The largest script of the build (npm test builds first): what a browser waits for.
const script = readdirSync(ASSETS)
  .filter((f) => f.endsWith('.js'))
  .map((f) => ({ f, size: readFileSync(join(ASSETS, f)).length }))
  .sort((a, b) => b.size - a.size)[0].f;
const onDisk = readFileSync(join(ASSETS, script));

/** A raw GET (no client-side decoding): status, headers and the bytes as sent. */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const u = new URL(path, roost.url);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

test('a script goes out brotli- or gzip-compressed as the browser accepts, the same bytes once decoded, and plain to a client that accepts neither', async () => {
  const br = await get(`/assets/${script}`, { 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers.vary, 'Accept-Encoding');
  assert.match(String(br.headers['cache-control']), /immutable/);
  assert.ok(br.body.length < onDisk.length / 2, `the script is at least halved on the wire (${br.body.length} of ${onDisk.length} bytes)`);
  assert.ok(brotliDecompressSync(br.body).equals(onDisk), 'decoded, it is the built file');

  const gz = await get(`/assets/${script}`, { 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gunzipSync(gz.body).equals(onDisk));

  const plain = await get(`/assets/${script}`);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.body.equals(onDisk));
  const refused = await get(`/assets/${script}`, { 'accept-encoding': 'br;q=0, gzip;q=0' });
  assert.equal(refused.headers['content-encoding'], undefined, 'q=0 refuses a coding');
  assert.ok(refused.body.equals(onDisk));
});

test('every file has an ETag; naming it in If-None-Match gets a 304 with no body (the page, a script, a shared fold)', async () => {
  for (const path of ['/', `/assets/${script}`, '/lib/floor.js']) {
    const first = await get(path, { 'accept-encoding': 'gzip' });
    assert.equal(first.status, 200, path);
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[^"]+"$/, `${path} has a strong ETag`);
    const again = await get(path, { 'if-none-match': etag, 'accept-encoding': 'gzip' });
    assert.equal(again.status, 304, `${path}: revalidated, not sent again`);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.etag, etag);
    const other = await get(path, { 'if-none-match': '"something-else"' });
    assert.equal(other.status, 200, `${path}: another ETag gets the file`);
  }
  // The page keeps its security headers on either answer.
  const page = await get('/', { 'if-none-match': '"x"' });
  assert.equal(page.headers['x-frame-options'], 'DENY');
});

test('/lib/floor.js loads as a browser loads it: every module it imports, and theirs, is served beside it, and the whole folds an event', async () => {
  // Fetch the fold and follow its relative imports over HTTP, as a browser's
  // module loader does; lay the files out as served and import the result.
  const dir = mkdtempSync(join(tmpdir(), 'roost-lib-'));
  try {
    const served = new Map<string, string>();
    const todo = ['/lib/floor.js'];
    while (todo.length) {
      const path = todo.pop()!;
      if (served.has(path)) continue;
      const r = await get(path);
      assert.equal(r.status, 200, `${path} is served (run npm run build first)`);
      assert.match(String(r.headers['content-type']), /^text\/javascript/, path);
      const code = r.body.toString('utf8');
      served.set(path, code);
      for (const m of code.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)) {
        assert.ok(m[1].startsWith('./') || m[1].startsWith('../'), `${path} imports only relative modules (${m[1]})`);
        todo.push(new URL(m[1], 'http://x' + path).pathname);
      }
    }
    assert.ok(served.size > 1, 'the fold is served in its parts');
    assert.ok([...served.keys()].every((p) => p.startsWith('/lib/')), [...served.keys()].join(' '));
    for (const [path, code] of served) {
      const file = join(dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, code);
    }
    const floor = await import(pathToFileURL(join(dir, 'lib', 'floor.js')).href);
    const s = floor.emptyFloor();
    const fx = floor.applyEvent(s, { type: 'join', agent: 'lead', role: 'lead', team: 'core', ts: 1 });
    assert.deepEqual(fx, [{ kind: 'enter', agent: 'lead', team: 'core' }]);
    assert.equal(s.agents.get('lead').desk, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Only built scripts directly in the folder: no declarations, no other name, no way out.
  for (const path of ['/lib/floor/model.d.ts', '/lib/floor/nothing.js', '/lib/floor/..%2Fpackage.json', '/lib/work.js']) assert.equal((await get(path)).status, 404, path);
});

test('Accept-Encoding is read as a list with q-values, brotli first', () => {
  assert.deepEqual(acceptedCodings('gzip, deflate, br'), ['br', 'gzip']);
  assert.deepEqual(acceptedCodings('GZIP;q=0.5'), ['gzip']);
  assert.deepEqual(acceptedCodings('br;q=0, gzip'), ['gzip']);
  assert.deepEqual(acceptedCodings('identity'), []);
  assert.deepEqual(acceptedCodings(undefined), []);
  assert.deepEqual(acceptedCodings('*'), [], 'a wildcard is not taken as a promise to decode brotli');
});
