// Codex, Gemini CLI and Cursor → the same floor mapping as Claude Code.
//
// Each tool's hook payload is first rewritten into the Claude-like shape
// (`hook_event_name`, `session_id`, `cwd`, `tool_name`, `tool_input`, ...) and
// then mapped by `mapClaudeCode`, so the floor means the same thing whichever
// tool sent it. Pure: imports only src/core and the Claude mapping.
//
// Where each tool lets a hook decide a tool call, `decisionAnswer` renders the
// tool's own answer shape:
// - Codex: Claude-compatible hooks; decides through PermissionRequest
//   (`hookSpecificOutput.decision.behavior`), the point where Codex would ask;
// - Gemini CLI: BeforeTool answers `{ decision: 'allow'|'deny', reason }`;
// - Cursor: beforeShellExecution / beforeMCPExecution / beforeReadFile answer
//   `{ permission: 'allow'|'deny', user_message, agent_message }`.

import { mapClaudeCode, preToolUseAnswer, type MapContext, type Mapped } from './claude-code.js';

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

const GEMINI_EVENTS: Record<string, string> = {
  SessionStart: 'SessionStart',
  SessionEnd: 'SessionEnd',
  BeforeAgent: 'UserPromptSubmit',
  AfterAgent: 'Stop',
  BeforeTool: 'PreToolUse',
  AfterTool: 'PostToolUse',
  Notification: 'Notification',
  PreCompress: 'PreCompact',
};

export function geminiToClaude(payload: unknown): Payload {
  const p = obj(payload);
  const name = str(p.hook_event_name) ?? '';
  let event = GEMINI_EVENTS[name] ?? name;
  const out: Payload = { ...p, hook_event_name: event };
  if (event === 'PostToolUse') {
    const resp = obj(p.tool_response);
    if (resp.error !== undefined && resp.error !== null) {
      event = 'PostToolUseFailure';
      out.hook_event_name = event;
      out.error = typeof resp.error === 'string' ? resp.error : str(obj(resp.error).message) ?? 'error';
    }
  }
  if (event === 'Stop') out.last_assistant_message = str(p.prompt_response) ?? '';
  if (event === 'Notification' && p.notification_type === 'ToolPermission') out.notification_type = 'permission_prompt';
  return out;
}

// ---------------------------------------------------------------- Cursor

/** Cursor hook name → [Claude event, tool name for the floor]. */
const CURSOR_EVENTS: Record<string, [string, string?]> = {
  beforeSubmitPrompt: ['UserPromptSubmit'],
  beforeShellExecution: ['PreToolUse', 'Shell'],
  afterShellExecution: ['PostToolUse', 'Shell'],
  beforeMCPExecution: ['PreToolUse'],
  afterMCPExecution: ['PostToolUse'],
  beforeReadFile: ['PreToolUse', 'Read'],
  afterFileEdit: ['PostToolUse', 'Edit'],
  afterAgentResponse: ['PostToolBatch'],
  stop: ['Stop'],
};

export function cursorToClaude(payload: unknown): Payload {
  const p = obj(payload);
  const name = str(p.hook_event_name) ?? '';
  const [event, tool] = CURSOR_EVENTS[name] ?? [name];
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
      return mapClaudeCode(p, { ...ctx, source: 'codex' });
    }
    case 'gemini-cli':
      return mapClaudeCode(geminiToClaude(payload), { ...ctx, source: 'gemini-cli', prefix: 'gemini' });
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

/** The tool's own answer for a decision, with a reason the agent (and model) sees. */
export function decisionAnswer(tool: AgentTool, payload: unknown, decision: 'allow' | 'deny', reason: string): Record<string, unknown> {
  const name = str(obj(payload).hook_event_name) ?? '';
  switch (tool) {
    case 'claude-code':
      return preToolUseAnswer(decision, reason);
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
