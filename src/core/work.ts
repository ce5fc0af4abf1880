// The Work fold: conversations, Spaces' agents, commands, executions and
// results of one scope (a project, or one person's private General Chat).
//
// Pure: no clock, no I/O, no randomness. Time (`at`), the author (`by`) and
// generated ids arrive on the event, set by the server from the transport;
// the log position arrives as an argument and becomes the revision of every
// aggregate the event touches.
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
// - hostile or impossible events fold to nothing (`changes` empty), never throw.

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
 * pending `session.approval` on a fleet-board thread. It is decided there
 * (by the board's `session.approval` post, the first decision wins), never
 * in Work; Work only points at it so a member can decide from the agent.
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
  rev: number;
  spaces: Record<string, Space>;
  conversations: Record<string, Conversation>;
  agents: Record<string, Agent>;
  commands: Record<string, Command>;
  executions: Record<string, Execution>;
  results: Record<string, Result>;
}

export type WorkFamily = 'conversation' | 'agent' | 'execution' | 'result' | 'project';

export interface WorkChange {
  family: WorkFamily;
  id: string;
}

export function emptyWork(): WorkState {
  return { rev: 0, spaces: {}, conversations: {}, agents: {}, commands: {}, executions: {}, results: {} };
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

interface Draft {
  s: WorkState;
  pos: number;
  changes: WorkChange[];
}

function touch(d: Draft, family: WorkFamily, key: string): void {
  if (!d.changes.some((c) => c.family === family && c.id === key)) d.changes.push({ family, id: key });
}

function putConversation(d: Draft, c: Conversation): void {
  d.s.conversations = { ...d.s.conversations, [c.id]: { ...c, rev: d.pos } };
  touch(d, 'conversation', c.id);
}
function putAgent(d: Draft, a: Agent): void {
  d.s.agents = { ...d.s.agents, [a.id]: { ...a, rev: d.pos } };
  touch(d, 'agent', a.id);
}
function putCommand(d: Draft, c: Command): void {
  d.s.commands = { ...d.s.commands, [c.id]: { ...c, rev: d.pos } };
}
function putExecution(d: Draft, x: Execution): void {
  d.s.executions = { ...d.s.executions, [x.id]: { ...x, rev: d.pos } };
  touch(d, 'execution', x.id);
}
function putResult(d: Draft, r: Result): void {
  d.s.results = { ...d.s.results, [r.id]: { ...r, rev: d.pos } };
  touch(d, 'result', r.id);
}
function putSpace(d: Draft, sp: Space): void {
  d.s.spaces = { ...d.s.spaces, [sp.id]: { ...sp, rev: d.pos } };
  touch(d, 'project', sp.id);
}

function say(d: Draft, conversation: string, m: Omit<Message, 'seq'>): void {
  const c = d.s.conversations[conversation];
  if (!c) return;
  putConversation(d, { ...c, messages: [...c.messages, { ...m, seq: c.messages.length + 1 }] });
}

const SYSTEM: Who = { uid: 'roost', name: 'Roost' };

/**
 * Folds one stored event at log `position`. Returns the next state (the same
 * object when nothing changed) and the aggregates it touched.
 */
export function applyWork(state: WorkState, event: unknown, position: number): { state: WorkState; changes: WorkChange[] } {
  if (!isRec(event) || typeof event.type !== 'string' || !Number.isInteger(position) || position <= state.rev) return { state, changes: [] };
  const d: Draft = { s: { ...state, rev: position }, pos: position, changes: [] };
  try {
    step(d, event);
  } catch {
    // Defensive: a fold never throws; an event that breaks it is a no-op.
    return { state, changes: [] };
  }
  // The position is consumed either way, so a replay sees the same revisions.
  return { state: d.s, changes: d.changes };
}

export function foldWork(state: WorkState, entries: { position: number; event: unknown }[]): WorkState {
  for (const e of entries) state = applyWork(state, e.event, e.position).state;
  return state;
}

function step(d: Draft, e: Rec): void {
  const at = num(e.at) ?? 0;
  const by = who(e.by);
  switch (e.type) {
    case 'conversation.created': {
      const cid = id(e.id);
      const title = str(e.title, WORK_LIMITS.title);
      if (!cid || title === null || !by || d.s.conversations[cid]) return;
      putConversation(d, { id: cid, kind: cid === GENERAL ? 'general' : 'human', title, createdBy: by, createdAt: at, messages: [], links: [], rev: d.pos });
      return;
    }
    case 'message.posted': {
      const cid = id(e.conversation);
      const text = str(e.text, WORK_LIMITS.text);
      if (!cid || !text || !by) return;
      if (!d.s.conversations[cid]) {
        // General Chat exists from a person's first message.
        if (cid !== GENERAL) return;
        putConversation(d, { id: GENERAL, kind: 'general', title: 'General Chat', createdBy: by, createdAt: at, messages: [], links: [], rev: d.pos });
      }
      const c = d.s.conversations[cid];
      if (c.kind === 'agent') return; // an agent chat takes commands, not loose messages
      say(d, cid, { kind: 'human', text, by, at });
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
        let g = d.s.conversations[GENERAL];
        if (!g) g = { id: GENERAL, kind: 'general', title: 'General Chat', createdBy: by, createdAt: at, messages: [], links: [], rev: d.pos };
        if (g.links.some((l) => l.project === project && l.conversation === target)) return;
        putConversation(d, { ...g, links: [...g.links, { project, conversation: target, title, at }] });
        return;
      }
      const request = str(e.request, WORK_LIMITS.text);
      if (e.side !== 'project' || !request || d.s.conversations[target]) return;
      putConversation(d, {
        id: target,
        kind: 'human',
        title,
        createdBy: by,
        createdAt: at,
        messages: [{ seq: 1, kind: 'human', text: request, by, at }],
        links: [],
        linkedFrom: { uid: by.uid },
        rev: d.pos,
      });
      return;
    }
    case 'space.contributed': {
      const sid = id(e.space);
      const name = str(e.name, WORK_LIMITS.name);
      const owner = who(e.owner);
      if (!sid || name === null || !owner || !by) return;
      const prev = d.s.spaces[sid];
      if (prev?.contributed) return;
      putSpace(d, { id: sid, name, owner, contributed: true, contributedBy: by, rev: d.pos });
      return;
    }
    case 'space.revoked': {
      const sid = id(e.space);
      const sp = sid ? d.s.spaces[sid] : undefined;
      if (!sp || !sp.contributed || !by) return;
      putSpace(d, { ...sp, contributed: false, revokedBy: by });
      // Future execution stops: what waits in the queue is cancelled. A
      // running execution may still report its end, so its result is kept.
      for (const a of Object.values(d.s.agents)) {
        if (a.space !== sp.id || a.queue.length === 0) continue;
        for (const cmdId of a.queue) {
          const c = d.s.commands[cmdId];
          if (c) putCommand(d, { ...c, status: 'cancelled' });
        }
        putAgent(d, { ...a, queue: [] });
        say(d, a.conversation, { kind: 'system', text: `${sp.name} was revoked by ${by.name}: ${a.queue.length} queued command(s) cancelled`, by: SYSTEM, at });
      }
      return;
    }
    case 'agent.observed': {
      const sid = id(e.space);
      const session = id(e.session);
      if (!sid || !session) return;
      const sp = d.s.spaces[sid];
      if (!sp) return;
      const aid = agentIdOf(sid, session);
      const prev = d.s.agents[aid];
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
        putConversation(d, {
          id: chat,
          kind: 'agent',
          title: a.label,
          createdBy: sp.owner,
          createdAt: at,
          agent: aid,
          messages: [],
          links: [],
          rev: d.pos,
        });
        say(d, chat, { kind: 'system', text: `${a.label} appeared on ${sp.name}${a.trustedLocal ? ' (trusted local)' : ''}`, by: SYSTEM, at });
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
        const c = d.s.conversations[prev.conversation];
        if (c) putConversation(d, { ...c, title: next.label });
      }
      if (moved) say(d, prev.conversation, { kind: 'system', text: `moved from ${prev.pane} to ${next.pane}`, by: SYSTEM, at });
      if (revived) say(d, prev.conversation, { kind: 'system', text: 'seen again', by: SYSTEM, at });
      return;
    }
    case 'agent.ended': {
      const sid = id(e.space);
      const session = id(e.session);
      if (!sid || !session) return;
      const a = d.s.agents[agentIdOf(sid, session)];
      if (!a || a.state === 'ended') return;
      const reason = str(e.reason, WORK_LIMITS.reason) || 'ended';
      // Waiting commands can no longer run on it.
      for (const cmdId of a.queue) {
        const c = d.s.commands[cmdId];
        if (c) putCommand(d, { ...c, status: 'cancelled' });
      }
      if (a.running) finishExecution(d, a.running, 'failed', `the agent ended (${reason})`, at);
      const cur = d.s.agents[a.id];
      putAgent(d, { ...cur, state: 'ended', endedAt: at, queue: [], running: null });
      say(d, a.conversation, { kind: 'system', text: `ended: ${reason}`, by: SYSTEM, at });
      return;
    }
    case 'agent.callable': {
      const aid = id(e.agent);
      const a = aid ? d.s.agents[aid] : undefined;
      if (!a || typeof e.callable !== 'boolean' || a.callable === e.callable || !by) return;
      putAgent(d, { ...a, callable: e.callable });
      say(d, a.conversation, { kind: 'system', text: `${by.name} made it ${e.callable ? 'callable by teammates' : 'read-only to teammates'}`, by: SYSTEM, at });
      return;
    }
    case 'command.queued': {
      const cid = id(e.id);
      const aid = id(e.agent);
      const text = str(e.text, WORK_LIMITS.text);
      if (!cid || !aid || !text || !by || d.s.commands[cid]) return;
      const a = d.s.agents[aid];
      const sp = a ? d.s.spaces[a.space] : undefined;
      if (!a || a.state === 'ended' || !sp?.contributed) return;
      // Trusted local: only the Space's owner, unless made callable.
      if (!a.callable && sp.owner.uid !== by.uid) return;
      putCommand(d, { id: cid, agent: aid, conversation: a.conversation, text, by, at, position: d.pos, status: 'queued', rev: d.pos });
      putAgent(d, { ...a, queue: [...a.queue, cid] });
      say(d, a.conversation, { kind: 'prompt', text, by, at, command: cid });
      return;
    }
    case 'command.cancelled': {
      const cid = id(e.command);
      const c = cid ? d.s.commands[cid] : undefined;
      if (!c || c.status !== 'queued' || !by) return;
      const a = d.s.agents[c.agent];
      putCommand(d, { ...c, status: 'cancelled' });
      if (a) putAgent(d, { ...a, queue: a.queue.filter((q) => q !== c.id) });
      say(d, c.conversation, { kind: 'system', text: `${by.name} cancelled a queued command`, by: SYSTEM, at, command: c.id });
      return;
    }
    case 'execution.started': {
      const cid = id(e.command);
      const c = cid ? d.s.commands[cid] : undefined;
      if (!c || c.status !== 'queued') return;
      const a = d.s.agents[c.agent];
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
      const a = d.s.agents[x.agent];
      if (a) putAgent(d, { ...a, state: blocked ? 'blocked' : 'working' });
      if (blocked) say(d, x.conversation, { kind: 'system', text: `blocked: ${reason}`, by: SYSTEM, at, command: x.command });
      return;
    }
    case 'execution.output': {
      // A durable piece of what the agent said (a turn), not terminal frames.
      const x = execOf(d, e);
      const text = str(e.text, WORK_LIMITS.text);
      if (!x || !text || x.state === 'done' || x.state === 'failed') return;
      const a = d.s.agents[x.agent];
      say(d, x.conversation, { kind: 'agent', text, by: { uid: `agent:${x.agent}`, name: a?.label ?? 'agent' }, at, command: x.command });
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
  return cid ? d.s.executions[`x-${cid}`] : undefined;
}

function finishExecution(d: Draft, xid: string, status: 'done' | 'failed', text: string, at: number): void {
  const x = d.s.executions[xid];
  if (!x) return;
  const rid = `r-${x.command}`;
  putExecution(d, { ...x, state: status, blockedOn: '', approval: null, endedAt: at, result: rid });
  const c = d.s.commands[x.command];
  if (c) putCommand(d, { ...c, status });
  putResult(d, { id: rid, execution: x.id, command: x.command, agent: x.agent, conversation: x.conversation, status, text, at, rev: d.pos });
  const a = d.s.agents[x.agent];
  if (a && a.running === x.id) putAgent(d, { ...a, running: null, state: a.state === 'ended' ? 'ended' : 'idle' });
  say(d, x.conversation, { kind: 'result', text: text || (status === 'done' ? 'done' : 'failed'), by: { uid: `agent:${x.agent}`, name: a?.label ?? 'agent' }, at, command: x.command });
}

// ------------------------------------------------------------ derived views

/** The command each idle agent of a Space should run now (the head of its queue), in log order. */
export function dueCommands(state: WorkState, space: string): Command[] {
  const sp = state.spaces[space];
  if (!sp?.contributed) return [];
  const out: Command[] = [];
  for (const a of Object.values(state.agents)) {
    if (a.space !== space || a.running || a.state === 'ended' || a.queue.length === 0) continue;
    const c = state.commands[a.queue[0]];
    if (c) out.push(c);
  }
  return out.sort((x, y) => x.position - y.position);
}

/** May `uid` send commands to this agent? (Role is checked by the server; this is the Space rule.) */
export function mayCommand(state: WorkState, agentId: string, uid: string): string | null {
  const a = state.agents[agentId];
  if (!a) return 'no such agent';
  const sp = state.spaces[a.space];
  if (!sp?.contributed) return 'its Space is not contributed to this project (revoked)';
  if (a.state === 'ended') return 'the agent has ended';
  if (!a.callable && sp.owner.uid !== uid) return `${a.label} is trusted local: read-only to teammates unless ${sp.owner.name} makes it callable`;
  return null;
}

/** The space registry (stream `work:spaces`): who owns which Space. */
export interface SpaceRecord {
  id: string;
  name: string;
  owner: Who;
  at: number;
}

export function applySpaceRegistry(reg: Record<string, SpaceRecord>, event: unknown): Record<string, SpaceRecord> {
  if (!isRec(event) || event.type !== 'space.registered') return reg;
  const sid = id(event.id);
  const name = str(event.name, WORK_LIMITS.name);
  const owner = who(event.by);
  if (!sid || name === null || !owner || reg[sid]) return reg;
  return { ...reg, [sid]: { id: sid, name, owner, at: num(event.at) ?? 0 } };
}
