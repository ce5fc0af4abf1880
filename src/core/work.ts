// The Work fold: conversations, Spaces' agents, commands, executions and
// results of one scope (a project, or one person's private General Chat).
//
// Pure: no clock, no I/O, no randomness. Time (`at`), the author (`by`) and
// generated ids arrive on the event, set by the server from the transport;
// the log position arrives as an argument and becomes the revision of every
// aggregate the event touches.
//
// Linear: the state is owned by whoever folds it and is updated in place, so
// an event costs what it touches, not what the stream holds (copying the
// tables per event, and a conversation's messages per message, made 16,000
// messages in one conversation take 5.8 s). Tables are Maps keyed by id, so
// an id such as `constructor` or `__proto__` is just an id. An agent, command,
// execution, result or Space that changes is replaced by a new object (its old
// object is never edited); a conversation is one object for its whole life,
// updated in place (it grows by a message per event: its `messages`, `links`,
// `title` and `rev` change, nothing else). To fold without keeping the
// result, use `previewWork`; to fork or ship the state, `workToJSON` /
// `workFromJSON`.
//
// Invariants:
// - an agent is keyed by (space, stable session id), never by pane or label:
//   observing it again (moved, relabelled, revived) updates the same agent and
//   the same chat; ending it marks it ended and deletes nothing;
// - one agent runs one command at a time; the others wait in a FIFO queue in
//   log order (the store assigns positions, so the database decides order);
// - an execution, and its result, belong to exactly one command, which
//   belongs to exactly one agent chat;
// - revoking a Space cancels its agents' queued commands and refuses new ones
//   (the server checks), and keeps every chat, execution and result;
// - an agent has at most `WORK_LIMITS.queue` commands waiting; more fold to nothing;
// - `members` is the project's membership as of the position folded
//   (`member.changed`, written by the server after the identity app's change);
//   a member's change is the family `project` with id `member:<uid>`;
// - hostile or impossible events fold to nothing (`changes` empty), never throw:
//   every field is checked before anything changes. There is no catch-all: a
//   bug in this file throws, and the tests see it.

export const WORK_PROTOCOL_VERSION = 1;

export const WORK_LIMITS = {
  text: 20_000,
  title: 200,
  name: 100,
  id: 128,
  label: 200,
  reason: 500,
  tool: 120,
  digest: 200,
  /** Commands waiting per agent: queue operations copy the queue, so it is bounded. */
  queue: 1000,
};

export type AgentOrigin = 'bridge' | 'hook' | 'manual';
export type AgentState = 'idle' | 'working' | 'blocked' | 'ended';
export type CommandStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export type ExecutionState = 'running' | 'blocked' | 'done' | 'failed';

export interface Who {
  uid: string;
  name: string;
}

export interface Message {
  seq: number;
  /** `human` typed by a person; `prompt` a command; `agent` text from an agent; `result` a final result; `system` lifecycle. */
  kind: 'human' | 'prompt' | 'agent' | 'result' | 'system';
  text: string;
  by: Who;
  at: number;
  command?: string;
}

export interface Link {
  project: string;
  conversation: string;
  title: string;
  at: number;
  /** The command it was queued as ("Start in <project>" with an agent picked), and that agent's label. */
  command?: string;
  agent?: string;
}

export interface Conversation {
  id: string;
  /** `general` (private), `human` (a project room), `agent` (an agent's chat). */
  kind: 'general' | 'human' | 'agent';
  title: string;
  createdBy: Who;
  createdAt: number;
  agent?: string;
  messages: Message[];
  /** General Chat: links to the project conversations it started. */
  links: Link[];
  /** A project conversation started from someone's General Chat (only that person's request moved). */
  linkedFrom?: { uid: string };
  rev: number;
}

export interface Space {
  id: string;
  name: string;
  owner: Who;
  contributed: boolean;
  contributedBy?: Who;
  revokedBy?: Who;
  /** Why it was revoked, when the server did it (its owner was removed from the project). */
  revokedWhy?: string;
  rev: number;
}

export type MemberRole = 'owner' | 'editor' | 'viewer';

