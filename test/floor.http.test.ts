// The floor contract through the HTTP API of a real in-process server: what a
// script posting events, or a dashboard reading /state, would see.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { inProcess, post } from './support/server.js';
import { openSse } from './support/sse.js';
import fc from 'fast-check';

type Server = Awaited<ReturnType<typeof inProcess>>;

async function getJson(url: string): Promise<any> {
  const r = await fetch(url);
  assert.equal(r.status, 200, `${url} answered ${r.status}`);
  return r.json();
}

const state = (srv: Server) => getJson(srv.url + '/state');
const agentIds = (st: any): string[] => st.agents.map((a: any) => a.id).sort();

describe('POST /events, GET /state, GET /health, POST /reset', () => {
  let srv: Server;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('one object: stored at the next position and visible in /state', async () => {
    const r = await post(srv.url, { type: 'status', agent: 'bot-1', team: 'Payments', status: 'working', activity: 'Reconciling invoices' });
    assert.equal(r.status, 200);
    assert.deepEqual({ ok: r.json.ok, accepted: r.json.accepted, first: r.json.first, last: r.json.last }, { ok: true, accepted: 1, first: 1, last: 1 });
    const st = await state(srv);
    assert.equal(st.position, 1);
    assert.equal(st.protocol, 1);
    const a = st.agents.find((x: any) => x.id === 'bot-1');
    assert.deepEqual([a.team, a.status, a.activity, a.name], ['Payments', 'working', 'Reconciling invoices', 'Bot 1']);
    assert.deepEqual(st.teams.map((t: any) => t.name), ['Payments']);
    assert.ok(Math.abs(a.lastSeen - Date.now()) < 10_000, 'ts defaults to the server clock');
  });

  test('an array of 200: one append, contiguous positions, all folded', async () => {
    const events = Array.from({ length: 200 }, (_, i) => ({ type: 'join', agent: `w-${i}`, team: i % 2 ? 'Odd' : 'Even' }));
    const r = await post(srv.url, events);
    assert.equal(r.status, 200);
    assert.equal(r.json.accepted, 200);
    assert.equal(r.json.last - r.json.first, 199);
    const st = await state(srv);
    assert.equal(st.position, r.json.last);
    assert.equal(st.agents.filter((a: any) => a.id.startsWith('w-')).length, 200);
  });

  test('/health says ok, the version, the agent count and the protocol', async () => {
    const h = await getJson(srv.url + '/health');
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    assert.equal(h.ok, true);
    assert.equal(h.version, pkg.version);
    assert.equal(h.protocol, 1);
    assert.equal(h.agents, (await state(srv)).agents.length);
  });

  test('POST /reset clears the floor (and is itself logged)', async () => {
    const before = (await state(srv)).position;
    const r = await fetch(srv.url + '/reset', { method: 'POST', headers: { 'roost-client': 'test' } });
    assert.equal(r.status, 200);
    assert.equal((await r.json()).position, before + 1);
    const st = await state(srv);
    assert.deepEqual([st.agents.length, st.teams.length], [0, 0]);
    assert.equal((await getJson(srv.url + '/health')).agents, 0);
  });

  test('a reset event in a batch clears what came before it', async () => {
    const r = await post(srv.url, [{ type: 'join', agent: 'x' }, { type: 'reset' }, { type: 'join', agent: 'y' }]);
    assert.equal(r.status, 200);
    assert.deepEqual(agentIds(await state(srv)), ['y']);
  });

  test('unknown endpoints and methods answer with the error shape', async () => {
    const r404 = await fetch(srv.url + '/nope', { method: 'POST' });
    assert.equal(r404.status, 404);
    assert.equal((await r404.json()).kind, 'not_found');
    const r405 = await fetch(srv.url + '/events');
    assert.equal(r405.status, 405);
    assert.equal((await r405.json()).kind, 'method_not_allowed');
  });
});

