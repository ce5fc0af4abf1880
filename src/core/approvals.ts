// The approvals fold: requests for a person's yes or no, and their outcomes.
// One model for every kind of decision Roost asks for (docs/approvals.md):
//
//   kind     asker (who waits)              scope (where it lives)        decided by
//   tool     a floor agent (an agent hook)  {session}                     allow / deny
//   fleet    a fleet board session          {thread, session, rid}        allow / deny
//   verdict  a crow or the flock            {list, item, target}          allow / deny
//   ask      a service role (ask_owner)     {nest, msg}                   allow only with the exact phrase; deny
//
// Pure and shared (server and browser fold the same events): imports only
// src/core (window.ts, approval-rules.ts), no clock, no I/O. Time arrives on the event (`ts`) or as the `now` of a query.
//
// Events (one `approvals` stream per project):
//   approval.requested { id, kind, asker, askerName?, scope?, team?, source?, tool, input?, detail?, phrase?, holder?, askedBy?, window, ts }
//   approval.decided   { id, decision: 'allow'|'deny', by, ts, reason?, phrase?, remember?: 'session', rule?: ruleKey, principal? }
//   approval.rules.ended { asker, session, ts }   the session ended: its "allow for this session" rules end with it
//   approval.expired   { id, ts }          the window passed with no decision
//   approval.withdrawn { id, ts, reason? } the asker stopped waiting (its hook or bridge went away,
//                                          its session ended, or its hook denied on its own)
// Events stored before kinds existed (`agent`, `agentName`, `app`, `session`)
// fold as kind `tool` (`app: sessions` as `fleet`), asker = agent.
//
// Invariants (DESIGN rule 7, "approvals fail safe"):
// - the first outcome wins: a decided, expired or withdrawn approval never
//   changes again; later outcomes for it fold to a no-op;
// - an outcome for an id that was never requested is a no-op;
// - a second request with an id already known is a no-op (ids are unique);
// - an `ask` is allowed only by a decision carrying its exact phrase (trimmed,
//   lower case); any other allow folds to a no-op (a deny needs no phrase);
// - a request that names the principal who asked it (`askedBy`, set by the
//   server) is never decided by that principal: a decision carrying the same
//   `principal` folds to a no-op (the server refuses it first with a 403);
// - hostile input (wrong types, huge strings, unknown kinds or scope keys) is
//   clamped, dropped or ignored; nothing here throws.
//
// The state keeps every pending approval and the most recent closed ones
// (`KEEP_CLOSED`); the log keeps them all (the audit trail).

import { formatWindow } from './window.js';
import { trimOldest } from './bounded.js';
import { CLASS_MAX } from './action-class.js';
import { agentTrustFromJSON, agentTrustToJSON, applyAgentTrust, emptyAgentTrust, judgeAgent, trustedFor, type AgentRef, type AgentTrustState } from './agent-trust.js';

/** History: 1 — hook approvals; 2 — one model: kind, asker, scope, phrase, holder (old events fold as kind tool). */
export const APPROVALS_PROTOCOL_VERSION = 2;

export const APPROVAL_EVENT_TYPES = ['approval.requested', 'approval.decided', 'approval.expired', 'approval.withdrawn', 'approval.rules.ended'] as const;
export type ApprovalEventType = (typeof APPROVAL_EVENT_TYPES)[number];

export const APPROVAL_KINDS = ['tool', 'fleet', 'verdict', 'ask'] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** The keys a scope may carry (each a short id); any other key is dropped. */
export const SCOPE_KEYS = ['session', 'thread', 'rid', 'list', 'item', 'target', 'nest', 'msg'] as const;
export type ScopeKey = (typeof SCOPE_KEYS)[number];
export type ApprovalScope = Partial<Record<ScopeKey, string>>;

export type Decision = 'allow' | 'deny';
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'withdrawn';

