// The one live connection of a browser (docs/web.md, "The live hub"): every
// view of every tab of one origin reads the server's multiplexed stream
// (`GET /live?s=<scope>[@<cursor>]&s=...`, src/core/live-wire.ts) through one
// EventSource, held by one tab, the leader.
//
// Invariants:
// - a tab holds the connection only while it holds the Web Lock `roost-live`;
//   the lock is released when the tab goes, and the next tab in the lock's
//   queue takes over. Without Web Locks or BroadcastChannel every tab is its
//   own leader (still one connection per tab);
// - the leader carries the union of every tab's scopes. A scope the
//   connection already carries resumes from the connection's own cursor (the
//   last position it received: every tab was sent every frame up to it); a
//   scope new to the connection starts from the lowest cursor any tab
//   announced (none: a snapshot); a subscription that joins a carried scope
//   from below the connection's cursor (or fresh) makes the leader reopen
//   that scope from there. (A tab's cursor in a scope it already reads may
//   lag the connection's by the frames still on their way to it: that alone
//   never reopens anything.) So a reopen never skips a frame some tab has not seen; what a tab
//   has seen already comes again and is dropped by its client's `advance`;
// - every frame the connection receives is sent to every tab, in order
//   (BroadcastChannel keeps one sender's order), and each tab hands it to its
//   own subscriptions of that scope; a snapshot replaces state everywhere,
//   which is always right (it is the state at the newest position);
// - the connection is reopened (debounced) when the set of scopes changes,
//   and after it ends (the server's `event: error`, or a network error) with
//   a backoff of 0.5 s doubling to 5 s, cursors carried. The browser's own
//   EventSource retry is never used: its URL would carry stale cursors;
// - a scope the server closes (`closed`: 403, 404, ...) is dropped from the
//   connection; its subscriptions hear why and ask again later.
//
// Messages between tabs (BroadcastChannel `roost-live`):
//   follower → leader  {t:'announce', tab, scopes: [[scope, cursor|null], ...], joined: [scope, ...]}
//                      every scope the tab reads, after each change and when asked; `joined`: those a subscription joined since the last one
//                      {t:'bye', tab}                                            the tab is going
//   leader → all       {t:'who'}                                                 a new leader asks every tab to announce
//                      {t:'f', line}                                             one frame, the JSON of its `data:` line
//                      {t:'state', state}                                        the connection's state

import { scopeParam, type ClosedData, type MuxFrame } from '../../../src/core/live-wire.js';

export type HubState = 'connecting' | 'live' | 'reconnecting';

/** One subscription of a tab to a scope. */
export interface HubSub {
  readonly scope: string;
  /** The last position this subscriber applied (`<epoch>:<position>`), or '' when it needs a snapshot. */
  cursor(): string;
  frame(name: string, data: unknown, p: string | undefined): void;
  closed(d: ClosedData): void;
  state(s: HubState): void;
}

export interface HubStats {
  /** Durable frames this tab received above the last position it had seen of their scope. */
  frames: number;
  /** Durable frames at or below it (a replay overlapping what the tab had): its clients drop them. */
  duplicates: number;
  snapshots: number;
  /** Whether this tab holds the connection. */
  leader: boolean;
  /** Connections this tab opened (as leader). */
  opens: number;
  /** The scopes of the connection this tab holds (leader), for tests. */
  scopes: string[];
}

type Msg =
  | { t: 'announce'; tab: string; scopes: [string, string | null][]; joined: string[] }
  | { t: 'bye'; tab: string }
  | { t: 'who' }
  | { t: 'f'; line: string }
  | { t: 'state'; state: HubState };

const LOCK = 'roost-live';
/** How long a new leader waits for the other tabs' announcements before it opens. */
const COLLECT_MS = 120;
/** Changes of the scope set within this long make one reopen. */
const REOPEN_DEBOUNCE_MS = 25;

function parseCursor(c: string): { epoch: string; position: number } | null {
  // `<epoch>:<position>.<k>`: a message inside frame <position>, so below it (and above the frame before).
  const m = /^(.+):(\d+)(?:\.(\d+))?$/.exec(c);
  if (!m) return null;
  return { epoch: m[1], position: m[3] === undefined ? Number(m[2]) : Number(m[2]) - 1 + (Number(m[3]) + 1) / 1e7 };
}

/** The lower of two cursors: null (a snapshot) is lowest; cursors of different epochs make null. */
export function lowerCursor(a: string | null, b: string | null): string | null {
  if (a === null || b === null) return null;
  const x = parseCursor(a);
  const y = parseCursor(b);
  if (!x || !y || x.epoch !== y.epoch) return null;
  return x.position <= y.position ? a : b;
}

/** Whether cursor `a` is strictly below `b` (so resuming at `b` would skip frames `a` needs). */
function below(a: string | null, b: string | null): boolean {
  if (a === b) return false;
  return lowerCursor(a, b) === a;
}

