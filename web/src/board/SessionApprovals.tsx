// Pending approvals of fleet-board sessions, answerable with Allow / Deny:
// on a session's card, and in the approvals inbox (one inbox across apps).
// A decision is a member's `session.approval` post; the first one in the log
// wins, and what everyone sees changes only when it comes back on the stream.
import { useState } from 'preact/hooks';
import type { Approval, Session } from '../../../src/core/fleet.js';
import { decide, projectOfPage } from './api.js';
import { lastThread } from './look.js';
import { useBoard } from './useBoard.js';

export function ApprovalList(props: { thread: string; session: Session; approvals: Approval[]; onError: (message: string) => void; showSession?: boolean }) {
  const { thread, session: s } = props;
  // Buttons of a request being answered are disabled until its fate comes back.
  const [sent, setSent] = useState<Record<string, boolean>>({});
  const answer = async (rid: string, allow: boolean) => {
    setSent((m) => ({ ...m, [rid]: true }));
    const r = await decide(thread, s.id, rid, allow);
    if (!r.ok) {
      props.onError(r.message);
      setSent((m) => ({ ...m, [rid]: false }));
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
              <button class="allow" disabled={sent[a.rid]} onClick={() => answer(a.rid, true)} aria-label={`Allow ${tool} in ${s.name}`} data-testid="allow">
                Allow
              </button>
              <button class="deny" disabled={sent[a.rid]} onClick={() => answer(a.rid, false)} aria-label={`Deny ${tool} in ${s.name}`} data-testid="deny">
                Deny
              </button>
            </div>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * The fleet board's pending approvals for the approvals inbox: the sessions
 * of the thread the member looked at last on the board, folded from its
 * stream like the board itself.
 */
export function SessionApprovalsInbox(props: { thread?: string }) {
  const thread = props.thread ?? lastThread();
  const client = useBoard(thread, projectOfPage());
  const [error, setError] = useState('');
  const rows = client.state.sessions
    .filter((s) => s.state !== 'ended')
    .map((s) => ({ s, pending: s.approvals.filter((a) => a.state === 'pending') }))
    .filter((x) => x.pending.length > 0);
  const n = rows.reduce((k, x) => k + x.pending.length, 0);
  return (
    <section class="inbox-sessions" aria-labelledby="inbox-sessions-h" data-testid="inbox-sessions">
      <h2 id="inbox-sessions-h">
        Fleet board <span class="thread-name">#{thread}</span>{' '}
        <span class="n">
          {n}
          <span class="sr-only"> waiting</span>
        </span>
      </h2>
      {n === 0 && <p class="muted">No session of this thread waits for an approval.</p>}
      {rows.map(({ s, pending }) => (
        <ApprovalList key={s.id} thread={thread} session={s} approvals={pending} onError={setError} showSession />
      ))}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/** How many fleet-board approvals wait in the thread looked at last (for the nav badge, beside the hook approvals). */
export function useSessionPendingCount(): number {
  const client = useBoard(lastThread(), projectOfPage());
  let n = 0;
  for (const s of client.state.sessions) if (s.state !== 'ended') for (const a of s.approvals) if (a.state === 'pending') n++;
  return n;
}
