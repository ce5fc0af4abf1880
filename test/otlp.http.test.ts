// The OTLP/HTTP receiver on a real server: the real CLIs' log records (JSON
// and protobuf) land on the agents the hooks put on the floor, to the token;
// a retried export counts once; hostile bodies are a 4xx with nothing stored;
// a budget's 80% and 100% notices are written once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import { encodeLogsProtobuf } from '../src/server/otlp-decode.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'otlp-real');
const batches = (name: string): any[] => JSON.parse(readFileSync(join(FIX, `${name}.logs.json`), 'utf8'));
const CLAUDE = batches('claude-code-2.1.197');
const CODEX = batches('codex-0.171.0');
const GEMINI = batches('gemini-cli-0.61.0');
const CLAUDE_SID = '239f8d66-77f7-4f22-a026-b1bc2a021c13';

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

async function post(path: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const r = await fetch(roost.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: r.status, text: await r.text() };
}

async function usage(): Promise<any> {
  return (await (await fetch(roost.url + '/usage')).json()).state;
}

const stored = async () => (await roost.store.read('usage', 0, 100_000)).length;

async function hook(payload: Record<string, unknown>) {
  const r = await fetch(roost.url + '/hooks/claude-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  assert.equal(r.status, 200);
}

test('Claude Code’s own records land on the session and its helper, to the token, with Claude Code’s cost; a retried export counts once', async () => {
  // The hooks put the session and its general-purpose helper on the floor first.
  await hook({ hook_event_name: 'SessionStart', session_id: CLAUDE_SID, cwd: '/home/dev/shop', source: 'startup' });
  await hook({ hook_event_name: 'SubagentStart', session_id: CLAUDE_SID, cwd: '/home/dev/shop', agent_id: 'a0b1c2', agent_type: 'general-purpose' });
  for (const b of CLAUDE) assert.equal((await post('/v1/logs', JSON.stringify(b))).status, 200);
  const u = await usage();
  const session = `claude-code:${CLAUDE_SID}`;
  const agents = new Map<string, any>(u.agents.map((a: any) => [a.id, a]));
  const lead = agents.get(session);
  const helper = agents.get(`${session}/a0b1c2`);
  // The stand-in's figures: main 10+1000 in, 5+100 out, 200 cache reads; the subagent 300+400 in, 30+40 out, 50 reads, 5 writes.
  assert.deepEqual([lead.own.input, lead.own.output, lead.own.cacheRead, lead.own.cacheWrite, lead.own.requests], [1010, 105, 200, 0, 2]);
  assert.deepEqual([helper.own.input, helper.own.output, helper.own.cacheRead, helper.own.cacheWrite, helper.own.requests], [700, 70, 50, 5, 2]);
  assert.equal(helper.parent, session);
  assert.equal(lead.team, 'shop', 'the team the hooks gave the session');
  // Claude Code's own cost per request (cost_usd), summed: its result said 0.01308125 USD.
  assert.equal(lead.own.costMicros + helper.own.costMicros, 13081);
  const sessionTally = new Map<string, any>(u.sessions).get(session);
  assert.equal(sessionTally.input, 1710, 'the session counts its helper too');

  const before = await stored();
  for (const b of CLAUDE) assert.equal((await post('/v1/logs', JSON.stringify(b))).status, 200);
  assert.equal(await stored(), before, 'an exporter’s retry stores nothing new');
});

test('the same records as protobuf (and gzip) count the same as JSON', async () => {
  const codexJson = await inProcess();
  const codexProto = await inProcess();
  try {
    for (const b of CODEX) assert.equal((await fetch(codexJson.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).status, 200);
    for (const b of CODEX) {
      const body = gzipSync(encodeLogsProtobuf(b));
      const r = await fetch(codexProto.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, body: new Uint8Array(body) });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'application/x-protobuf');
    }
    const a = (await (await fetch(codexJson.url + '/usage')).json()).state;
    const b = (await (await fetch(codexProto.url + '/usage')).json()).state;
    assert.deepEqual(b.project, a.project);
    // Codex: input_token_count includes the cached tokens (100 of which 20 cached, twice).
    assert.deepEqual([a.project.input, a.project.cacheRead, a.project.output, a.project.requests], [160, 40, 14, 2]);
    assert.equal(a.project.unpricedTokens, 214, 'a model with no price is counted as unpriced, not guessed');
  } finally {
    await codexJson.close();
    await codexProto.close();
  }
});