export class Hub {
  state: HubState = 'connecting';
  readonly stats: HubStats = { frames: 0, duplicates: 0, snapshots: 0, leader: false, opens: 0, scopes: [] };
  private readonly tab = Math.random().toString(36).slice(2, 10);
  private readonly subs = new Map<string, Set<HubSub>>();
  private readonly seen = new Map<string, { epoch: string; position: number }>();
  private readonly bc: BroadcastChannel | null = null;
  private announceTimer = 0;
  /** Scopes a subscription joined since the last announcement. */
  private joined = new Set<string>();

  // The leader's side.
  private leader = false;
  private collecting = false;
  /** Each tab's scopes and the cursors it announced. */
  private readonly tables = new Map<string, Map<string, string | null>>();
  private es: EventSource | null = null;
  /** The scopes of the open connection and its cursor in each (the last position received; null: none yet). */
  private carried = new Map<string, string | null>();
  /** Carried scopes a tab needs from lower than the connection's cursor. */
  private readonly lower = new Map<string, string | null>();
  private reopenTimer = 0;
  private retryTimer = 0;
  private retryMs = 500;

  constructor(private readonly base = '') {
    const shared = typeof BroadcastChannel === 'function' && typeof navigator !== 'undefined' && !!navigator.locks;
    if (!shared) {
      this.becomeLeader();
      return;
    }
    this.bc = new BroadcastChannel(LOCK);
    this.bc.onmessage = (e: MessageEvent) => this.onMessage(e.data as Msg);
    void navigator.locks.request(LOCK, () => {
      this.becomeLeader();
      // Held until the tab goes.
      return new Promise<void>(() => {});
    });
    addEventListener('pagehide', () => {
      if (this.leader) this.es?.close();
      else this.post({ t: 'bye', tab: this.tab });
    });
  }

  subscribe(sub: HubSub): () => void {
    let set = this.subs.get(sub.scope);
    if (!set) this.subs.set(sub.scope, (set = new Set()));
    set.add(sub);
    this.joined.add(sub.scope);
    this.announceSoon();
    return () => {
      const s = this.subs.get(sub.scope);
      if (!s?.delete(sub)) return;
      if (s.size === 0) {
        this.subs.delete(sub.scope);
        this.seen.delete(sub.scope);
      }
      this.announceSoon();
    };
  }

  private post(m: Msg): void {
    this.bc?.postMessage(m);
  }

  /** This tab's scopes, each with the lowest cursor of its subscriptions (null: one needs a snapshot). */
  private mine(): Map<string, string | null> {
    const out = new Map<string, string | null>();
    for (const [scope, set] of this.subs) {
      let c: string | null | undefined;
      for (const s of set) {
        const own = s.cursor() || null;
        c = c === undefined ? own : lowerCursor(c, own);
      }
      out.set(scope, c ?? null);
    }
    return out;
  }

  private announceSoon(): void {
    if (this.announceTimer) return;
    this.announceTimer = window.setTimeout(() => {
      this.announceTimer = 0;
      this.announce();
    }, 0);
  }

  private announce(): void {
    const scopes = this.mine();
    const joined = [...this.joined];
    this.joined.clear();
    if (this.leader) this.heard(this.tab, scopes, joined);
    else this.post({ t: 'announce', tab: this.tab, scopes: [...scopes], joined });
  }

  private onMessage(m: Msg): void {
    switch (m.t) {
      case 'f':
        this.dispatch(m.line);
        return;
      case 'state':
        if (!this.leader) this.setState(m.state);
        return;
      case 'who':
        if (!this.leader) this.announce();
        return;
      case 'announce':
        if (this.leader) {
          this.heard(m.tab, new Map(m.scopes), Array.isArray(m.joined) ? m.joined : []);
          this.post({ t: 'state', state: this.state });
        }
        return;
      case 'bye':
        if (this.leader && this.tables.delete(m.tab)) this.reconcile(new Map());
        return;
    }
  }

  private setState(s: HubState): void {
    if (this.state === s) return;
    this.state = s;
    if (s !== 'live' && this.downSince === null) this.downSince = Date.now();
    if (s === 'live') this.downSince = null;
    if (this.leader) this.post({ t: 'state', state: s });
    for (const set of this.subs.values()) for (const sub of set) sub.state(s);
    for (const f of this.watchers) f(s);
  }

  /** Since when the connection is lost (null while live, and while first connecting). */
  downSince: number | null = null;
  private readonly watchers = new Set<(s: HubState) => void>();

  /** Hears every change of the connection's state (the app shell's outage banner); returns the way to stop. */
  watch(f: (s: HubState) => void): () => void {
    this.watchers.add(f);
    return () => this.watchers.delete(f);
  }

  /** One frame (the JSON of a `data:` line), to this tab's subscriptions of its scope. */
  private dispatch(line: string): void {
    let f: MuxFrame;
    try {
      f = JSON.parse(line) as MuxFrame;
    } catch {
      return;
    }
    if (!f || typeof f.s !== 'string' || !f.s) return; // control frames (hello) concern the leader only
    if (f.p) {
      const id = parseCursor(f.p);
      const at = this.seen.get(f.s);
      if (id) {
        if (f.e === 'snapshot') this.stats.snapshots++;
        else if (at && at.epoch === id.epoch && id.position <= at.position) this.stats.duplicates++;
        else this.stats.frames++;
        if (f.e === 'snapshot' || !at || at.epoch !== id.epoch || id.position > at.position) this.seen.set(f.s, id);
      }
    }
    const set = this.subs.get(f.s);
    if (!set) return;
    for (const sub of [...set]) {
      if (f.e === 'closed') sub.closed(f.d as ClosedData);
      else sub.frame(f.e, f.d, f.p);
    }
  }

