// The fold host: one log stream folded in memory and served live. Every app
// that shows a stream (the floor, approvals, each fleet board, each Work
// book) is one of these, configured with its fold, its stream, its scope and
// its frames; the host owns the rest, once for all of them:
// - following the stream (StreamFollower: position order, nothing twice,
//   commit then wake, catch-up reads), and the periodic stored snapshots;
// - the live channel (src/server/live/durable.ts): every folded entry becomes one
//   frame, published in the turn it is folded;
// - the snapshot frame a new subscriber gets, at the position folded now;
// - replays: frames rebuilt for (after, upTo] by folding a private copy from
//   the nearest stored snapshot at or before `after` (or from the stream's
//   start), never touching the live state;
// - the start: a stored snapshot at least one ring behind the head, when
//   there is one, then the rest of the log, which refills the replay ring (so
//   a reader that reconnects after a restart is replayed, not reset).
//
// Invariants the app keeps: `step` is the shared pure fold plus frame
// building (no I/O); it may mutate the state it is given (the host never
// hands it the live state for a replay); `snapshot` describes the state at
// the position it is given.

import type { EventStore, LogEntry } from '../storage/types.js';
import { StreamFollower, rebuildFrames } from './follower.js';
import { LiveChannel, type ChannelOptions, type Ev, type Frame, type Live } from './live/index.js';

/** One entry folded: the next state and the entry's frame events (`mux`: the mux form's, when they differ). */
export interface Folded<S> {
  state: S;
  events: readonly Ev[];
  mux?: readonly Ev[];
}

export interface FoldSpec<S> {
  /** The log stream. */
  stream: string;
  /** The live scope (`<app>:<key>`) the channel serves. */
  scope: string;
  /** A fresh empty state. */
  empty(): S;
  /** Folds one entry (called in position order, for the live state and for replays). */
  step(state: S, entry: LogEntry): Folded<S>;
  /** The snapshot frame's data: the state at `position`. */
  snapshot(state: S, position: number, reset: boolean): string;
  /** Stored snapshots (every `every` events), in the app's own stored format; without them a replay folds from the start. */
  stored?: {
    every: number;
    body(state: S, position: number): string;
    load(body: string): { state: S; position: number };
    label: string;
    /** Every stored snapshot is kept for good (the floor's and the boards': rewinds fold from them). */
    history?: boolean;
  };
  /** After a live entry is folded and published (waiters, listeners). */
  applied?(entry: LogEntry, out: Folded<S>): void;
  /** After a run of live entries is folded (the follower's `afterFold`). */
  afterFold?(): void;
}

export interface HostOptions {
  live: Live;
  channel: ChannelOptions;
  /** A replay of more frames than this gets a reset snapshot instead; so does one that must fold more than 4× this before its first frame. */
  maxReplay: number;
}

export class FoldedStream<S> {
  state: S;
  readonly channel: LiveChannel;
  private follower: StreamFollower;

  constructor(
    private store: EventStore,
    private spec: FoldSpec<S>,
    private opts: HostOptions,
  ) {
    this.state = spec.empty();
    this.channel = new LiveChannel(
      spec.scope,
      store.epoch,
      {
        position: () => this.position,
        snapshot: (reset) => this.snapshotFrame(reset),
        replay: (after, upTo) => this.replay(after, upTo),
        catchUp: () => this.follower.catchUp(),
      },
      opts.live.channelOptions(opts.channel),
    );
    const stored = spec.stored;
    this.follower = new StreamFollower(store, spec.stream, {
      apply: (e) => this.apply(e),
      afterFold: spec.afterFold,
      snapshots: stored && { every: stored.every, body: (position) => stored.body(this.state, position), label: stored.label, history: stored.history },
    });
  }

  get stream(): string {
    return this.spec.stream;
  }

  get position(): number {
    return this.follower.position;
  }

  /** Hears this stream's commits itself (a service routing many streams calls `onCommit` instead). */
  listen(): this {
    this.follower.listen();
    return this;
  }

