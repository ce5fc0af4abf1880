// A scripted flock behind both model stand-ins: the Sentry's triage, the
// crows' answers, the Elder's merge and banter, chosen from what the request
// asks, so a test writes its list and reads the events. Directives in an
// item's text steer it:
//
//   "murder" / "split"        the Sentry's mode (else solo)
//   "code", "research", ...    the task type (else writing)
//   "crowfail"                 every worker call of it answers 500 (retried, then ok:false)
//   "sentryfail"               the Sentry's call answers 500
//   "slow"                     a worker's answer takes `slowMs` (default 1500 ms)
//   "hang"                     a worker's answer takes 60 s (a restart mid-flight)
//   "offtopic", "unsourced", "contradicts" in a crow's nest message: the
//                              watchdog's scores breach (watch_scores; else they pass)
//
// Nest calls (the message answered follows the prompt's last `>>> `; only its
// text steers): a crow's `respond` delivers (`pleaseclaim`: claims,
// `pleasedecline`: declines; a conspiracy's answer names its reading),
// Quill's `quill` delivers unless the text says `relay to <Name>`, the Boss's
// `order` is `SPIN` for `spin <Name> on <Persona> [as <trust>]`, else a
// `REPLY`; `hold` makes the answer wait for `BrainOptions.hold`, `nestfail`
// answers 500.
//
// A banter call gets a line; usage is the stand-ins' default (10 in, 5 out)
// unless `tokens` says otherwise.

import { AnthropicProvider, OpenAIProvider, withRetries, type ModelProvider } from '../../src/models/index.js';
import { ModelRoster, parseModelSpec } from '../../src/models/config.js';
import { modelStandin, text, toolUse, type ModelStandin, type RecordedRequest, type Reply } from './model-standin.js';
import { openaiStandin, type OaReply, type OaRequest, type OpenAIStandin } from './openai-standin.js';

/** A script step that answers every request (it never counts as used), choosing its reply from the request. */
function always<Q, R>(reply: (req: Q) => R): { reply: (req: Q) => R; when: () => boolean; used: boolean } {
  return {
    reply,
    when: () => true,
    get used() {
      return false;
    },
    set used(_: boolean) {},
  };
}

export interface BrainOptions {
  slowMs?: number;
  /** Usage of each call: prompt and completion tokens. */
  tokens?: { input: number; output: number };
  /** Banter lines answer this instead (e.g. '' for an unusable line). */
  banter?: string;
  /** Nest answers to a message saying "hold" wait for this. */
  hold?: Promise<unknown>;
}

type Decision =
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  | { kind: 'text'; text: string }
  | { kind: 'error'; status: number }
  | { kind: 'wait'; ms: number; then: Decision }
  | { kind: 'hold'; then: Decision };

const TYPES = ['code', 'research', 'writing', 'review', 'planning', 'data', 'other'];

/** A nest call's answer, steered by the text of the message it answers. */
function nestDecide(system: string, asked: string, tool: string | null): Decision {
  const crow = /^You are ([^,]+),/.exec(system)?.[1] ?? 'someone';
  if (asked.includes('nestfail')) return { kind: 'error', status: 500 };
  let d: Decision;
  if (tool === 'respond') {
    const reading = /reading (\d) of (\d)/.exec(system);
    const kind = asked.includes('pleasedecline') ? 'decline' : asked.includes('pleaseclaim') ? 'claim' : 'deliver';
    const text = kind === 'decline' ? "Sorry, I can't do this: no access." : kind === 'claim' ? "I'll take this one." : `Delivered: ${crow}'s answer is below.${reading ? ` Reading ${reading[1]} of ${reading[2]}.` : ''}`;
    d = { kind: 'tool', name: 'respond', input: { kind, text } };
  } else if (tool === 'quill') {
    const m = /relay to ([A-Za-z]+)/.exec(asked);
    d = { kind: 'tool', name: 'quill', input: m ? { action: 'relay', crow: m[1], text: 'Please write the launch email for the owner.' } : { action: 'deliver', crow: '', text: 'Delivered: the summary is below.' } };
  } else if (tool === 'order') {
    const m = /spin (\S+) on (\S+?)(?: as (\w+))?[.!]?$/m.exec(asked);
    d = { kind: 'tool', name: 'order', input: m ? { order: 'SPIN', name: m[1], persona: m[2], trust: m[3] ?? 'stranger' } : { order: 'REPLY', text: 'The flock has what it needs.' } };
  } else d = { kind: 'text', text: `${crow} answers: done.` };
  return asked.includes('hold') ? { kind: 'hold', then: d } : d;
}

