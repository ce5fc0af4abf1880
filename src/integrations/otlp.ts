// OpenTelemetry records from agent tools → usage and tool-decision reports.
// Pure: the server decodes OTLP (JSON or protobuf) into the plain records
// below, this maps them; the server then finds the floor agent each report
// belongs to and appends `usage` events (src/core/usage.ts).
//
// What each tool really exports (found with the real CLIs; docs/integrations.md):
// - Claude Code 2.1.197 (service.name `claude-code`): a log record per model
//   request, `claude_code.api_request` (event.name `api_request`), with
//   `session.id`, `model`, `input_tokens` (uncached), `output_tokens`,
//   `cache_read_tokens`, `cache_creation_tokens`, `cost_usd` (its own
//   figure), `event.sequence`, and inside a subagent `agent.name` (the
//   subagent's type; no subagent id). `tool_decision` records: `decision`
//   accept/reject. Metrics (`claude_code.token.usage`, `cost.usage`) repeat
//   the same figures as delta sums.
// - Codex 0.171.0 (service.name `codex_exec`, `codex-tui`, ...): a
//   `codex.sse_event` log record of kind `response.completed` per model
//   request with `conversation.id` (the thread: a subagent's own thread id is
//   its agent id), `model`, `input_token_count` (cached included),
//   `cached_token_count`, `output_token_count` (reasoning included). No cost.
//   `codex.tool_decision` records: `decision` approved/denied/...
// - Gemini CLI 0.61.0 (service.name `gemini-cli`): `gemini_cli.api_response`
//   per model request with `session.id`, `model` (the answering model),
//   `input_token_count` (cached included), `cached_content_token_count`,
//   `output_token_count`, `thoughts_token_count` (billed as output), `role`
//   (`main`, or the subagent's name). No cost. `gemini_cli.tool_call` records
//   carry `decision`.
// Log records are the one source of usage: they are per request and carry a
// key that makes a retried export harmless; metrics say the same again as
// sums, so they are checked and counted (`metricPoints`) but not added.

import type { AgentTool } from './others.js';

export type Scalar = string | number | boolean;

/** One OTLP log record, flattened by the server's decoder. */
export interface OtlpLog {
  /** The resource's `service.name`. */
  service: string;
  /** `event.name` (attribute or field), else the body when it is a string. */
  event: string;
  /** Scalar attributes only (nested values are dropped by the decoder). */
  attrs: Map<string, Scalar>;
  /** `timeUnixNano` in ms, or 0. */
  timeMs: number;
}

export interface UsageReport {
  tool: AgentTool;
  /** The tool's session id (Claude Code, Gemini CLI) or thread id (Codex). */
  sessionId: string;
  /** The subagent's type when the record says it ran in one (Claude Code `agent.name`, Gemini `role`). */
  subagentType: string;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The vendor's own cost in USD, when it reported one. */
  vendorUsd?: number;
  /** A key that is the same when an exporter retries the same record. */
  key: string;
  /** YYYY-MM-DD (UTC) of the request. */
  day: string;
  ts: number;
}

export interface DecisionReport {
  tool: AgentTool;
  sessionId: string;
  subagentType: string;
  accepted: boolean;
  tool_name: string;
  key: string;
  day: string;
  ts: number;
}

export const OTLP_LIMITS = {
  /** Records mapped from one request; the rest are refused (413) before anything is stored. */
  records: 5_000,
  attrs: 128,
  string: 512,
} as const;

/** Which agent tool a resource is, by its `service.name`; null for anything else. */
export function toolOfService(service: string): AgentTool | null {
  if (service === 'claude-code') return 'claude-code';
  if (service === 'gemini-cli') return 'gemini-cli';
  if (service.startsWith('codex')) return 'codex';
  return null;
}

function num(v: Scalar | undefined): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

