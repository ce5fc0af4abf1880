// Claude Code's stream-json output, typed, and what a session's output means
// to the bridge: turns, partial text, tool calls and the result.
//
// The messages are those `claude -p --output-format stream-json --verbose
// [--include-partial-messages]` prints, one JSON object a line (Claude Code
// 2.1.197: test/fixtures/claude-code/stream-json-*.jsonl). `readMessage` is
// the one place that looks at a raw line: it keeps the fields the bridge
// reads, checks their types, and drops what it does not know (thinking and
// image blocks, system messages' payloads), so nothing past it handles an
// untyped value. A line it cannot read is dropped, never guessed at; a line
// in a format it does not know at all (`readLine`: not JSON, or a message
// type Claude Code's known ones do not include) stops that process's work
// visibly (claude.ts, runs.ts, hands.ts).
//
// `SessionOutput` is one session's reader. Invariants:
// - a turn is one assistant message of the main conversation (one API
//   response; its lines share `message.id`): it is complete when the next
//   message, a tool result or the result arrives, and is handed out once;
// - a subagent's messages (`parent_tool_use_id` set) are never turns: only
//   their tool calls are reported, as the subagent's activity;
// - partial text (text deltas of the main conversation) is handed out at most
//   every `PARTIAL_EVERY_MS`, each piece carrying the text added since the last;
// - no partial text of a turn is handed out after that turn: what is still
//   buffered when the turn completes is dropped (the turn carries it).

import { digestInput } from '../core/approvals.js';

// ------------------------------------------------------------------ the messages

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** A tool's answer; `content` is its text (the wire's list of text parts joined). */
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;

/** Fields every conversation message carries: null for the main conversation, else the tool call of the subagent it belongs to. */
interface InConversation {
  parent_tool_use_id: string | null;
}

export interface AssistantMessage extends InConversation {
  type: 'assistant';
  message: { id: string; content: ContentBlock[] };
}

/** The prompt echoed back, or (the common case) tool results. A string content is read as one text block. */
export interface UserMessage extends InConversation {
  type: 'user';
  message: { content: ContentBlock[] };
}

/** One event of the Messages API's stream (with `--include-partial-messages`); only text deltas are read. */
export interface StreamEventMessage extends InConversation {
  type: 'stream_event';
  event: { type: string; delta?: { type: string; text?: string } };
}

export interface ResultMessage {
  type: 'result';
  /** `success`, or why it stopped (`error_max_turns`, `error_during_execution`, …). */
  subtype: string;
  is_error: boolean;
  duration_ms?: number;
  num_turns?: number;
  total_cost_usd?: number;
  /** The final answer's text. */
  result?: string;
  /** How many tool calls were denied. */
  denials: number;
  errors: string[];
  /**
   * `modelUsage`: per model, the tokens and Claude Code's own cost so far in
   * this process (cumulative over its prompts, subagents and side requests
   * included); `costUsd` absent when it reports none.
   */
  models: ModelFigures[];
}

/** One model's figures in a result's `modelUsage`. */
export interface ModelFigures {
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  costUsd?: number;
}

function readModels(x: unknown): ModelFigures[] {
  if (!isObj(x)) return [];
  const out: ModelFigures[] = [];
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
  for (const [model, f] of Object.entries(x).slice(0, 16)) {
    if (!isObj(f) || !model) continue;
    const cost = num(f.costUSD);
    out.push({ model: model.slice(0, 120), input: n(f.inputTokens), output: n(f.outputTokens), cacheRead: n(f.cacheReadInputTokens), cacheWrite: n(f.cacheCreationInputTokens), ...(cost !== undefined && cost >= 0 ? { costUsd: cost } : {}) });
  }
  return out;
}

/**
 * What a result adds to the figures already reported by the same process
 * (`modelUsage` is cumulative per process): per model, the difference; a
 * model whose figures went down is a new process's, taken whole. Models
 * with nothing new are left out. Updates `seen`.
 */