describe('Idempotency-Key', () => {
  let srv: Server;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('a retry stores nothing twice and answers with the same positions', async () => {
    const batch = [{ type: 'message', agent: 'a', to: 'b', text: 'once' }, { type: 'status', agent: 'a', status: 'done' }];
    const first = await post(srv.url, batch, { 'idempotency-key': 'req-1' });
    const st1 = await state(srv);
    const again = await post(srv.url, batch, { 'idempotency-key': 'req-1' });
    assert.equal(again.status, 200);
    assert.deepEqual([again.json.first, again.json.last], [first.json.first, first.json.last]);
    assert.equal(first.json.duplicate, false);
    assert.equal(again.json.duplicate, true);
    const st2 = await state(srv);
    assert.equal(st2.position, st1.position, 'the log head did not move');
    assert.deepEqual(st2, st1);
  });

  test('concurrent retries with one key store the batch once', async () => {
    const head = (await state(srv)).position;
    const rs = await Promise.all(Array.from({ length: 8 }, () => post(srv.url, { type: 'join', agent: 'c' }, { 'idempotency-key': 'req-2' })));
    assert.ok(rs.every((r) => r.status === 200));
    assert.equal(new Set(rs.map((r) => r.json.first)).size, 1);
    assert.equal(rs.filter((r) => !r.json.duplicate).length, 1);
    assert.equal((await state(srv)).position, head + 1);
  });

  test('a retry with the same key but another body gets the first answer and stores nothing', async () => {
    const first = await post(srv.url, { type: 'join', agent: 'first-body' }, { 'idempotency-key': 'req-5' });
    const st = await state(srv);
    const other = await post(srv.url, [{ type: 'join', agent: 'second-body' }, { type: 'join', agent: 'third' }], { 'idempotency-key': 'req-5' });
    assert.deepEqual([other.json.first, other.json.last, other.json.duplicate], [first.json.first, first.json.last, true]);
    assert.deepEqual(await state(srv), st);
  });

  test('an Idempotency-Key over 200 characters is refused', async () => {
    const r = await post(srv.url, { type: 'join', agent: 'k' }, { 'idempotency-key': 'k'.repeat(201) });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /Idempotency-Key is longer than 200/);
  });

  test('different keys store separately; no key never deduplicates', async () => {
    const head = (await state(srv)).position;
    await post(srv.url, { type: 'join', agent: 'd' }, { 'idempotency-key': 'req-3' });
    await post(srv.url, { type: 'join', agent: 'd' }, { 'idempotency-key': 'req-4' });
    await post(srv.url, { type: 'join', agent: 'd' });
    await post(srv.url, { type: 'join', agent: 'd' });
    assert.equal((await state(srv)).position, head + 4);
  });
});

