// Commands: queued to an agent (FIFO, at most WORK_LIMITS.queue waiting; a
// trusted-local agent takes them from its Space's owner only, unless made
// callable), and cancelled while still queued.

import { WORK_LIMITS, type Who } from './model.js';
import { id, str, type Rec } from './read.js';
import { SYSTEM, putAgent, putCommand, say, type Draft, type WorkStep } from './draft.js';

/** A command queued to an agent. */
function commandQueued(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  const cid = id(e.id);
  const aid = id(e.agent);
  const text = str(e.text, WORK_LIMITS.text);
  if (!cid || !aid || !text || !by || s.commands.has(cid)) return;
  const a = s.agents.get(aid);
  const sp = a ? s.spaces.get(a.space) : undefined;
  if (!a || a.state === 'ended' || !sp?.contributed) return;
  // Trusted local: only the Space's owner, unless made callable.
  if (!a.callable && sp.owner.uid !== by.uid) return;
  if (a.queue.length >= WORK_LIMITS.queue) return;
  putCommand(d, { id: cid, agent: aid, conversation: a.conversation, text, by, at, position: d.pos, status: 'queued', rev: d.pos });
  putAgent(d, { ...a, queue: [...a.queue, cid] });
  say(d, a.conversation, 'prompt', text, by, at, cid);
}

/** A queued command cancelled. */
function commandCancelled(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  const cid = id(e.command);
  const c = cid ? s.commands.get(cid) : undefined;
  if (!c || c.status !== 'queued' || !by) return;
  const a = s.agents.get(c.agent);
  putCommand(d, { ...c, status: 'cancelled' });
  if (a) putAgent(d, { ...a, queue: a.queue.filter((q) => q !== c.id) });
  say(d, c.conversation, 'system', `${by.name} cancelled a queued command`, SYSTEM, at, c.id);
}

export const COMMAND_STEPS: Readonly<Record<string, WorkStep>> = {
  'command.queued': commandQueued,
  'command.cancelled': commandCancelled,
};
