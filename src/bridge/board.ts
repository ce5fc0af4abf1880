// The bridge on the fleet board: what it reads from the thread's stream (the
// members' start requests, prompts, closes and approval decisions) and what
// it posts there for the sessions it runs (spawn, status, turns, results,
// ends, refusals, and the lossy tool and partial-text frames).
//
// Invariants:
// - the board is the shared sessions fold of the thread's log (a snapshot,
//   then every event in order): the bridge reads it, never keeps its own copy
//   of a session's state;
// - a frame is handled completely (the handler awaited) before the next one,
//   and its stream id is saved only after that, so a crash replays at most
//   the frame in hand;
// - every durable post carries an Idempotency-Key from stable facts
//   (`<bridge>:<session>:<what>[:<n>]`), each counter bumped once per post, so
//   a retry is recognised and stores nothing twice.

import { emptySessions, reduceSessions, type Session, type SessionsState } from '../core/fleet.js';
import type { BoardClient, PostResult, SseFrame } from './client.js';
import type { ModelFigures } from './claude-stream.js';
import type { BridgeState } from './state-file.js';

/** A member's `request.start`, as read from the stream (every field checked). */
export interface StartAsk {
  id: string;
  /** The session's name (its id when none was given). */
  session: string;
  flavor: 'scoped' | 'plain';
  /** The folder asked for, relative to the bridge's root (or `~/…`). */
  root: string;
  /** Who asked. */
  by: string;
}

/** What the bridge does about the board's frames; each is awaited before the next frame. */
export interface BoardHandlers {
  start(ask: StartAsk): Promise<void>;
  /** A member's prompt for session `id`. */
  prompt(id: string, text: string): void;
  /** Session `id` ended on the board (a member closed it, or the bridge's own end came back). */
  ended(id: string, reason: string): Promise<void>;
  /** The board was replaced by a snapshot: whatever ended meanwhile ends here too. */
  replaced(): Promise<void>;
  /** An approval request was decided on the board. */
  decided(): void;
  /** The first frame was handled (or a resumed stream connected): the bridge is caught up. */
  caughtUp(): void;
}

/** The states a bridge's `session.status` sets. */
export type StatusState = 'running' | 'idle' | 'waiting' | 'dead';

/** What a post about a session needs: its ids and the counters behind its keys. */
export interface BoardSession {
  /** The board session's id. */
  id: string;
  /** Its name on the board. */
  name: string;
  statuses: number;
  turns: number;
  results: number;
}

export const oneLine = (s: string, n: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
};

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

export class Board {
  sessions: SessionsState = emptySessions();

  constructor(
    readonly client: BoardClient,
    private state: BridgeState,
    /** Where the stream position is kept in the state file: one per project and thread. */
    private streamKey: string,
    private log: (line: string) => void,
  ) {}

  session(id: string): Session | undefined {
    return this.sessions.sessions.find((s) => s.id === id);
  }

  // ------------------------------------------------------------ reading

  /** Reads the board now (before following it), and returns the sessions still open on it. */
  async read(): Promise<Session[]> {
    const snap: unknown = await this.client.getBoard();
    const sessions = isObj(snap) && Array.isArray(snap.sessions) ? (snap.sessions as Session[]) : [];
    this.sessions = { sessions };
    return sessions.filter((s) => s.state !== 'ended');
  }

  /** Follows the thread's stream until the connection closes, resuming from the saved position. */
  follow(h: BoardHandlers, server: string): Promise<void> {
    return this.client.follow({
      lastEventId: () => this.state.data.threads[this.streamKey]?.lastEventId,
      onFrame: (f) => this.onFrame(f, h),
      onState: (s, why) => {
        this.log(s === 'connected' ? `connected to ${server}${this.client.base}/stream` : `stream down (${why}); reconnecting`);
        // Resumed with Last-Event-ID: the board was read at the start, and the
        // server sends only what is new, which may be nothing at all.
        if (s === 'connected' && this.state.data.threads[this.streamKey]?.lastEventId) h.caughtUp();
      },
    });
  }

  private async onFrame(f: SseFrame, h: BoardHandlers): Promise<void> {
    let data: unknown;
    try {
      data = JSON.parse(f.data);
    } catch {
      return;
    }
    if (!isObj(data)) return;
    if (f.event === 'snapshot') {
      this.sessions = isObj(data.state) && Array.isArray(data.state.sessions) ? (data.state as unknown as SessionsState) : emptySessions();
      await h.replaced();
    } else if (f.event === 'event') {
      await this.onEvent(data.event, h);
    } else {
      return; // live frames and anything new: not ours
    }
    if (f.id) {
      (this.state.data.threads[this.streamKey] ??= {}).lastEventId = f.id;
      this.state.scheduleSave();
    }
    h.caughtUp();
  }

