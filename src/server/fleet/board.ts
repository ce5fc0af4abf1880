// One thread's board on the server: its fold (the shared fleet fold,
// src/core/fleet.ts), its position in the log, its live channel, its stored
// snapshots and the server-side readers of every folded entry.

import { FLEET_PROTOCOL_VERSION, applySessionEvent, emptySessions, type SessionsState } from '../../core/fleet.js';
import type { ResultUsage } from '../../core/fleet-wire.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import { FoldedStream, OnFoldHost } from '../folded.js';
import type { BoardWatcher, FleetOptions } from './names.js';

export interface SnapshotBody {
  position: number;
  state: SessionsState;
}

/** One entry folded into `state`: the next state and the frame's data (the stored body is not re-serialized). */
export function fold(state: SessionsState, entry: LogEntry): { state: SessionsState; data: string } {
  let event: unknown = null;
  try {
    event = JSON.parse(entry.body);
  } catch {
    // A corrupt body folds like any hostile event: to nothing.
  }

  const r = applySessionEvent(state, event);
  return { state: r.state, data: `{"event":${entry.body},"chat":${JSON.stringify(r.chat)}}` };
}

/** One thread's board: its fold, its position in the log and its live channel (`fleet:<project>/<thread>`). */
export class Board extends OnFoldHost<SessionsState> {
  protected readonly host: FoldedStream<SessionsState>;
  /** Bridges following it on any node sharing the store (presence, not durable: see docs/bridge.md; `FleetService.bridgePresence`), as last told to its readers. */
  following = 0;
  /** Server-side readers of every folded entry (the flock's code crows: docs/flock.md, "Code items"). */
  readonly watchers = new Set<BoardWatcher>();
  /** A `session.result`'s usage while its post is appended here (the stored event never keeps it), by session id. */
  readonly heardUsage = new Map<string, ResultUsage>();

  constructor(
    readonly thread: string,
    readonly stream: string,
    scope: string,
    store: EventStore,
    opts: FleetOptions,
  ) {
    super();
    this.host = new FoldedStream<SessionsState>(
      store,
      {
        stream,
        scope,
        empty: emptySessions,
        step: (state, entry) => {
          const r = fold(state, entry);
          return { state: r.state, events: [{ name: 'event', data: r.data }] };
        },
        snapshot: (state, position, reset) =>
          JSON.stringify({ protocol: FLEET_PROTOCOL_VERSION, epoch: store.epoch, thread: this.thread, position, reset, state, bridges: this.following }),
        stored: {
          every: opts.snapshotEvery,
          body: (state, position) => JSON.stringify({ position, state } satisfies SnapshotBody),
          load: (text) => JSON.parse(text) as SnapshotBody,
          label: 'fleet snapshot',
          history: true,
        },
        applied: (entry) => this.tell(entry),
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }

  /** Hands a folded entry to the watchers, with the usage its post carried when it was posted on this node. */
  private tell(entry: LogEntry): void {
    if (this.watchers.size === 0) return;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(entry.body) as Record<string, unknown>;
    } catch {
      return;
    }
    const usage = e.type === 'session.result' && typeof e.id === 'string' ? this.heardUsage.get(e.id) : undefined;
    for (const w of this.watchers) {
      try {
        w(e, entry.position, usage);
      } catch (err) {
        console.error('roost: a board watcher failed', err);
      }
    }
  }

  /** Tells live readers how many bridges follow the board now, on any node (a lossy frame), when that changed. */
  announceBridges(count: number): void {
    if (count === this.following) return;
    this.following = count;
    this.channel.broadcast('live', JSON.stringify({ type: 'bridges', count }));
  }
}
