// The one boundary between Roost and a language model: a small provider
// interface with capability flags, implemented for the Anthropic Messages API
// (anthropic.ts) and for OpenAI-compatible chat completions (openai.ts, which
// also covers Ollama, llama.cpp's server and vLLM). Every implementation runs
// the same contract suite (test/models.contract.ts) against scripted stand-ins.
//
// Invariants every provider keeps:
// - `call` never rejects and never throws: failures are values with a kind;
// - a call ends within its timeout (a timeout is an error of kind `timeout`);
// - usage is the provider's own figures when it reports them, normalised
//   (ModelUsage); an estimate is marked `estimated` and only stands in when
//   the server reported none;
// - a forced tool call returns the tool's input only when it passes the
//   tool's schema; anything else is `bad_response`;
// - nothing retries inside a provider (the SDKs' own retries are off):
//   `withRetries` (retry.ts) is the one retry policy.

import type { TSchema } from '@sinclair/typebox';

export interface ModelCapabilities {
  /** A forced tool call with a JSON Schema returns structured input. */
  structuredOutput: boolean;
  /** Usage figures come from the provider (not estimated) when it sends them. */
  tokenUsage: boolean;
  /** `onText` receives the answer as it is written. */
  streaming: boolean;
}

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * A tool the model must call (structured output). `schema` is a TypeBox
 * schema, which is JSON Schema: it is sent as the tool's input schema and the
 * model's input is checked against it.
 */
export interface ModelTool {
  name: string;
  description: string;
  schema: TSchema;
}

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  maxTokens: number;
  /** When set, the model is made to call this tool and the result is its input. */
  tool?: ModelTool;
  temperature?: number;
  /** The whole call, streaming included, ends within this (default 60 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Receives text deltas as they arrive (only when `capabilities.streaming`). */
  onText?: (delta: string) => void;
}

/**
 * Token counts of one call. `input` counts every prompt token, cached or not
 * (`cacheRead` and `cacheWrite` are the parts of it read from or written to a
 * prompt cache); `total` is `input + output`, what a list's budget is charged.
 */
export interface ModelUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
  /** True when the server reported no figures and these are estimates (about 4 characters a token). */
  estimated: boolean;
}

export type ModelErrorKind =
  /** The call did not finish within its timeout. */
  | 'timeout'
  /** 429: too many requests; `retryAfterMs` when the server said. */
  | 'rate_limited'
  /** The server could not be reached, or answered 5xx / overloaded. */
  | 'unavailable'
  /** 401/403: the key is missing, wrong or not allowed. */
  | 'auth'
  /** 400/404/413/422: the request itself was refused (a model name that does not exist, say). */
  | 'bad_request'
  /** The answer could not be read, or a forced tool call did not come back valid. */
  | 'bad_response'
  /** The caller's signal aborted the call. */
  | 'aborted';

export const RETRYABLE: readonly ModelErrorKind[] = ['timeout', 'rate_limited', 'unavailable'];

export interface ModelError {
  kind: ModelErrorKind;
  message: string;
  status?: number;
  retryAfterMs?: number;
  retryable: boolean;
}

export type StopReason = 'end' | 'max_tokens' | 'tool' | 'other';

export type ModelOutcome =
  | { ok: true; kind: 'text'; text: string; usage: ModelUsage; model: string; stop: StopReason }
  | { ok: true; kind: 'tool'; input: Record<string, unknown>; text: string; usage: ModelUsage; model: string; stop: StopReason }
  | { ok: false; error: ModelError; usage: ModelUsage; model: string };

export interface ModelProvider {
  /** `anthropic` or `openai`. */
  readonly provider: string;
  readonly model: string;
  /** `<provider>:<model>[@baseURL]`, as configured (for logs and the flock view). */
  readonly label: string;
  readonly capabilities: ModelCapabilities;
  /** Never rejects. */
  call(req: ModelRequest): Promise<ModelOutcome>;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

export function zeroUsage(): ModelUsage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false };
}

export function addUsage(a: ModelUsage, b: ModelUsage): ModelUsage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    total: a.total + b.total,
    estimated: a.estimated || b.estimated,
  };
}