describe('bad input: a clear 4xx, nothing stored, the server still serving', () => {
  let srv: Server;
  before(async () => {
    srv = await inProcess();
    await post(srv.url, [{ type: 'join', agent: 'resident', team: 'Home' }, { type: 'task', agent: 'resident', task: 'Stay' }]);
  });
  after(() => srv.close());

  /** Sends a bad request and checks the answer and that the floor did not change. */
  async function rejects(send: () => Promise<Response>, status: number | number[], kind: string | string[], says: RegExp): Promise<{ message: string; kind: string }> {
    const st = await state(srv);
    const r = await send();
    const body = await r.json();
    assert.ok([status].flat().includes(r.status), `status ${r.status}, expected ${status}: ${JSON.stringify(body)}`);
    assert.deepEqual(Object.keys(body).sort(), ['kind', 'message']);
    assert.ok([kind].flat().includes(body.kind), `kind ${body.kind}`);
    assert.match(body.message, says);
    assert.deepEqual(await state(srv), st, 'nothing was stored');
    return body;
  }
  const raw = (body: string, ct = 'application/json') => () => fetch(srv.url + '/events', { method: 'POST', headers: { 'content-type': ct }, body });
  const json = (v: unknown) => raw(JSON.stringify(v));

  test('wrong content type: 415', async () => {
    await rejects(raw('{"type":"join","agent":"x"}', 'text/plain'), 415, 'unsupported_media_type', /Content-Type must be application\/json/);
    await rejects(raw('type=join&agent=x', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type', /application\/json/);
  });

  test('application/json with a charset is fine', async () => {
    const r = await fetch(srv.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"type":"join","agent":"charset-ok"}' });
    assert.equal(r.status, 200);
    await post(srv.url, { type: 'reset' });
    await post(srv.url, [{ type: 'join', agent: 'resident', team: 'Home' }, { type: 'task', agent: 'resident', task: 'Stay' }]);
  });

  test('broken JSON: 400', async () => {
    await rejects(raw('{"type":"join",'), 400, 'bad_request', /not valid JSON/);
    await rejects(raw(''), 400, 'bad_request', /not valid JSON/);
  });

  test('201 events: 413 naming the limit', async () => {
    await rejects(json(Array.from({ length: 201 }, (_, i) => ({ type: 'join', agent: `n${i}` }))), 413, 'too_large', /at most 200 events, got 201/);
  });

  test('an empty batch, or an item that is not an object: 400', async () => {
    await rejects(json([]), 400, 'bad_request', /empty/);
    await rejects(json(5), 400, 'bad_request', /must be a JSON object, got a number/);
    await rejects(json([{ type: 'join', agent: 'ok' }, null]), 400, 'bad_request', /^event 1: .*got null/);
  });

  test('unknown type, a missing type, the internal sweep type: 400', async () => {
    await rejects(json({ type: 'dance', agent: 'x' }), 400, 'bad_request', /unknown type "dance"; expected one of join, status, tool, message, task, leave, reset/);
    await rejects(json({ agent: 'x' }), 400, 'bad_request', /"type" is required/);
    await rejects(json({ type: 'sweep', agent: 'x', ts: 0 }), 400, 'bad_request', /unknown type "sweep"/);
  });

  test('missing or empty agent: 400', async () => {
    await rejects(json({ type: 'status' }), 400, 'bad_request', /"agent" is required/);
    await rejects(json({ type: 'status', agent: '  ' }), 400, 'bad_request', /"agent" must not be empty/);
    await rejects(json({ type: 'status', agent: { name: 'No Id' } }), 400, 'bad_request', /"agent.id" is required/);
  });

  test('wrong field types: each field named', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ agent: 42 }, /"agent" must be a string or an object with an id, got a number/],
      [{ agent: ['a'] }, /"agent" must be a string or an object with an id, got an array/],
      [{ agent: { id: 7 } }, /"agent.id" must be a string/],
      [{ agent: { id: 'a', role: 1 } }, /"agent.role" must be a string/],
      [{ name: 1 }, /"name" must be a string, got a number/],
      [{ role: true }, /"role" must be a string, got a boolean/],
      [{ team: 3 }, /"team" must be a string or an object with a name/],
      [{ team: {} }, /"team" needs a name or an id/],
      [{ team: { name: 5 } }, /"team.name" must be a string/],
      [{ parent: {} }, /"parent" must be a string, got an object/],
      [{ source: null }, /"source" must be a string, got null/],
      [{ status: 'sleeping' }, /"status" must be one of idle, thinking, working, waiting, done, error, offline/],
      [{ activity: ['x'] }, /"activity" must be a string, got an array/],
      [{ tool: 9 }, /"tool" must be a string/],
      [{ to: 9 }, /"to" must be an agent id or an array of them/],
      [{ to: ['ok', 9] }, /"to" must be an agent id or an array of them/],
      [{ to: Array.from({ length: 51 }, (_, i) => `r${i}`) }, /"to" lists more than 50 recipients/],
      [{ text: {} }, /"text" must be a string/],
      [{ task: 1 }, /"task" must be a string/],
      [{ subagent: 'code-reviewer' }, /"subagent" must be an object/],
      [{ subagent: { key: 1 } }, /"subagent.key" must be a string/],
      [{ ts: 'yesterday' }, /"ts" must be a number of milliseconds/],
    ];
    for (const [fields, says] of cases) {
      await rejects(json([{ type: 'join', agent: 'fine' }, { type: 'message', agent: 'x', ...fields }]), 400, 'bad_request', new RegExp('^event 1: ' + says.source));
    }
  });

  test('the first bad item of a batch is named, and none of the good ones before it is stored', async () => {
    const body = await rejects(
      json([{ type: 'join', agent: 'g0' }, { type: 'join', agent: 'g1' }, { type: 'join', agent: 'g2' }, { type: 'status', agent: 'g3', status: 'nap' }, { type: 'nope', agent: 'g4' }]),
      400,
      'bad_request',
      /^event 3: "status" must be one of/,
    );
    assert.doesNotMatch(body.message, /event 4/);
  });

  test('a string over 65,536 characters: 400 naming the field', async () => {
    await rejects(json({ type: 'status', agent: 'x', activity: 'a'.repeat(70_000) }), 400, 'bad_request', /"activity" is longer than 65536 characters/);
  });

  test('a 1 MB string: 413', async () => {
    await rejects(json({ type: 'status', agent: 'x', activity: 'a'.repeat(1024 * 1024) }), [413, 400], ['too_large', 'bad_request'], /larger than|longer than/);
  });

  test('a 1 MB body sent without a declared length (chunked): 413', async () => {
    const big = new TextEncoder().encode(JSON.stringify({ type: 'status', agent: 'x', activity: 'b'.repeat(1024 * 1024 + 10) }));
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < big.length; i += 64 * 1024) c.enqueue(big.subarray(i, i + 64 * 1024));
        c.close();
      },
    });
    await rejects(
      () => fetch(srv.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit),
      413,
      'too_large',
      /larger than 1048576 bytes/,
    );
  });

  test('request targets that are not URLs (`http://[/`, `http://:99999/`): 400; `//[` and `//host/path` are paths, never a host', async () => {
    const raw = (target: string) =>
      new Promise<string>((ok, fail) => {
        const u = new URL(srv.url);
        const sock = connect(Number(u.port), u.hostname, () => sock.write(`GET ${target} HTTP/1.1\r\nhost: ${u.host}\r\nconnection: close\r\n\r\n`));
        let text = '';
        sock.setEncoding('utf8');
        sock.on('data', (d: string) => (text += d));
        sock.on('end', () => ok(text));
        sock.on('error', fail);
      });
    for (const target of ['http://[/', 'http://:99999/']) {
      const answer = await raw(target);
      assert.match(answer, /^HTTP\/1\.1 400 /, `${target}: ${answer.slice(0, 80)}`);
      assert.match(answer, /"kind":"bad_request"/);
    }
    // A path that starts with // is a path of this server (here: the web app's page), not /state of another host.
    for (const target of ['//[', '//example.com/state']) {
      const answer = await raw(target);
      assert.match(answer, /^HTTP\/1\.1 200 /, `${target}: ${answer.slice(0, 80)}`);
      assert.match(answer, /content-type: text\/html/, `${target} is not read as /state`);
    }
  });

  test('after all that, the server still serves and accepts good events', async () => {
    const r = await post(srv.url, { type: 'status', agent: 'resident', status: 'working' });
    assert.equal(r.status, 200);
    const st = await state(srv);
    assert.equal(st.agents.find((a: any) => a.id === 'resident').status, 'working');
    assert.equal(st.teams.find((t: any) => t.id === 'Home').task, 'Stay');
    assert.equal((await getJson(srv.url + '/health')).ok, true);
  });
});

