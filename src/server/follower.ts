// One log stream followed in position order: the mechanism every service of
// the server shares (through the fold host, src/server/folded.ts: floor,
// approvals, fleet boards, Work's books; and identity directly). The service gives `apply(entry)` (its fold, its frames, its
// listeners); the follower owns the position, the commit wake-up, the
// catch-up reads, the position waiters and the periodic snapshots.
//
// Invariants:
// - position order: `apply` is called for position p only when the follower
//   is at p - 1, so entries are folded exactly in log order, without gaps;
// - nothing applied twice: an entry at or below the position is skipped,
//   whether it comes from a commit or from a read;
// - commit then wake: a local commit's entries are folded directly when they
//   are the next positions and no read is running; anything else (a gap, or
//   another node's commit, which carries only its head) starts a read of
//   what is missing;
// - a wake-up during a read is not lost: it asks for one more round after
//   the current one, so a commit that lands while a read is in flight is
//   read by the next round (the running read may have missed it);
// - `position` is already the entry's when `apply` runs, so whatever `apply`
//   tells (frames, listeners) sees the position of the entry it reports;
// - waiters of `folded(p)` are woken after the entries up to p are applied.

import type { EventStore, LogEntry } from '../storage/types.js';

/** Entries read per round trip to the store. */
const READ_BATCH = 5000;

export interface FollowerOptions {
  /** Folds one entry (called once per position, in order). */
  apply: (entry: LogEntry) => void;
  /** After a run of applied entries (a commit's, or a read's), once the waiters are woken. */
  afterFold?: () => void;
  /** Store a snapshot of the fold every `every` events; `body(position)` is what is stored. */
  snapshots?: { every: number; body: (position: number) => string; label: string; history?: boolean };
}

export class StreamFollower {
  private pos = 0;
  private lastSnapshot = 0;
  private reading = false;
  private readAgain = false;
  private readDone: Promise<void> = Promise.resolve();
  private waiters: { position: number; wake: () => void }[] = [];
  private unlisten: (() => void) | null = null;
  private stopped = false;

  constructor(
    private store: EventStore,
    readonly stream: string,
    private opts: FollowerOptions,
  ) {}

  get position(): number {
    return this.pos;
  }

  /** Hears this stream's commits itself (services that route many streams call `onCommit` instead). */
  listen(): void {
    this.unlisten ??= this.store.onCommit((stream, head, entries) => {
      if (stream === this.stream) this.onCommit(head, entries);
    });
  }

  /**
   * Loads (optionally: `load` restores a snapshot and returns its position)
   * and folds the rest of the log. The read counts as running from the first
   * moment, so commits meanwhile only ask for another round.
   */
  start(load?: () => Promise<number>): Promise<void> {
    this.reading = true;
    this.readDone = (async () => {
      try {
        if (load) {
          const at = await load();
          this.pos = at;
          this.lastSnapshot = at;
        }
        await this.readRounds();
      } finally {
        this.reading = false;
        this.folded_();
      }
    })();
    return this.readDone;
  }

  /** Stops hearing commits; resolves when a read in flight is done. */
  stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    this.unlisten = null;
    return this.readDone;
  }

  /** A commit of this stream: `entries` when it was local, null for another node's (a wake-up with its head). */
  onCommit(head: number, entries: LogEntry[] | null): void {
    if (head <= this.pos) return;
    if (!this.reading && entries && entries[0].position === this.pos + 1) {
      for (const e of entries) this.applyEntry(e);
      this.folded_();
      return;
    }
    void this.catchUp();
  }

  /** Reads and folds everything after the position (another node's commits, or a gap). */
  catchUp(): Promise<void> {
    if (this.reading) {
      // One more round after the current one, so a wake-up during a read is not lost.
      this.readAgain = true;
      return this.readDone;
    }
    this.reading = true;
    this.readDone = (async () => {
      try {
        await this.readRounds();
      } catch (e) {
        // The store failed (a database restarting): keep what is folded, try
        // again shortly; waiters are woken by the read that succeeds.
        console.error(`roost: reading ${this.stream} failed; retrying in 1 s`, e);
        if (!this.stopped) setTimeout(() => void this.catchUp(), 1000).unref();
      } finally {
        this.reading = false;
        this.folded_();
      }
    })();
    return this.readDone;
  }

  /** Resolves once this node has folded the stream up to `position`. */
  folded(position: number): Promise<void> {
    if (this.pos >= position) return Promise.resolve();
    return new Promise((wake) => {
      this.waiters.push({ position, wake });
      // A local commit reaches the listeners a microtask after its append has
      // resolved (stores answer first): read the log only if it did not.
      queueMicrotask(() => {
        if (this.pos < position) void this.catchUp();
      });
    });
  }

  /** Catches up with the log's head (commits of other nodes not yet announced). */
  async fresh(): Promise<void> {
    if (!this.store.capabilities.crossNodeWakeups) return; // one node: every commit is folded on commit
    const head = await this.store.head(this.stream);
    if (head > this.pos) await this.folded(head);
  }

  private async readRounds(): Promise<void> {
    do {
      this.readAgain = false;
      for (;;) {
        const batch = await this.store.read(this.stream, this.pos, READ_BATCH);
        for (const e of batch) if (e.position === this.pos + 1) this.applyEntry(e);
        if (batch.length < READ_BATCH) break;
      }
    } while (this.readAgain);
  }

  private applyEntry(entry: LogEntry): void {
    this.pos = entry.position;
    this.opts.apply(entry);
    const s = this.opts.snapshots;
    if (s && this.pos - this.lastSnapshot >= s.every) {
      const position = this.pos;
      this.lastSnapshot = position;
      this.store.putSnapshot(this.stream, position, s.body(position), s.history ? { history: true } : undefined).catch((e) => console.error(`roost: ${s.label} failed`, e));
    }
  }

  /** After a run of entries: wake the position waiters, then the service's hook. */
  private folded_(): void {
    if (this.waiters.length) {
      const ready = this.waiters.filter((w) => w.position <= this.pos);
      this.waiters = this.waiters.filter((w) => w.position > this.pos);
      for (const w of ready) w.wake();
    }
    this.opts.afterFold?.();
  }
}

/**
 * Rebuilds the frames (after, upTo] of a stream for a replay: folds from
 * `from` (a snapshot's state and position, or the empty fold at 0) on a
 * private state, never the live one. `step` folds one entry and returns the
 * next state and that entry's frame.
 */
export async function rebuildFrames<S, F>(
  store: EventStore,
  stream: string,
  from: { state: S; position: number },
  after: number,
  upTo: number,
  step: (state: S, entry: LogEntry) => { state: S; frame: F },
): Promise<F[]> {
  let { state, position: pos } = from;
  const frames: F[] = [];
  while (pos < upTo) {
    const batch = await store.read(stream, pos, Math.min(READ_BATCH, upTo - pos));
    if (batch.length === 0) break;
    for (const e of batch) {
      if (e.position > upTo) break;
      const r = step(state, e);
      state = r.state;
      pos = e.position;
      if (pos > after) frames.push(r.frame);
    }
  }
  return frames;
}
