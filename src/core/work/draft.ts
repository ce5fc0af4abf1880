// One event being folded (a Draft): every change to the state goes through
// the helpers here, which list the aggregates it touched and, for a preview,
// record how to take each change back. Also the shape of a step (WorkStep).

import { GENERAL, type Agent, type Command, type Conversation, type Execution, type Member, type Message, type Result, type Space, type Who, type WorkChange, type WorkFamily, type WorkState } from './model.js';
import type { Rec } from './read.js';

/**
 * One event being folded. Every change to the state goes through the helpers
 * below, which record how to take it back when `undo` is set (a preview).
 */
export interface Draft {
  s: WorkState;
  pos: number;
  changes: WorkChange[];
  /** `family \0 id` of each change listed, once there are many (an event lists an aggregate once). */
  seen: Set<string> | null;
  undo: (() => void)[] | null;
}

export function touch(d: Draft, family: WorkFamily, key: string): void {
  const list = d.changes;
  if (d.seen === null) {
    // Most events touch one to four aggregates: a scan beats a set.
    for (let i = 0; i < list.length; i++) if (list[i].id === key && list[i].family === family) return;
    list.push({ family, id: key });
    if (list.length >= 8) d.seen = new Set(list.map((c) => c.family + '\u0000' + c.id));
    return;
  }
  const k = family + '\u0000' + key;
  if (d.seen.has(k)) return;
  d.seen.add(k);
  list.push({ family, id: key });
}

export function set<T>(d: Draft, table: Map<string, T>, key: string, value: T): void {
  if (d.undo) {
    const had = table.has(key);
    const prev = table.get(key);
    d.undo.push(had ? () => void table.set(key, prev as T) : () => void table.delete(key));
  }
  table.set(key, value);
}

/** Appends to an array that only grows (a conversation's messages or links). */
export function append<T>(d: Draft, list: T[], item: T): void {
  if (d.undo) {
    const n = list.length;
    d.undo.push(() => void (list.length = n));
  }
  list.push(item);
}

/** Marks a conversation changed by this event (in place: it is the same object for its life). */
export function touchConversation(d: Draft, c: Conversation): void {
  if (c.rev !== d.pos) {
    if (d.undo) {
      const rev = c.rev;
      d.undo.push(() => void (c.rev = rev));
    }
    c.rev = d.pos;
  }
  touch(d, 'conversation', c.id);
}
export function putAgent(d: Draft, a: Agent): void {
  if (!d.s.agents.has(a.id)) {
    let ids = d.s.agentsBySpace.get(a.space);
    if (!ids) {
      ids = new Set();
      set(d, d.s.agentsBySpace, a.space, ids);
    }
    if (d.undo) {
      const added = ids;
      d.undo.push(() => void added.delete(a.id));
    }
    ids.add(a.id);
  }
  set(d, d.s.agents, a.id, { ...a, rev: d.pos });
  touch(d, 'agent', a.id);
}
export function putCommand(d: Draft, c: Command): void {
  set(d, d.s.commands, c.id, { ...c, rev: d.pos });
}
export function putExecution(d: Draft, x: Execution): void {
  set(d, d.s.executions, x.id, { ...x, rev: d.pos });
  touch(d, 'execution', x.id);
}
export function putResult(d: Draft, r: Result): void {
  set(d, d.s.results, r.id, { ...r, rev: d.pos });
  touch(d, 'result', r.id);
}
/** A member's change, as the family `project` with id `member:<uid>` (a Space's is its id). */
export function putMember(d: Draft, uid: string, m: Member | null): void {
  const table = d.s.members;
  if (d.undo) {
    const had = table.has(uid);
    const prev = table.get(uid);
    d.undo.push(had ? () => void table.set(uid, prev!) : () => void table.delete(uid));
  }
  if (m) table.set(uid, { ...m, rev: d.pos });
  else table.delete(uid);
  touch(d, 'project', `member:${uid}`);
}

export function putSpace(d: Draft, sp: Space): void {
  set(d, d.s.spaces, sp.id, { ...sp, rev: d.pos });
  touch(d, 'project', sp.id);
}

/** Adds a message to a conversation, numbered in log order from 1. */
export function say(d: Draft, conversation: string, kind: Message['kind'], text: string, by: Who, at: number, command?: string): void {
  const c = d.s.conversations.get(conversation);
  if (!c) return;
  const seq = c.messages.length + 1;
  append(d, c.messages, command === undefined ? { kind, text, by, at, seq } : { kind, text, by, at, command, seq });
  touchConversation(d, c);
}

export function newConversation(d: Draft, c: Omit<Conversation, 'rev' | 'messages' | 'links'>, messages: Message[] = []): Conversation {
  const out: Conversation = { ...c, messages, links: [], rev: d.pos };
  set(d, d.s.conversations, out.id, out);
  touch(d, 'conversation', out.id);
  return out;
}

export function general(by: Who, at: number): Omit<Conversation, 'rev' | 'messages' | 'links'> {
  return { id: GENERAL, kind: 'general', title: 'General Chat', createdBy: by, createdAt: at };
}

export const SYSTEM: Who = { uid: 'roost', name: 'Roost' };

export function draft(s: WorkState, position: number, undo: (() => void)[] | null): Draft | null {
  if (!Number.isInteger(position) || position <= s.rev) return null;
  if (undo) {
    const rev = s.rev;
    undo.push(() => void (s.rev = rev));
  }
  s.rev = position;
  return { s, pos: position, changes: [], seen: null, undo };
}

/** One event type's handler: `at` and `by` are the event's, read once by the fold (`by` null when absent or malformed). */
export type WorkStep = (d: Draft, e: Rec, at: number, by: Who | null) => void;