export const APPROVAL_LIMITS = {
  id: 128,
  asker: 128,
  name: 80,
  team: 80,
  source: 40,
  tool: 120,
  input: 2000,
  phrase: 200,
  holder: 128,
  /** `askedBy` and a decision's `principal`: `token:<id>` or `person:<uid>`. */
  principal: 160,
  scopeValue: 128,
  by: 120,
  reason: 500,
  /** Windows are clamped to [1 s, 24 h]. */
  minWindow: 1_000,
  maxWindow: 24 * 60 * 60 * 1000,
} as const;

/** What a request's `detail` may hold (each text field; the edits of one request). */
export const DETAIL_LIMITS = {
  text: 20_000,
  command: 8_000,
  path: 1_000,
  cwd: 1_000,
  description: 500,
  edits: 20,
} as const;

/** Sessions whose "allow for this session" rules are kept, and rules per session (the oldest go first). */
export const RULE_LIMITS = { sessions: 1_000, perSession: 50 } as const;

/**
 * What a tool call would do, for the person deciding (the inbox shows it):
 * the command and its directory, a file's new content, or the edits of a
 * file (shown as a diff). Every text is capped; `truncated` says a cap cut it.
 */
export type ApprovalDetail =
  | { kind: 'command'; command: string; cwd: string; description: string; truncated: boolean }
  | { kind: 'write'; path: string; content: string; truncated: boolean }
  | { kind: 'edit'; path: string; edits: { old: string; new: string; all: boolean }[]; truncated: boolean };

/** Default window before an unanswered approval counts as denied. */
export const DEFAULT_WINDOW_MS = 10 * 60 * 1000;
/** Closed approvals kept in the folded state (newest first); the log keeps all. */
export const KEEP_CLOSED = 100;
/**
 * Ids of closed approvals no longer kept that the state still remembers (so a
 * second request naming one is refused), oldest let go first: without a
 * bound the set grew by one id for every approval a server ever closed, and
 * every stored snapshot carried all of it. Server-minted ids are 80 random
 * bits; an id a caller named is also held by the store's idempotency key
 * forever (src/server/approvals.ts), so letting the oldest go reopens nothing.
 */
export const REMEMBER_FORGOTTEN = 10_000;

export interface Approval {
  id: string;
  kind: ApprovalKind;
  /** Who waits for the answer: a floor agent's id (tool), a board session's id (fleet), a crow (verdict), a service role (ask). */
  asker: string;
  /** Its display name. */
  askerName: string;
  /** Where the request lives (kind-specific ids: see the table above); `{}` when nothing more is known. */
  scope: ApprovalScope;
  /** The floor team of a tool request's agent, when known. */
  team: string;
  /** Which integration sent it: `claude-code`, `codex`, `cursor`, `gemini-cli`, `bridge`, `flock`, `nest`, ... */
  source: string;
  /** What is asked: a tool's name (tool, fleet), `triage`/`output` (verdict), `ask_owner` (ask). */
  tool: string;
  /** A readable digest of what is asked (one or a few lines), never the raw input. */
  input: string;
  /** What the call would do, in full up to DETAIL_LIMITS (command and directory, content, edits), or null. */
  detail: ApprovalDetail | null;
  /** `ask` only: the exact words (trimmed, lower case) that approve it; '' otherwise. */
  phrase: string;
  /**
   * What keeps the asker's wait alive, so a request whose asker went away can
   * be withdrawn (docs/approvals.md): `node:<id>` (a server node holding a
   * hook's connection), `bridge:<id>` (a bridge following its board); '' when
   * nothing holds it (the window alone closes it).
   */
  holder: string;
  /**
   * The principal that asked, as the server names it (`token:<id>`,
   * `person:<uid>`), when the request came from a caller of its own (`POST
   * /ask` in shared mode); '' otherwise. That principal cannot decide it.
   */
  askedBy: string;
  window: number;
  requestedAt: number;
  deadline: number;
  status: ApprovalStatus;
  decidedBy: string;
  decidedAt: number | null;
  reason: string;
  /** The "allow for this session" rule this decision made (`remember`), or the rule that allowed it at once; '' otherwise. */
  rule: string;
  /** Log position of the event that closed it (lets a decider learn whether it won). */
  closedAt: number | null;
  /** A tool call's action class (src/core/action-class.ts): what earned trust is judged by; '' or absent when none. */
  actionClass?: string;
  /** Why this call may never be allowed by trust ('' when it may). */
  barred?: string;
  /** Allowed by trust (decidedBy `trust`): the holder's level and the decisions that earned it. */
  trust?: { level: number; because: AgentRef[] };
}

