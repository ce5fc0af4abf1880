// The space registry (stream `work:spaces`): who owns which Space, folded
// apart from any project's stream.

import { WORK_LIMITS, type Who } from './model.js';
import { id, isRec, num, str, who } from './read.js';

/** The space registry (stream `work:spaces`): who owns which Space. */
export interface SpaceRecord {
  id: string;
  name: string;
  owner: Who;
  at: number;
}

/** Folds one registry event into `reg` (in place); true when it registered a Space. */
export function applySpaceRegistry(reg: Map<string, SpaceRecord>, event: unknown): boolean {
  if (!isRec(event) || event.type !== 'space.registered') return false;
  const sid = id(event.id);
  const name = str(event.name, WORK_LIMITS.name);
  const owner = who(event.by);
  if (!sid || name === null || !owner || reg.has(sid)) return false;
  reg.set(sid, { id: sid, name, owner, at: num(event.at) ?? 0 });
  return true;
}
