// Claude Code hook payloads → floor events. Pure: imports only src/core, no
// clock, no I/O. The server calls it with what it knows of the floor (`view`)
// and appends what it returns. The table in docs/integrations.md is this file
// in prose; keep them together.
//
// Who is who on the floor:
// - a session (`session_id`) is an agent, id `claude-code:<session_id>`,
//   source `claude-code`, team = the configured team or the project folder's name;
// - inside a subagent the payload carries `agent_id` and `agent_type` (same
//   `session_id`): that is a helper, id `<session agent>/<agent_id>`, role =
//   the agent type, parent = the session. Claude Code names the subagent on
//   every payload, so the mapping addresses the helper's desk directly; the
//   floor's subagent hints are for adapters that only know a type.
//
// Invariants: any input (missing fields, wrong types, huge strings, unknown
// event names) gives a valid, possibly empty, list of events; nothing throws.

import { digestInput } from '../core/approvals.js';
import type { FloorEvent, Status } from '../core/floor.js';

export const SOURCE = 'claude-code';

/** Activity prefix of a session that stopped while helpers still run (see Stop). */
export const BACKGROUND_WAIT = 'Waiting for background work';

/** What the mapping may know of the floor (supplied by the server; optional in tests). */
export interface FloorView {
  agent(id: string): { status: Status; activity: string; parent: string | null; leftAt: number | null } | undefined;
  /** Helpers whose parent is `id`, oldest first. */
  helpers(id: string): { id: string; role: string; status: Status; leftAt: number | null }[];
}

export interface MapContext {
  /** A configured team name (`roost hooks install --team`), else the project folder's name. */
  team?: string;
  view?: FloorView;
  /** Source label (the same mapping serves Codex's Claude-like hooks). */
  source?: string;
  /** Id prefix of the session agents (defaults to the source). */
  prefix?: string;
}

/** Who a payload is about, and the events it becomes. */
export interface Mapped {
  /** The hook event name as sent (clipped), or '' when there is none. */
  event: string;
  /** The desk the payload lands on (the helper's inside a subagent), '' when the payload names no session. */
  agent: string;
  agentName: string;
  /** The session agent (the parent inside a subagent). */
  session: string;
  team: string;
  tool: string;
  /** Readable digest of the tool input ('' without a tool). */
  input: string;
  events: FloorEvent[];
}

const ACTIVITY = 280;

// Strings are cut before any other work, so a megabyte field costs no more than a short one.
function s(v: unknown, cap = 512): string {
  if (typeof v !== 'string') return '';
  return (v.length > cap * 2 ? v.slice(0, cap * 2) : v).trim().slice(0, cap);
}

function line(v: string, cap = ACTIVITY): string {
  const t = (v.length > cap * 4 ? v.slice(0, cap * 4) : v).replace(/\s+/g, ' ').trim();
  return t.length > cap ? t.slice(0, cap - 1) + '…' : t;
}