  /** Loads a stored snapshot (one ring behind the head, when there is one) and folds the rest of the log. */
  start(): Promise<void> {
    const stored = this.spec.stored;
    if (!stored) return this.follower.start();
    return this.follower.start(async () => {
      const ring = this.opts.channel.ringSize;
      const head = await this.store.head(this.spec.stream);
      // Prefer a snapshot old enough that the ring is refilled behind it; far behind, the newest.
      const snap = (await this.store.getSnapshot(this.spec.stream, Math.max(0, head - ring))) ?? (head > ring * 4 ? await this.store.getSnapshot(this.spec.stream) : null);
      if (!snap) return 0;
      const { state, position } = stored.load(snap.state);
      this.state = state;
      return position;
    });
  }

  /** Stops hearing commits and ends the channel's streams; resolves when a read in flight is done. */
  stop(): Promise<void> {
    const done = this.follower.stop();
    this.channel.stop();
    return done;
  }

  /** A commit of this stream: `entries` when local, null for another node's wake-up. */
  onCommit(head: number, entries: LogEntry[] | null): void {
    this.follower.onCommit(head, entries);
  }

  /** Resolves once this node has folded the stream up to `position`. */
  folded(position: number): Promise<void> {
    return this.follower.folded(position);
  }

  /** Catches up with the log's head (commits of other nodes not yet announced). */
  fresh(): Promise<void> {
    return this.follower.fresh();
  }

  /** Reads and folds everything after the position. */
  catchUp(): Promise<void> {
    return this.follower.catchUp();
  }

  private apply(entry: LogEntry): void {
    const out = this.spec.step(this.state, entry);
    this.state = out.state;
    this.channel.publish(this.channel.frame(entry.position, out.events, out.mux));
    this.spec.applied?.(entry, out);
  }

  /** The snapshot frame of the state folded now. */
  snapshotFrame(reset: boolean): Frame {
    const position = this.position;
    return this.channel.frame(position, [{ name: 'snapshot', data: this.spec.snapshot(this.state, position, reset) }]);
  }

  /** Rebuilds frames (after, upTo] from the nearest stored snapshot at or before `after`, or from the start. */
  private async replay(after: number, upTo: number): Promise<Frame[] | null> {
    const max = this.opts.maxReplay;
    if (upTo - after > max) return null;
    let from = { state: this.spec.empty(), position: 0 };
    const stored = this.spec.stored;
    if (stored && after > 0) {
      const snap = await this.store.getSnapshot(this.spec.stream, after);
      if (snap) from = stored.load(snap.state);
    }
    if (after - from.position > 4 * max) return null;
    return rebuildFrames(this.store, this.spec.stream, from, after, upTo, (state, e) => {
      const out = this.spec.step(state, e);
      return { state: out.state, frame: this.channel.frame(e.position, out.events, out.mux) };
    });
  }
}

/**
 * What an app's service reads of a stream it keeps folded: the state, the
 * position, the live channel and the host's lifecycle, delegated in one place
 * (the fleet board, Work's books, usage). A subclass makes its `host` in its
 * constructor and adds what its app does with the state.
 */
export abstract class OnFoldHost<S> {
  protected abstract readonly host: FoldedStream<S>;

  /** The folded state (the live state: read it, never change it). */
  get state(): S {
    return this.host.state;
  }

  /** The position folded so far. */
  get pos(): number {
    return this.host.position;
  }

  get channel(): LiveChannel {
    return this.host.channel;
  }

  /** Loads a stored snapshot and folds the rest of the log. Commits meanwhile only ask for another round. */
  start(): Promise<void> {
    return this.host.start();
  }

  stop(): Promise<void> {
    return this.host.stop();
  }

  /** A commit of this stream (the app's service routes them: one listener for every stream of the app). */
  onCommit(head: number, entries: LogEntry[] | null): void {
    this.host.onCommit(head, entries);
  }

  /** Resolves once this node has folded the stream up to `position`. */
  folded(position: number): Promise<void> {
    return this.host.folded(position);
  }

  /** Catches up with the log's head (commits of other nodes not yet announced). */
  fresh(): Promise<void> {
    return this.host.fresh();
  }
}
