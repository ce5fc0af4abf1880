// The browser's side of the approvals stream: one EventSource on
// /approvals/stream, folded by the shared approvals fold (src/core/approvals.ts),
// the very code the server folds with. Nothing here interprets an event itself.
//
// Invariants:
// - the state is built only by `approvalsFromJSON` (snapshots) and
//   `applyApproval` (events), in position order, at most once per position;
// - a decision a person makes here is a POST whose answer only says whether it
//   was accepted; what it changed arrives on the stream like everyone's.
// - one connection per tab, shared by every component that shows approvals
//   (the inbox, the agent card, the nav badge).

import { useEffect, useState } from 'preact/hooks';
import { applyApproval, approvalsFromJSON, emptyApprovals, type ApprovalsJSON, type ApprovalsState } from '../../../src/core/approvals.js';

export type Connection = 'connecting' | 'live' | 'reconnecting';

function parseId(id: string): { epoch: string; position: number } | null {
  const m = /^(.+):(\d+)$/.exec(id);
  return m ? { epoch: m[1], position: Number(m[2]) } : null;
}

export class ApprovalsClient {
  state: ApprovalsState = emptyApprovals();
  connection: Connection = 'connecting';
  epoch = '';
  position = 0;
  private es: EventSource | null = null;
  private listeners = new Set<() => void>();
  private scheduled = false;
  private retryTimer = 0;
  private retryMs = 500;

  constructor(private base = '') {}

  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    if (this.listeners.size === 1) this.open();
    return () => {
      this.listeners.delete(f);
      if (this.listeners.size === 0) this.close();
    };
  }

  /** Listeners hear about changes at most once per animation frame. */
  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const f of this.listeners) f();
    });
  }

  private open(): void {
    const last = this.epoch ? `${this.epoch}:${this.position}` : '';
    const es = new EventSource(`${this.base}/approvals/stream${last ? `?lastEventId=${encodeURIComponent(last)}` : ''}`);
    this.es = es;
    es.onopen = () => {
      this.retryMs = 500;
    };
    es.addEventListener('snapshot', (e) => {
      const d = JSON.parse((e as MessageEvent).data as string) as { epoch: string; position: number; state: ApprovalsJSON };
      this.state = approvalsFromJSON(d.state);
      this.epoch = d.epoch;
      this.position = d.position;
      this.connection = 'live';
      this.changed();
    });
    es.addEventListener('event', (e) => {
      const m = e as MessageEvent;
      const id = parseId(m.lastEventId);
      if (!id || (id.epoch === this.epoch && id.position <= this.position)) return;
      const d = JSON.parse(m.data as string) as { event: unknown };
      applyApproval(this.state, d.event, id.position);
      this.epoch = id.epoch;
      this.position = id.position;
      if (this.connection !== 'live') this.connection = 'live';
      this.changed();
    });
    es.addEventListener('error', (e) => {
      if (es !== this.es) return;
      this.connection = 'reconnecting';
      this.changed();
      // The server's own `event: error` ends the stream; so does a closed EventSource.
      if (e instanceof MessageEvent || es.readyState === EventSource.CLOSED) {
        es.close();
        this.es = null;
        clearTimeout(this.retryTimer);
        this.retryTimer = window.setTimeout(() => this.listeners.size && this.open(), this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 5000);
      }
    });
  }

  private close(): void {
    this.es?.close();
    this.es = null;
    clearTimeout(this.retryTimer);
  }
}

let shared: ApprovalsClient | null = null;

/** The tab's approvals client; the component re-renders when the state changes. */
export function useApprovals(): ApprovalsClient {
  shared ??= new ApprovalsClient();
  const client = shared;
  const [, tick] = useState(0);
  useEffect(() => client.subscribe(() => tick((n) => n + 1)), [client]);
  return client;
}

/** A clock that ticks every `ms` (waiting times count up while the page is open). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export type Answer = { ok: true } | { ok: false; status: number; message: string };

/** Posts a decision. The server records who decided (in local mode: "local owner"). */
export async function decide(id: string, decision: 'allow' | 'deny'): Promise<Answer> {
  try {
    const r = await fetch(`/approvals/${encodeURIComponent(id)}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision }),
    });
    if (r.ok) return { ok: true };
    let message = `the server answered ${r.status}`;
    try {
      message = ((await r.json()) as { message: string }).message ?? message;
    } catch {}
    return { ok: false, status: r.status, message };
  } catch (e) {
    return { ok: false, status: 0, message: `Roost could not be reached: ${(e as Error).message}` };
  }
}

/** `3 s`, `4 min 05 s`, `1 h 02 min`. */
export function since(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
