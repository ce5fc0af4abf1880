// The browser's side of a fleet thread's stream: the scope
// `fleet:<project>/<thread>` of the browser's one live connection (stream.ts,
// hub.ts: reconnects, backoff, connection state), the shared fleet fold
// (src/core/fleet.ts), and the chat lines it projects.
//
// Invariants:
// - the board is only ever built from a snapshot's state and by
//   `applySessionEvent` on event frames: the very fold the server runs;
//   nothing here interprets an event on its own, and the chat line of an
//   event is what that fold projects against the board before it (so a
//   prompt is one event seen twice: a count on the card and a line in the
//   chat, never a copy);
// - frames are applied in position order, at most once: a frame at or below
//   the last applied position (same epoch) is a duplicate and dropped, so an
//   overlapping replay never counts a turn twice;
// - the history of the chat comes from the log itself: on first load the
//   page replays the thread from position 0 (the stream's exact replay), up
//   to `HISTORY_EVENTS`; a longer thread starts from a snapshot and says that
//   earlier lines are not shown.
// There is no polling: one GET learns the log's epoch and head, then
// everything arrives on the stream.

import { applySessionEvent, emptySessions, type SessionEvent, type SessionsState } from '../../../src/core/fleet.js';
import { LiveStream, advance, type Connection } from './stream.js';

export type { Connection };

/** A chat line of the thread: one projected event. */
export interface ChatEntry {
  /** epoch:position of the event: unique, stable across reconnects. */
  key: string;
  position: number;
  type: string;
  /** The session the event is about. */
  session: string;
  /** The transport's name of whoever posted it (a member, or the bridge). */
  author: string;
  ts: number;
  text: string;
  /** true: an action line ("Ana asked …"); false: a bubble in the author's voice. */
  action: boolean;
}

/** Longest thread (in events) whose whole chat is replayed on first load. */
export const HISTORY_EVENTS = 5_000;
/** Chat lines kept in memory. */
export const CHAT_KEEP = 1_000;
/** Characters of a session's growing answer kept for its card (a turn's text is at most 20,000). */
export const LIVE_TEXT_KEEP = 20_000;

export interface FleetStats {
  snapshots: number;
  resets: number;
  frames: number;
  duplicates: number;
  reconnects: number;
}

export class FleetClient {
  state: SessionsState = emptySessions();
  chat: ChatEntry[] = [];
  /** false when the chat does not reach back to the thread's first event. */
  historyComplete = true;
  /** Why the server refuses this board to us (401/403 message), or ''. Cleared once frames flow. */
  denied = '';
  epoch = '';
  position = 0;
  readonly stats: FleetStats = { snapshots: 0, resets: 0, frames: 0, duplicates: 0, reconnects: 0 };
  /**
   * Start requests seen on the stream (`request.start` / `request.refused`,
   * docs/bridge.md): not board state (the fold ignores them), only what lets
   * a page say "waiting for the bridge" or why the bridge refused.
   */
  readonly requests = new Map<string, { session: string; by: string; refused: string }>();
  /**
   * What each session shows live (`event: live`; never folded, never
   * replayed): the latest tool frame, or the answer so far, the sum of the
   * `session.stream` frames since its last turn (each frame carries only the
   * text added since the one before). A turn, a result or the end clears it.
   */
  readonly live = new Map<string, { type: string; tool: string; text: string; ts: number }>();
  /**
   * How many workstation bridges follow this thread (presence, from the GET,
   * the snapshot and `live` frames; never stored); null until the server says.
   */
  bridges: number | null = null;
  /** Called after frames were folded or the connection changed (batched: at most once per tick). */
  onChange: () => void = () => {};

  private based = false; // we hold a base state (a snapshot, or the empty board at position 0)
  private catchUpTo = 0;
  private notifyTimer = 0;
  private closed = false;
  private readonly stream: LiveStream;

