// A client of the flock's contract (spec/flock-events.md) for tests: the
// HTTP calls and a list's SSE stream, parsed.

import assert from 'node:assert/strict';
import { openSse, type SseReader } from './sse.js';

export interface ListEvent {
  id: string;
  event: string;
  data: Record<string, any>;
}

export interface ListWatch {
  sse: SseReader;
  events(): ListEvent[];
  /** Resolves with the first event (at or after index `from`) of that name whose data matches. */
  next(event: string, match?: (d: Record<string, any>) => boolean, timeoutMs?: number, from?: number): Promise<ListEvent>;
  close(): void;
}

export function flockClient(url: string) {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text)) : null };
  };
  const get = async (path: string) => {
    const r = await fetch(url + path);
    return { status: r.status, body: (await r.json()) };
  };
  return {
    post,
    get,
    list: (text: string, requester = 'ann', extra: Record<string, unknown> = {}) => post('/api/lists', { text, requester, ...extra }),
    /** Posts a list that must be accepted; resolves with its id. */
    async start(text: string, requester = 'ann', extra: Record<string, unknown> = {}): Promise<string> {
      const r = await post('/api/lists', { text, requester, ...extra });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      assert.match(r.body.list_id, /^[A-Za-z0-9_.:-]+$/);
      return r.body.list_id as string;
    },
    verdict: (item_id: string, target: 'triage' | 'output', approve: boolean) => post('/api/verdicts', { item_id, target, approve }),
    async watch(list_id: string, lastEventId?: string): Promise<ListWatch> {
      const sse = await openSse(`${url}/api/events?list_id=${encodeURIComponent(list_id)}`, lastEventId ? { 'last-event-id': lastEventId } : {});
      const parse = () => sse.frames.map((f) => ({ id: f.id ?? '', event: f.event, data: JSON.parse(f.data) as Record<string, any> }));
      return {
        sse,
        events: parse,
        async next(event, match = () => true, timeoutMs = 10_000, from = 0) {
          const f = await sse.waitFor((x) => x.event === event && match(JSON.parse(x.data)), timeoutMs, from);
          return { id: f.id ?? '', event: f.event, data: JSON.parse(f.data) };
        },
        close: () => sse.close(),
      };
    },
  };
}

export type FlockClient = ReturnType<typeof flockClient>;

/** Every contract payload carries list_id and an RFC 3339 ts, and every frame an id: line. */
export function assertContractFrame(e: ListEvent, list_id: string): void {
  assert.match(e.id, /^[A-Za-z0-9_-]+:\d+$/, `${e.event} has an id: line`);
  assert.equal(e.data.list_id, list_id, `${e.event} names its list`);
  assert.match(String(e.data.ts), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, `${e.event} has an RFC 3339 ts`);
}
