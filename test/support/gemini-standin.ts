// A scripted stand-in of the Gemini API (generativelanguage v1beta), so tests
// can drive the real Gemini CLI with no network:
// `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (and the plain
// `:generateContent`) answered by a script, every request recorded.
//
// The Gemini CLI takes it through `GOOGLE_GEMINI_BASE_URL` with the
// `gemini-api-key` auth type selected in its settings (test/support/gemini.ts).
//
// What Gemini CLI 0.61.0 sends (found with the real CLI): `contents` (the
// conversation: user text, the model's `functionCall` parts, `functionResponse`
// parts), `systemInstruction`, `tools` (`functionDeclarations`: read_file,
// run_shell_command with `--approval-mode yolo`, invoke_agent, ...),
// `generationConfig`. A subagent (invoke_agent) is a new conversation whose
// first user text is the prompt it was given, and it ends by calling
// `complete_task`. Requests for JSON (`responseMimeType: application/json`:
// the model router, the next-speaker check) get `{}` unless a step answers them.

import { delayed, jsonOf, serveScripted, takeStep, type ScriptStep, type Scripted } from './scripted.js';

export interface GUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount: number;
  thoughtsTokenCount: number;
}

export interface GReply {
  text?: string;
  call?: { name: string; args: Record<string, unknown> };
  usage?: Partial<GUsage>;
  delayMs?: number;
}

export interface GRequest {
  path: string;
  model: string;
  body: any;
  /** A request for a JSON answer (a side request, not a turn). */
  json: boolean;
  step: number;
  usage: GUsage;
}

export type GStep = ScriptStep<GRequest, GReply>;

export const gStep = (reply: GStep['reply'], when?: GStep['when']): GStep => ({ reply, when });
export const gText = (text: string, usage?: Partial<GUsage>): GReply => ({ text, usage });
export const gCall = (name: string, args: Record<string, unknown>, usage?: Partial<GUsage>): GReply => ({ call: { name, args }, usage });

// ---------------------------------------------------------------- request predicates

function textOf(c: any): string {
  return (c?.parts ?? []).map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
}
/** The conversation's first user text contains `s` (a subagent's conversation starts with its prompt). */
export const gFirstUserIncludes = (s: string) => (r: GRequest) => textOf((r.body?.contents ?? []).find((c: any) => c?.role === 'user')).includes(s);
/** The request carries a functionResponse for the tool `name`. */
export const gHasResponse = (name: string) => (r: GRequest) => (r.body?.contents ?? []).some((c: any) => (c?.parts ?? []).some((p: any) => p?.functionResponse?.name === name));
/** The functionResponses the request carries, in order. */
export function gResponses(r: GRequest): { name: string; response: any }[] {
  const out: { name: string; response: any }[] = [];
  for (const c of r.body?.contents ?? []) for (const p of c?.parts ?? []) if (p?.functionResponse) out.push({ name: p.functionResponse.name, response: p.functionResponse.response });
  return out;
}
export const gAll =
  (...ps: ((r: GRequest) => boolean)[]) =>
  (r: GRequest) =>
    ps.every((p) => p(r));
export const gNot = (p: (r: GRequest) => boolean) => (r: GRequest) => !p(r);

// ---------------------------------------------------------------- the server

export type GeminiStandin = Scripted<GRequest, GStep>;

export async function geminiStandin(script: GStep[] = [], opts: { fallback?: GReply } = {}): Promise<GeminiStandin> {
  const steps = [...script];
  const requests: GRequest[] = [];
  const fallback = opts.fallback ?? gText('ok');
  let seq = 0;
  return serveScripted(steps, requests, async (req, res, url, raw) => {
    const m = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: 'stand-in', status: 'NOT_FOUND' } }));
      return;
    }
    if (m[2] === 'countTokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ totalTokens: 10 }));
      return;
    }
    const body = jsonOf(raw);
    const json = body?.generationConfig?.responseMimeType === 'application/json';
    const rec: GRequest = { path: url.pathname, model: decodeURIComponent(m[1]), body, json, step: -1, usage: { promptTokenCount: 0, candidatesTokenCount: 0, cachedContentTokenCount: 0, thoughtsTokenCount: 0 } };
    requests.push(rec);
    const reply: GReply = takeStep(steps, rec, (st) => !json || !!st.when) ?? (json ? gText('{}') : fallback);
    if (!(await delayed(res, reply))) return;
    const n = ++seq;
    const u: GUsage = { promptTokenCount: 100, candidatesTokenCount: 7, cachedContentTokenCount: 20, thoughtsTokenCount: 0, ...(reply.usage ?? {}) };
    rec.usage = u;
    const parts = reply.call ? [{ functionCall: { name: reply.call.name, args: reply.call.args } }] : [{ text: reply.text ?? '' }];
    const chunk = {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: u.promptTokenCount,
        candidatesTokenCount: u.candidatesTokenCount,
        cachedContentTokenCount: u.cachedContentTokenCount,
        ...(u.thoughtsTokenCount ? { thoughtsTokenCount: u.thoughtsTokenCount } : {}),
        totalTokenCount: u.promptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount,
      },
      modelVersion: rec.model,
      responseId: `standin-${n}`,
    };
    if (m[2] === 'streamGenerateContent') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(chunk));
    }
  });
}
