// The Anthropic Messages provider runs the model providers' contract against
// the scripted Messages-API stand-in (the same one that serves the real Claude
// Code CLI in other tests).
import { AnthropicProvider } from '../src/models/index.js';
import { modelContract, type NeutralReply, type SeenRequest } from './models.contract.js';
import { modelStandin, type Reply, type Step } from './support/model-standin.js';

function toReply(r: NeutralReply): Reply {
  const content: Reply['content'] = [];
  if (r.text !== undefined) content.push({ type: 'text', text: r.text });
  if (r.tool) content.push({ type: 'tool_use', id: `toolu_${Math.random().toString(36).slice(2)}`, name: r.tool.name, input: r.tool.input as Record<string, unknown> });
  if (!r.text && !r.tool) content.push({ type: 'text', text: 'ok' });
  const u = r.usage;
  return {
    content,
    ...(r.stop ? { stop_reason: r.stop } : {}),
    ...(r.delayMs ? { delayMs: r.delayMs } : {}),
    ...(u === null
      ? { usage: null }
      : u
        ? { usage: { input_tokens: u.input - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0), output_tokens: u.output, cache_read_input_tokens: u.cacheRead ?? 0, cache_creation_input_tokens: u.cacheWrite ?? 0 } }
        : {}),
    ...(r.error ? { error: { status: r.error.status, type: r.error.status === 529 ? 'overloaded_error' : 'api_error', ...(r.error.retryAfterS !== undefined ? { headers: { 'retry-after': String(r.error.retryAfterS) } } : {}) } } : {}),
    ...(r.garbage ? { raw: '<html>bad gateway</html>' } : {}),
  };
}

function seenOf(body: any, stream: boolean): SeenRequest {
  const tool = body?.tools?.[0];
  return {
    model: body?.model,
    system: typeof body?.system === 'string' ? body.system : (body?.system ?? []).map((b: any) => b.text).join(''),
    messages: (body?.messages ?? []).map((m: any) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : (m.content ?? []).map((b: any) => b.text ?? '').join('') })),
    maxTokens: body?.max_tokens,
    tool: tool ? { name: tool.name, schema: tool.input_schema } : null,
    forced: body?.tool_choice?.type === 'tool' && body?.tool_choice?.name === tool?.name,
    stream,
  };
}

modelContract('anthropic (Messages API)', async () => {
  const model = await modelStandin([], { fallback: { content: [{ type: 'text', text: 'fallback' }] } });
  let pending: Step[] = [];
  return {
    cacheWrite: true,
    provider: () => new AnthropicProvider({ model: 'claude-standin-1', baseURL: model.url, apiKey: 'test-key' }),
    unreachable: (port) => new AnthropicProvider({ model: 'claude-standin-1', baseURL: `http://127.0.0.1:${port}`, apiKey: 'test-key' }),
    script(...replies) {
      for (const s of pending) s.used = true;
      pending = replies.map((r) => ({ reply: toReply(r) }));
      model.push(...pending);
    },
    seen: () => model.requests.map((r) => seenOf(r.body, r.stream)),
    close: () => model.close(),
  };
});
