// A fleet board's requests in shared mode: the token that posted a request
// (a bridge's, an agent's) is recorded as its asker (`askedBy`) and cannot
// decide it, through the one decide endpoint or the board's alias; its own
// deny on the board is a withdrawal (nobody decided); the person the token
// acts for, or another editor, decides it. Real server over HTTP.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';

describe('fleet board requests: whoever asked does not decide', () => {
  let srv: SharedServer;
  let bob: Caller, bobToken: Caller;
  const thread = 'shared-asks';

  before(async () => {
    srv = await sharedServer();
    bob = await makeUser(srv, 'bob', 'default', 'editor');
    bobToken = await mintToken(srv, bob, 'default', 'editor', 'bob bridge');
    const r = await call(srv.url, bobToken, 'POST', `/fleet/${thread}`, { type: 'session.spawn', id: 's1', session: 'fix-login' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
  });
  after(() => srv.close());

  /** The bridge's side, played by Bob's token: a request posted pending; its approval as the one model holds it. */
  async function ask(rid: string): Promise<any> {
    const r = await call(srv.url, bobToken, 'POST', `/fleet/${thread}`, { type: 'session.approval', id: 's1', rid, tool: 'Bash', digest: 'git push', state: 'pending' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const list = await call(srv.url, srv.owner, 'GET', '/approvals');
    const a = list.json.pending.find((x: any) => x.kind === 'fleet' && x.scope.rid === rid);
    assert.ok(a, 'the board request is a pending approval of kind fleet');
    return a;
  }

  async function board(rid: string): Promise<any> {
    const r = await call(srv.url, srv.owner, 'GET', `/fleet/${thread}`);
    return r.json.sessions.find((s: any) => s.id === 's1').approvals.find((a: any) => a.rid === rid);
  }

  test('the asking token is recorded, refused through both paths, and the request stays pending', async () => {
    const a = await ask('r1');
    assert.match(a.askedBy, /^token:/, 'the token that asked is the request\'s askedBy');
    const one = await call(srv.url, bobToken, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' });
    assert.equal(one.status, 403, JSON.stringify(one.json));
    const alias = await call(srv.url, bobToken, 'POST', `/fleet/${thread}`, { type: 'session.approval', id: 's1', rid: 'r1', state: 'allowed' });
    assert.equal(alias.status, 403, JSON.stringify(alias.json));
    assert.match(alias.json.message, /cannot answer its own/);
    const still = (await call(srv.url, srv.owner, 'GET', `/approvals/${a.id}`)).json;
    assert.equal(still.status, 'pending', 'still pending after both refusals');
    assert.equal((await board('r1')).state, 'pending', 'and pending on the board');

    // Bob himself, signed in, decides for his bridge: allowed, by Bob, on the board too.
    const yes = await call(srv.url, bob, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' });
    assert.equal(yes.status, 200, JSON.stringify(yes.json));
    assert.deepEqual([(await board('r1')).state, (await board('r1')).by], ['allowed', 'Bob']);
  });

  test('the asking token\'s deny on the board withdraws the request: nobody decided', async () => {
    const a = await ask('r2');
    const deny = await call(srv.url, bobToken, 'POST', `/fleet/${thread}`, { type: 'session.approval', id: 's1', rid: 'r2', state: 'denied' });
    assert.equal(deny.status, 200, JSON.stringify(deny.json));
    const closed = (await call(srv.url, srv.owner, 'GET', `/approvals/${a.id}`)).json;
    assert.deepEqual([closed.status, closed.decidedBy], ['withdrawn', '']);
    assert.equal((await board('r2')).state, 'denied', 'the board shows it denied');
    const late = await call(srv.url, srv.owner, 'POST', `/approvals/${a.id}/decision`, { decision: 'allow' });
    assert.equal(late.status, 409, 'a later allow finds it closed');
  });
});
