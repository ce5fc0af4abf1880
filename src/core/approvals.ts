// The approvals fold: requests for a person's yes or no, and their outcomes.
//
// Pure and shared (server and browser fold the same events): no imports, no
// clock, no I/O. Time arrives on the event (`ts`) or as the `now` of a query.
//
// Events (the `approvals` stream of the log):
//   approval.requested { id, agent, tool, input, source, app, window, ts, ... }
//   approval.decided   { id, decision: 'allow'|'deny', by, ts, reason? }
//   approval.expired   { id, ts }          the window passed with no decision
//   approval.withdrawn { id, ts, reason? } the agent stopped waiting (its hook went away)
//
// Invariants (DESIGN rule 7, "approvals fail safe"):
// - the first outcome wins: a decided, expired or withdrawn approval never
//   changes again; later outcomes for it fold to a no-op;
// - an outcome for an id that was never requested is a no-op;
// - a second request with an id already known is a no-op (ids are unique);
// - hostile input (wrong types, huge strings) is clamped or ignored; nothing
//   here throws.
//
// The state keeps every pending approval and the most recent closed ones
// (`KEEP_CLOSED`); the log keeps them all (the audit trail).

export const APPROVALS_PROTOCOL_VERSION = 1;

export const APPROVAL_EVENT_TYPES = ['approval.requested', 'approval.decided', 'approval.expired', 'approval.withdrawn'] as const;
export type ApprovalEventType = (typeof APPROVAL_EVENT_TYPES)[number];

export type Decision = 'allow' | 'deny';
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'withdrawn';

export const APPROVAL_LIMITS = {
  id: 128,
  agent: 128,
  name: 80,
  team: 80,
  source: 40,
  app: 40,
  tool: 120,
  input: 2000,
  by: 120,
  reason: 500,
  session: 128,
  /** Windows are clamped to [1 s, 24 h]. */
  minWindow: 1_000,
  maxWindow: 24 * 60 * 60 * 1000,
} as const;

/** Default window before an unanswered approval counts as denied. */
export const DEFAULT_WINDOW_MS = 10 * 60 * 1000;
/** Closed approvals kept in the folded state (newest first); the log keeps all. */
export const KEEP_CLOSED = 100;

export interface Approval {
  id: string;
  /** The floor agent the request is about (a helper's id inside a subagent). */
  agent: string;
  /** Display name of that agent, when the sender knows it. */
  agentName: string;
  team: string;
  /** Which integration sent it: `claude-code`, `codex`, `cursor`, `gemini-cli`, ... */
  source: string;
  /** Which app it belongs to: `floor` (hooks), `sessions` (the fleet board), ... */
  app: string;
  /** Session the agent runs in, when known (lets a board group them). */
  session: string;
  tool: string;
  /** A readable digest of the tool input (one or a few lines), never the raw input. */
  input: string;
  window: number;
  requestedAt: number;
  deadline: number;
  status: ApprovalStatus;
  decidedBy: string;
  decidedAt: number | null;
  reason: string;
  /** Log position of the event that closed it (lets a decider learn whether it won). */
  closedAt: number | null;
}

export interface ApprovalsState {
  byId: Map<string, Approval>;
  /** Ids of closed approvals, oldest first, at most KEEP_CLOSED. */
  closed: string[];
  /** Ids of every request ever folded that is no longer in `byId` (so an old id stays unique). */
  forgotten: Set<string>;
  rev: number;
}

export type ApprovalEffect =
  | { kind: 'requested'; id: string }
  | { kind: 'closed'; id: string; status: Exclude<ApprovalStatus, 'pending'> };

export function emptyApprovals(): ApprovalsState {
  return { byId: new Map(), closed: [], forgotten: new Set(), rev: 0 };
}

