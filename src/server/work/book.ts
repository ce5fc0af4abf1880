// One Work stream folded in memory, with its live channel: a project's
// `work:<project>` or a person's private `work:private:<uid>` (General Chat).
//
// Each log entry becomes one SSE frame per aggregate it changed
// (`conversation.changed`, `agent.changed`, ...), all with the entry's id and
// carrying only `{id, rev}`; a reader fetches the aggregate it cares about.

import {
  WORK_PROTOCOL_VERSION,
  applyWork,
  emptyWork,
  type WorkChange,
  type WorkState,
} from '../../core/work.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import { LiveChannel, sseFrame, type Frame, type LiveOptions } from '../live.js';
import { StreamFollower, rebuildFrames } from '../follower.js';

export const WORK_PREFIX = 'work:';
export const SPACES_STREAM = 'work:spaces';
export const PRIVATE_PREFIX = 'work:private:';

/** A stored body as an object (a corrupt one folds like an empty event: to nothing). */
export function parse(body: string): Record<string, unknown> {
  try {
    const v = JSON.parse(body);
    return typeof v === 'object' && v !== null ? v : {};
  } catch {
    return {};
  }
}

function framesOf(epoch: string, position: number, changes: WorkChange[]): Buffer {
  if (changes.length === 0) return Buffer.alloc(0);
  return Buffer.concat(changes.map((c) => sseFrame(epoch, position, `${c.family}.changed`, `{"id":${JSON.stringify(c.id)},"rev":${position}}`)));
}


/** A book's scope: a project, or one person's private stream. */
export type BookScope = { project: string } | { private: string };

export interface BookOptions {
  live: Omit<LiveOptions, 'epoch'>;
  maxReplay: number;
}

/** One Work stream folded in memory, with its live channel. */
export class Book {
  state: WorkState = emptyWork();
  private follower: StreamFollower;
  readonly channel: LiveChannel;
  /** Hears every folded entry (the Space command feeds use it). */
  listeners = new Set<(changes: WorkChange[]) => void>();

  constructor(
    readonly stream: string,
    readonly scope: BookScope,
    private store: EventStore,
    private opts: BookOptions,
  ) {
    this.channel = new LiveChannel(
      { position: () => this.pos, snapshot: (reset) => this.snapshotFrame(reset), replay: (a, u) => this.replay(a, u) },
      { ...opts.live, epoch: store.epoch },
    );
    this.follower = new StreamFollower(store, stream, { apply: (e) => this.apply(e) });
  }

  get pos(): number {
    return this.follower.position;
  }

  start(): Promise<void> {
    return this.follower.catchUp();
  }

  /** A commit of this book's stream (the service routes them: one listener for every book). */
  onCommit(head: number, entries: LogEntry[] | null): void {
    this.follower.onCommit(head, entries);
  }

  folded(position: number): Promise<void> {
    return this.follower.folded(position);
  }

  fresh(): Promise<void> {
    return this.follower.fresh();
  }

  /** Folds one entry (the follower calls it in position order; `pos` is already the entry's, which listeners read). */
  private apply(entry: LogEntry): void {
    const changes = applyWork(this.state, parse(entry.body), entry.position);
    this.channel.publish({ position: entry.position, bytes: framesOf(this.store.epoch, entry.position, changes) });
    if (changes.length) for (const l of this.listeners) l(changes);
  }

  snapshot(reset: boolean): Record<string, unknown> {
    const s = this.state;
    return {
      protocol: WORK_PROTOCOL_VERSION,
      epoch: this.store.epoch,
      ...('project' in this.scope ? { scope: 'project', project: this.scope.project } : { scope: 'private' }),
      position: this.pos,
      lastEventId: `${this.store.epoch}:${this.pos}`,
      reset,
      spaces: [...s.spaces.values()],
      conversations: [...s.conversations.values()],
      agents: [...s.agents.values()],
      commands: [...s.commands.values()],
      executions: [...s.executions.values()],
      results: [...s.results.values()],
    };
  }

  private snapshotFrame(reset: boolean): Frame {
    return { position: this.pos, bytes: sseFrame(this.store.epoch, this.pos, 'snapshot', JSON.stringify(this.snapshot(reset))) };
  }

  /** Frames (after, upTo], rebuilt by folding the log from the start (Work streams are small). */
  private async replay(after: number, upTo: number): Promise<Frame[] | null> {
    if (upTo - after > this.opts.maxReplay || upTo > this.opts.maxReplay * 4) return null;
    return rebuildFrames(this.store, this.stream, { state: emptyWork(), position: 0 }, after, upTo, (state, e) => {
      const changes = applyWork(state, parse(e.body), e.position);
      return { state, bytes: framesOf(this.store.epoch, e.position, changes) };
    });
  }
}
