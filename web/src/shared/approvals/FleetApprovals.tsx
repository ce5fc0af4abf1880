// Pending approvals of a fleet board session, answerable with Allow / Deny on
// the session's card (the fleet view; the approvals inbox lists them with
// every other kind, from the approvals fold). A decision goes through the one
// decide endpoint (`decideFleet`); the first one in the log wins, and what
// everyone sees changes only when the board's echo comes back on the stream.

import { useState } from 'preact/hooks';
import type { Approval, Session } from '../../../../src/core/fleet.js';
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
