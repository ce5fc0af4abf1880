// The fleet board's approvals are approvals of the one model (kind `fleet`):
// a bridge's pending `session.approval` is a request in the approvals fold,
// decided through POST /approvals/:id/decision (or the board's own post, an
// alias of the same decide), first decision wins, and the board shows the
// outcome as the server's echo. A bridge that goes away, or a session closed,
// withdraws its requests. Real server over HTTP; the bridge is played by an
// HTTP client that speaks as one (its headers, its stream).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { answer, inProcess } from './support/server.js';
import { openSse, type SseReader } from './support/sse.js';
import { until } from './support/until.js';

type Server = Awaited<ReturnType<typeof inProcess>>;

const BRIDGE = { 'roost-name': 'Claude', 'roost-client': 'bridge', 'roost-bridge': 'b0123456789' };

async function send(srv: Server, thread: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  return answer(await fetch(`${srv.url}/fleet/${thread}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }));
}

async function decide(srv: Server, id: string, decision: 'allow' | 'deny', by?: string): Promise<{ status: number; json: any }> {
  return answer(await fetch(`${srv.url}/approvals/${encodeURIComponent(id)}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision, by }) }));
}

async function approvals(srv: Server): Promise<{ pending: any[]; recent: any[] }> {
  return (await fetch(`${srv.url}/approvals?recent=100`)).json() as Promise<{ pending: any[]; recent: any[] }>;
}

async function boardApproval(srv: Server, thread: string, session: string, rid: string): Promise<any> {
  const b = (await (await fetch(`${srv.url}/fleet/${thread}`)).json()) as { sessions: { id: string; approvals: { rid: string }[] }[] };
  return b.sessions.find((s) => s.id === session)?.approvals.find((a) => a.rid === rid);
}

/** The bridge's side: a session spawned, then a request posted pending with its waiting status (as src/bridge/approvals.ts does). */
async function ask(srv: Server, thread: string, session: string, rid: string, tool = 'Bash', digest = 'git push origin main'): Promise<any> {
  const r = await send(
    srv,
    thread,
    [
      { type: 'session.approval', id: session, rid, session: 'fix-login', tool, digest, state: 'pending' },
      { type: 'session.status', id: session, state: 'waiting', activity: `needs approval: ${tool}` },
    ],
    BRIDGE,
  );
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const a = (await approvals(srv)).pending.find((x) => x.kind === 'fleet' && x.scope.rid === rid);
  assert.ok(a, 'the board request is a pending approval of kind fleet');
  return a;
}

