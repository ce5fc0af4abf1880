// The one read the Work view makes outside its own stream: a blocked
// execution's approval request, as the fleet board holds it. (Work's writes
// are plain `postJson` calls of the shared client; what they change arrives
// on the Work stream, ../live/work.ts.)

import { getJson } from '../shared/api.js';
import { fleetPath } from '../shared/scope.js';

/**
 * A blocked execution's request as the fleet board holds it (`GET` of the
 * pointer's thread, in the pointer's project): `held` with the board's tool,
 * digest and state; `gone` when the board answers without it; `unreadable`
 * when the board cannot be read (not a member of its project, network).
 * One read per request: its tool and digest never change on the board, and
 * its end reaches the page as the execution's `resumed`.
 */
export type BoardRequest =
  | { kind: 'held'; tool: string; digest: string; state: string; by: string }
  | { kind: 'gone' }
  | { kind: 'unreadable'; status: number };

type Board = { sessions?: { id: string; approvals?: { rid: string; tool: string; digest: string; state: string; by: string }[] }[] };

export async function boardRequest(a: { project: string; thread: string; session: string; rid: string }): Promise<BoardRequest> {
  const r = await getJson<Board>(`${fleetPath(a.thread)}?project=${encodeURIComponent(a.project)}`);
  if (!r.ok) return { kind: 'unreadable', status: r.status };
  const q = r.body?.sessions?.find((s) => s.id === a.session)?.approvals?.find((x) => x.rid === a.rid);
  return q ? { kind: 'held', tool: q.tool, digest: q.digest, state: q.state, by: q.by } : { kind: 'gone' };
}
