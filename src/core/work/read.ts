// Readers for hostile event fields: each takes what the event holds and
// answers a clean value or null, never throws.

import { WORK_LIMITS, type PendingApproval, type Who } from './model.js';

export type Rec = Record<string, unknown>;

export const isRec = (x: unknown): x is Rec => typeof x === 'object' && x !== null && !Array.isArray(x);
export const str = (x: unknown, max: number): string | null => (typeof x === 'string' && x.length <= max ? x : null);
export const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
export const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
export const id = (x: unknown): string | null => (typeof x === 'string' && ID.test(x) ? x : null);
/** Board thread, session and approval ids, and project ids (the board's own pattern). */
export const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const boardId = (x: unknown): string | null => (typeof x === 'string' && BOARD_ID.test(x) ? x : null);

/** A valid approval pointer, or null (absent, as in events from before it existed, or malformed). */
export function pendingApproval(x: unknown): PendingApproval | null {
  if (!isRec(x)) return null;
  const project = boardId(x.project);
  const thread = boardId(x.thread);
  const session = boardId(x.session);
  const rid = boardId(x.rid);
  const tool = str(x.tool, WORK_LIMITS.tool);
  const digest = str(x.digest ?? '', WORK_LIMITS.digest);
  if (!project || !thread || !session || !rid || !tool || digest === null) return null;
  return { project, thread, session, rid, tool, digest };
}
export function who(x: unknown): Who | null {
  if (!isRec(x)) return null;
  const uid = str(x.uid, WORK_LIMITS.id);
  const name = str(x.name, WORK_LIMITS.name);
  return uid && name !== null ? { uid, name } : null;
}