describe('fleet board approvals in the one approvals model', () => {
  let srv: Server;
  let stream: SseReader;
  const thread = 'ft';
  before(async () => {
    srv = await inProcess(); // the default grace (1 s): "within 2 s" is measured as shipped
    // The bridge follows its board (this keeps its requests held).
    stream = await openSse(`${srv.url}/fleet/${thread}/stream`, BRIDGE);
    await stream.waitFor((f) => f.event === 'snapshot');
    const r = await send(srv, thread, { type: 'session.spawn', id: 's1', session: 'fix-login', flavor: 'scoped', root: '~/src/app' }, BRIDGE);
    assert.equal(r.status, 200);
  });
  after(async () => {
    stream.close();
    await srv.close();
  });

  test('a board request appears in GET /approvals as kind fleet, with its asker, scope, tool and holder', async () => {
    const a = await ask(srv, thread, 's1', 'r1');
    assert.equal(a.status, 'pending');
    assert.equal(a.asker, 's1');
    assert.equal(a.askerName, 'fix-login');
    assert.deepEqual(a.scope, { thread, session: 's1', rid: 'r1' });
    assert.equal(a.tool, 'Bash');
    assert.equal(a.input, 'git push origin main');
    assert.equal(a.source, 'bridge');
    assert.match(a.holder, /^bridge:[A-Za-z0-9_-]+$/);
    assert.match(a.id, /^fl_[0-9a-f]{24}$/);
    // Asking again (the bridge's retry) names the same request.
    const again = await send(srv, thread, { type: 'session.approval', id: 's1', rid: 'r1', tool: 'Bash', state: 'pending' }, { ...BRIDGE, 'idempotency-key': 'x1' });
    assert.equal(again.status, 409);
    assert.equal((await approvals(srv)).pending.filter((x) => x.scope.rid === 'r1').length, 1);
  });

  test('decided through /approvals/:id/decision: the board and the bridge see it, a second decision either way is 409', async () => {
    const a = (await approvals(srv)).pending.find((x) => x.scope.rid === 'r1');
    const ok = await decide(srv, a.id, 'allow', 'Ana');
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.deepEqual([ok.json.approval.status, ok.json.approval.decidedBy], ['allowed', 'Ana']);
    // Answered once the board holds the echo: the bridge's stream carries the decision.
    assert.deepEqual(await boardApproval(srv, thread, 's1', 'r1'), { rid: 'r1', tool: 'Bash', digest: 'git push origin main', state: 'allowed', by: 'Ana' });
    const f = await stream.waitFor((x) => x.event === 'event' && JSON.parse(x.data).event.type === 'session.approval' && JSON.parse(x.data).event.state === 'allowed');
    assert.equal(JSON.parse(f.data).event.name, 'Ana');
    const second = await decide(srv, a.id, 'deny', 'Bob');
    assert.equal(second.status, 409);
    assert.match(second.json.message, /already allowed by Ana/);
    const alias = await send(srv, thread, { type: 'session.approval', id: 's1', rid: 'r1', state: 'denied' }, { 'roost-name': 'Bob' });
    assert.equal(alias.status, 409);
    assert.match(alias.json.message, /already allowed by Ana/);
    const rec = (await approvals(srv)).recent.find((x) => x.id === a.id);
    assert.deepEqual([rec.status, rec.decidedBy], ['allowed', 'Ana']);
  });

  test("the board's own decision post is an alias of the same decide: recorded in the approvals fold, and /approvals then 409", async () => {
    const a = await ask(srv, thread, 's1', 'r2', 'Edit', 'src/app.ts');
    const alias = await send(srv, thread, { type: 'session.approval', id: 's1', rid: 'r2', state: 'denied', name: 'Mallory' }, { 'roost-name': 'Ana' });
    assert.equal(alias.status, 200, JSON.stringify(alias.json));
    const rec = (await approvals(srv)).recent.find((x) => x.id === a.id);
    assert.deepEqual([rec.status, rec.decidedBy], ['denied', 'Ana']);
    assert.deepEqual(await boardApproval(srv, thread, 's1', 'r2'), { rid: 'r2', tool: 'Edit', digest: 'src/app.ts', state: 'denied', by: 'Ana' });
    const late = await decide(srv, a.id, 'allow');
    assert.equal(late.status, 409);
  });

  test('racing decisions through both paths: exactly one wins', async () => {
    const a = await ask(srv, thread, 's1', 'r3');
    const [x, y] = await Promise.all([decide(srv, a.id, 'allow', 'Ana'), send(srv, thread, { type: 'session.approval', id: 's1', rid: 'r3', state: 'denied' }, { 'roost-name': 'Bob' })]);
    assert.deepEqual([x.status, y.status].sort(), [200, 409], JSON.stringify([x.json, y.json]));
    const b = await boardApproval(srv, thread, 's1', 'r3');
    const rec = (await approvals(srv)).recent.find((r) => r.id === a.id);
    assert.equal(b.state, rec.status, 'the board shows the one outcome');
    assert.equal(b.by, rec.decidedBy);
  });

  test('unknown ids are 404', async () => {
    assert.equal((await decide(srv, 'fl_000000000000000000000000', 'allow')).status, 404);
    const r = await send(srv, thread, { type: 'session.approval', id: 's1', rid: 'nope', state: 'allowed' }, { 'roost-name': 'Ana' });
    assert.equal(r.status, 404);
  });

  test("the bridge's own window denial withdraws the request (nobody decided), and the board shows it denied", async () => {
    const a = await ask(srv, thread, 's1', 'r4');
    const r = await send(srv, thread, { type: 'session.approval', id: 's1', rid: 'r4', session: 'fix-login', tool: 'Bash', state: 'denied' }, BRIDGE);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const rec = (await approvals(srv)).recent.find((x) => x.id === a.id);
    assert.equal(rec.status, 'withdrawn');
    assert.equal(rec.decidedBy, '');
    assert.deepEqual([(await boardApproval(srv, thread, 's1', 'r4')).state, (await boardApproval(srv, thread, 's1', 'r4')).by], ['denied', 'Claude'], 'denied by the bridge, as it said');
    assert.equal((await decide(srv, a.id, 'allow')).status, 409);
  });

  test('a session closed withdraws its pending requests', async () => {
    const a = await ask(srv, thread, 's1', 'r5');
    const end = await send(srv, thread, { type: 'session.end', id: 's1', session: 'fix-login', reason: 'closed' }, { 'roost-name': 'Paul' });
    assert.equal(end.status, 200);
    const rec = await until('withdrawn', async () => (await approvals(srv)).recent.find((x) => x.id === a.id && x.status === 'withdrawn'), 2000);
    assert.match(rec.reason, /session/);
    assert.equal((await decide(srv, a.id, 'allow')).status, 409);
  });

  test('a bridge that goes away: its requests are withdrawn within 2 s, and a later decision is 409', async () => {
    const t2 = 'ft2';
    const s = await openSse(`${srv.url}/fleet/${t2}/stream`, BRIDGE);
    await s.waitFor((f) => f.event === 'snapshot');
    assert.equal((await send(srv, t2, { type: 'session.spawn', id: 's2', session: 'fix-login', flavor: 'scoped', root: 'r' }, BRIDGE)).status, 200);
    // Held by the first stream too (same bridge): close both, as a bridge that exits does.
    const a = await ask(srv, t2, 's2', 'q1');
    const t0 = performance.now();
    s.close();
    stream.close();
    const rec = await until('withdrawn', async () => (await approvals(srv)).recent.find((x) => x.id === a.id && x.status === 'withdrawn'), 2000, 20);
    const ms = performance.now() - t0;
    console.log(`# bridge gone -> withdrawn in ${ms.toFixed(0)} ms`);
    assert.ok(ms < 2000);
    assert.match(rec.reason, /bridge/);
    assert.equal((await decide(srv, a.id, 'allow')).status, 409);
    const shown = await until('the board shows it denied', async () => ((await boardApproval(srv, t2, 's2', 'q1'))?.state === 'denied' ? boardApproval(srv, t2, 's2', 'q1') : null), 2000);
    assert.equal(shown.by, 'Roost', 'by nobody: FLEET_NO_DECISION');
    stream = await openSse(`${srv.url}/fleet/${thread}/stream`, BRIDGE);
  });
});
