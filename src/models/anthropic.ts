// The Anthropic Messages API as a ModelProvider, through `@anthropic-ai/sdk`.
// Keys and the base URL come from the SDK's own environment variables
// (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL) unless the
// configuration names a base URL (`anthropic:<model>@<url>`).

import Anthropic from '@anthropic-ai/sdk';
import { checkToolInput, count, deadline, errorOfThrown, estimateUsage, jsonObjectIn, jsonSchema, modelError } from './common.js';
import { DEFAULT_TIMEOUT_MS, zeroUsage, type ModelCapabilities, type ModelOutcome, type ModelProvider, type ModelRequest, type ModelUsage, type StopReason } from './types.js';

export interface AnthropicOptions {
  model: string;
  /** Overrides ANTHROPIC_BASE_URL. */
  baseURL?: string;
  /** Overrides ANTHROPIC_API_KEY. */
  apiKey?: string;
  label?: string;
  capabilities?: Partial<ModelCapabilities>;
}

interface RawUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
}

/** The Messages API's usage, normalised: `input` counts cached prompt tokens too (the API reports them apart). */
export function anthropicUsage(u: RawUsage): ModelUsage {
  const cacheWrite = count(u.cache_creation_input_tokens);
  const cacheRead = count(u.cache_read_input_tokens);
  const input = count(u.input_tokens) + cacheWrite + cacheRead;
  const output = count(u.output_tokens);
  return { input, output, cacheRead, cacheWrite, total: input + output, estimated: false };
}

// The SDK's status-less failures: a connection that timed out, or failed (refused, reset, cut short; an SDK-side abort).
const SDK_ERRORS = {
  isTimeout: (e: unknown) => e instanceof Anthropic.APIConnectionTimeoutError,
  isConnection: (e: unknown) => e instanceof Anthropic.APIConnectionError || e instanceof Anthropic.APIUserAbortError,
};

function stopOf(s: unknown): StopReason {
  return s === 'end_turn' || s === 'stop_sequence' ? 'end' : s === 'max_tokens' ? 'max_tokens' : s === 'tool_use' ? 'tool' : 'other';
}

export class AnthropicProvider implements ModelProvider {
  readonly provider = 'anthropic';
  readonly model: string;
  readonly label: string;
  readonly capabilities: ModelCapabilities;
  private readonly client: Anthropic;

  constructor(opts: AnthropicOptions) {
    this.model = opts.model;
    this.label = opts.label ?? `anthropic:${opts.model}${opts.baseURL ? `@${opts.baseURL}` : ''}`;
    this.capabilities = { structuredOutput: true, tokenUsage: true, streaming: true, ...opts.capabilities };
    // The SDK's own retries are off: withRetries is the one retry policy.
    this.client = new Anthropic({
      maxRetries: 0,
      ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    });
  }

  async call(req: ModelRequest): Promise<ModelOutcome> {
    const ms = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const dl = deadline(req);
    const params = {
      model: this.model,
      max_tokens: req.maxTokens,
      system: req.system,
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.tool
        ? {
            tools: [{ name: req.tool.name, description: req.tool.description, input_schema: jsonSchema(req.tool.schema) as Anthropic.Tool.InputSchema }],
            tool_choice: { type: 'tool' as const, name: req.tool.name, disable_parallel_tool_use: true },
          }
        : {}),
    };
    // An explicit per-request timeout also tells the SDK not to refuse a long
    // non-streaming call; our own deadline is what actually ends it.
    const options = { signal: dl.signal, timeout: ms + 1_000 };
    let text = '';
    let toolInput: unknown;
    let toolSeen = false;
    let usage: RawUsage | undefined;
    let stop: unknown;
    let model = this.model;
    try {
      if (req.onText && this.capabilities.streaming) {
        const stream = await this.client.messages.create({ ...params, stream: true }, options);
        const json = new Map<number, string>();
        for await (const ev of stream) {
          switch (ev.type) {
            case 'message_start':
              usage = { ...(ev.message.usage as RawUsage) };
              if (typeof ev.message.model === 'string') model = ev.message.model;
              break;
            case 'content_block_start':
              if (ev.content_block.type === 'tool_use' && ev.content_block.name === req.tool?.name) {
                toolSeen = true;
                json.set(ev.index, '');
              }
              break;
            case 'content_block_delta':
              if (ev.delta.type === 'text_delta') {
                text += ev.delta.text;
                req.onText(ev.delta.text);
              } else if (ev.delta.type === 'input_json_delta' && json.has(ev.index)) {
                json.set(ev.index, json.get(ev.index)! + ev.delta.partial_json);
              }
              break;
            case 'message_delta': {
              stop = ev.delta.stop_reason;
              // The delta carries the final output count (and, on some servers, the rest).
              const u = ev.usage as RawUsage | undefined;
              if (u) usage = { ...(usage ?? {}), ...Object.fromEntries(Object.entries(u).filter(([, v]) => v !== null && v !== undefined)) };
              break;
            }
          }
        }
        for (const raw of json.values()) {
          try {
            toolInput = raw ? JSON.parse(raw) : {};
          } catch {
            toolInput = undefined;
          }
          break;
        }
      } else {
        const msg = await this.client.messages.create(params, options);
        if (typeof msg.model === 'string') model = msg.model;
        usage = msg.usage;
        stop = msg.stop_reason;
        for (const b of msg.content ?? []) {
          if (b.type === 'text') text += b.text;
          else if (b.type === 'tool_use' && b.name === req.tool?.name && !toolSeen) {
            toolSeen = true;
            toolInput = b.input;
          }
        }
        if (req.onText && text) req.onText(text);
      }
    } catch (e) {
      return { ok: false, error: errorOfThrown(e, dl, ms, SDK_ERRORS), usage: zeroUsage(), model };
    } finally {
      dl.clear();
    }
    const u = usage && typeof usage === 'object' ? anthropicUsage(usage) : estimateUsage(req.system, req.messages, text + (toolInput ? JSON.stringify(toolInput) : ''));
    if (!req.tool) return { ok: true, kind: 'text', text, usage: u, model, stop: stopOf(stop) };
    // A forced tool call: its input, checked against the schema (or, failing a
    // tool call, a JSON object the model wrote as text).
    const candidate = toolSeen ? toolInput : jsonObjectIn(text);
    if (candidate === undefined) return { ok: false, error: modelError('bad_response', `the model did not call ${req.tool.name}${stopOf(stop) === 'max_tokens' ? ' (it ran out of tokens)' : ''}`), usage: u, model };
    const checked = checkToolInput(req.tool.schema, candidate);
    if (!checked.ok) return { ok: false, error: modelError('bad_response', checked.message), usage: u, model };
    return { ok: true, kind: 'tool', input: checked.input, text, usage: u, model, stop: stopOf(stop) };
  }
}