function decide(system: string, user: string, tool: string | null, o: BrainOptions): Decision {
  const marker = user.lastIndexOf('>>> ');
  if (marker >= 0) return nestDecide(system, user.slice(marker), tool);
  if (tool === 'triage') {
    if (user.includes('sentryfail')) return { kind: 'error', status: 500 };
    const mode = user.includes('murder') ? 'murder' : user.includes('split') ? 'split' : 'solo';
    const task_type = TYPES.find((t) => user.includes(t)) ?? 'writing';
    return { kind: 'tool', name: 'triage', input: { mode, task_type, subtasks: mode === 'split' ? ['first half', 'second half'] : [], reason: `looks like ${task_type}` } };
  }
  if (tool === 'watch_scores') {
    // The watchdog scores the crow's message (after its mark): "offtopic", "unsourced", "contradicts" steer a breach.
    const said = user.slice(user.lastIndexOf("The crow's message to score"));
    return {
      kind: 'tool',
      name: 'watch_scores',
      input: { answers_request: said.includes('offtopic') ? 0.1 : 0.9, states_fact_without_source: said.includes('unsourced') ? 0.95 : 0.1, contradicts_earlier: said.includes('contradicts') ? 0.9 : 0.05 },
    };
  }
  if (tool === 'merge') return { kind: 'tool', name: 'merge', input: { answer: 'merged: ' + user.split('\n## ').slice(1).map((s) => s.split('\n')[0]).join(' + ') } };
  const crow = /^You are ([^,]+),/.exec(system)?.[1] ?? 'someone';
  if (system.includes('Write one short line')) return { kind: 'text', text: o.banter ?? `${crow} says: not bad, for a crow.` };
  if (user.includes('crowfail')) return { kind: 'error', status: 500 };
  const answer: Decision = { kind: 'text', text: `${crow} did: ${user.split('\n')[0]}${user.includes('subtask') ? ` (${/subtask (\d)/.exec(user)?.[1]})` : ''}` };
  if (user.includes('hang')) return { kind: 'wait', ms: 60_000, then: answer };
  if (user.includes('slow')) return { kind: 'wait', ms: o.slowMs ?? 1500, then: answer };
  return answer;
}

function anthropicReply(d: Decision, o: BrainOptions): Reply {
  const usage = o.tokens ? { input_tokens: o.tokens.input, output_tokens: o.tokens.output } : undefined;
  switch (d.kind) {
    case 'tool':
      return { ...toolUse(d.name, d.input), usage };
    case 'text':
      return { ...text(d.text), usage };
    case 'error':
      return { content: [], error: { status: d.status } };
    case 'wait':
      return { ...anthropicReply(d.then, o), delayMs: d.ms };
    case 'hold':
      return { ...anthropicReply(d.then, o), until: o.hold };
  }
}

function openaiReply(d: Decision, o: BrainOptions): OaReply {
  const usage = o.tokens ? { prompt_tokens: o.tokens.input, completion_tokens: o.tokens.output } : undefined;
  switch (d.kind) {
    case 'tool':
      return { toolCall: { name: d.name, arguments: d.input }, usage };
    case 'text':
      return { content: d.text, usage };
    case 'error':
      return { error: { status: d.status } };
    case 'wait':
      return { ...openaiReply(d.then, o), delayMs: d.ms };
    case 'hold':
      return { ...openaiReply(d.then, o), until: o.hold };
  }
}

const anthropicAsk = (r: RecordedRequest) => {
  const b = r.body ?? {};
  const system = typeof b.system === 'string' ? b.system : Array.isArray(b.system) ? b.system.map((x: any) => x?.text ?? '').join('') : '';
  const m = (b.messages ?? [])[0]?.content;
  const user = typeof m === 'string' ? m : Array.isArray(m) ? m.map((x: any) => x?.text ?? '').join('') : '';
  return { system, user, tool: (b.tools ?? [])[0]?.name ?? null };
};

const openaiAsk = (r: OaRequest) => {
  const msgs: any[] = r.body?.messages ?? [];
  return { system: msgs.find((m) => m.role === 'system')?.content ?? '', user: msgs.find((m) => m.role === 'user')?.content ?? '', tool: r.body?.tools?.[0]?.function?.name ?? null };
};

export interface FlockModel {
  kind: 'anthropic' | 'openai';
  url: string;
  /** Requests received, as (system, user, tool). */
  asks(): { system: string; user: string; tool: string | null }[];
  roster(retry?: { attempts?: number; baseMs?: number; maxMs?: number }): ModelRoster;
  /** The `--model` spec of this stand-in. */
  spec: string;
  close(): Promise<void>;
}

export async function flockModel(kind: 'anthropic' | 'openai', o: BrainOptions = {}): Promise<FlockModel> {
  let standin: ModelStandin | OpenAIStandin;
  let asks: () => { system: string; user: string; tool: string | null }[];
  let spec: string;
  let make: () => ModelProvider;
  if (kind === 'anthropic') {
    const s = await modelStandin([always<RecordedRequest, Reply>((r) => { const a = anthropicAsk(r); return anthropicReply(decide(a.system, a.user, a.tool, o), o); })]);
    standin = s;
    asks = () => s.requests.map(anthropicAsk);
    spec = `anthropic:claude-standin@${s.url}`;
    make = () => new AnthropicProvider({ model: 'claude-standin', label: spec, baseURL: s.url, apiKey: 'test-key' });
  } else {
    const s = await openaiStandin([always<OaRequest, OaReply>((r) => { const a = openaiAsk(r); return openaiReply(decide(a.system, a.user, a.tool, o), o); })]);
    standin = s;
    asks = () => s.requests.map(openaiAsk);
    spec = `openai:standin-7b@${s.url}/v1`;
    make = () => new OpenAIProvider({ model: 'standin-7b', label: spec, baseURL: `${s.url}/v1`, apiKey: 'test-key' });
  }
  return {
    kind,
    url: standin.url,
    asks,
    spec,
    roster: (retry = { attempts: 2, baseMs: 20, maxMs: 50 }) => {
      const p = parseModelSpec(spec);
      if (!p.ok) throw new Error(p.message);
      return new ModelRoster({ default: p.value, roles: {} }, { make: () => withRetries(make(), retry) });
    },
    close: () => standin.close(),
  };
}
