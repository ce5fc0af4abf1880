// The Work view's one client reducer. The server sends a snapshot, then frames
// `<family>.changed {id, rev}` (conversation, agent, execution, result,
// project); the reducer keeps the revision it holds of every aggregate and
// refetches one only when a frame names a newer revision. Nothing is applied
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

/** One scope's model, live: `query` is `project=P` or `scope=private`. */
export function useWorkScope(query: string | null): { model: WorkModel; conn: Conn } {
  const [model, setModel] = useState<WorkModel>(EMPTY);
  const [conn, setConn] = useState<Conn>('connecting');
  const ref = useRef(model);
  ref.current = model;
  useEffect(() => {
    if (!query) return;
    setModel(EMPTY);
    ref.current = EMPTY;
    setConn('connecting');
    let stopped = false;
    const es = new EventSource(`/api/v2/events?${query}`);
    const apply = (f: (m: WorkModel) => WorkModel) => {
      if (stopped) return;
      ref.current = f(ref.current);
      setModel(ref.current);
    };
    const fetchOne = async (family: Family, id: string, rev: number) => {
      if (revOf(ref.current, family, id) >= rev) return;
      if (family === 'project') {
        const r = await fetch(`/api/v2/snapshot?${query}`);
        if (r.ok) {
          const s = fromSnapshot(await r.json());
          apply((m) => ({ ...m, spaces: s.spaces }));
        }
        return;
      }
      const r = await fetch(`/api/v2/${family}s/${encodeURIComponent(id)}?${query}`);
      if (r.ok) {
        const body = await r.json();
        apply((m) => merge(m, family, body));
      }
    };
    es.addEventListener('snapshot', (e) => {
      apply(() => fromSnapshot(JSON.parse((e as MessageEvent).data)));
      setConn('live');
    });
    for (const fam of FAMILIES)
      es.addEventListener(`${fam}.changed`, (e) => {
        const d = JSON.parse((e as MessageEvent).data) as { id: string; rev: number };
        void fetchOne(fam, d.id, d.rev);
      });
    es.onopen = () => setConn('live');
    es.onerror = () => setConn(es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting');
    return () => {
      stopped = true;
      es.close();
    };
  }, [query]);
  return { model, conn };
}

export interface LiveInfo {
  people: { uid: string; name: string }[];
  role: string | null;
  terminal: string;
  closed: boolean;
  /** Bumped when one of my Spaces registers (the Spaces box refetches). */
  spacesTick: number;
}

/** The lossy stream of a project: presence, my role as it changes, and the selected agent's terminal. */
export function useProjectLive(project: string | null, agent: string | null, initialRole: string | null): LiveInfo {
  const [info, setInfo] = useState<LiveInfo>({ people: [], role: initialRole, terminal: '', closed: false, spacesTick: 0 });
  useEffect(() => {
    setInfo((i) => ({ ...i, role: initialRole }));
  }, [initialRole]);
  useEffect(() => {
    if (!project) return;
    setInfo((i) => ({ ...i, terminal: '', closed: false }));
    const es = new EventSource(`/api/v2/live?project=${encodeURIComponent(project)}${agent ? `&agent=${encodeURIComponent(agent)}` : ''}`);
    es.addEventListener('presence', (e) => setInfo((i) => ({ ...i, people: JSON.parse((e as MessageEvent).data).people })));
    es.addEventListener('role', (e) => setInfo((i) => ({ ...i, role: JSON.parse((e as MessageEvent).data).role })));
    es.addEventListener('spaces', () => setInfo((i) => ({ ...i, spacesTick: i.spacesTick + 1 })));
    es.addEventListener('terminal', (e) => setInfo((i) => ({ ...i, terminal: (i.terminal + JSON.parse((e as MessageEvent).data).data).slice(-20_000) })));
    es.addEventListener('error', (e) => {
      if ((e as MessageEvent).data) setInfo((i) => ({ ...i, closed: true, role: null }));
    });
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) setInfo((i) => ({ ...i, closed: true }));
    };
    return () => es.close();
  }, [project, agent]);
  return info;
}

function randomKey(): string {
  const a = new Uint8Array(12);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A write: one POST with a fresh Idempotency-Key; the change itself arrives on the stream. */
export async function post(path: string, body: unknown): Promise<{ ok: boolean; status: number; json: any }> {
  const r = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': randomKey() }, body: JSON.stringify(body) });
  let json: any = null;
  try {
    json = await r.json();
  } catch {}
  return { ok: r.ok, status: r.status, json };
}
