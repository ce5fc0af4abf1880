// A scripted stand-in of the Anthropic Messages API, so tests can drive the
// real Claude Code CLI with no network: `POST /v1/messages` answered with a
// streaming (SSE) Messages response chosen by a script, every request recorded.
//
// Usage:
//   const model = await modelStandin([
//     step(toolUse('Bash', { command: 'echo hi' })),                 // first turn
//     step(text('All done.'), { after: 'tool_result' }),              // once a tool result came back
//   ]);
//   env ANTHROPIC_BASE_URL=model.url ...
//   model.requests     // what the model received, in order
//   await model.close();
//
// How a reply is chosen: the first unused step whose `when(request)` holds is
// consumed. Requests that no step matches (Claude Code's side requests such as
// title or topic checks, or an extra turn) get the fallback, a short text that
// ends the turn, so a script never hangs the CLI.
//
// For the model providers' contract suite (test/models.contract.ts) a reply can
// also carry its own usage figures (`usage`, or `null` to leave them out), an
// error answer (`error`: status, type, headers such as retry-after), or a raw
// body that is not JSON at all (`raw`).

import { delayed, jsonOf, serveScripted, takeStep, type ScriptStep, type Scripted } from './scripted.js';

export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface Reply {
  content: Block[];
  /** Defaults to `tool_use` when a tool_use block is present, else `end_turn`. */
  stop_reason?: 'end_turn' | 'tool_use' | 'max_tokens';
  /** Milliseconds to wait before answering (to hold a turn open). */
  delayMs?: number;
  /** Answer only once this settles (a test holding the answer back). */
  until?: Promise<unknown>;
  /** The usage figures to report (default 10 in, 5 out); `null` leaves them out of the answer. */
  usage?: Partial<Usage> | null;
  /** Answer with this error instead (the Messages API's error body). */
  error?: { status: number; type?: string; message?: string; headers?: Record<string, string> };
  /** Answer 200 with this body as it is (not JSON, say). */
  raw?: string;
  /**
   * Stream each text block as this many `text_delta` pieces, `everyMs` apart
   * (as a real model streams an answer); default: one delta, all at once.
   */
  pieces?: { count: number; everyMs: number };
}

export interface RecordedRequest {
  path: string;
  body: any;
  /** True when the CLI asked for a streaming response. */
  stream: boolean;
  /** Which step answered it (index into the script), or -1 for the fallback. */
  step: number;
}

export type Step = ScriptStep<RecordedRequest, Reply>;

let toolSeq = 0;

export function text(t: string): Reply {
  return { content: [{ type: 'text', text: t }] };
}

/** A reply calling one tool (`id` defaults to a fresh `toolu_standin_N`). */
export function toolUse(name: string, input: Record<string, unknown>, id = `toolu_standin_${++toolSeq}`): Reply {
  return { content: [{ type: 'tool_use', id, name, input }] };
}

// ---------------------------------------------------------------- request predicates

/** Every tool_result block the request carries (all messages). */
export function toolResults(req: RecordedRequest): { tool_use_id: string; content: string; is_error: boolean }[] {
  const out: { tool_use_id: string; content: string; is_error: boolean }[] = [];
  for (const m of req.body?.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b?.type !== 'tool_result') continue;
      const c = typeof b.content === 'string' ? b.content : Array.isArray(b.content) ? b.content.map((x: any) => x?.text ?? '').join('') : '';
      out.push({ tool_use_id: b.tool_use_id, content: c, is_error: b.is_error === true });
    }
  }
  return out;
}

/** All text the request carries in its messages and system prompt (for `includes` matching). */
export function allText(req: RecordedRequest): string {
  return JSON.stringify([req.body?.system ?? '', req.body?.messages ?? []]);
}

/** The request has a tool_result for `id`. */
export const hasResult = (id: string) => (req: RecordedRequest) => toolResults(req).some((r) => r.tool_use_id === id);
/** The request's first user message contains `s` (tells a subagent's conversation from its parent's). */
export const firstUserIncludes = (s: string) => (req: RecordedRequest) => JSON.stringify(req.body?.messages?.[0] ?? '').includes(s);
/** The request offers a tool named `name` (a main conversation, not a side request). */
export const offersTool = (name: string) => (req: RecordedRequest) => (req.body?.tools ?? []).some((t: any) => t?.name === name);