/** Last path segment of a POSIX or Windows path. */
export function folderName(p: string): string {
  const parts = p.split(/[\\/]+/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : '';
}

/** Id-safe part of a session or subagent id; 48 chars keep `<source>:<session>/<subagent>` within the floor's 128. */
function idPart(v: string): string {
  return v.slice(0, 256).replace(/[^A-Za-z0-9._-]/g, '').slice(0, 48);
}

/** Floor id of the agent a Claude-like session id belongs to. */
export function sessionAgentId(sessionId: string, prefix = SOURCE): string {
  return `${prefix}:${idPart(sessionId) || 'unknown'}`;
}

export function helperAgentId(session: string, agentId: string): string {
  return `${session}/${idPart(agentId) || 'subagent'}`;
}

function busy(h: { status: Status; leftAt: number | null }): boolean {
  return h.leftAt === null && h.status !== 'done' && h.status !== 'offline' && h.status !== 'error';
}

/**
 * Maps one hook payload. `payload` is whatever arrived (unchecked).
 */
export function mapClaudeCode(payload: unknown, ctx: MapContext = {}): Mapped {
  const p: Record<string, unknown> = payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {};
  const source = ctx.source ?? SOURCE;
  const event = s(p.hook_event_name, 64);
  const sessionId = s(p.session_id, 128);
  const cwd = s(p.cwd, 4096);
  const team = line(ctx.team ?? '', 80) || folderName(cwd).slice(0, 80) || source;
  const out: Mapped = { event, agent: '', agentName: '', session: '', team, tool: '', input: '', events: [] };
  if (!sessionId) return out;

  const session = sessionAgentId(sessionId, ctx.prefix ?? source);
  const sessionName = line(`${folderName(cwd) || source} · ${idPart(sessionId).slice(0, 8)}`, 80);
  const subId = s(p.agent_id, 128);
  const subType = line(s(p.agent_type, 80), 40) || 'subagent';
  const inSub = subId !== '';
  const agent = inSub ? helperAgentId(session, subId) : session;
  const view = ctx.view;
  out.session = session;
  out.agent = agent;
  // Who asks, as the inbox names them: a helper says whose helper it is.
  out.agentName = inSub ? line(`${tidy(subType)}, helper of ${sessionName}`, 80) : sessionName;
  const tool = line(s(p.tool_name, 120), 80);
  out.tool = tool;
  out.input = tool ? digestInput(tool, p.tool_input) : '';

  // Identity fields go on every event: the floor creates the agent from any
  // first event (a hook may be installed mid-session, or SessionStart lost).
  const base = (target: 'self' | 'session'): FloorEvent => {
    if (target === 'session' || !inSub) {
      const known = view?.agent(session);
      const e: FloorEvent = { type: 'status', agent: { id: session, name: sessionName, source }, source };
      if (!known) e.team = team;
      return e;
    }
    return { type: 'status', agent: { id: agent, name: tidy(subType), role: subType, source }, source, parent: session, team };
  };
  const ev = (type: string, fields: Partial<FloorEvent>, target: 'self' | 'session' = 'self'): FloorEvent => ({ ...base(target), type, ...fields });
  const push = (...e: FloorEvent[]) => out.events.push(...e);
  const what = tool ? line(`${tool}${out.input ? ': ' + out.input : ''}`) : '';

  switch (event) {
    case 'SessionStart':
      push(ev('join', { status: 'idle', activity: line(`Session ${s(p.source, 40) || 'started'}${s(p.model, 80) ? ' · ' + s(p.model, 80) : ''}`) }, 'session'));
      break;
    case 'Setup':
      push(ev('status', { activity: 'Setting up' }, 'session'));
      break;
    case 'UserPromptSubmit':
      // On the helper's desk inside a subagent (Codex sends a subagent's task as its prompt).
      push(ev('status', { status: 'thinking', activity: line('Prompt: ' + s(p.prompt, 2000)) }));
      break;
    case 'UserPromptExpansion':
      push(ev('status', { status: 'thinking', activity: line(s(p.prompt, 2000) || '/' + s(p.command_name, 80)) }, 'session'));
      break;
    case 'PreToolUse':
      push(ev('tool', { tool: tool || 'tool', status: 'working', activity: what }));
      break;
    case 'PermissionRequest':
      push(ev('tool', { tool: tool || 'tool', status: 'waiting', activity: line('Needs permission: ' + what) }));
      break;
    case 'PermissionDenied':
      push(ev('status', { status: 'thinking', activity: line(`Denied: ${what}${s(p.reason, 200) ? ' (' + s(p.reason, 200) + ')' : ''}`) }));
      break;
    case 'PostToolUse':
      push(ev('status', { status: 'thinking', activity: line('Done: ' + what) }));
      break;
    case 'PostToolUseFailure':
      push(ev('status', { status: 'thinking', activity: line(`${p.is_interrupt === true ? 'Interrupted' : 'Failed'}: ${what}${s(p.error, 200) ? ' · ' + s(p.error, 200) : ''}`) }));
      break;
    case 'PostToolBatch':
      push(ev('status', { status: 'thinking' }));
      break;
    case 'Notification': {
      const kind = s(p.notification_type, 40);
      const msg = line(s(p.message, 1000) || s(p.title, 200));
      if (kind === 'permission_prompt') push(ev('status', { status: 'waiting', activity: msg || 'Needs your permission' }));
      else if (kind === 'idle_prompt') push(ev('status', { status: 'idle', activity: msg || 'Waiting for your input' }));
      else if (kind === 'elicitation_dialog') push(ev('status', { status: 'waiting', activity: msg || 'Waiting for your answer' }));
      else if (msg) push(ev('status', { activity: msg }));
      break;
    }
    case 'Elicitation':
      push(ev('status', { status: 'waiting', activity: line(`${s(p.mcp_server_name, 80) || 'MCP server'} asks: ${s(p.message, 500)}`) }));
      break;
    case 'ElicitationResult':
      push(ev('status', { status: 'thinking', activity: line(`Answered ${s(p.mcp_server_name, 80) || 'MCP server'} (${s(p.action, 20) || 'done'})`) }));
      break;
    case 'SubagentStart':
      if (inSub) push({ ...base('self'), type: 'join', status: 'working', activity: line(`Started (${subType})`) });
      break;
    case 'SubagentStop': {
      if (!inSub) break;
      push(ev('status', { status: 'done', activity: line(s(p.last_assistant_message, 2000) || 'Finished') }));
      // The session stopped earlier while this helper ran on: if it was the
      // last one still busy, the session is done now.
      const parent = view?.agent(session);
      if (parent && parent.activity.startsWith(BACKGROUND_WAIT)) {
        const others = (view?.helpers(session) ?? []).filter((h) => h.id !== agent && busy(h));
        if (others.length === 0) push(ev('status', { status: 'done', activity: 'Finished (background work done)' }, 'session'));
      }
      break;
    }
    case 'Stop': {
      if (inSub) {
        // Older versions send a Stop from inside a subagent: that helper is done.
        push(ev('status', { status: 'done', activity: line(s(p.last_assistant_message, 2000) || 'Finished') }));
        break;
      }
      // A turn ended. Helpers still running (background subagents) mean the
      // session is not done yet: it stays working until the last one stops.
      const helpersBusy = (view?.helpers(session) ?? []).filter(busy).length;
      const tasks = Array.isArray(p.background_tasks) ? p.background_tasks : [];
      const agentTasks = tasks.filter((t) => t && typeof t === 'object' && /agent/i.test(s((t as Record<string, unknown>).type, 40)) && s((t as Record<string, unknown>).status, 20) !== 'completed').length;
      const waiting = Math.max(helpersBusy, agentTasks);
      if (waiting > 0) push(ev('status', { status: 'working', activity: `${BACKGROUND_WAIT}: ${waiting} helper${waiting === 1 ? '' : 's'} still running` }, 'session'));
      else push(ev('status', { status: 'done', activity: line(s(p.last_assistant_message, 2000) || 'Turn finished') }, 'session'));
      break;
    }
    case 'StopFailure':
      push(ev('status', { status: 'error', activity: line(`${s(p.error, 80) || 'error'}: ${s(p.error_details, 500) || s(p.last_assistant_message, 500)}`) }, 'session'));
      break;
    case 'Interrupt':
      // Codex: the person stopped the turn; the session waits for them.
      push(ev('status', { status: 'idle', activity: 'Interrupted' }, 'session'));
      break;
    case 'PreCompact':
      push(ev('status', { status: 'thinking', activity: 'Compacting the conversation' }, 'session'));
      break;
    case 'PostCompact':
      push(ev('status', { activity: 'Conversation compacted' }, 'session'));
      break;
    case 'TaskCreated':
    case 'TaskCompleted': {
      const subject = line(s(p.task_subject, 1000), 1000);
      if (subject) push(ev('task', { task: event === 'TaskCompleted' ? `Done: ${subject}` : subject }, 'session'));
      break;
    }
    case 'TeammateIdle': {
      const mate = line(s(p.teammate_name, 80), 80);
      if (mate) push({ type: 'status', agent: { id: helperAgentId(session, 'mate-' + mate), name: mate, role: 'teammate', source }, source, parent: session, team, status: 'idle', activity: 'Idle' });
      break;
    }
    case 'WorktreeCreate':
      push(ev('status', { activity: line('Created worktree ' + s(p.name, 200)) }, 'session'));
      break;
    case 'SessionEnd': {
      const reason = s(p.reason, 40);
      for (const h of view?.helpers(session) ?? []) {
        if (h.leftAt === null) push({ type: 'leave', agent: h.id, status: 'offline' });
      }
      push(ev('leave', { status: 'offline', activity: line(`Session ended${reason && reason !== 'other' ? ' (' + reason + ')' : ''}`) }, 'session'));
      break;
    }
    // Not shown on the floor (no change a person watching would notice):
    // ConfigChange, CwdChanged, DirectoryAdded, FileChanged, InstructionsLoaded,
    // WorktreeRemove. MessageDisplay carries streaming text, which is ephemeral
    // (DESIGN rule 6) and never stored. Unknown names fold to nothing.
    default:
      break;
  }
  return out;
}

function tidy(type: string): string {
  const t = type.replace(/[-_.:/]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim();
  return (t ? t[0].toUpperCase() + t.slice(1) : 'Subagent').slice(0, 80);
}

// ---------------------------------------------------------------- approvals on the floor

/** The floor event shown while a tool call waits for a person. */
export function waitingEvent(m: Mapped): FloorEvent {
  return { type: 'tool', agent: m.agent, tool: m.tool || 'tool', status: 'waiting', activity: line(`Waiting for approval: ${m.tool}${m.input ? ': ' + m.input : ''}`) };
}

/**
 * The floor event when the agent stopped waiting before any decision (it was
 * interrupted or killed, or its hook went away): no longer waiting, and the
 * card says why. Idle, not thinking: nothing is running on its behalf.
 */
export function withdrawnEvent(m: Mapped): FloorEvent {
  return { type: 'status', agent: m.agent, status: 'idle', activity: line(`Stopped waiting for approval: ${m.tool || 'tool'} (request withdrawn)`) };
}

/** The floor event once the decision is known. */
export function outcomeEvent(m: Mapped, allowed: boolean, why: string): FloorEvent {
  return allowed
    ? { type: 'tool', agent: m.agent, tool: m.tool || 'tool', status: 'working', activity: line(`${m.tool}${m.input ? ': ' + m.input : ''}`) }
    : { type: 'status', agent: m.agent, status: 'thinking', activity: line(`Denied: ${m.tool} (${why})`) };
}

// ---------------------------------------------------------------- hook answers

/**
 * Claude Code's PreToolUse answer. The reason reaches the model on a deny
 * (on an allow only the person at the terminal sees it); a person's note on
 * an allow reaches the model as `additionalContext` (2.1.197 accepts it on
 * PreToolUse and adds it to the model's context before the tool runs).
 */
export function preToolUseAnswer(decision: 'allow' | 'deny', reason: string, note = ''): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason, ...(decision === 'allow' && note ? { additionalContext: note } : {}) } };
}

/** The hook events `roost hooks install` registers, and how (see docs/integrations.md). */
export const OBSERVED_EVENTS = [
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'PermissionDenied',
  'Notification',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'StopFailure',
  'PreCompact',
  'SessionEnd',
] as const;
/** Events Claude Code only delivers to command hooks (found on 2.1.197: an http SessionStart hook never fires). */
export const COMMAND_ONLY_EVENTS = ['SessionStart'] as const;