function text(v: Scalar | undefined, max: number = OTLP_LIMITS.string): string {
  return typeof v === 'string' ? v.slice(0, max) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

/** The record's time: its `event.timestamp` attribute (ISO), else timeUnixNano. */
function timeOf(r: OtlpLog): number {
  const iso = r.attrs.get('event.timestamp');
  if (typeof iso === 'string') {
    const t = Date.parse(iso.slice(0, 40));
    if (Number.isFinite(t)) return t;
  }
  return r.timeMs > 0 && Number.isFinite(r.timeMs) ? r.timeMs : 0;
}

export function dayOf(ms: number): string {
  if (!(ms > 0) || ms > 8.64e15) return 'unknown';
  return new Date(ms).toISOString().slice(0, 10);
}

/** Maps decoded log records to usage and tool-decision reports; records of other services or events give nothing. */
export function mapOtlpLogs(records: readonly OtlpLog[]): { usage: UsageReport[]; decisions: DecisionReport[] } {
  const usage: UsageReport[] = [];
  const decisions: DecisionReport[] = [];
  for (const r of records) {
    const tool = toolOfService(r.service);
    if (!tool) continue;
    const a = r.attrs;
    const ts = timeOf(r);
    const day = dayOf(ts);
    const ev = r.event.replace(/^(claude_code|codex|gemini_cli)\./, '');
    if (tool === 'claude-code') {
      const sessionId = text(a.get('session.id'), 128);
      if (!sessionId) continue;
      const sub = text(a.get('agent.name'), 80);
      const seq = text(a.get('event.sequence'), 20);
      const key = `${sessionId}:${text(a.get('prompt.id'), 64)}:${seq || ts}`;
      if (ev === 'api_request') {
        const cost = a.get('cost_usd');
        usage.push({
          tool,
          sessionId,
          subagentType: sub,
          model: text(a.get('model'), 120),
          input: num(a.get('input_tokens')),
          output: num(a.get('output_tokens')),
          cacheRead: num(a.get('cache_read_tokens')),
          cacheWrite: num(a.get('cache_creation_tokens')),
          vendorUsd: typeof cost === 'number' || (typeof cost === 'string' && cost.trim() !== '') ? Math.max(0, Number(cost)) || 0 : undefined,
          key,
          day,
          ts,
        });
      } else if (ev === 'tool_decision') {
        decisions.push({ tool, sessionId, subagentType: sub, accepted: text(a.get('decision'), 20) === 'accept', tool_name: text(a.get('tool_name'), 120), key, day, ts });
      }
    } else if (tool === 'codex') {
      const sessionId = text(a.get('conversation.id'), 128);
      if (!sessionId) continue;
      if (ev === 'sse_event' && a.get('event.kind') === 'response.completed' && a.has('input_token_count')) {
        const input = num(a.get('input_token_count'));
        const cached = Math.min(num(a.get('cached_token_count')), input);
        usage.push({
          tool,
          sessionId,
          subagentType: '',
          model: text(a.get('model'), 120),
          input: input - cached,
          output: num(a.get('output_token_count')),
          cacheRead: cached,
          cacheWrite: num(a.get('cache_write_token_count')),
          key: `${sessionId}:${text(a.get('event.timestamp'), 40)}:${input}:${num(a.get('output_token_count'))}`,
          day,
          ts,
        });
      } else if (ev === 'tool_decision') {
        const d = text(a.get('decision'), 20).toLowerCase();
        decisions.push({ tool, sessionId, subagentType: '', accepted: d.startsWith('approved') || d === 'accept', tool_name: text(a.get('tool_name'), 120), key: `${sessionId}:${text(a.get('call_id'), 64)}:decision`, day, ts });
      }
    } else {
      const sessionId = text(a.get('session.id'), 128);
      if (!sessionId) continue;
      const role = text(a.get('role'), 80);
      const sub = role && role !== 'main' ? role : '';
      if (ev === 'api_response') {
        const input = num(a.get('input_token_count'));
        const cached = Math.min(num(a.get('cached_content_token_count')), input);
        usage.push({
          tool,
          sessionId,
          subagentType: sub,
          model: text(a.get('model'), 120),
          input: input - cached,
          output: num(a.get('output_token_count')) + num(a.get('thoughts_token_count')),
          cacheRead: cached,
          cacheWrite: 0,
          key: `${sessionId}:${text(a.get('prompt_id'), 64)}:${text(a.get('event.timestamp'), 40)}`,
          day,
          ts,
        });
      } else if (ev === 'tool_call') {
        decisions.push({ tool, sessionId, subagentType: sub, accepted: text(a.get('decision'), 20) === 'accept', tool_name: text(a.get('function_name'), 120), key: `${sessionId}:${text(a.get('prompt_id'), 64)}:${text(a.get('event.timestamp'), 40)}:tool`, day, ts });
      }
    }
  }
  return { usage, decisions };
}