export const and =
  (...ps: ((r: RecordedRequest) => boolean)[]) =>
  (r: RecordedRequest) =>
    ps.every((p) => p(r));
export const not = (p: (r: RecordedRequest) => boolean) => (r: RecordedRequest) => !p(r);

export function step(reply: Step['reply'], when?: Step['when']): Step {
  return { reply, when };
}

// ---------------------------------------------------------------- the server

export type ModelStandin = Scripted<RecordedRequest, Step>;

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function usage(r?: Reply): Usage | undefined {
  if (r?.usage === null) return undefined;
  return { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...(r?.usage ?? {}) };
}

/** A streaming reply as SSE chunks, each with the pause to take before writing it. */
function streamReply(model: string, r: Reply, id: string): { wait: number; data: string }[] {
  const stop = r.stop_reason ?? (r.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const u = usage(r);
  const out: { wait: number; data: string }[] = [];
  const push = (event: string, data: unknown, wait = 0) => out.push({ wait, data: sse(event, data) });
  push('message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, ...(u ? { usage: u } : {}) },
  });
  r.content.forEach((b, index) => {
    if (b.type === 'text') {
      push('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      const n = Math.max(1, Math.min(r.pieces?.count ?? 1, b.text.length));
      for (let i = 0; i < n; i++) {
        const piece = b.text.slice(Math.floor((i * b.text.length) / n), Math.floor(((i + 1) * b.text.length) / n));
        push('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }, i > 0 ? (r.pieces?.everyMs ?? 0) : 0);
      }
    } else {
      push('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      push('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    push('content_block_stop', { type: 'content_block_stop', index });
  });
  push('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, ...(u ? { usage: { output_tokens: u.output_tokens } } : {}) });
  push('message_stop', { type: 'message_stop' });
  return out;
}

export async function modelStandin(script: Step[] = [], opts: { fallback?: Reply } = {}): Promise<ModelStandin> {
  const steps = [...script];
  const requests: RecordedRequest[] = [];
  const fallback = opts.fallback ?? text('ok');
  let msgSeq = 0;
  return serveScripted(steps, requests, async (req, res, url, raw) => {
    if (req.method !== 'POST' || !url.pathname.endsWith('/v1/messages')) {
      // count_tokens and anything else: a harmless answer.
      res.writeHead(url.pathname.endsWith('/count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(url.pathname.endsWith('/count_tokens') ? { input_tokens: 10 } : { type: 'error', error: { type: 'not_found_error', message: 'stand-in' } }));
      return;
    }
    const body = jsonOf(raw);
    const rec: RecordedRequest = { path: url.pathname + url.search, body, stream: body?.stream === true, step: -1 };
    requests.push(rec);
    const reply = takeStep(steps, rec) ?? fallback;
    if (!(await delayed(res, reply))) return; // the client gave up (a timeout or an abort)
    if (reply.error) {
      const e = reply.error;
      res.writeHead(e.status, { 'content-type': 'application/json', ...(e.headers ?? {}) });
      res.end(JSON.stringify({ type: 'error', error: { type: e.type ?? 'api_error', message: e.message ?? `stand-in error ${e.status}` } }));
      return;
    }
    if (reply.raw !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(reply.raw);
      return;
    }
    const id = `msg_standin_${++msgSeq}`;
    const model = typeof body?.model === 'string' ? body.model : 'claude-standin';
    if (rec.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const c of streamReply(model, reply, id)) {
        if (c.wait) await new Promise((r) => setTimeout(r, c.wait));
        if (res.destroyed) return;
        res.write(c.data);
      }
      res.end();
    } else {
      const stop = reply.stop_reason ?? (reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
      res.writeHead(200, { 'content-type': 'application/json' });
      const u = usage(reply);
      res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content: reply.content, stop_reason: stop, stop_sequence: null, ...(u ? { usage: u } : {}) }));
    }
  });
}

/** The text of the last user message that is not a tool result (what the member asked last). */
export function lastAsk(req: RecordedRequest): string {
  const msgs: any[] = req.body?.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const t = (m.content ?? []).filter((b: any) => b?.type === 'text').map((b: any) => b.text).join('');
    if (t) return t;
  }
  return '';
}

/** A request that offers Bash and whose last ask contains `marker`. */
export const askedWithBash = (marker: string) => and(offersTool('Bash'), (r: RecordedRequest) => lastAsk(r).includes(marker));
