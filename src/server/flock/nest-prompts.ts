// What the nest driver (nest-driver.ts) asks its models. Every decision is a
// forced tool call with a JSON Schema (TypeBox): a crow's answer to a request
// (`respond`), Quill's choice between answering and relaying (`quill`), the
// Boss's order (`order`, whose `SPIN` the harness executes). Pure: the
// driver makes the calls and checks what comes back.

import { Type, type Static } from '@sinclair/typebox';
import { FLOCK_LIMITS, TODO_NEST, type FlockState, type NestRecord } from '../../core/flock.js';
import { WORKER_NAMES } from '../../core/personas.js';
import type { ModelRequest } from '../../models/index.js';
import { who } from './prompts.js';

/** Output caps per call. */
export const NEST_MAX_TOKENS = { respond: 1500, quill: 1500, boss: 400, service: 1500 } as const;

/** Messages of the nest a call sees before the one it answers. */
const CONTEXT_MESSAGES = 12;
const CONTEXT_CHARS = 400;

export const RespondSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('deliver'), Type.Literal('claim'), Type.Literal('decline')]),
    text: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.messageText }),
  },
  { additionalProperties: false },
);
export type RespondInput = Static<typeof RespondSchema>;

export const QuillSchema = Type.Object(
  {
    action: Type.Union([Type.Literal('deliver'), Type.Literal('relay')]),
    /** relay: the member crow asked to do the work. */
    crow: Type.String({ maxLength: FLOCK_LIMITS.crowName * 2 }),
    /** deliver: the answer; relay: the request passed on to the crow. */
    text: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.messageText }),
  },
  { additionalProperties: false },
);
export type QuillInput = Static<typeof QuillSchema>;

/** The Boss's structured order: `SPIN {name, persona, trust}`, or a plain `REPLY`. */
export const OrderSchema = Type.Object(
  {
    order: Type.Union([Type.Literal('SPIN'), Type.Literal('REPLY')]),
    name: Type.Optional(Type.String({ maxLength: 100 })),
    persona: Type.Optional(Type.String({ maxLength: 100 })),
    trust: Type.Optional(Type.Union([Type.Literal('stranger'), Type.Literal('regular'), Type.Literal('trusted')])),
    text: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.messageText })),
  },
  { additionalProperties: false },
);
export type OrderInput = Static<typeof OrderSchema>;

/**
 * The lens of each reading of a conspiracy (at most MurderSize crows), so
 * the crows taking one request up at once read it distinctly.
 */
export const READINGS = [
  'the plainest reading: what was asked, taken literally, done as well as it can be',
  'a contrarian reading: question the premise and offer what a sceptic would',
  'a careful reading: look for the risks, edge cases and what the others will miss',
] as const;

function clip(t: string, n: number): string {
  return t.length > n ? `${t.slice(0, n)}…` : t;
}

/**
 * The nest as a call sees it: the last messages before `rec`, then `rec`
 * itself after a `>>> ` marker (the stand-ins and a reader find it there).
 */
function conversation(s: FlockState, nest_id: string, rec: NestRecord): string {
  const nest = s.nests.get(nest_id);
  const before: string[] = [];
  if (nest) {
    // Walk back from the message through the kept ones (numbers are consecutive from the oldest kept).
    for (let n = rec.n - 1; n >= 1 && before.length < CONTEXT_MESSAGES; n--) {
      const r = nest.messages.get(`${nest_id}-${n}`);
      if (!r) break;
      before.push(`${r.msg_id} ${r.author}${r.to ? ` → ${r.to}` : ''} [${r.kind}]: ${clip(r.text, CONTEXT_CHARS)}`);
    }
  }
  const head = before.length ? `Recent messages in the nest:\n${before.reverse().join('\n')}\n\n` : '';
  return `${head}>>> ${rec.msg_id} ${rec.author}${rec.to ? ` → ${rec.to}` : ' → the room'} [${rec.kind}]:\n${rec.text}`;
}

function nestName(s: FlockState, nest_id: string): string {
  return nest_id === TODO_NEST ? 'todo' : (s.nests.get(nest_id)?.name ?? nest_id);
}

/**
 * A working crow invoked to respond to a request (or a nudge). `reading` is
 * its reading of a conspiracy (1-based, of `of`), 0 otherwise.
 */