  constructor(
    readonly thread: string,
    /** The project (shared mode); '' for the default one. EventSource sends no headers, so it rides the query. */
    readonly project = '',
    private base = '',
  ) {
    this.stream = new LiveStream({
      scope: `fleet:${project || 'default'}/${thread}`,
      cursor: () => this.lastEventId,
      frames: { snapshot: (d) => this.onSnapshot(d), event: (d, id) => this.onEvent(d, id), live: (d) => this.onLive(d) },
      onOpen: () => {
        if (this.based) {
          this.stream.setConnection(this.position >= this.catchUpTo ? 'live' : 'replaying');
          this.stream.armQuiet();
        }
      },
      onConnection: () => this.changed(),
      onReopen: () => this.stats.reconnects++,
      // Refused (401/403): say why at once; the GET below keeps it up to date.
      onClosed: (d) => {
        if ((d.status === 401 || d.status === 403) && d.reason !== this.denied) {
          this.denied = d.reason;
          this.changed();
        }
      },
      // A lost connection or a refused scope: one GET tells a refusal (signed out, removed) apart.
      beforeReopen: () => this.probe(),
      // A board refused to us (401/403) is asked again rarely: access changes by a person's hand.
      maxRetryMs: () => (this.denied ? 30_000 : 5_000),
    });
  }

  get url(): string {
    return `${this.base}/fleet/${encodeURIComponent(this.thread)}`;
  }

  private withProject(path: string): string {
    return this.project ? `${path}?${new URLSearchParams({ project: this.project })}` : path;
  }

  /** Asks the server whether this board is open to us; sets `denied` (401/403) and returns the answer when it is. */
  private async probe(): Promise<{ epoch?: unknown; position?: unknown; bridges?: unknown } | null> {
    try {
      const r = await fetch(this.withProject(this.url), { headers: { accept: 'application/json' } });
      if (r.status === 401 || r.status === 403) {
        // Shared mode: signed out meanwhile, or not a member of the project.
        const b = (await r.json().catch(() => ({}))) as { message?: unknown };
        const why = typeof b.message === 'string' ? b.message : `the server answered ${r.status}`;
        if (why !== this.denied) {
          this.denied = why;
          this.changed();
        }
        return null;
      }
      if (!r.ok) return null;
      if (this.denied) {
        this.denied = '';
        this.changed();
      }
      const b = (await r.json()) as { epoch?: unknown; position?: unknown; bridges?: unknown };
      this.noteBridges(b.bridges);
      return b;
    } catch {
      return null; // unreachable: the stream's own retries say so
    }
  }

  get connection(): Connection {
    return this.stream.connection;
  }

  get lastEventId(): string {
    return this.epoch ? `${this.epoch}:${this.position}` : '';
  }

  async start(): Promise<void> {
    this.closed = false;
    // One GET for the epoch and the head: a short thread is replayed from its
    // first event so the chat has its history; a long one starts from a snapshot.
    const b = await this.probe();
    if (b && typeof b.epoch === 'string' && typeof b.position === 'number' && b.position <= HISTORY_EVENTS) {
      // Replaying from the first event rebuilds everything: start from nothing.
      this.state = emptySessions();
      this.chat = [];
      this.requests.clear();
      this.epoch = b.epoch;
      this.position = 0;
      this.based = true;
      this.catchUpTo = b.position;
    }
    if (this.closed) return;
    if (!this.based) this.historyComplete = false;
    this.stream.start();
  }

  stop(): void {
    this.closed = true;
    this.stream.stop();
    clearTimeout(this.notifyTimer);
  }

  private changed(): void {
    if (this.notifyTimer) return;
    this.notifyTimer = window.setTimeout(() => {
      this.notifyTimer = 0;
      this.onChange();
    }, 16);
  }

  private onSnapshot(d: { epoch: string; position: number; reset: boolean; state: SessionsState; bridges?: unknown }): void {
    this.state = d.state && Array.isArray(d.state.sessions) ? d.state : emptySessions();
    this.stats.snapshots++;
    this.noteBridges(d.bridges);
    if (d.reset || (this.based && d.epoch !== this.epoch)) {
      // Our place in the log is gone (another database, or too far behind):
      // the board is replaced and the chat restarts from here.
      this.stats.resets++;
      this.chat = [];
      this.historyComplete = d.position === 0;
    } else if (!this.based && d.position > 0) {
      this.historyComplete = false;
    }
    this.epoch = d.epoch;
    this.position = d.position;
    this.based = true;
    this.catchUpTo = d.position;
    this.denied = '';
    this.stream.setConnection('live');
    this.changed();
  }

