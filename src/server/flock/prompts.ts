// What the flock asks its models: the Sentry's triage and the Elder's merge
// as forced tool calls with a JSON Schema (TypeBox), a crow's work and a
// banter line as text. Pure: the driver (service.ts) makes the calls.

import { Type, type Static } from '@sinclair/typebox';
import { FLOCK_LIMITS, TASK_TYPES, TRIAGE_MODES, type FlockItem, type FlockState, type Triage } from '../../core/flock.js';
import { personaOf, relationOf } from '../../core/personas.js';
import type { ModelRequest } from '../../models/index.js';

/** Output caps per call (the budget check counts them as the call's worst case). */
export const MAX_TOKENS = { triage: 600, work: 2000, merge: 3000, banter: 120 } as const;

export const TriageSchema = Type.Object(
  {
    mode: Type.Union(TRIAGE_MODES.map((m) => Type.Literal(m))),
    task_type: Type.Union(TASK_TYPES.map((t) => Type.Literal(t))),
    subtasks: Type.Array(Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.subtask }), { maxItems: FLOCK_LIMITS.maxSubtasks }),
    reason: Type.String({ maxLength: FLOCK_LIMITS.reason }),
  },
  { additionalProperties: false },
);
export type TriageInput = Static<typeof TriageSchema>;

export const MergeSchema = Type.Object({ answer: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.answer }) }, { additionalProperties: false });

/** The Sentry's call, made fit for the fold: a split needs 2–4 subtasks (else it is flown solo); only a split keeps subtasks. */
export function normalTriage(t: TriageInput): Omit<Triage, 'needs_approval'> {
  const subtasks = t.subtasks.map((s) => s.trim()).filter(Boolean).slice(0, FLOCK_LIMITS.maxSubtasks);
  const mode = t.mode === 'split' && subtasks.length < 2 ? 'solo' : t.mode;
  return { mode, task_type: t.task_type, subtasks: mode === 'split' ? subtasks : [], reason: t.reason.trim().slice(0, FLOCK_LIMITS.reason) };
}

/** Who a crow is, for its system prompt: its persona (a spun crow: its persona's habits under its own name). */
export function who(s: FlockState, crow: string): string {
  const p = personaOf(crow) ?? personaOf(s.spun.get(crow)?.persona);
  if (!p) return `You are ${crow}, a crow of the flock.`;
  return `You are ${crow}, ${p.epithet}, a crow of the flock. ${p.strength} ${p.backstory} You speak ${p.voice}.`;
}

export function triageRequest(s: FlockState, item: FlockItem): ModelRequest {
  return {
    system:
      `${who(s, 'Sentry')}\nYou triage one item of a todo list for the flock. Call the tool with: ` +
      `mode (solo: one crow; split: 2 to 4 independent subtasks, one crow each; murder: up to ${FLOCK_LIMITS.murderSize} crows answer the same task and the Elder merges them, for items where several views help), ` +
      `task_type (${TASK_TYPES.join(', ')}), subtasks (only for split), and a one-sentence reason.`,
    messages: [{ role: 'user', content: item.text }],
    maxTokens: MAX_TOKENS.triage,
    tool: { name: 'triage', description: 'Decide how the flock flies this item.', schema: TriageSchema },
  };
}

export function workRequest(s: FlockState, item: FlockItem, crow: string, subtask: number): ModelRequest {
  const t = item.triage;
  const part = t && t.mode === 'split' && subtask > 0 ? `\n\nYour part of it (subtask ${subtask} of ${t.subtasks.length}): ${t.subtasks[subtask - 1] ?? ''}` : '';
  return {
    system: `${who(s, crow)}\nYou do one task from a todo list and answer with the result itself: no preamble, at most ${FLOCK_LIMITS.output} characters.`,
    messages: [{ role: 'user', content: `${item.text}${part}` }],
    maxTokens: MAX_TOKENS.work,
  };
}

/**
 * What a code flight reserves of the list's budget while it flies: a Claude
 * Code session cannot be capped ahead the way a model call's output can, so
 * it holds this much; what it really used (its result's usage) is counted
 * when it lands, and may be more.
 */
export const CODE_RESERVE = 40_000;

/** The prompt of a code flight's Claude Code session: the item (and its part of a split), in the crow's name. */
export function codePrompt(s: FlockState, item: FlockItem, crow: string, subtask: number): string {
  const t = item.triage;
  const part = t && t.mode === 'split' && subtask > 0 ? `\n\nYour part of it (subtask ${subtask} of ${t.subtasks.length}): ${t.subtasks[subtask - 1] ?? ''}` : '';
  return (
    `${who(s, crow)} You fly ${item.item_id} of a todo list handed to Roost's flock, in a git worktree of your own. ` +
    `Do the task here; your last message is your answer to the person who reviews it: say what you changed, in at most ${FLOCK_LIMITS.output} characters.\n\n` +
    `${item.text}${part}`
  );
}

export function mergeRequest(s: FlockState, item: FlockItem): ModelRequest {
  const answers = [...item.flights.values()].filter((f) => f.role === 'work' && f.state === 'ok');
  return {
    system: `${who(s, 'Elder')}\nSeveral crows answered the same task. Merge their answers into one answer that keeps what each got right, and call the tool with it.`,
    messages: [{ role: 'user', content: `Task: ${item.text}\n\n${answers.map((f) => `## ${f.crow}\n${f.output}`).join('\n\n')}` }],
    maxTokens: MAX_TOKENS.merge,
    tool: { name: 'merge', description: 'The merged answer.', schema: MergeSchema },
  };
}

export function banterRequest(s: FlockState, item: FlockItem, crow: string, to: string, recent: string[]): ModelRequest {
  return {
    system: `${who(s, crow)}\n${to} is ${relationOf(crow, to)}. Write one short line, in character, that you say to ${to} about the work. One line, no quotes, under ${FLOCK_LIMITS.banterText} characters.`,
    messages: [{ role: 'user', content: `What just happened in the flock:\n${recent.slice(-6).join('\n')}\n\nThe item: ${item.text}` }],
    maxTokens: MAX_TOKENS.banter,
  };
}

/** The worst case a call may cost: its prompt (about four characters a token) plus its output cap. */
export function worstCase(req: ModelRequest): number {
  let chars = req.system.length;
  for (const m of req.messages) chars += m.content.length;
  if (req.tool) {
    // A tool's schema is one of a few constants: measured once each.
    let n = schemaChars.get(req.tool.schema);
    if (n === undefined) schemaChars.set(req.tool.schema, (n = JSON.stringify(req.tool.schema).length));
    chars += n;
  }
  return Math.ceil(chars / 4) + req.maxTokens;
}
const schemaChars = new WeakMap<object, number>();

/** One usable banter line, or '' (empty, several lines of talk, too long after trimming quotes). */
export function banterLine(text: string): string {
  const first = text.trim().split(/\r?\n/)[0]?.trim().replace(/^["'“]+|["'”]+$/g, '').trim() ?? '';
  if (!first || first.length > FLOCK_LIMITS.banterText || !/[\p{L}\p{N}]/u.test(first)) return '';
  return first;
}