/**
 * A member of the project and their role, as of the position folded: the
 * project's own copy of who may do what (`member.changed`), written by the
 * server whenever the identity app changes a membership.
 */
export interface Member {
  uid: string;
  name: string;
  role: MemberRole;
  /** Who made it so (the server, `roost`, for a change it found at start). */
  by: Who;
  at: number;
  rev: number;
}

export interface Agent {
  id: string;
  space: string;
  session: string;
  label: string;
  pane: string;
  cwd: string;
  /** `bridge`: started by the Space's bridge; `hook`/`manual`: started by hand (trusted local). */
  origin: AgentOrigin;
  trustedLocal: boolean;
  /** A trusted-local agent is read-only to teammates unless the Space owner makes it callable. */
  callable: boolean;
  /** Execution mode as the Space reports it (e.g. a permission mode). */
  mode: string;
  state: AgentState;
  conversation: string;
  queue: string[];
  running: string | null;
  firstSeen: number;
  lastSeen: number;
  endedAt: number | null;
  rev: number;
}

export interface Command {
  id: string;
  agent: string;
  conversation: string;
  text: string;
  by: Who;
  at: number;
  /** The log position of the command: its place in the queue. */
  position: number;
  status: CommandStatus;
  rev: number;
}

/**
 * Where a blocked execution's approval waits, as the Space reported it: a
 * pending `session.approval` on a fleet-board thread, which is an approval
 * of kind `fleet` in the one approvals model. It is decided there (POST
 * /approvals/:id/decision, the first decision wins), never in Work; Work
 * only points at it so a member can decide from the agent.
 */
export interface PendingApproval {
  /** The board's project: stamped by the server from the reporting bridge's transport, never from the payload. */
  project: string;
  thread: string;
  /** The board session's id (not the Claude Code session id that keys the agent). */
  session: string;
  rid: string;
  tool: string;
  digest: string;
}

export interface Execution {
  id: string;
  command: string;
  agent: string;
  conversation: string;
  state: ExecutionState;
  blockedOn: string;
  /** While blocked on a board approval: where to decide it; null otherwise (and for events from before it existed). */
  approval: PendingApproval | null;
  startedAt: number;
  endedAt: number | null;
  result: string | null;
  rev: number;
}

export interface Result {
  id: string;
  execution: string;
  command: string;
  agent: string;
  conversation: string;
  status: 'done' | 'failed';
  text: string;
  at: number;
  rev: number;
}

export interface WorkState {
  /** The log position of the last event folded (every event at a higher position advances it, even a no-op). */
  rev: number;
  spaces: Map<string, Space>;
  conversations: Map<string, Conversation>;
  agents: Map<string, Agent>;
  commands: Map<string, Command>;
  executions: Map<string, Execution>;
  results: Map<string, Result>;
  /** The project's members by uid (a removed member is not there; a private stream has none). */
  members: Map<string, Member>;
  /** Derived, kept by the fold, never on the wire: the ids of each Space's agents. */
  agentsBySpace: Map<string, Set<string>>;
}

/** The wire form (snapshots, JSON round trips): every table as a list, in the order it was filled. */
export interface WorkJSON {
  rev: number;
  spaces: Space[];
  conversations: Conversation[];
  agents: Agent[];
  commands: Command[];
  executions: Execution[];
  results: Result[];
  members: Member[];
}

export type WorkFamily = 'conversation' | 'agent' | 'execution' | 'result' | 'project';

export interface WorkChange {
  family: WorkFamily;
  id: string;
}

export function emptyWork(): WorkState {
  return { rev: 0, spaces: new Map(), conversations: new Map(), agents: new Map(), commands: new Map(), executions: new Map(), results: new Map(), members: new Map(), agentsBySpace: new Map() };
}

export const GENERAL = 'general';

export const WORK_EVENT_TYPES = [
  'conversation.created',
  'message.posted',
  'conversation.linked',
  'space.contributed',
  'space.revoked',
  'agent.observed',
  'agent.ended',
  'agent.callable',
  'command.queued',
  'command.cancelled',
  'execution.started',
  'execution.blocked',
  'execution.resumed',
  'execution.output',
  'execution.finished',
  'member.changed',
] as const;