  private onEvent(d: { event: SessionEvent }, key: string): void {
    const id = advance(this, key, this.stats);
    if (!id) return;
    const ev = d.event ?? {};
    if (ev.type === 'request.start' || ev.type === 'request.refused') this.noteRequest(ev);
    const r = applySessionEvent(this.state, ev);
    this.state = r.state;
    // A completed turn, a result or the end supersedes the partial text shown live.
    if (ev.type === 'session.turn' || ev.type === 'session.result' || ev.type === 'session.end') this.live.delete(String(ev.id));
    if (r.chat) {
      this.chat.push({
        key,
        position: id.position,
        type: typeof ev.type === 'string' ? ev.type : '',
        session: typeof ev.id === 'string' ? ev.id : '',
        author: typeof ev.name === 'string' ? ev.name : '',
        ts: typeof ev.ts === 'number' ? ev.ts : 0,
        text: r.chat.text,
        action: r.chat.action,
      });
      if (this.chat.length > CHAT_KEEP) {
        this.chat.splice(0, this.chat.length - CHAT_KEEP);
        this.historyComplete = false;
      }
    }
    if (this.connection === 'replaying') {
      if (this.position >= this.catchUpTo) this.stream.setConnection('live');
      else this.stream.armQuiet();
    }
    this.changed();
  }

  private noteRequest(ev: SessionEvent): void {
    if (typeof ev.id !== 'string') return;
    const cur = this.requests.get(ev.id);
    if (ev.type === 'request.start' && !cur) {
      this.requests.set(ev.id, { session: typeof ev.session === 'string' ? ev.session : ev.id, by: typeof ev.name === 'string' ? ev.name : '', refused: '' });
    } else if (ev.type === 'request.refused') {
      const reason = typeof ev.reason === 'string' && ev.reason ? ev.reason : 'refused';
      this.requests.set(ev.id, { session: cur?.session ?? ev.id, by: cur?.by ?? '', refused: reason });
    }
    // Bounded: old requests are forgotten first (a Map iterates in insertion order).
    if (this.requests.size > 200) this.requests.delete(this.requests.keys().next().value as string);
  }

  private noteBridges(n: unknown): void {
    if (typeof n !== 'number' || !Number.isFinite(n) || n === this.bridges) return;
    this.bridges = Math.max(0, n);
    this.changed();
  }

  private onLive(f: { type?: unknown; id?: unknown; tool?: unknown; text?: unknown; ts?: unknown; count?: unknown }): void {
    if (f.type === 'bridges') {
      this.noteBridges(f.count);
      return;
    }
    const id = f.id;
    const session = typeof id === 'string' ? this.state.sessions.find((s) => s.id === id) : undefined;
    if (!session || session.state === 'ended') return;
    const type = typeof f.type === 'string' ? f.type : '';
    // Partial text of a session that is idle or dead belongs to a turn already shown whole
    // (an older bridge could send its last piece late): dropped, never shown as new.
    if (type === 'session.stream' && (session.state === 'idle' || session.state === 'dead')) return;
    const text = typeof f.text === 'string' ? f.text : '';
    const prev = this.live.get(session.id);
    const sum = type === 'session.stream' && prev?.type === 'session.stream' ? prev.text + text : text;
    this.live.set(session.id, {
      type,
      tool: typeof f.tool === 'string' ? f.tool : '',
      // Bounded like a turn's text: beyond it the newest text is kept.
      text: sum.length > LIVE_TEXT_KEEP ? '…' + sum.slice(-(LIVE_TEXT_KEEP - 1)) : sum,
      ts: typeof f.ts === 'number' ? f.ts : Date.now(),
    });
    this.changed();
  }
}
