// The demo model: an offline, scripted provider behind the one provider
// interface (types.ts), so `roost serve --demo` (or `--model demo`) shows the
// flock flying lists and talking in nests with no key and no network. It is
// named "demo model" wherever a model's name appears (its label, its model,
// so the flock view and the Cost page say so), and it is chosen only by
// `--demo` or `--model demo` (config.ts): never as a fallback.
//
// What it answers: for a forced tool call, an input that passes the tool's
// schema, filled in from the request for the flock's known tools (triage,
// respond, quill, order, merge, watch_scores) and from the schema alone for
// any other; for text, a short answer built from the request's last message.
// It takes a moment per call (600 ms to 1.5 s, its own clock) so a person
// can follow the flock, streams its text when asked, and reports usage as
// estimates (about four characters a token), marked `estimated`.

import type { TSchema } from '@sinclair/typebox';
import { checkToolInput } from './common.js';
import { DEFAULT_TIMEOUT_MS, type ModelCapabilities, type ModelOutcome, type ModelProvider, type ModelRequest, type ModelUsage } from './types.js';

/** The name the demo model goes by everywhere (flock view, Cost page, logs). */
export const DEMO_MODEL_NAME = 'demo model';

type Obj = Record<string, unknown>;

function usageOf(req: ModelRequest, out: string): ModelUsage {
  let chars = req.system.length;
  for (const m of req.messages) chars += m.content.length;
  const input = Math.ceil(chars / 4);
  const output = Math.ceil(out.length / 4);
  return { input, output, cacheRead: 0, cacheWrite: 0, total: input + output, estimated: true };
}

/** The message a call answers: the part after the nest's `>>> ` marker, else the last user message. */
function asked(req: ModelRequest): string {
  const last = req.messages[req.messages.length - 1]?.content ?? '';
  const at = last.lastIndexOf('>>> ');
  const body = at >= 0 ? last.slice(last.indexOf('\n', at) + 1) : last;
  return body.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** Who the system prompt says is speaking (`You are Pepper, …`), for a line in character. */
function speaker(req: ModelRequest): string {
  return /You are ([A-Z][\w-]{0,30})/.exec(req.system)?.[1] ?? 'The crow';
}

/** Answers for the demo's own requests, by a word in them; anything else gets one of ANSWERS. */
const KNOWN: [RegExp, string][] = [
  [/tagline/i, '1) Refunds that fit every invoice. 2) Search that finds it on the first try. 3) Release 2.4: less waiting, more shipping.'],
  [/subject line/i, '"2.4 is out: partial refunds and a faster search"'],
  [/summary of the refund/i, 'Customers can now get part of a split invoice back. Support can refund one line without cancelling the rest.'],
  [/changelog/i, 'Partial refunds: refund one line of a split invoice without touching the others.'],
  [/refund emails/i, 'Most shops lead with the amount and the date it lands; the friendliest add one line on why it takes a few days.'],
  [/beta of the new search/i, 'Week 1: 5% of traffic, watch zero-result rate. Week 2: 25% if it stays under 2%. Week 3: everyone.'],
  [/onboarding email/i, 'The tone is warm but long: cut the second paragraph and move the button up.'],
  [/naming/i, 'Sparrow, Raven, Roost: small to large, easy to remember.'],
];

const ANSWERS = [
  (t: string) => `Here is a first pass at "${t}": three points, most important first. 1) Say what changes for the reader. 2) Keep one example. 3) End with the next step.`,
  (t: string) => `Done: "${t}". I kept it short, checked it against the notes in the list, and flagged one open question for the reviewer.`,
  (t: string) => `My take on "${t}": the plain version works; the risky part is the edge case nobody wrote down, so I added a line about it.`,
];

/** Banter: one line between crows (the request asks for "one short line"). */
const BANTER = ['Your turn, and mind the edge cases.', 'Nice landing. I would have said it shorter.', 'Done before the coffee cooled.', 'Check my numbers, I checked yours.'];

/**
 * A scripted answer to text, varied by the request so two items read
 * differently. A split's crow answers its own part (the work request's "Your
 * part of it (subtask n of m): ..."), so two parts of one item differ too.
 */
function answerFor(req: ModelRequest): string {
  const whole = asked(req);
  const part = /Your part of it \(subtask \d+ of \d+\): (.+)$/.exec(whole)?.[1]?.trim();
  const t = (part || whole).slice(0, 120) || 'the task';
  if (/one short line/i.test(req.system)) return BANTER[t.length % BANTER.length];
  for (const [re, text] of KNOWN) if (re.test(t)) return text;
  let h = 0;
  for (let i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) >>> 0;
  return ANSWERS[h % ANSWERS.length](t);
}

/** A value that passes `schema` (JSON Schema as TypeBox writes it), built from the schema alone. */
export function sampleOf(schema: TSchema, depth = 0): unknown {
  const s = schema as Obj;
  if (depth > 8) return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const union = (s.anyOf ?? s.oneOf) as TSchema[] | undefined;
  if (Array.isArray(union) && union.length) return sampleOf(union[0], depth + 1);
  switch (s.type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, TSchema>;
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props));
      const out: Obj = {};
      for (const [k, v] of Object.entries(props)) if (required.has(k)) out[k] = sampleOf(v, depth + 1);
      return out;
    }
    case 'array': {
      const n = typeof s.minItems === 'number' ? s.minItems : 0;
      return Array.from({ length: n }, () => sampleOf(s.items as TSchema, depth + 1));
    }
    case 'string': {
      const min = typeof s.minLength === 'number' ? s.minLength : 0;
      const max = typeof s.maxLength === 'number' ? s.maxLength : 200;
      const text = 'demo'.padEnd(min, '.');
      return text.slice(0, Math.max(min, Math.min(max, text.length)));
    }
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return null;
  }
}

