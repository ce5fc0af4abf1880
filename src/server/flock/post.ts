// Checking a nest post (spec/flock-events.md, "Guardrails" and "Tagging"):
// the one check every post goes through, whoever makes it: the HTTP route
// (`POST /api/nests/{id}/messages`) and the nest driver posting a crow's
// answer (nest-driver.ts).

import { Type } from '@sinclair/typebox';
import { CROW_KINDS, FLOCK_LIMITS, isCrow, isWorkerCrow, NEST_KINDS, NEST_MODES, TODO_NEST, type FlockState } from '../../core/flock.js';
import { isMemberAuthor } from '../../core/nest-people.js';
import { SERVICE_NAMES, WORKER_NAMES } from '../../core/personas.js';
import { HttpError } from '../http.js';
import { decideTag, type Jev, type JevAnswer, type JevKind } from './jev.js';

export const MessageBody = Type.Object({
  /** Over HTTP, checked against the caller (routes.ts); absent, the caller's own label. */
  author: Type.String({ minLength: 1, maxLength: FLOCK_LIMITS.requester }),
  text: Type.String({ maxLength: FLOCK_LIMITS.messageText * 4 }),
  to: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.to * 4 })),
  kind: Type.Optional(Type.String({ maxLength: 40 })),
  refers_to: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.id * 2 })),
  approval_phrase: Type.Optional(Type.String({ maxLength: FLOCK_LIMITS.phrase * 2 })),
  mode: Type.Optional(Type.String({ maxLength: 40 })),
  invited: Type.Optional(Type.Integer({ minimum: 1, maximum: FLOCK_LIMITS.murderSize })),
});

/** Roles that serve every nest and may park an `ask_owner` there (never members). */
export const ASKERS = ['Quill', 'Sentry'];

const bad = (message: string) => new HttpError(400, 'bad_request', message);

/**
 * Checks a post against the contract's guardrails and decides its kind and a
 * request's mode by the contract's rule (`decideTag`: Jev at or above the
 * band, else the header, else `say`). An `ask_owner` header (the owner's,
 * Quill's or the Sentry's) stands as it is: it carries the approval phrase.
 * Throws 400 or 403; the rate (429) is the caller's. `answer` is Jev's tags,
 * for the log.
 */
export async function checkPost(s: FlockState, nest_id: string, body: typeof MessageBody.static, jev: Jev, band: number): Promise<{ ev: Record<string, unknown>; answer: JevAnswer | null }> {
  const nest = s.nests.get(nest_id)!;
  const text = body.text.replace(/\r\n?/g, '\n').trim();
  if (text.length < 1 || text.length > FLOCK_LIMITS.messageText) throw bad(`"text" is 1 to ${FLOCK_LIMITS.messageText} characters after trimming`);
  const author = body.author.trim();
  const crow = isWorkerCrow(s, author);
  const asker = ASKERS.includes(author);
  // A person: the owner, or (shared mode) another member of the project (core/nest-people.ts).
  const member = isMemberAuthor(author);
  if (author !== 'owner' && !member && !crow && !asker) throw bad(`"${body.author.trim().slice(0, 40)}" may not post here: the author is "owner" or a member of the nest`);
  if (crow && !(nest_id === TODO_NEST || nest.core.includes(author) || nest.invited.has(author))) throw bad(`${author} is not a member of nest "${nest_id}"; post through the assistant or a member`);
  // The header: nudge and flag are never a poster's; a crow's ask_owner is dropped.
  let header = body.kind?.trim() ?? '';
  if (header !== '' && !(NEST_KINDS as readonly string[]).includes(header)) throw bad(`"kind" is one of ${CROW_KINDS.join(', ')} (or ask_owner for the owner, Quill and the Sentry)`);
  if (header === 'nudge' || header === 'flag') throw bad(`"${header}" is posted by the ${header === 'nudge' ? 'harness' : 'Sentry'} only`);
  // Only the owner and the owner-facing roles park an ask; a crow's or a member's header is dropped.
  if (header === 'ask_owner' && (crow || member)) header = '';
  if (asker && header !== 'ask_owner') throw bad(`${author} serves every nest and is never a member: it may post only ask_owner`);
  if (crow && s.quarantine.has(author)) throw new HttpError(403, 'forbidden', `${author} is quarantined pending the owner's decision.`);
  const crowHeader = header === 'ask_owner' ? '' : (header as JevKind | '');
  const answer = await jev.tag(text, { kind: header || undefined, mode: body.mode || undefined });
  const tag = header === 'ask_owner' ? { value: header, by: 'header' as const } : decideTag<string>(answer?.kindProbs, crowHeader, band, 'say');
  const kind = tag.value;
  const tagged_by = tag.by;
  let to = (body.to ?? '').trim();
  if (to.length > FLOCK_LIMITS.to || (to !== '' && to !== 'owner' && !isMemberAuthor(to) && !isCrow(s, to))) throw bad(`"to" is "", "owner", a member ("member:<name>") or a crow's name`);
  const refers_to = (body.refers_to ?? '').trim();
  if (refers_to !== '' && !nest.messages.has(refers_to)) throw bad(`"refers_to" names no message of nest "${nest_id}"`);
  // No `to`: "@Name" at the start of the text addresses that member; a claim or deliver answers the requester.
  if (to === '') to = addressedIn(s, text);
  if (to === '' && refers_to !== '' && (kind === 'claim' || kind === 'deliver')) {
    const asked = nest.messages.get(refers_to)!.author;
    if (asked !== author && (asked === 'owner' || isMemberAuthor(asked) || isCrow(s, asked))) to = asked;
  }
  const ev: Record<string, unknown> = { kind, author, text, to, refers_to, tagged_by };
  if (body.mode !== undefined && body.mode !== '' && !(NEST_MODES as readonly string[]).includes(body.mode)) throw bad(`"mode" is one of ${NEST_MODES.join(', ')}`);
  if (kind === 'request') {
    // Jev's mode, else the header's; neither: not yet classified (`mode: ""`, taken up as solo).
    const m = decideTag<string>(answer?.modeProbs, body.mode ?? '', band, '');
    ev.mode = m.value;
    if (m.value !== '') ev.mode_tagged_by = m.by;
    if (m.value === 'conspiracy' && body.invited !== undefined) ev.invited = body.invited;
  }
  if (kind === 'ask_owner') {
    const phrase = (body.approval_phrase ?? '').replace(/\s+/g, ' ').trim();
    if (!phrase || phrase.length > FLOCK_LIMITS.phrase) throw bad(`an ask_owner needs an "approval_phrase" of 1 to ${FLOCK_LIMITS.phrase} characters`);
    ev.approval_phrase = phrase;
  }
  return { ev, answer };
}

/**
 * The member a text addresses with "@Name" at its start ("" if none): a crow
 * (worker, spun, service role) or "owner", matched case-insensitively, the
 * longest name that ends at a word's end. Members of the project are
 * addressed by `to` (their names are not known to the flock).
 */
export function addressedIn(s: FlockState, text: string): string {
  if (!text.startsWith('@')) return '';
  const head = text.slice(1, 1 + FLOCK_LIMITS.crowName + 1).toLowerCase();
  let best = '';
  for (const name of ['owner', ...WORKER_NAMES, ...SERVICE_NAMES, ...s.spun.keys()]) {
    if (name.length <= best.length || !head.startsWith(name.toLowerCase())) continue;
    const next = head.charAt(name.length);
    if (next === '' || !/[a-z0-9'-]/.test(next)) best = name;
  }
  return best;
}
