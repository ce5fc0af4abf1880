// The Work view's live client: three scopes of the browser's one live
// connection (hub.ts, stream.ts): `work:<project>` (the project's durable
// frames), `work.private` (my General Chat's) and `work.live:<project>[/<agent>]`
// (lossy: presence, my role, my Spaces, the watched agent's terminal).
//
// Invariants:
// - each durable scope is folded with the shared Work fold (src/core/work.ts),
//   the very code the server folds with: a `snapshot` frame is the fold's wire
//   form (`workFromJSON`), an `event` frame is the stored event itself, applied
//   with `applyWork` at its position, in position order, at most once
//   (`advance`); nothing is refetched, nothing applied optimistically and
//   nothing polls: what a person sees is what the log says;
// - the model the view reads is rebuilt from the fold after each frame: every
//   aggregate the fold replaced keeps its identity until it changes; a
//   conversation (which the fold grows in place) is copied when it changed;
// - selecting another agent changes only the lossy scope: the durable ones
//   resume from their cursors on the reopened connection, no new snapshot.

import { useEffect, useRef, useState } from 'preact/hooks';
import { applyWork, emptyWork, workFromJSON, type Agent, type Command, type Conversation, type Execution, type Result, type Space, type WorkJSON, type WorkState, type WorkChange } from '../../../src/core/work.js';
import { LiveStream, advance, type Connection } from './stream.js';

export interface WorkModel {
  ready: boolean;
  position: number;
  spaces: Record<string, Space>;
  conversations: Record<string, Conversation>;
  agents: Record<string, Agent>;
  commands: Record<string, Command>;
  executions: Record<string, Execution>;
  results: Record<string, Result>;
}

export const EMPTY: WorkModel = { ready: false, position: 0, spaces: {}, conversations: {}, agents: {}, commands: {}, executions: {}, results: {} };

const copyConversation = (c: Conversation): Conversation => ({ ...c, messages: c.messages.slice(), links: c.links.slice() });

/** The view's model of a folded state: `prev`'s objects where nothing changed (`changed`: the conversations that did; null: all). */
export function modelOf(s: WorkState, position: number, prev: WorkModel | null, changed: Set<string> | null): WorkModel {
  const conversations: Record<string, Conversation> = {};
  for (const [id, c] of s.conversations) {
    const old = prev?.conversations[id];
    conversations[id] = old && changed && !changed.has(id) ? old : copyConversation(c);
  }
  return {
    ready: true,
    position,
    spaces: Object.fromEntries(s.spaces),
    conversations,
    agents: Object.fromEntries(s.agents),
    commands: Object.fromEntries(s.commands),
    executions: Object.fromEntries(s.executions),
    results: Object.fromEntries(s.results),
  };
}

/** One durable Work scope, folded. */
class WorkFeed {
  state: WorkState = emptyWork();
  epoch = '';
  position = 0;
  model: WorkModel = EMPTY;
  /** Why the server closed the scope (403: my access ended), or ''. Cleared by the next snapshot. */
  closed = '';
  readonly stream: LiveStream;

  constructor(scope: string, onChange: () => void) {
    this.stream = new LiveStream({
      scope,
      cursor: () => (this.epoch ? `${this.epoch}:${this.position}` : ''),
      frames: {
        snapshot: (d: WorkJSON & { epoch: string; position: number }) => {
          this.state = workFromJSON(d);
          this.epoch = d.epoch;
          this.position = d.position;
          this.closed = '';
          this.model = modelOf(this.state, this.position, null, null);
          this.stream.setConnection('live');
          onChange();
        },
        event: (d: { event: unknown; changes?: WorkChange[] }, id: string) => {
          const at = advance(this, id);
          if (!at) return;
          const changes = applyWork(this.state, d.event, at.position);
          const convs = new Set<string>();
          for (const c of changes) if (c.family === 'conversation') convs.add(c.id);
          this.model = modelOf(this.state, at.position, this.model, convs);
          this.stream.setConnection('live');
          onChange();
        },
      },
      onConnection: () => onChange(),
      onClosed: (d) => {
        if (d.status === 403 || d.status === 401) this.closed = d.reason;
        onChange();
      },
    });
  }
}

export type Conn = 'connecting' | 'live' | 'reconnecting' | 'closed';


export interface WorkLive {
  /** The project's model. */
  model: WorkModel;
  /** My private scope (General Chat). */
  priv: WorkModel;
  conn: Conn;
  people: { uid: string; name: string }[];
  role: string | null;
  terminal: string;
  /** The server closed my stream: I am no longer a member. */
  closed: boolean;
  /** Bumped when one of my Spaces registers (the Spaces box refetches). */
  spacesTick: number;
}

/**
 * The Work view's live state: the project's fold, my General Chat's, and the
 * lossy frames of the project (and of `agent`, whose terminal is watched).
 * Without a project (a new account) only General Chat is read.
 */
export function useWork(project: string | null, agent: string | null): WorkLive {
  const [, tick] = useState(0);
  const lossy = useRef<{ people: { uid: string; name: string }[]; role: string | null; terminal: string; spacesTick: number }>({ people: [], role: null, terminal: '', spacesTick: 0 });
  const feeds = useRef<{ project: string | null; main: WorkFeed | null; priv: WorkFeed | null }>({ project: null, main: null, priv: null });
  const changed = useRef(() => tick((n) => n + 1)).current;

  // My General Chat: one feed for the life of the view.
  useEffect(() => {
    const priv = new WorkFeed('work.private', changed);
    feeds.current.priv = priv;
    priv.stream.start();
    return () => {
      priv.stream.stop();
      feeds.current.priv = null;
    };
  }, []);

  // The project's durable frames: a new fold per project.
  useEffect(() => {
    feeds.current.project = project;
    lossy.current = { people: [], role: null, terminal: '', spacesTick: lossy.current.spacesTick };
    if (!project) {
      feeds.current.main = null;
      changed();
      return;
    }
    const main = new WorkFeed(`work:${project}`, changed);
    feeds.current.main = main;
    main.stream.start();
    changed();
    return () => {
      main.stream.stop();
      if (feeds.current.main === main) feeds.current.main = null;
    };
  }, [project]);

  // The lossy frames: presence, my role, my Spaces, the watched agent's terminal.
  useEffect(() => {
    if (!project) return;
    lossy.current = { ...lossy.current, terminal: '' };
    const apply = (f: (l: typeof lossy.current) => typeof lossy.current) => {
      if (feeds.current.project !== project) return;
      lossy.current = f(lossy.current);
      changed();
    };
    const stream = new LiveStream({
      scope: `work.live:${project}${agent ? `/${agent}` : ''}`,
      cursor: () => '',
      frames: {
        presence: (d: { people: { uid: string; name: string }[] }) => apply((l) => ({ ...l, people: d.people })),
        role: (d: { role: string | null }) => apply((l) => ({ ...l, role: d.role })),
        spaces: () => apply((l) => ({ ...l, spacesTick: l.spacesTick + 1 })),
        terminal: (d: { data: string }) => apply((l) => ({ ...l, terminal: (l.terminal + d.data).slice(-20_000) })),
      },
    });
    stream.start();
    return () => stream.stop();
  }, [project, agent]);

  const { main, priv } = feeds.current;
  const c: Connection = main ? main.stream.connection : (priv?.stream.connection ?? 'connecting');
  const closed = !!main?.closed;
  return {
    model: main?.model ?? EMPTY,
    priv: priv?.model ?? EMPTY,
    conn: c === 'replaying' ? 'live' : c,
    ...lossy.current,
    closed,
  };
}
