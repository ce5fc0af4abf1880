// Codex, Gemini CLI and Cursor → the same floor mapping as Claude Code.
//
// Each tool's hook payload is first rewritten into the Claude-like shape
// (`hook_event_name`, `session_id`, `cwd`, `tool_name`, `tool_input`, ...) and
// then mapped by `mapClaudeCode`, so the floor means the same thing whichever
// tool sent it. Pure: imports only src/core and the Claude mapping.
//
// Where each tool lets a hook decide a tool call, `decisionAnswer` renders the
// tool's own answer shape, and where the model reads the reason (a deny's, and
// a person's note on an allow), as read from the real CLIs' own output
// schemas and sources (Claude Code 2.1.197, Codex 0.171.0, Gemini CLI 0.61.0):
// - Claude Code: PreToolUse `permissionDecision` with `permissionDecisionReason`
//   (the model reads it on a deny); a note on an allow as `additionalContext`;
// - Codex: Claude-compatible hooks; decides through PermissionRequest
//   (`hookSpecificOutput.decision.behavior`), the point where Codex would ask;
//   `decision.message` is the denial the model reads. Its schema takes no
//   context on that event, so an allow carries no note;
// - Gemini CLI: BeforeTool answers `{ decision: 'allow'|'deny', reason }`; a
//   deny's reason reaches the model ("Tool execution blocked: <reason>"), an
//   allow's is not read (BeforeTool reads no context), so it carries no note;
// - Cursor: beforeShellExecution / beforeMCPExecution / beforeReadFile answer
//   `{ permission: 'allow'|'deny', user_message, agent_message }`.

import { mapClaudeCode, preToolUseAnswer, sessionAgentId, type MapContext, type Mapped } from './claude-code.js';

export type AgentTool = 'claude-code' | 'codex' | 'gemini-cli' | 'cursor';
export const AGENT_TOOLS: readonly AgentTool[] = ['claude-code', 'codex', 'gemini-cli', 'cursor'];

type Payload = Record<string, unknown>;

function obj(v: unknown): Payload {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Payload) : {};
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// ---------------------------------------------------------------- Gemini CLI

// What Gemini CLI 0.61.0 really sends (test/fixtures/gemini-cli-real-0.61.0/)
// differs from its documentation in ways the floor notices:
// - PreCompress fires before every model turn (`trigger: "auto"`), whether or
//   not anything is compressed: it maps to nothing, or every agent would flash
//   "Compacting" all the time;
// - a failed shell command's AfterTool has no `error`: the exit code is in the
//   tool's text (`Exit Code: 2`);
// - a subagent (`invoke_agent`) is not named on its own hook payloads: its
//   tool calls arrive with the session's id and nothing else. The delegation
//   itself is reported (BeforeTool/AfterTool of `invoke_agent`), so Roost
//   opens a helper desk for it, and while exactly one delegated helper of the
//   session is busy, tool events go to that helper (the session is blocked in
//   `invoke_agent` meanwhile). An inference, said so in docs/integrations.md.

// Maps, not plain objects: a hostile `constructor` or `__proto__` is just an unknown name.
const GEMINI_EVENTS = new Map<string, string>(Object.entries({
  SessionStart: 'SessionStart',
  SessionEnd: 'SessionEnd',
  BeforeAgent: 'UserPromptSubmit',
  AfterAgent: 'Stop',
  BeforeTool: 'PreToolUse',
  AfterTool: 'PostToolUse',
  Notification: 'Notification',
  // Fires before every turn on the real CLI: nothing a person would notice.
  PreCompress: '',
}));

export const GEMINI_PREFIX = 'gemini';
/** Gemini CLI's tool that hands a task to a subagent. */
export const GEMINI_DELEGATE = 'invoke_agent';
const DELEGATE_ID = 'delegate-';

export function geminiToClaude(payload: unknown): Payload {
  const p = obj(payload);
  const name = str(p.hook_event_name) ?? '';
  let event = GEMINI_EVENTS.get(name) ?? name;
  const out: Payload = { ...p, hook_event_name: event };
  if (event === 'PostToolUse') {
    const resp = obj(p.tool_response);
    const shellExit = typeof resp.llmContent === 'string' ? /\bExit Code: (-?\d{1,6})\b/.exec(resp.llmContent.slice(0, 20_000)) : null;
    if (resp.error !== undefined && resp.error !== null) {
      event = 'PostToolUseFailure';
      out.hook_event_name = event;
      out.error = typeof resp.error === 'string' ? resp.error : str(obj(resp.error).message) ?? 'error';
    } else if (shellExit && shellExit[1] !== '0') {
      event = 'PostToolUseFailure';
      out.hook_event_name = event;
      out.error = `exit code ${shellExit[1]}`;
    }
  }
  if (event === 'Stop') out.last_assistant_message = str(p.prompt_response) ?? '';
  if (event === 'Notification' && p.notification_type === 'ToolPermission') out.notification_type = 'permission_prompt';
  return out;
}

