// The one storage boundary. Every backend (SQLite embedded, PostgreSQL for
// several nodes) implements `EventStore` and passes the same contract suite
// (test/storage.contract.ts).
//
// Invariants every backend keeps:
// - positions in a stream start at 1 and have no gaps, even under concurrent
//   writers on several nodes; they are assigned inside the appending transaction;
// - an append is all or nothing, and its promise resolves only once it is durable
//   (a `lazy` append: once it survives a crash of this process, and durable
//   against a crash of the machine within LAZY_SYNC_MS; see AppendOptions.lazy);
// - an idempotency key is per request and belongs to a namespace: the stream
//   appended to, or the caller's `scope` (see AppendOptions). A second append
//   with a key its namespace has seen stores nothing and resolves with the first
//   append's positions and `duplicate: true`, and those positions are always in
//   the stream of the second append (a key first used on another stream, or with
//   another fingerprint, is refused with StoreError kind 'conflict'), so nobody
//   waits for a position of a stream they do not follow;
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
  /**
   * On a duplicate only, and only once `keepAnswer` stored one: the answer the
   * first request was given, byte for byte.
   */
  answer?: string;
}

/**
 * How an append is keyed. Without `idempotencyKey` the append is not keyed and
 * the other fields are ignored (the common case costs nothing).
 *
 * A key is unique in its namespace: `scope` when given, else the stream. The
 * two kinds of namespace never meet: a scope named like a stream shares none
 * of that stream's keys. A key is checked against the first append that used
 * it in its namespace:
 * - same stream and same fingerprint (or either has none): a duplicate, stored
 *   nothing, answered with the first append's positions;
 * - another stream (possible only with `scope`), or both have a fingerprint and
 *   they differ: refused with StoreError kind 'conflict', nothing stored. The key
 *   keeps its first meaning.
 * Keys do not expire. A failed append (rejected) leaves its key unused.
 */
export interface AppendOptions {
  idempotencyKey?: string;
  /**
   * What the request was, as the caller sees it (the HTTP edge: method, route,
   * caller and a hash of the body). Stored with the key; the same key with
   * another fingerprint is a different request, refused.
   */
  fingerprint?: string;
  /**
   * The key's namespace when the stream is not the right one: the caller's
   * identity (so two callers' keys never meet), or a key that must stay unique
   * across several streams. Callers pass a name, never a prefix of the key.
   */
  scope?: string;
  /**
   * Durable against a crash of this process at once (SIGKILL loses nothing
   * that resolved), against a crash of the machine or the database server
   * within LAZY_SYNC_MS or at the next append that is not lazy, whichever
   * comes first (on SQLite: committed without its own fsync; the next synced
   * commit, or a sync at most LAZY_SYNC_MS later, makes it and everything
   * before it durable). For what a server derives and can derive again after
   * a restart and acknowledges to nobody by itself (the flock driver's own
   * steps, its crows on the floor, its calls' usage): never for what answers
   * a request. A backend may make a lazy append durable at once (PostgreSQL
   * does). Ignored with an idempotency key (a keyed append is always synced).
   */
  lazy?: boolean;
}

/** The longest a resolved lazy append stays undurable against a crash of the machine (see AppendOptions.lazy). */
export const LAZY_SYNC_MS = 100;

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
  if (typeof topic !== 'string' || !BROADCAST_TOPIC.test(topic)) throw new StoreError('bad_input', `broadcast topic "${String(topic).slice(0, 80)}" must be 1 to 64 letters, digits, "_", ".", ":" or "-"`);
  if (typeof payload !== 'string') throw new StoreError('bad_input', 'a broadcast payload is a string');
  if (payload.includes('\0')) throw new StoreError('bad_input', 'a broadcast payload cannot contain NUL');
  const bytes = Buffer.byteLength(payload, 'utf8');
  if (bytes > BROADCAST_MAX_BYTES) throw new StoreError('bad_input', `a broadcast payload is at most ${BROADCAST_MAX_BYTES} bytes (got ${bytes}); split it`);
}

