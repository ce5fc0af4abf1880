// The built web app as the server sends it (src/server/static.ts): compressed
// when the browser accepts it, byte for byte the file once decoded, with an
// ETag that makes a revalidation a 304 instead of a download.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

test('Accept-Encoding is read as a list with q-values, brotli first', () => {
  assert.deepEqual(acceptedCodings('gzip, deflate, br'), ['br', 'gzip']);
  assert.deepEqual(acceptedCodings('GZIP;q=0.5'), ['gzip']);
  assert.deepEqual(acceptedCodings('br;q=0, gzip'), ['gzip']);
  assert.deepEqual(acceptedCodings('identity'), []);
  assert.deepEqual(acceptedCodings(undefined), []);
  assert.deepEqual(acceptedCodings('*'), [], 'a wildcard is not taken as a promise to decode brotli');
});