function busyHelper(h: { status: string; leftAt: number | null }): boolean {
  return h.leftAt === null && h.status !== 'done' && h.status !== 'offline' && h.status !== 'error';
}

/** The text after `Result:` in invoke_agent's answer (what the subagent handed back). */
function delegateResult(resp: unknown): string {
  const content = obj(resp).llmContent;
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.slice(0, 20).map((c) => str(obj(c).text) ?? '').join('\n') : '';
  const t = text.slice(0, 20_000);
  const i = t.indexOf('Result:');
  const result = (i >= 0 ? t.slice(i + 7) : t).trim();
  // complete_task's result is an object, printed as JSON: its `response` is the answer.
  if (result.startsWith('{')) {
    try {
      const r = str(obj(JSON.parse(result)).response);
      if (r) return r;
    } catch {}
  }
  return result;
}

/** Gemini CLI: the Claude-like mapping, plus helpers for delegated tasks (see above). */
export function mapGemini(payload: unknown, ctx: MapContext = {}): Mapped {
  const p = obj(payload);
  const gctx: MapContext = { ...ctx, source: 'gemini-cli', prefix: GEMINI_PREFIX };
  const base = geminiToClaude(p);
  const name = str(p.hook_event_name) ?? '';
  const sessionId = str(p.session_id) ?? '';
  if (!sessionId || (name !== 'BeforeTool' && name !== 'AfterTool')) return mapClaudeCode(base, gctx);
  const session = sessionAgentId(sessionId.slice(0, 128), GEMINI_PREFIX);
  const helpers = ctx.view?.helpers(session) ?? [];
  const delegates = helpers.filter((h) => h.id.startsWith(`${session}/${DELEGATE_ID}`) && busyHelper(h));
  const subOf = (id: string) => id.slice(session.length + 1);
  const common = { session_id: sessionId, cwd: p.cwd };

  if (str(p.tool_name) === GEMINI_DELEGATE) {
    const input = obj(p.tool_input);
    const agentName = (str(input.agent_name) ?? '').slice(0, 40) || 'subagent';
    const own = mapClaudeCode(base, gctx);
    if (name === 'BeforeTool') {
      // A new desk for this delegation; the count makes each one its own helper.
      const join = mapClaudeCode({ ...common, hook_event_name: 'SubagentStart', agent_id: `${DELEGATE_ID}${agentName}-${helpers.length + 1}`, agent_type: agentName }, gctx);
      return { ...own, events: [...own.events, ...join.events] };
    }
    const done = delegates.find((h) => h.role === agentName) ?? delegates[0];
    if (!done) return own;
    const stop = mapClaudeCode({ ...common, hook_event_name: 'SubagentStop', agent_id: subOf(done.id), agent_type: done.role, last_assistant_message: delegateResult(p.tool_response) }, gctx);
    return { ...own, events: [...stop.events, ...own.events] };
  }
  // Inside a delegation: the subagent's own tool calls (the session waits in invoke_agent).
  if (delegates.length === 1) return mapClaudeCode({ ...base, agent_id: subOf(delegates[0].id), agent_type: delegates[0].role }, gctx);
  return mapClaudeCode(base, gctx);
}

// ---------------------------------------------------------------- Cursor

/** Cursor hook name → [Claude event, tool name for the floor]. */
const CURSOR_EVENTS = new Map<string, [string, string?]>(Object.entries({
  beforeSubmitPrompt: ['UserPromptSubmit'],
  beforeShellExecution: ['PreToolUse', 'Shell'],
  afterShellExecution: ['PostToolUse', 'Shell'],
  beforeMCPExecution: ['PreToolUse'],
  afterMCPExecution: ['PostToolUse'],
  beforeReadFile: ['PreToolUse', 'Read'],
  afterFileEdit: ['PostToolUse', 'Edit'],
  afterAgentResponse: ['PostToolBatch'],
  stop: ['Stop'],
}));

