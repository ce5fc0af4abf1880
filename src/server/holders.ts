// Who holds an asker's wait: the liveness behind "withdrawn when the asker
// goes away" (docs/approvals.md).
//
// A pending approval names its holder: `node:<id>` when a server node holds
// the agent hook's connection (the hook is waiting on that very socket), or
// `bridge:<id>` when a workstation bridge asked and follows its board. A
// holder is alive while
// - it is this node and the service still holds the hook's connection (the
//   approvals service answers that itself, per request), or
// - a connection of it is open on this node (a bridge following its board),
//   or was until less than `graceMs` ago (a reconnect is not a departure), or
// - another node announced it less than `remoteGraceMs` ago: every node that
//   holds something repeats, every `repeatMs`, the holders it has, on the
//   store's lossy broadcast (several nodes: the hook's socket and the bridge's
//   stream can be on another node than the one that folds a decision). The
//   remote grace is longer than the local one (3 s by default): an
//   announcement crosses two event loops and the database, and on a loaded
//   machine (three nodes behind a proxy under load, test/nodeloss.pg.browser.
//   test.ts) a 1 s grace took held hooks of live nodes for gone.
// A node that has just started has heard nobody yet: for its first grace (the
// remote one, where there are other nodes) every holder it does not know
// counts as alive.
//
// On a single-process store nothing is ever heard, so a holder is alive only
// while this process holds it (plus the grace after its connection closed).

import { randomUUID } from 'node:crypto';
import type { EventStore } from '../storage/types.js';

const TOPIC = 'approvals.holders';
/** A holder as it appears in the log and on the wire. */
const HOLDER = /^(node|bridge):[A-Za-z0-9_-]{1,64}$/;
/** Holders per broadcast (each under 80 bytes: well inside the payload limit). */
const PER_MESSAGE = 80;

export interface HolderOptions {
  /** Repeat what this node holds this often (ms). */
  repeatMs: number;
  /** A holder not seen for this long is gone (ms); also the start-up grace. */
  graceMs: number;
  /** A holder another node announced is alive this long after its last announcement (ms; default the larger of 3 s and `graceMs`). */
  remoteGraceMs?: number;
}

export const HOLDER_DEFAULTS: HolderOptions = { repeatMs: 300, graceMs: 1000 };
/** The default remote grace (see the file comment). */
export const REMOTE_GRACE_MS = 3000;

export function isHolder(v: unknown): v is string {
  return typeof v === 'string' && HOLDER.test(v);
}

export class Holders {
  /** This node as a holder (a new one each process start: a restarted node holds nothing of its past). */
  readonly self = `node:${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  /** Open local connections per holder. */
  private local = new Map<string, number>();
  /** When each holder was last seen (a local disconnect), by this node's monotonic clock. */
  private seen = new Map<string, number>();
  /** When each holder was last announced by another node. */
  private heard = new Map<string, number>();
  private readonly startedAt = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => void) | null = null;

  constructor(
    private store: EventStore,
    readonly opts: HolderOptions = HOLDER_DEFAULTS,
  ) {}

  start(): void {
    this.unlisten = this.store.onBroadcast((topic, payload) => {
      if (topic !== TOPIC) return;
      let list: unknown;
      try {
        list = (JSON.parse(payload) as { h?: unknown }).h;
      } catch {
        return;
      }
      if (!Array.isArray(list)) return;
      const now = performance.now();
      for (const h of list.slice(0, PER_MESSAGE)) if (isHolder(h)) this.heard.set(h, now);
    });
    this.timer = setInterval(() => this.tick(), this.opts.repeatMs);
    this.timer.unref();
  }

  stop(): void {
    this.unlisten?.();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A local connection of `holder` opens; the returned function closes it (once). */
  hold(holder: string): () => void {
    this.local.set(holder, (this.local.get(holder) ?? 0) + 1);
    if (this.local.get(holder) === 1) this.announce();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.local.get(holder) ?? 1) - 1;
      if (n > 0) this.local.set(holder, n);
      else {
        this.local.delete(holder);
        this.seen.set(holder, performance.now());
      }
    };
  }

  /**
   * Whether `holder` (other than this node's own hook holds: the service
   * knows those per request) is alive now: 'yes', 'no', or 'unknown' while
   * this node is too young to have heard of it.
   */
  state(holder: string): 'yes' | 'no' | 'unknown' {
    if ((this.local.get(holder) ?? 0) > 0) return 'yes';
    const now = performance.now();
    const at = this.seen.get(holder);
    if (at !== undefined && now - at < this.opts.graceMs) return 'yes';
    const heard = this.heard.get(holder);
    if (heard !== undefined && now - heard < this.remoteGraceMs) return 'yes';
    return now - this.startedAt < (this.store.capabilities.crossNodeBroadcast ? this.remoteGraceMs : this.opts.graceMs) ? 'unknown' : 'no';
  }

  /** How long another node's announcement keeps its holder alive (ms). */
  get remoteGraceMs(): number {
    return this.opts.remoteGraceMs ?? Math.max(REMOTE_GRACE_MS, this.opts.graceMs);
  }

  /** Milliseconds until a holder released now would count as gone (for a timely sweep). */
  get graceMs(): number {
    return this.opts.graceMs;
  }

  private tick(): void {
    this.announce();
    // Forget holders long gone, so the map stays the size of what is live.
    const now = performance.now();
    for (const [h, at] of this.seen) if (now - at > 60 * this.opts.graceMs) this.seen.delete(h);
    for (const [h, at] of this.heard) if (now - at > 60 * this.remoteGraceMs) this.heard.delete(h);
  }

  /** Tells the other nodes what this node holds (nothing is sent when it holds nothing). */
  private announce(): void {
    if (!this.store.capabilities.crossNodeBroadcast || this.local.size === 0) return;
    const all = [...this.local.keys()];
    for (let i = 0; i < all.length; i += PER_MESSAGE) {
      try {
        this.store.broadcast(TOPIC, JSON.stringify({ h: all.slice(i, i + PER_MESSAGE) }));
      } catch (e) {
        console.error('roost: announcing approval holders failed', e);
      }
    }
  }
}
