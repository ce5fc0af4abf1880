// Pending approvals of a fleet board session, answerable with Allow / Deny on
// the session's card (the fleet view; the approvals inbox lists them with
// every other kind). What is pending is the approvals fold's word
// (src/core/fleet-approvals.ts, read from the approvals scope of the live
// connection), and a decision goes through the one decide endpoint by the
// approval's id found there (`decideFleet`); the first one in the log wins,
// and what everyone sees changes only when the outcome comes back on the
// approvals stream.

import { useState } from 'preact/hooks';
import type { Approval, Session } from '../../../../src/core/fleet.js';
import { fleetApprovalOf } from '../../../../src/core/fleet-approvals.js';
import { approvalsOf } from '../../live/approvals.js';
import { pageProject } from '../scope.js';
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
    // The page's approvals (its live scope, already followed by the board's view): no fetch to find the id.
    const r = await decideFleet(thread, s.id, rid, allow, fleetApprovalOf(approvalsOf(pageProject()).state, thread, s.id, rid));
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