export function newUsage(seen: Map<string, ModelFigures>, now: readonly ModelFigures[]): ModelFigures[] {
  const out: ModelFigures[] = [];
  for (const f of now) {
    const was = seen.get(f.model);
    seen.set(f.model, f);
    const down = was && (f.input < was.input || f.output < was.output || f.cacheRead < was.cacheRead || f.cacheWrite < was.cacheWrite || (f.costUsd ?? 0) < (was.costUsd ?? 0));
    const base = !was || down ? undefined : was;
    const d: ModelFigures = { model: f.model, input: f.input - (base?.input ?? 0), output: f.output - (base?.output ?? 0), cacheRead: f.cacheRead - (base?.cacheRead ?? 0), cacheWrite: f.cacheWrite - (base?.cacheWrite ?? 0) };
    if (f.costUsd !== undefined) d.costUsd = Math.max(0, f.costUsd - (base?.costUsd ?? 0));
    if (d.input + d.output + d.cacheRead + d.cacheWrite > 0 || (d.costUsd ?? 0) > 0) out.push(d);
  }
  return out;
}

/** Hook progress, init, subagent task notices: the bridge reads none of it. */
export interface SystemMessage {
  type: 'system';
  subtype: string;
}

export type ClaudeMessage = AssistantMessage | UserMessage | StreamEventMessage | ResultMessage | SystemMessage;

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

function readBlock(b: unknown): ContentBlock | null {
  if (!isObj(b)) return null;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? { type: 'text', text: b.text } : null;
    case 'tool_use':
      return { type: 'tool_use', id: str(b.id) ?? '', name: str(b.name) ?? 'tool', input: b.input };
    case 'tool_result': {
      const c = b.content;
      const content = typeof c === 'string' ? c : Array.isArray(c) ? c.map((x) => (isObj(x) && typeof x.text === 'string' ? x.text : '')).join('') : '';
      return { type: 'tool_result', tool_use_id: str(b.tool_use_id) ?? '', content, is_error: b.is_error === true };
    }
    default:
      return null; // thinking, images, anything new
  }
}

function readContent(c: unknown): ContentBlock[] {
  if (typeof c === 'string') return [{ type: 'text', text: c }];
  if (!Array.isArray(c)) return [];
  const out: ContentBlock[] = [];
  for (const b of c) {
    const x = readBlock(b);
    if (x) out.push(x);
  }
  return out;
}

/** One line of stream-json output, parsed, as a typed message; null for anything else. */
export function readMessage(x: unknown): ClaudeMessage | null {
  if (!isObj(x)) return null;
  const parent = str(x.parent_tool_use_id) || null;
  const message = isObj(x.message) ? x.message : {};
  switch (x.type) {
    case 'assistant':
      return { type: 'assistant', parent_tool_use_id: parent, message: { id: String(message.id ?? ''), content: readContent(message.content) } };
    case 'user':
      return { type: 'user', parent_tool_use_id: parent, message: { content: readContent(message.content) } };
    case 'stream_event': {
      const e = isObj(x.event) ? x.event : {};
      const d = isObj(e.delta) ? e.delta : null;
      return {
        type: 'stream_event',
        parent_tool_use_id: parent,
        event: { type: str(e.type) ?? '', ...(d ? { delta: { type: str(d.type) ?? '', ...(typeof d.text === 'string' ? { text: d.text } : {}) } } : {}) },
      };
    }
    case 'result':
      return {
        type: 'result',
        subtype: str(x.subtype) ?? '',
        is_error: x.is_error === true,
        duration_ms: num(x.duration_ms),
        num_turns: num(x.num_turns),
        total_cost_usd: num(x.total_cost_usd),
        result: str(x.result),
        denials: Array.isArray(x.permission_denials) ? x.permission_denials.length : 0,
        errors: Array.isArray(x.errors) ? x.errors.filter((e): e is string => typeof e === 'string') : [],
        models: readModels(x.modelUsage),
      };
    case 'system':
      return { type: 'system', subtype: str(x.subtype) ?? '' };
    default:
      return null;
  }
}

