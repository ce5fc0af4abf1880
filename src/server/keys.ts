// A request's Idempotency-Key, as the route layer hands it to a handler
// (route.ts, a route with `key`). One mechanism for every keyed route:
//
// - the key is the client's, as it came (at most 200 characters): nobody
//   builds a prefix of it;
// - its namespace is the store's `scope` (AppendOptions): the stream the
//   handler appends to and the key's owner, which is the caller (their uid)
//   unless the route names another (a sign-in's login, an invite's code);
//   so two callers, two projects or two streams never share a key;
// - its fingerprint is a hash of the method, the path and the body in a
//   canonical form (keys sorted): the same key with another request is the
//   store's conflict, 422. A route whose contract says a retry with another
//   body still gets the first answer (the floor's POST /events) has none;
// - keys written before this (each caller prefixed the key by hand, in the
//   stream's own namespace; the store's key-table migration then cut a
//   leading `<stream>:`) are looked up too when the new place is unused, so
//   a request sent before an upgrade and retried after it is still
//   recognised: the route declares its old form once (`legacy`).

import { createHash } from 'node:crypto';
import type { AppendOptions, AppendResult, EventStore, NewEvent } from '../storage/types.js';

/** The store's options for one key (append, findKey, keepAnswer). */
export type KeyOptions = AppendOptions & { idempotencyKey: string };

/** A key's text as a route stored it before keys were scoped here, on `stream`. */
export type LegacyKey = (stream: string, key: string) => string;

export class RequestKey {
  constructor(
    /** The client's key, as sent. */
    readonly key: string,
    /** Whose key it is: the caller's uid, or what the route names (`login:<name>`). */
    readonly owner: string,
    /** What the request was (method, path, canonical body), or undefined where the contract compares no body. */
    readonly fingerprint: string | undefined,
    private readonly legacy: LegacyKey | null = null,
  ) {}

  /** The same key with another old form (one request written to two streams, each half keyed differently before). */
  withLegacy(legacy: LegacyKey): RequestKey {
    return new RequestKey(this.key, this.owner, this.fingerprint, legacy);
  }

  /** The store's options for this key on `stream`: its namespace is the stream and the owner. */
  on(stream: string): KeyOptions {
    return { idempotencyKey: this.key, scope: `${stream}|${this.owner}`, fingerprint: this.fingerprint };
  }

  /**
   * What the store says of this key on `stream` without appending: the first
   * request's result (a duplicate), null when unused, a StoreError 'conflict'
   * (thrown) when it was used for a different request. An unused key is
   * looked up in its old place too (see the file comment).
   */
  async seen(store: EventStore, stream: string): Promise<AppendResult | null> {
    const now = await store.findKey(stream, this.on(stream));
    if (now || !this.legacy) return now;
    for (const old of oldPlaces(stream, this.legacy(stream, this.key))) {
      const r = await store.findKey(stream, { idempotencyKey: old });
      if (r) return r;
    }
    return null;
  }

  /** Appends under this key unless it was used: the first request's result (`duplicate: true`) then. */
  async append(store: EventStore, stream: string, events: NewEvent[]): Promise<AppendResult> {
    return (await this.seen(store, stream)) ?? store.append(stream, events, this.on(stream));
  }
}

/**
 * An old key's texts in its stream's namespace: as written since the store's
 * key-table migration, and as that migration left one written before it
 * (a leading `<stream>:` cut).
 */
function oldPlaces(stream: string, old: string): string[] {
  const cut = old.length > stream.length + 1 && old.startsWith(`${stream}:`) ? old.slice(stream.length + 1) : null;
  return cut === null ? [old] : [old, cut];
}

/** The fingerprint of a request: method, path and body (JSON, keys sorted), hashed. */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  const h = createHash('sha256');
  h.update(`${method} ${path}\n`);
  if (body !== undefined) h.update(canonical(body));
  return h.digest('base64url');
}

/** JSON with every object's keys sorted, so the same body sent in another order is the same request. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o).sort()) if (o[k] !== undefined) parts.push(`${JSON.stringify(k)}:${canonical(o[k])}`);
  return `{${parts.join(',')}}`;
}
