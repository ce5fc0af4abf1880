// A scripted stand-in of the OpenAI Responses API, so tests can drive the real
// Codex CLI with no network: `POST /v1/responses` answered with a streaming
// (SSE) Responses answer chosen by a script, every request recorded.
//
// Codex takes it as a custom model provider (see test/support/codex.ts):
//   [model_providers.standin] base_url = "<url>/v1", wire_api = "responses"
//
// How a reply is chosen: the first unused step whose `when(request)` holds is
// consumed; a request no step matches gets the fallback (a short text that
// ends the turn), so a script never hangs the CLI.
//
// What Codex 0.171.0 sends (found with the real binary): one POST per model
// turn with `stream: true`, `input` (the whole conversation: developer and
// user messages, `function_call` and `function_call_output` items), `tools`
// (`exec_command`, the `multi_agent_v1` namespace with `spawn_agent` and
// `wait_agent`, ...), and a header `x-codex-turn-metadata` whose JSON names the
// session and the thread: a subagent's requests carry the subagent's thread id
// under the same session id. It reads `response.output_item.done` items and the
// `usage` of `response.completed`.

import { delayed, jsonOf, serveScripted, takeStep, type ScriptStep, type Scripted } from './scripted.js';

export interface RUsage {
  input_tokens: number;
  /** Of input_tokens, read from the provider's prompt cache. */
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export interface RReply {
  /** A text answer (ends the turn). */
  text?: string;
  /** A function call (`namespace` for namespaced tools such as multi_agent_v1's). */
  call?: { name: string; args: Record<string, unknown>; namespace?: string; callId?: string };
  /** Usage figures (default 100 in of which 20 cached, 7 out). */
  usage?: Partial<RUsage>;
  delayMs?: number;
}

export interface RRequest {
  path: string;
  body: any;
  headers: Record<string, string | string[] | undefined>;
  /** `x-codex-turn-metadata`, parsed ({} when absent). */
  meta: Record<string, unknown>;
  /** Which step answered it, or -1 for the fallback. */
  step: number;
  /** The usage this request was answered with. */
  usage: RUsage;
}

export type RStep = ScriptStep<RRequest, RReply>;

export function rStep(reply: RStep['reply'], when?: RStep['when']): RStep {
  return { reply, when };
}
export const rText = (text: string, usage?: Partial<RUsage>): RReply => ({ text, usage });
export const rCall = (name: string, args: Record<string, unknown>, opts: { namespace?: string; callId?: string; usage?: Partial<RUsage> } = {}): RReply => ({
  call: { name, args, namespace: opts.namespace, callId: opts.callId },
  usage: opts.usage,
});

// ---------------------------------------------------------------- request predicates

/** A subagent's request: its thread is not the session's main thread. */
export const isChild = (r: RRequest) => typeof r.meta.thread_id === 'string' && typeof r.meta.session_id === 'string' && r.meta.thread_id !== r.meta.session_id;
export const isMain = (r: RRequest) => !isChild(r);
/** The request carries the output of call `callId`. */
export const hasOutput = (callId: string) => (r: RRequest) => (r.body?.input ?? []).some((i: any) => i?.type === 'function_call_output' && i.call_id === callId);
/** Every function_call_output in the request, by call id. */
export function outputs(r: RRequest): Map<string, string> {
  const m = new Map<string, string>();
  for (const i of r.body?.input ?? []) if (i?.type === 'function_call_output') m.set(i.call_id, typeof i.output === 'string' ? i.output : JSON.stringify(i.output));
  return m;
}
export const allOf =
  (...ps: ((r: RRequest) => boolean)[]) =>
  (r: RRequest) =>
    ps.every((p) => p(r));
export const notR = (p: (r: RRequest) => boolean) => (r: RRequest) => !p(r);

// ---------------------------------------------------------------- the server

export type ResponsesStandin = Scripted<RRequest, RStep>;

function sse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export async function responsesStandin(script: RStep[] = [], opts: { fallback?: RReply } = {}): Promise<ResponsesStandin> {
  const steps = [...script];
  const requests: RRequest[] = [];
  const fallback = opts.fallback ?? rText('ok');
  let seq = 0;
  return serveScripted(steps, requests, async (req, res, url, raw) => {
    if (req.method !== 'POST' || !url.pathname.endsWith('/responses')) {
      // Model listings and anything else: nothing here (Codex goes on without them).
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'stand-in', type: 'not_found' } }));
      return;
    }
    const body = jsonOf(raw);
    let meta: Record<string, unknown> = {};
    try {
      meta = JSON.parse(String(req.headers['x-codex-turn-metadata'] ?? '{}'));
    } catch {}
    const rec: RRequest = { path: url.pathname, body, headers: req.headers, meta, step: -1, usage: { input_tokens: 0, cached_tokens: 0, output_tokens: 0, reasoning_tokens: 0 } };
    requests.push(rec);
    const reply = takeStep(steps, rec) ?? fallback;
    if (!(await delayed(res, reply))) return; // the client gave up (a timeout or an abort)
    const n = ++seq;
    const u: RUsage = { input_tokens: 100, cached_tokens: 20, output_tokens: 7, reasoning_tokens: 0, ...(reply.usage ?? {}) };
    rec.usage = u;
    const id = `resp_standin_${n}`;
    let item: Record<string, unknown>;
    if (reply.call) {
      item = {
        type: 'function_call',
        id: `fc_standin_${n}`,
        call_id: reply.call.callId ?? `call_standin_${n}`,
        name: reply.call.name,
        ...(reply.call.namespace ? { namespace: reply.call.namespace } : {}),
        arguments: JSON.stringify(reply.call.args),
        status: 'completed',
      };
    } else {
      item = { type: 'message', id: `msg_standin_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text ?? '', annotations: [] }] };
    }
    let out = sse('response.created', { response: { id, object: 'response', status: 'in_progress', output: [] } });
    out += sse('response.output_item.added', { output_index: 0, item: reply.call ? { ...item, arguments: '' } : { ...item, content: [] } });
    if (!reply.call) out += sse('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: reply.text ?? '' });
    out += sse('response.output_item.done', { output_index: 0, item });
    out += sse('response.completed', {
      response: {
        id,
        object: 'response',
        status: 'completed',
        output: [item],
        usage: {
          input_tokens: u.input_tokens,
          input_tokens_details: { cached_tokens: u.cached_tokens },
          output_tokens: u.output_tokens,
          output_tokens_details: { reasoning_tokens: u.reasoning_tokens },
          total_tokens: u.input_tokens + u.output_tokens,
        },
      },
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(out);
  });
}
