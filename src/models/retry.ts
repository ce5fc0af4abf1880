// The one retry policy: a provider wrapped so that a call failing with a
// retryable kind (timeout, rate_limited, unavailable) is tried again, a
// bounded number of times, with exponential backoff and full jitter, waiting
// at least what the server asked for (retry-after). The usage of every
// attempt is added up: tokens a failed attempt spent are still spent.

import { addUsage, type ModelOutcome, type ModelProvider, type ModelRequest } from './types.js';

export interface RetryOptions {
  /** Tries in all, the first included (default 3). */
  attempts?: number;
  /** Backoff before the second try; doubles each time (default 500 ms). */
  baseMs?: number;
  /** Longest wait between tries (default 8 s). */
  maxMs?: number;
  /** For tests: the jitter source and the clock's wait. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Told of each retry (for logs). */
  onRetry?: (attempt: number, outcome: ModelOutcome & { ok: false }, waitMs: number) => void;
}

function sleeper(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((ok) => {
    if (signal?.aborted) return ok();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      ok();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function withRetries(inner: ModelProvider, opts: RetryOptions = {}): ModelProvider {
  const attempts = Math.max(1, opts.attempts ?? 3);
  const base = opts.baseMs ?? 500;
  const max = opts.maxMs ?? 8_000;
  const random = opts.random ?? Math.random;
  const sleep = opts.sleep ?? sleeper;
  return {
    provider: inner.provider,
    model: inner.model,
    label: inner.label,
    capabilities: inner.capabilities,
    async call(req: ModelRequest): Promise<ModelOutcome> {
      let out = await inner.call(req);
      let usage = out.usage;
      for (let attempt = 2; attempt <= attempts && !out.ok && out.error.retryable && !req.signal?.aborted; attempt++) {
        const backoff = Math.min(max, base * 2 ** (attempt - 2));
        const wait = Math.max(Math.floor(random() * backoff), Math.min(out.error.retryAfterMs ?? 0, max));
        opts.onRetry?.(attempt, out, wait);
        await sleep(wait, req.signal);
        if (req.signal?.aborted) break;
        out = await inner.call(req);
        usage = addUsage(usage, out.usage);
      }
      return { ...out, usage };
    },
  };
}
