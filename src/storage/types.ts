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
//
// Beside the log, a store carries one lossy channel between the nodes that
// share it (`broadcast` / `onBroadcast`): observation such as who is present,
// never a fact of the log. See BroadcastListener.

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

/**
 * Hears a broadcast of another node sharing the store. `from` names the
 * sending store instance (one per process), stable for its life, so a
 * listener can tell senders apart and forget one that has gone quiet.
 *
 * The channel is lossy and carries no history: a message is delivered at most
 * once, only to nodes listening at that moment (a node that is starting, or
 * whose connection to the database is down, misses it), never to the sender's
 * own listeners, never stored. One sender's messages arrive in the order it sent
 * them; nothing orders them against commits or against other senders. A
 * listener that needs a state therefore has its senders repeat it and expires
 * what is not repeated.
 */
export type BroadcastListener = (topic: string, payload: string, from: string) => void;

/** The longest broadcast payload, in UTF-8 bytes (PostgreSQL's NOTIFY takes under 8000, header included). */
export const BROADCAST_MAX_BYTES = 7900;
/** What a broadcast topic may be. */
export const BROADCAST_TOPIC = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Refuses what no backend can carry (the same on every backend, so a caller's bug shows on SQLite too). */
export function checkBroadcast(topic: string, payload: string): void {
  if (typeof topic !== 'string' || !BROADCAST_TOPIC.test(topic)) throw new StoreError(`broadcast topic "${String(topic).slice(0, 80)}" must be 1 to 64 letters, digits, "_", ".", ":" or "-"`);
  if (typeof payload !== 'string') throw new StoreError('a broadcast payload is a string');
  if (payload.includes('\0')) throw new StoreError('a broadcast payload cannot contain NUL');
  const bytes = Buffer.byteLength(payload, 'utf8');
  if (bytes > BROADCAST_MAX_BYTES) throw new StoreError(`a broadcast payload is at most ${BROADCAST_MAX_BYTES} bytes (got ${bytes}); split it`);
}

export interface StoreCapabilities {
  /** Commits made by other processes wake this one's listeners. */
  crossNodeWakeups: boolean;
  /** `broadcast` reaches other processes (otherwise there are none to reach, and it only checks its arguments). */
  crossNodeBroadcast: boolean;
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
  /**
   * Sends a small lossy message to the other nodes' broadcast listeners (see
   * BroadcastListener). Returns at once; a failure to send is logged, never
   * thrown. Throws StoreError for a bad topic or a payload over
   * BROADCAST_MAX_BYTES. After close it sends nothing.
   */
  broadcast(topic: string, payload: string): void;
  onBroadcast(listener: BroadcastListener): () => void;
  close(): Promise<void>;
}

export class StoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
  }
}