export interface ApprovalsState {
  byId: Map<string, Approval>;
  /** Ids of closed approvals, oldest first, at most KEEP_CLOSED. */
  closed: string[];
  /** Ids of requests folded that are no longer in `byId`, oldest first, at most REMEMBER_FORGOTTEN (so a recent id stays unique). */
  forgotten: Set<string>;
  /**
   * "Allow for this session" rules, by `sessionKey(asker, session)`: rule key →
   * who allowed it and from which request. They end with the session
   * (`approval.rules.ended`); the oldest sessions go past RULE_LIMITS.
   */
  sessionRules: Map<string, Map<string, { by: string; from: string; at: number }>>;
  /** Earned trust for the project's coding agents (src/core/agent-trust.ts): the one ledger's teams per action class. */
  agentTrust: AgentTrustState;
  rev: number;
}

export type ApprovalEffect =
  | { kind: 'requested'; id: string }
  | { kind: 'closed'; id: string; status: Exclude<ApprovalStatus, 'pending'> };

export function emptyApprovals(): ApprovalsState {
  return { byId: new Map(), closed: [], forgotten: new Set(), sessionRules: new Map(), agentTrust: emptyAgentTrust(), rev: 0 };
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

function isKind(v: unknown): v is ApprovalKind {
  return typeof v === 'string' && (APPROVAL_KINDS as readonly string[]).includes(v);
}

export function clampWindow(v: unknown): number {
  const n = num(v) ?? DEFAULT_WINDOW_MS;
  return Math.min(APPROVAL_LIMITS.maxWindow, Math.max(APPROVAL_LIMITS.minWindow, Math.round(n)));
}

/** How a phrase is compared: trimmed, inner runs of space as one, lower case (the nest contract's rule). */
export function normalizePhrase(v: unknown): string {
  if (typeof v !== 'string') return '';
  return v.replace(/\s+/g, ' ').trim().toLowerCase().slice(0, APPROVAL_LIMITS.phrase);
}

/** The known keys of a scope, each a clamped string; anything else is dropped. */
function scopeOf(v: unknown): ApprovalScope {
  const out: ApprovalScope = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  const o = v as Record<string, unknown>;
  for (const k of SCOPE_KEYS) {
    // Own properties only: a scope never reads through a prototype.
    if (!Object.prototype.hasOwnProperty.call(o, k)) continue;
    const s = str(o[k], APPROVAL_LIMITS.scopeValue);
    if (s !== undefined) out[k] = s;
  }
  return out;
}

/** The kind of a request; events from before kinds existed say `app` instead. */
function kindOf(o: Record<string, unknown>): ApprovalKind | undefined {
  if (o.kind !== undefined) return isKind(o.kind) ? o.kind : undefined;
  return o.app === 'sessions' ? 'fleet' : 'tool';
}

/** Adds a forgotten id; past REMEMBER_FORGOTTEN the oldest is let go. */
function remember(forgotten: Set<string>, id: string): void {
  forgotten.add(id);
  trimOldest(forgotten, REMEMBER_FORGOTTEN);
}

function close(s: ApprovalsState, a: Approval, status: Exclude<ApprovalStatus, 'pending'>, ts: number, position: number | null): ApprovalEffect[] {
  a.status = status;
  a.decidedAt = ts;
  a.closedAt = position;
  judgeClosed(s, a, ts, position);
  s.closed.push(a.id);
  while (s.closed.length > KEEP_CLOSED) {
    const old = s.closed.shift()!;
    s.byId.delete(old);
    remember(s.forgotten, old);
  }
  s.rev++;
  return [{ kind: 'closed', id: a.id, status }];
}

/**
 * The one trust ledger judges a tool call's outcome (docs/approvals.md
 * "Earned trust"): a person's allow is an approval, a deny a rejection, an
 * expiry a timeout; an allow by a session rule or by trust is `auto`; a
 * withdrawal (the agent went away) is nobody's decision.
 */
function judgeClosed(s: ApprovalsState, a: Approval, ts: number, position: number | null): void {
  if (!trustable(a) || !a.actionClass || !a.team || status(a) === null) return;
  const ref: AgentRef = { verdict: status(a)!, approval: a.id, ...(a.status === 'allowed' || a.status === 'denied' ? { by: a.decidedBy } : {}) };
  judgeAgent(s.agentTrust, a.team, a.actionClass, ref, ts, position);
}

/** The calls earned trust judges and may allow: a coding agent's (its hook) and a board session's (its bridge). */
function trustable(a: Approval): boolean {
  return a.kind === 'tool' || a.kind === 'fleet';
}

function status(a: Approval): AgentRef['verdict'] | null {
  switch (a.status) {
    case 'allowed':
      return a.trust || a.rule ? 'auto' : 'approved';
    case 'denied':
      return 'rejected';
    case 'expired':
      return 'timeout';
    default:
      return null;
  }
}

/** Builds a pending approval from a request event, or null when it is not acceptable. */
function requestOf(id: string, o: Record<string, unknown>, ts: number): Approval | null {
  const kind = kindOf(o);
  if (!kind) return null;
  const asker = str(o.asker, APPROVAL_LIMITS.asker) ?? str(o.agent, APPROVAL_LIMITS.asker);
  const tool = str(o.tool, APPROVAL_LIMITS.tool);
  if (!asker || !tool) return null;
  const scope = scopeOf(o.scope);
  // Before scopes, a tool request named its session beside the agent.
  if (o.scope === undefined && kind === 'tool') {
    const session = str(o.session, APPROVAL_LIMITS.scopeValue);
    if (session) scope.session = session;
  }
  const phrase = kind === 'ask' ? normalizePhrase(o.phrase) : '';
  // An ask with no phrase could never be approved; it is refused rather than left to expire.
  if (kind === 'ask' && !phrase) return null;
  const window = clampWindow(o.window);
  return {
    id,
    kind,
    asker,
    askerName: str(o.askerName, APPROVAL_LIMITS.name) ?? str(o.agentName, APPROVAL_LIMITS.name) ?? asker,
    scope,
    team: str(o.team, APPROVAL_LIMITS.team) ?? '',
    source: str(o.source, APPROVAL_LIMITS.source) ?? '',
    tool,
    input: typeof o.input === 'string' ? (o.input.length > APPROVAL_LIMITS.input ? o.input.slice(0, APPROVAL_LIMITS.input - 1) + '…' : o.input) : '',
    detail: kind === 'tool' || kind === 'fleet' ? clampDetail(o.detail) : null,
    phrase,
    holder: str(o.holder, APPROVAL_LIMITS.holder) ?? '',
    askedBy: str(o.askedBy, APPROVAL_LIMITS.principal) ?? '',
    window,
    requestedAt: ts,
    deadline: ts + window,
    status: 'pending',
    decidedBy: '',
    decidedAt: null,
    reason: '',
    rule: '',
    closedAt: null,
    ...((kind === 'tool' || kind === 'fleet') && typeof o.action_class === 'string' && o.action_class
      ? { actionClass: o.action_class.slice(0, CLASS_MAX), barred: str(o.barred, APPROVAL_LIMITS.reason) ?? '' }
      : {}),
  };
}

/**
 * Folds one event into `s` (in place). `position` is the event's log position
 * when known (recorded on the approval it closes). Returns what changed.
 */
export function applyApproval(s: ApprovalsState, e: unknown, position: number | null = null): ApprovalEffect[] {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return [];
  const o = e as Record<string, unknown>;
  if (o.type === 'trust.enabled' || o.type === 'trust.never' || o.type === 'trust.changed') {
    if (applyAgentTrust(s.agentTrust, o, num(o.ts) ?? 0, position)) s.rev++;
    return [];
  }
  if (o.type === 'approval.rules.ended') {
    const asker = str(o.asker, APPROVAL_LIMITS.asker);
    const session = str(o.session, APPROVAL_LIMITS.scopeValue);
    if (asker && session && s.sessionRules.delete(sessionKey(asker, session))) s.rev++;
    return [];
  }
  const id = str(o.id, APPROVAL_LIMITS.id);
  if (!id) return [];
  const ts = num(o.ts) ?? 0;
  switch (o.type) {
    case 'approval.requested': {
      if (s.byId.has(id) || s.forgotten.has(id)) return [];
      const a = requestOf(id, o, ts);
      if (!a) return [];
      s.byId.set(id, a);
      s.rev++;
      return [{ kind: 'requested', id }];
    }
    case 'approval.decided': {
      const a = s.byId.get(id);
      if (!a || a.status !== 'pending') return [];
      if (o.decision !== 'allow' && o.decision !== 'deny') return [];
      // An ask is a yes only with its exact words; anything else is not a yes (and not a no either).
      if (a.kind === 'ask' && o.decision === 'allow' && normalizePhrase(o.phrase) !== a.phrase) return [];
      // Whoever asked never answers: not a yes, not a no.
      if (a.askedBy && str(o.principal, APPROVAL_LIMITS.principal) === a.askedBy) return [];
      // Allowed by trust: only a call the ledger trusts now, of a class no owner barred (the fold checks; the server asks it first).
      if (o.trust !== undefined) {
        const t = o.decision === 'allow' && trustable(a) && a.actionClass && !a.barred ? trustedFor(s.agentTrust, a.team, a.actionClass) : null;
        if (!t || s.agentTrust.never.some((n) => a.actionClass === n || a.actionClass!.startsWith(n + ' '))) return [];
        a.trust = t;
        a.decidedBy = 'trust';
      } else a.decidedBy = str(o.by, APPROVAL_LIMITS.by) ?? 'unknown';
      a.reason = str(o.reason, APPROVAL_LIMITS.reason) ?? '';
      if (o.decision === 'allow') {
        const key = ruleKeyOf(a);
        // A rule named by the decision allowed it at once; `remember` makes one for the rest of the session.
        if (key !== null && typeof o.rule === 'string' && o.rule === key) a.rule = key;
        else if (key !== null && o.remember === 'session') {
          a.rule = key;
          addRule(s, a, key, ts);
        }
      }
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

/**
 * Pending tool approvals of one floor agent (for its card on the floor); a
 * question (`ask_person`) is on the card of the agent it was asked for (its
 * scope's session), whoever asked it.
 */
export function pendingFor(s: ApprovalsState, agent: string): Approval[] {
  return pendingApprovals(s).filter((a) => a.kind === 'tool' && (a.asker === agent || (a.tool === 'ask_person' && a.scope.session === agent)));
}

/** How many questions (`ask_person`) of one asker are pending (the server caps it: src/server/ask.ts). */
export function pendingAsksOf(s: ApprovalsState, asker: string): number {
  let n = 0;
  for (const a of s.byId.values()) if (a.status === 'pending' && a.tool === 'ask_person' && a.asker === asker) n++;
  return n;
}

/**
 * Pending approvals whose asker is gone: they have a holder and `held` says
 * nobody holds them. Requests without a holder are left to their window.
 */
export function orphanedApprovals(s: ApprovalsState, held: (a: Approval) => boolean): string[] {
  const out: string[] = [];
  for (const a of s.byId.values()) if (a.status === 'pending' && a.holder && !held(a)) out.push(a.id);
  return out;
}

/** How a closed approval reads in one line (for the agent's model, the board and the inbox). */
export function outcomeLine(a: Approval): string {
  const why = a.reason ? `: ${a.reason}` : '';
  switch (a.status) {
    case 'allowed':
      return a.trust ? `Allowed by trust in Roost${why}` : `Allowed in Roost by ${a.decidedBy}${why}`;
    case 'denied':
      return `Denied in Roost by ${a.decidedBy}${why}`;
    case 'expired':
      return `No decision in Roost within ${formatWindow(a.window)}: denied (unanswered approvals count as a no)`;
    case 'withdrawn':
      return `The approval request was withdrawn${why}: denied`;
    default:
      return 'Waiting for a decision in Roost';
  }
}

// ---------------------------------------------------------------- allow for this session

const SHELL_TOOLS = new Set(['Bash', 'shell', 'run_shell_command']);
const EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'write_file', 'replace']);

/** The key of a session's rules: an agent and one of its sessions. */
export function sessionKey(asker: string, session: string): string {
  return `${asker}\u0000${session}`;
}

/**
 * What an "allow for this session" of this request covers, or null when it
 * cannot make one (not a tool call of an agent session). A shell command
 * covers that exact command again; a file edit or write covers every file
 * edit of the session (as Claude Code's own "allow all edits"); any other
 * tool covers that tool.
 */
export function ruleKeyOf(a: Pick<Approval, 'kind' | 'scope' | 'tool' | 'input' | 'detail'>): string | null {
  if (a.kind !== 'tool' || !a.scope.session) return null;
  if (SHELL_TOOLS.has(a.tool)) return 'command:' + (a.detail?.kind === 'command' ? a.detail.command : a.input);
  if (EDIT_TOOLS.has(a.tool)) return 'edits';
  return 'tool:' + a.tool;
}

function addRule(s: ApprovalsState, a: Approval, key: string, ts: number): void {
  const sk = sessionKey(a.asker, a.scope.session!);
  let rules = s.sessionRules.get(sk);
  if (!rules) {
    s.sessionRules.set(sk, (rules = new Map()));
    trimOldest(s.sessionRules, RULE_LIMITS.sessions);
  }
  rules.delete(key);
  rules.set(key, { by: a.decidedBy, from: a.id, at: ts });
  trimOldest(rules, RULE_LIMITS.perSession);
}

/** The session rule that already allows a request like this one, or null (the server then asks a person). */
export function sessionRuleFor(
  s: ApprovalsState,
  a: Pick<Approval, 'kind' | 'asker' | 'scope' | 'tool' | 'input' | 'detail'>,
): { key: string; by: string; from: string } | null {
  const key = ruleKeyOf(a);
  if (key === null) return null;
  const r = s.sessionRules.get(sessionKey(a.asker, a.scope.session!))?.get(key);
  return r ? { key, by: r.by, from: r.from } : null;
}

/** Whether a session has rules (so its end is worth logging). */
export function hasSessionRules(s: ApprovalsState, asker: string, session: string): boolean {
  return s.sessionRules.has(sessionKey(asker, session));
}

// ---------------------------------------------------------------- detail

function text(v: unknown, cap: number): [string, boolean] {
  if (typeof v !== 'string') return ['', false];
  return v.length > cap ? [v.slice(0, cap), true] : [v, false];
}

/**
 * What a tool call would do, from its input (and the session's directory for
 * a command), for the person deciding; null for tools without one. The input's
 * fields are only picked here (no copy); `clampDetail` applies DETAIL_LIMITS,
 * so a megabyte of input costs what the caps do, and one rule caps both a new
 * request and a stored one.
 */
export function detailOf(tool: string, input: unknown, cwd?: unknown): ApprovalDetail | null {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return null;
  const o = input as Record<string, unknown>;
  if (SHELL_TOOLS.has(tool)) return clampDetail({ kind: 'command', command: o.command, cwd: o.cwd ?? o.directory ?? cwd, description: o.description });
  const path = o.file_path ?? o.path ?? o.notebook_path;
  if (tool === 'Write' || tool === 'write_file') return clampDetail({ kind: 'write', path, content: o.content });
  if (tool === 'Edit' || tool === 'replace' || tool === 'MultiEdit') {
    const list: unknown[] = tool === 'MultiEdit' ? (Array.isArray(o.edits) ? o.edits : []) : [o];
    // One past the cap, so the clamp knows some were left out.
    const edits = list.slice(0, DETAIL_LIMITS.edits + 1).map((e) => {
      if (!e || typeof e !== 'object') return null;
      const x = e as Record<string, unknown>;
      return { old: x.old_string, new: x.new_string, all: x.replace_all === true };
    });
    return clampDetail({ kind: 'edit', path, edits, truncated: list.length > DETAIL_LIMITS.edits });
  }
  return null;
}

/** A stored detail, checked (stored events are hostile too): the same caps, or null. */
export function clampDetail(v: unknown): ApprovalDetail | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const truncated = o.truncated === true;
  switch (o.kind) {
    case 'command': {
      const [command, t] = text(o.command, DETAIL_LIMITS.command);
      if (!command) return null;
      return { kind: 'command', command, cwd: text(o.cwd, DETAIL_LIMITS.cwd)[0], description: text(o.description, DETAIL_LIMITS.description)[0], truncated: truncated || t };
    }
    case 'write': {
      const [path] = text(o.path, DETAIL_LIMITS.path);
      if (!path) return null;
      const [content, t] = text(o.content, DETAIL_LIMITS.text);
      return { kind: 'write', path, content, truncated: truncated || t };
    }
    case 'edit': {
      const [path] = text(o.path, DETAIL_LIMITS.path);
      if (!path || !Array.isArray(o.edits)) return null;
      const edits: { old: string; new: string; all: boolean }[] = [];
      let budget = DETAIL_LIMITS.text;
      let cut = truncated || o.edits.length > DETAIL_LIMITS.edits;
      for (const e of o.edits.slice(0, DETAIL_LIMITS.edits)) {
        if (!e || typeof e !== 'object') continue;
        if (budget <= 0) {
          cut = true;
          break;
        }
        const x = e as Record<string, unknown>;
        const [a, t1] = text(x.old, budget);
        budget -= a.length;
        const [b, t2] = text(x.new, Math.max(0, budget));
        budget -= b.length;
        cut ||= t1 || t2;
        edits.push({ old: a, new: b, all: x.all === true });
      }
      return edits.length ? { kind: 'edit', path, edits, truncated: cut } : null;
    }
    default:
      return null;
  }
}

// ---------------------------------------------------------------- wire form

export interface ApprovalsJSON {
  approvals: Approval[];
  closed: string[];
  forgotten: string[];
  /** [sessionKey, [ruleKey, {by, from, at}][]][] (absent in snapshots from before session rules). */
  sessionRules?: [string, [string, { by: string; from: string; at: number }][]][];
  /** Earned trust (absent in snapshots from before it). */
  agentTrust?: unknown;
  rev: number;
}

export function approvalsToJSON(s: ApprovalsState): ApprovalsJSON {
  return {
    approvals: [...s.byId.values()],
    closed: [...s.closed],
    forgotten: [...s.forgotten],
    sessionRules: [...s.sessionRules].map(([k, m]) => [k, [...m]]),
    agentTrust: agentTrustToJSON(s.agentTrust),
    rev: s.rev,
  };
}

export function approvalsFromJSON(j: ApprovalsJSON): ApprovalsState {
  const s = emptyApprovals();
  // Records from before `detail` and `rule` read as having none.
  for (const a of j.approvals ?? []) s.byId.set(a.id, { ...a, scope: { ...a.scope }, detail: a.detail ?? null, rule: a.rule ?? '', askedBy: a.askedBy ?? '' });
  s.closed = [...(j.closed ?? [])];
  for (const id of j.forgotten ?? []) remember(s.forgotten, id);
  for (const [k, rules] of j.sessionRules ?? []) s.sessionRules.set(k, new Map(rules.map(([rk, r]) => [rk, { ...r }])));
  s.agentTrust = agentTrustFromJSON(j.agentTrust);
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
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k]).slice(0, max * 2) : undefined);
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