function str(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (!t) return undefined;
  return t.length > cap ? t.slice(0, cap - 1) + '…' : t;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function clampWindow(v: unknown): number {
  const n = num(v) ?? DEFAULT_WINDOW_MS;
  return Math.min(APPROVAL_LIMITS.maxWindow, Math.max(APPROVAL_LIMITS.minWindow, Math.round(n)));
}

function close(s: ApprovalsState, a: Approval, status: Exclude<ApprovalStatus, 'pending'>, ts: number, position: number | null): ApprovalEffect[] {
  a.status = status;
  a.decidedAt = ts;
  a.closedAt = position;
  s.closed.push(a.id);
  while (s.closed.length > KEEP_CLOSED) {
    const old = s.closed.shift()!;
    s.byId.delete(old);
    s.forgotten.add(old);
  }
  s.rev++;
  return [{ kind: 'closed', id: a.id, status }];
}

/**
 * Folds one event into `s` (in place). `position` is the event's log position
 * when known (recorded on the approval it closes). Returns what changed.
 */
export function applyApproval(s: ApprovalsState, e: unknown, position: number | null = null): ApprovalEffect[] {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return [];
  const o = e as Record<string, unknown>;
  const id = str(o.id, APPROVAL_LIMITS.id);
  if (!id) return [];
  const ts = num(o.ts) ?? 0;
  switch (o.type) {
    case 'approval.requested': {
      if (s.byId.has(id) || s.forgotten.has(id)) return [];
      const agent = str(o.agent, APPROVAL_LIMITS.agent);
      const tool = str(o.tool, APPROVAL_LIMITS.tool);
      if (!agent || !tool) return [];
      const window = clampWindow(o.window);
      const a: Approval = {
        id,
        agent,
        agentName: str(o.agentName, APPROVAL_LIMITS.name) ?? agent,
        team: str(o.team, APPROVAL_LIMITS.team) ?? '',
        source: str(o.source, APPROVAL_LIMITS.source) ?? '',
        app: str(o.app, APPROVAL_LIMITS.app) ?? 'floor',
        session: str(o.session, APPROVAL_LIMITS.session) ?? '',
        tool,
        input: typeof o.input === 'string' ? (o.input.length > APPROVAL_LIMITS.input ? o.input.slice(0, APPROVAL_LIMITS.input - 1) + '…' : o.input) : '',
        window,
        requestedAt: ts,
        deadline: ts + window,
        status: 'pending',
        decidedBy: '',
        decidedAt: null,
        reason: '',
        closedAt: null,
      };
      s.byId.set(id, a);
      s.rev++;
      return [{ kind: 'requested', id }];
    }
    case 'approval.decided': {
      const a = s.byId.get(id);
      if (!a || a.status !== 'pending') return [];
      if (o.decision !== 'allow' && o.decision !== 'deny') return [];
      a.decidedBy = str(o.by, APPROVAL_LIMITS.by) ?? 'unknown';
      a.reason = str(o.reason, APPROVAL_LIMITS.reason) ?? '';
      return close(s, a, o.decision === 'allow' ? 'allowed' : 'denied', ts, position);
    }
    case 'approval.expired': {
      const a = s.byId.get(id);
      if (!a || a.status !== 'pending') return [];
      return close(s, a, 'expired', ts, position);
    }
    case 'approval.withdrawn': {
      const a = s.byId.get(id);
      if (!a || a.status !== 'pending') return [];
      a.reason = str(o.reason, APPROVAL_LIMITS.reason) ?? '';
      return close(s, a, 'withdrawn', ts, position);
    }
    default:
      return [];
  }
}

/** Pending approvals, oldest first. */
export function pendingApprovals(s: ApprovalsState): Approval[] {
  const out: Approval[] = [];
  for (const a of s.byId.values()) if (a.status === 'pending') out.push(a);
  return out.sort((x, y) => x.requestedAt - y.requestedAt || (x.id < y.id ? -1 : 1));
}

/** Closed approvals, newest first, at most `n`. */
export function recentApprovals(s: ApprovalsState, n = KEEP_CLOSED): Approval[] {
  const out: Approval[] = [];
  for (let i = s.closed.length - 1; i >= 0 && out.length < n; i--) {
    const a = s.byId.get(s.closed[i]);
    if (a) out.push(a);
  }
  return out;
}

/** Ids of pending approvals whose window has passed at `now`. */
export function dueToExpire(s: ApprovalsState, now: number): string[] {
  const out: string[] = [];
  for (const a of s.byId.values()) if (a.status === 'pending' && now >= a.deadline) out.push(a.id);
  return out;
}

/** The earliest deadline of a pending approval, or null. */
export function nextDeadline(s: ApprovalsState): number | null {
  let next: number | null = null;
  for (const a of s.byId.values()) if (a.status === 'pending' && (next === null || a.deadline < next)) next = a.deadline;
  return next;
}

/** Pending approvals of one agent (for its card on the floor). */
export function pendingFor(s: ApprovalsState, agent: string): Approval[] {
  return pendingApprovals(s).filter((a) => a.agent === agent);
}

// ---------------------------------------------------------------- wire form

export interface ApprovalsJSON {
  approvals: Approval[];
  closed: string[];
  forgotten: string[];
  rev: number;
}

export function approvalsToJSON(s: ApprovalsState): ApprovalsJSON {
  return { approvals: [...s.byId.values()], closed: [...s.closed], forgotten: [...s.forgotten], rev: s.rev };
}

export function approvalsFromJSON(j: ApprovalsJSON): ApprovalsState {
  const s = emptyApprovals();
  for (const a of j.approvals ?? []) s.byId.set(a.id, { ...a });
  s.closed = [...(j.closed ?? [])];
  for (const id of j.forgotten ?? []) s.forgotten.add(id);
  s.rev = j.rev ?? 0;
  return s;
}

// ---------------------------------------------------------------- digests

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function clip(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/**
 * A short, readable account of a tool call's input: what a person needs to
 * decide (the command, the file, the pattern), never the whole payload.
 * Known tools get their key fields; anything else a compact `key: value` list.
 */
export function digestInput(tool: string, input: unknown, max = 400): string {
  if (input === null || input === undefined) return '';
  if (typeof input !== 'object' || Array.isArray(input)) return clip(oneLine(safeJson(input).slice(0, max * 2)), max);
  const o = input as Record<string, unknown>;
  // Fields are cut before any other work: a megabyte of input costs what a line does.
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k] as string).slice(0, max * 2) : undefined);
  let out: string | undefined;
  switch (tool) {
    case 'Bash':
    case 'shell':
    case 'run_shell_command':
      out = s('command') !== undefined ? '$ ' + s('command') : undefined;
      break;
    case 'Write':
    case 'write_file': {
      const path = s('file_path') ?? s('path');
      const content = s('content');
      out = path !== undefined ? `write ${path}${content !== undefined ? ` (${content.length} chars)` : ''}` : undefined;
      break;
    }
    case 'Edit':
    case 'MultiEdit':
    case 'replace': {
      const path = s('file_path') ?? s('path');
      const old = s('old_string');
      out = path !== undefined ? `edit ${path}${old !== undefined ? `: "${clip(oneLine(old), 80)}"` : ''}` : undefined;
      break;
    }
    case 'Read':
    case 'read_file':
      out = s('file_path') ?? s('path') ? 'read ' + (s('file_path') ?? s('path')) : undefined;
      break;
    case 'Glob':
    case 'Grep':
      out = s('pattern') !== undefined ? `${tool.toLowerCase()} ${s('pattern')}${s('path') ? ' in ' + s('path') : ''}` : undefined;
      break;
    case 'WebFetch':
      out = s('url');
      break;
    case 'WebSearch':
      out = s('query') !== undefined ? 'search ' + s('query') : undefined;
      break;
    case 'Agent':
    case 'Task':
      out = s('description') ?? s('prompt');
      if (out !== undefined && s('subagent_type')) out = `${s('subagent_type')}: ${out}`;
      break;
    case 'spawn_agent': // Codex
      out = s('message');
      break;
    case 'invoke_agent': // Gemini CLI
      out = s('prompt');
      if (out !== undefined && s('agent_name')) out = `${s('agent_name')}: ${out}`;
      break;
  }
  if (out === undefined) {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(o)) {
      if (parts.join(', ').length > max) break;
      parts.push(`${k.slice(0, 80)}: ${typeof v === 'string' ? v.slice(0, max * 2) : safeJson(v).slice(0, max * 2)}`);
    }
    out = parts.join(', ');
  }
  return clip(oneLine(out), max);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

// ---------------------------------------------------------------- rules

// Which tools need approval: a caller's rule, matched in linear time with a
// restricted syntax (see approval-rules.ts). Re-exported here, where the hook
// script and older callers look for it.
export { needsApproval } from './approval-rules.js';
