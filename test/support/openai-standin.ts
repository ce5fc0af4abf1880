// A scripted stand-in of an OpenAI-compatible chat completions server (the API
// OpenAI, Ollama, llama.cpp's server and vLLM serve), so tests drive the
// `openai` provider with no network: `POST /v1/chat/completions` answered by a
// script, plain JSON or streamed (SSE chunks, usage in a last chunk when
// `stream_options.include_usage` asks for it), every request recorded.
//
//   const model = await openaiStandin([oaStep(oaText('hi', { prompt: 12, completion: 3 }))]);
//   new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'test' })
//   model.requests      // what the server received, in order
//   await model.close();
//
// The first unused step whose `when(request)` holds answers; anything else
// gets the fallback (a short text).

import { delayed, jsonOf, serveScripted, takeStep, type ScriptStep, type Scripted } from './scripted.js';

export interface OaUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Of prompt_tokens, how many were read from the server's prompt cache. */
  cached_tokens: number;
}

export interface OaReply {
  content?: string;
  /** One tool call: `arguments` is sent as JSON text, or as it is when already a string. */
  toolCall?: { name: string; arguments: unknown };
  finish_reason?: 'stop' | 'tool_calls' | 'length';
  /** Usage figures (default 10 prompt, 5 completion); `null` leaves them out. */
  usage?: Partial<OaUsage> | null;
  delayMs?: number;
  /** Answer only once this settles (a test holding the answer back). */
  until?: Promise<unknown>;
  error?: { status: number; type?: string; message?: string; headers?: Record<string, string> };
  raw?: string;
}

export interface OaRequest {
  path: string;
  body: any;
  stream: boolean;
  step: number;
}

export type OaStep = ScriptStep<OaRequest, OaReply>;

export function oaStep(reply: OaStep['reply'], when?: OaStep['when']): OaStep {
  return { reply, when };
}

export function oaText(content: string, usage?: Partial<OaUsage> | null): OaReply {
  return { content, usage };
}

export function oaTool(name: string, args: unknown, usage?: Partial<OaUsage> | null): OaReply {
  return { toolCall: { name, arguments: args }, usage };
}

export type OpenAIStandin = Scripted<OaRequest, OaStep>;

function usageOf(r: OaReply) {
  if (r.usage === null) return undefined;
  const u = { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, ...(r.usage ?? {}) };
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens },
  };
}

export async function openaiStandin(script: OaStep[] = [], opts: { fallback?: OaReply } = {}): Promise<OpenAIStandin> {
  const steps = [...script];
  const requests: OaRequest[] = [];
  const fallback = opts.fallback ?? oaText('ok');
  let seq = 0;
  return serveScripted(steps, requests, async (req, res, url, raw) => {
    if (req.method !== 'POST' || !url.pathname.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'stand-in: not found', type: 'invalid_request_error' } }));
      return;
    }
    const body = jsonOf(raw);
    const rec: OaRequest = { path: url.pathname, body, stream: body?.stream === true, step: -1 };
    requests.push(rec);
    const reply = takeStep(steps, rec) ?? fallback;
    if (!(await delayed(res, reply))) return; // the client gave up (a timeout or an abort)
    if (reply.error) {
      const e = reply.error;
      res.writeHead(e.status, { 'content-type': 'application/json', ...(e.headers ?? {}) });
      res.end(JSON.stringify({ error: { message: e.message ?? `stand-in error ${e.status}`, type: e.type ?? 'server_error', code: null } }));
      return;
    }
    if (reply.raw !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(reply.raw);
      return;
    }
    const id = `chatcmpl-standin-${++seq}`;
    const model = typeof body?.model === 'string' ? body.model : 'standin';
    const created = 1_700_000_000;
    const args = reply.toolCall ? (typeof reply.toolCall.arguments === 'string' ? reply.toolCall.arguments : JSON.stringify(reply.toolCall.arguments)) : '';
    const finish = reply.finish_reason ?? (reply.toolCall ? 'tool_calls' : 'stop');
    const usage = usageOf(reply);
    if (rec.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: unknown, finish_reason: string | null = null) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
      let out = chunk({ role: 'assistant', content: '' });
      // Text in two pieces, so a client sees more than one delta.
      const text = reply.content ?? '';
      if (text) {
        const half = Math.ceil(text.length / 2);
        out += chunk({ content: text.slice(0, half) });
        if (text.length > half) out += chunk({ content: text.slice(half) });
      }
      if (reply.toolCall) {
        const half = Math.ceil(args.length / 2);
        out += chunk({ tool_calls: [{ index: 0, id: `call_${seq}`, type: 'function', function: { name: reply.toolCall.name, arguments: args.slice(0, half) } }] });
        out += chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] });
      }
      out += chunk({}, finish);
      if (usage && body?.stream_options?.include_usage) out += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`;
      out += 'data: [DONE]\n\n';
      res.end(out);
      return;
    }
    const message: Record<string, unknown> = { role: 'assistant', content: reply.content ?? null };
    if (reply.toolCall) message.tool_calls = [{ id: `call_${seq}`, type: 'function', function: { name: reply.toolCall.name, arguments: args } }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], ...(usage ? { usage } : {}) }));
  });
}
