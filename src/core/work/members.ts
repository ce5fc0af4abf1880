// The project's members: who may do what from a position on, as the server
// copies it from the identity app (`member.changed`; role null removes).

import { WORK_LIMITS, type Who } from './model.js';
import { id, str, type Rec } from './read.js';
import { putMember, type Draft, type WorkStep } from './draft.js';

/** A member added, changed or removed. */
function memberChanged(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  // Who may do what from this position on: role null is a removal.
  const uid = id(e.uid);
  const name = str(e.name, WORK_LIMITS.name);
  const role = e.role === 'owner' || e.role === 'editor' || e.role === 'viewer' ? e.role : e.role === null ? null : undefined;
  if (!uid || name === null || role === undefined || !by) return;
  const prev = s.members.get(uid);
  if (role === null) {
    if (prev) putMember(d, uid, null);
    return;
  }
  if (prev && prev.role === role && prev.name === name) return;
  putMember(d, uid, { uid, name, role, by, at, rev: d.pos });
}

export const MEMBER_STEPS: Readonly<Record<string, WorkStep>> = {
  'member.changed': memberChanged,
};