export function respondRequest(s: FlockState, nest_id: string, rec: NestRecord, crow: string, reading: number, of: number): ModelRequest {
  const lens = reading > 0 ? `\nThis request is a conspiracy: ${of} crows take it up at once, each with a distinct reading. Yours is reading ${reading} of ${of}: ${READINGS[(reading - 1) % READINGS.length]}. Keep to your reading; the others cover theirs.` : '';
  const what = rec.kind === 'nudge' ? `The harness nudges you about ${rec.refers_to || 'what you were asked'}: do what was expected of you.` : `${rec.author === 'owner' ? 'The owner' : rec.author} asks ${rec.to === crow ? 'you' : 'the room (you answer for it)'} for work.`;
  return {
    system:
      `${who(s, crow)}\nYou are in the nest "${nestName(s, nest_id)}", a room where people and crows talk in typed messages. ${what} ` +
      `Call the tool respond once: kind "deliver" with the result itself (no preamble) when you can do it now; "claim" when you take it on, saying what you will do; ` +
      `"decline" with the reason when you cannot or should not. At most ${FLOCK_LIMITS.messageText} characters.${lens}`,
    messages: [{ role: 'user', content: conversation(s, nest_id, rec) }],
    maxTokens: NEST_MAX_TOKENS.respond,
    tool: { name: 'respond', description: 'Your one answer to the request.', schema: RespondSchema },
  };
}

/** The members a relay may name: the core, the crows invited here, every crow in `todo`. */
export function relayable(s: FlockState, nest_id: string): string[] {
  const nest = s.nests.get(nest_id);
  if (!nest) return [];
  if (nest_id === TODO_NEST) return [...WORKER_NAMES, ...[...s.spun.keys()].sort()].filter((c) => !s.quarantine.has(c));
  return [...nest.core, ...nest.invited].filter((c) => !s.quarantine.has(c));
}

/** Quill, asked by the owner: answer it (deliver), or relay it to the member crow the owner asked to do the work. */
export function quillRequest(s: FlockState, nest_id: string, rec: NestRecord): ModelRequest {
  const members = relayable(s, nest_id);
  return {
    system:
      `${who(s, 'Quill')}\nYou are the assistant crow of the nest "${nestName(s, nest_id)}". The owner sent you a request. ` +
      `When the owner asks another crow to do the work ("ask Pepper to…", "get Hugin to…"), call the tool with action "relay", crow set to that crow's name, ` +
      `and text the request as that crow should read it. Otherwise do it yourself: action "deliver", crow "", text the result itself. ` +
      `The crows of this nest: ${members.join(', ') || 'none'}.`,
    messages: [{ role: 'user', content: conversation(s, nest_id, rec) }],
    maxTokens: NEST_MAX_TOKENS.quill,
    tool: { name: 'quill', description: 'Answer the request, or relay it to the crow the owner named.', schema: QuillSchema },
  };
}

/** A service role (Quill for a crow, the Sentry, the Elder) answering a request addressed to it: the answer itself. */
export function serviceRequest(s: FlockState, nest_id: string, rec: NestRecord, role: string): ModelRequest {
  return {
    system: `${who(s, role)}\nYou serve every nest of the flock; in the nest "${nestName(s, nest_id)}" ${rec.author === 'owner' ? 'the owner' : rec.author} asks you for something. Answer with the result itself, no preamble, at most ${FLOCK_LIMITS.messageText} characters.`,
    messages: [{ role: 'user', content: conversation(s, nest_id, rec) }],
    maxTokens: NEST_MAX_TOKENS.service,
  };
}

/** The Boss: a spin-up is a structured order the harness executes; anything else a plain reply. */
export function bossRequest(s: FlockState, nest_id: string, rec: NestRecord, cap: number = FLOCK_LIMITS.maxSpun): ModelRequest {
  const spun = [...s.spun.keys()].sort();
  return {
    system:
      `${who(s, 'Boss')}\nYou are the flock's chief of staff. Asked to spin up a new crow, call the tool with order "SPIN", the new crow's name, ` +
      `the persona it runs on (one of ${WORKER_NAMES.join(', ')}) and its starting trust ("stranger" or "regular"). Anything else: order "REPLY" with your answer in text. ` +
      `The flock has ${spun.length} spun crow${spun.length === 1 ? '' : 's'} (${spun.join(', ') || 'none'}) of at most ${cap}.`,
    messages: [{ role: 'user', content: conversation(s, nest_id, rec) }],
    maxTokens: NEST_MAX_TOKENS.boss,
    tool: { name: 'order', description: 'Your order: SPIN a new crow, or REPLY.', schema: OrderSchema },
  };
}
