// The Work view's live client, its one reducer. The server sends a snapshot,
// then frames `<family>.changed {id, rev}` (conversation, agent, execution,
// result, project); the reducer keeps the revision it holds of every aggregate
// and refetches one only when a frame names a newer revision. Nothing is applied
// optimistically and nothing polls: what a person sees is what the log says.
// EventSource resumes with Last-Event-ID by itself, so a reconnect replays.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { Agent, Command, Conversation, Execution, Result, Space } from '../../../src/core/work.js';

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

type Family = 'conversation' | 'agent' | 'execution' | 'result' | 'project';

const byId = <T extends { id: string }>(xs: T[]): Record<string, T> => Object.fromEntries(xs.map((x) => [x.id, x]));

export function fromSnapshot(s: any): WorkModel {
  return {
    ready: true,
    position: s.position,
    spaces: byId(s.spaces ?? []),
    conversations: byId(s.conversations ?? []),
    agents: byId(s.agents ?? []),
    commands: byId(s.commands ?? []),
    executions: byId(s.executions ?? []),
    results: byId(s.results ?? []),
  };
}

/** The revision the model holds of an aggregate (0: unknown). */
export function revOf(m: WorkModel, family: Family, id: string): number {
  const map = family === 'conversation' ? m.conversations : family === 'agent' ? m.agents : family === 'execution' ? m.executions : family === 'result' ? m.results : m.spaces;
  return map[id]?.rev ?? 0;
}

function put<T extends { id: string; rev: number }>(map: Record<string, T>, item: T | null | undefined): Record<string, T> {
  if (!item) return map;
  const cur = map[item.id];
  if (cur && cur.rev > item.rev) return map;
  return { ...map, [item.id]: item };
}

/** Merges a fetched aggregate (the answer of GET /api/v2/<family>s/:id). */
export function merge(m: WorkModel, family: Family, body: any): WorkModel {
  const item = body.item;
  switch (family) {
    case 'conversation': {
      let commands = m.commands;
      for (const c of body.commands ?? []) commands = put(commands, c);
      return { ...m, conversations: put(m.conversations, item), commands };
    }
    case 'agent': {
      let commands = m.commands;
      for (const c of body.queue ?? []) commands = put(commands, c);
      if (body.runningCommand) commands = put(commands, body.runningCommand);
      return { ...m, agents: put(m.agents, item), commands, executions: put(m.executions, body.running) };
    }
    case 'execution':
      return { ...m, executions: put(m.executions, item), commands: put(m.commands, body.command) };
    case 'result':
      return { ...m, results: put(m.results, item) };
    default:
      return m;
  }
}

export type Conn = 'connecting' | 'live' | 'reconnecting' | 'closed';

const FAMILIES: Family[] = ['conversation', 'agent', 'execution', 'result', 'project'];

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
 * One connection per tab: `/api/v2/events?project=P&agent=A` carries the
 * project's durable frames (snapshot, then `<family>.changed`, resumed with
 * Last-Event-ID) and, on the same socket, lossy frames: presence, my role, my
 * Spaces, the selected agent's terminal, and `private.changed` for my General
 * Chat (whose snapshot is fetched on every (re)connect, so nothing missed while
 * away stays missing). Selecting another agent reconnects with the last id
 * seen: a replay from memory, not a new snapshot.
 */
