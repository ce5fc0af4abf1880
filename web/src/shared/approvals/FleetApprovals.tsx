// Pending approvals of fleet board sessions, answerable with Allow / Deny: on
// a session's card (the fleet view), and in the approvals inbox (one inbox
// across apps). A decision is a member's `session.approval` post; the first
// one in the log wins, and what everyone sees changes only when it comes back
// on the stream.

import { useState } from 'preact/hooks';
import type { Approval, Session } from '../../../../src/core/fleet.js';
import { useFleet } from '../../live/useFleet.js';
import { lastThread, projectOfPage } from '../scope.js';
import { decideFleet } from './api.js';
import './approvals.css';

export function FleetApprovalList(props: { thread: string; session: Session; approvals: Approval[]; onError: (message: string) => void; showSession?: boolean }) {
  const { thread, session: s } = props;
  // Buttons of a request being answered are disabled until its fate comes back.
  const [sent, setSent] = useState<ReadonlySet<string>>(() => new Set());
  const mark = (rid: string, on: boolean) =>
    setSent((m) => {
      const next = new Set(m);
      if (on) next.add(rid);
      else next.delete(rid);
      return next;
    });
  const answer = async (rid: string, allow: boolean) => {
    mark(rid, true);
    const r = await decideFleet(thread, s.id, rid, allow);
    if (!r.ok) {
      props.onError(r.message);
      mark(rid, false);
    } else props.onError('');
  };
  return (
    <ul class="approval-list">
      {props.approvals.map((a) => {
        const tool = a.tool || 'a tool';
        return (
          <li key={a.rid} class="approval" data-testid={`approval-${a.rid}`} data-state={a.state}>
            <p class="ask">
              {props.showSession && (
                <>
                  <strong>{s.name}</strong> wants to run{' '}
                </>
              )}
              <code class="tool">{tool}</code>
              {a.digest && <span class="digest">{a.digest}</span>}
            </p>
            <div class="answer">
              <button class="allow" disabled={sent.has(a.rid)} onClick={() => answer(a.rid, true)} aria-label={`Allow ${tool} in ${s.name}`} data-testid="allow">
                Allow
              </button>
              <button class="deny" disabled={sent.has(a.rid)} onClick={() => answer(a.rid, false)} aria-label={`Deny ${tool} in ${s.name}`} data-testid="deny">
                Deny
              </button>
            </div>
          </li>
        );
      })}
    </ul>
  );
}

/** How many fleet approvals wait in the thread looked at last (for the nav badge, beside the hook approvals). */
export function useFleetPendingCount(): number {
  const client = useFleet(lastThread(), projectOfPage());
  let n = 0;
  for (const s of client.state.sessions) if (s.state !== 'ended') for (const a of s.approvals) if (a.state === 'pending') n++;
  return n;
}