/** The flock's known tools, answered from the request; anything else from its schema. */
function toolInput(req: ModelRequest): Obj {
  const tool = req.tool!;
  const t = asked(req);
  const words = t.toLowerCase();
  switch (tool.name) {
    case 'triage': {
      // Never `code`: a code item would start a Claude Code session, which the demo does not have.
      const task_type = /review|check/.test(words) ? 'review' : /research|compare|find/.test(words) ? 'research' : /plan|schedule/.test(words) ? 'planning' : 'writing';
      const parts = t.split(/\band\b|;/).map((x) => x.trim()).filter((x) => x.length > 2);
      if (parts.length >= 2) return { mode: 'split', task_type, subtasks: parts.slice(0, 4).map((p) => p.slice(0, 200)), reason: 'Two independent parts: one crow each.' };
      if (/ideas|options|names/.test(words)) return { mode: 'murder', task_type, subtasks: [], reason: 'Several views help here; the Elder merges them.' };
      return { mode: 'solo', task_type, subtasks: [], reason: 'One crow can do this well on its own.' };
    }
    case 'merge':
      return { answer: `Merged: ${answerFor(req)}` };
    case 'respond':
      return { kind: 'deliver', text: `${answerFor(req)} (${speaker(req)})` };
    case 'quill':
      return { action: 'deliver', crow: '', text: answerFor(req) };
    case 'order':
      return { order: 'REPLY', text: `Noted. The flock has what it needs for "${t.slice(0, 80)}".` };
    case 'watch_scores':
      return { answers_request: 0.92, states_fact_without_source: 0.06, contradicts_earlier: 0.03 };
    default:
      return sampleOf(tool.schema) as Obj;
  }
}

export interface DemoProviderOptions {
  /** The pause of a call, ms (default: 600 to 1500, drawn per call). */
  delayMs?: () => number;
}

/** The demo model (see the top of this file). */
export class DemoProvider implements ModelProvider {
  readonly provider = 'demo';
  readonly model = DEMO_MODEL_NAME;
  readonly label = DEMO_MODEL_NAME;
  readonly capabilities: ModelCapabilities = { structuredOutput: true, tokenUsage: false, streaming: true };
  private readonly delay: () => number;

  constructor(opts: DemoProviderOptions = {}) {
    this.delay = opts.delayMs ?? (() => 600 + Math.random() * 900);
  }

  async call(req: ModelRequest): Promise<ModelOutcome> {
    const model = this.model;
    const timeout = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const wait = Math.min(this.delay(), timeout);
    const stopped = await pause(wait, req.signal);
    if (stopped) return { ok: false, error: { kind: 'aborted', message: 'the call was aborted', retryable: false }, usage: usageOf(req, ''), model };
    if (req.tool) {
      const checked = checkToolInput(req.tool.schema, toolInput(req));
      if (!checked.ok) return { ok: false, error: { kind: 'bad_response', message: `the demo model has no answer for the tool "${req.tool.name}": ${checked.message}`, retryable: false }, usage: usageOf(req, ''), model };
      const input = checked.input;
      const text = JSON.stringify(input);
      return { ok: true, kind: 'tool', input, text: '', usage: usageOf(req, text), model, stop: 'tool' };
    }
    const text = answerFor(req).slice(0, Math.max(40, req.maxTokens * 4));
    if (req.onText) for (const piece of text.match(/.{1,24}(\s|$)/g) ?? [text]) req.onText(piece);
    return { ok: true, kind: 'text', text, usage: usageOf(req, text), model, stop: 'end' };
  }
}

/** Waits `ms`; true when the signal aborted first. */
function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((ok) => {
    if (signal?.aborted) return ok(true);
    const done = (aborted: boolean) => {
      clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
      ok(aborted);
    };
    const onAbort = () => done(true);
    const t = setTimeout(() => done(false), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
