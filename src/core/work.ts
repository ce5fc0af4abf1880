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
//   bug in the fold throws, and the tests see it.
//
// Pure and shared with the web app: the fold imports nothing outside itself
// (this module and its parts). This module composes it from its parts, one
// job each, in src/core/work/:
//   model.ts          WORK_LIMITS, the state's shape and wire form, event types, ids, emptyWork
//   read.ts           readers for hostile fields (ids, text, who, an approval pointer)
//   draft.ts          one event being folded: every change, the aggregates touched, the undo of a preview
//   conversations.ts  rooms, messages, General Chat's links
//   spaces.ts         Spaces contributed and revoked
//   members.ts        the project's members and roles
//   agents.ts         agents observed, ended, made callable
//   commands.ts       commands queued and cancelled
//   executions.ts     executions started, blocked, resumed, output, finished
//   snapshots.ts      the state as JSON and back
//   views.ts          the commands due on a Space, its agents, who may command an agent
//   registry.ts       the space registry (stream `work:spaces`)
// Each part names its handlers in a table (`AGENT_STEPS`, ...); `applyWork`
// below dispatches on the event's type. Importers use this module only.

import { isRec, num, who, type Rec } from './work/read.js';
import type { WorkChange, WorkState } from './work/model.js';
import { draft, type Draft, type WorkStep } from './work/draft.js';
import { CONVERSATION_STEPS } from './work/conversations.js';
import { SPACE_STEPS } from './work/spaces.js';
import { MEMBER_STEPS } from './work/members.js';
import { AGENT_STEPS } from './work/agents.js';
import { COMMAND_STEPS } from './work/commands.js';
import { EXECUTION_STEPS } from './work/executions.js';
export { WORK_PROTOCOL_VERSION, WORK_LIMITS, type AgentOrigin, type AgentState, type CommandStatus, type ExecutionState, type Who, type Message, type Link, type Conversation, type Space, type MemberRole, type Member, type Agent, type Command, type PendingApproval, type Execution, type Result, type WorkState, type WorkJSON, type WorkFamily, type WorkChange, emptyWork, GENERAL, WORK_EVENT_TYPES, agentIdOf, agentChatOf } from './work/model.js';
export { workToJSON, workFromJSON } from './work/snapshots.js';
export { dueCommands, agentsOfSpace, mayCommand } from './work/views.js';
export { type SpaceRecord, applySpaceRegistry } from './work/registry.js';

// ------------------------------------------------------------ the fold

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

/**
 * Every event type's handler, composed from the parts' tables (one job each,
 * src/core/work/*). A Map: an event's `type` is the caller's, so a type such
 * as `constructor` or `__proto__` must find nothing rather than a prototype's
 * member. Composing checks that no two parts claim one type.
 */
const STEPS: ReadonlyMap<string, WorkStep> = compose([CONVERSATION_STEPS, SPACE_STEPS, MEMBER_STEPS, AGENT_STEPS, COMMAND_STEPS, EXECUTION_STEPS]);

function compose(tables: readonly Readonly<Record<string, WorkStep>>[]): Map<string, WorkStep> {
  const out = new Map<string, WorkStep>();
  for (const t of tables)
    for (const [type, f] of Object.entries(t)) {
      if (out.has(type)) throw new Error(`two handlers for ${type}`);
      out.set(type, f);
    }
  return out;
}

/** Folds one checked event (`type` is a string) into the draft; `at` and `by` are read once, here. */
function step(d: Draft, e: Rec): void {
  const f = STEPS.get(e.type as string);
  if (f) f(d, e, num(e.at) ?? 0, who(e.by));
}
