// Conversations: a project room created, a message posted (General Chat
// exists from a person's first), and a conversation linked from someone's
// General Chat to a project.

import { GENERAL, WORK_LIMITS, type Who } from './model.js';
import { id, str, type Rec } from './read.js';
import { append, general, newConversation, say, touchConversation, type Draft, type WorkStep } from './draft.js';

/** A project room (or General Chat) created. */
function conversationCreated(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  const cid = id(e.id);
  const title = str(e.title, WORK_LIMITS.title);
  if (!cid || title === null || !by || s.conversations.has(cid)) return;
  newConversation(d, { id: cid, kind: cid === GENERAL ? 'general' : 'human', title, createdBy: by, createdAt: at });
}

/** A person's message in a conversation (never in an agent's chat). */
function messagePosted(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  const cid = id(e.conversation);
  const text = str(e.text, WORK_LIMITS.text);
  if (!cid || !text || !by) return;
  const c = s.conversations.get(cid);
  if (c?.kind === 'agent') return; // an agent chat takes commands, not loose messages
  if (!c) {
    // General Chat exists from a person's first message.
    if (cid !== GENERAL) return;
    newConversation(d, general(by, at));
  }
  say(d, cid, 'human', text, by, at);
}

/** A conversation linked: a link in General Chat, or the linked conversation in the project. */
function conversationLinked(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  // In the private stream: General Chat gains a link. In the project
  // stream: the linked conversation is created holding only the request.
  const project = id(e.project);
  const target = id(e.target);
  const title = str(e.title, WORK_LIMITS.title);
  if (!project || !target || title === null || !by) return;
  if (e.side === 'private') {
    const g = s.conversations.get(GENERAL);
    if (g && g.links.some((l) => l.project === project && l.conversation === target)) return;
    const chat = g ?? newConversation(d, general(by, at));
    const command = id(e.command);
    const agent = str(e.agent, WORK_LIMITS.label);
    append(d, chat.links, command && agent !== null ? { project, conversation: target, title, at, command, agent } : { project, conversation: target, title, at });
    touchConversation(d, chat);
    return;
  }
  const request = str(e.request, WORK_LIMITS.text);
  if (e.side !== 'project' || !request || s.conversations.has(target)) return;
  // Queued to an agent as well (a `command.queued` in the same append): the request points at its command.
  const command = id(e.command);
  newConversation(d, { id: target, kind: 'human', title, createdBy: by, createdAt: at, linkedFrom: { uid: by.uid } }, [command ? { seq: 1, kind: 'human', text: request, by, at, command } : { seq: 1, kind: 'human', text: request, by, at }]);
}

export const CONVERSATION_STEPS: Readonly<Record<string, WorkStep>> = {
  'conversation.created': conversationCreated,
  'message.posted': messagePosted,
  'conversation.linked': conversationLinked,
};
