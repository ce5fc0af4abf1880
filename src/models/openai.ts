// OpenAI-compatible chat completions as a ModelProvider, through `openai`
// (v6; v7 needs Node 22). The same API is served by OpenAI, Ollama,
// llama.cpp's server and vLLM, so one provider covers models people keep
// local. Keys and the base URL come from the SDK's own environment variables
// (OPENAI_API_KEY, OPENAI_BASE_URL) unless the configuration names a base URL
// (`openai:<model>@<url>`).
//
// Differences between servers it absorbs:
// - the output cap is `max_completion_tokens` on OpenAI's own API (its newer
//   models refuse `max_tokens`) and `max_tokens` elsewhere (what local servers
//   read);
// - a server that ignores a forced `tool_choice` and writes the JSON as text
//   still gives a structured answer when that text is an object fitting the schema;
// - a server that reports no usage gets an estimate, marked `estimated`.

import OpenAI from 'openai';
import { checkToolInput, count, deadline, errorOfThrown, estimateUsage, jsonObjectIn, jsonSchema, modelError } from './common.js';
import { DEFAULT_TIMEOUT_MS, zeroUsage, type ModelCapabilities, type ModelOutcome, type ModelProvider, type ModelRequest, type ModelUsage, type StopReason } from './types.js';

export interface OpenAIOptions {
  model: string;
  /** Overrides OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama). */
  baseURL?: string;
  /** Overrides OPENAI_API_KEY. Local servers take any key; `none` is sent when there is none. */
  apiKey?: string;
  label?: string;
  /** Which field carries the output cap (default: by server, see above). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  capabilities?: Partial<ModelCapabilities>;
}

interface RawUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}

/** Chat completions' usage, normalised: `prompt_tokens` already counts the cached ones. */
export function openaiUsage(u: RawUsage): ModelUsage {
  const input = count(u.prompt_tokens);
  const output = count(u.completion_tokens);
  const cacheRead = count(u.prompt_tokens_details?.cached_tokens);
  return { input, output, cacheRead, cacheWrite: 0, total: input + output, estimated: false };
}

// The SDK's status-less failures: a connection that timed out, or failed (refused, reset, cut short; an SDK-side abort).
const SDK_ERRORS = {
  isTimeout: (e: unknown) => e instanceof OpenAI.APIConnectionTimeoutError,
  isConnection: (e: unknown) => e instanceof OpenAI.APIConnectionError || e instanceof OpenAI.APIUserAbortError,
};

function stopOf(s: unknown): StopReason {
  return s === 'stop' ? 'end' : s === 'length' ? 'max_tokens' : s === 'tool_calls' || s === 'function_call' ? 'tool' : 'other';
}

/** True when the URL is OpenAI's own API (or none is given: the SDK's default is OpenAI's). */
export function isOpenAIHosted(baseURL: string | undefined): boolean {
  if (!baseURL) return true;
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

export class OpenAIProvider implements ModelProvider {
  readonly provider = 'openai';
  readonly model: string;
  readonly label: string;
  readonly capabilities: ModelCapabilities;
  private readonly client: OpenAI;
  private readonly maxField: 'max_tokens' | 'max_completion_tokens';

  constructor(opts: OpenAIOptions) {
    this.model = opts.model;
    this.label = opts.label ?? `openai:${opts.model}${opts.baseURL ? `@${opts.baseURL}` : ''}`;
    this.capabilities = { structuredOutput: true, tokenUsage: true, streaming: true, ...opts.capabilities };
    const baseURL = opts.baseURL ?? process.env.OPENAI_BASE_URL;
    this.maxField = opts.maxTokensField ?? (isOpenAIHosted(baseURL) ? 'max_completion_tokens' : 'max_tokens');
    const apiKey = opts.apiKey ?? process.env.OPENAI_API_KEY ?? (baseURL && !isOpenAIHosted(baseURL) ? 'none' : undefined);
    // The SDK's own retries are off: withRetries is the one retry policy.
    this.client = new OpenAI({ maxRetries: 0, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}) });
  }

  async call(req: ModelRequest): Promise<ModelOutcome> {
    const ms = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const dl = deadline(req);
    const params = {
      model: this.model,
      messages: [{ role: 'system' as const, content: req.system }, ...req.messages.map((m) => ({ role: m.role, content: m.content }))],
      [this.maxField]: req.maxTokens,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.tool
        ? {
            tools: [{ type: 'function' as const, function: { name: req.tool.name, description: req.tool.description, parameters: jsonSchema(req.tool.schema) } }],
            tool_choice: { type: 'function' as const, function: { name: req.tool.name } },
          }
        : {}),
    };
    const options = { signal: dl.signal, timeout: ms + 1_000 };
    let text = '';
    let args: string | undefined;
    let usage: RawUsage | undefined;
    let stop: unknown;
    let model = this.model;
    try {
      if (req.onText && this.capabilities.streaming) {
        const stream = await this.client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, options);
        for await (const chunk of stream) {
          if (typeof chunk.model === 'string' && chunk.model) model = chunk.model;
          if (chunk.usage) usage = chunk.usage;
          const c = chunk.choices?.[0];
          if (!c) continue;
          const d = c.delta ?? {};
          if (typeof d.content === 'string' && d.content) {
            text += d.content;
            req.onText(d.content);
          }
          for (const tc of d.tool_calls ?? []) {
            if (tc.index !== 0) continue;
            if (tc.function?.name && tc.function.name !== req.tool?.name) continue;
            args = (args ?? '') + (tc.function?.arguments ?? '');
          }
          if (c.finish_reason) stop = c.finish_reason;
        }
      } else {
        const r = await this.client.chat.completions.create(params, options);
        if (typeof r.model === 'string' && r.model) model = r.model;
        usage = (r.usage ?? undefined);
        const c = r.choices?.[0];
        if (!c || !c.message) throw Object.assign(new Error('the answer has no choice'), { name: 'BadResponse' });
        text = typeof c.message.content === 'string' ? c.message.content : '';
        stop = c.finish_reason;
        const tc = c.message.tool_calls?.find((t) => t.type === 'function' && t.function.name === req.tool?.name);
        if (tc && tc.type === 'function') args = tc.function.arguments;
        if (req.onText && text) req.onText(text);
      }
    } catch (e) {
      return { ok: false, error: errorOfThrown(e, dl, ms, SDK_ERRORS), usage: zeroUsage(), model };
    } finally {
      dl.clear();
    }
    const u = usage && typeof usage === 'object' ? openaiUsage(usage) : estimateUsage(req.system, req.messages, text + (args ?? ''));
    if (!req.tool) return { ok: true, kind: 'text', text, usage: u, model, stop: stopOf(stop) };
    let candidate: unknown;
    if (args !== undefined) {
      try {
        candidate = args.trim() ? JSON.parse(args) : {};
      } catch {
        return { ok: false, error: modelError('bad_response', `the arguments of ${req.tool.name} are not JSON${stopOf(stop) === 'max_tokens' ? ' (it ran out of tokens)' : ''}`), usage: u, model };
      }
    } else {
      candidate = jsonObjectIn(text);
    }
    if (candidate === undefined) return { ok: false, error: modelError('bad_response', `the model did not call ${req.tool.name}${stopOf(stop) === 'max_tokens' ? ' (it ran out of tokens)' : ''}`), usage: u, model };
    const checked = checkToolInput(req.tool.schema, candidate);
    if (!checked.ok) return { ok: false, error: modelError('bad_response', checked.message), usage: u, model };
    return { ok: true, kind: 'tool', input: checked.input, text, usage: u, model, stop: stopOf(stop) };
  }
}