/**
 * Messages Claude Code prints (its SDK's message types, 2.1.x) that say
 * nothing the bridge acts on: progress, summaries, rate-limit and sign-in
 * notices, keep-alives, and answers or cancellations of control requests it
 * never sent. They are known, and dropped.
 */
const IGNORED = new Set(['tool_progress', 'tool_use_summary', 'rate_limit_event', 'auth_status', 'prompt_suggestion', 'keep_alive', 'control_response', 'control_cancel_request']);

/**
 * One line of a Claude Code process's stdout: a message the bridge reads, a
 * known message it ignores (`null`), or output in a format it does not know
 * (`{ unknown }`, saying what it was): a line that is not JSON, not an
 * object, or a message type not listed here. A `control_request` is among
 * those: Claude Code asks its host something (a permission, a hook callback)
 * that the bridge cannot answer, and would wait for the answer forever.
 */
export function readLine(line: string): ClaudeMessage | null | { unknown: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { unknown: `a line that is not JSON: ${line.slice(0, 80)}` };
  }
  if (!isObj(raw)) return { unknown: `a line that is not a message: ${line.slice(0, 80)}` };
  if (typeof raw.type === 'string' && IGNORED.has(raw.type)) return null;
  const m = readMessage(raw);
  if (m) return m;
  const type = typeof raw.type === 'string' ? raw.type.slice(0, 60) : '';
  if (type === 'control_request') return { unknown: `a control request the bridge cannot answer (${isObj(raw.request) && typeof raw.request.subtype === 'string' ? raw.request.subtype.slice(0, 60) : 'no subtype'})` };
  return { unknown: type ? `a message of type "${type}"` : `a message without a type: ${line.slice(0, 80)}` };
}

/** Why an execution stopped on output of a format the bridge does not know (`what`: from `readLine`). */
export function unknownOutput(what: string): string {
  return `stopped: Claude Code printed output the bridge does not know (${what}); the bridge stopped the process rather than guess at it`;
}

/** The text a `stream_event` adds to the answer, or null (not a text delta). */
export function textDelta(m: StreamEventMessage): string | null {
  const e = m.event;
  return e.type === 'content_block_delta' && e.delta?.type === 'text_delta' && typeof e.delta.text === 'string' ? e.delta.text : null;
}

/** A user message for `--input-format stream-json`. */
export function userMessage(text: string): string {
  return JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } }) + '\n';
}

/** Whether a `result` message says the turn succeeded. */
export function succeeded(m: ResultMessage): boolean {
  return !m.is_error && m.subtype === 'success';
}

/** `--resume` of a conversation Claude Code never saved: it says so in the result and exits. */
export function noConversation(m: ResultMessage): boolean {
  return m.is_error && m.errors.some((e) => e.startsWith('No conversation found'));
}

/** The milestone's figures, not the answer: `done in 2.4 s, 3 turns, $0.0020[, N tool call(s) denied]`, or `stopped (<subtype>) after …`. */
export function resultSummary(m: ResultMessage): string {
  const secs = m.duration_ms !== undefined ? `${(m.duration_ms / 1000).toFixed(1)} s` : '';
  const turns = m.num_turns !== undefined ? `, ${m.num_turns} turn${m.num_turns === 1 ? '' : 's'}` : '';
  const cost = m.total_cost_usd !== undefined && m.total_cost_usd > 0 ? `, $${m.total_cost_usd.toFixed(4)}` : '';
  const denied = m.denials ? `, ${m.denials} tool call(s) denied` : '';
  return succeeded(m) ? `done in ${secs}${turns}${cost}${denied}` : `stopped (${m.subtype || 'error'}) after ${secs}${turns}`;
}

