// Work's caps (WORK_LIMITS), the state's shape (conversations, Spaces,
// agents, commands, executions, results, members), its wire form, the event
// types, the ids the fold derives, and the empty state: what every other part
// of the fold (src/core/work/*) reads. Imports nothing.

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