export function agentIdOf(space: string, session: string): string {
  return `${space}:${session}`;
}

export function agentChatOf(agentId: string): string {
  return `agent:${agentId}`;
}

// ------------------------------------------------------------ checks

type Rec = Record<string, unknown>;

const isRec = (x: unknown): x is Rec => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (x: unknown, max: number): string | null => (typeof x === 'string' && x.length <= max ? x : null);
const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const id = (x: unknown): string | null => (typeof x === 'string' && ID.test(x) ? x : null);
/** Board thread, session and approval ids, and project ids (the board's own pattern). */
const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const boardId = (x: unknown): string | null => (typeof x === 'string' && BOARD_ID.test(x) ? x : null);

/** A valid approval pointer, or null (absent, as in events from before it existed, or malformed). */
function pendingApproval(x: unknown): PendingApproval | null {
  if (!isRec(x)) return null;
  const project = boardId(x.project);
  const thread = boardId(x.thread);
  const session = boardId(x.session);
  const rid = boardId(x.rid);
  const tool = str(x.tool, WORK_LIMITS.tool);
  const digest = str(x.digest ?? '', WORK_LIMITS.digest);
  if (!project || !thread || !session || !rid || !tool || digest === null) return null;
  return { project, thread, session, rid, tool, digest };
}
function who(x: unknown): Who | null {
  if (!isRec(x)) return null;
  const uid = str(x.uid, WORK_LIMITS.id);
  const name = str(x.name, WORK_LIMITS.name);
  return uid && name !== null ? { uid, name } : null;
}

// ------------------------------------------------------------ the fold

/**
 * One event being folded. Every change to the state goes through the helpers
 * below, which record how to take it back when `undo` is set (a preview).
 */
interface Draft {
  s: WorkState;
  pos: number;
  changes: WorkChange[];
  /** `family \0 id` of each change listed, once there are many (an event lists an aggregate once). */
  seen: Set<string> | null;
  undo: (() => void)[] | null;
}

