// What both providers share: the deadline of a call, the mapping of HTTP
// failures onto error kinds, the schema check of a tool's input, and the
// usage estimate for servers that report none.

import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { DEFAULT_TIMEOUT_MS, RETRYABLE, type ModelError, type ModelErrorKind, type ModelMessage, type ModelRequest, type ModelUsage } from './types.js';

export function modelError(kind: ModelErrorKind, message: string, extra: { status?: number; retryAfterMs?: number } = {}): ModelError {
  return { kind, message: message.slice(0, 500), retryable: RETRYABLE.includes(kind), ...extra };
}

/**
 * The deadline of one call: an AbortSignal that fires at the timeout or when
 * the caller's signal does, and which of the two it was.
 */
export function deadline(req: ModelRequest): { signal: AbortSignal; timedOut: () => boolean; aborted: () => boolean; clear: () => void } {
  const ctl = new AbortController();
  let timedOut = false;
  const ms = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort(new Error(`timed out after ${ms} ms`));
  }, ms);
  const onAbort = () => ctl.abort(req.signal?.reason);
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: ctl.signal,
    timedOut: () => timedOut,
    aborted: () => !timedOut && req.signal?.aborted === true,
    clear: () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** `retry-after-ms`, or `retry-after` in seconds or as an HTTP date, in ms (capped at 10 minutes). */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined | null, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return Math.min(ms, 600_000);
  const v = headers.get('retry-after');
  if (v === null) return undefined;
  const s = Number(v);
  if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, 600_000);
  const d = Date.parse(v);
  return Number.isFinite(d) ? Math.min(Math.max(0, d - now), 600_000) : undefined;
}

/** The error kind of an HTTP status (as both APIs use them; 529 is Anthropic's "overloaded"). */
export function kindOfStatus(status: number): ModelErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'unavailable';
  if (status >= 400) return 'bad_request';
  return 'bad_response';
}

/**
 * An SDK failure as a ModelError. Both SDKs throw an APIError with `status` and
 * `headers` for an HTTP answer, and status-less errors for a connection that
 * failed, timed out or was aborted; our own deadline tells which abort it was.
 */
export function errorOfThrown(
  e: unknown,
  dl: { timedOut(): boolean; aborted(): boolean },
  ms: number,
  sdk: { isTimeout(e: unknown): boolean; isConnection(e: unknown): boolean },
): ModelError {
  if (dl.timedOut()) return modelError('timeout', `no answer within ${ms} ms`);
  if (dl.aborted()) return modelError('aborted', 'the call was aborted');
  const err = e as { status?: unknown; headers?: { get(n: string): string | null }; message?: unknown };
  const message = typeof err?.message === 'string' ? err.message : String(e);
  if (typeof err?.status === 'number') {
    const kind = kindOfStatus(err.status);
    return modelError(kind, message, { status: err.status, ...(kind === 'rate_limited' || kind === 'unavailable' ? { retryAfterMs: retryAfterMs(err.headers) } : {}) });
  }
  if (sdk.isTimeout(e)) return modelError('timeout', message);
  // A connection refused or reset, a DNS failure, a stream cut short.
  if (sdk.isConnection(e)) return modelError('unavailable', message);
  return modelError('bad_response', message);
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The JSON Schema of a TypeBox schema, as plain JSON (TypeBox's symbols stripped). */
export function jsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/** Checks a tool's input against its schema: the input, or a message naming the first problem. */
export function checkToolInput(schema: TSchema, input: unknown): { ok: true; input: Record<string, unknown> } | { ok: false; message: string } {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, message: 'the tool input is not an object' };
  if (check.Check(input)) return { ok: true, input: input as Record<string, unknown> };
  const first = check.Errors(input).First();
  return { ok: false, message: first ? `the tool input does not fit its schema: ${first.path || '/'} ${first.message}` : 'the tool input does not fit its schema' };
}

/**
 * A JSON object written as text (some OpenAI-compatible servers ignore a
 * forced tool choice and answer in text): the object, or undefined. Accepts a
 * fenced ```json block around it.
 */
export function jsonObjectIn(text: string): unknown {
  const t = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  if (!t.startsWith('{')) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

/** About four characters a token: only for servers that report no usage. */
export function estimateUsage(system: string, messages: ModelMessage[], output: string): ModelUsage {
  let chars = system.length;
  for (const m of messages) chars += m.content.length;
  const input = Math.ceil(chars / 4);
  const out = Math.ceil(output.length / 4);
  return { input, output: out, cacheRead: 0, cacheWrite: 0, total: input + out, estimated: true };
}

/** A non-negative whole number from a usage field, else 0. */
export function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}