describe('fuzzed bodies', () => {
  test('any JSON body gets 200 or a 4xx with the error shape, never a 5xx; the floor keeps its invariants', async () => {
    const srv = await inProcess();
    try {
      const field = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 5 }), fc.constantFrom('join', 'status', 'a', 'lead', '__proto__'));
      const eventish = fc.record(
        { type: fc.oneof(fc.constantFrom('join', 'status', 'tool', 'message', 'task', 'leave', 'reset'), field), agent: fc.oneof(fc.constantFrom('a', 'b', '__proto__'), fc.record({ id: field, role: field }), field), team: field, status: field, to: field, subagent: field, ts: field, activity: field, parent: field },
        { requiredKeys: [] },
      );
      const plausible = fc.record(
        { type: fc.constantFrom('join', 'status', 'tool', 'message', 'task', 'leave'), agent: fc.constantFrom('a', 'b', '__proto__', 'constructor'), team: fc.constantFrom('T', '__proto__'), to: fc.constantFrom('b', 'toString'), status: fc.constantFrom('working', 'done') },
        { requiredKeys: ['type', 'agent'] },
      );
      const body = fc.oneof(eventish, plausible, fc.array(fc.oneof(eventish, plausible), { maxLength: 5 }), fc.jsonValue({ maxDepth: 3 }));
      let ok = 0;
      await fc.assert(
        fc.asyncProperty(body, async (b) => {
          const r = await post(srv.url, JSON.stringify(b));
          assert.ok(r.status === 200 || (r.status >= 400 && r.status < 500), `status ${r.status} for ${JSON.stringify(b).slice(0, 200)}`);
          if (r.status === 200) ok++;
          else assert.deepEqual(Object.keys(r.json).sort(), ['kind', 'message']);
        }),
        { numRuns: 150 },
      );
      assert.ok(ok > 5, `some fuzzed bodies were accepted (${ok})`);
      const st = await state(srv);
      const teams = new Set(st.teams.map((t: any) => t.id));
      for (const a of st.agents) assert.ok(teams.has(a.team));
      for (const t of teams) assert.ok(st.agents.some((a: any) => a.team === t));
      assert.equal((await post(srv.url, { type: 'join', agent: 'after-fuzz' })).status, 200);
    } finally {
      await srv.close();
    }
  });
});