function touch(d: Draft, family: WorkFamily, key: string): void {
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

function set<T>(d: Draft, table: Map<string, T>, key: string, value: T): void {
  if (d.undo) {
    const had = table.has(key);
    const prev = table.get(key);
    d.undo.push(had ? () => void table.set(key, prev as T) : () => void table.delete(key));
  }
  table.set(key, value);
}

/** Appends to an array that only grows (a conversation's messages or links). */
function append<T>(d: Draft, list: T[], item: T): void {
  if (d.undo) {
    const n = list.length;
    d.undo.push(() => void (list.length = n));
  }
  list.push(item);
}

/** Marks a conversation changed by this event (in place: it is the same object for its life). */
function touchConversation(d: Draft, c: Conversation): void {
  if (c.rev !== d.pos) {
    if (d.undo) {
      const rev = c.rev;
      d.undo.push(() => void (c.rev = rev));
    }
    c.rev = d.pos;
  }
  touch(d, 'conversation', c.id);
}
function putAgent(d: Draft, a: Agent): void {
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
function putCommand(d: Draft, c: Command): void {
  set(d, d.s.commands, c.id, { ...c, rev: d.pos });
}
function putExecution(d: Draft, x: Execution): void {
  set(d, d.s.executions, x.id, { ...x, rev: d.pos });
  touch(d, 'execution', x.id);
}
function putResult(d: Draft, r: Result): void {
  set(d, d.s.results, r.id, { ...r, rev: d.pos });
  touch(d, 'result', r.id);
}
/** A member's change, as the family `project` with id `member:<uid>` (a Space's is its id). */
function putMember(d: Draft, uid: string, m: Member | null): void {
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

function putSpace(d: Draft, sp: Space): void {
  set(d, d.s.spaces, sp.id, { ...sp, rev: d.pos });
  touch(d, 'project', sp.id);
}

/** Adds a message to a conversation, numbered in log order from 1. */
function say(d: Draft, conversation: string, kind: Message['kind'], text: string, by: Who, at: number, command?: string): void {
  const c = d.s.conversations.get(conversation);
  if (!c) return;
  const seq = c.messages.length + 1;
  append(d, c.messages, command === undefined ? { kind, text, by, at, seq } : { kind, text, by, at, command, seq });
  touchConversation(d, c);
}

function newConversation(d: Draft, c: Omit<Conversation, 'rev' | 'messages' | 'links'>, messages: Message[] = []): Conversation {
  const out: Conversation = { ...c, messages, links: [], rev: d.pos };
  set(d, d.s.conversations, out.id, out);
  touch(d, 'conversation', out.id);
  return out;
}

function general(by: Who, at: number): Omit<Conversation, 'rev' | 'messages' | 'links'> {
  return { id: GENERAL, kind: 'general', title: 'General Chat', createdBy: by, createdAt: at };
}

const SYSTEM: Who = { uid: 'roost', name: 'Roost' };

function draft(s: WorkState, position: number, undo: (() => void)[] | null): Draft | null {
  if (!Number.isInteger(position) || position <= s.rev) return null;
  if (undo) {
    const rev = s.rev;
    undo.push(() => void (s.rev = rev));
  }
  s.rev = position;
  return { s, pos: position, changes: [], seen: null, undo };
}

/**
 * Folds one stored event at log `position` into `state`, in place, and returns
 * the aggregates it touched (empty for an event that changes nothing). An
 * event at or below `state.rev` is ignored; any other advances `state.rev`.
 */
export function applyWork(state: WorkState, event: unknown, position: number): WorkChange[] {
  if (!isRec(event) || typeof event.type !== 'string') return [];
  const d = draft(state, position, null);
  if (!d) return [];
  step(d, event);
  return d.changes;
}

/**
 * What folding `events` in order, at positions `firstPosition`,
 * `firstPosition + 1`, ..., would touch, each event's list in turn; `state` is
 * left exactly as it was. The server uses it to tell a change from a no-op
 * before it stores anything. Costs what folding them costs.
 */
export function previewWork(state: WorkState, events: readonly unknown[], firstPosition: number = state.rev + 1): WorkChange[][] {
  const undo: (() => void)[] = [];
  try {
    return events.map((event, i) => {
      if (!isRec(event) || typeof event.type !== 'string') return [];
      const d = draft(state, firstPosition + i, undo);
      if (!d) return [];
      step(d, event);
      return d.changes;
    });
  } finally {
    // Newest first: each step restores what the one after it found.
    for (let i = undo.length - 1; i >= 0; i--) undo[i]();
  }
}

/** Folds entries in order into `state` (in place) and returns it. */
export function foldWork(state: WorkState, entries: Iterable<{ position: number; event: unknown }>): WorkState {
  for (const e of entries) applyWork(state, e.event, e.position);
  return state;
}

function step(d: Draft, e: Rec): void {
  const at = num(e.at) ?? 0;
  const by = who(e.by);
  const s = d.s;
  switch (e.type) {
    case 'conversation.created': {
      const cid = id(e.id);
      const title = str(e.title, WORK_LIMITS.title);
      if (!cid || title === null || !by || s.conversations.has(cid)) return;
      newConversation(d, { id: cid, kind: cid === GENERAL ? 'general' : 'human', title, createdBy: by, createdAt: at });
      return;
    }
    case 'message.posted': {
      const cid = id(e.conversation);
      const text = str(e.text, WORK_LIMITS.text);
      if (!cid || !text || !by) return;
      const c = s.conversations.get(cid);
      if (c?.kind === 'agent') return; // an agent chat takes commands, not loose messages
      if (!c) {
        // General Chat exists from a person's first message.
        if (cid !== GENERAL) return;
        newConversation(d, general(by, at));
      }
      say(d, cid, 'human', text, by, at);
      return;
    }
    case 'conversation.linked': {
      // In the private stream: General Chat gains a link. In the project
      // stream: the linked conversation is created holding only the request.
      const project = id(e.project);
      const target = id(e.target);
      const title = str(e.title, WORK_LIMITS.title);
      if (!project || !target || title === null || !by) return;
      if (e.side === 'private') {
        const g = s.conversations.get(GENERAL);
        if (g && g.links.some((l) => l.project === project && l.conversation === target)) return;
        const chat = g ?? newConversation(d, general(by, at));
        const command = id(e.command);
        const agent = str(e.agent, WORK_LIMITS.label);
        append(d, chat.links, command && agent !== null ? { project, conversation: target, title, at, command, agent } : { project, conversation: target, title, at });
        touchConversation(d, chat);
        return;
      }
      const request = str(e.request, WORK_LIMITS.text);
      if (e.side !== 'project' || !request || s.conversations.has(target)) return;
      // Queued to an agent as well (a `command.queued` in the same append): the request points at its command.
      const command = id(e.command);
      newConversation(d, { id: target, kind: 'human', title, createdBy: by, createdAt: at, linkedFrom: { uid: by.uid } }, [command ? { seq: 1, kind: 'human', text: request, by, at, command } : { seq: 1, kind: 'human', text: request, by, at }]);
      return;
    }
    case 'space.contributed': {
      const sid = id(e.space);
      const name = str(e.name, WORK_LIMITS.name);
      const owner = who(e.owner);
      if (!sid || name === null || !owner || !by) return;
      if (s.spaces.get(sid)?.contributed) return;
      putSpace(d, { id: sid, name, owner, contributed: true, contributedBy: by, rev: d.pos });
      return;
    }
    case 'space.revoked': {
      const sid = id(e.space);
      const sp = sid ? s.spaces.get(sid) : undefined;
      if (!sp || !sp.contributed || !by) return;
      const why = str(e.reason, WORK_LIMITS.reason) || '';
      putSpace(d, why ? { ...sp, contributed: false, revokedBy: by, revokedWhy: why } : { ...sp, contributed: false, revokedBy: by });
      // Future execution stops: what waits in the queue is cancelled. A
      // running execution may still report its end, so its result is kept.
      for (const aid of s.agentsBySpace.get(sp.id) ?? []) {
        const a = s.agents.get(aid);
        if (!a || a.queue.length === 0) continue;
        for (const cmdId of a.queue) {
          const c = s.commands.get(cmdId);
          if (c) putCommand(d, { ...c, status: 'cancelled' });
        }
        putAgent(d, { ...a, queue: [] });
        say(d, a.conversation, 'system', `${sp.name} was revoked by ${by.name}${why ? ` (${why})` : ''}: ${a.queue.length} queued command(s) cancelled`, SYSTEM, at);
      }
      return;
    }
    case 'member.changed': {
      // Who may do what from this position on: role null is a removal.
      const uid = id(e.uid);
      const name = str(e.name, WORK_LIMITS.name);
      const role = e.role === 'owner' || e.role === 'editor' || e.role === 'viewer' ? e.role : e.role === null ? null : undefined;
      if (!uid || name === null || role === undefined || !by) return;
      const prev = s.members.get(uid);
      if (role === null) {
        if (prev) putMember(d, uid, null);
        return;
      }
      if (prev && prev.role === role && prev.name === name) return;
      putMember(d, uid, { uid, name, role, by, at, rev: d.pos });
      return;
    }
    case 'agent.observed': {
      const sid = id(e.space);
      const session = id(e.session);
      if (!sid || !session) return;
      const sp = s.spaces.get(sid);
      if (!sp) return;
      const aid = agentIdOf(sid, session);
      const prev = s.agents.get(aid);
      const label = str(e.label, WORK_LIMITS.label);
      const pane = str(e.pane, WORK_LIMITS.label);
      const cwd = str(e.cwd, WORK_LIMITS.label * 5);
      const mode = str(e.mode, WORK_LIMITS.label);
      const origin: AgentOrigin = e.origin === 'bridge' || e.origin === 'hook' || e.origin === 'manual' ? e.origin : (prev?.origin ?? 'manual');
      const reported: AgentState | null = e.state === 'idle' || e.state === 'working' || e.state === 'blocked' ? e.state : null;
      if (!prev) {
        const chat = agentChatOf(aid);
        const a: Agent = {
          id: aid,
          space: sid,
          session,
          label: label || session,
          pane: pane ?? '',
          cwd: cwd ?? '',
          origin,
          trustedLocal: origin !== 'bridge',
          callable: origin === 'bridge',
          mode: mode ?? '',
          state: reported ?? 'idle',
          conversation: chat,
          queue: [],
          running: null,
          firstSeen: at,
          lastSeen: at,
          endedAt: null,
          rev: d.pos,
        };
        putAgent(d, a);
        newConversation(d, { id: chat, kind: 'agent', title: a.label, createdBy: sp.owner, createdAt: at, agent: aid });
        say(d, chat, 'system', `${a.label} appeared on ${sp.name}${a.trustedLocal ? ' (trusted local)' : ''}`, SYSTEM, at);
        return;
      }
      const next: Agent = {
        ...prev,
        label: label || prev.label,
        pane: pane ?? prev.pane,
        cwd: cwd ?? prev.cwd,
        mode: mode ?? prev.mode,
        lastSeen: Math.max(prev.lastSeen, at),
        // A running execution decides working/blocked; otherwise the report does.
        state: prev.running ? prev.state : (reported ?? (prev.state === 'ended' ? 'idle' : prev.state)),
        endedAt: null,
      };
      const moved = next.pane !== prev.pane && prev.pane !== '';
      const revived = prev.state === 'ended';
      const renamed = next.label !== prev.label;
      if (!moved && !revived && !renamed && next.cwd === prev.cwd && next.mode === prev.mode && next.state === prev.state) return;
      putAgent(d, next);
      if (renamed) {
        const c = s.conversations.get(prev.conversation);
        if (c) {
          if (c.title !== next.label) {
            if (d.undo) {
              const title = c.title;
              d.undo.push(() => void (c.title = title));
            }
            c.title = next.label;
          }
          touchConversation(d, c);
        }
      }
      if (moved) say(d, prev.conversation, 'system', `moved from ${prev.pane} to ${next.pane}`, SYSTEM, at);
      if (revived) say(d, prev.conversation, 'system', 'seen again', SYSTEM, at);
      return;
    }
    case 'agent.ended': {
      const sid = id(e.space);
      const session = id(e.session);
      if (!sid || !session) return;
      const a = s.agents.get(agentIdOf(sid, session));
      if (!a || a.state === 'ended') return;
      const reason = str(e.reason, WORK_LIMITS.reason) || 'ended';
      // Waiting commands can no longer run on it.
      for (const cmdId of a.queue) {
        const c = s.commands.get(cmdId);
        if (c) putCommand(d, { ...c, status: 'cancelled' });
      }
      if (a.running) finishExecution(d, a.running, 'failed', `the agent ended (${reason})`, at);
      const cur = s.agents.get(a.id)!;
      putAgent(d, { ...cur, state: 'ended', endedAt: at, queue: [], running: null });
      say(d, a.conversation, 'system', `ended: ${reason}`, SYSTEM, at);
      return;
    }
    case 'agent.callable': {
      const aid = id(e.agent);
      const a = aid ? s.agents.get(aid) : undefined;
      if (!a || typeof e.callable !== 'boolean' || a.callable === e.callable || !by) return;
      putAgent(d, { ...a, callable: e.callable });
      say(d, a.conversation, 'system', `${by.name} made it ${e.callable ? 'callable by teammates' : 'read-only to teammates'}`, SYSTEM, at);
      return;
    }
    case 'command.queued': {
      const cid = id(e.id);
      const aid = id(e.agent);
      const text = str(e.text, WORK_LIMITS.text);
      if (!cid || !aid || !text || !by || s.commands.has(cid)) return;
      const a = s.agents.get(aid);
      const sp = a ? s.spaces.get(a.space) : undefined;
      if (!a || a.state === 'ended' || !sp?.contributed) return;
      // Trusted local: only the Space's owner, unless made callable.
      if (!a.callable && sp.owner.uid !== by.uid) return;
      if (a.queue.length >= WORK_LIMITS.queue) return;
      putCommand(d, { id: cid, agent: aid, conversation: a.conversation, text, by, at, position: d.pos, status: 'queued', rev: d.pos });
      putAgent(d, { ...a, queue: [...a.queue, cid] });
      say(d, a.conversation, 'prompt', text, by, at, cid);
      return;
    }
    case 'command.cancelled': {
      const cid = id(e.command);
      const c = cid ? s.commands.get(cid) : undefined;
      if (!c || c.status !== 'queued' || !by) return;
      const a = s.agents.get(c.agent);
      putCommand(d, { ...c, status: 'cancelled' });
      if (a) putAgent(d, { ...a, queue: a.queue.filter((q) => q !== c.id) });
      say(d, c.conversation, 'system', `${by.name} cancelled a queued command`, SYSTEM, at, c.id);
      return;
    }
    case 'execution.started': {
      const cid = id(e.command);
      const c = cid ? s.commands.get(cid) : undefined;
      if (!c || c.status !== 'queued') return;
      const a = s.agents.get(c.agent);
      // FIFO: only the head of an idle agent's queue may start.
      if (!a || a.running || a.queue[0] !== c.id || a.state === 'ended') return;
      const xid = `x-${c.id}`;
      putCommand(d, { ...c, status: 'running' });
      putExecution(d, { id: xid, command: c.id, agent: a.id, conversation: c.conversation, state: 'running', blockedOn: '', approval: null, startedAt: at, endedAt: null, result: null, rev: d.pos });
      putAgent(d, { ...a, queue: a.queue.slice(1), running: xid, state: 'working' });
      return;
    }
    case 'execution.blocked':
    case 'execution.resumed': {
      const x = execOf(d, e);
      if (!x || (x.state !== 'running' && x.state !== 'blocked')) return;
      const blocked = e.type === 'execution.blocked';
      // A resume may name the approval it ends (`rid`): with two pending at once, the first
      // decision must not clear the pointer the second still waits on. One without (an older
      // event) resumes whatever the execution waits for.
      const rid = blocked ? null : boardId(e.rid);
      if (rid && x.approval && x.approval.rid !== rid) return;
      const reason = blocked ? str(e.reason, WORK_LIMITS.reason) || 'waiting for a decision' : '';
      // A blocked report may say where its approval waits; resuming clears it.
      const approval = blocked ? pendingApproval(e.approval) : null;
      if (x.state === (blocked ? 'blocked' : 'running') && x.blockedOn === reason && (x.approval?.rid ?? null) === (approval?.rid ?? null)) return;
      putExecution(d, { ...x, state: blocked ? 'blocked' : 'running', blockedOn: reason, approval });
      const a = s.agents.get(x.agent);
      if (a) putAgent(d, { ...a, state: blocked ? 'blocked' : 'working' });
      if (blocked) say(d, x.conversation, 'system', `blocked: ${reason}`, SYSTEM, at, x.command);
      return;
    }
    case 'execution.output': {
      // A durable piece of what the agent said (a turn), not terminal frames.
      const x = execOf(d, e);
      const text = str(e.text, WORK_LIMITS.text);
      if (!x || !text || x.state === 'done' || x.state === 'failed') return;
      const a = s.agents.get(x.agent);
      say(d, x.conversation, 'agent', text, { uid: `agent:${x.agent}`, name: a?.label ?? 'agent' }, at, x.command);
      return;
    }
    case 'execution.finished': {
      const x = execOf(d, e);
      if (!x || x.state === 'done' || x.state === 'failed') return;
      const status = e.status === 'failed' ? 'failed' : 'done';
      finishExecution(d, x.id, status, str(e.result, WORK_LIMITS.text) ?? '', at);
      return;
    }
    default:
      return;
  }
}

function execOf(d: Draft, e: Rec): Execution | undefined {
  const cid = id(e.command);
  return cid ? d.s.executions.get(`x-${cid}`) : undefined;
}

function finishExecution(d: Draft, xid: string, status: 'done' | 'failed', text: string, at: number): void {
  const s = d.s;
  const x = s.executions.get(xid);
  if (!x) return;
  const rid = `r-${x.command}`;
  putExecution(d, { ...x, state: status, blockedOn: '', approval: null, endedAt: at, result: rid });
  const c = s.commands.get(x.command);
  if (c) putCommand(d, { ...c, status });
  putResult(d, { id: rid, execution: x.id, command: x.command, agent: x.agent, conversation: x.conversation, status, text, at, rev: d.pos });
  const a = s.agents.get(x.agent);
  if (a && a.running === x.id) putAgent(d, { ...a, running: null, state: a.state === 'ended' ? 'ended' : 'idle' });
  say(d, x.conversation, 'result', text || (status === 'done' ? 'done' : 'failed'), { uid: `agent:${x.agent}`, name: a?.label ?? 'agent' }, at, x.command);
}

// ------------------------------------------------------------ wire form

export function workToJSON(s: WorkState): WorkJSON {
  return {
    rev: s.rev,
    spaces: [...s.spaces.values()],
    conversations: [...s.conversations.values()],
    agents: [...s.agents.values()],
    commands: [...s.commands.values()],
    executions: [...s.executions.values()],
    results: [...s.results.values()],
    members: [...s.members.values()],
  };
}

/** A state from its wire form; owns what it holds (lists that grow in place are copied). */
export function workFromJSON(j: WorkJSON): WorkState {
  const s = emptyWork();
  s.rev = j.rev ?? 0;
  for (const sp of j.spaces ?? []) s.spaces.set(sp.id, { ...sp });
  for (const c of j.conversations ?? []) s.conversations.set(c.id, { ...c, messages: [...c.messages], links: [...c.links] });
  for (const a of j.agents ?? []) {
    s.agents.set(a.id, { ...a, queue: [...a.queue] });
    let ids = s.agentsBySpace.get(a.space);
    if (!ids) s.agentsBySpace.set(a.space, (ids = new Set()));
    ids.add(a.id);
  }
  for (const c of j.commands ?? []) s.commands.set(c.id, { ...c });
  for (const x of j.executions ?? []) s.executions.set(x.id, { ...x });
  for (const r of j.results ?? []) s.results.set(r.id, { ...r });
  for (const m of j.members ?? []) s.members.set(m.uid, { ...m });
  return s;
}

// ------------------------------------------------------------ derived views

/** The command each idle agent of a Space should run now (the head of its queue), in log order. */
export function dueCommands(state: WorkState, space: string): Command[] {
  const sp = state.spaces.get(space);
  if (!sp?.contributed) return [];
  const out: Command[] = [];
  for (const aid of state.agentsBySpace.get(space) ?? []) {
    const a = state.agents.get(aid);
    if (!a || a.running || a.state === 'ended' || a.queue.length === 0) continue;
    const c = state.commands.get(a.queue[0]);
    if (c) out.push(c);
  }
  return out.sort((x, y) => x.position - y.position);
}

/** The agents of one Space, in the order they were first seen. */
export function agentsOfSpace(state: WorkState, space: string): Agent[] {
  const out: Agent[] = [];
  for (const aid of state.agentsBySpace.get(space) ?? []) {
    const a = state.agents.get(aid);
    if (a) out.push(a);
  }
  return out;
}

/** May `uid` send commands to this agent? (Role is checked by the server; this is the Space rule.) */
export function mayCommand(state: WorkState, agentId: string, uid: string): string | null {
  const a = state.agents.get(agentId);
  if (!a) return 'no such agent';
  const sp = state.spaces.get(a.space);
  if (!sp?.contributed) return 'its Space is not contributed to this project (revoked)';
  if (a.state === 'ended') return 'the agent has ended';
  if (!a.callable && sp.owner.uid !== uid) return `${a.label} is trusted local: read-only to teammates unless ${sp.owner.name} makes it callable`;
  if (a.queue.length >= WORK_LIMITS.queue) return `${a.label} already has ${WORK_LIMITS.queue} commands waiting`;
  return null;
}

/** The space registry (stream `work:spaces`): who owns which Space. */
export interface SpaceRecord {
  id: string;
  name: string;
  owner: Who;
  at: number;
}

/** Folds one registry event into `reg` (in place); true when it registered a Space. */
export function applySpaceRegistry(reg: Map<string, SpaceRecord>, event: unknown): boolean {
  if (!isRec(event) || event.type !== 'space.registered') return false;
  const sid = id(event.id);
  const name = str(event.name, WORK_LIMITS.name);
  const owner = who(event.by);
  if (!sid || name === null || !owner || reg.has(sid)) return false;
  reg.set(sid, { id: sid, name, owner, at: num(event.at) ?? 0 });
  return true;
}