// ------------------------------------------------------------------ one session's output

/** How often partial text is handed out at most. */
export const PARTIAL_EVERY_MS = 150;

/** What a session's output means, as `SessionOutput` reads it. */
export interface OutputSink {
  /** A tool call of the main conversation (`subagent` false) or of a subagent; `digest` is its input in one line. */
  toolCall(name: string, digest: string, subagent: boolean): void;
  /** A tool's answer, the main conversation's or a subagent's (`name` from its call). */
  toolResult(name: string, text: string, isError: boolean): void;
  /** A text block of the main conversation, as soon as its message line arrives (the Work terminal). */
  text(text: string): void;
  /** Text the answer grew by since the last piece (lossy). */
  partial(text: string): void;
  /** A complete turn: its text blocks joined (may be '' for a turn of tool calls only); `final` when a result or the process's end closed it. */
  turn(text: string, final: boolean): void;
  /** The result of the prompt; the turn in hand was handed out just before. */
  result(m: ResultMessage): void;
}

interface Turn {
  msgId: string;
  texts: string[];
}

export class SessionOutput {
  private turnInHand: Turn | null = null;
  /** Tool names by tool_use_id (a result names only the id). */
  private tools = new Map<string, string>();
  private partialText = '';
  private partialTimer: NodeJS.Timeout | null = null;

  constructor(private sink: OutputSink) {}

  read(m: ClaudeMessage): void {
    const main = m.type !== 'result' && m.type !== 'system' && !m.parent_tool_use_id;
    switch (m.type) {
      case 'stream_event': {
        const delta = main ? textDelta(m) : null;
        if (delta !== null) this.addPartial(delta);
        break;
      }
      case 'assistant': {
        if (!main) {
          // A subagent's step: only the activity says so.
          const tu = m.message.content.find((b): b is ToolUseBlock => b.type === 'tool_use');
          if (tu) {
            this.tools.set(tu.id, tu.name);
            this.sink.toolCall(tu.name, digestInput(tu.name, tu.input, 150), true);
          }
          break;
        }
        if (this.turnInHand && this.turnInHand.msgId !== m.message.id) this.endTurn(false);
        const turn = (this.turnInHand ??= { msgId: m.message.id, texts: [] });
        for (const b of m.message.content) {
          if (b.type === 'text') {
            turn.texts.push(b.text);
            if (b.text.trim()) this.sink.text(b.text);
          } else if (b.type === 'tool_use') {
            this.tools.set(b.id, b.name);
            this.sink.toolCall(b.name, digestInput(b.name, b.input, 150), false);
          }
        }
        break;
      }
      case 'user':
        if (main) this.endTurn(false);
        for (const b of m.message.content) {
          if (b.type === 'tool_result') this.sink.toolResult(this.tools.get(b.tool_use_id) ?? 'tool', b.content, b.is_error);
        }
        break;
      case 'result':
        this.endTurn(true);
        this.sink.result(m);
        break;
    }
  }

  /**
   * Hands out the turn in hand (`final`: nothing follows it in this prompt,
   * e.g. the process ended). Partial text not yet handed out is dropped first:
   * it belongs to this turn, whose whole text goes out now, and handed out
   * later it would follow its own turn.
   */
  endTurn(final: boolean): void {
    const t = this.turnInHand;
    if (!t) return;
    this.turnInHand = null;
    this.stop();
    this.sink.turn(t.texts.join('\n\n').trim(), final);
  }

  /** Drops the partial text not yet handed out (a turn completes, or the session closes). */
  stop(): void {
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.partialTimer = null;
    this.partialText = '';
  }

  private addPartial(delta: string): void {
    this.partialText += delta;
    if (this.partialTimer) return;
    this.partialTimer = setTimeout(() => {
      this.partialTimer = null;
      const text = this.partialText;
      this.partialText = '';
      if (text) this.sink.partial(text);
    }, PARTIAL_EVERY_MS);
  }
}