export function useWork(project: string | null, agent: string | null): WorkLive {
  const [live, setLive] = useState<WorkLive>({ model: EMPTY, priv: EMPTY, conn: 'connecting', people: [], role: null, terminal: '', closed: false, spacesTick: 0 });
  const ref = useRef(live);
  ref.current = live;
  const lastId = useRef<{ project: string | null; id: string | null }>({ project: null, id: null });
  const current = useRef<string | null>(null);
  useEffect(() => {
    if (project) return;
    // No project yet (a new account): General Chat alone, on the private stream.
    current.current = null;
    const es = new EventSource('/api/v2/events?scope=private');
    const set = (f: (l: WorkLive) => WorkLive) => {
      if (current.current !== null) return;
      ref.current = f(ref.current);
      setLive(ref.current);
    };
    es.addEventListener('snapshot', (e) => set((l) => ({ ...l, priv: fromSnapshot(JSON.parse((e).data)), conn: 'live' })));
    es.addEventListener('conversation.changed', (e) => {
      const d = JSON.parse((e).data) as { id: string; rev: number };
      void fetch(`/api/v2/conversations/${encodeURIComponent(d.id)}?scope=private`).then(async (r) => {
        if (r.ok) {
          const body = await r.json();
          set((l) => ({ ...l, priv: merge(l.priv, 'conversation', body) }));
        }
      });
    });
    es.onerror = () => set((l) => ({ ...l, conn: es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting' }));
    return () => es.close();
  }, [project]);
  useEffect(() => {
    if (!project) return;
    current.current = project;
    const resume = lastId.current.project === project ? lastId.current.id : null;
    if (!resume) {
      lastId.current = { project, id: null };
      ref.current = { ...ref.current, model: EMPTY, conn: 'connecting', people: [], terminal: '', closed: false };
      setLive(ref.current);
    } else {
      ref.current = { ...ref.current, terminal: '' };
      setLive(ref.current);
    }
    const q = `project=${encodeURIComponent(project)}`;
    const es = new EventSource(`/api/v2/events?${q}${agent ? `&agent=${encodeURIComponent(agent)}` : ''}${resume ? `&lastEventId=${encodeURIComponent(resume)}` : ''}`);
    // A fetch started on this connection still lands after a reconnect (selecting
    // another agent reconnects past the frame that asked for it); only a change
    // of project drops it.
    const apply = (f: (l: WorkLive) => WorkLive) => {
      if (current.current !== project) return;
      ref.current = f(ref.current);
      setLive(ref.current);
    };
    const seen = (e: Event) => {
      const id = (e as MessageEvent).lastEventId;
      if (id) lastId.current = { project, id };
    };
    const fetchOne = async (family: Family, id: string, rev: number) => {
      if (revOf(ref.current.model, family, id) >= rev) return;
      if (family === 'project') {
        const r = await fetch(`/api/v2/snapshot?${q}`);
        if (r.ok) {
          const s = fromSnapshot(await r.json());
          apply((l) => ({ ...l, model: { ...l.model, spaces: s.spaces } }));
        }
        return;
      }
      const r = await fetch(`/api/v2/${family}s/${encodeURIComponent(id)}?${q}`);
      if (r.ok) {
        const body = await r.json();
        apply((l) => ({ ...l, model: merge(l.model, family, body) }));
      }
    };
    const fetchPrivate = async () => {
      const r = await fetch('/api/v2/snapshot?scope=private');
      if (r.ok) {
        const s = fromSnapshot(await r.json());
        apply((l) => ({ ...l, priv: s }));
      }
    };
    const data = (e: Event) => JSON.parse((e as MessageEvent).data);
    es.addEventListener('snapshot', (e) => {
      seen(e);
      apply((l) => ({ ...l, model: fromSnapshot(data(e)), conn: 'live' }));
    });
    for (const fam of FAMILIES)
      es.addEventListener(`${fam}.changed`, (e) => {
        seen(e);
        const d = data(e) as { id: string; rev: number };
        void fetchOne(fam, d.id, d.rev);
      });
    es.addEventListener('presence', (e) => apply((l) => ({ ...l, people: data(e).people })));
    es.addEventListener('role', (e) => apply((l) => ({ ...l, role: data(e).role })));
    es.addEventListener('spaces', () => apply((l) => ({ ...l, spacesTick: l.spacesTick + 1 })));
    es.addEventListener('terminal', (e) => apply((l) => ({ ...l, terminal: (l.terminal + data(e).data).slice(-20_000) })));
    es.addEventListener('private.changed', (e) => {
      const d = data(e) as { id: string; rev: number };
      if ((ref.current.priv.conversations[d.id]?.rev ?? 0) >= d.rev) return;
      void fetch(`/api/v2/conversations/${encodeURIComponent(d.id)}?scope=private`).then(async (r) => {
        if (r.ok) {
          const body = await r.json();
          apply((l) => ({ ...l, priv: merge(l.priv, 'conversation', body) }));
        }
      });
    });
    es.addEventListener('error', (e) => {
      // The server's own `error` frame: my access ended (or the server stops).
      if ((e as MessageEvent).data) apply((l) => ({ ...l, closed: /no longer a member/.test((e as MessageEvent).data), conn: 'reconnecting' }));
    });
    es.onopen = () => {
      apply((l) => ({ ...l, conn: 'live' }));
      void fetchPrivate();
    };
    es.onerror = () => apply((l) => ({ ...l, conn: es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting' }));
    return () => es.close();
  }, [project, agent]);
  return live;
}
