// The route tables: one set of checks in one order for every app, the same
// errors everywhere, and the security doc's table kept equal to the tables.
// Each case here was a defect on main before the route tables (each failed
// first): ids that are Object.prototype keys answered 500 (or 200 with
// nothing), a malformed percent-encoded path did not match its route (404),
// and an over-long string was 413 in Work but 400 elsewhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { inProcess } from './support/server.js';
import type { Roost } from '../src/server/index.js';
import { routeTableMarkdown } from '../src/server/route.js';

const PROTO = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(base + path, {
    method,
    // A bodiless write says it is not a cross-site form (docs/security.md).
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : method !== 'GET' ? { 'roost-client': 'test' } : {}), ...(method === 'POST' ? { 'idempotency-key': crypto.randomUUID() } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, text };
}

describe('the route tables', () => {
  let srv: Roost;
  let space = '';
  before(async () => {
    srv = await inProcess();
    // A Space contributed to the default project, so the Space routes reach their lookups.
    const sp = await call(srv.url, 'POST', '/api/v2/spaces', { name: 'box' });
    assert.equal(sp.status, 200);
    space = sp.json.id;
    assert.equal((await call(srv.url, 'POST', '/api/v2/projects/default/spaces', { space })).status, 200);
  });
  after(() => srv.close());

  test('an id that is an Object.prototype key is a 404 on every route that looks one up, never a 500 or an empty 200', async () => {
    const cases: [string, string, unknown?][] = [
      ['GET', '/api/v2/conversations/:id?project=default'],
      ['GET', '/api/v2/agents/:id?project=default'],
      ['GET', '/api/v2/executions/:id?project=default'],
      ['GET', '/api/v2/results/:id?project=default'],
      ['POST', '/api/v2/conversations/:id/messages?project=default', { text: 'hello' }],
      ['POST', '/api/v2/agents/:id/callable?project=default', { callable: true }],
      ['POST', '/api/v2/commands/:id/cancel?project=default', {}],
      ['POST', '/api/v2/commands?project=default', { agent: ':id', text: 'go' }],
      ['GET', '/api/v2/spaces/:id/commands'],
      ['POST', '/api/v2/spaces/:id/agents', { agents: [] }],
      ['POST', '/api/v2/spaces/:id/executions', { command: 'k-1', event: 'started' }],
      ['POST', '/api/v2/spaces/:id/terminal', { session: 'x', data: 'y' }],
      ['POST', '/api/v2/projects/default/spaces', { space: ':id' }],
      ['POST', '/api/v2/projects/default/spaces/:id/revoke'],
      ['POST', '/api/v2/spaces/:space/executions', { command: ':id', event: 'started' }],
      ['GET', '/approvals/:id'],
      ['POST', '/approvals/:id/decision', { decision: 'allow' }],
      ['POST', '/fleet/t/live', { type: 'session.stream', id: ':id', text: 'a' }],
      ['POST', '/fleet/t', { type: 'session.status', id: ':id', state: 'running' }],
      ['DELETE', '/tokens/:id'],
    ];
    const wrong: string[] = [];
    for (const [method, path, body] of cases) {
      for (const id of PROTO) {
        const p = path.replaceAll(':space', space).replaceAll(':id', encodeURIComponent(id));
        const b = body === undefined ? undefined : JSON.parse(JSON.stringify(body).replaceAll(':id', id));
        const r = await call(srv.url, method, p, b);
        // DELETE /tokens/:id is shared mode only (409 in local mode); everything else names a missing thing.
        const want = method === 'DELETE' ? 409 : 404;
        if (r.status !== want) wrong.push(`${method} ${p} -> ${r.status} ${r.text.slice(0, 80)}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('a malformed percent-encoded path is a 400 that says so, on a route and off one', async () => {
    for (const [method, path] of [
      ['GET', '/approvals/%E0%A4%A'],
      ['GET', '/fleet/%ZZ'],
      ['POST', '/api/v2/conversations/%C0/messages?project=default'],
      ['GET', '/assets/%E0%A4%A.js'],
      ['GET', '/%'],
    ]) {
      const r = await call(srv.url, method, path, method === 'POST' ? { text: 'x' } : undefined);
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.equal(r.json?.kind, 'bad_request');
      assert.match(r.json.message, /percent-encod/);
    }
  });

  test('an over-long string is a 400 naming the field in every app; 413 is only for a body over its size or a batch over its count', async () => {
    // Work (was 413), the fleet board, identity-less local mode's project names.
    const long = await call(srv.url, 'POST', '/api/v2/conversations?project=default', { title: 'x'.repeat(5000) });
    assert.equal(long.status, 400, long.text);
    assert.equal(long.json.kind, 'bad_request');
    assert.match(long.json.message, /"title" is longer than \d+ characters/);
    const cmd = await call(srv.url, 'POST', '/api/v2/commands?project=default', { agent: `${space}:x`, text: 'x'.repeat(20_001) });
    assert.equal(cmd.status, 400, cmd.text);
    assert.match(cmd.json.message, /"text" is longer than 20000 characters/);
    const board = await call(srv.url, 'POST', '/fleet/t', { type: 'session.spawn', id: 's1', root: 'r'.repeat(301) });
    assert.equal(board.status, 400);
    assert.match(board.json.message, /"root" is longer than 300/);
    // A batch over its count is a 413 (the fleet's 200 events; a Space's 200 observations).
    const batch = await call(srv.url, 'POST', `/api/v2/spaces/${space}/agents`, { agents: Array.from({ length: 201 }, (_, i) => ({ session: `s${i}` })) });
    assert.equal(batch.status, 413, batch.text);
    assert.equal(batch.json.kind, 'too_large');
    // A body over the route's byte limit is a 413 too.
    const big = await call(srv.url, 'POST', '/approvals/x/decision', { decision: 'allow', reason: 'x'.repeat(20_000) });
    assert.equal(big.status, 413);
    // A wrong content type is a 415, the same on every route with a body.
    for (const path of ['/api/v2/conversations?project=default', '/approvals/x/decision', '/fleet/t', '/projects']) {
      const r = await fetch(srv.url + path, { method: 'POST', headers: { 'content-type': 'text/plain', 'roost-client': 'test' }, body: '{}' });
      assert.equal(r.status, 415, path);
      assert.equal(((await r.json())).kind, 'unsupported_media_type');
    }
  });

  test('a field of the wrong type says which field and what it must be', async () => {
    const r = await call(srv.url, 'POST', '/approvals/x/decision', { decision: 'maybe' });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /"decision" must be one of "allow", "deny"/);
    const c = await call(srv.url, 'POST', '/api/v2/conversations/general/messages', { text: 42 });
    assert.equal(c.status, 400);
    assert.match(c.json.message, /"text" must be a string/);
    const n = await call(srv.url, 'POST', '/api/v2/conversations?project=default', []);
    assert.equal(n.status, 400);
    assert.match(n.json.message, /the body must be a JSON object/);
  });

  test("docs/security.md's route table is the route tables: every route, its method, path and minimum", () => {
    const doc = readFileSync(new URL('../docs/security.md', import.meta.url), 'utf8');
    const begin = doc.indexOf('<!-- routes:begin -->');
    const end = doc.indexOf('<!-- routes:end -->');
    assert.ok(begin > 0 && end > begin, 'docs/security.md has the generated route table between its markers');
    const inDoc = doc.slice(begin + '<!-- routes:begin -->'.length, end).trim();
    const want = routeTableMarkdown(srv.routes);
    assert.equal(inDoc, want, 'run `npm run build && node scripts/route-doc.mjs` to regenerate the table');
  });
});
