import { useState } from 'preact/hooks';
import { useFleet } from '../../live/useFleet.js';
import { FleetApprovalList } from '../../shared/approvals/FleetApprovals.js';
import { lastThread, projectOfPage } from '../../shared/scope.js';

/**
 * The fleet board's pending approvals for the approvals inbox: the sessions
 * of the thread the member looked at last in the fleet view, folded from its
 * stream like the board itself.
 */
export function FleetApprovalsSection(props: { thread?: string }) {
  const thread = props.thread ?? lastThread();
  const client = useFleet(thread, projectOfPage());
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
        <FleetApprovalList key={s.id} thread={thread} session={s} approvals={pending} onError={setError} showSession />
      ))}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
