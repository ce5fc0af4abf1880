// The bridge's usage end to end: a real Roost server, the real bridge
// (`roost bridge`), the real Claude Code CLI it starts, and the model
// stand-in with its own usage figures. Each stream-json `result` carries
// `modelUsage` (cumulative per process) to the server with the board's
// `session.result` post; the server counts what is new, once per post, and
// never stores it on the board. GET /usage must equal the stand-in's tokens
// to the token, with Claude Code's own cost.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { need } from './support/env.js';
import { inProcess, tempDir } from './support/server.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { modelStandin, step, text, type Usage } from './support/model-standin.js';
import { askedWithBash as asked } from './support/model-standin.js';
import { until as waitUntil } from './support/until.js';
import { bridgeBuilt, killBridges, shopRepo, startBridge } from './support/bridge.js';

const THREAD = 'crew';
const until = <T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 60_000) => waitUntil<T>(what, f, ms);
after(killBridges);

async function post(url: string, body: unknown, key?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'roost-name': 'Paul' };
  if (key) headers['idempotency-key'] = key;
  const r = await fetch(`${url}/fleet/${THREAD}${(body as { type?: string }).type === 'request.start' ? '/requests' : ''}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

const sessionOf = async (url: string, id: string): Promise<any> => ((await (await fetch(`${url}/fleet/${THREAD}`)).json())).sessions.find((s: any) => s.id === id);
const usageOf = async (url: string): Promise<any> => ((await (await fetch(`${url}/usage`)).json())).state;

test('a board session’s tokens on GET /usage equal the stand-in’s, with Claude Code’s own cost, counted once per result', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const usages: Partial<Usage>[] = [
    { input_tokens: 120, output_tokens: 12, cache_read_input_tokens: 0, cache_creation_input_tokens: 40 },
    { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 200, cache_creation_input_tokens: 7 },
  ];
  const model = await modelStandin([step({ ...text('First.'), usage: usages[0] }, asked('PROMPT-ONE')), step({ ...text('Second.'), usage: usages[1] }, asked('PROMPT-TWO'))]);
  const roost = await inProcess({}, tempDir());
  const url = roost.url;
  try {
    const home = tempDir('roost-usage-bridge-home-');
    const repo = shopRepo('roost-usage-bridge-root-');
    await startBridge(['--server', url, '--token', 'bridge-token', '--root', repo, '--thread', THREAD, '--claude', CLAUDE_BIN], {
      HOME: home,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    });
    assert.equal((await post(url, { type: 'request.start', id: 'u1', session: 'count-me', flavor: 'plain' }, 'start-u1')).status, 200);
    await until('u1 ready', async () => (await sessionOf(url, 'u1'))?.state === 'idle');

    // Two prompts in one process: the second result's modelUsage includes the first's, and only what is new counts.
    const results: string[] = [];
    for (const p of ['PROMPT-ONE say hi', 'PROMPT-TWO again']) {
      assert.equal((await post(url, { type: 'session.prompt', id: 'u1', text: p })).status, 200);
      const r = await until(`the result of ${p}`, async () => {
        const s = await sessionOf(url, 'u1');
        return s?.turns === results.length + 1 && s.state === 'idle' && s.result ? s.result : undefined;
      });
      results.push(r);
    }

    // What the stand-in reported, every request (side requests too: Claude Code's modelUsage counts them).
    const want = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    for (const r of model.requests) {
      const u = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(r.step >= 0 ? usages[r.step] : {}) };
      want.input += u.input_tokens;
      want.output += u.output_tokens;
      want.cacheRead += u.cache_read_input_tokens;
      want.cacheWrite += u.cache_creation_input_tokens;
    }
    const u = await until('the usage', async () => {
      const x = await usageOf(url);
      return x.project.input === want.input && x.project.output === want.output ? x : undefined;
    }, 15_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: want ${JSON.stringify(want)}, got ${JSON.stringify((await usageOf(url)).project)}`);
    });
    assert.equal(u.project.cacheRead, want.cacheRead);
    assert.equal(u.project.cacheWrite, want.cacheWrite);
    assert.equal(u.agents.length, 1, 'one agent: the session’s Claude Code');
    const agent = u.agents[0];
    assert.match(agent.id, /^claude-code:[0-9a-f-]{36}$/);
    assert.equal(agent.team, `fleet · ${THREAD}`, 'no hooks: the board’s thread is the team');
    // Claude Code's own cost: total_cost_usd is the process's so far, so the last result's (its summary says it to $0.0001) is the whole.
    const said = results.map((r) => Number(/\$(\d+\.\d+)/.exec(r)?.[1] ?? NaN));
    assert.ok(said[0] > 0 && said[1] > said[0], `cumulative costs in the results: ${results.join(' | ')} (requests: ${model.requests.map((r) => r.step).join(',')})`);
    const claudeTotal = Math.round(said[1] * 1_000_000);
    assert.ok(Math.abs(u.project.costMicros - claudeTotal) <= 50, `${u.project.costMicros} µ$ vs ${claudeTotal} µ$ from the results`);
    assert.ok(agent.models.every(([, tally]: [string, { unpricedTokens: number }]) => tally.unpricedTokens === 0), 'every token has Claude Code’s price');

    // The board never stores the usage (its fold and the contract's vectors do not change).
    const stored = await roost.store.read(`sessions:${THREAD}`, 0, 10_000);
    assert.ok(stored.some((e) => JSON.parse(e.body).type === 'session.result'));
    assert.ok(stored.every((e) => !('usage' in JSON.parse(e.body))));

    // A retried post (same Idempotency-Key) counts nothing twice; a bad usage is refused whole.
    const extra = { type: 'session.result', id: 'u1', session: 'count-me', summary: 'by hand', usage: { claude: 'hand-made', models: [{ model: 'claude-x', input: 7, output: 3, cacheRead: 0, cacheWrite: 0, costUsd: 0.5 }] } };
    assert.equal((await post(url, extra, 'hand-1')).status, 200);
    const again = await post(url, extra, 'hand-1');
    assert.equal(again.status, 200);
    assert.equal(again.json.duplicate, true);
    const after2 = await usageOf(url);
    assert.equal(after2.project.input, want.input + 7);
    assert.equal(after2.project.costMicros, u.project.costMicros + 500_000);
    const bad = await post(url, { ...extra, usage: { claude: 'x', models: [{ model: 'm', input: -1, output: 0, cacheRead: 0, cacheWrite: 0 }] } });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /usage\.models\[0\]\.input/);
    assert.equal((await post(url, { type: 'session.status', id: 'u1', state: 'idle', usage: extra.usage })).status, 400);
  } finally {
    await killBridges();
    await roost.close();
    await model.close();
  }
});