  // ---- the leader ----

  private becomeLeader(): void {
    this.leader = true;
    this.stats.leader = true;
    this.tables.clear();
    this.tables.set(this.tab, this.mine());
    if (!this.bc) {
      this.reconcile(new Map());
      return;
    }
    // Every tab says what it reads and from where; then the union opens.
    this.collecting = true;
    this.post({ t: 'who' });
    window.setTimeout(() => {
      this.collecting = false;
      this.reconcile(new Map());
      this.openSoon(0);
    }, COLLECT_MS);
  }

  /** A tab's scopes (the leader's own included), and those a subscription of it joined. */
  private heard(tab: string, scopes: Map<string, string | null>, joined: string[]): void {
    this.tables.set(tab, scopes);
    const asked = new Map<string, string | null>();
    for (const scope of joined) if (scopes.has(scope)) asked.set(scope, scopes.get(scope)!);
    this.reconcile(asked);
  }

  /** Reopens when the union differs from what the connection carries, or a joining subscription (`asked`) needs a carried scope from lower. */
  private reconcile(asked: Map<string, string | null>): void {
    if (this.collecting) return;
    const union = this.union();
    let change = union.size !== this.carried.size;
    for (const scope of union.keys()) if (!this.carried.has(scope)) change = true;
    for (const [scope, c] of asked) {
      if (!this.carried.has(scope)) continue;
      const at = this.carried.get(scope) ?? null;
      // A lossy scope never has a cursor (its frames carry no position): a
      // subscription joining it needs the frames it sends when it opens
      // (members:, work.live:'s presence and role), so it is reopened too.
      if ((at !== null && below(c, at)) || (at === null && c === null)) {
        this.lower.set(scope, this.lower.has(scope) ? lowerCursor(this.lower.get(scope)!, c) : c);
        change = true;
      }
    }
    if (change) this.openSoon(REOPEN_DEBOUNCE_MS);
  }

  /** Every scope some tab reads, with the lowest cursor announced. */
  private union(): Map<string, string | null> {
    const u = new Map<string, string | null>();
    for (const t of this.tables.values()) for (const [s, c] of t) u.set(s, u.has(s) ? lowerCursor(u.get(s)!, c) : c);
    return u;
  }

  private openSoon(ms: number): void {
    clearTimeout(this.reopenTimer);
    this.reopenTimer = window.setTimeout(() => this.open(), ms);
  }

  private open(): void {
    clearTimeout(this.reopenTimer);
    clearTimeout(this.retryTimer);
    const union = this.union();
    const next = new Map<string, string | null>();
    for (const [scope, announced] of union) {
      // Carried: the connection's cursor (every tab has been sent everything up to it), unless a tab needs less.
      let c = this.carried.has(scope) ? (this.carried.get(scope) ?? announced) : announced;
      if (this.lower.has(scope)) c = lowerCursor(c, this.lower.get(scope)!);
      next.set(scope, c);
    }
    this.lower.clear();
    this.es?.close();
    this.es = null;
    this.carried = next;
    this.stats.scopes = [...next.keys()];
    if (next.size === 0) return;
    const q = new URLSearchParams();
    for (const [scope, c] of next) q.append('s', scopeParam(scope, c));
    const es = new EventSource(`${this.base}/live?${q}`);
    this.es = es;
    this.stats.opens++;
    es.onmessage = (e: MessageEvent) => {
      if (es !== this.es) return;
      const line = e.data as string;
      let f: MuxFrame;
      try {
        f = JSON.parse(line) as MuxFrame;
      } catch {
        return;
      }
      if (f.s === '' && f.e === 'hello') {
        this.retryMs = 500;
        this.setState('live');
        return;
      }
      if (this.carried.has(f.s)) {
        if (f.e === 'closed') this.carried.delete(f.s);
        else if (f.p) this.carried.set(f.s, f.p);
      }
      this.post({ t: 'f', line });
      this.dispatch(line);
    };
    // The server's `event: error` (a slow consumer, a revoked token, a
    // shutdown) and the browser's own errors alike: this connection is over.
    es.addEventListener('error', () => {
      if (es !== this.es) return;
      es.close();
      this.es = null;
      this.setState('reconnecting');
      this.retryTimer = window.setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 5_000);
    });
  }
}

let hub: Hub | null = null;

declare global {
  interface Window {
    /** A read-only window for tests: this tab's share of the live connection. */
    __roostLive?: HubStats;
  }
}

/** The tab's hub, made on first use. */
export function liveHub(): Hub {
  if (!hub) {
    hub = new Hub();
    window.__roostLive = hub.stats;
  }
  return hub;
}