describe('what is stored', () => {
  test('unknown fields, at any level, are dropped; deeply nested ones do not break the server', async () => {
    const srv = await inProcess();
    try {
      const stream = await openSse(srv.url + '/stream');
      await stream.waitFor((f) => f.event === 'snapshot');
      const deep = '['.repeat(200_000) + ']'.repeat(200_000);
      const bodies = [
        `{"type":"join","agent":{"id":"a","role":"lead","x":${deep}},"color":"red"}`,
        `{"type":"join","agent":"b","team":{"name":"T","x":${deep}}}`,
        `{"type":"tool","agent":"a","subagent":{"key":"k","type":"planner","x":${deep}},"extra":${deep}}`,
      ];
      for (const b of bodies) assert.equal((await post(srv.url, b)).status, 200, b.slice(0, 60));
      await stream.waitFor((f) => f.id?.endsWith(':3') ?? false);
      stream.close();
      const stored = stream.frames.filter((f) => f.event === 'event').map((f) => JSON.parse(f.data).event);
      const ts = stored.map((e) => e.ts);
      assert.deepEqual(stored, [
        { type: 'join', agent: { id: 'a', role: 'lead' }, ts: ts[0] },
        { type: 'join', agent: 'b', team: { name: 'T' }, ts: ts[1] },
        { type: 'tool', agent: 'a', subagent: { key: 'k', type: 'planner' }, ts: ts[2] },
      ]);
      const st = await state(srv);
      assert.deepEqual(agentIds(st), ['a', 'a/planner-k', 'b']);
    } finally {
      await srv.close();
    }
  });
});

describe('lifetimes through the server', () => {
  test('due agents are swept: a removed frame, gone from /state, empty rooms gone too', async () => {
    const srv = await inProcess({ sweepEveryMs: 50 });
    try {
      const stream = await openSse(srv.url + '/stream');
      await stream.waitFor((f) => f.event === 'snapshot');
      const now = Date.now();
      const r = await post(srv.url, [
        { type: 'join', agent: 'lead', role: 'lead', team: 'Stays', ts: now },
        { type: 'join', agent: 'silent', team: 'Quiet', ts: now - 2 * 3600_000 - 1000 },
        { type: 'leave', agent: 'leaver', team: 'Stays', ts: now - 7000 },
        { type: 'join', agent: 'helper', parent: 'lead', ts: now - 60_000 },
        { type: 'status', agent: 'helper', status: 'done', ts: now - 46_000 },
        { type: 'leave', agent: 'just-left', team: 'Stays', ts: now },
      ]);
      assert.equal(r.status, 200);
      const removed = await stream.waitFor((f) => f.event === 'removed', 5000);
      const ids: string[] = JSON.parse(removed.data).agents.sort();
      assert.deepEqual(ids, ['helper', 'leaver', 'silent']);
      assert.ok(Number(removed.id!.split(':')[1]) > r.json.last, 'the sweep is logged after the events');
      const st = await state(srv);
      assert.deepEqual(agentIds(st), ['just-left', 'lead']);
      assert.deepEqual(st.teams.map((t: any) => t.id), ['Stays'], 'the room of the silent agent vanished');
      // the one that left just now goes 6 s after leaving; not yet
      assert.ok(st.agents.find((a: any) => a.id === 'just-left').leftAt >= now);
      stream.close();
    } finally {
      await srv.close();
    }
  });
});
