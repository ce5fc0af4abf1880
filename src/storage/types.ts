// The one storage boundary. Every backend (SQLite embedded, PostgreSQL for
// several nodes) implements `EventStore` and passes the same contract suite
// (test/storage.contract.ts).
//
// Invariants every backend keeps:
// - positions in a stream start at 1 and have no gaps, even under concurrent
//   writers on several nodes; they are assigned inside the appending transaction;
// - an append is all or nothing, and its promise resolves only once it is durable;
// - an idempotency key is per request: a second append with the same key stores
//   nothing and resolves with the first append's positions and `duplicate: true`;
// - commit listeners are called after the commit, in position order per stream,
//   never from inside the transaction.

export interface NewEvent {
  type: string;
  /** The event as JSON text; stored and replayed byte for byte. */
  body: string;
  /**
   * The same event already parsed, when the caller has it. Never stored: it is
   * handed to this node's commit listeners so they need not parse `body` again.
   * Listeners must treat it as read-only.
   */
  value?: unknown;
}

export interface LogEntry {
  stream: string;
  position: number;
  type: string;
  body: string;
  /** Server time of the append, ms. */
  at: number;
  /** The parsed event, on entries of this node's own commits (see NewEvent.value). */
  value?: unknown;
}

export interface AppendResult {
  first: number;
  last: number;
  /** True when the idempotency key had been seen: nothing was stored. */
  duplicate: boolean;
}

export interface AppendOptions {
  idempotencyKey?: string;
}

export interface Snapshot {
  position: number;
  state: string;
}

/**
 * Called after a commit. `entries` are given when this node made the commit
 * (so the caller need not read them back); a wake-up from another node carries
 * only the stream's new head and the listener reads what it missed. A store may
 * answer the commit's appends first: a listener may hear of a local commit up
 * to a microtask after its append resolved, never in a later turn.
 */
export type CommitListener = (stream: string, head: number, entries: LogEntry[] | null) => void;

export interface StoreCapabilities {
  /** Commits made by other processes wake this one's listeners. */
  crossNodeWakeups: boolean;
}

export interface EventStore {
  readonly kind: string;
  readonly capabilities: StoreCapabilities;
  /** Changes only if the log is ever rebuilt; part of every live frame id. */
  readonly epoch: string;
  append(stream: string, events: NewEvent[], opts?: AppendOptions): Promise<AppendResult>;
  /** Entries with position > after, ascending, at most `limit` of them. */
  read(stream: string, after: number, limit?: number): Promise<LogEntry[]>;
  head(stream: string): Promise<number>;
  putSnapshot(stream: string, position: number, state: string): Promise<void>;
  /** The newest snapshot at or before `atOrBefore` (default: the newest of all). */
  getSnapshot(stream: string, atOrBefore?: number): Promise<Snapshot | null>;
  onCommit(listener: CommitListener): () => void;
  close(): Promise<void>;
}

export class StoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
  }
}
