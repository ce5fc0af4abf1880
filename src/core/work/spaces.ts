// Spaces: contributed to the project by their owner, and revoked (its agents'
// queued commands are cancelled; chats, executions and results are kept).

import { WORK_LIMITS, type Who } from './model.js';
import { id, str, who, type Rec } from './read.js';
import { SYSTEM, putAgent, putCommand, putSpace, say, type Draft, type WorkStep } from './draft.js';

/** A Space contributed to the project (once; a revoked one may be contributed again). */
function spaceContributed(d: Draft, e: Rec, _at: number, by: Who | null): void {
  const s = d.s;
  const sid = id(e.space);
  const name = str(e.name, WORK_LIMITS.name);
  const owner = who(e.owner);
  if (!sid || name === null || !owner || !by) return;
  if (s.spaces.get(sid)?.contributed) return;
  putSpace(d, { id: sid, name, owner, contributed: true, contributedBy: by, rev: d.pos });
}

/** A Space revoked: what waits in its agents' queues is cancelled. */
function spaceRevoked(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  const sid = id(e.space);
  const sp = sid ? s.spaces.get(sid) : undefined;
  if (!sp || !sp.contributed || !by) return;
  const why = str(e.reason, WORK_LIMITS.reason) || '';
  putSpace(d, why ? { ...sp, contributed: false, revokedBy: by, revokedWhy: why } : { ...sp, contributed: false, revokedBy: by });
  // Future execution stops: what waits in the queue is cancelled. A
  // running execution may still report its end, so its result is kept.
  for (const aid of s.agentsBySpace.get(sp.id) ?? []) {
    const a = s.agents.get(aid);
    if (!a || a.queue.length === 0) continue;
    for (const cmdId of a.queue) {
      const c = s.commands.get(cmdId);
      if (c) putCommand(d, { ...c, status: 'cancelled' });
    }
    putAgent(d, { ...a, queue: [] });
    say(d, a.conversation, 'system', `${sp.name} was revoked by ${by.name}${why ? ` (${why})` : ''}: ${a.queue.length} queued command(s) cancelled`, SYSTEM, at);
  }
}

export const SPACE_STEPS: Readonly<Record<string, WorkStep>> = {
  'space.contributed': spaceContributed,
  'space.revoked': spaceRevoked,
};