export interface StoreCapabilities {
  /** Commits made by other processes wake this one's listeners. */
  crossNodeWakeups: boolean;
  /** `broadcast` reaches other processes (otherwise there are none to reach, and it only checks its arguments). */
  crossNodeBroadcast: boolean;
}

export interface EventStore extends SearchIndex {
  readonly kind: string;
  readonly capabilities: StoreCapabilities;
  /** Changes only if the log is ever rebuilt; part of every live frame id. */
  readonly epoch: string;
  /**
   * Appends events to a stream, all or nothing, at the next positions; resolves
   * once durable. Keyed appends: see AppendOptions. Rejects with a StoreError
   * whose kind says why (a key conflict, a closed store, the database unavailable, ...).
   */
  append(stream: string, events: NewEvent[], opts?: AppendOptions): Promise<AppendResult>;
  /**
   * Resolves once every append resolved before the call is durable against a
   * crash of the machine, lazy ones included (AppendOptions.lazy). For a
   * request answered only when what it appended lazily is durable, while what
   * that append set going (folded at its commit) runs on meanwhile: the
   * flock's new list. Immediate when nothing lazy is waiting; on SQLite an
   * `fdatasync` of the WAL on libuv's pool, so the event loop goes on while
   * the disk works (PostgreSQL's commits are synced already).
   */
  sync(): Promise<void>;
  /**
   * What `append(stream, …, opts)` would answer for its key, without appending:
   * null when the key is unused in its namespace, the first append's result
   * (`duplicate: true`, with its `answer` if kept) when this is a duplicate; a
   * StoreError 'conflict' when the key was used for a different request. Sees
   * committed keys only (an append with the key still in flight is not seen).
   * Lets a caller refuse a request about the state of the world without using
   * up its key, and still recognise the retry of a request that went through.
   */
  findKey(stream: string, opts: AppendOptions & { idempotencyKey: string }): Promise<AppendResult | null>;
  /**
   * Keeps `answer` with a committed key, for its duplicates to be given byte for
   * byte (AppendResult.answer). The first answer kept stays; later calls change
   * nothing. Resolves false when the key is not there for this stream. The
   * answer is a convenience, not a fact of the log: a caller whose process dies
   * between the append and this call finds no answer and rebuilds it.
   */
  keepAnswer(stream: string, opts: AppendOptions & { idempotencyKey: string }, answer: string): Promise<boolean>;
  /** Entries with position > after, ascending, at most `limit` of them. */
  read(stream: string, after: number, limit?: number): Promise<LogEntry[]>;
  head(stream: string): Promise<number>;
  /**
   * Stores a fold's state at `position`. A snapshot is derived from the log,
   * so a store may write it as it writes a lazy append (durable soon after,
   * not before it resolves): a snapshot lost to a power cut costs a longer
   * replay, never an entry, and it never survives without the entries it
   * covers (SQLite's WAL keeps its commits in order).
   *
   * A stream keeps its newest few snapshots, unless `history` is set: then
   * this one is kept for good (a rewind folds from the nearest snapshot at
   * or before the moment it shows, docs/floor.md "Rewind"). A stream whose
   * snapshots are history passes it on every put.
   */
  putSnapshot(stream: string, position: number, state: string, opts?: { history?: boolean }): Promise<void>;
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

/**
 * Why a store refused or failed, closed set:
 * - 'conflict': an idempotency key was used for a different request (AppendOptions);
 * - 'bad_input': what no backend can store (an empty append, a NUL in a name,
 *   an event without a body, a bad broadcast topic): the caller's bug;
 * - 'closed': the store was closed;
 * - 'unavailable': the database cannot be reached or cannot write now (a lost
 *   connection, busy, disk full); a retry later may succeed, with the same key;
 * - 'internal': anything else.
 */
export type StoreErrorKind = 'conflict' | 'bad_input' | 'closed' | 'unavailable' | 'internal';

export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

/** The message of a key conflict, the same on every backend. */
export const KEY_CONFLICT = 'this idempotency key was used for a different request';

/**
 * Judges a key's first use against a new append (see AppendOptions): the
 * duplicate's result, or a conflict. Shared by the backends so they agree.
 */
export function judgeKey(
  prior: { stream: string; first: number; last: number; fingerprint: string | null; answer: string | null },
  stream: string,
  fingerprint: string | undefined,
): AppendResult | StoreError {
  if (prior.stream !== stream || (prior.fingerprint !== null && fingerprint !== undefined && prior.fingerprint !== fingerprint)) {
    return new StoreError('conflict', KEY_CONFLICT);
  }
  const r: AppendResult = { first: prior.first, last: prior.last, duplicate: true };
  if (prior.answer !== null) r.answer = prior.answer;
  return r;
}

/**
 * A full-text search of one project's indexed streams (src/core/search-text.ts
 * says which, and what of an event is searched). `q` is the caller's text as
 * typed: the store never hands it to its engine raw (see parseQuery). Newest
 * first: by append time, then stream and position, descending.
 */
export interface SearchQuery {
  project: string;
  q: string;
  team?: string;
  agent?: string;
  /** The event's type (`tool`, `approval.requested`, `nest.message`, ...). */
  kind?: string;
  /** The event's vendor, tool, status and decider, each matched whole (src/core/search-text.ts SearchDoc). */
  vendor?: string;
  tool?: string;
  status?: string;
  decider?: string;
  /** Append time, ms: from inclusive, to exclusive. */
  from?: number;
  to?: number;
  /** From a previous page's `next`. */
  cursor?: string;
  /** Hits per page, at most SEARCH_LIMITS.maxPage. */
  limit?: number;
}

/** One event a search found (its type lives with the search words, src/core/search-text.ts, where the web app reads it too). */
import { snippetOf, type SearchHit } from '../core/search-text.js';

export type { SearchHit };

export interface SearchPage {
  hits: SearchHit[];
  /** The cursor of the next page, null on the last. */
  next: string | null;
}

export const SEARCH_LIMITS = {
  page: 20,
  maxPage: 100,
  /** PostgreSQL: a search statement is cancelled after this long (ms) and answers 'unavailable'. */
  statementMs: 2_000,
  /** Events indexed per transaction when catching up or rebuilding. */
  chunk: 2_000,
} as const;

/** A page of hits from a store's rows (limit + 1 of them at most, newest first): the snippets marked, the next cursor when there is more. */
export function searchPage(
  rows: { stream: string; position: number | string; at: number | string; family: string; kind: string; agent: string; team: string; text: string }[],
  limit: number,
  terms: string[][],
): SearchPage {
  const hits = rows.slice(0, limit).map((r) => ({
    stream: r.stream,
    position: Number(r.position),
    at: Number(r.at),
    family: r.family,
    kind: r.kind,
    agent: r.agent,
    team: r.team,
    snippet: snippetOf(r.text, terms),
  }));
  return { hits, next: rows.length > limit ? encodeSearchCursor(hits[hits.length - 1]) : null };
}

/** What every store's search takes apart the same way: the cursor (append time, stream, position of the last hit). */
export function encodeSearchCursor(h: { at: number; stream: string; position: number }): string {
  return Buffer.from(JSON.stringify([h.at, h.stream, h.position])).toString('base64url');
}

export function decodeSearchCursor(c: string | undefined): [number, string, number] | null {
  if (c === undefined || c === '') return null;
  try {
    if (c.length > 1_000) throw new Error('long');
    const v = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 3 && Number.isSafeInteger(v[0]) && typeof v[1] === 'string' && Number.isSafeInteger(v[2])) return [v[0], v[1], v[2]];
  } catch {
    // fall through
  }
  throw new StoreError('bad_input', 'a search cursor is what a previous page gave as `next`');
}

/** Full-text search over the log, kept as an index derived from it (docs/search.md). */
export interface SearchIndex {
  search(query: SearchQuery): Promise<SearchPage>;
  /** Drops the index and fills it again from the stored events; resolves with the number of events indexed. */
  rebuildSearch(): Promise<number>;
}
