// One Work stream folded in memory and served live (the fold host,
// src/server/folded.ts): a project's `work:<project>` (live scope
// `work:<project>`) or a person's private `work:private:<uid>` (General Chat;
// live scope `work.private`, the caller's own).
//
// Each log entry becomes one frame. On the single-scope `/api/v2/events` it
// is one SSE event per aggregate it changed (`conversation.changed`,
// `agent.changed`, ...: the contract's families, spec/live-work.md), all with
// the entry's id and carrying only `{id, rev}`; an entry that changes nothing
// sends nothing there (its position is still consumed). On the mux form it is
// one `event` frame `{event, changes}` carrying the stored event itself, so a
// browser folds Work with the shared fold (src/core/work.ts) instead of
// refetching what changed.

import {
  WORK_PROTOCOL_VERSION,
  applyWork,
  emptyWork,
  workToJSON,
  type WorkChange,
  type WorkState,
} from '../../core/work.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import type { ChannelOptions, Ev, Live } from '../live/index.js';
import { FoldedStream, OnFoldHost, type Folded } from '../folded.js';

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

/** The single-scope frame of an entry: one `<family>.changed {id, rev}` per aggregate it changed. */
function changedEvents(position: number, changes: WorkChange[]): Ev[] {
  return changes.map((c) => ({ name: `${c.family}.changed`, data: `{"id":${JSON.stringify(c.id)},"rev":${position}}` }));
}


/** A book's scope: a project, or one person's private stream. */
export type BookScope = { project: string } | { private: string };

export interface BookOptions {
  live: Live;
  channel: ChannelOptions;
  maxReplay: number;
}

/** One Work stream folded in memory, with its live channel. */
export class Book extends OnFoldHost<WorkState> {
  protected readonly host: FoldedStream<WorkState>;
  /** Hears every entry that changed something (the Space command feeds use it). */
  listeners = new Set<(changes: WorkChange[]) => void>();

  constructor(
    readonly stream: string,
    readonly scope: BookScope,
    private store: EventStore,
    opts: BookOptions,
  ) {
    super();
    // No stored snapshots: a replay folds the stream from its start (Work streams are small).
    this.host = new FoldedStream<WorkState>(
      store,
      {
        stream,
        scope: 'project' in scope ? `work:${scope.project}` : 'work.private',
        empty: emptyWork,
        step: (state, entry) => step(state, entry),
        snapshot: (state, position, reset) => JSON.stringify(this.snapshotOf(state, position, reset)),
        applied: (_entry, out) => {
          const changes = (out as WorkFolded).changes;
          if (changes.length) for (const l of this.listeners) l(changes);
        },
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }


  /** The snapshot of the state folded now (GET /api/v2/snapshot, and the first frame of a stream). */
  snapshot(reset: boolean): Record<string, unknown> {
    return this.snapshotOf(this.state, this.pos, reset);
  }

  private snapshotOf(s: WorkState, position: number, reset: boolean): Record<string, unknown> {
    return {
      protocol: WORK_PROTOCOL_VERSION,
      epoch: this.store.epoch,
      ...('project' in this.scope ? { scope: 'project', project: this.scope.project } : { scope: 'private' }),
      position,
      lastEventId: `${this.store.epoch}:${position}`,
      reset,
      // The fold's wire form (rev and the families as lists): a browser folds on from `workFromJSON` of this.
      ...workToJSON(s),
    };
  }
}

type WorkFolded = Folded<WorkState> & { changes: WorkChange[] };

/** One entry folded: the `*.changed` events of the single-scope form, and the event itself for the mux form. */
function step(state: WorkState, entry: LogEntry): WorkFolded {
  // The fold changes `state` in place (the host hands a replay its own copy).
  const changes = applyWork(state, parse(entry.body), entry.position);
  return {
    state,
    changes,
    events: changedEvents(entry.position, changes),
    mux: [{ name: 'event', data: `{"event":${entry.body},"changes":${JSON.stringify(changes)}}` }],
  };
}