  private async onEvent(e: unknown, h: BoardHandlers): Promise<void> {
    if (!isObj(e)) return;
    if (e.type === 'request.start') {
      const id = typeof e.id === 'string' ? e.id : '';
      if (!id) return;
      await h.start({
        id,
        session: typeof e.session === 'string' && e.session ? e.session : id,
        flavor: e.flavor === 'plain' ? 'plain' : 'scoped',
        root: typeof e.root === 'string' ? e.root : '',
        by: typeof e.name === 'string' ? e.name.slice(0, 80) : '',
      });
      return;
    }
    const before = this.sessions;
    this.sessions = reduceSessions(this.sessions, e);
    if (this.sessions === before || typeof e.id !== 'string') return; // a no-op on the board is a no-op here too
    switch (e.type) {
      case 'session.prompt':
        h.prompt(e.id, String(e.text ?? ''));
        break;
      case 'session.end':
        await h.ended(e.id, closedReason(e.reason));
        break;
      case 'session.approval':
        h.decided();
        break;
    }
  }

  // ------------------------------------------------------------ posting

  /** An Idempotency-Key from stable facts: `<bridge>:<parts…>`. */
  key(...parts: (string | number)[]): string {
    return this.state.key(...parts);
  }

  /** Queues a durable post (in order behind the others, retried with its key). */
  post(path: '' | '/requests', body: Obj | Obj[], key: string): Promise<PostResult> {
    return this.client.post(path, body, key);
  }

  spawn(s: BoardSession, fields: { flavor: 'scoped' | 'plain'; root: string; worktree: string; by: string }): Promise<PostResult> {
    return this.post('', { type: 'session.spawn', id: s.id, session: s.name, flavor: fields.flavor, root: oneLine(fields.root, 300), worktree: oneLine(fields.worktree, 300), by: fields.by }, this.state.key(s.id, 'spawn'));
  }

  status(s: BoardSession, state: StatusState, activity: string): void {
    const n = ++s.statuses;
    void this.post('', { type: 'session.status', id: s.id, state, activity: oneLine(activity, 200) }, this.state.key(s.id, 'status', n));
  }

  /** A complete turn; returns its number (the Work output's key uses it too). */
  turn(s: BoardSession, text: string): number {
    const n = ++s.turns;
    const body: Obj = { type: 'session.turn', id: s.id, session: s.name };
    if (text) body.text = text.slice(0, 20_000);
    void this.post('', body, this.state.key(s.id, 'turn', n));
    return n;
  }

  /**
   * The result of a prompt; `usage` is what Claude Code (session `claude`)
   * used for it, per model (the server counts it once, by this post's key,
   * and never stores it on the board).
   */
  result(s: BoardSession, summary: string, usage?: { claude: string; models: ModelFigures[] }): void {
    const n = ++s.results;
    const body: Obj = { type: 'session.result', id: s.id, session: s.name, summary: oneLine(summary, 500) };
    if (usage?.models.length) body.usage = usage;
    void this.post('', body, this.state.key(s.id, 'result', n));
  }

  /** Queued, not awaited by callers that must not wait on the server. */
  end(id: string, name: string, reason: string): Promise<PostResult> {
    return this.post('', { type: 'session.end', id, session: name, reason: oneLine(reason, 120) }, this.state.key(id, 'end'));
  }

  refuse(id: string, reason: string): Promise<PostResult> {
    return this.post('/requests', { type: 'request.refused', id, reason: oneLine(reason, 120) }, this.state.key(id, 'refused'));
  }

  /**
   * A lossy tool frame: one attempt, never retried, failures dropped; in order
   * with the durable posts (a frame queued before a turn is relayed before it).
   */
  tool(s: BoardSession, tool: string, text: string): void {
    void this.client.postLossy('/live', { type: 'session.tool', id: s.id, tool, text: text.slice(0, 4000) });
  }

  /** A lossy partial-text frame (the text added since the last one), in order like `tool`. */
  stream(s: BoardSession, text: string): void {
    void this.client.postLossy('/live', { type: 'session.stream', id: s.id, text: text.slice(0, 4000) });
  }
}

/** The reason a session ends here when it was closed on the board. */
export function closedReason(reason: unknown): string {
  return typeof reason === 'string' && reason && reason !== 'closed' ? `closed on the board: ${reason}` : 'closed on the board';
}
