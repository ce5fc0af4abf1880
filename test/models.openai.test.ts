// The OpenAI-compatible provider runs the model providers' contract against
// the scripted chat-completions stand-in; plus what is particular to the
// servers it covers (which field caps the output, a missing key).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIProvider } from '../src/models/index.js';
import { modelContract, type NeutralReply, type SeenRequest } from './models.contract.js';
import { oaText, openaiStandin, type OaReply, type OaStep } from './support/openai-standin.js';

function toReply(r: NeutralReply): OaReply {
  const u = r.usage;
  return {
    ...(r.text !== undefined ? { content: r.text } : {}),
    ...(r.tool ? { toolCall: { name: r.tool.name, arguments: r.tool.input } } : {}),
    ...(!r.text && !r.tool ? { content: 'ok' } : {}),
    ...(r.stop ? { finish_reason: 'length' as const } : {}),
    ...(r.delayMs ? { delayMs: r.delayMs } : {}),
    ...(u === null ? { usage: null } : u ? { usage: { prompt_tokens: u.input, completion_tokens: u.output, cached_tokens: u.cacheRead ?? 0 } } : {}),
    ...(r.error ? { error: { status: r.error.status, ...(r.error.retryAfterS !== undefined ? { headers: { 'retry-after': String(r.error.retryAfterS) } } : {}) } } : {}),
    ...(r.garbage ? { raw: '<html>bad gateway</html>' } : {}),
  };
}

function seenOf(body: any, stream: boolean): SeenRequest {
  const [sys, ...rest] = body?.messages ?? [];
  const tool = body?.tools?.[0]?.function;
  return {
    model: body?.model,
    system: sys?.role === 'system' ? sys.content : '',
    messages: rest.map((m: any) => ({ role: m.role, content: m.content })),
    maxTokens: body?.max_tokens ?? body?.max_completion_tokens,
    tool: tool ? { name: tool.name, schema: tool.parameters } : null,
    forced: body?.tool_choice?.type === 'function' && body?.tool_choice?.function?.name === tool?.name,
    stream,
  };
}

modelContract('openai (chat completions, OpenAI-compatible)', async () => {
  const model = await openaiStandin([], { fallback: oaText('fallback') });
  let pending: OaStep[] = [];
  return {
    cacheWrite: false,
    provider: () => new OpenAIProvider({ model: 'standin-7b', baseURL: `${model.url}/v1`, apiKey: 'test-key' }),
    unreachable: (port) => new OpenAIProvider({ model: 'standin-7b', baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test-key' }),
    script(...replies) {
      for (const s of pending) s.used = true;
      pending = replies.map((r) => ({ reply: toReply(r) }));
      model.push(...pending);
    },
    seen: () => model.requests.map((r) => seenOf(r.body, r.stream)),
    close: () => model.close(),
  };
});

test('the output cap is max_tokens for a local server and max_completion_tokens for OpenAI\'s own API', async () => {
  const model = await openaiStandin([]);
  try {
    const local = new OpenAIProvider({ model: 'm', baseURL: `${model.url}/v1`, apiKey: 'k' });
    await local.call({ system: 's', messages: [{ role: 'user', content: 'u' }], maxTokens: 42 });
    assert.equal(model.requests.at(-1)!.body.max_tokens, 42);
    assert.equal('max_completion_tokens' in model.requests.at(-1)!.body, false);
    const asOpenAI = new OpenAIProvider({ model: 'm', baseURL: `${model.url}/v1`, apiKey: 'k', maxTokensField: 'max_completion_tokens' });
    await asOpenAI.call({ system: 's', messages: [{ role: 'user', content: 'u' }], maxTokens: 43 });
    assert.equal(model.requests.at(-1)!.body.max_completion_tokens, 43);
  } finally {
    await model.close();
  }
});

test('a local server needs no key: a placeholder is sent', async () => {
  const model = await openaiStandin([]);
  const saved = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
  try {
    const p = new OpenAIProvider({ model: 'm', baseURL: `${model.url}/v1` });
    const o = await p.call({ system: 's', messages: [{ role: 'user', content: 'u' }], maxTokens: 5 });
    assert.equal(o.ok, true);
  } finally {
    if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    await model.close();
  }
});
