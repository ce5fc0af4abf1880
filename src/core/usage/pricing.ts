// Models and prices: one name per model (modelName), the price table's rows,
// the project's own prices (`prices.set`), and a request's cost and how a
// person reads it.

import { PRICE_TABLE, type Price } from '../prices.js';
import { USAGE_LIMITS, type Tally, type UsageEffect, type UsageState, type UsageStep } from './model.js';
import { count, str } from './read.js';

/**
 * One model's one name, whatever reported it: trimmed, lower case, without
 * Claude Code's context-size suffix (`claude-opus-4-8[1m]`) or the Gemini
 * API's `models/` prefix, at most USAGE_LIMITS.model characters; '' for
 * anything that is not a name. The fold names every row with it, so the
 * per-model breakdown lists a model once.
 */
export function modelName(v: unknown): string {
  if (typeof v !== 'string') return '';
  return v
    .slice(0, USAGE_LIMITS.model * 2)
    .trim()
    .toLowerCase()
    .replace(/^models\//, '')
    .replace(/(\s*\[[^\]]*\])+$/, '')
    .trim()
    .slice(0, USAGE_LIMITS.model);
}

/** The date of the price table in the repo (src/core/prices.ts). */
export const PRICE_TABLE_DATE = PRICE_TABLE.date;

/** The table's rows, longest prefix first is not needed: `priceOf` picks the longest match. */
export const PRICES: readonly (readonly [string, Price])[] = Object.entries(PRICE_TABLE.rows);

/** A price row (each figure a finite USD per million tokens in [0, 10,000]), or null. */
export function priceFrom(v: unknown): Price | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const out: Price = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  for (const k of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    const n = o[k];
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 10_000) return null;
    out[k] = n;
  }
  return out;
}

/** Longest prefix of `model` among `rows`' keys. */
function longest<V>(model: string, rows: Iterable<readonly [string, V]>): V | null {
  let best: V | null = null;
  let len = -1;
  for (const [prefix, p] of rows) if (model.startsWith(prefix) && prefix.length > len) ((best = p), (len = prefix.length));
  return best;
}

/** The table's row for a model (its normalised name's longest matching prefix), or null. */
export function priceOf(model: string): Price | null {
  return longest(modelName(model), PRICES);
}

/**
 * The cost of one request in micro-dollars, and where it came from: the
 * project's own price when it has one for the model (`project`), else the
 * vendor's own figure when it reported a positive one (`vendor`), else the
 * table's (`table:<date>`), else unknown (0, and the tokens are counted as
 * unpriced). A vendor's 0 for tokens the table prices is not believed (no
 * token with a price is free), and a priced request with tokens costs at
 * least one micro-dollar, so nothing priced shows as $0.
 */
export function costOf(
  model: string,
  t: { input: number; output: number; cacheRead: number; cacheWrite: number },
  vendorUsd?: number,
  project?: ReadonlyMap<string, { price: Price }>,
): { costMicros: number; costFrom: string } {
  const name = modelName(model);
  const tokens = t.input + t.output + t.cacheRead + t.cacheWrite;
  const priced = (p: Price, from: string) => {
    // USD per million tokens × tokens = micro-dollars.
    const c = Math.round(p.input * t.input + p.output * t.output + p.cacheRead * t.cacheRead + p.cacheWrite * t.cacheWrite);
    return { costMicros: tokens > 0 && (p.input || p.output || p.cacheRead || p.cacheWrite) ? Math.max(1, c) : c, costFrom: from };
  };
  const own = project && project.size ? longest(name, [...project].map(([k, v]) => [k, v.price] as const)) : null;
  if (own) return priced(own, 'project');
  const vendor = typeof vendorUsd === 'number' && Number.isFinite(vendorUsd) && vendorUsd >= 0 ? Math.round(vendorUsd * 1_000_000) : null;
  const p = priceOf(name);
  if (vendor !== null && (vendor > 0 || !p || tokens === 0)) return { costMicros: vendor, costFrom: 'vendor' };
  if (!p) return { costMicros: 0, costFrom: 'unknown' };
  return priced(p, `table:${PRICE_TABLE_DATE}`);
}

/**
 * A tally's cost as a person should read it: `unpriced` when none of its
 * tokens had a price (never `$0`), `$1.23 + unpriced` when some had none,
 * else the dollars.
 */
export function costLabel(t: Pick<Tally, 'costMicros' | 'unpricedTokens'>): string {
  if (t.unpricedTokens > 0) return t.costMicros > 0 ? `${formatUsd(t.costMicros)} + unpriced` : 'unpriced';
  return formatUsd(t.costMicros);
}

/** '$1.23' (or '$0.0042' below a cent, '$0' for nothing). */
export function formatUsd(micros: number): string {
  if (!micros) return '$0';
  const usd = micros / 1_000_000;
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2)}`;
}

/** The project's own price for a model set (null removes it). */
function pricesSet(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
  const model = modelName(o.model);
  if (!model) return [];
  s.count++;
  const price = priceFrom(o.price);
  if (price) {
    s.prices.delete(model);
    s.prices.set(model, { price, by: str(o.by, 120), at: count(o.ts, Number.MAX_SAFE_INTEGER) });
    // At most USAGE_LIMITS.models rows: the oldest set goes first.
    if (s.prices.size > USAGE_LIMITS.models) s.prices.delete(s.prices.keys().next().value as string);
  } else s.prices.delete(model);
  return [];
}

export const PRICE_STEPS: Readonly<Record<string, UsageStep>> = {
  'prices.set': pricesSet,
};
