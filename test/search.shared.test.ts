// GET /api/search over real HTTP in shared mode (docs/search.md): a viewer
// finds the moments of their own project (tool calls, messages, approvals),
// newest first with the words marked, and nothing of another project; a
// hostile query is a 200 with only what its words find, never a 500.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';

describe('search in shared mode', () => {
  let srv: SharedServer;
  let dan: Caller;
  let betaViewer: Caller;
  before(async () => {
    srv = await sharedServer();
    const made = await call(srv.url, srv.owner, 'POST', '/projects', { id: 'beta' });
    assert.ok(made.status === 201 || made.status === 200, JSON.stringify(made.json));
    dan = await makeUser(srv, 'dan', 'default', 'viewer');
    betaViewer = await makeUser(srv, 'bea', 'beta', 'viewer');
    const alpha = await mintToken(srv, srv.owner, 'default', 'editor');
    const beta = await mintToken(srv, srv.owner, 'beta', 'editor');
    for (const [tok, ev] of [
      [alpha, { type: 'join', agent: 'a1', team: 'pay', status: 'working' }],
      [alpha, { type: 'tool', agent: 'a1', team: 'pay', tool: 'Edit', activity: 'Editing payments/refund.ts' }],
      [alpha, { type: 'message', agent: 'a1', team: 'pay', to: ['b2'], text: 'refund flow is fixed' }],
      [alpha, { type: 'tool', agent: 'b2', team: 'web', tool: 'Bash', activity: 'npm test payments' }],
      [beta, { type: 'tool', agent: 'z9', team: 'pay', tool: 'Edit', activity: 'Editing beta/refund.ts secret' }],
    ] as const) {
      const r = await call(srv.url, tok, 'POST', '/events', ev);
      assert.ok(r.status < 300, JSON.stringify(r.json));
    }
  });
  after(async () => {
    await srv?.close();
  });

  test('a viewer finds their project’s moments, newest first, words marked, filtered and paged', async () => {
    const r = await call(srv.url, dan, 'GET', '/api/search?q=refund');
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(
      r.json.hits.map((h: any) => [h.kind, h.agent]),
      [
        ['message', 'a1'],
        ['tool', 'a1'],
      ],
      'newest first, only this project',
    );
    const tool = r.json.hits[1];
    assert.equal(tool.stream, 'floor');
    assert.equal(tool.scope, 'floor:default');
    assert.equal(tool.team, 'pay');
    assert.equal(typeof tool.position, 'number');
    assert.equal(new Date(tool.ts).getTime(), tool.at);
    assert.match(tool.snippet, /payments\/«refund»\.ts/);
    const web = await call(srv.url, dan, 'GET', '/api/search?q=payments&team=web');
    assert.deepEqual(web.json.hits.map((h: any) => h.agent), ['b2']);
    const one = await call(srv.url, dan, 'GET', '/api/search?q=refund&limit=1');
    assert.equal(one.json.hits.length, 1);
    const two = await call(srv.url, dan, 'GET', `/api/search?q=refund&limit=1&cursor=${encodeURIComponent(one.json.next)}`);
    assert.deepEqual([...one.json.hits, ...two.json.hits], r.json.hits);
    const phrase = await call(srv.url, dan, 'GET', `/api/search?q=${encodeURIComponent('"refund flow"')}&kind=message&agent=a1`);
    assert.equal(phrase.json.hits.length, 1);
  });

  test('a viewer of one project finds nothing of another', async () => {
    const mine = await call(srv.url, dan, 'GET', '/api/search?q=secret');
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.json.hits, []);
    assert.equal((await call(srv.url, dan, 'GET', '/api/search?q=secret&project=beta')).status, 403, 'asking for another project is refused');
    const theirs = await call(srv.url, betaViewer, 'GET', '/api/search?q=refund&project=beta');
    assert.deepEqual(theirs.json.hits.map((h: any) => [h.agent, h.stream]), [['z9', 'floor:beta']]);
    assert.equal((await call(srv.url, { cookie: undefined }, 'GET', '/api/search?q=refund')).status, 401);
  });

  test('a hostile query is only words: a 200, never everything, never a 500', async () => {
    for (const q of ['*', 'refund OR secret', 'NEAR(refund payments)', 'words:refund', '"unclosed', "'); DROP TABLE events;--", 'x'.repeat(10_000), 'refund* OR '.repeat(900)]) {
      const r = await call(srv.url, dan, 'GET', `/api/search?q=${encodeURIComponent(q)}`);
      assert.equal(r.status, 200, `${q.slice(0, 30)}: ${JSON.stringify(r.json)}`);
      assert.ok(r.json.hits.length <= 2, q.slice(0, 30));
      for (const h of r.json.hits) assert.notEqual(h.agent, 'z9');
    }
    assert.equal((await call(srv.url, dan, 'GET', `/api/search?q=${'x'.repeat(10_001)}`)).status, 400);
    assert.equal((await call(srv.url, dan, 'GET', '/api/search?q=refund&cursor=nope')).status, 400);
    assert.equal((await call(srv.url, dan, 'GET', '/api/search?q=refund&from=yesterday')).status, 400);
    assert.equal((await call(srv.url, dan, 'GET', '/api/search?q=refund&limit=0')).status, 400);
  });
});
