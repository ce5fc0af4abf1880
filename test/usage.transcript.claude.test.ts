// Usage from Claude Code's transcripts: at Stop (the session's) and
// SubagentStop (the subagent's own file), each assistant message's usage,
// once per message id, into the same usage fold as OTLP. A session's usage
// comes from one source: with telemetry on, OTLP wins and the transcript is
// skipped; with it off, the transcript counts, to the token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { transcriptUsage } from '../src/integrations/index.js';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { claudeAvailable, claudeSetup, runClaude } from './support/claude.js';
import { until } from './support/until.js';
import { modelStandin, step, text, toolUse, hasResult, firstUserIncludes, and, not, type Usage } from './support/model-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

test('a transcript’s usage: once per message id, sidechain and synthetic messages left out, bad lines ignored', () => {
  const line = (id: string, extra: object = {}, usage: object = { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 }) =>
    JSON.stringify({ type: 'assistant', timestamp: '2026-12-01T10:00:00.000Z', message: { id, model: 'claude-sonnet-4-5', usage }, ...extra });
  const text = [
    line('msg_1'),
    line('msg_1'), // the same message's second content block
    '{"type":"user","message":{"content":"usage"}}',
    '{not json "assistant" "usage"',
    line('msg_2', { isSidechain: true }),
    JSON.stringify({ type: 'assistant', message: { id: 'msg_3', model: '<synthetic>', usage: { input_tokens: 0, output_tokens: 0 } } }),
    line('msg_4', {}, { input_tokens: -5, output_tokens: 'x', cache_read_input_tokens: 1e12 }),
  ].join('\n');
  const r = transcriptUsage(text);
  assert.deepEqual(r.map((x) => x.id), ['msg_1', 'msg_4']);
  assert.deepEqual({ ...r[0] }, { id: 'msg_1', model: 'claude-sonnet-4-5', input: 10, output: 2, cacheRead: 3, cacheWrite: 4, day: '2026-12-01', ts: Date.parse('2026-12-01T10:00:00.000Z') });
  assert.deepEqual([r[1].input, r[1].output, r[1].cacheRead], [0, 0, 1_000_000_000], 'hostile numbers are clamped');
  assert.deepEqual(transcriptUsage(text, { sidechain: true }).map((x) => x.id), ['msg_1', 'msg_2', 'msg_4']);
});

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

const sub = firstUserIncludes('SUBTASK');
const usages: Partial<Usage>[] = [
  { input_tokens: 121, output_tokens: 13, cache_read_input_tokens: 0, cache_creation_input_tokens: 41 },
  { input_tokens: 301, output_tokens: 31, cache_read_input_tokens: 51, cache_creation_input_tokens: 6 },
  { input_tokens: 401, output_tokens: 41, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  { input_tokens: 1001, output_tokens: 101, cache_read_input_tokens: 201, cache_creation_input_tokens: 0 },
];
const script = () => [
  step({ ...toolUse('Agent', { description: 'check', prompt: 'SUBTASK: run a check', subagent_type: 'general-purpose' }, 'toolu_agent'), usage: usages[0] }, not(sub)),
  step({ ...toolUse('Bash', { command: 'echo sub', description: 'sub' }, 'toolu_sub'), usage: usages[1] }, and(sub, not(hasResult('toolu_sub')))),
  step({ ...text('sub done'), usage: usages[2] }, hasResult('toolu_sub')),
  step({ ...text('All done.'), usage: usages[3] }, hasResult('toolu_agent')),
];
const pick = (x: any) => ({ input: x.input, output: x.output, cacheRead: x.cacheRead, cacheWrite: x.cacheWrite, requests: x.requests });

async function usageEvents(session: string): Promise<any[]> {
  return (await roost.store.read('usage', 0, 100_000)).map((e) => JSON.parse(e.body)).filter((e) => e.type === 'usage' && e.session === session);
}

test('telemetry off: the session’s and its subagent’s usage from their transcripts, to the token', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const model = await modelStandin(script());
  try {
    const setup = claudeSetup('shop');
    execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', setup.project, '--server', roost.url, '--no-telemetry'], { encoding: 'utf8' });
    const run = await runClaude(setup, model.url, 'check it', { timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr);
    const sid = run.messages.find((m) => m.type === 'system' && m.subtype === 'init')?.session_id;
    const session = `claude-code:${sid}`;
    // The conversation's requests (the transcript holds those; a side request Claude Code makes on its own is not in it).
    const expected = { main: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 }, sub: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 } };
    for (const r of model.requests) {
      if (r.step < 0) continue;
      const u = usages[r.step];
      const who = sub(r) ? expected.sub : expected.main;
      who.input += u.input_tokens!;
      who.output += u.output_tokens!;
      who.cacheRead += u.cache_read_input_tokens!;
      who.cacheWrite += u.cache_creation_input_tokens!;
      who.requests++;
    }
    assert.deepEqual([expected.main.requests, expected.sub.requests], [2, 2]);
    const state = await until('both transcripts counted', () => {
      const s = roost.usage.state;
      const lead = s.agents.get(session);
      const helper = [...s.agents.values()].find((a) => a.parent === session);
      return lead && helper && lead.own.requests === 2 && helper.own.requests === 2 ? { lead, helper } : undefined;
    }, 30_000, 200).catch(async (e) => {
      const floor = (await roost.store.read('floor', 0, 10_000)).map((x) => JSON.parse(x.body)).filter((x) => x.type !== 'tool').map((x) => `${x.type}:${typeof x.agent === 'string' ? x.agent : x.agent?.id}:${x.status}`);
      throw new Error(`${(e as Error).message}: usage ${JSON.stringify([...roost.usage.state.agents.values()].map((a) => [a.id, a.own.requests]))} events ${JSON.stringify(await usageEvents(session))} floor ${floor.join(' ')}`, { cause: e });
    });
    assert.deepEqual(pick(state.lead.own), expected.main, 'the main agent’s tokens, to the token');
    assert.deepEqual(pick(state.helper.own), expected.sub, 'the subagent’s tokens, to the token');
    assert.equal(state.helper.id, [...roost.usage.state.agents.keys()].find((k) => k.startsWith(session + '/')), 'the helper the hooks put on the floor');
    assert.equal(state.lead.team, 'shop');
    const events = await usageEvents(session);
    assert.ok(events.length === 4 && events.every((e) => e.via === 'transcript'), JSON.stringify(events.map((e) => e.via)));
  } finally {
    await model.close();
  }
});

test('telemetry on: OTLP is the session’s source and its transcripts are not counted again', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const model = await modelStandin(script());
  try {
    const setup = claudeSetup('shop');
    execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', setup.project, '--server', roost.url], { encoding: 'utf8' });
    const run = await runClaude(setup, model.url, 'check it', { timeoutMs: 120_000 });
    assert.equal(run.code, 0, run.stderr);
    const session = `claude-code:${run.messages.find((m) => m.type === 'system' && m.subtype === 'init')?.session_id}`;
    await until('every request exported', () => roost.usage.state.sessions.get(session)?.requests === model.requests.length || undefined, 30_000, 200);
    // Past the transcripts' grace period: nothing more is counted.
    await new Promise((ok) => setTimeout(ok, 8000));
    assert.equal(roost.usage.state.sessions.get(session)?.requests, model.requests.length, 'each request once');
    const events = await usageEvents(session);
    assert.ok(events.length > 0 && events.every((e) => e.via === undefined), 'all from OTLP');
  } finally {
    await model.close();
  }
});