test('Gemini CLI’s records: thoughts count as output, cached tokens apart; metrics are accepted and add nothing', async () => {
  const g = await inProcess();
  try {
    for (const b of GEMINI) assert.equal((await fetch(g.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).status, 200);
    const u = (await (await fetch(g.url + '/usage')).json()).state;
    assert.deepEqual([u.project.input, u.project.cacheRead, u.project.output, u.project.requests], [160, 40, 14, 2]);
    const n = (await g.store.read('usage', 0, 1000)).length;
    const m = await fetch(g.url + '/v1/metrics', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceMetrics: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gemini-cli' } }] }, scopeMetrics: [{ metrics: [{ name: 'gemini_cli.token.usage', sum: { dataPoints: [{ asInt: '100', attributes: [] }] } }] }] }] }) });
    assert.equal(m.status, 200);
    assert.equal((await g.store.read('usage', 0, 1000)).length, n);
  } finally {
    await g.close();
  }
});

test('hostile OTLP: a 4xx that says what is wrong, and nothing stored', async () => {
  const n = await stored();
  const json = { 'content-type': 'application/json' };
  const record = (i: number) => ({ attributes: [{ key: 'event.name', value: { stringValue: 'api_request' } }, { key: 'session.id', value: { stringValue: 'h' } }, { key: 'event.sequence', value: { intValue: i } }, { key: 'input_tokens', value: { intValue: 5 } }] });
  const many = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: Array.from({ length: 5001 }, (_, i) => record(i)) }] }] };
  let deep = '{"stringValue":"x"}';
  for (let i = 0; i < 20_000; i++) deep = `{"kvlistValue":{"values":[{"key":"k","value":${deep}}]}}`;
  const cases: [string, string | Buffer, Record<string, string>, number][] = [
    ['text/plain', '{}', { 'content-type': 'text/plain' }, 415],
    ['not JSON', '{"resourceLogs":', json, 400],
    ['an array', '[]', json, 400],
    ['resourceLogs not a list', '{"resourceLogs":{"a":1}}', json, 400],
    ['protobuf garbage', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), { 'content-type': 'application/x-protobuf' }, 400],
    ['over 4 MiB', Buffer.alloc(4 * 1024 * 1024 + 10, 32), json, 413],
    ['a gzip bomb', gzipSync(Buffer.alloc(64 * 1024 * 1024, 32)), { ...json, 'content-encoding': 'gzip' }, 413],
    ['not gzip', Buffer.from('plain'), { ...json, 'content-encoding': 'gzip' }, 400],
    ['brotli', Buffer.from('x'), { ...json, 'content-encoding': 'br' }, 415],
    ['5,001 records', JSON.stringify(many), json, 413],
  ];
  for (const [what, body, headers, status] of cases) {
    const r = await post('/v1/logs', body, headers);
    assert.equal(r.status, status, `${what}: ${r.text.slice(0, 200)}`);
    const j = JSON.parse(r.text);
    assert.ok(typeof j.message === 'string' && j.message.length > 0 && typeof j.kind === 'string', `${what} says what is wrong`);
  }
  assert.equal(await stored(), n, 'nothing was stored');
  // A value nested 20,000 deep is never walked: only scalar attributes are read.
  const t0 = Date.now();
  const nested = await post('/v1/logs', `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${deep},"attributes":[{"key":"k","value":${deep}}]}]}]}]}`);
  assert.equal(nested.status, 200);
  assert.ok(Date.now() - t0 < 5_000);
  assert.equal(await stored(), n);
  // Wrong types inside an accepted shape fold to nothing rather than failing the batch.
  const odd = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: [{ attributes: [{ key: 'event.name', value: { stringValue: 'api_request' } }, { key: 'input_tokens', value: { stringValue: '-5' } }] }] }] }] };
  assert.equal((await post('/v1/logs', JSON.stringify(odd))).status, 200);
  assert.equal(await stored(), n, 'a record with no session is dropped');
});

test('a budget: the 80% and 100% notices are durable events, written once', async () => {
  const b = await inProcess();
  try {
    const put = await fetch(b.url + '/usage/budget', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usd: 0.015 }) });
    assert.equal(put.status, 200);
    for (const x of CLAUDE) await fetch(b.url + '/v1/logs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(x) });
    const crossed = async () => (await b.store.read('usage', 0, 1000)).map((e) => JSON.parse(e.body)).filter((e) => e.type === 'budget.crossed').map((e) => e.threshold);
    // 13,081 µ$ of 15,000: 87%.
    assert.deepEqual(await crossed(), [80]);
    const bad = await fetch(b.url + '/usage/budget', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usd: -1 }) });
    assert.equal(bad.status, 400);
    await fetch(b.url + '/usage/budget', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usd: 0.01 }) });
    assert.deepEqual(await crossed(), [80, 100], 'a new, lower budget already spent is crossed at once: one crossing, 100, which implies 80 (both notified)');
    const u = (await (await fetch(b.url + '/usage')).json()).state;
    assert.deepEqual(u.budget.notified, [80, 100]);
  } finally {
    await b.close();
  }
});