export function cursorToClaude(payload: unknown): Payload {
  const p = obj(payload);
  const name = str(p.hook_event_name) ?? '';
  const [event, tool] = CURSOR_EVENTS.get(name) ?? [name];
  const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots : [];
  const out: Payload = {
    hook_event_name: event,
    session_id: p.conversation_id,
    cwd: str(p.cwd) ?? str(roots[0]) ?? '',
    prompt: p.prompt,
  };
  if (tool === 'Shell') {
    // Spelled as Claude Code spells its shell tool, so one rule (`Bash`) covers both.
    out.tool_name = 'Bash';
    out.tool_input = { command: p.command };
  } else if (tool === 'Read' || tool === 'Edit') {
    out.tool_name = tool;
    out.tool_input = { file_path: p.file_path };
  } else if (event === 'PreToolUse' || event === 'PostToolUse') {
    // MCP: the tool name as Claude Code would spell it, so rules like `mcp__.*` apply alike.
    const server = str(p.server) ?? str(p.url) ?? 'mcp';
    out.tool_name = `mcp__${server.replace(/[^A-Za-z0-9_-]/g, '_')}__${str(p.tool_name) ?? 'tool'}`;
    let input: unknown = p.tool_input;
    if (typeof input === 'string') {
      try {
        input = JSON.parse(input);
      } catch {}
    }
    out.tool_input = input;
  }
  if (event === 'Stop') {
    if (p.status === 'error') {
      out.hook_event_name = 'StopFailure';
      out.error = 'error';
      out.error_details = 'the agent loop ended with an error';
    } else if (p.status === 'aborted') {
      out.last_assistant_message = 'Aborted';
    }
  }
  return out;
}

// ---------------------------------------------------------------- Codex

// Codex's hooks are Claude Code's in shape (test/fixtures/codex-real-0.171.0/):
// the same event names and fields, `agent_id`/`agent_type` inside a subagent
// (SubagentStart/SubagentStop around it), the shell reported as `Bash`. What
// differs on the real 0.171.0: `turn_id` on every payload; a PermissionRequest
// without `tool_use_id` but with the command's `description`; no
// PostToolUseFailure (a failed command is a PostToolUse whose response is its
// output); an Interrupt event; and namespaced tools spelled with the namespace
// glued on (`multi_agent_v1wait_agent`, while `spawn_agent` comes bare).

const CODEX_NAMESPACES = ['multi_agent_v1'];

export function codexToClaude(payload: unknown): Payload {
  const p = obj(payload);
  const out: Payload = { ...p };
  const tool = str(p.tool_name);
  if (tool) {
    const ns = CODEX_NAMESPACES.find((n) => tool.length > n.length && tool.startsWith(n));
    if (ns) out.tool_name = tool.slice(ns.length).replace(/^[_.:]/, '');
  }
  return out;
}

/** Codex's `notify` program argument (agent-turn-complete) → floor events. */
export function mapCodexNotify(payload: unknown, ctx: MapContext = {}): Mapped {
  const p = obj(payload);
  if (p.type !== 'agent-turn-complete') return { event: str(p.type) ?? '', agent: '', agentName: '', session: '', team: '', tool: '', input: '', events: [] };
  return mapClaudeCode(
    {
      hook_event_name: 'Stop',
      session_id: p['thread-id'],
      cwd: p.cwd,
      last_assistant_message: p['last-assistant-message'],
    },
    { ...ctx, source: 'codex' },
  );
}

// ---------------------------------------------------------------- one entry

/** Maps a hook payload of any supported tool onto the floor. */
export function mapHook(tool: AgentTool, payload: unknown, ctx: MapContext = {}): Mapped {
  switch (tool) {
    case 'claude-code':
      return mapClaudeCode(payload, ctx);
    case 'codex': {
      const p = obj(payload);
      if (typeof p.type === 'string' && p.hook_event_name === undefined) return mapCodexNotify(p, ctx);
      return mapClaudeCode(codexToClaude(p), { ...ctx, source: 'codex' });
    }
    case 'gemini-cli':
      return mapGemini(payload, ctx);
    case 'cursor':
      return mapClaudeCode(cursorToClaude(payload), { ...ctx, source: 'cursor' });
  }
}

/** Whether this payload is a point where the tool lets a hook decide a tool call. */
export function isDecisionPoint(tool: AgentTool, payload: unknown): boolean {
  const name = str(obj(payload).hook_event_name) ?? '';
  switch (tool) {
    case 'claude-code':
      return name === 'PreToolUse';
    case 'codex':
      // Codex asks before what its own policy finds risky; Roost answers those prompts.
      return name === 'PermissionRequest';
    case 'gemini-cli':
      return name === 'BeforeTool';
    case 'cursor':
      return name === 'beforeShellExecution' || name === 'beforeMCPExecution' || name === 'beforeReadFile';
  }
}

/**
 * The tool's own answer for a decision, with a reason the agent (and model)
 * sees. `note`: a person's note on an allow, given to the model where the
 * tool's hook can carry it (see the top of this file).
 */
export function decisionAnswer(tool: AgentTool, payload: unknown, decision: 'allow' | 'deny', reason: string, note = ''): Record<string, unknown> {
  const name = str(obj(payload).hook_event_name) ?? '';
  switch (tool) {
    case 'claude-code':
      return preToolUseAnswer(decision, reason, note);
    case 'codex':
      if (name === 'PermissionRequest') {
        return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: decision === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: reason } } };
      }
      return preToolUseAnswer(decision, reason);
    case 'gemini-cli':
      return { decision, reason };
    case 'cursor':
      return { permission: decision, user_message: reason, agent_message: reason };
  }
}
